"""A control redraws what depends on it, and only that.

Each figure's node is tagged in the browser before a control moves; after the rerun a
figure that was drawn again is a new node (Streamlit mounts a changed figure anew), and
one left alone is the same node, still tagged. Lesson 2 is the case: its d_k, samples
and σ² are read by sections 1 to 3 only, so they rerun those sections (a fragment) and
leave section 4 alone; a new seed also changes section 4's example, so it reruns the
page.

Lessons 3, 4, 5 and 7 rerun their lesson body alone (a fragment) when its controls
move, and leave the closing notes and the download buttons as drawn: the files are
downloaded after such a rerun and must hold what the body shows, and a change of what
the buttons offer (other heads, or nothing) must redraw them.
"""

from __future__ import annotations

import numpy as np
import pytest
from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from test_exports import _arr, _get_csv, _get_json, _options
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


def test_sigma_redraws_sections_1_to_3_and_a_new_seed_section_4_too(
        page: Page, streamlit_server):
    # One page load for both steps (the browser tests run one after the other).
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

    seed = page.locator('[data-testid="stNumberInput"]:has-text("Seed") input')
    runs = _runs_finished(page)
    seed.fill("7")
    seed.press("Enter")
    _wait_idle(page, runs)
    _assert_no_error(page, "Scaling, seed 7", streamlit_server, mark)
    now = page.evaluate(_STATE_JS, SECTIONS_1_TO_3 + SECTION_4)
    # Section 4's example is drawn from the seed (seed + 2): its weights change with it.
    key = "sc_fig_temperature_weights"
    assert not now[key][0] and now[key][1] != after[key][1], (
        "section 4 still shows the example of seed 0 after the seed became 7")


# Lessons 3, 4, 5 and 7: the controls at the top rerun the lesson body only (a
# fragment); the closing notes and the download buttons below it stay as drawn, and the
# buttons read what the body shows when they are clicked. These tests download after
# such a rerun.

def _press(page: Page, label: str, key: str) -> None:
    """Move the slider labelled ``label`` one step with the keyboard and wait for calm."""
    thumb = page.locator(f'[data-testid="stSlider"]:has-text("{label}") input[type="range"]')
    thumb.focus()
    runs = _runs_finished(page)
    page.keyboard.press(key)
    _wait_idle(page, runs)


def _pick(page: Page, label: str, option: str) -> None:
    """Choose ``option`` in the select box labelled ``label`` with the mouse.

    The page is scrolled to the box first and the list opened again if it is not there:
    after a download at the bottom of the page, the scroll that brought the box into view
    closed its list as it opened (seen once in CI)."""
    box = page.get_by_role("combobox", name=label, exact=True)
    box.scroll_into_view_if_needed()
    choice = page.get_by_role("option", name=option, exact=True)
    for _ in range(3):
        box.click()
        try:
            choice.wait_for(state="visible", timeout=5_000)
            break
        except PlaywrightTimeoutError:
            page.keyboard.press("Escape")
    choice.click()


def test_downloads_follow_the_lesson_body_and_what_it_offers(page: Page, streamlit_server):
    # Lesson 4, one page load: d_model, then H, then an empty sentence.
    mark = streamlit_server.log_mark()
    _open(page, streamlit_server.url, "Multi_head")
    _press(page, "d_model", "ArrowRight")  # 32 -> 64; H stays 4
    _assert_no_error(page, "Multi-head, d_model moved", streamlit_server, mark)
    trace = _get_json(page, "mha")
    assert (trace["d_model"], trace["heads"], trace["d_k"]) == (64, 4, 16)
    assert _arr(trace["W_Q"]).shape == (64, 64)
    assert _arr(trace["weights"]).shape == (4, 11, 11)  # 11 tokens in the default sentence

    # A new H changes the matrices offered: the select box must offer the new heads.
    runs = _runs_finished(page)
    _pick(page, "Heads H", "8")
    _wait_idle(page, runs)
    _assert_no_error(page, "Multi-head, H = 8", streamlit_server, mark)
    assert "Head 8 weights" in _options(page)
    assert "Head 9 weights" not in _options(page)
    assert _get_json(page, "mha")["heads"] == 8

    # Nothing computed, nothing to download; the closing notes stay.
    sentence = page.get_by_label("Sentence", exact=True)
    runs = _runs_finished(page)
    sentence.fill("")
    sentence.press("Enter")
    _wait_idle(page, runs)
    _assert_no_error(page, "Multi-head, empty sentence", streamlit_server, mark)
    assert page.get_by_text("Type a sentence to see its attention heads.").is_visible()
    assert page.locator('[data-testid="stExpander"]:has-text("What to notice")').count() == 1
    assert page.locator('[data-testid="stDownloadButton"]').count() == 0

    _open(page, streamlit_server.url, "Positional_encoding")
    _press(page, "Positions", "ArrowRight")  # 64 -> 65 positions
    _assert_no_error(page, "Positional encodings, positions moved", streamlit_server, mark)
    table = _get_csv(page, "pe")  # "Sinusoidal table", the default choice
    assert table.values.shape == (65, 64) and table.rows[-1] == "64"
    # Its last row is PE(p = 64): sin(64 · 10000^(-2i/64)) and cos(...) for i = 0..31.
    omega = 10000.0 ** (-np.arange(0, 64, 2) / 64)
    np.testing.assert_allclose(table.values[-1, 0::2], np.sin(64 * omega), atol=1e-12)
    np.testing.assert_allclose(table.values[-1, 1::2], np.cos(64 * omega), atol=1e-12)
