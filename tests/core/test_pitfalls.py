"""Lesson 3's pitfalls: each wrong way of masking, against values derived by hand."""

import math

import numpy as np
import pytest

from attncore.masks import causal_mask
from attncore.pitfalls import (
    CONVENTIONS,
    blocked_triangle,
    plain_masked_softmax,
    read_mask,
    softmax_over_queries,
    stored_as,
)
from attncore.softmax import softmax


def test_float16_cannot_hold_minus_1e9():
    # float16's largest finite value is (2 − 2⁻¹⁰)·2¹⁵ = 65,504; 1e9 is far beyond it.
    assert float(np.finfo(np.float16).max) == (2 - 2**-10) * 2**15 == 65504.0
    assert stored_as(-1e9, np.float16) == -math.inf
    # 1e9 = 2⁹·5⁹ and 5⁹ = 1,953,125 < 2²⁴: float32's 24-bit significand holds it exactly.
    assert stored_as(-1e9, np.float32) == -1e9
    assert stored_as(-65504.0, np.float16) == -65504.0


def test_the_max_shift_turns_a_fully_masked_minus_inf_row_into_nan_over_nan():
    steps = plain_masked_softmax([[1.0, 2.0, 3.0]], [[False, False, False]], -np.inf)
    assert steps.shift[0, 0] == -math.inf  # the maximum of three −∞
    assert np.all(np.isnan(steps.centred))  # −∞ − (−∞) is undefined
    assert np.all(np.isnan(steps.exps)) and np.isnan(steps.row_sums[0, 0])
    assert np.all(np.isnan(steps.weights))


def test_minus_1e9_makes_a_fully_masked_row_uniform_but_not_in_float16():
    x, none = [[1.0, 2.0, 3.0, 4.0]], [[False] * 4]
    big = plain_masked_softmax(x, none, -1e9)
    # Every score is −1e9, the maximum too: s − m = 0, e⁰ = 1, the sum is 4, each 1/4.
    assert big.centred.tolist() == [[0.0] * 4] and big.row_sums[0, 0] == 4.0
    assert big.weights.tolist() == [[0.25] * 4]
    half = plain_masked_softmax(x, none, -1e9, dtype=np.float16)
    assert half.weights.dtype == np.float16
    assert np.all(np.isneginf(half.filled)) and np.all(np.isnan(half.weights))
    # The float16 type's own lowest number is finite: uniform again.
    low = plain_masked_softmax(x, none, float(np.finfo(np.float16).min), dtype=np.float16)
    assert low.weights.tolist() == [[0.25] * 4]


def test_rows_that_keep_a_key_get_the_same_weights_from_minus_inf_and_minus_1e9():
    # Row [1, 2, 3] keeping keys 1 and 3: e¹/(e¹ + e³) = 1/(1 + e²) and e²/(1 + e²);
    # e^(−1e9 − 3) underflows to exactly 0 in float64 and float32.
    x, keep = [[1.0, 2.0, 3.0]], [[True, False, True]]
    by_hand = [1 / (1 + math.e**2), 0.0, math.e**2 / (1 + math.e**2)]
    for dtype, rtol in ((np.float64, 1e-15), (np.float32, 1e-6), (np.float16, 1e-3)):
        inf = plain_masked_softmax(x, keep, -np.inf, dtype=dtype).weights
        big = plain_masked_softmax(x, keep, -1e9, dtype=dtype).weights
        np.testing.assert_array_equal(inf, big)
        np.testing.assert_allclose(inf[0].astype(float), by_hand, rtol=rtol)
        assert inf[0, 1] == 0.0


def test_reading_a_keep_mask_as_blocked_inverts_it():
    causal = causal_mask(3)
    assert read_mask(causal, "keep").tolist() == causal.tolist()
    # True = masked reads the lower triangle as hidden: query i sees only keys j > i, and
    # the last query sees nothing.
    assert read_mask(causal, "blocked").tolist() == [[False, True, True],
                                                     [False, False, True],
                                                     [False, False, False]]
    with pytest.raises(ValueError, match="convention must be one of"):
        read_mask(causal, "ones")
    with pytest.raises(ValueError, match="boolean"):
        read_mask(np.ones((2, 2)), "keep")


def test_triu_k1_is_the_causal_mask_and_k0_hides_the_diagonal_too():
    for t in (1, 2, 5):
        np.testing.assert_array_equal(~blocked_triangle(t, 1), causal_mask(t))
        off = ~blocked_triangle(t, 0)
        # Allowed only j < i: the diagonal is hidden and row 1 has no key at all.
        assert [[off[i, j] for j in range(t)] for i in range(t)] == [
            [j < i for j in range(t)] for i in range(t)]
        assert not off[0].any()
    w = softmax(np.zeros((3, 3)), mask=~blocked_triangle(3, 0))
    # Equal scores: row 2 has key 1 only (weight 1), row 3 keys 1 and 2 (1/2 each).
    assert w.tolist() == [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.5, 0.5, 0.0]]


def test_the_softmax_over_queries_makes_columns_sum_to_one():
    s = np.array([[0.0, math.log(3.0)], [0.0, 0.0]])
    w = softmax_over_queries(s, np.ones((2, 2), dtype=bool))
    # Column 1: e⁰/(e⁰ + e⁰) = 1/2 each; column 2: 3/(3 + 1) and 1/(3 + 1).
    np.testing.assert_allclose(w, [[0.5, 0.75], [0.5, 0.25]], rtol=1e-15)
    np.testing.assert_allclose(w.sum(axis=0), [1.0, 1.0], rtol=1e-15)
    np.testing.assert_allclose(w.sum(axis=1), [1.25, 0.75], rtol=1e-15)  # not 1
    # Under a causal mask the last key's column holds one cell: its weight is 1.
    c = softmax_over_queries(np.zeros((3, 3)), causal_mask(3))
    assert c[:, 2].tolist() == [0.0, 0.0, 1.0]
    # Its first column has 3 allowed queries of equal score: 1/3 each.
    np.testing.assert_allclose(c[:, 0], [1 / 3] * 3, rtol=1e-15)


@pytest.mark.parametrize("call", [
    lambda: plain_masked_softmax([1.0, np.nan], [True, True], -np.inf),
    lambda: plain_masked_softmax([1.0, 2.0], [True, True, True], -np.inf),
    lambda: plain_masked_softmax([1.0, 2.0], [True, True], -1e9, dtype=np.int32),
    lambda: blocked_triangle(0, 1),
    lambda: softmax_over_queries([1.0, 2.0], [True, True]),
])
def test_bad_input_is_refused_with_a_value_error(call):
    with pytest.raises(ValueError):
        call()


class _TorchLikeScores:
    """Just enough of a PyTorch tensor to run ``CONVENTIONS["blocked"]``: ``masked_fill``
    writes the value where the mask is True (PyTorch's documented rule)."""

    def __init__(self, s):
        self.s = np.asarray(s, dtype=float)

    def masked_fill(self, mask, value):
        return np.where(mask, value, self.s)


def test_each_conventions_code_hides_the_cells_read_mask_says():
    # The code the page shows, run: each hides exactly the cells read_mask does not let
    # through, for a mask that is not symmetric (causal, 3 × 3).
    s, mask = np.arange(9.0).reshape(3, 3), causal_mask(3)
    keep = eval(CONVENTIONS["keep"], {"np": np, "mask": mask, "s": s})
    blocked = eval(CONVENTIONS["blocked"], {"mask": mask, "s": _TorchLikeScores(s)})
    for code, hidden in ((keep, ~read_mask(mask, "keep")), (blocked, ~read_mask(mask, "blocked"))):
        assert np.array_equal(np.isneginf(code), hidden)
        assert np.array_equal(code[~hidden], s[~hidden])
