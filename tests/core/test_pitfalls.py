"""Lesson 3's pitfalls: each wrong way of masking, against values derived by hand."""

import math

import numpy as np
import pytest

from attncore.masks import causal_mask
from attncore.pitfalls import (
    CONVENTIONS,
    blocked_triangle,
    dropout_sums,
    fills_by_type,
    fully_masked_row,
    inverted_mask,
    off_by_one,
    plain_masked_softmax,
    read_mask,
    softmax_over_queries,
    stored_as,
    wrong_axis,
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


# ---- Lesson 3's comparisons as whole results ---------------------------------------------

def test_a_fully_masked_row_under_the_two_fills_and_our_policy():
    # Causal mask on 3 tokens, scores all 0, row 3 masked completely. Row 1 keeps key 1
    # (weight 1), row 2 keys 1 and 2 (e⁰/(e⁰ + e⁰) = 1/2 each); the masked keys of these
    # rows get e^(−1e9 − 0), which underflows to exactly 0, so the fills agree there.
    r = fully_masked_row(np.zeros((3, 3)), causal_mask(3), 2)
    assert np.all(np.isnan(r.inf.weights[2])) and np.all(np.isnan(r.half.weights[2]))
    assert r.big.weights[2].tolist() == [1 / 3] * 3  # all −1e9: e⁰ = 1 at 3 keys
    assert r.policy[2].tolist() == [0.0, 0.0, 0.0]
    assert r.kept.tolist() == [True, True, False] and r.gap == 0.0
    assert r.tails.tolist() == [0.0, 0.0, 0.0]  # keys 2, 3 of row 1 and key 3 of row 2
    np.testing.assert_array_equal(r.inf.weights[:2], [[1, 0, 0], [0.5, 0.5, 0]])
    assert not r.mask[2].any() and causal_mask(3)[2].all()  # the caller's mask is kept


def test_the_fills_differ_where_minus_1e9_does_not_underflow():
    # Row 1 keeps key 2 (score −1e9 + 1) and masks key 1: filled with −1e9, its
    # e^(−1e9 − (−1e9 + 1)) = e⁻¹ survives, so key 1 takes e⁻¹/(1 + e⁻¹) = 1/(1 + e).
    scores = np.array([[-1e9, -1e9 + 1], [0.0, 0.0]])
    r = fully_masked_row(scores, [[False, True], [True, True]], 1)
    assert r.gap == pytest.approx(1 / (1 + math.e), rel=1e-6)
    assert r.tails.tolist() == pytest.approx([math.exp(-1)], rel=1e-6)


def test_a_mask_read_inverted_puts_every_weight_where_it_must_not():
    # Causal on 2 tokens allows 3 cells and hides 1; read inverted, row 1 sees only key 2
    # (weight 1) and row 2 sees nothing.
    r = inverted_mask(np.array([[0.0, math.log(3)], [0.0, 0.0]]), causal_mask(2))
    assert (r.allowed, r.hidden) == (3, 1)
    assert r.weights.tolist() == [[0.0, 1.0], [0.0, 0.0]]
    assert r.empty.tolist() == [False, True] and r.left == 0.0
    assert (r.query, r.key) == (0, 1)
    everything = inverted_mask(np.zeros((2, 2)), np.ones((2, 2), dtype=bool))
    assert everything.empty.all() and everything.query is None and everything.key is None


def test_the_off_by_one_mask_blocks_the_diagonal_and_empties_row_1():
    # Scores all 0: uniform over the keys each row may see.
    r = off_by_one(np.zeros((3, 3)))
    np.testing.assert_allclose(r.right, [[1, 0, 0], [1 / 2, 1 / 2, 0], [1 / 3] * 3])
    np.testing.assert_allclose(r.wrong, [[0, 0, 0], [1, 0, 0], [1 / 2, 1 / 2, 0]])
    assert r.empty.tolist() == [True, False, False]


def test_the_wrong_axis_sums_columns_to_1_and_rows_to_anything():
    # Causal on 2 tokens, scores 0: column 1 is shared by rows 1 and 2 (1/2 each), column 2
    # belongs to row 2 alone (1): rows sum to 1/2 and 3/2.
    r = wrong_axis(np.zeros((2, 2)), causal_mask(2))
    assert r.column_sums.tolist() == [1.0, 1.0] and r.row_sums.tolist() == [0.5, 1.5]
    assert r.column_gap == 0.0 and not r.rows_sum_to_one
    assert wrong_axis(np.zeros((1, 1)), [[True]]).rows_sum_to_one  # its row is its column
    with pytest.raises(ValueError, match="nothing to normalise"):
        wrong_axis(np.zeros((2, 2)), np.zeros((2, 2), dtype=bool))


def test_minus_1e9_in_each_float_type_with_the_last_row_masked():
    # Scores 0 and no mask: row 2 masked completely is uniform (1/2) wherever the fill is
    # finite, NaN where float16 stores −1e9 as −∞; row 1 has no masked key, so no gap.
    fills = fills_by_type(np.zeros((2, 2)), np.ones((2, 2), dtype=bool))
    half = fills.case(np.float16, -1e9)
    assert (half.largest, half.stored) == (65504.0, -math.inf)
    assert np.all(np.isnan(half.plain.weights[-1]))
    assert fills.case(np.float32, -1e9).stored == -1e9  # 5⁹·2⁹ fits float32's significand
    assert fills.case(np.float64, -1e9).plain.weights[-1].tolist() == [0.5, 0.5]
    assert fills.case(np.float16, -65504.0).plain.weights[-1].tolist() == [0.5, 0.5]
    assert fills.lowest_like_double and all(c.gap == 0.0 for c in fills.cases)


def test_dropout_changes_a_rows_sum_and_masking_does_not():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((4, 3)) for _ in range(3))
    mask = causal_mask(4)
    mask[3] = False  # row 4 keeps no key: not counted
    none = dropout_sums(q, k, v, mask, 0.0, np.random.default_rng(1))
    assert none.off == 0 and none.kept.tolist() == [True, True, True, False]
    np.testing.assert_array_equal(none.after, none.before)
    half = dropout_sums(q, k, v, mask, 0.5, np.random.default_rng(1))
    np.testing.assert_allclose(half.before[:3], 1.0, rtol=1e-15)
    # Row 1 has one key of weight 1: dropped (0) or kept and doubled (1/(1 − 0.5) = 2).
    assert half.after[0] in (0.0, 2.0)
    assert half.off == int(np.sum(np.abs(half.after[:3] - 1) > 1e-12))
