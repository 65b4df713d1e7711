"""Lesson 1's sentences (pages/text/worked_example.py), as plain functions of a trace.

The textbook example by hand: Q = K = [[1, 0], [0, 1], [1, 1]], so S = Q Kᵀ =
[[1, 0, 1], [0, 1, 1], [1, 1, 2]] and, scaled by 1/√2 = 0.70711 (a), S̃ = [[a, 0, a],
[0, a, a], [a, a, 2a]].
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from attncore import causal_mask, scaled_dot_product_attention
from pages.text import worked_example as text

Q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
V = np.arange(1.0, 10.0).reshape(3, 3)
NAMES = text.token_names(["x1", "x2", "x3"])


def plain(markdown: str) -> str:
    """Links reduced to their text."""
    return re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", markdown)


def textbook(causal: bool = False):
    return scaled_dot_product_attention(Q, Q, V, mask=causal_mask(3) if causal else None)


@pytest.mark.parametrize("d_k, said", [(4, "= 2"), (1, "= 1"), (2, "≈ 1.414"), (3, "≈ 1.732")])
def test_the_root_is_said_with_equals_only_when_whole(d_k, said):
    # √4 = 2 and √1 = 1 are whole; √2 = 1.41421 and √3 = 1.73205 are rounded to 3 decimals.
    assert text.root_text(d_k) == said
    assert f"√d_k = √{d_k} {said}." in text.scaling_text(d_k)


def test_the_shift_is_explained_only_when_a_logit_is_large():
    # Textbook, τ = 1: every |logit| ≤ 2a = 1.414, far below 30: no shift, no caption.
    assert text.shift_text(textbook().softmax_steps(subtract_max="if_needed")) is None
    # Unscaled q = [10, 0] against k = [10, 0] and [0, 0]: scores 100 and 0, above 30.
    trace = scaled_dot_product_attention(np.array([[10.0, 0.0]]),
                                         np.array([[10.0, 0.0], [0.0, 0.0]]),
                                         np.zeros((2, 1)), scale="none")
    caption = text.shift_text(trace.softmax_steps(subtract_max="if_needed"))
    assert "larger than 30 in size (up to 100)" in caption


def test_the_row_sums_say_exactly_0_or_the_rounding():
    assert text.row_sums_text(np.array([[0.5, 0.5]])).endswith("deviation is exactly 0.")
    # 0.5 + (0.5 + 2⁻⁵²) = 1 + 2⁻⁵², exactly: a deviation of 2.2×10⁻¹⁶.
    said = text.row_sums_text(np.array([[0.5, 0.5 + 2.0**-52]]))
    assert said.endswith("deviation is 2.2×10⁻¹⁶ (rounding).")


def test_the_check_intro_follows_the_decimals_and_the_mask():
    intro = text.check_intro(3, masked=False)
    assert "right within ±0.001, one unit in the last of the 3 decimals" in intro
    assert "hidden ones" not in intro
    assert "step 2 asks for every scaled score, the hidden ones included" in text.check_intro(
        2, masked=True)


def test_token_names_add_the_position_only_to_a_repeated_name():
    assert text.token_names(["the", "cat", "the"]) == ["“the” (1)", "“cat”", "“the” (3)"]
    assert text.said_list(["a"]) == "a" and text.said_list(["a", "b", "c"]) == "a, b and c"


def test_low_tau_under_the_causal_mask_by_hand():
    # τ = 0.1 multiplies the logits by 10. Row 1 sees key 1 alone. Row 2 sees [0, a]:
    # weight 1/(1 + e^{-7.071}) = 0.99915 on key 2. Row 3 sees [a, a, 2a]: key 3 gets
    # 1/(1 + 2e^{-7.071}) = 0.99830. Both above 0.99: nearly one-hot.
    item = plain(text.low_tau_item(textbook(causal=True), NAMES))
    assert ("Here, at τ = 0.1: “x1” sees only one key (weight 1); “x2” and “x3” become "
            "nearly one-hot.") in item
    assert plain(text.low_tau_item(None, NAMES)).endswith(
        "Set it to 5: every row flattens towards uniform weights over the keys it may see.")


@pytest.mark.parametrize("d_k, scaled, said", [
    (1, True, "with d_k = 1, √d_k = 1, so nothing changes"),
    (2, True, "every score is then multiplied by √d_k = √2 ≈ 1.414, so every row sharpens"),
    (4, False, "every score is divided by √d_k = √4 = 2, so every row flattens"),
])
def test_the_scaling_item_follows_d_k_and_the_toggle(d_k, scaled, said):
    assert said in text.scaling_item(d_k, scaled)


@pytest.mark.parametrize("causal, said", [
    # q·k₁ by hand: q₁·k₁ = 1, q₂·k₁ = 0, q₃·k₁ = 1.
    (False, "“x1” and “x3” turn to it (q·k > 0); “x2” keeps its weights (q·k = 0)."),
    # Under the mask row 1 sees key 1 alone: its weight stays 1 whatever k₁'s length.
    (True, "“x3” turns to it (q·k > 0); “x2” keeps its weights (q·k = 0); “x1” sees only "
           "this key and keeps weight 1."),
])
def test_the_longer_key_item_by_hand(causal, said):
    item = text.longer_key_item(textbook(causal), NAMES)
    assert item.endswith(f"Try it on the first key, “x1”: {said}")
