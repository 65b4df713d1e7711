"""Lesson 9's sentences (pages/text/pretrained_model.py) as plain functions of numbers.

The numbers are made here, small enough to know each answer by hand, so that every
branch (sinks or not, the same weights or not, = or ≈) is chosen by them.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from attncore import scaled_dot_product_attention
from attncore.encoder.worked import worked_head
from pages.text import pretrained_model as say
from pages.ui.glossary import term_link

SINKS = term_link("attention-sink", "attention sinks")


def test_heads_are_counted_in_words():
    assert say.heads_put(0, 72) == "No head puts"
    assert say.heads_put(1, 72) == "1 of the 72 heads puts"
    assert say.heads_put(46, 72) == "46 of the 72 heads each put"


def test_cls_and_sep_are_called_sinks_only_well_above_an_even_spread():
    layer_sink = np.array([[0.10, 0.05], [0.40, 0.30]])  # L1 15%, L2 70%
    sinks = say.sinks_text(layer_sink, 2, 12, 2 / 12, sinking=True)
    assert "per layer (averaged over heads and query rows): L1 15%, L2 70%." in sinks
    assert "2 tokens out of 12 get up to 70% of it, against 17% if every query" in sinks
    assert sinks.endswith(f": they act as {SINKS}.")
    spread = say.sinks_text(layer_sink, 2, 3, 2 / 3, sinking=False)
    assert spread.endswith(f": less than 2 times that, too little to call them {SINKS} on "
                           "this sentence.")


def test_the_sink_notice_names_the_layers_over_one_half():
    mass = np.array([[0.6, 0.2, 0.7], [0.1, 0.9, 0.3]])  # 3 of 6 heads over 0.5
    layer_sink = np.array([[0.30, 0.25], [0.20, 0.10]])  # L1 0.55, L2 0.30
    text = say.sink_notice(mass, layer_sink, 2 / 12, sinking=True)
    assert text.startswith("3 of the 6 heads each put more than half of its weight on [CLS] "
                           "or [SEP] on this sentence; in L1 more than half of all attention "
                           "lands there. A common reading of such sinks")
    low = say.sink_notice(mass * 0, layer_sink * 0, 2 / 3, sinking=False)
    assert low == ("No head puts more than half of its weight on [CLS] or [SEP] on this "
                   "sentence; in no layer does more than half of all attention land there. "
                   "An even spread would give them 67%: too little above it to call them "
                   "sinks on this sentence.")


def test_the_previous_token_notice_names_the_strongest_head():
    # The mass is averaged over the T − 1 = 11 rows that have a token before, as section 2's
    # caption measures it: 0.9998 reads 99.98% (100% would be all of it).
    mass = np.array([[0.2, 0.9998], [0.4, 0.3]])
    assert say.previous_notice(mass, 12) == (
        "1 of the 4 heads puts more than half of its weight on the previous token (a bright "
        "line just below the diagonal) on this sentence; the most: layer 1, head 2, 99.98% on "
        "average over the 11 rows that have a token before.")


def test_the_previous_token_map_and_notice_use_the_caption_s_rows():
    # One head whose every row but the first puts all its weight on the token before:
    # over the 2 rows that have one that is 1; over all 3 rows it would be 2/3.
    w = np.array([[1.0, 0, 0], [1.0, 0, 0], [0, 1.0, 0]])
    assert "100% on the token just before (averaged over the 2 rows that have one)" in \
        say.head_shares_text(1, 1, w, ["[CLS]", "a", "[SEP]"])
    assert "100% on average over the 2 rows that have a token before" in \
        say.previous_notice(np.array([[1.0]]), 3)
    assert "over the rows that have one" in say.MEANING["previous-token mass"]


def small_trace(weights=None):
    """One layer, one head, two tokens, d_k = 4 (so √d_k = 2): query 1 is (1, 0, 0, 0),
    the keys (3, 0, 0, 0) and (1, 0, 0, 0), so the scores are 3 and 1, scaled 1.5 and
    0.5, and the weights 1/(1 + e⁻¹) and e⁻¹/(1 + e⁻¹). Its weights are lesson 1's
    function's unless ``weights`` are given."""
    q = np.zeros((1, 1, 2, 4))
    k = np.zeros((1, 1, 2, 4))
    q[0, 0, :, 0] = 1.0
    k[0, 0, :, 0] = [3.0, 1.0]
    v = np.eye(2, 4)[None, None]
    w = scaled_dot_product_attention(q, k, v).weights if weights is None else weights
    return SimpleNamespace(q=q, k=k, v=v, attentions=w, head_outputs=w @ v,
                           config=SimpleNamespace(d_model=4))


def test_the_worked_lines_say_equals_only_for_numbers_written_exactly():
    lines = say.score_latex(worked_head(small_trace(), 0, 0, 0, 0))
    assert lines[1].startswith(r"s = 3\quad")  # 3 is exact
    assert r"= \frac{3}{2} = 1.5" in lines[2]  # √4 = 2 and 3 / 2 = 1.5 exactly
    # e^0 = 1 exactly over 1 + e⁻¹ = 1.36788, rounded; the weight 0.731059 rounded too
    assert r"\approx \frac{1}{1.36788} \approx 0.731059" in lines[3]
    assert r"(m = 1.5,\ \text{the row maximum})" in lines[3]
    assert lines[0].endswith("+ (0)(0)")  # the factors of the last product


def test_the_same_weights_is_said_as_the_difference_allows():
    exact = worked_head(small_trace(), 0, 0, 0, 1)
    assert exact.recomputed_difference == 0
    text = say.recomputation_text(exact)
    weight = math.exp(-1) / (1 + math.exp(-1))
    assert text.startswith(f"The model's own weight is {weight:.6f} (difference exactly 0).")
    assert "gives the same weights (largest difference exactly 0)." in text
    for change, said in ((1e-15, "the same weights up to rounding"),
                         (1e-6, "weights that differ from the model's")):
        w = small_trace().attentions.copy()
        w[0, 0, 0, 0] += change
        worked = worked_head(small_trace(w), 0, 0, 1, 1)
        assert f"gives {said} (largest difference" in say.recomputation_text(worked)


@pytest.mark.parametrize("moved, text", [
    (0.0, "1 (unchanged)"),
    (2e-7, "1 − 2.0×10⁻⁷"),  # 5 decimals would read a false 1.00000
    (3e-3, "0.99700"),
])
def test_a_cosine_never_reads_an_exact_looking_1(moved, text):
    assert say.cosine_text(moved) == text


def test_the_most_moving_and_the_sharpest_head_are_compared():
    moved = np.array([1e-4, 3e-3, 2e-4])
    same = say.ablation_text(2, moved, np.array([0.2, 0.9, 0.5]))
    assert same.startswith("In layer 2 the head whose removal moves the embedding most is H2 "
                           "(1 − cosine 3.0×10⁻³); the one that attends most sharply is the "
                           "same head here")
    other = say.ablation_text(2, moved, np.array([0.9, 0.2, 0.5]))
    assert other.endswith("the one that attends most sharply is H1, another head.")


def test_the_model_view_says_when_its_maps_are_pooled():
    assert say.grid_caption(6, 12, 16, 16).endswith("section 2 draws one head large.")
    assert say.grid_caption(6, 12, 17, 16).endswith(
        " With 17 tokens each small map is average-pooled to at most 16 × 16 cells.")
    # the row labels run to the model's number of layers and are linked where first named
    assert say.grid_caption(4, 8, 16, 16).startswith(
        f"Rows {term_link('head-label', 'L1–L4')} are layers, columns H1–H8 heads;")


def test_the_block_s_introduction_counts_the_layers_and_links_layer_norm():
    intro = say.block_intro(6)
    assert "one of the model's 6 encoder blocks" in intro
    assert term_link("layer-norm", "LayerNorm") in intro
    assert say.SINK_TEXT.startswith(f"An {term_link('attention-sink', 'attention sink')} is ")


def test_a_long_text_is_said_to_be_cut_to_the_page_s_length():
    assert say.truncation_text(401, 64) == (
        "With [CLS] and [SEP] the text makes 401 WordPieces; this page reads the first 63 "
        "([CLS] included) and [SEP], 64 in all. sentence-transformers reads up to 256.")


def test_the_block_and_its_sizes_are_said_from_the_numbers():
    cfg = SimpleNamespace(n_layers=6, n_heads=12, d_k=32, d_model=384, d_ff=1536)
    block = say.block_text(cfg, 12)
    assert "| attention | 12 heads: softmax(Q Kᵀ / √32) V each | (12, 12, 32) |" in block
    assert "The last 5 rows repeat in each of the 6 layers." in block
    share = say.update_share_text(np.array([1.0, 3.0]), np.array([3.0, 1.0]))
    assert "per token, L1 75%, L2 25%." in share  # 3 / (1 + 3), 1 / (3 + 1)
    notice = say.stream_notice(["embeddings", "L1 attn", "L1 FFN"], np.array([9.3, 10.04, 11.26]))
    assert "stays between 9.3 and 11.3 across all 3 steps." in notice
    assert say.scale_notice(32) == "d_k = 32 here, so scores are divided by √32 ≈ 5.66."


def test_the_practice_answers_come_from_the_model_s_sizes():
    cfg = SimpleNamespace(n_layers=6, n_heads=12, d_k=32, d_model=384)
    scale, maps, _ = say.practice(cfg)
    assert scale["value"] == pytest.approx(5.656854, abs=1e-6)  # √32 = 4√2
    assert scale["a"] == "√d_k = √(384 / 12) = √32 ≈ 5.6569."
    assert maps["value"] == 72 and maps["a"] == "6 layers × 12 heads = 72."


def test_the_head_shares_count_the_previous_token_over_the_rows_that_have_one():
    # [CLS] a b [SEP]; every row puts 0.8 on the token before (row 0: all on [CLS] itself).
    tokens = ["[CLS]", "a", "b", "[SEP]"]
    w = np.array([[1.0, 0.0, 0.0, 0.0],
                  [0.8, 0.2, 0.0, 0.0],
                  [0.1, 0.8, 0.1, 0.0],
                  [0.1, 0.0, 0.8, 0.1]])
    text = say.head_shares_text(1, 3, w, tokens)
    # on [CLS] + [SEP]: (1 + 0.8 + 0.1 + 0.2) / 4 = 0.525, 53% (a half rounds up); before:
    # (0.8 · 3) / 3 rows = 0.8, not 2.4 / 4 = 0.6 with [CLS]'s row counted as 0
    assert text.startswith("Layer 1, head 3 puts 53% of its attention on [CLS] and [SEP] "
                           "(averaged over all 4 rows), 80% on the token just before "
                           "(averaged over the 3 rows that have one); the two shares overlap "
                           "where the token before is [CLS] (“a”'s row: its weight on [CLS] "
                           "counts in both).")
    # [CLS] [SEP] alone: [SEP]'s row is the one whose token before is [CLS]
    assert "(“[SEP]”'s row" in say.head_shares_text(2, 1, np.eye(2)[::-1], ["[CLS]", "[SEP]"])
