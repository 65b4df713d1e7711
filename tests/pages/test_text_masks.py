"""Lesson 3's sentences (pages/text/masks.py) as plain functions of attncore's results:
each branch is chosen by the numbers, on inputs small enough to derive by hand."""

from __future__ import annotations

import math

import numpy as np

from attncore.masks import LeakageTest, causal_mask
from attncore.pitfalls import (
    dropout_sums,
    fills_by_type,
    fully_masked_row,
    inverted_mask,
    off_by_one,
    wrong_axis,
)
from pages.text import masks as say
from pages.ui.glossary import term_link

TOKENS = ["a", "dog", "barked"]


def test_the_fully_masked_row_is_said_from_its_weights():
    # Scores 0, causal, row 3 masked: −∞ gives NaN, −1e9 gives 1/3 at each of 3 keys.
    r = fully_masked_row(np.zeros((3, 3)), causal_mask(3), 2)
    assert ("With every key of row 3 (“barked”) masked, each weight of the row is **NaN** "
            "(“not a number”) when −∞ fills the masked scores, **0.3333** when −1e9 does, and "
            "**exactly 0** under attncore's policy") in say.fully_masked_text(TOKENS, r)
    steps = say.plain_steps_text(TOKENS, r)
    assert "each s − m is NaN (−∞ − (−∞) is undefined)" in steps
    assert "Every score is −1×10⁹, so m is −1×10⁹, each s − m is exactly 0" in steps
    assert "the sum is 3.0000 and each weight is **0.3333**" in steps


def test_the_rows_that_keep_a_key_are_counted_and_the_fills_compared():
    # Rows 1 and 2 keep a key; their masked keys' e^(−1e9 − 0) underflow to 0.
    text = say.kept_rows_text(TOKENS, fully_masked_row(np.zeros((3, 3)), causal_mask(3), 2))
    assert "**The rows that keep a key** (2 here)" in text
    assert "give the same weights, the largest difference being exactly 0." in text
    assert "underflow to exactly 0 in float64. The two fills differ only on a fully" in text
    assert "−1e9 is stored as −∞ and row 3 (“barked”) gets NaN" in text
    # No mask at all: row 1 keeps every key, so the fill never enters it.
    text = say.kept_rows_text(TOKENS[:2], fully_masked_row(np.zeros((2, 2)),
                                                           np.ones((2, 2), bool), 1))
    assert "(No key of theirs is masked, so the fill never enters.)" in text
    # One token, masked: no row keeps a key, nothing to say.
    assert say.kept_rows_text(["a"], fully_masked_row(np.zeros((1, 1)), [[True]], 0)) is None


def test_minus_1e9_that_does_not_underflow_is_said_to_differ():
    # Row 1 keeps key 2 (score −1e9 + 1) and masks key 1: e^(−1e9 − (−1e9 + 1)) = e⁻¹.
    scores = np.array([[-1e9, -1e9 + 1], [0.0, 0.0]])
    r = fully_masked_row(scores, [[False, True], [True, True]], 1)
    text = say.kept_rows_text(["a", "b"], r)
    assert "give different weights" in text and "The two fills differ on a fully" in text
    assert f"Their masked keys' e^(−1e9 − m) are {math.exp(-1):.4f}." in text


def test_the_leakage_sentence_follows_the_changed_position():
    leak = LeakageTest(2, np.array([0.0, 0.0, 5.0]), np.array([0.1, 0.25, 5.0]))
    text = say.leakage_text(leak, "cat", 3)
    assert "Changing token 3 to “cat” (the causal mask alone, on this sentence's 3 real " \
           "tokens)" in text
    assert "the largest change at earlier positions is **exactly 0**; without the mask it " \
           "is 0.25." in text
    first = say.leakage_text(LeakageTest(0, np.array([1.0]), np.array([1.0])), "cat", 1)
    assert "this sentence has no earlier position to check" in first


def test_the_dropout_sentence_counts_rows_and_says_the_rescaling():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((3, 2)) for _ in range(3))
    mask = causal_mask(3)
    assert say.dropout_text(dropout_sums(q, k, v, mask, 0.0, rng), 1).startswith(
        "With p_drop = 0 nothing is dropped")
    d = dropout_sums(q, k, v, mask, 0.5, np.random.default_rng(1))
    text = say.dropout_text(d, 1)
    # 1/(1 − 0.5) = 2.
    assert "rescales the survivors by 1/(1 − p_drop) = 2.000" in text
    assert f"here {d.off} of the 3 rows that keep a key are off 1 (one draw, seed 1)" in text
    empty = dropout_sums(q, k, v, np.zeros((3, 3), bool), 0.5, np.random.default_rng(1))
    assert "here no row keeps a key." in say.dropout_text(empty, 1)


def test_the_inverted_mask_is_said_from_where_the_weight_lands():
    # Causal on 2 tokens: read inverted, query 1 sees only key 2 (weight 1), row 2 nothing.
    r = inverted_mask(np.zeros((2, 2)), causal_mask(2))
    text = say.inverted_text(["a", "b"], r)
    assert "hides the 3 cells it allows and opens the 1 it hides" in text
    assert "Query 1 (“a”) gives 1.0000 to key 2 (“b”)" in text
    assert "Row 2 (“b”) keeps no key" in text
    everything = inverted_mask(np.zeros((2, 2)), np.ones((2, 2), bool))
    assert say.inverted_text(["a", "b"], everything).endswith(": no row keeps a key.")


def test_the_off_by_one_sentence_names_the_second_query_only_when_there_is_one():
    # Scores 0: with k = 1 the diagonal is 1, 1/2, 1/3; with k = 0 it is 0.
    text = say.off_by_one_text(TOKENS, off_by_one(np.zeros((3, 3))))
    assert "the diagonal weights, from 0.3333 to 1.0000 with k = 1, are exactly 0." in text
    assert "Row 1 (“a”) keeps no key" in text
    assert "Query 2 (“dog”) can look only at token 1, with weight 1.0000 instead of " \
           "0.5000." in text
    assert "Query 2" not in say.off_by_one_text(["a"], off_by_one(np.zeros((1, 1))))


def test_the_wrong_axis_sentence_follows_the_row_sums():
    # Causal on 2 tokens, scores 0: rows sum to 1/2 and 3/2.
    text = say.wrong_axis_text(["a", "b"], wrong_axis(np.zeros((2, 2)), causal_mask(2)))
    assert "each of the 2 columns that keep a query sums to 1 (largest gap exactly 0)" in text
    assert "sum to anything from 0.5000 to 1.5000 instead of 1." in text
    one = say.wrong_axis_text(["a"], wrong_axis(np.zeros((1, 1)), [[True]]))
    assert "(one token: its row is its column), so the mistake does not show" in one


def test_the_float16_table_and_sentences():
    fills = fills_by_type(np.zeros((2, 2)), np.ones((2, 2), bool))
    table = say.fills_table(fills)
    assert list(table) == ["float64, fill −1e9", "float32, fill −1e9", "float16, fill −1e9",
                           "float16, fill finfo(float16).min"]
    assert table["float16, fill −1e9"]["largest finite number"] == "65,504"
    assert table["float16, fill −1e9"]["the fill, as stored"] == "−∞"
    assert table["float64, fill −1e9"]["row 2, fully masked: each weight"] == "0.5000"
    text = say.float16_text(["a", "b"], fills)
    assert "so −1e9 is stored as −∞, and row 2 (“b”), masked completely, gets **NaN** as " \
           "with −∞ in section 3; in float64 it gets 0.5000." in text
    assert "`np.finfo(np.float16).min` = −65,504, is stored as it is: with it that row gets " \
           "0.5000, as −1e9 gives in float64" in say.lowest_fill_text(fills)


def test_the_masked_weights_row_sums_and_fully_masked_rows():
    weights = np.array([[1.0, 0.0], [0.5, 0.5]])
    assert say.masked_weights_text(weights, causal_mask(2)) == (
        "**Masked weights:** 1 cells, the largest is exactly 0. **Row sums:** "
        "1.000000, 1.000000.")
    assert "none (no cell is masked)" in say.masked_weights_text(weights, np.ones((2, 2), bool))
    assert say.fully_masked_warning(["a", "b"], np.array([False, False])) is None
    assert say.fully_masked_warning(["<pad>", "b"], np.array([True, False])).startswith(
        "Fully masked rows: 1 (\\<pad\\>).")
    assert say.batch_text([["a", "<pad>"], ["b", "c"]], "<pad>", 8) == (
        "**The batch** (B = 2 sentences, padded with `<pad>` to T = 2 tokens, each token a "
        f"vector of {term_link('d_model', 'd_model')} = 8 numbers):")
