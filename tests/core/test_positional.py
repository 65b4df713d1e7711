"""Positional encodings: hand-derived values, Toeplitz similarity, shift, RoPE, ALiBi."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attncore import positional as pos
from attncore.positional import permutation_test

PROPERTY = settings(max_examples=50, deadline=None)


def test_position_zero_alternates_zero_and_one():
    # sin(0) = 0 and cos(0) = 1 for every pair.
    assert pos.sinusoidal(1, 8)[0].tolist() == [0.0, 1.0] * 4


def test_position_one_first_pair_is_sin_1_cos_1():
    pe = pos.sinusoidal(2, 6)
    # Pair 0 has ω₀ = b⁰ = 1: PE(1, 0) = sin 1, PE(1, 1) = cos 1.
    assert pe[1, 0] == math.sin(1.0) and pe[1, 1] == math.cos(1.0)


@pytest.mark.parametrize("p, i, d_model, base", [(5, 1, 8, 10000.0), (37, 3, 16, 100.0),
                                                 (511, 255, 512, 10000.0), (3, 2, 10, 1e5)])
def test_hand_picked_points(p, i, d_model, base):
    pe = pos.sinusoidal(p + 1, d_model, base)
    angle = p / base ** (2 * i / d_model)
    assert pe[p, 2 * i] == pytest.approx(math.sin(angle), abs=1e-12)
    assert pe[p, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-12)


def test_every_value_in_minus_one_to_one_and_odd_d_model_refused():
    pe = pos.sinusoidal(512, 512)
    assert pe.min() >= -1.0 and pe.max() <= 1.0
    with pytest.raises(ValueError, match="even"):
        pos.sinusoidal(10, 7)
    with pytest.raises(ValueError, match="base"):
        pos.sinusoidal(10, 8, base=1.0)


def test_wavelengths_run_from_2pi_to_2pi_times_base_geometrically():
    w = pos.wavelengths(8, 10000.0)
    # ω_i = 10000^(-2i/8) for i = 0..3 -> wavelengths 2π · 10000^(i/4) = 2π·{1, 10, 100, 1000}.
    np.testing.assert_allclose(w, 2 * math.pi * np.array([1, 10, 100, 1000]), rtol=1e-12)


@PROPERTY
@given(T=st.integers(2, 60), half=st.integers(1, 32), base=st.sampled_from([100.0, 1e4]))
def test_similarity_depends_on_offset_only(T, half, base):
    pe = pos.sinusoidal(T, 2 * half, base)
    sim = pe @ pe.T
    # PE(p)·PE(q) = Σ sin(pω)sin(qω) + cos(pω)cos(qω) = Σ cos((p - q)ω): Toeplitz.
    assert pos.offset_spread(sim) < 1e-12 * max(1, 2 * half)
    expected = np.cos((np.arange(T)[:, None] - np.arange(T))[..., None]
                      * pos.frequencies(2 * half, base)).sum(-1)
    np.testing.assert_allclose(sim, expected, atol=1e-12)


@PROPERTY
@given(T=st.integers(2, 80), half=st.integers(1, 64), data=st.data())
def test_one_rotation_maps_every_position_forward_by_k(T, half, data):
    d = 2 * half
    k = data.draw(st.integers(1, T - 1))
    pe = pos.sinusoidal(T, d)
    r = pos.shift_rotation(k, d)
    np.testing.assert_allclose(pe[k:], pe[:-k] @ r.T, rtol=0, atol=1e-12)
    # A rotation: orthogonal, and block diagonal (nothing outside the 2×2 blocks).
    np.testing.assert_allclose(r @ r.T, np.eye(d), atol=1e-12)
    blocks = np.kron(np.eye(half), np.ones((2, 2)))
    assert np.all(r[blocks == 0] == 0.0)


@PROPERTY
@given(half=st.integers(1, 8), m=st.integers(0, 40), n=st.integers(0, 40),
       shift=st.integers(1, 40), seed=st.integers(0, 1000))
def test_rope_score_depends_only_on_the_offset(half, m, n, shift, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal(2 * half), rng.standard_normal(2 * half)
    def score(a, b):
        return pos.rope(q[None], [a])[0] @ pos.rope(k[None], [b])[0]
    assert score(m, n) == pytest.approx(score(m + shift, n + shift), abs=1e-9)
    # Rotations keep lengths.
    assert np.linalg.norm(pos.rope(q[None], [m])) == pytest.approx(np.linalg.norm(q))


def test_rope_at_position_zero_changes_nothing():
    x = np.arange(8.0).reshape(2, 4)
    np.testing.assert_allclose(pos.rope(x, [0, 0]), x)


def test_alibi_slopes_are_the_papers_geometric_sequence():
    # H = 8: 2^(-8/8·h) for h = 1..8 = 1/2, 1/4, ..., 1/256.
    np.testing.assert_allclose(pos.alibi_slopes(8), [2.0**-h for h in range(1, 9)])
    # H = 4: 2^(-2h) = 1/4, 1/16, 1/64, 1/256; each ratio is constant (geometric).
    np.testing.assert_allclose(pos.alibi_slopes(4), [4.0**-h for h in range(1, 5)])
    # H = 6 (not a power of two): the 4-head slopes, then every other 8-head slope.
    np.testing.assert_allclose(pos.alibi_slopes(6), [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2,
                                                      1 / 8])
    bias = pos.alibi_bias(4, 2)  # H = 2: slopes 2^-4 = 1/16 and 2^-8 = 1/256
    # Query 3, key 0: distance 3 -> -3/16 and -3/256; distance 0 -> no penalty.
    assert bias[0, 3, 0] == -3 / 16 and bias[1, 3, 0] == -3 / 256 and bias[0, 2, 2] == 0.0


def test_relative_positions_are_clipped_distances():
    rel = pos.relative_positions(4, clip=2)
    assert rel.tolist() == [[0, 1, 2, 2], [-1, 0, 1, 2], [-2, -1, 0, 1], [-2, -2, -1, 0]]


def test_learned_table_is_seeded():
    a = pos.learned_table(5, 3, np.random.default_rng(4))
    assert np.array_equal(a, pos.learned_table(5, 3, np.random.default_rng(4)))
    assert a.shape == (5, 3)


@PROPERTY
@given(T=st.integers(2, 12), seed=st.integers(0, 1000))
def test_attention_is_permutation_equivariant_without_positions_only(T, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((T, 8))
    w = [rng.standard_normal((8, 8)) for _ in range(3)]
    result = permutation_test(x, pos.sinusoidal(T, 8), *w, np.random.default_rng(seed))
    assert not np.array_equal(result.perm, np.arange(T))
    assert result.diff_without < 1e-12  # equal up to rounding
    assert result.diff_with > 1e-6  # order matters once positions are added
    # and without positions under a causal mask, though by as little as a weight: with T = 2
    # swapped, the second row of one order and the first of the other differ by
    # a·|v₁ − v₂|, a the second query's weight on the first token (3.8e-7 at seed 928).
    assert result.diff_causal > 0


def test_the_causal_difference_by_a_loop():
    # Causal attention without positions, written out: output i is the softmax over the
    # keys j <= i of q_i·k_j / √d, times the values; reversing the rows moves each token's
    # set of visible keys, so the reversed outputs are not the outputs reversed.
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 6))
    w_q, w_k, w_v = (rng.standard_normal((6, 6)) for _ in range(3))

    def causal(rows):
        q, k, v = rows @ w_q, rows @ w_k, rows @ w_v
        out = []
        for i in range(len(rows)):
            e = np.exp(q[i] @ k[: i + 1].T / math.sqrt(6))
            out.append((e / e.sum()) @ v[: i + 1])
        return np.array(out)

    class Reverse:  # a generator whose permutation is the reversal
        @staticmethod
        def permutation(n):
            return np.arange(n)[::-1]

    result = permutation_test(x, pos.sinusoidal(4, 6), w_q, w_k, w_v, Reverse())
    expected = np.max(np.abs(causal(x[::-1]) - causal(x)[::-1]))
    assert result.diff_causal == pytest.approx(expected, rel=1e-12) and expected > 0.1
    # the first reversed output sees only its own token: it is that token's value
    np.testing.assert_allclose(causal(x[::-1])[0], x[3] @ w_v, rtol=1e-12)


def test_wavelengths_end_just_under_2pi_times_base():
    # Pair d/2 − 1 = 3 of d = 8: 2π · 10000^(6/8) = 2π · 1000, not 2π · 10000.
    assert pos.wavelengths(8, 10000.0)[-1] == pytest.approx(2 * math.pi * 1000, rel=1e-12)


@pytest.mark.parametrize("d_model, base", [(2, 100.0), (4, 100.0), (64, 10000.0),
                                           (512, 1e5)])
def test_offset_cosine_is_the_cosine_of_the_table_rows(d_model, base):
    pe = pos.sinusoidal(70, d_model, base)
    cosine = pe @ pe.T / np.outer(np.linalg.norm(pe, axis=1), np.linalg.norm(pe, axis=1))
    k = np.arange(70)
    np.testing.assert_allclose(pos.offset_cosine(k, d_model, base), cosine[0], atol=1e-12)
    # The same for every p: the whole diagonal at distance 5.
    np.testing.assert_allclose(np.diagonal(cosine, 5), pos.offset_cosine(5, d_model, base),
                               atol=1e-12)


def test_offset_cosine_hand_values():
    # d = 2: one pair with ω = 1, so the cosine at distance k is cos k.
    assert pos.offset_cosine(3, 2) == pytest.approx(math.cos(3), abs=1e-15)
    # d = 4, base 100: ω = 1 and 0.1: (cos 10 + cos 1) / 2 at distance 10.
    assert pos.offset_cosine(10, 4, 100.0) == pytest.approx((math.cos(10) + math.cos(1)) / 2,
                                                            abs=1e-15)
    assert pos.offset_cosine(0, 64) == 1.0


def alibi_reference(n: int) -> list[float]:
    """The paper's rule as Press et al. state it, written again: 2^(−8/n) times itself
    for a power of two; otherwise the closest power of two below, then every other slope
    of the next power of two."""
    if math.log2(n).is_integer():
        start = 2 ** (-8 / n)
        return [start ** (h + 1) for h in range(n)]
    below = 2 ** math.floor(math.log2(n))
    return alibi_reference(below) + alibi_reference(2 * below)[0::2][: n - below]


@pytest.mark.parametrize("heads", range(1, 33))
def test_alibi_slopes_follow_the_papers_rule(heads):
    np.testing.assert_allclose(pos.alibi_slopes(heads), alibi_reference(heads), rtol=1e-12)


def test_alibi_slopes_by_hand_when_not_a_power_of_two():
    # H = 3: the 2-head slopes 2^-4, 2^-8, then the first 4-head slope 2^-2.
    np.testing.assert_allclose(pos.alibi_slopes(3), [1 / 16, 1 / 256, 1 / 4])
    # H = 5: the 4-head slopes, then the first 8-head slope 2^-1.
    np.testing.assert_allclose(pos.alibi_slopes(5), [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2])
    # H = 6 (the example): 0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125.
    assert pos.alibi_slopes(6).tolist() == [0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125]


def test_geometric_ratio_only_for_powers_of_two_heads():
    assert pos.geometric_ratio([1.0, 0.5, 0.25]) == 0.5
    assert pos.geometric_ratio([1.0, 0.5, 0.3]) is None
    assert pos.geometric_ratio([0.1]) is None  # one number: no ratio to speak of
    for heads in range(2, 33):
        ratio = pos.geometric_ratio(pos.alibi_slopes(heads))
        if heads & (heads - 1) == 0:  # a power of two: ratio 2^(−8/H)
            assert ratio == pytest.approx(2 ** (-8 / heads), rel=1e-12)
        else:
            assert ratio is None, heads


def test_alibi_bias_causal_and_symmetric():
    # H = 2: slopes 1/16 and 1/256. Query 3, key 1: distance 2.
    causal, symmetric = pos.alibi_bias(4, 2, causal=True), pos.alibi_bias(4, 2)
    assert causal[0, 3, 1] == symmetric[0, 3, 1] == -2 / 16
    # Key 3 after query 1: masked in the causal form, −2/256 in the symmetric one.
    assert causal[1, 1, 3] == -np.inf and symmetric[1, 1, 3] == -2 / 256
    lower = np.tril(np.ones((4, 4), dtype=bool))
    np.testing.assert_array_equal(causal[:, lower], symmetric[:, lower])
    assert np.all(np.isneginf(causal[:, ~lower]))
    np.testing.assert_array_equal(symmetric, symmetric.transpose(0, 2, 1))
    assert not np.signbit(symmetric[:, np.arange(4), np.arange(4)]).any()  # 0, never −0


def test_rope_pairs_adjacent_coordinates_and_turns_as_the_page_writes():
    # Lesson 5 writes R(α) = [[cos α, −sin α], [sin α, cos α]] on pairs (2i, 2i + 1) with
    # θ_i = b^(−2i/d). d = 4, b = 100: θ = (1, 0.1). At position p = 2 a unit vector on
    # dimension 0 goes to (cos 2, sin 2, 0, 0) and one on dimension 3 to (0, 0, −sin 0.2,
    # cos 0.2): pair 0 is dimensions 0 and 1, pair 1 dimensions 2 and 3 (not 0 and 2).
    eye = np.eye(4)
    out = pos.rope(eye, [2, 2, 2, 2], base=100.0)
    np.testing.assert_allclose(out[0], [math.cos(2), math.sin(2), 0, 0], atol=1e-15)
    np.testing.assert_allclose(out[3], [0, 0, -math.sin(0.2), math.cos(0.2)], atol=1e-15)
    # The page's identity with its own matrices: (R_m q)·(R_n k) = qᵀ R_{n−m} k.
    def r_p(p, d=4, base=100.0):
        blocks = [np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
                  for a in p * base ** (-np.arange(0, d, 2) / d)]
        return np.block([[blocks[0], np.zeros((2, 2))], [np.zeros((2, 2)), blocks[1]]])
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal(4), rng.standard_normal(4)
    m, n = 5, 2
    by_core = pos.rope(q[None], [m], base=100.0)[0] @ pos.rope(k[None], [n], base=100.0)[0]
    assert by_core == pytest.approx(q @ r_p(n - m) @ k, abs=1e-12)
    np.testing.assert_allclose(pos.rope(q[None], [m], base=100.0)[0], r_p(m) @ q, atol=1e-12)


@pytest.mark.parametrize("angle, seen", [
    (0.5, 0.5),                    # less than half a turn: as it is
    (2.0, 2.0),
    (6.0, 2 * math.pi - 6.0),      # 0.283 short of a full turn: seen as 0.283 backwards
    (7.0, 7.0 - 2 * math.pi),      # 0.717 past a full turn
    (math.pi, math.pi),            # half a turn: the largest turn samples can show
    (4 * math.pi, 0.0),            # whole turns: the samples do not move
])
def test_apparent_turn_folds_whole_turns_away(angle, seen):
    assert pos.apparent_turn(angle) == pytest.approx(seen, abs=1e-12)
    # Samples sin(n·angle) are those of a turn by `seen` (up to sign): the same points.
    n = np.arange(20)
    assert np.allclose(np.cos(n * angle), np.cos(n * seen), atol=1e-9)


def test_the_sinusoidal_table_at_d_model_2_is_a_point_going_round_the_circle():
    # One pair turning by 1 radian per position: PE(p) = (sin p, cos p), |PE(p)| = 1,
    # PE(p)·PE(q) = cos(p − q). Among k = 1 … 63, cos k is largest at k = 44 (44 radians
    # is 7.003 turns).
    table = pos.sinusoidal_table(64, 2)
    p = np.arange(64)
    np.testing.assert_allclose(table.similarity, np.cos(p[:, None] - p[None, :]), atol=1e-12)
    np.testing.assert_allclose(table.norms, 1.0, rtol=1e-15)
    np.testing.assert_allclose(table.offset_cosines, np.cos(np.arange(1, 64)), atol=1e-12)
    np.testing.assert_allclose(np.diag(table.cosine), 1.0, rtol=1e-15)
    assert table.nearest == 44
    assert table.diagonal_spread < 1e-12 and table.length_spread < 1e-15


def test_at_the_defaults_neighbours_are_the_most_alike():
    table = pos.sinusoidal_table(64, 64)
    assert table.nearest == 1
    # Every |PE(p)| is √(d_model / 2) = √32.
    np.testing.assert_allclose(table.norms, math.sqrt(32), rtol=1e-14)


@pytest.mark.parametrize("T, d, row_step, pair_step", [
    (8, 4, 1, 1),       # fits: every row and column
    (100, 64, 2, 1),    # 100 rows in 64: one in ⌈100/64⌉ = 2; 32 pairs fit in 32
    (512, 512, 8, 8),   # ⌈512/64⌉ = 8 rows; ⌈256/32⌉ = 8 pairs
])
def test_a_large_table_is_drawn_one_row_and_pair_in_several(T, d, row_step, pair_step):
    sample = pos.table_sample(T, d, 64)
    assert (sample.row_step, sample.pair_step) == (row_step, pair_step)
    assert sample.sampled == (row_step > 1 or pair_step > 1)
    assert sample.rows.tolist() == list(range(0, T, row_step))
    pairs = range(0, d // 2, pair_step)
    assert sample.columns.tolist() == sorted([2 * i for i in pairs] + [2 * i + 1 for i in pairs])
    assert len(sample.rows) <= 64 and len(sample.columns) <= 64


def test_the_shift_check_finds_rounding_only():
    pe = pos.sinusoidal(64, 16)
    check = pos.shift_check(pe, 5)
    np.testing.assert_array_equal(check.rotation, pos.shift_rotation(5, 16))
    assert check.checked == 59 and check.error < 1e-12
    far = pos.shift_check(pe[:4], 5)  # no row has one 5 positions further on
    assert (far.checked, far.error) == (0, 0.0)


def test_rope_scores_depend_on_the_offset_only():
    # d_k = 2, θ₀ = b⁰ = 1: (R_m q)·(R_n k) = qᵀ R(n − m) k with R(α) = [[cos, −sin], [sin, cos]].
    scores = pos.rope_scores(6, 2, np.random.default_rng(1))
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal(2), rng.standard_normal(2)

    def rotation(a):
        return np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])

    expected = [[q @ rotation(n - m) @ k for n in range(6)] for m in range(6)]
    np.testing.assert_allclose(scores, expected, atol=1e-12)
    assert pos.offset_spread(pos.rope_scores(16, 16, np.random.default_rng(1))) < 1e-12
