"""Scaled dot-product attention: the textbook example by hand, properties against a loop."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attncore.attention import resolve_scale, scaled_dot_product_attention
from attncore.masks import causal_mask
from attncore.softmax import softmax_steps
from attncore.text import worked_example

PROPERTY = settings(max_examples=50, deadline=None)
# NumPy warns as it overflows; what the user relies on is the ValueError raised after it.
OVERFLOW_WARNING = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")

# The textbook example, Q = K = [[1,0],[0,1],[1,1]], V = [[1,2,3],[4,5,6],[7,8,9]], d_k = 2.
R = 1 / math.sqrt(2)  # 1/√2 = 0.70710678
A = math.exp(R)  # e^{1/√2} = 2.02811498
B = math.exp(2 * R)  # e^{2/√2} = e^{√2} = 4.11325038
V_ROWS = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]


def weighted_sum(weights, rows):
    return [sum(w * row[c] for w, row in zip(weights, rows, strict=True))
            for c in range(len(rows[0]))]


def reference_attention(q, k, v, scale, temperature=1.0, mask=None):
    """One (T, d) head with plain loops and math.exp (the definition, nothing clever)."""
    weights, output = [], []
    for i, q_i in enumerate(q):
        scores = [scale * sum(a * b for a, b in zip(q_i, k_j, strict=True)) / temperature
                  for k_j in k]
        allowed = [mask is None or bool(mask[i][j]) for j in range(len(k))]
        if not any(allowed):
            weights.append([0.0] * len(k))
            output.append([0.0] * len(v[0]))
            continue
        m = max(s for s, ok in zip(scores, allowed, strict=True) if ok)
        exps = [math.exp(s - m) if ok else 0.0 for s, ok in zip(scores, allowed, strict=True)]
        total = sum(exps)
        row = [e / total for e in exps]
        weights.append(row)
        output.append(weighted_sum(row, v))
    return np.array(weights), np.array(output)


@pytest.fixture
def textbook():
    ex = worked_example("textbook")
    return scaled_dot_product_attention(ex.q, ex.k, ex.v)


def test_textbook_raw_scores(textbook):
    # q1·k1 = 1×1 + 0×0 = 1, q1·k2 = 1×0 + 0×1 = 0, q1·k3 = 1×1 + 0×1 = 1
    # q2·k1 = 0,             q2·k2 = 1,             q2·k3 = 0×1 + 1×1 = 1
    # q3·k1 = 1×1 + 1×0 = 1, q3·k2 = 1,             q3·k3 = 1×1 + 1×1 = 2
    assert textbook.raw_scores.tolist() == [[1, 0, 1], [0, 1, 1], [1, 1, 2]]
    assert textbook.d_k == 2
    assert textbook.scale == pytest.approx(R, rel=1e-15)


def test_textbook_scaled_scores(textbook):
    # divide by √2: 1 -> 0.70710678, 2 -> 1.41421356
    expected = [[R, 0, R], [0, R, R], [R, R, 2 * R]]
    np.testing.assert_allclose(textbook.scaled_scores, expected, rtol=1e-15)


def test_textbook_weights(textbook):
    # row 1: scores [r, 0, r]: w_11 = e^r / (e^r + e^0 + e^r) = A / (2A + 1) = 0.40111...
    #                          w_12 = 1 / (2A + 1) = 0.19777...
    # row 2: scores [0, r, r]: [1, A, A] / (1 + 2A)
    # row 3: scores [r, r, 2r]: [A, A, B] / (2A + B) = [0.24825, 0.24825, 0.50349]
    d12 = 2 * A + 1
    d3 = 2 * A + B
    expected = [[A / d12, 1 / d12, A / d12],
                [1 / d12, A / d12, A / d12],
                [A / d3, A / d3, B / d3]]
    np.testing.assert_allclose(textbook.weights, expected, rtol=1e-14)
    assert textbook.fully_masked.tolist() == [False, False, False]


def test_textbook_output(textbook):
    # o_i = Σ_j w_ij v_j. Row 1: the weights on v1 and v3 are equal and
    # 2 w_11 + w_12 = 1, so o_1 = w_11 (v1 + v3) + w_12 v2 = 4 (2 w_11 + w_12) + ... = [4, 5, 6].
    d12 = 2 * A + 1
    d3 = 2 * A + B
    o1 = [4.0, 5.0, 6.0]
    o2 = weighted_sum([1 / d12, A / d12, A / d12], V_ROWS)  # [4.610, 5.610, 6.610]
    o3 = weighted_sum([A / d3, A / d3, B / d3], V_ROWS)  # [4.766, 5.766, 6.766]
    np.testing.assert_allclose(textbook.output, [o1, o2, o3], rtol=1e-14)


def test_textbook_softmax_steps_without_shift_are_plain_exponentials(textbook):
    steps = softmax_steps(textbook.scaled_scores, subtract_max=False)
    # exps = e^{s}: row 1 [e^r, e^0, e^r] = [A, 1, A], row 3 [A, A, e^{2r}] = [A, A, B]
    np.testing.assert_allclose(steps.exps, [[A, 1, A], [1, A, A], [A, A, B]], rtol=1e-15)
    np.testing.assert_allclose(steps.row_sums, [[2 * A + 1], [2 * A + 1], [2 * A + B]],
                               rtol=1e-15)
    np.testing.assert_allclose(steps.weights, textbook.weights, rtol=1e-14)


def test_textbook_trace_softmax_steps_shift_by_the_row_maximum(textbook):
    steps = textbook.softmax_steps()
    # row maxima r, r, 2r; exps = e^{s - max}: row 1 [1, e^{-r}, 1], row 3 [e^{-r}, e^{-r}, 1]
    np.testing.assert_allclose(steps.shift, [[R], [R], [2 * R]], rtol=1e-15)
    e = math.exp(-R)
    np.testing.assert_allclose(steps.exps, [[1, e, 1], [e, 1, 1], [e, e, 1]], rtol=1e-15)
    np.testing.assert_allclose(steps.weights, textbook.weights, rtol=1e-14)


def test_textbook_with_causal_mask():
    ex = worked_example("textbook")
    trace = scaled_dot_product_attention(ex.q, ex.k, ex.v, mask=causal_mask(3))
    # row 1 sees only key 1: w = [1, 0, 0], o_1 = v1
    # row 2 sees keys 1, 2 with scores [0, r]: [1, A] / (1 + A) = [0.33024, 0.66976]
    # row 3 sees every key: as without the mask
    d3 = 2 * A + B
    w = [[1.0, 0.0, 0.0], [1 / (1 + A), A / (1 + A), 0.0], [A / d3, A / d3, B / d3]]
    np.testing.assert_allclose(trace.weights, w, rtol=1e-14)
    assert trace.weights[0, 1] == 0.0 and trace.weights[0, 2] == 0.0
    assert trace.weights[1, 2] == 0.0
    # o_2 = 0.33024 [1,2,3] + 0.66976 [4,5,6] = [1,2,3] + 3 × 0.66976 = [3.00928, ...]
    o2 = [c + 3 * A / (1 + A) for c in (1.0, 2.0, 3.0)]
    o3 = weighted_sum([A / d3, A / d3, B / d3], V_ROWS)
    np.testing.assert_allclose(trace.output, [[1.0, 2.0, 3.0], o2, o3], rtol=1e-14)
    # masked scores are -inf exactly where the mask forbids
    masked = trace.masked_scores
    assert masked[0, 1] == -np.inf and masked[0, 2] == -np.inf and masked[1, 2] == -np.inf
    assert np.isfinite(masked[np.tril_indices(3)]).all()


def test_uniform_preset_gives_weights_one_over_t():
    ex = worked_example("uniform", n_tokens=5, d_k=3, d_v=2, seed=4)
    trace = scaled_dot_product_attention(ex.q, ex.k, ex.v)
    # every score is 0 · k = 0, so every weight is e^0 / (5 e^0) = 1/5
    assert (trace.weights == 1 / 5).all()
    # and every output row is the mean of the value rows
    np.testing.assert_allclose(trace.output, np.tile(ex.v.sum(axis=0) / 5, (5, 1)), rtol=1e-14)


@pytest.mark.parametrize("scale, d_k, expected", [
    ("sqrt_dk", 4, 1 / 2),  # 1/√4
    ("none", 4, 1.0),
    ("dk", 4, 1 / 4),
    (0.3, 4, 0.3),
    (2, 9, 2.0),
])
def test_resolve_scale(scale, d_k, expected):
    assert resolve_scale(scale, d_k) == expected


@pytest.mark.parametrize("scale", ["sqrt", 0, -1.0, float("nan"), None, True])
def test_bad_scale_raises(scale):
    with pytest.raises(ValueError, match="scale"):
        scaled_dot_product_attention([[1.0]], [[1.0]], [[1.0]], scale=scale)


def test_fully_masked_row_gives_zero_weights_and_zero_output():
    q = k = np.eye(2)
    v = np.array([[1.0, 2.0], [3.0, 4.0]])
    mask = np.array([[True, True], [False, False]])
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    assert trace.weights[1].tolist() == [0.0, 0.0]
    assert trace.output[1].tolist() == [0.0, 0.0]
    assert trace.fully_masked.tolist() == [False, True]
    assert not np.isnan(trace.weights).any() and not np.isnan(trace.output).any()


def test_large_scores_stay_stable():
    # scores ±2000 (far beyond exp's range): [[40, 0]] · [[50, 0], [-50, 0]]ᵀ = [2000, -2000],
    # scale "none": the weights are [1, e^{-4000}] = [1, 0] in float64, the output v1.
    trace = scaled_dot_product_attention([[40.0, 0.0]], [[50.0, 0.0], [-50.0, 0.0]],
                                         [[1.0], [2.0]], scale="none")
    assert trace.weights.tolist() == [[1.0, 0.0]]
    assert trace.output.tolist() == [[1.0]]


def test_large_scores_close_together_match_the_loop():
    rng = np.random.default_rng(7)
    q = rng.normal(size=(4, 3)) * 40
    k = rng.normal(size=(5, 3)) * 40
    v = rng.normal(size=(5, 2))
    trace = scaled_dot_product_attention(q, k, v, temperature=50.0)
    w, o = reference_attention(q.tolist(), k.tolist(), v.tolist(), 1 / math.sqrt(3), 50.0)
    np.testing.assert_allclose(trace.weights, w, rtol=1e-11, atol=1e-300)
    np.testing.assert_allclose(trace.output, o, rtol=1e-11, atol=1e-12)


def test_overflowing_scores_raise():
    # q1·k1 = 1e300 × 1e300 + 1e300 × 1e300 = 2e600 > 1.8e308
    with pytest.raises(ValueError, match="overflow"):
        scaled_dot_product_attention([[1e300, 1e300]], [[1e300, 1e300]], [[1.0]])


@OVERFLOW_WARNING
def test_overflowing_output_raises():
    # Every query has one key (weight 1) whose value is 1.5e308; dropout keeps it with
    # weight 1/(1 - 0.5) = 2, and 2 × 1.5e308 = 3e308 overflows. With 100 queries at
    # least one entry is kept unless all 100 draws drop (probability 2^-100).
    with pytest.raises(ValueError, match="overflow"):
        scaled_dot_product_attention(np.zeros((100, 1)), [[1.0]], [[1.5e308]], dropout=0.5,
                                     rng=np.random.default_rng(0))


def test_huge_but_finite_values_give_finite_outputs():
    # Q = K = I, scores [[r, 0], [0, r]]: row 1 weights [A, 1] / (A + 1), row 2 [1, A] / (A + 1)
    v = np.array([[1e300, 2e300], [3e300, 4e300]])
    trace = scaled_dot_product_attention(np.eye(2), np.eye(2), v)
    o1 = [(A * 1e300 + 3e300) / (A + 1), (A * 2e300 + 4e300) / (A + 1)]
    o2 = [(1e300 + A * 3e300) / (A + 1), (2e300 + A * 4e300) / (A + 1)]
    np.testing.assert_allclose(trace.output, [o1, o2], rtol=1e-14)


@pytest.mark.parametrize("kwargs, word", [
    ({"q": [[1.0, 2.0]], "k": [[1.0, 2.0, 3.0]], "v": [[1.0]]}, "d_k"),
    ({"q": [[1.0]], "k": [[1.0], [2.0]], "v": [[1.0]]}, "V"),
    ({"q": [1.0], "k": [[1.0]], "v": [[1.0]]}, "Q"),
    ({"q": [[1.0]], "k": [[float("nan")]], "v": [[1.0]]}, "K contains NaN"),
    ({"q": [[1.0]], "k": [[1.0]], "v": [[float("inf")]]}, "V contains an infinite"),
    ({"q": np.ones((2, 3, 2)), "k": np.ones((4, 3, 2)), "v": np.ones((4, 3, 1))}, "broadcast"),
])
def test_bad_shapes_and_values_raise_naming_the_argument(kwargs, word):
    with pytest.raises(ValueError, match=word):
        scaled_dot_product_attention(kwargs["q"], kwargs["k"], kwargs["v"])


def test_bad_mask_raises():
    q = np.ones((2, 2))
    with pytest.raises(ValueError, match="does not broadcast"):
        scaled_dot_product_attention(q, q, q, mask=np.ones((3, 3), dtype=bool))
    with pytest.raises(ValueError, match="boolean"):
        scaled_dot_product_attention(q, q, q, mask=np.ones((2, 2)))


# ---- dropout -------------------------------------------------------------------------------


def test_dropout_keeps_rescaled_weights_and_zeroes_the_rest():
    rng_q = np.random.default_rng(0)
    q, k, v = (rng_q.normal(size=(2, 6, 3)) for _ in range(3))
    p = 0.25
    trace = scaled_dot_product_attention(q, k, v, dropout=p, rng=np.random.default_rng(11))
    kept = trace.dropout_weights != 0.0
    assert kept.any() and (~kept).any()
    # kept entries are w / (1 - p) = w / 0.75; the softmax weights themselves are not touched
    np.testing.assert_allclose(trace.dropout_weights[kept], trace.weights[kept] / 0.75, rtol=1e-15)
    np.testing.assert_allclose(trace.weights.sum(axis=-1), 1.0, atol=1e-12)
    ref_w, _ = zip(*(reference_attention(q[h].tolist(), k[h].tolist(), v[h].tolist(),
                                         1 / math.sqrt(3)) for h in range(2)), strict=True)
    np.testing.assert_allclose(trace.weights, np.array(ref_w), atol=1e-12)
    # the output uses the dropped weights: o_i = Σ_j w'_ij v_j, by loop
    for h in range(2):
        for i in range(6):
            expected = weighted_sum(trace.dropout_weights[h, i].tolist(), v[h].tolist())
            np.testing.assert_allclose(trace.output[h, i], expected, atol=1e-12)
    assert trace.dropout == p


def test_dropout_is_reproducible_with_the_same_seed():
    q = k = v = np.random.default_rng(1).normal(size=(8, 4))
    a = scaled_dot_product_attention(q, k, v, dropout=0.5, rng=np.random.default_rng(3))
    b = scaled_dot_product_attention(q, k, v, dropout=0.5, rng=np.random.default_rng(3))
    c = scaled_dot_product_attention(q, k, v, dropout=0.5, rng=np.random.default_rng(4))
    np.testing.assert_array_equal(a.dropout_weights, b.dropout_weights)
    np.testing.assert_array_equal(a.output, b.output)
    # 64 independent keep/drop draws at p = 1/2 agree by chance with probability 2^-64
    assert not np.array_equal(a.dropout_weights != 0, c.dropout_weights != 0)


def test_dropout_drops_about_a_fraction_p():
    # 100 x 100 weights, p = 0.3: the dropped count is Binomial(10000, 0.3), mean 3000 and
    # standard deviation √(10000 · 0.3 · 0.7) = 45.8; allow 5 standard deviations.
    q = np.zeros((100, 2))
    trace = scaled_dot_product_attention(q, q, np.ones((100, 1)), dropout=0.3,
                                         rng=np.random.default_rng(5))
    dropped = int((trace.dropout_weights == 0.0).sum())
    assert abs(dropped - 3000) <= 5 * 45.8


def test_no_dropout_applies_the_weights_themselves():
    q = np.eye(3)
    trace = scaled_dot_product_attention(q, q, q)
    assert trace.dropout_weights is trace.weights
    assert trace.dropout == 0.0


def test_dropout_needs_an_rng():
    q = np.eye(2)
    with pytest.raises(ValueError, match="rng"):
        scaled_dot_product_attention(q, q, q, dropout=0.1)


@pytest.mark.parametrize("p", [1.0, -0.1, 1.5, "0.1", True])
def test_dropout_outside_zero_one_raises(p):
    q = np.eye(2)
    with pytest.raises(ValueError, match="dropout"):
        scaled_dot_product_attention(q, q, q, dropout=p, rng=np.random.default_rng(0))


# ---- properties ----------------------------------------------------------------------------

small = st.floats(-3, 3)


@st.composite
def qkv(draw, batch=()):
    t_q = draw(st.integers(1, 5))
    t_k = draw(st.integers(1, 5))
    d_k = draw(st.integers(1, 4))
    d_v = draw(st.integers(1, 3))
    q = draw(arrays(np.float64, batch + (t_q, d_k), elements=small))
    k = draw(arrays(np.float64, batch + (t_k, d_k), elements=small))
    v = draw(arrays(np.float64, batch + (t_k, d_v), elements=small))
    return q, k, v


@PROPERTY
@given(st.integers(1, 3).flatmap(lambda H: qkv(batch=(H,))), st.data())
def test_batched_heads_equal_a_loop_over_heads(inputs, data):
    q, k, v = inputs
    H, t_q, d_k = q.shape
    t_k = k.shape[1]
    mask = data.draw(st.none() | arrays(np.bool_, (H, t_q, t_k)))
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    for h in range(H):
        w, o = reference_attention(q[h].tolist(), k[h].tolist(), v[h].tolist(),
                                   1 / math.sqrt(d_k), mask=None if mask is None else mask[h])
        np.testing.assert_allclose(trace.weights[h], w, rtol=0, atol=1e-12)
        np.testing.assert_allclose(trace.output[h], o, rtol=0, atol=1e-12)


@PROPERTY
@given(qkv(), st.data())
def test_rows_sum_to_one_and_masked_weights_are_zero(inputs, data):
    q, k, v = inputs
    mask = data.draw(arrays(np.bool_, (q.shape[0], k.shape[0])))
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    assert (trace.weights[~mask] == 0.0).all()
    has_key = mask.any(axis=-1)
    np.testing.assert_allclose(trace.weights.sum(axis=-1)[has_key], 1.0, atol=1e-12)
    assert (trace.weights[~has_key] == 0.0).all() and (trace.output[~has_key] == 0.0).all()
    assert (trace.fully_masked == ~has_key).all()


@PROPERTY
@given(qkv(), st.sampled_from(["sqrt_dk", "none", "dk", 0.37, 3]), st.floats(0.2, 5.0))
def test_scale_and_temperature_give_softmax_of_scaled_scores(inputs, scale, temperature):
    q, k, v = inputs
    d_k = q.shape[-1]
    multiplier = {"sqrt_dk": 1 / math.sqrt(d_k), "none": 1.0, "dk": 1 / d_k}.get(scale, scale)
    trace = scaled_dot_product_attention(q, k, v, scale=scale, temperature=temperature)
    w, o = reference_attention(q.tolist(), k.tolist(), v.tolist(), multiplier, temperature)
    assert trace.scale == pytest.approx(multiplier, rel=1e-15)
    assert trace.temperature == temperature
    np.testing.assert_allclose(trace.weights, w, rtol=0, atol=1e-12)
    np.testing.assert_allclose(trace.output, o, rtol=0, atol=1e-12)


@PROPERTY
@given(qkv(), st.randoms(use_true_random=False))
def test_permuting_tokens_permutes_the_output(inputs, random):
    q, k, v = inputs
    t = min(q.shape[0], k.shape[0])
    q, k, v = q[:t], k[:t], v[:t]  # self-attention-like: one row of Q, K, V per token
    perm = list(range(t))
    random.shuffle(perm)
    base = scaled_dot_product_attention(q, k, v)
    moved = scaled_dot_product_attention(q[perm], k[perm], v[perm])
    np.testing.assert_allclose(moved.output, base.output[perm], rtol=0, atol=1e-12)
    np.testing.assert_allclose(moved.weights, base.weights[perm][:, perm], rtol=0, atol=1e-12)


@PROPERTY
@given(qkv(), st.data())
def test_causal_mask_never_leaks_the_future(inputs, data):
    q, k, v = inputs
    t = min(q.shape[0], k.shape[0])
    q, k, v = q[:t], k[:t], v[:t]
    # the new last token may be anything, including keys far larger than the rest
    k2, v2 = k.copy(), v.copy()
    k2[-1] = data.draw(arrays(np.float64, k.shape[1], elements=st.floats(-1e3, 1e3)))
    v2[-1] = data.draw(arrays(np.float64, v.shape[1], elements=st.floats(-1e3, 1e3)))
    mask = causal_mask(t)
    before = scaled_dot_product_attention(q, k, v, mask=mask)
    after = scaled_dot_product_attention(q, k2, v2, mask=mask)
    assert (after.output[:-1] - before.output[:-1] == 0.0).all()
    assert (after.weights[:-1] == before.weights[:-1]).all()


def test_causal_mask_ignores_a_large_future_key_exactly():
    # Regression: a big last key used to switch the whole call to the shifted softmax,
    # changing the rounding of earlier rows by about 1e-16.
    rng = np.random.default_rng(1)
    q, k, v = (rng.normal(size=(5, 4)) for _ in range(3))
    mask = causal_mask(5)
    before = scaled_dot_product_attention(q, k, v, mask=mask)
    k2 = k.copy()
    k2[-1] = 1000.0
    after = scaled_dot_product_attention(q, k2, v, mask=mask)
    assert np.array_equal(after.output[:-1], before.output[:-1])


def test_without_the_mask_the_future_does_leak():
    ex = worked_example("textbook")
    v2 = ex.v.copy()
    v2[-1] = [70.0, 80.0, 90.0]
    before = scaled_dot_product_attention(ex.q, ex.k, ex.v)
    after = scaled_dot_product_attention(ex.q, ex.k, v2)
    # row 1 puts weight A / (2A + 1) = 0.40 on v3, so its output moves by 0.40 × 63 ≈ 25
    assert (np.abs(after.output[0] - before.output[0]) > 20).all()


def test_trace_logits_include_the_temperature_and_the_mask():
    # scores [[1, 0], [1, 1]] (Q = K = [[1, 0], [1, 1]] gives Q Kᵀ = [[1, 1], [1, 2]]),
    # unscaled, T = 0.5, causal: logits = scores / 0.5 with -inf above the diagonal.
    q = np.array([[1.0, 0.0], [1.0, 1.0]])
    trace = scaled_dot_product_attention(q, q, np.eye(2), scale="none", temperature=0.5,
                                         mask=np.tri(2, dtype=bool))
    np.testing.assert_array_equal(trace.logits, [[2.0, -np.inf], [2.0, 4.0]])


def test_hand_steps_skip_the_shift_only_while_exp_is_safe():
    """Scores within ±30: exp(s) as written by hand (shift 0), same weights. Past 30: the
    stable shift by the row maximum, still the same weights."""
    calm = scaled_dot_product_attention([[1.0, 2.0]], [[3.0, 1.0], [0.0, 2.0]], np.eye(2),
                                        scale="none")  # scores [[5, 4]]
    steps = calm.softmax_steps(subtract_max="if_needed")
    np.testing.assert_array_equal(steps.shift, [[0.0]])
    np.testing.assert_allclose(steps.exps, [[np.exp(5.0), np.exp(4.0)]], rtol=1e-15)
    np.testing.assert_allclose(steps.weights, calm.weights, rtol=1e-15)
    wild = scaled_dot_product_attention([[10.0, 0.0]], [[4.0, 0.0], [0.0, 1.0]], np.eye(2),
                                        scale="none")  # scores [[40, 0]]
    steps = wild.softmax_steps(subtract_max="if_needed")
    np.testing.assert_array_equal(steps.shift, [[40.0]])
    np.testing.assert_allclose(steps.weights, wild.weights, rtol=1e-15)
