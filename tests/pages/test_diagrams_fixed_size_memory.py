"""Lesson 13's diagram: n pairs written into one state of d_v × d_k numbers and the first
key read back, drawn from section 3's numbers (the overlaps k_t · k₁ as arrow widths, the
leak of the read), at the top of the page."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import assert_no_exception, open_page
from diagram_checks import font_size, one_diagram, weighted_widths
from presenter_order import not_allowed_above

from attncore.memory import leak
from pages.ui.figures.diagrams import overlapping_texts, texts_outside_boxes
from pages.ui.figures.models import fixed_state

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "13_Fixed_size_memory.py")
WIDTHS = (4, 8, 16, 32, 64)  # the page's choices of d_k
PAIRS = (1, 2, 4, 8, 16, 32, 64, 128, 256)  # and of n


def drawn(at) -> str:
    """The diagram of the state on the page (exactly one)."""
    return one_diagram(at, "written into one state")


# ---- the pure function ------------------------------------------------------------------

def test_the_numbers_follow_the_inputs():
    d = fixed_state(8, 8, 3, [1.0, -0.5, 0.25], 0.56, 14)
    said = d.describe()
    assert "one state S of d_v × d_k = 8 × 8 = 64 numbers" in said
    assert "3 pairs written in, each as v kᵀ; the other keys' overlaps with k₁ reach 0.50" in said
    assert "the leak 0.56 times as long as v₁" in said
    assert "softmax attention would keep all 3 pairs, 48 numbers" in said  # 3 · (8 + 8)
    # an arrow's width is 0.75 px + 7 px × |k_t · k₁| (diagrams.py)
    assert weighted_widths(d.svg()) == pytest.approx([7.75, 4.25, 2.5])
    assert [b.lines[0] for b in d.boxes if b.highlight] == ["state S"]


def test_more_than_four_pairs_draw_the_first_three_and_the_last():
    overlaps = np.linspace(1.0, 0.0, 64)
    d = fixed_state(16, 16, 64, overlaps, 2.2, 14)
    pairs = [b.lines[0] for b in d.boxes if b.lines[0].startswith("(k")]
    assert pairs == ["(k₁, v₁)", "(k₂, v₂)", "(k₃, v₃)", "(k₆₄, v₆₄)"]
    assert any(label.text == "⋮ 60 more" for label in d.labels)
    assert "16 × 16" in d.boxes[0].lines[1] and "64 pairs, 16 key directions" in d.boxes[0].lines


@pytest.mark.parametrize("font", [14, 20])
def test_no_text_overlaps_at_any_setting_the_page_allows(font):
    for d_k in WIDTHS:
        for n in PAIRS:
            read = leak.first_read(d_k, n)
            d = fixed_state(d_k, d_k, n, read.similarities, read.leak_ratio, font)
            assert overlapping_texts(d) == [], (d_k, n)
            assert texts_outside_boxes(d) == [], (d_k, n)
            width, height = d.size()
            assert width <= 55 and height <= 18, (d_k, n, width, height)


def test_overlaps_that_do_not_fit_are_refused():
    with pytest.raises(ValueError, match="3 pairs need 3 overlaps"):
        fixed_state(4, 4, 3, [1.0, 0.0], 0.0, 14)


# ---- on the page ------------------------------------------------------------------------

def test_the_page_draws_the_state_of_section_3_and_follows_its_controls():
    at = open_page(PAGE, timeout=120)
    markup = drawn(at)
    read = leak.first_read(16, 64)
    assert "one state S of d_v × d_k = 16 × 16 = 256 numbers" in markup
    assert f"the leak {read.leak_ratio:.2f} times as long as v₁" in markup
    assert weighted_widths(markup) == pytest.approx(
        [0.75 + 7 * abs(read.similarities[t]) for t in (0, 1, 2, 63)], abs=0.01)
    at.select_slider(key="mem_pairs").set_value(4).run()
    assert_no_exception(at, "n = 4")
    assert "4 pairs written in" in drawn(at) and "⋮" not in drawn(at)
    at.select_slider(key="mem_dk").set_value(64).run()
    assert "64 × 64 = 4,096 numbers" in drawn(at)


def test_in_presenter_mode_the_diagram_comes_right_after_the_goal():
    at = open_page(PAGE, timeout=120, presenter="true")
    assert font_size(drawn(at)) == "20"
    assert not_allowed_above(at) == []
