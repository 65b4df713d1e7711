"""Each page's diagram of its model, as the browser draws it: at the defaults and in
presenter mode at 1280 × 720, no two texts overlap, no text is under 18 px on the
projector, and a screenshot of each is kept (tests/e2e/screenshots/diagram_*.png).

The page tier checks the same layouts from estimated text widths
(tests/pages/test_diagrams*.py); here the widths are the browser's own.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page
from test_pages import _assert_no_error, _open

from pages.ui.lessons import LESSONS

pytestmark = pytest.mark.e2e

PROJECTOR = {"width": 1280, "height": 720}
# Lessons 2, 7 and 8 are experiments on attention itself (scaling, timing, training)
# rather than a model to draw; every other page draws its model.
WITHOUT_DIAGRAM = {"sc", "cost", "learn"}
PATHS = [""] + [lesson.url_name for lesson in LESSONS if lesson.prefix not in WITHOUT_DIAGRAM]

# Each text's box as drawn (getBBox is in the SVG's own units; the client rect is in px),
# and its computed font size in px after the SVG is scaled to its column.
_TEXTS_JS = """
(svg) => [...svg.querySelectorAll("text")].filter((t) => t.textContent.trim()).map((t) => {
  const r = t.getBoundingClientRect();
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  return {text: t.textContent, x0: r.left, y0: r.top, x1: r.right, y1: r.bottom,
          px: parseFloat(t.getAttribute("font-size") || svg.getAttribute("font-size")) * scale};
})
"""
SLACK_PX = 1.0  # glyph boxes of neighbouring lines may touch


def overlaps(texts: list[dict]) -> list[tuple[str, str]]:
    found = []
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            if (a["x0"] + SLACK_PX < b["x1"] and b["x0"] + SLACK_PX < a["x1"]
                    and a["y0"] + SLACK_PX < b["y1"] and b["y0"] + SLACK_PX < a["y1"]):
                found.append((a["text"], b["text"]))
    return found


@pytest.mark.parametrize("presenter", [False, True], ids=["defaults", "presenter"])
@pytest.mark.parametrize("path", PATHS)
def test_each_diagram_as_drawn(page: Page, streamlit_server, screenshot_dir: Path, path: str,
                               presenter: bool):
    page.set_viewport_size(PROJECTOR)
    mark = streamlit_server.log_mark()
    _open(page, streamlit_server.url, path, "presenter=true" if presenter else "")
    what = f"/{path} {'in presenter mode' if presenter else 'at its defaults'}"
    _assert_no_error(page, what, streamlit_server, mark)
    diagrams = page.locator('[class*="st-key-diagram_"] svg')
    assert diagrams.count() >= 1, f"{what}: no diagram drawn"
    mode = "presenter" if presenter else "defaults"
    for i in range(diagrams.count()):
        svg = diagrams.nth(i)
        svg.scroll_into_view_if_needed()
        svg.screenshot(path=screenshot_dir / f"diagram_{path or 'home'}_{mode}_{i}.png")
        texts = svg.evaluate(_TEXTS_JS)
        assert texts, f"{what}: diagram {i} has no text"
        assert overlaps(texts) == [], f"{what}: diagram {i}: texts overlap"
        if presenter:
            small = [(t["text"], round(t["px"], 1)) for t in texts if t["px"] < 18]
            assert small == [], f"{what}: diagram {i}: text under 18 px on the projector"
