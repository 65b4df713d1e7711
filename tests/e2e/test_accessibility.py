"""Accessibility in a real browser (WCAG 2.1 AA): axe-core on every page, the headings in
order, and one lesson worked by keyboard alone.

axe-core (bundled by the PyPI package ``axe-playwright-python``: nothing is fetched) runs
its WCAG 2.0 and 2.1 level A and AA rules on home and every ``pages/*.py`` (found as
``test_pages.py`` finds them, so a new lesson is covered the day it lands), three times
on one page load: at the defaults, after the first slider of the main area has moved by
one step with the keyboard (a page without one, such as home, has no second audit), and
in presenter mode switched on from the sidebar. Any violation fails,
printed with its rule, impact, help text and every element it names. No rule is switched
off: ``RULES_OFF`` would say why one cannot apply.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page
from test_classroom import Move, _move
from test_pages import PAGES, _assert_no_error, _open, _runs_finished, _shot_name, _wait_idle

pytestmark = pytest.mark.e2e

PROJECTOR = {"width": 1280, "height": 720}
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
# Rule id -> why it cannot apply here. Empty: every rule of the four tags runs.
RULES_OFF: dict[str, str] = {}
AXE_OPTIONS = {
    "runOnly": {"type": "tag", "values": WCAG_TAGS},
    "resultTypes": ["violations"],
    "rules": {rule: {"enabled": False} for rule in RULES_OFF},
}
PRESENTER_ON = Move("switch", "Presenter mode", "click", "presenter", "true")
PAGE_PARAMS = [pytest.param(path, id=test_id) for test_id, path in PAGES]

# The headings of the main area in document order, as (level, text): hidden ones too (a
# closed expander's), since a screen reader meets them once it is opened.
_HEADINGS_JS = """
() => [...document.querySelectorAll(
  '[data-testid="stMain"] :is(h1, h2, h3, h4, h5, h6)')].map(
  (h) => [Number(h.tagName[1]), h.textContent.trim().slice(0, 60)])
"""


def axe_violations(page: Page) -> list[str]:
    """axe-core's violations on the page as drawn, one readable block per rule."""
    found = Axe().run(page, options=AXE_OPTIONS).response["violations"]
    report = []
    for rule in found:
        nodes = []
        for node in rule["nodes"]:
            checks = node.get("any", []) + node.get("all", []) + node.get("none", [])
            why = "; ".join(c["message"] for c in checks)
            nodes.append(f"    {' '.join(map(str, node['target']))}\n"
                         f"      {node['html'][:160]}\n      {why[:300]}")
        report.append(f"  {rule['id']} ({rule['impact']}): {rule['help']} "
                      f"[{len(rule['nodes'])} element(s)]\n" + "\n".join(nodes))
    return report


def heading_problems(page: Page) -> list[str]:
    """One h1, and no heading more than one level below the one before it."""
    headings = page.evaluate(_HEADINGS_JS)
    problems = []
    ones = [text for level, text in headings if level == 1]
    if len(ones) != 1:
        problems.append(f"{len(ones)} h1 headings: {ones}")
    for (before, _), (level, text) in zip(headings, headings[1:], strict=False):
        if level > before + 1:
            problems.append(f"h{before} then h{level} ({text!r}): a level skipped")
    return problems


def move_first_slider(page: Page) -> str | None:
    """Move the first enabled slider of the main area one step (towards its other end when
    it is at its top) with the keyboard; wait for the rerun. Returns what moved, or None
    when the page has no slider."""
    sliders = page.locator('[data-testid="stMain"] [data-testid="stSlider"] '
                           'input[type="range"]:not([disabled])')
    if not sliders.count():
        return None
    thumb = sliders.first
    at_top = thumb.evaluate("(e) => Number(e.value) >= Number(e.max)")
    key = "ArrowLeft" if at_top else "ArrowRight"
    before = _runs_finished(page)
    thumb.scroll_into_view_if_needed()
    thumb.focus()
    page.keyboard.press(key)
    _wait_idle(page, before)
    return f"slider {thumb.get_attribute('aria-label')!r} ({key})"


@pytest.mark.parametrize("path", PAGE_PARAMS)
def test_axe_finds_nothing_at_defaults_after_a_move_and_in_presenter_mode(
        page: Page, streamlit_server, screenshot_dir, path: str):
    page.set_viewport_size(PROJECTOR)
    mark = streamlit_server.log_mark()
    _open(page, streamlit_server.url, path)
    _assert_no_error(page, f"/{path}", streamlit_server, mark)
    failures = []

    def audit(when: str) -> None:
        report = axe_violations(page) + [f"  headings: {p}" for p in heading_problems(page)]
        if report:
            failures.append(f"/{path} {when}:\n" + "\n".join(report))

    audit("at its defaults")
    moved = move_first_slider(page)
    if moved:
        _assert_no_error(page, f"/{path} after moving {moved}", streamlit_server, mark)
        audit(f"after moving {moved}")
    _move(page, PRESENTER_ON)
    _assert_no_error(page, f"/{path} in presenter mode", streamlit_server, mark)
    page.screenshot(path=screenshot_dir / f"a11y_presenter_{_shot_name(path)}.png")
    audit("in presenter mode")
    assert not failures, "\n".join(failures)



# ---- one lesson by keyboard alone ------------------------------------------------------

# The focused element: what it is and what it is called. A slider's focus is on a hidden
# range input inside its thumb; a select box's on its combobox input.
_FOCUSED_JS = """
() => {
  const e = document.activeElement;
  if (!e || e === document.body) return null;
  return {tag: e.tagName.toLowerCase(), type: e.getAttribute("type"),
          role: e.getAttribute("role"), label: e.getAttribute("aria-label"),
          text: (e.innerText || "").trim().slice(0, 60)};
}
"""
TAB_LIMIT = 150  # Tab presses to reach a control: the sidebar's links come first


def tab_to(page: Page, wanted, what: str) -> dict:
    """Press Tab until the focused element is ``wanted`` (a test of ``_FOCUSED_JS``'s
    dict); return it. Fails naming what focus went through."""
    seen = []
    for _ in range(TAB_LIMIT):
        page.keyboard.press("Tab")
        focused = page.evaluate(_FOCUSED_JS)
        if focused and wanted(focused):
            return focused
        seen.append(focused and (focused["label"] or focused["text"] or focused["tag"]))
    pytest.fail(f"{TAB_LIMIT} presses of Tab never reached {what}; focus went through "
                f"{seen[:60]}")


def assert_focus_visible(page: Page, widget, what: str) -> None:
    """The focused control looks different from the same control unfocused: its picture
    with the focus, then after Shift+Tab has moved the focus away (Tab brings it back)."""
    focused = widget.screenshot()
    page.keyboard.press("Shift+Tab")
    page.wait_for_timeout(200)  # a focus ring's transition
    unfocused = widget.screenshot()
    page.keyboard.press("Tab")
    page.wait_for_timeout(200)
    assert focused != unfocused, f"{what}: the focus is not visible (same picture with and "\
                                 "without it)"


def _link(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def _main_text(page: Page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def test_a_lesson_by_keyboard_alone(page: Page, streamlit_server, screenshot_dir):
    """Lesson 1 with the keyboard only, from the top of the page: Tab to the Example select
    box, open it with an arrow key and choose the next example with Enter; Tab on (through
    the sidebar and the editable tables: no trap) to the temperature slider and move it with
    an arrow key; Tab to the CSV button and press it with Enter. Each change reruns the page
    and shows, and the focused control always looks focused."""
    page.set_viewport_size(PROJECTOR)
    mark = streamlit_server.log_mark()
    _open(page, streamlit_server.url, "Worked_example")

    # A select box: the next example, chosen with Enter.
    tab_to(page, lambda f: f["role"] == "combobox" and f["label"] == "Example",
           "the Example select box")
    field = page.get_by_role("combobox", name="Example", exact=True)
    assert_focus_visible(page, page.locator('[data-testid="stSelectbox"]').filter(has=field),
                         "the Example select box")
    shown = field.input_value()
    before = _runs_finished(page)
    page.keyboard.press("ArrowDown")  # opens the list on the chosen option
    page.get_by_role("listbox").wait_for()
    page.keyboard.press("ArrowDown")  # the next option
    page.keyboard.press("Enter")
    _wait_idle(page, before)
    chosen = field.input_value()
    assert chosen != shown, f"the select box still shows {shown!r}"
    assert _link(page).get("we_preset"), f"the link does not hold the example: {page.url}"
    assert f"{chosen}:" in _main_text(page) or chosen in _main_text(page)

    # A slider: the softmax temperature, 1.00 -> 1.05 with ArrowRight.
    tab_to(page, lambda f: f["type"] == "range" and f["label"] == "Softmax temperature τ",
           "the temperature slider")
    slider = page.locator('[data-testid="stSlider"]').filter(
        has=page.locator('input[aria-label="Softmax temperature τ"]'))
    assert_focus_visible(page, slider, "the temperature slider")
    before = _runs_finished(page)
    page.keyboard.press("ArrowRight")
    _wait_idle(page, before)
    assert _link(page).get("we_temp") == ["1.05"], page.url
    assert slider.locator('[data-testid="stSliderThumbValue"]').inner_text() == "1.05"

    # A button: the CSV download, pressed with Enter, gives the chosen matrix.
    tab_to(page, lambda f: f["tag"] == "button" and f["text"] == "CSV", "the CSV button")
    button = page.locator('[data-testid="stDownloadButton"]').filter(
        has_text=re.compile(r"^\s*CSV\s*$"))
    assert_focus_visible(page, button, "the CSV button")
    with page.expect_download() as info:
        page.keyboard.press("Enter")
    text = Path(info.value.path()).read_text(encoding="utf-8")
    assert text.count("\n") >= 3 and "," in text, f"the CSV holds {text[:200]!r}"
    page.screenshot(path=screenshot_dir / "keyboard_walk_Worked_example.png")
    _assert_no_error(page, "/Worked_example walked by keyboard", streamlit_server, mark)
