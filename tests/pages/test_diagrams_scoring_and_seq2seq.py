"""Lesson 6's diagram: one decoding step (encoder states and the query → scores → α → c_t
→ the decoder's update or output layer), Bahdanau's or Luong's as the page selects, its
weights the alignment's row, and the local window of section 4 on the encoder states."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_no_exception, chart_array, open_page
from diagram_checks import font_size, one_diagram, rerun_alone, text_alternative, weighted_widths

from pages.ui.figures.diagrams import overlapping_texts, texts_outside_boxes
from pages.ui.figures.models import decoding_step

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "6_Scoring_and_seq2seq.py")
MAX_TOKENS = 20  # the page's cap on a sentence's tokens


def drawn(at) -> str:
    """The diagram of the decoding step on the page (exactly one)."""
    return one_diagram(at, "decoding step")


# ---- the pure function ------------------------------------------------------------------

def test_bahdanau_asks_with_the_previous_state_and_feeds_the_update():
    alpha = [0.1, 0.6, 0.2, 0.1]
    d = decoding_step(["I", "love", "black", "cats"], alpha, 3, "Bahdanau", "additive", 16, 14)
    # width = 0.75 px + 7 px × α: 0.1 -> 1.45, 0.6 -> 4.95, 0.2 -> 2.15
    assert weighted_widths(d.svg()) == pytest.approx([1.45, 4.95, 2.15, 1.45])
    highlighted = [b.lines for b in d.boxes if b.highlight]
    assert highlighted == [("query s₂", "previous"), ("GRU update", "s₃ ← s₂, y₂, c₃")]
    text = d.describe()
    assert "weights h₁ 0.10, h₂ 0.60, h₃ 0.20, h₄ 0.10" in text
    assert "additive scores of s₂ against each hⱼ" in text and "16 numbers" in text


def test_luong_asks_with_the_current_state_and_feeds_the_output_layer():
    d = decoding_step(["I", "love", "cats"], [0.2, 0.3, 0.5], 2, "Luong", "general", 16, 20)
    highlighted = [b.lines for b in d.boxes if b.highlight]
    assert highlighted == [("query s₂", "current"), ("h̃₂ = tanh(", "W_c [c₂; s₂])")]
    assert "general scores of s₂" in d.describe()
    assert "the attentional state h̃₂ from c₂ and s₂" in d.describe()


def test_bahdanaus_first_step_asks_with_the_mean_of_the_encoder_states():
    d = decoding_step(["a", "b"], [0.5, 0.5], 1, "Bahdanau", "additive", 16, 14)
    assert ("query s₀", "mean of hⱼ") in [b.lines for b in d.boxes]


def test_the_window_frames_exactly_the_states_inside_it():
    window = [False, True, True, True, False, False]
    d = decoding_step(list("abcdef"), np.full(6, 1 / 6), 2, "Luong", "dot", 16, 14,
                      window=window, centre=3.0, half=1, window_step=3)
    (frame,) = d.frames
    states = [b for b in d.boxes if re.fullmatch("h[₀-₉]+", b.lines[0])]  # h₁ … h₆
    inside = [frame.x <= b.x and b.x + b.w <= frame.x + frame.w for b in states]
    assert inside == window
    assert "window of section 4 (step 3, D = 1, p_t = 3.00): h₂ to h₄" in d.describe()


@pytest.mark.parametrize("font", [14, 20])
@pytest.mark.parametrize("model, score", [("Bahdanau", "additive"), ("Luong", "dot"),
                                          ("Luong", "general")])
def test_no_text_overlaps_at_any_sentence_length(font, model, score):
    for S in range(1, MAX_TOKENS + 1):
        tokens = ["state-of-the-art" if i % 2 else "I" for i in range(S)]
        for step in (1, MAX_TOKENS):
            d = decoding_step(tokens, np.full(S, 1 / S), step, model, score, 16, font,
                              window=[i < 2 for i in range(S)], centre=1.5, half=MAX_TOKENS,
                              window_step=MAX_TOKENS)
            assert overlapping_texts(d) == [], (S, step)
            assert texts_outside_boxes(d) == [], (S, step)
            assert d.size()[0] <= 55, (S, d.size())


def test_a_weight_count_that_does_not_fit_is_refused():
    with pytest.raises(ValueError, match="3 tokens need 3 weights"):
        decoding_step(["a", "b", "c"], [1.0], 1, "Luong", "dot", 16, 14)


# ---- on the page ---------------------------------------------------------------------------

def test_the_page_draws_section_2s_step_with_the_alignments_weights():
    at = open_page(PAGE)
    alpha = chart_array(at, "s2s_fig_alpha", "y")  # α_2 of Bahdanau, as the bars show it
    markup = drawn(at)
    assert weighted_widths(markup) == pytest.approx(0.75 + 7 * alpha, abs=0.01)
    assert "Bahdanau, step 2: the previous state s₁ asks" in markup
    at.radio(key="s2s_model").set_value("Luong").run()
    at.slider(key="s2s_align_step").set_value(3).run()
    assert_no_exception(at, "Luong, step 3")
    alpha = chart_array(at, "s2s_fig_alpha", "y")
    assert weighted_widths(drawn(at)) == pytest.approx(0.75 + 7 * alpha, abs=0.01)
    assert "Luong, step 3: the current state s₃ asks; c₃ feeds the output layer" in drawn(at)


def test_the_window_follows_section_4s_settings_from_the_link_and_the_sliders():
    # 7 source tokens, section 4 at step 4, D = 1, monotonic: p_t = 4 (from 1), so the
    # window holds positions 3 to 5.
    at = open_page(PAGE, s2s_source="the black cat sat on the mat", s2s_local_step="4",
                   s2s_window="1")
    assert "(step 4, D = 1, p_t = 4.00): h₃ to h₅" in text_alternative(drawn(at))
    at.slider(key="s2s_window").set_value(2).run()  # D = 2: positions 2 to 6
    assert_no_exception(at, "D = 2")
    assert "(step 4, D = 2, p_t = 4.00): h₂ to h₆" in text_alternative(drawn(at))


def test_the_window_follows_section_4_when_it_reruns_alone(monkeypatch):
    """In the browser a section-4 control reruns section 4 alone (a fragment); it then
    reruns the page, so that section 2's diagram shows its window. AppTest reruns the whole
    script, so the run is made a fragment's run here, as the browser asks for it."""
    at = open_page(PAGE, s2s_source="the black cat sat on the mat", s2s_local_step="4",
                   s2s_window="1")
    rerun_alone(at, "s2s_local", monkeypatch)
    at.slider(key="s2s_window").set_value(3).run()
    assert_no_exception(at, "section 4 alone")
    # D = 3 round p_t = 4: positions 1 to 7, the whole source
    assert "(step 4, D = 3, p_t = 4.00): h₁ to h₇" in text_alternative(drawn(at))


def test_presenter_mode_draws_the_step_at_the_projectors_font():
    at = open_page(PAGE, presenter="true")
    assert_no_exception(at, "presenter mode")
    assert font_size(drawn(at)) == "20"


def test_the_predictive_window_is_the_one_section_4_shows():
    at = open_page(PAGE, s2s_local_mode="predictive", s2s_window="1")
    title = next(m.value for m in at.markdown if "Predictive: p_t" in m.value)
    centre = float(re.search(r"p_t = (\d+\.\d\d), a source", title).group(1))
    assert f"(step 2, D = 1, p_t = {centre:.2f})" in text_alternative(drawn(at))
    # |j − p_t| ≤ 1 for j counted from 1: the window's ends, by hand from the centre
    first, last = max(1, int(np.ceil(centre - 1))), min(3, int(np.floor(centre + 1)))
    assert f"h{chr(0x2080 + first)} to h{chr(0x2080 + last)}" in text_alternative(drawn(at))
