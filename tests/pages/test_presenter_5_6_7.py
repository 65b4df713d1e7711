"""Presenter mode of lessons 5, 6 and 7: a figure comes right after the goal and the
controls, and secondary material (formulas, notes, tables, practice) is not shown first."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import open_page
from presenter_order import not_allowed_above

PAGES = Path(__file__).resolve().parents[2] / "pages"
# What may stand above the first figure here: the title, the goal, the controls, section
# headers, progress or warnings about the controls, and the slot ("empty") where
# pages.ui.layout tells the teacher about link settings it ignored. Stricter than
# presenter_order.ALLOWED_ABOVE: no captions, notes or toggles either.
BEFORE_FIGURE = {"title", "header", "slider", "select_slider", "text_input", "number_input",
                 "button", "radio", "selectbox", "progress", "warning", "empty"}
CASES = {
    "5_Positional_encoding.py": {},
    "6_Scoring_and_seq2seq.py": {},
    "7_Cost.py": {"cost_max_n": "256", "cost_heads": "2", "cost_rounds": "3"},
}


@pytest.mark.parametrize("page", sorted(CASES))
def test_presenter_mode_puts_a_figure_right_after_the_controls(page):
    at = open_page(PAGES / page, presenter="true", **CASES[page])
    extra = not_allowed_above(at, BEFORE_FIGURE)
    assert extra == [], f"above the first figure in presenter mode: {extra}"
    # Secondary material is hidden: no practice questions and no downloads.
    assert not [s for s in at.subheader if s.value in ("Practice questions", "Download")]


@pytest.mark.parametrize("page", sorted(CASES))
def test_normal_mode_keeps_the_secondary_material(page):
    at = open_page(PAGES / page, **CASES[page])
    assert {"Practice questions", "Download"} <= {s.value for s in at.subheader}
