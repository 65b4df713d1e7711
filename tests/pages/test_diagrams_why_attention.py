"""Lesson 0's diagram: the fixed-context and the attention model on the example string,
drawn from the page's own numbers (the alignment's row at the chosen output step), at the
top of the page, following the step slider even when its section reruns alone."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_no_exception, open_page
from diagram_checks import (
    font_size,
    in_page_order,
    is_svg,
    one_diagram,
    rerun_alone,
    weighted_widths,
)

from attncore.results_cache import kept
from attncore.train import bottleneck as bn
from pages.ui.figures.diagrams import overlapping_texts, texts_outside_boxes
from pages.ui.figures.models import bottleneck_models

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "0_Why_attention.py")
LETTERS = "ABCDEFGHIJKL"


def default_result() -> bn.BottleneckResult:
    """The page's default result, from the disk cache the page reads (or trained the same
    way if no test has yet)."""
    config = bn.BottleneckConfig()
    return kept("lesson0-bottleneck", asdict(config), bn,
                lambda: bn.train_bottleneck(config))


def drawn(at) -> str:
    """The diagram of the two models on the page (exactly one)."""
    return one_diagram(at, "two models on the example string")


# ---- the pure function ------------------------------------------------------------------

def test_the_weights_are_the_arrow_widths_and_the_text_alternative_says_them():
    alpha = np.array([0.05, 0.1, 0.7, 0.15])
    d = bottleneck_models(list("ABCD"), 3, alpha, 14)
    # width = 0.75 px + 7 px × α (diagrams.py): 0.05 -> 1.10, 0.7 -> 5.65
    assert weighted_widths(d.svg()) == pytest.approx([1.10, 1.45, 5.65, 1.80])
    said = d.describe()
    assert "step 3 reads every state, with weights h₁ 0.05, h₂ 0.10, h₃ 0.70, h₄ 0.15" in said
    assert "the decoder's steps s₁ to s₄ all read h₄ alone" in said
    assert "the 4 letters A B C D" in said


def test_the_chosen_step_is_highlighted_and_every_fixed_step_reads_the_last_state():
    d = bottleneck_models(list("ABCDE"), 2, None, 14)
    assert [b.lines[0] for b in d.boxes if b.highlight] == ["s₂"]
    h5 = [b for b in d.boxes if b.lines == ("h₅",)][0]  # the fixed model's h₅ comes first
    start = (h5.centre[0], h5.y + h5.h)
    assert sum(a.start == start for a in d.arrows) == 5  # one arrow into each of s₁ … s₅


def test_before_training_the_arrows_are_dashed_and_carry_no_weight():
    d = bottleneck_models(list("ABCDEFG"), 4, None, 20)
    assert weighted_widths(d.svg()) == []
    assert sum(a.dashed for a in d.arrows) == 7
    assert "not trained yet" in d.describe()


@pytest.mark.parametrize("font", [14, 20])
def test_no_text_overlaps_at_any_length_the_lesson_trains_on(font):
    for n in range(1, bn.MAX_LENGTH + 1):
        letters = [LETTERS[i % len(LETTERS)] for i in range(n)]
        for weights in (None, np.full(n, 1 / n)):
            for step in {1, n}:
                d = bottleneck_models(letters, step, weights, font)
                assert overlapping_texts(d) == [], (n, step)
                assert texts_outside_boxes(d) == [], (n, step)
                width, height = d.size()
                assert width <= 55 and height <= 24, (n, width, height)


def test_a_step_or_a_weight_count_that_does_not_fit_is_refused():
    with pytest.raises(ValueError, match="step must be in 1..3"):
        bottleneck_models(list("ABC"), 4, None, 14)
    with pytest.raises(ValueError, match="3 letters need 3 weights"):
        bottleneck_models(list("ABC"), 1, [0.5, 0.5], 14)


def test_the_example_string_is_known_before_training_and_is_the_one_trained():
    result = default_result()
    np.testing.assert_array_equal(bn.example_string(result.config.seed),
                                  result.example["attention"].source[0])


# ---- on the page ---------------------------------------------------------------------------

def test_the_page_draws_the_models_with_the_alignments_row_at_the_chosen_step():
    at = open_page(PAGE)
    assert_no_exception(at)
    weights = default_result().example["attention"].weights[0]  # the alignment figure's
    letters = " ".join(LETTERS[i] for i in default_result().example["attention"].source[0])
    markup = drawn(at)
    assert weighted_widths(markup) == pytest.approx(0.75 + 7 * weights[2], abs=0.01)  # t = 3
    assert f"the 12 letters {letters} into states" in markup
    at.slider(key="why_step").set_value(7).run()
    assert_no_exception(at, "step 7")
    assert weighted_widths(drawn(at)) == pytest.approx(0.75 + 7 * weights[6], abs=0.01)
    assert "Attention: step 7 reads every state" in drawn(at)


def kinds(at) -> list[str]:
    """The page's blocks and elements in order, each as "svg", "chart", "expander" or its
    type."""
    names = {"plotly_chart": "chart", "expandable": "expander"}
    return ["svg" if is_svg(e) else names.get(e.type, e.type) for e in in_page_order(at.main)]


def test_the_models_are_drawn_before_the_first_chart():
    order = kinds(open_page(PAGE))
    assert "svg" in order and order.index("svg") < order.index("chart")


def test_the_diagram_follows_the_slider_when_its_section_reruns_alone(monkeypatch):
    """In the browser, moving the step slider reruns its section alone (a fragment), not
    the page; AppTest reruns the whole script, so the run is made a fragment's run here,
    as the browser asks for it."""
    at = open_page(PAGE)
    before = drawn(at)
    rerun_alone(at, "why_one_step", monkeypatch)
    at.slider(key="why_step").set_value(9).run()
    assert_no_exception(at, "the step's section alone")
    # Only the section ran: the page's first section is not in this run's output...
    assert not [h for h in at.header if h.value.startswith("1 ·")]
    # ...and the models at the top were drawn again, at step 9.
    weights = default_result().example["attention"].weights[0]
    assert drawn(at) != before and "Attention: step 9 reads every state" in drawn(at)
    assert weighted_widths(drawn(at)) == pytest.approx(0.75 + 7 * weights[8], abs=0.01)


def test_presenter_mode_draws_the_models_in_place_of_the_introduction():
    at = open_page(PAGE, presenter="true")
    assert_no_exception(at, "presenter mode")
    assert not any("Before Transformers, translation" in m.value for m in at.markdown)
    markup = drawn(at)
    assert font_size(markup) == "20"  # the projector's font
    # After the heading and the goal, the models come first: before the settings.
    order = kinds(at)
    assert order.index("svg") < order.index("expander") < order.index("chart")


def test_before_training_the_models_are_drawn_untrained_at_the_links_step():
    at = open_page(PAGE, why_width="8", why_steps="100", why_shortest="1", why_longest="4",
                   why_step="5")
    assert_no_exception(at, "untrained settings")
    assert any("press the button to train" in c.value for c in at.caption)
    markup = drawn(at)
    assert weighted_widths(markup) == []
    assert "Attention: step 5 reads every state (not trained yet" in markup
    letters = " ".join(LETTERS[i] for i in bn.example_string(0))
    assert f"the 12 letters {letters} into states" in markup
    at.button(key="why_train").click().run()
    assert_no_exception(at, "trained at width 8")
    assert len(weighted_widths(drawn(at))) == 12
