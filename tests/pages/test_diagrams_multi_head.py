"""Lesson 4's diagrams: the layer (X → Q, K, V → H lanes of d_k = d_model / H → each
head's attention → concatenation → × W_O → output) and its cross-attention (queries from
the target, keys and values from the source), the head the page shows highlighted.

Expected shapes are worked out from the settings: d_k = d_model / H, the weights T × T
(or target × source), the concatenation T × H·d_k = T × d_model.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import open_page, page_at_defaults, page_in_presenter_mode
from diagram_checks import diagram_in, elements, text_alternative
from presenter_order import above_first_figure, not_allowed_above

from attncore.multihead import head_counts
from pages.ui.figures.diagrams import overlapping_texts, texts_outside_boxes
from pages.ui.figures.models import MAX_LANES, head_lanes, multi_head_flow

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "4_Multi_head.py")
D_MODELS = [8, 16, 32, 64, 128]  # the page's d_model slider
MAX_TOKENS = 24  # the page's longest sentence (and source, and target)


def lanes(d) -> list[str]:
    """The lanes drawn: the text of each box that starts one ("head n")."""
    return [b.lines[0] for b in d.boxes if b.lines and b.lines[0].startswith("head ")]


def texts(d) -> list[str]:
    return [t for t, _ in d.text_boxes()]


# ---- the layer: numbers follow the inputs ---------------------------------------------

def test_at_h_8_eight_lanes_of_d_k_d_model_over_8():
    # d_model 32, H 8: d_k = 32 / 8 = 4; 11 tokens: Qʰ, Kʰ, Vʰ 11 × 4, weights 11 × 11.
    d = multi_head_flow(11, 32, 8, 14)
    assert lanes(d) == [f"head {n}" for n in range(1, 9)]
    said = d.describe()
    assert "split into 8 heads of d_k = 32 / 8 = 4, drawn as 8 lanes" in said
    assert "Qʰ 11 × 4, Kʰ and Vʰ 11 × 4, weights softmax(QʰKʰᵀ/√4) 11 × 11" in said
    assert "concatenated, 11 × 8·4 = 11 × 32, times W_O, 32 × 32" in said
    assert {"(11 × 4) each", "(11 × 11)", "(11 × 8·4)", "(32 × 32)", "(11 × 32)",
            "8 heads × d_k 4", "= d_model 32"} <= set(texts(d))
    assert d.title.startswith("Self-attention with 8 heads")


@pytest.mark.parametrize("d_model, H", [(8, 1), (32, 4), (64, 8), (128, 2)])
def test_as_many_lanes_as_heads_up_to_the_readable_count(d_model, H):
    d = multi_head_flow(5, d_model, H, 14)
    assert len(lanes(d)) == H
    assert f"d_k = {d_model} / {H} = {d_model // H}" in d.describe()


@pytest.mark.parametrize("H, head", [(16, None), (16, 9), (128, 0), (128, 59), (128, 127),
                                     (64, 4)])
def test_beyond_the_readable_count_the_middle_heads_are_one_row_each_run(H, head):
    rows = head_lanes(H, head)
    assert len(rows) <= MAX_LANES
    drawn = [r for r in rows if isinstance(r, int)]
    runs = [r for r in rows if isinstance(r, tuple)]
    # every head once, in order: drawn, or in a run of "…"
    covered = sorted(drawn + [h for a, b in runs for h in range(a, b + 1)])
    assert covered == list(range(H))
    assert {0, H - 1} <= set(drawn) and (head is None or head in drawn)
    d = multi_head_flow(7, 128, H, 20, head=head)
    assert lanes(d) == [f"head {h + 1}" for h in drawn]
    for a, b in runs:
        assert f"… heads {a + 1} to {b + 1} …" in texts(d)
        assert f"heads {a + 1} to {b + 1}: {b - a + 1} lanes drawn as “…”" in d.describe()
    assert f"{len(drawn)} of them drawn as lanes and the rest as “…”" in d.describe()


def test_the_chosen_head_is_highlighted_and_no_other():
    d = multi_head_flow(6, 32, 4, 14, head=2)
    highlighted = [b.lines[0] for b in d.boxes if b.highlight]
    assert highlighted == ["head 3", "softmax", "· Vʰ"]  # its whole lane
    assert "head 3 (highlighted)" in d.describe()
    with pytest.raises(ValueError, match="head 5 is not one of the 4 heads"):
        multi_head_flow(6, 32, 4, 14, head=4)
    with pytest.raises(ValueError, match="d_model must split into H heads"):
        multi_head_flow(6, 32, 3, 14)


def test_the_causal_mask_is_said_and_drawn():
    d = multi_head_flow(6, 32, 4, 14, causal=True)
    assert "causal mask on" in texts(d)
    assert "softmax(QʰKʰᵀ/√8 + causal mask)" in d.describe()


def test_cross_attention_takes_queries_from_the_target_and_keys_from_the_source():
    # Target 5 tokens, source 7, d_model 128, H 4: d_k 32, each head's map 5 × 7.
    d = multi_head_flow(5, 128, 4, 14, Tk=7)
    said = d.describe()
    assert said.startswith("Cross-attention with 4 heads: queries from the target, keys and "
                           "values from the source")
    assert "The target's 5 tokens × d_model 128; its queries Q = X·W_Q, 5 × 128" in said
    assert ("the source's 7 tokens × d_model 128; its keys and values K = X·W_K, "
            "V = X·W_V, 7 × 128 each") in said
    assert "Qʰ 5 × 32, Kʰ and Vʰ 7 × 32, weights softmax(QʰKʰᵀ/√32) 5 × 7" in said
    assert {"target", "source", "(5 × 128)", "(7 × 128)", "Qʰ: 5 × 32", "Kʰ, Vʰ: 7 × 32",
            "(5 × 7)"} <= set(texts(d))
    assert "the output, 5 × 128" in said  # one row per target token


SETTINGS = [(d_model, H) for d_model in D_MODELS for H in head_counts(d_model)]


@pytest.mark.parametrize("font", [14, 20])
@pytest.mark.parametrize("d_model, H", SETTINGS)
def test_nothing_overlaps_at_any_setting_the_page_allows(d_model, H, font):
    for T, Tk in ((1, None), (MAX_TOKENS, None), (1, MAX_TOKENS), (MAX_TOKENS, 1),
                  (MAX_TOKENS, MAX_TOKENS)):
        for head in {0, H // 2, H - 1}:
            for causal in (False, True):
                d = multi_head_flow(T, d_model, H, font, head=head, causal=causal, Tk=Tk)
                assert overlapping_texts(d) == [], (T, Tk, head)
                assert texts_outside_boxes(d) == [], (T, Tk, head)
                assert d.size()[0] <= 55


# ---- on the page -----------------------------------------------------------------------

def diagram(at, key: str) -> str:
    """The text alternative of the diagram in ``diagram_<key>``."""
    return text_alternative(diagram_in(at, key))


@pytest.mark.parametrize("mode", ["normal", "presenter"])
def test_the_page_draws_the_layer_and_its_cross_attention(mode):
    at = page_at_defaults(PAGE) if mode == "normal" else page_in_presenter_mode(PAGE)
    assert not at.exception
    layer = diagram(at, "mha_diagram_heads")
    # The default sentence has 11 words; d_model 32, H 4: d_k 8.
    assert "X, 11 tokens × d_model 32" in layer and "drawn as 4 lanes" in layer
    assert "head 1 (highlighted)" in layer  # the head section 1 (or 2) shows
    cross = diagram(at, "mha_diagram_cross")
    assert "queries from the target" in cross and "head 1 (highlighted)" in cross


def test_on_a_projector_the_layer_is_the_first_figure_under_the_controls():
    at = page_in_presenter_mode(PAGE)
    assert not_allowed_above(at) == []
    first = elements(at.main)[len(above_first_figure(at))]
    assert first.type == "markdown" and "Self-attention with 4 heads" in first.value


def test_the_head_count_redraws_the_lanes():
    at = open_page(PAGE)
    at.selectbox(key="mha_heads").set_value(8).run()
    layer = diagram(at, "mha_diagram_heads")
    assert "split into 8 heads of d_k = 32 / 8 = 4, drawn as 8 lanes" in layer
    at.select_slider(key="mha_dmodel").set_value(128).run()
    at.selectbox(key="mha_heads").set_value(128).run()
    layer = diagram(at, "mha_diagram_heads")
    assert "split into 128 heads of d_k = 128 / 128 = 1, 5 of them drawn" in layer
    assert "heads 5 to 127: 123 lanes drawn as “…”" in layer


@pytest.mark.parametrize("presenter", ["false", "true"])
def test_the_head_picked_is_highlighted(presenter):
    at = open_page(PAGE, presenter=presenter)
    at.selectbox(key="mha_head").set_value(2).run()
    assert not at.exception
    assert "head 2; head 3 (highlighted); head 4" in diagram(at, "mha_diagram_heads")
    at.selectbox(key="mha_cross_head").set_value(3).run()
    assert "head 3; head 4 (highlighted)" in diagram(at, "mha_diagram_cross")


def test_a_linked_head_is_highlighted_on_the_first_run_on_a_projector():
    at = open_page(PAGE, presenter="true", mha_head="head 3")
    assert "head 3 (highlighted)" in diagram(at, "mha_diagram_heads")


def test_the_cross_diagram_follows_the_two_sentences():
    at = open_page(PAGE, mha_source="one two three four five", mha_target="un deux")
    cross = diagram(at, "mha_diagram_cross")
    assert "The target's 2 tokens" in cross and "the source's 5 tokens" in cross
    assert "weights softmax(QʰKʰᵀ/√32) 2 × 5" in cross  # H 4 of d_model 128: d_k 32
