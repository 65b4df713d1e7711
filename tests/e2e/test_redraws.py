"""A control redraws what depends on it, and only that (issue 16, item 7).

Each figure's node is tagged in the browser before a control moves; after the rerun a
figure that was drawn again is a new node (Streamlit mounts a changed figure anew), and
one left alone is the same node, still tagged. Lesson 2 is the case: its d_k, samples
and σ² are read by sections 1 to 3 only, so they rerun those sections (a fragment) and
leave section 4 alone; a new seed also changes section 4's example, so it reruns the
page.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page
from test_pages import _assert_no_error, _open, _runs_finished, _wait_idle

pytestmark = pytest.mark.e2e

# The figures of lesson 2, by the keys the page gives them.
SECTIONS_1_TO_3 = ["sc_fig_histograms", "sc_fig_variance", "sc_fig_saturation", "sc_fig_curves"]
SECTION_4 = ["sc_fig_temperature_weights", "sc_fig_temperature"]

# Tags each keyed figure's Plotly node; returns the keys found.
_TAG_JS = """
(keys) => keys.filter((key) => {
  const plot = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  if (plot) plot.__redrawTag = true;
  return Boolean(plot);
})
"""
# For each key: [still the tagged node, the first trace's y values].
_STATE_JS = """
(keys) => Object.fromEntries(keys.map((key) => {
  const plot = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  return [key, [Boolean(plot && plot.__redrawTag), plot ? Array.from(plot.data[0].y) : null]];
}))
"""


def _tagged(page: Page) -> dict:
    found = page.evaluate(_TAG_JS, SECTIONS_1_TO_3 + SECTION_4)
    assert found == SECTIONS_1_TO_3 + SECTION_4, f"figures found by key: {found}"
    return page.evaluate(_STATE_JS, found)


def test_sigma_redraws_sections_1_to_3_and_leaves_section_4(page: Page, streamlit_server):
    mark = streamlit_server.log_mark()
    _open(page, streamlit_server.url, "Scaling")
    before = _tagged(page)
    thumb = page.locator('[data-testid="stSlider"]:has-text("Component variance") '
                         'input[type="range"]')
    thumb.focus()
    runs = _runs_finished(page)
    page.keyboard.press("ArrowRight")  # σ² 1.0 -> 1.25
    _wait_idle(page, runs)
    _assert_no_error(page, "Scaling, σ² moved", streamlit_server, mark)
    after = page.evaluate(_STATE_JS, SECTIONS_1_TO_3 + SECTION_4)
    for key in SECTIONS_1_TO_3:  # every one of them shows σ²'s numbers: drawn anew
        assert not after[key][0], f"{key} was not drawn again after σ² moved"
        assert after[key][1] != before[key][1], f"{key} shows the same numbers at σ² = 1.25"
    for key in SECTION_4:  # its example does not depend on σ²: left as it was
        assert after[key][0], f"{key} was drawn again, though σ² does not change it"


def test_new_seed_redraws_section_4_too(page: Page, streamlit_server):
    mark = streamlit_server.log_mark()
    _open(page, streamlit_server.url, "Scaling")
    before = _tagged(page)
    seed = page.locator('[data-testid="stNumberInput"]:has-text("Seed") input')
    runs = _runs_finished(page)
    seed.fill("7")
    seed.press("Enter")
    _wait_idle(page, runs)
    _assert_no_error(page, "Scaling, seed 7", streamlit_server, mark)
    after = page.evaluate(_STATE_JS, SECTIONS_1_TO_3 + SECTION_4)
    # Section 4's example is drawn from the seed (seed + 2): its weights change with it.
    key = "sc_fig_temperature_weights"
    assert not after[key][0] and after[key][1] != before[key][1], (
        "section 4 still shows the example of seed 0 after the seed became 7")
