"""Score functions: against loops and hand arithmetic; shape errors; overflow."""

import math

import numpy as np
import pytest

from attncore.attention import scaled_dot_product_attention
from attncore.scores import (
    additive_scores,
    dot_scores,
    general_scores,
    scaled_dot_scores,
    score_parameter_count,
)

OVERFLOW_WARNING = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")


def dot_by_loop(q, k):
    return [[sum(a * b for a, b in zip(q_i, k_j, strict=True)) for k_j in k] for q_i in q]


@pytest.fixture
def qk():
    rng = np.random.default_rng(2)
    return rng.normal(size=(4, 3)), rng.normal(size=(5, 3))


def test_dot_scores_by_hand():
    # q1 = (1, 2), q2 = (0, -1); k1 = (3, 1), k2 = (1, 1)
    # q1·k1 = 1×3 + 2×1 = 5, q1·k2 = 1×1 + 2×1 = 3, q2·k1 = 0×3 - 1×1 = -1, q2·k2 = -1
    assert dot_scores([[1, 2], [0, -1]], [[3, 1], [1, 1]]).tolist() == [[5, 3], [-1, -1]]


def test_dot_and_scaled_dot_match_loops(qk):
    q, k = qk
    expected = np.array(dot_by_loop(q.tolist(), k.tolist()))
    np.testing.assert_allclose(dot_scores(q, k), expected, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(scaled_dot_scores(q, k), expected / math.sqrt(3),
                               rtol=1e-13, atol=1e-15)


def test_scores_are_batched_over_leading_dimensions():
    rng = np.random.default_rng(3)
    q = rng.normal(size=(2, 3, 4, 2))  # (B, H, Tq, d_k)
    k = rng.normal(size=(2, 3, 5, 2))  # (B, H, Tk, d_k)
    s = scaled_dot_scores(q, k)
    assert s.shape == (2, 3, 4, 5)
    for b in range(2):
        for h in range(3):
            expected = np.array(dot_by_loop(q[b, h].tolist(), k[b, h].tolist())) / math.sqrt(2)
            np.testing.assert_allclose(s[b, h], expected, rtol=1e-13, atol=1e-15)


def test_general_with_identity_equals_dot(qk):
    q, k = qk
    np.testing.assert_array_equal(general_scores(q, k, np.eye(3)), dot_scores(q, k))


def test_general_matches_a_loop():
    rng = np.random.default_rng(4)
    q, k, w = rng.normal(size=(3, 2)), rng.normal(size=(4, 5)), rng.normal(size=(2, 5))
    # score_ij = Σ_a Σ_b q_ia W_ab k_jb
    expected = [[sum(q[i, a] * w[a, b] * k[j, b] for a in range(2) for b in range(5))
                 for j in range(4)] for i in range(3)]
    np.testing.assert_allclose(general_scores(q, k, w), expected, rtol=1e-13, atol=1e-15)


def test_additive_by_hand():
    # W_q = I, W_k = diag(0.5, -1), v = (1, 2); q1 = (1, 0); k1 = (0, 1), k2 = (2, 1)
    # (q1, k1): W_q q1 + W_k k1 = (1, 0) + (0, -1) = (1, -1)
    #           v·tanh = 1×tanh(1) + 2×tanh(-1) = -tanh(1) = -0.76159416
    # (q1, k2): (1, 0) + (1, -1) = (2, -1)
    #           v·tanh = tanh(2) - 2 tanh(1) = 0.96402758 - 1.52318831 = -0.55916073
    s = additive_scores([[1.0, 0.0]], [[0.0, 1.0], [2.0, 1.0]],
                        np.eye(2), np.diag([0.5, -1.0]), [1.0, 2.0])
    expected = [[-math.tanh(1), math.tanh(2) - 2 * math.tanh(1)]]
    np.testing.assert_allclose(s, expected, rtol=1e-15)


def test_additive_matches_a_loop_and_is_bounded():
    rng = np.random.default_rng(5)
    d_q, d_k, d_a = 3, 2, 4
    q, k = rng.normal(size=(2, 3, d_q)) * 5, rng.normal(size=(2, 4, d_k)) * 5
    w_q, w_k, v = rng.normal(size=(d_a, d_q)), rng.normal(size=(d_a, d_k)), rng.normal(size=d_a)
    s = additive_scores(q, k, w_q, w_k, v)
    assert s.shape == (2, 3, 4)
    for b in range(2):
        for i in range(3):
            for j in range(4):
                hidden = [math.tanh(sum(w_q[a, c] * q[b, i, c] for c in range(d_q))
                                    + sum(w_k[a, c] * k[b, j, c] for c in range(d_k)))
                          for a in range(d_a)]
                expected = sum(v[a] * hidden[a] for a in range(d_a))
                assert s[b, i, j] == pytest.approx(expected, rel=1e-12, abs=1e-14)
    # |tanh| <= 1, so |score| <= Σ |v_a|
    assert (np.abs(s) <= np.abs(v).sum()).all()


@pytest.mark.parametrize("fn", [dot_scores, scaled_dot_scores])
def test_dot_shape_mismatch_names_q_and_k(fn):
    same_d = r"Q and K must have the same last dimension d_k.*\(2, 3\)"
    with pytest.raises(ValueError, match=same_d):
        fn(np.ones((2, 2)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="Q must have at least 2 dimensions"):
        fn(np.ones(2), np.ones((2, 2)))
    with pytest.raises(ValueError, match="batch dimensions of Q"):
        fn(np.ones((2, 3, 2)), np.ones((4, 3, 2)))


def test_general_shape_mismatch_names_w():
    expected = r"W must have shape \(d_q, d_k\) = \(2, 3\); got \(3, 2\)"
    with pytest.raises(ValueError, match=expected):
        general_scores(np.ones((1, 2)), np.ones((1, 3)), np.ones((3, 2)))


@pytest.mark.parametrize("w_q, w_k, v", [
    (np.ones((4, 3)), np.ones((4, 2)), np.ones(4)),  # W_q has d_q = 3, Q has 2
    (np.ones((4, 2)), np.ones((3, 2)), np.ones(4)),  # W_k has d_a = 3, v has 4
    (np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 1))),  # v is not a vector
])
def test_additive_shape_mismatch_names_the_parts(w_q, w_k, v):
    with pytest.raises(ValueError, match=r"v \(d_a,\), W_q \(d_a, d_q\), W_k \(d_a, d_k\)"):
        additive_scores(np.ones((1, 2)), np.ones((1, 2)), w_q, w_k, v)


def test_non_finite_input_names_the_argument():
    with pytest.raises(ValueError, match="K contains NaN"):
        dot_scores([[1.0]], [[float("nan")]])
    with pytest.raises(ValueError, match="W contains an infinite"):
        general_scores([[1.0]], [[1.0]], [[float("inf")]])
    with pytest.raises(ValueError, match="Q must hold numbers only"):
        dot_scores([["a"]], [[1.0]])


@OVERFLOW_WARNING
@pytest.mark.parametrize("fn", [
    dot_scores,
    scaled_dot_scores,
    lambda q, k: general_scores(q, k, np.eye(2)),
    lambda q, k: scaled_dot_product_attention(q, k, [[1.0]]).output,
])
def test_overflow_raises_instead_of_returning_inf(fn):
    # 1e300 × 1e300 + 1e300 × 1e300 = 2e600, beyond float64's 1.8e308
    big = [[1e300, 1e300]]
    with pytest.raises(ValueError, match="overflow"):
        fn(big, big)


def test_large_values_that_fit_are_kept():
    # 2^500 × 2^500 = 2^1000 (about 1.07e301) fits in float64 and is exact in binary
    assert dot_scores([[2.0**500]], [[2.0**500]]).tolist() == [[2.0**1000]]


@pytest.mark.parametrize("name, expected", [
    ("dot", 0),
    ("scaled_dot", 0),
    ("general", 3 * 4),  # W is (d_q, d_k) = (3, 4)
    ("additive", 5 * 3 + 5 * 4 + 5),  # W_q (d_a, d_q) + W_k (d_a, d_k) + v (d_a,) = 40
])
def test_score_parameter_count(name, expected):
    assert score_parameter_count(name, d_q=3, d_k=4, d_a=5) == expected


def test_score_parameter_count_errors():
    with pytest.raises(ValueError, match="d_a"):
        score_parameter_count("additive", 3, 4)
    with pytest.raises(ValueError, match="unknown score 'cosine'"):
        score_parameter_count("cosine", 3, 4)
