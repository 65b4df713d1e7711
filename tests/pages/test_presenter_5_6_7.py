"""Presenter mode of lessons 5, 6 and 7: a figure comes right after the goal and the
controls, and secondary material (formulas, notes, tables, practice) is not shown first."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import open_page

PAGES = Path(__file__).resolve().parents[2] / "pages"
# What may stand above the first figure: the title, the goal, the controls and their
# layout, section headers, progress or warnings about the controls, and the slot ("empty")
# where pages.ui.layout tells the teacher about link settings it ignored.
BEFORE_FIGURE = {"title", "header", "flex_container", "column", "slider", "select_slider",
                 "text_input", "number_input", "button", "radio", "selectbox", "progress",
                 "warning", "vertical", "empty"}
CASES = {
    "5_Positional_encoding.py": {},
    "6_Scoring_and_seq2seq.py": {},
    "7_Cost.py": {"cost_max_n": "256", "cost_heads": "2", "cost_rounds": "3"},
}


def in_order(node) -> list:
    """Every element under ``node``, depth first, in the order they appear."""
    children = getattr(node, "children", None) or {}
    found = []
    for child in (children.values() if isinstance(children, dict) else children):
        found += [child, *in_order(child)]
    return found


def above_first_figure(at) -> list[str]:
    shown = []
    for element in in_order(at.main):
        if element.type == "plotly_chart":
            return shown
        value = str(getattr(element, "value", ""))
        if element.type == "markdown" and value.startswith("**Goal:**"):
            continue
        shown.append(element.type if element.type in BEFORE_FIGURE else
                     f"{element.type}: {value[:60]}")
    raise AssertionError("no figure on the page")


@pytest.mark.parametrize("page", sorted(CASES))
def test_presenter_mode_puts_a_figure_right_after_the_controls(page):
    at = open_page(PAGES / page, presenter="true", **CASES[page])
    extra = [kind for kind in above_first_figure(at) if kind not in BEFORE_FIGURE]
    assert extra == [], f"above the first figure in presenter mode: {extra}"
    # Secondary material is hidden: no practice questions and no downloads.
    assert not [s for s in at.subheader if s.value in ("Practice questions", "Download")]


@pytest.mark.parametrize("page", sorted(CASES))
def test_normal_mode_keeps_the_secondary_material(page):
    at = open_page(PAGES / page, **CASES[page])
    assert {"Practice questions", "Download"} <= {s.value for s in at.subheader}
