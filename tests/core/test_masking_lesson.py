"""Lesson 3's core: the plain masked softmax for comparison, leakage, dropout, masks."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attncore as ac
from attncore.masks import leakage_test
from attncore.pitfalls import plain_masked_softmax
from attncore.softmax import softmax
from attncore.text import PAD, pad_batch, toy_embeddings

PROPERTY = settings(max_examples=60, deadline=None)
WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "barked", "birds", "sing"]


def test_fully_masked_row_three_ways():
    x = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    mask = np.array([[True, False, True], [False, False, False]])
    # Row 1 keeps keys 1 and 3: e¹/(e¹ + e³) = 1/(1 + e²) = 0.11920, e³/(e¹ + e³) = 0.88080.
    row1 = [1 / (1 + math.e**2), 0.0, math.e**2 / (1 + math.e**2)]
    inf = plain_masked_softmax(x, mask, -np.inf).weights
    big = plain_masked_softmax(x, mask, -1e9).weights
    ours = softmax(x, mask=mask)
    for w in (inf, big, ours):
        np.testing.assert_allclose(w[0], row1, rtol=1e-14)
    assert np.all(np.isnan(inf[1]))  # -inf - (-inf) = NaN, so NaN/NaN
    np.testing.assert_allclose(big[1], [1 / 3] * 3, rtol=1e-15)  # all -1e9: uniform
    assert ours[1].tolist() == [0.0, 0.0, 0.0]  # our policy


@PROPERTY
@given(words=st.lists(st.sampled_from(WORDS), min_size=2, max_size=10),
       new=st.sampled_from(["zebra", "quantum", "blue"]), seed=st.integers(0, 10_000))
def test_causal_mask_leaks_nothing_from_a_later_token(words, new, seed):
    rng = np.random.default_rng(seed)
    w_q, w_k, w_v = (rng.standard_normal((6, 6)) for _ in range(3))
    pos = int(rng.integers(1, len(words)))  # change a token after the first
    changed = words.copy()
    changed[pos] = new
    x, x2 = toy_embeddings(words, 6, decimals=None), toy_embeddings(changed, 6, decimals=None)
    leak = leakage_test(x, x2, w_q, w_k, w_v, ac.causal_mask(len(words)))
    assert leak.position == pos
    assert np.all(leak.diff_masked[:pos] == 0.0)  # exactly, not approximately
    # Without the mask every earlier query gives the changed key a positive weight, and
    # its output moves wherever that weight is large enough to show in float64 (a weight
    # of e^-56 changes an output of size 1 by less than its last digit).
    unmasked = ac.scaled_dot_product_attention(x2 @ w_q, x2 @ w_k, x2 @ w_v).weights
    assert np.all(unmasked[:pos, pos] > 0.0)
    visible = unmasked[:pos, pos] > 1e-12
    assert np.all(leak.diff_unmasked[:pos][visible] > 0.0)


def test_leakage_test_rejects_inputs_that_differ_in_several_rows():
    x = np.zeros((3, 2))
    with pytest.raises(ValueError, match="exactly one row"):
        leakage_test(x, x + 1, np.eye(2), np.eye(2), np.eye(2), ac.causal_mask(3))


def test_dropout_breaks_row_sums_but_masking_keeps_them():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((8, 4)) for _ in range(3))
    mask = ac.causal_mask(8)
    t = ac.scaled_dot_product_attention(q, k, v, mask=mask, dropout=0.5,
                                        rng=np.random.default_rng(1))
    np.testing.assert_allclose(t.weights.sum(axis=1), 1.0, rtol=1e-14)
    sums = t.dropout_weights.sum(axis=1)
    assert np.any(np.abs(sums - 1.0) > 0.05)  # some row is visibly off 1
    # Each surviving weight is the softmax weight times 1/(1 - p) = 2; masked stay 0.
    kept = t.dropout_weights != 0
    np.testing.assert_allclose(t.dropout_weights[kept], 2 * t.weights[kept], rtol=1e-15)
    assert np.all(t.dropout_weights[~mask] == 0.0)


@PROPERTY
@given(lengths=st.lists(st.integers(0, 6), min_size=1, max_size=4).filter(any),
       width=st.integers(0, 6), seed=st.integers(0, 1000))
def test_combined_masks_on_a_padded_batch(lengths, width, seed):
    t = max(lengths)
    pad = ac.padding_mask(np.array(lengths), t)  # (B, 1, T)
    combined = ac.combine_masks(pad, ac.causal_mask(t), ac.window_mask(t, width))
    for b, n in enumerate(lengths):
        for i in range(t):
            for j in range(t):
                assert combined[b, i, j] == (j < n and j <= i and abs(i - j) <= width)
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((len(lengths), t, 3)) for _ in range(3))
    w = ac.scaled_dot_product_attention(q, k, v, mask=combined).weights
    allowed_rows = combined.any(axis=-1)
    assert np.all(w[~combined] == 0.0)
    np.testing.assert_allclose(w.sum(axis=-1)[allowed_rows], 1.0, rtol=1e-12)
    assert np.all(w.sum(axis=-1)[~allowed_rows] == 0.0)


def test_pad_batch_caps_tokens_and_pads_visibly():
    tokens, lengths = pad_batch(["one two three four", "five"], max_tokens=3)
    assert tokens == [["one", "two", "three"], ["five", PAD, PAD]]
    assert lengths.tolist() == [3, 1]


def test_random_self_attention_projects_x_with_three_draws_in_order():
    from attncore.init import normal_weights
    from attncore.pitfalls import random_self_attention

    x = toy_embeddings(["a", "dog", "barked"], 4, decimals=None)
    mask = ac.causal_mask(3)
    result = random_self_attention(x, mask, np.random.default_rng(0))
    rng = np.random.default_rng(0)
    w = [normal_weights(rng, (4, 4)) for _ in range(3)]  # W_Q, W_K, W_V, drawn in order
    for got, expected in zip((result.w_q, result.w_k, result.w_v), w, strict=True):
        np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(result.trace.q, x @ w[0])
    np.testing.assert_array_equal(result.trace.v, x @ w[2])
    assert np.all(result.trace.weights[~mask] == 0.0)
