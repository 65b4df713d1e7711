"""Masks: against loops over (i, j); True means "may attend"."""

import numpy as np
import pytest

from attncore.attention import scaled_dot_product_attention
from attncore.masks import (
    causal_mask,
    combine_masks,
    padding_mask,
    query_positions,
    window_mask,
)
from attncore.positional import relative_positions


@pytest.mark.parametrize("t", [1, 2, 5])
def test_causal_is_lower_triangular(t):
    m = causal_mask(t)
    assert m.dtype == bool and m.shape == (t, t)
    for i in range(t):
        for j in range(t):
            assert m[i, j] == (j <= i)


def test_causal_three_by_three_by_hand():
    assert causal_mask(3).tolist() == [[True, False, False],
                                       [True, True, False],
                                       [True, True, True]]


@pytest.mark.parametrize("t_q, t_k", [(2, 5), (3, 4), (1, 3)])
def test_causal_rectangular_queries_are_the_last_positions(t_q, t_k):
    # query i sits at position i + (Tk - Tq) and sees keys j <= that position
    m = causal_mask(t_q, t_k)
    assert m.shape == (t_q, t_k)
    for i in range(t_q):
        for j in range(t_k):
            assert m[i, j] == (j <= i + (t_k - t_q))
    assert m[-1].all()  # the newest query sees every key


def test_padding_mask_keys_only():
    m = padding_mask([2, 3, 0], 3)
    assert m.shape == (3, 1, 3)
    # sentence b has lengths[b] real tokens: keys j < lengths[b] are allowed
    assert m[:, 0].tolist() == [[True, True, False],
                                [True, True, True],
                                [False, False, False]]


def test_padding_mask_with_queries():
    m = padding_mask([2, 3], 3, queries=True)
    assert m.shape == (2, 3, 3)
    for b, length in enumerate([2, 3]):
        for i in range(3):
            for j in range(3):
                assert m[b, i, j] == (i < length and j < length)


def test_padding_mask_in_attention_ignores_padding_keys():
    # sentence of 2 real tokens padded to 3: whatever the padding token's V holds,
    # the real rows' outputs are the same as attending over the 2 real tokens alone
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=(1, 3, 2)) for _ in range(3))
    padded = scaled_dot_product_attention(q, k, v, mask=padding_mask([2], 3))
    alone = scaled_dot_product_attention(q[:, :2], k[:, :2], v[:, :2])
    np.testing.assert_allclose(padded.output[:, :2], alone.output, rtol=1e-14)
    assert (padded.weights[..., 2] == 0.0).all()


@pytest.mark.parametrize("t_q, width, t_k", [(5, 0, None), (5, 1, None), (4, 2, 6), (3, 10, None)])
def test_window_allows_exactly_the_band(t_q, width, t_k):
    # Query i sits at position p = i + (Tk - Tq), as in the causal mask, and sees keys
    # with |j - p| <= width.
    m = window_mask(t_q, width, t_k)
    n_k = t_q if t_k is None else t_k
    assert m.shape == (t_q, n_k)
    for i in range(t_q):
        p = i + (n_k - t_q)
        for j in range(n_k):
            assert m[i, j] == (abs(j - p) <= width)


@pytest.mark.parametrize("t_q, t_k", [(3, 3), (2, 5), (1, 4)])
def test_causal_window_and_relative_positions_place_each_query_at_one_position(t_q, t_k):
    """One alignment for all three: the causal mask's last allowed key of each row is the
    key at distance 0, which is the only key a window of width 0 allows."""
    rel = relative_positions(t_q, t_k)
    np.testing.assert_array_equal(causal_mask(t_q, t_k), rel <= 0)
    np.testing.assert_array_equal(window_mask(t_q, 0, t_k), rel == 0)
    last_allowed = [max(np.flatnonzero(row)) for row in causal_mask(t_q, t_k)]
    assert last_allowed == query_positions(t_q, t_k).tolist()
    # Combined, causal and a window of width w keep the w + 1 keys ending at the query.
    both = combine_masks(causal_mask(t_q, t_k), window_mask(t_q, 1, t_k))
    assert [np.flatnonzero(row).tolist() for row in both] == \
        [[j for j in (p - 1, p) if j >= 0] for p in query_positions(t_q, t_k)]


def test_more_queries_than_keys_is_refused():
    with pytest.raises(ValueError, match="Tk >= Tq"):
        causal_mask(4, 2)


def test_combine_masks_is_logical_and():
    causal = causal_mask(4)
    window = window_mask(4, 1)
    pad = padding_mask([3, 4], 4)  # (2, 1, 4)
    m = combine_masks(causal, window, pad)
    assert m.shape == (2, 4, 4)
    for b in range(2):
        for i in range(4):
            for j in range(4):
                assert m[b, i, j] == (causal[i, j] and window[i, j] and pad[b, 0, j])


def test_combine_a_single_mask_is_itself():
    np.testing.assert_array_equal(combine_masks(causal_mask(3)), causal_mask(3))


def test_combine_masks_errors():
    with pytest.raises(ValueError, match="at least one mask"):
        combine_masks()
    with pytest.raises(ValueError, match="mask 2 must be boolean"):
        combine_masks(causal_mask(2), np.ones((2, 2)))
    with pytest.raises(ValueError, match="do not broadcast"):
        combine_masks(causal_mask(2), causal_mask(3))


@pytest.mark.parametrize("call, word", [
    (lambda: causal_mask(0), "t_q"),
    (lambda: causal_mask(2.5), "t_q"),
    (lambda: causal_mask(True), "t_q"),
    (lambda: causal_mask(3, 0), "t_k"),
    (lambda: window_mask(3, -1), "width"),
    (lambda: window_mask(0, 1), "t_q"),
    (lambda: padding_mask([1], 0), "t must"),
    (lambda: padding_mask([4], 3), r"0\.\.3"),
    (lambda: padding_mask([-1], 3), r"0\.\.3"),
    (lambda: padding_mask([1.5], 3), "whole numbers"),
    (lambda: padding_mask([], 3), "whole numbers"),
    (lambda: padding_mask([[1, 2]], 3), "whole numbers"),
])
def test_bad_lengths_raise(call, word):
    with pytest.raises(ValueError, match=word):
        call()
