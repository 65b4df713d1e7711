"""Multi-head attention: vectorised against a loop, shapes, designed heads, parameters."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attncore as ac
from attncore import analysis
from attncore import multihead as mh

PROPERTY = settings(max_examples=60, deadline=None)


def loop_over_heads(x_q, x_kv, params, mask=None):
    """Multi-head attention written head by head, with the textbook softmax."""
    outs, weights = [], []
    for h in range(params.n_heads):
        wq, wk, wv = params.head_weights(h)
        q, k, v = x_q @ wq, x_kv @ wk, x_kv @ wv
        s = q @ k.T / np.sqrt(params.d_k)
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        e = np.exp(s - s.max(axis=1, keepdims=True))
        w = e / e.sum(axis=1, keepdims=True)
        weights.append(w)
        outs.append(w @ v)
    return np.stack(weights), np.concatenate(outs, axis=1) @ params.w_o


@PROPERTY
@given(d_k=st.integers(1, 6), H=st.integers(1, 5), tq=st.integers(1, 7), tk=st.integers(1, 7),
       causal=st.booleans(), seed=st.integers(0, 10_000))
def test_vectorised_equals_a_loop_over_heads(d_k, H, tq, tk, causal, seed):
    rng = np.random.default_rng(seed)
    d_model = d_k * H
    params = mh.init_params(d_model, H, rng)
    x_q = rng.standard_normal((tq, d_model))
    x_kv = rng.standard_normal((tk, d_model))
    mask = ac.causal_mask(tq, tk) if causal and tk >= tq else None
    trace = mh.multi_head_attention(x_q, params, x_kv=x_kv, mask=mask)
    w_loop, out_loop = loop_over_heads(x_q, x_kv, params, mask)
    assert trace.weights.shape == (H, tq, tk)
    np.testing.assert_allclose(trace.weights, w_loop, rtol=0, atol=1e-12)
    np.testing.assert_allclose(trace.output, out_loop, rtol=0, atol=1e-12)


def test_one_head_is_scaled_dot_product_attention_with_the_same_projections():
    rng = np.random.default_rng(3)
    params = mh.init_params(8, 1, rng)
    x = rng.standard_normal((5, 8))
    trace = mh.multi_head_attention(x, params)
    plain = ac.scaled_dot_product_attention(x @ params.w_q, x @ params.w_k, x @ params.w_v)
    np.testing.assert_allclose(trace.weights[0], plain.weights, atol=1e-15)
    np.testing.assert_allclose(trace.output, plain.output @ params.w_o, atol=1e-14)


def test_split_and_merge_are_inverse_and_split_takes_column_blocks():
    x = np.arange(2 * 3 * 8, dtype=float).reshape(2, 3, 8)  # (B, T, d_model)
    heads = mh.split_heads(x, 4)  # (B, H, T, d_k) with d_k = 2
    assert heads.shape == (2, 4, 3, 2)
    # Head 1 of batch 0, token 2 holds columns 2 and 3 of x[0, 2].
    assert heads[0, 1, 2].tolist() == x[0, 2, 2:4].tolist()
    assert np.array_equal(mh.merge_heads(heads), x)


def test_head_weights_are_column_slices():
    params = mh.init_params(12, 3, np.random.default_rng(0))
    wq, wk, wv = params.head_weights(2)
    assert np.array_equal(wq, params.w_q[:, 8:12])
    assert np.array_equal(wv, params.w_v[:, 8:12]) and wk.shape == (12, 4)


def test_a_head_slice_is_its_columns_and_its_queries_by_hand():
    # d_model = 12, H = 3: d_k = 4, head 2 (counted from 0) owns columns 9 to 12.
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 12))
    layer = mh.multi_head_attention(x, mh.init_params(12, 3, rng))
    part = mh.head_slice(x, layer, 2)
    assert (part.head, part.first, part.last) == (2, 9, 12)
    assert np.array_equal(part.w_k, layer.params.w_k[:, 8:12])
    # Second method: the head's queries are columns 9 to 12 of the whole Q = X W_Q.
    by_hand = np.max(np.abs(x @ layer.params.w_q[:, 8:12] - (x @ layer.params.w_q)[:, 8:12]))
    assert part.query_difference == pytest.approx(by_hand, abs=1e-15)
    assert part.query_difference < 1e-12
    with pytest.raises(ValueError, match="head must lie in 0..2"):
        mh.head_slice(x, layer, 3)


@pytest.mark.parametrize("d_model", [8, 16, 64, 128])
def test_parameter_count_is_four_d_model_squared_for_any_head_count(d_model):
    counts = {mh.init_params(d_model, h, np.random.default_rng(0)).n_parameters
              for h in mh.divisors(d_model)}
    assert counts == {4 * d_model**2}  # e.g. 4 · 8² = 256


def test_non_divisor_head_count_raises_a_clear_error():
    with pytest.raises(ValueError, match=r"n_heads = 3 does not divide d_model = 32"):
        mh.init_params(32, 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="divide"):
        mh.MultiHeadParams(*(np.zeros((10, 10)) for _ in range(4)), n_heads=4)
    with pytest.raises(ValueError, match="W_K"):
        mh.MultiHeadParams(np.zeros((4, 4)), np.zeros((4, 3)), np.zeros((4, 4)),
                           np.zeros((4, 4)), n_heads=2)
    assert mh.divisors(12) == [1, 2, 3, 4, 6, 12]


def test_cross_attention_is_rectangular_and_rows_sum_to_one():
    rng = np.random.default_rng(1)
    params = mh.init_params(16, 4, rng)
    tgt, src = rng.standard_normal((5, 16)), rng.standard_normal((3, 16))
    trace = mh.multi_head_attention(tgt, params, x_kv=src)
    assert trace.weights.shape == (4, 5, 3) and trace.output.shape == (5, 16)
    np.testing.assert_allclose(trace.weights.sum(axis=-1), 1.0, rtol=1e-14)
    with pytest.raises(ValueError, match="d_model = 16"):
        mh.multi_head_attention(tgt, params, x_kv=np.ones((3, 8)))


SENTENCES = [
    "the cat sat on the mat because the cat was tired".split(),
    "a b a b c a".split(),
    ["solo"],
    [f"w{i}" for i in range(30)] + ["w3", "w7"],
]


@pytest.mark.parametrize("tokens", SENTENCES, ids=lambda t: " ".join(t)[:20])
@pytest.mark.parametrize("d_model, H", [(16, 4), (8, 4), (32, 8), (128, 4), (64, 16)])
def test_designed_heads_have_their_patterns(tokens, d_model, H):
    x = mh.designed_input(tokens, d_model, H)
    params = mh.designed_params(d_model, H, np.random.default_rng(0))
    w = mh.multi_head_attention(x, params).weights
    for h, pattern in enumerate(mh.head_patterns(H)):
        assert mh.pattern_holds(w[h], pattern, tokens), (h, pattern)


# One-hot rows for "a b a": row i's largest weight is on key ONE_HOT[name][i].
PATTERN_TOKENS = ["a", "b", "a"]
ONE_HOT = {"previous": [2, 0, 1], "self": [0, 1, 2], "first": [0, 0, 0],
           "same word": [2, 1, 0]}


@pytest.mark.parametrize("built", ONE_HOT)
@pytest.mark.parametrize("pattern", ONE_HOT)
def test_pattern_check_accepts_its_own_pattern_only(built, pattern):
    """Each row of np.eye(3)[keys] is one-hot on keys[i], so the check holds exactly when
    those keys are where ``pattern`` says: previous needs keys[1:] = [0, 1], self [0, 1, 2],
    first [0, 0, 0], same word keys[i] with the same token as i ("a b a": 0/2 and 1)."""
    w = np.eye(3)[ONE_HOT[built]]
    where = {"previous": lambda k: k[1:] == [0, 1], "self": lambda k: k == [0, 1, 2],
             "first": lambda k: k == [0, 0, 0],
             "same word": lambda k: all(PATTERN_TOKENS[i] == PATTERN_TOKENS[j]
                                        for i, j in enumerate(k))}
    assert mh.pattern_holds(w, pattern, PATTERN_TOKENS) == where[pattern](ONE_HOT[built])


def test_pattern_check_names_an_unknown_pattern():
    with pytest.raises(ValueError, match="pattern must be one of"):
        mh.pattern_holds(np.eye(2), "next", ["a", "b"])


def test_designed_heads_are_sharp_and_random_heads_are_not():
    tokens = "the cat sat on the mat".split()
    x = mh.designed_input(tokens, 32, 4)
    designed = mh.multi_head_attention(x, mh.designed_params(32, 4, np.random.default_rng(0)))
    random = mh.multi_head_attention(x, mh.init_params(32, 4, np.random.default_rng(0)))
    # The self head puts most of each row on the diagonal; random heads spread out.
    assert analysis.diagonal_mass(designed.weights[1]).min() > 0.9
    assert analysis.max_weight(random.weights).mean() < 0.6


def test_designed_heads_need_two_dimensions_per_head():
    with pytest.raises(ValueError, match="d_k = d_model / H >= 2"):
        mh.designed_params(8, 8, np.random.default_rng(0))


def test_head_statistics_of_known_patterns():
    T = 4
    identity, previous = np.eye(T), np.eye(T, k=-1)
    previous[0, 0] = 1.0  # row 0 has no previous token: put it on itself
    stats = analysis.head_statistics(np.stack([identity, previous]))
    # Identity: all weight on the diagonal; previous: 3 of 4 rows on i-1, row 0 on itself.
    np.testing.assert_allclose(stats["diagonal"], [1.0, 0.25])
    np.testing.assert_allclose(stats["previous token"], [0.0, 0.75])
    np.testing.assert_allclose(stats["first token"], [0.25, 0.5])
    np.testing.assert_allclose(stats["entropy"], [0.0, 0.0], atol=1e-15)
    # Cosine between the flattened patterns: they share only cell (0, 0): 1/(2·2) = 0.25.
    np.testing.assert_allclose(analysis.head_similarity(np.stack([identity, previous])),
                               [[1.0, 0.25], [0.25, 1.0]])
    assert analysis.local_mass(previous, 1).tolist() == [1.0] * 4
    assert analysis.sparsity(identity).tolist() == [0.75] * 4


@pytest.mark.parametrize("d_model", [5, 6, 8, 12, 32, 128])
def test_designed_head_counts_are_exactly_those_designed_params_accepts(d_model):
    # Second method: try every H from 1 to d_model and keep those that build.
    builds = []
    for h in range(1, d_model + 1):
        try:
            mh.designed_params(d_model, h, np.random.default_rng(0))
        except ValueError:
            continue
        builds.append(h)
    assert mh.head_counts(d_model, designed=True) == builds
    assert mh.head_counts(d_model) == mh.divisors(d_model)


def test_designed_head_counts_by_hand():
    # d_model = 8: divisors 1, 2, 4, 8; H = 8 leaves d_k = 1 < 2, so it goes.
    assert mh.head_counts(8, designed=True) == [1, 2, 4]
    # d_model = 128: H = 128 leaves d_k = 1; H = 64 leaves d_k = 2, the smallest allowed.
    assert mh.head_counts(128, designed=True)[-1] == 64
    assert mh.head_counts(4, designed=True) == []  # d_model < 5: no designed heads at all
    with pytest.raises(ValueError, match="d_model"):
        mh.head_counts(0)
