"""Lesson 4's sentences (pages/text/multi_head.py), as plain functions of a layer."""

from __future__ import annotations

import numpy as np
import pytest

from attncore import multihead as mh
from pages.text import multi_head as text
from pages.ui.glossary import term_link


def layer(d_model: int, heads: int) -> mh.MultiHeadParams:
    return mh.init_params(d_model, heads, np.random.default_rng(0))


def test_sizes_say_one_head_in_the_singular():
    assert text.sizes_text(11, layer(32, 1)).startswith(
        f"T = 11 tokens, {term_link('d_model', 'd_model')} = 32 (the width of each token's "
        "vector), H = 1 head, d_k = d_model / H = 32:")
    assert "H = 4 heads, d_k = d_model / H = 8:" in text.sizes_text(11, layer(32, 4))


def test_the_shapes_table_by_hand():
    # T = 3, d_model = 8, H = 2: d_k = 8 / 2 = 4.
    table = text.shapes_table(3, layer(8, 2), causal=False)
    assert "| split | reshape to heads | (2, 3, 4) each |" in table
    assert "| (3, 2·4 = 8) |" in table and "softmax(Qʰ Kʰᵀ / √4) per head" in table
    assert "√4 + causal mask) per head" in text.shapes_table(3, layer(8, 2), causal=True)


@pytest.mark.parametrize("heads, head, owned", [
    (8, 2, "column 3"),  # d_k = 8 / 8 = 1: head 3 owns column 3 alone
    (2, 1, "columns 5 to 8"),  # d_k = 4: head 2 owns columns 4 + 1 to 2·4
])
def test_a_head_slice_is_said_with_its_columns(heads, head, owned):
    x = np.eye(8)  # X W_Qʰ is W_Qʰ exactly, as is the head's slice of Q = X W_Q
    part = mh.head_slice(x, mh.multi_head_attention(x, layer(8, heads)), head)
    said = text.slice_text(part)
    assert said.startswith(f"Head {head + 1} owns {owned} of W_Q, W_K and W_V")
    assert f"are (8, {8 // heads}) slices" in said
    assert said.endswith("the largest difference is exactly 0.")
    ones = "one" if heads == 8 else "ones"
    assert text.slice_alt(part, "W_K") == (f"{owned.capitalize()} of W_K, the {ones} head "
                                           f"{head + 1} owns. ")


def test_the_designed_sentence_says_is_only_when_every_head_passes():
    assert "largest weight in each row is where its pattern says" in text.designed_text(True)
    assert "should be (✗ marks a head where it is not)" in text.designed_text(False)


def test_the_similarity_names_the_most_and_least_alike_pairs():
    similarity = np.array([[1.0, 0.9, 0.2], [0.9, 1.0, 0.5], [0.2, 0.5, 1.0]])
    said = text.similarity_text(similarity, ["h1", "h2", "h3"])
    assert said.endswith("Most alike: h1 and h2, 0.9; least alike: h1 and h3, 0.2.")
    assert text.similarity_text(np.ones((1, 1)), ["h1"]) == (
        "Cosine similarity between the heads' weight maps, 1 on the diagonal.")


def test_one_head_and_h_heads_have_the_same_parameters():
    # d_model = 8: 4 · 8² = 256 parameters, with 1 head (d_k = 8) or 4 (d_k = 2).
    said = text.parameters_text(layer(8, 1), layer(8, 4))
    assert "| one head | 1 | 8 | 4 × (8 × 8) | 256 |" in said
    assert "| this layer | 4 | 2 | 4 × (8 × 8) | 256 |" in said
    assert "4·d_model² = 4 × 8² = 256 parameters" in said


def test_the_cross_attention_map_is_target_by_source():
    said = text.cross_text(4, 3, 4, 128)
    assert "each head's map is 4 × 3, one row per target token" in said
    assert said.endswith("(H = 4, d_model = 128, d_k = 32).")
