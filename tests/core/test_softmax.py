"""Softmax: values against math.exp, stability, temperature, masks, errors, Jacobian."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

from attncore.softmax import fully_masked_rows, softmax, softmax_jacobian, softmax_steps

PROPERTY = settings(max_examples=75, deadline=None)


def softmax_by_loop(row, temperature=1.0):
    """The textbook formula with math.exp, shifted by the row maximum."""
    m = max(row)
    exps = [math.exp((x - m) / temperature) for x in row]
    total = sum(exps)
    return [e / total for e in exps]


def test_small_row_matches_the_formula():
    # softmax([1, 2, 3])_j = e^j / (e + e^2 + e^3)
    denom = math.e + math.e**2 + math.e**3
    expected = [math.e / denom, math.e**2 / denom, math.e**3 / denom]
    np.testing.assert_allclose(softmax([1.0, 2.0, 3.0]), expected, rtol=1e-14)


def test_equal_scores_give_uniform_weights():
    # e^0 / (4 e^0) = 1/4 exactly
    assert softmax([0.0, 0.0, 0.0, 0.0]).tolist() == [0.25, 0.25, 0.25, 0.25]


def test_large_score_does_not_overflow():
    # The exact value is [1, e^-1000, e^-1000, e^-1000] / (1 + 3 e^-1000). e^-1000 is
    # about 5e-435, far below the smallest float64 (about 5e-324), so the correctly
    # rounded answer is exactly [1, 0, 0, 0]. A naive exp(1000) would be inf -> NaN.
    w = softmax([1000.0, 0.0, 0.0, 0.0])
    assert w.tolist() == [1.0, 0.0, 0.0, 0.0]


def test_very_negative_scores_do_not_underflow_to_nan():
    # exp(-1000) underflows to 0 so a naive softmax gives 0/0; shifting by the max
    # gives e^0 / (e^0 + e^0) = 1/2 each.
    assert softmax([-1000.0, -1000.0]).tolist() == [0.5, 0.5]


def test_shift_invariance_at_large_values():
    # softmax(s + c) = softmax(s): [1000, 1001] behaves like [0, 1] -> [1, e] / (1 + e)
    expected = [1 / (1 + math.e), math.e / (1 + math.e)]
    np.testing.assert_allclose(softmax([1000.0, 1001.0]), expected, rtol=1e-14)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2])
def test_any_axis_matches_a_loop(axis):
    x = np.random.default_rng(3).normal(size=(2, 3, 4)) * 3
    w = softmax(x, axis=axis)
    moved_x = np.moveaxis(x, axis, -1)
    moved_w = np.moveaxis(w, axis, -1)
    for index in np.ndindex(moved_x.shape[:-1]):
        np.testing.assert_allclose(
            moved_w[index], softmax_by_loop(moved_x[index].tolist()), rtol=1e-13
        )


def test_temperature_divides_the_scores():
    x = [0.5, -1.0, 2.0]
    np.testing.assert_allclose(
        softmax(x, temperature=0.7), softmax_by_loop(x, temperature=0.7), rtol=1e-13
    )


def test_small_temperature_gives_one_hot_argmax():
    # T = 1e-3: the others get e^{(1-3)/1e-3} = e^{-2000} and e^{-1000}, both 0 in float64.
    assert softmax([1.0, 3.0, 2.0], temperature=1e-3).tolist() == [0.0, 1.0, 0.0]


def test_large_temperature_gives_nearly_uniform_weights():
    # With spread D = max - min and n entries, every weight lies between
    # e^{-D/T}/n and e^{D/T}/n, so |w - 1/n| <= (e^{D/T} - 1)/n.
    x = [0.0, 1.0, 3.0, -2.0]
    T, n, spread = 1e4, 4, 5.0
    bound = math.expm1(spread / T) / n  # about 1.25e-4
    w = softmax(x, temperature=T)
    assert np.all(np.abs(w - 1 / n) <= bound)
    # ...and not exactly uniform: the order of the scores is kept.
    assert w[2] > w[1] > w[0] > w[3]


def test_mask_zeroes_masked_entries_and_renormalises():
    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 5.0]])
    mask = np.array([[True, False, True], [False, True, True]])
    w = softmax(x, mask=mask)
    assert w[0, 1] == 0.0 and w[1, 0] == 0.0
    # row 1 over keys {1, 3}: [e^1, e^3] / (e^1 + e^3); row 2 over {2, 3}: [e^0, e^5] / ...
    d0 = math.e + math.e**3
    d1 = 1 + math.e**5
    np.testing.assert_allclose(w[0], [math.e / d0, 0.0, math.e**3 / d0], rtol=1e-14)
    np.testing.assert_allclose(w[1], [0.0, 1 / d1, math.e**5 / d1], rtol=1e-14)


def test_fully_masked_row_is_all_zero_never_nan():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    mask = np.array([[True, True], [False, False]])
    steps = softmax_steps(x, mask=mask)
    assert steps.weights[1].tolist() == [0.0, 0.0]
    assert not np.isnan(steps.weights).any()
    assert steps.fully_masked.tolist() == [False, True]
    assert fully_masked_rows(mask).tolist() == [False, True]
    # the other row is untouched: [e^1, e^2] / (e^1 + e^2)
    np.testing.assert_allclose(steps.weights[0], softmax_by_loop([1.0, 2.0]), rtol=1e-14)


def test_fully_masked_rows_along_another_axis():
    mask = np.array([[True, False], [False, False]])
    assert fully_masked_rows(mask, axis=0).tolist() == [False, True]
    w = softmax(np.zeros((2, 2)), axis=0, mask=mask)
    assert w.tolist() == [[1.0, 0.0], [0.0, 0.0]]


def test_mask_broadcasts_over_rows():
    x = np.arange(6.0).reshape(2, 3)
    w = softmax(x, mask=np.array([True, True, False]))
    assert (w[:, 2] == 0.0).all()
    # both rows are [a, a + 1] over the allowed keys: [1, e] / (1 + e)
    expected = [1 / (1 + math.e), math.e / (1 + math.e)]
    np.testing.assert_allclose(w[:, :2], [expected, expected], rtol=1e-14)


def test_steps_without_shift_show_plain_exponentials():
    x = [0.5, -1.0, 2.0]
    steps = softmax_steps(x, subtract_max=False)
    np.testing.assert_allclose(steps.exps, [math.exp(0.5), math.exp(-1.0), math.exp(2.0)],
                               rtol=1e-15)
    assert steps.shift.tolist() == [0.0]
    np.testing.assert_allclose(steps.row_sums, [math.exp(0.5) + math.exp(-1.0) + math.exp(2.0)],
                               rtol=1e-15)


def test_steps_with_shift_subtract_the_row_maximum():
    steps = softmax_steps([[0.5, -1.0, 2.0]])
    assert steps.shift.tolist() == [[2.0]]
    # exps = e^{s - 2}
    np.testing.assert_allclose(steps.exps, [[math.exp(-1.5), math.exp(-3.0), 1.0]], rtol=1e-15)


def test_steps_without_shift_refuse_to_overflow():
    with pytest.raises(ValueError, match="overflow"):
        softmax_steps([1000.0, 0.0], subtract_max=False)


@pytest.mark.parametrize("bad, word", [([1.0, float("nan")], "NaN"),
                                       ([1.0, float("inf")], "infinite"),
                                       ([1.0, -float("inf")], "infinite")])
def test_non_finite_scores_raise(bad, word):
    with pytest.raises(ValueError, match=word):
        softmax(bad)


def test_non_boolean_mask_raises():
    with pytest.raises(ValueError, match="boolean"):
        softmax([1.0, 2.0], mask=np.array([1, 0]))


def test_non_broadcasting_mask_raises():
    with pytest.raises(ValueError, match="does not broadcast"):
        softmax(np.zeros((2, 3)), mask=np.ones((2, 2), dtype=bool))


@pytest.mark.parametrize("temperature", [0.0, -1.0, float("nan"), float("inf"), "hot", True])
def test_bad_temperature_raises(temperature):
    with pytest.raises(ValueError, match="temperature"):
        softmax([1.0, 2.0], temperature=temperature)


def test_jacobian_matches_central_differences():
    s = np.array([0.3, -1.2, 2.0, 0.7])
    J = softmax_jacobian(softmax(s))
    h = 1e-6
    # column j: (p(s + h e_j) - p(s - h e_j)) / 2h, error O(h^2) ~ 1e-12 plus rounding ~ 1e-10
    fd = np.empty((4, 4))
    for j in range(4):
        e = np.zeros(4)
        e[j] = h
        fd[:, j] = (np.array(softmax_by_loop(s + e)) - np.array(softmax_by_loop(s - e))) / (2 * h)
    np.testing.assert_allclose(J, fd, atol=1e-8)


def test_jacobian_by_hand_for_two_entries():
    # p = [1/2, 1/2]: J = diag(p) - p pᵀ = [[1/2 - 1/4, -1/4], [-1/4, 1/2 - 1/4]]
    assert softmax_jacobian([0.5, 0.5]).tolist() == [[0.25, -0.25], [-0.25, 0.25]]


@PROPERTY
@given(arrays(np.float64, array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5),
              elements=st.floats(-20, 20)))
def test_jacobian_is_symmetric_with_rows_summing_to_zero(x):
    J = softmax_jacobian(softmax(x))
    assert J.shape == x.shape + x.shape[-1:]
    np.testing.assert_array_equal(J, np.swapaxes(J, -1, -2))
    np.testing.assert_allclose(J.sum(axis=-1), 0.0, atol=1e-15)


@st.composite
def scores_and_mask(draw):
    shape = draw(array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6))
    x = draw(arrays(np.float64, shape, elements=st.floats(-1e3, 1e3)))
    mask = draw(arrays(np.bool_, shape))
    return x, mask


@PROPERTY
@given(scores_and_mask(), st.floats(0.05, 20.0))
def test_rows_sum_to_one_and_masked_entries_are_zero(data, temperature):
    x, mask = data
    w = softmax(x, temperature=temperature, mask=mask)
    assert np.isfinite(w).all() and (w >= 0).all()
    assert (w[~mask] == 0.0).all()
    sums = w.sum(axis=-1)
    has_key = mask.any(axis=-1)
    np.testing.assert_allclose(sums[has_key], 1.0, rtol=0, atol=1e-12)
    assert (sums[~has_key] == 0.0).all()
    assert (fully_masked_rows(mask) == ~has_key).all()


@PROPERTY
@given(arrays(np.float64, st.integers(1, 8), elements=st.floats(-50, 50)),
       st.floats(0.1, 10.0))
def test_unmasked_rows_match_a_loop(x, temperature):
    np.testing.assert_allclose(softmax(x, temperature=temperature),
                               softmax_by_loop(x.tolist(), temperature), rtol=1e-12, atol=1e-300)
