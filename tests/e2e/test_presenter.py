"""Presenter mode on a 1280 × 720 projector, for every page (home and every ``pages/*.py``,
so a new lesson is covered the day it lands): the sidebar is collapsed, no text a student
reads in the main area is smaller than 18 px, and a Plotly figure starts on the first
screen (its top within 720 px of the top of the page); and axe-core's WCAG 2.1 AA audit
finds nothing, nor the headings check (``axe_audit.py``).

How text is measured, and what is left out and why, is said in ``presenter_metrics.py``
(the same JavaScript serves this test and the hand tool there). One page load serves the
three checks; a failure names the page and every measurement, so one run says what each
page still needs.
"""

from __future__ import annotations

import pytest
from axe_audit import audit
from playwright.sync_api import Page
from presenter_metrics import MEASURE_JS, describe
from test_pages import PAGES, _assert_no_error, _open, _shot_name

pytestmark = pytest.mark.e2e

PROJECTOR = {"width": 1280, "height": 720}
MIN_TEXT_PX = 18
PAGE_PARAMS = [pytest.param(path, id=test_id) for test_id, path in PAGES]


@pytest.mark.parametrize("path", PAGE_PARAMS)
def test_presenter_mode_fits_a_projector(page: Page, streamlit_server, screenshot_dir, path):
    page.set_viewport_size(PROJECTOR)
    mark = streamlit_server.log_mark()
    _open(page, streamlit_server.url, path, "presenter=true")
    page.screenshot(path=screenshot_dir / f"presenter_fit_{_shot_name(path)}.png")
    _assert_no_error(page, f"/{path}?presenter=true", streamlit_server, mark)
    measured = page.evaluate(MEASURE_JS)
    print(f"/{path or ''}: {describe(measured)}")  # shown with -s: the per-page numbers

    problems = []
    if not measured["sidebar"]["collapsed"]:
        problems.append(f"the sidebar is open ({measured['sidebar']['width']} px wide)")
    if measured["count"] == 0:
        problems.append("no text found in the main area")
    small = [s for s in measured["smallest"] if s["size"] < MIN_TEXT_PX]
    if small:
        problems.append("text below 18 px: " + "; ".join(
            f"{s['size']} px in {s['path']} ({s['text']!r})" for s in small))
    problems += [f"axe-core or the headings:\n{found}" for found in audit(page)]
    top = measured["first_figure_top"]
    if top is None:
        problems.append("no Plotly figure on the page")
    elif top >= PROJECTOR["height"]:
        problems.append(f"the first figure starts at {top} px, below the first screen "
                        f"({PROJECTOR['height']} px)")
    assert not problems, (f"/{path} in presenter mode at 1280 × 720: " + "; ".join(problems)
                          + f"\n(measured: {describe(measured)})")
