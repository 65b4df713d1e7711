"""Every page in a real browser: deep link, a slider moved by keyboard, presenter mode.

The pages are found by listing ``pages/*.py``, so a new lesson is covered the day it
is added. Screenshots go to ``tests/e2e/screenshots/`` (gitignored).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

pytestmark = pytest.mark.e2e

REPO_ROOT = Path(__file__).resolve().parents[2]
PAGES_DIR = REPO_ROOT / "pages"

APP = '[data-testid="stApp"]'
EXCEPTION = '[data-testid="stException"]'
# A Python traceback printed anywhere on the page (st.exception with details, st.code
# of a traceback, a raw st.write of format_exc...). The exact header avoids matching a
# sentence that merely mentions the word.
TRACEBACK = re.compile(r"Traceback \(most recent call last\)")
RUN_TIMEOUT_MS = 30_000


def _url_path(script: Path) -> str:
    """The URL path Streamlit gives ``pages/<script>``: Streamlit's own rule.

    ``1_Worked_example.py`` -> ``Worked_example`` (numeric prefix and separator
    dropped, runs of spaces/underscores folded to one underscore, leading emoji
    removed), as in ``streamlit.source_util.page_icon_and_name``, which is what
    ``StreamlitPage`` uses for pages found in the ``pages/`` folder.
    """
    try:
        from streamlit.source_util import page_icon_and_name
    except ImportError:  # pragma: no cover - fallback if Streamlit moves it
        match = re.search(r"([0-9]*)[_ -]*(.*)\.py", script.name)
        assert match is not None
        return re.sub(r"[_ ]+", "_", match.group(2)).strip() or match.group(1)
    return page_icon_and_name(script)[1]


def _sort_key(script: Path):
    try:
        from streamlit.source_util import page_sort_key
    except ImportError:  # pragma: no cover
        return (0.0, script.name)
    return page_sort_key(script)


def _discover_pages() -> list[tuple[str, str]]:
    """(test id, URL path) for home and every ``pages/*.py``, as Streamlit lists them."""
    scripts = sorted(
        (
            p
            for p in PAGES_DIR.glob("*.py")
            if not p.name.startswith(".") and p.name != "__init__.py"
        ),
        key=_sort_key,
    )
    found = [("home", "")]
    found += [(_url_path(p), _url_path(p)) for p in scripts]
    return found


PAGES = _discover_pages()
PAGE_PARAMS = [pytest.param(path, id=test_id) for test_id, path in PAGES]

# Installed before the app's own code. It counts changes of the app's script-run state
# (so a rerun can be awaited without racing it: it is over once the counter has moved
# and the state is back to "notRunning") and records the time of the last DOM change
# and of the end of the last long task (Plotly draws a page of charts in long tasks).
# "notRunning" alone is not enough: the frontend loads each element type's code lazily
# and shows a placeholder (stSkeleton) meanwhile, which on a busy machine lasts seconds
# after the state flips; so we also wait for no placeholder and a quiet DOM.
_INSTRUMENT_JS = """
(() => {
  window.__stStateChanges = 0;
  window.__stLastMutation = performance.now();
  window.__stLastLongTask = 0;
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        window.__stLastLongTask = Math.max(window.__stLastLongTask, e.startTime + e.duration);
      }
    }).observe({type: "longtask", buffered: true});
  } catch (e) { /* no longtask API: the DOM check alone */ }
  new MutationObserver((records) => {
    window.__stLastMutation = performance.now();
    for (const r of records) {
      if (r.type === "attributes" && r.attributeName === "data-test-script-state") {
        window.__stStateChanges += 1;
      }
    }
  }).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
})();
"""

# The app is idle: connected, script finished, no lazy-loading placeholder left, every
# Plotly chart drawn, no DOM change and no long task for ``quietMs``; and the state has
# changed more than ``before`` times (so the run we wait for has happened).
_IDLE_JS = """
([before, quietMs]) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || window.__stStateChanges === undefined) return false;
  if (app.getAttribute("data-test-connection-state") !== "CONNECTED") return false;
  if (app.getAttribute("data-test-script-state") !== "notRunning") return false;
  if (window.__stStateChanges <= before) return false;
  if (document.querySelector('[data-testid="stSkeleton"]')) return false;
  const charts = document.querySelectorAll('[data-testid="stPlotlyChart"]');
  if (![...charts].every((el) => el.querySelector(".main-svg"))) return false;
  const now = performance.now();
  return now - window.__stLastMutation >= quietMs && now - window.__stLastLongTask >= quietMs;
}
"""
QUIET_MS = 500


def _open(page: Page, base_url: str, path: str, query: str = "") -> None:
    page.add_init_script(_INSTRUMENT_JS)
    url = f"{base_url}/{path}" + (f"?{query}" if query else "")
    page.goto(url, wait_until="domcontentloaded")
    # The first run moves the state "initial" -> "running" -> "notRunning".
    _wait_idle(page, changes_before=0)


def _wait_idle(page: Page, changes_before: int) -> None:
    """Wait until a run that started after ``changes_before`` is over and drawn."""
    page.wait_for_function(
        _IDLE_JS, arg=[changes_before, QUIET_MS], polling=100, timeout=RUN_TIMEOUT_MS
    )


def _state_changes(page: Page) -> int:
    return int(page.evaluate("() => window.__stStateChanges || 0"))


def _assert_no_error(page: Page, what: str, server=None, log_mark: int = 0) -> None:
    """No stException element and no traceback text; on failure, quote the server log.

    The app's config redacts error details in the browser (client.showErrorDetails =
    "none"), so the server's own log, from ``log_mark`` on, holds the real traceback.
    """
    log = f"\n--- server log ---\n{server.log(8_000, since=log_mark)}" if server else ""
    exceptions = page.locator(EXCEPTION)
    if exceptions.count():
        texts = "\n---\n".join(exceptions.all_inner_texts())
        pytest.fail(f"{what}: {exceptions.count()} stException element(s) on screen:\n{texts}{log}")
    body = page.locator(APP).inner_text()
    match = TRACEBACK.search(body)
    if match:
        start = max(match.start() - 200, 0)
        pytest.fail(f"{what}: a Python traceback is on screen:\n{body[start : start + 1500]}{log}")


def _same_number(a: str | None, b: str | None) -> bool:
    try:
        return a is not None and b is not None and float(a) == float(b)
    except ValueError:
        return a == b


def _shot_name(path: str) -> str:
    return path or "home"


@pytest.mark.parametrize("path", PAGE_PARAMS)
def test_deep_link_renders_then_first_slider_moves(
    page: Page, streamlit_server, screenshot_dir: Path, path: str
):
    """Open the page by its link; then move its first slider with the keyboard.

    One page load serves both checks (a load costs seconds; the tier must stay short).
    """
    mark = streamlit_server.log_mark()
    _open(page, streamlit_server.url, path)
    page.screenshot(path=screenshot_dir / f"{_shot_name(path)}.png")
    _assert_no_error(page, f"/{path} at defaults", streamlit_server, mark)
    expect(page.locator('[data-testid="stMain"]')).to_be_visible()

    sliders = page.locator('[data-testid="stSlider"]')
    if sliders.count() == 0:
        return  # nothing to move on this page (the home page, say)
    # Streamlit 1.67 draws a slider thumb as a native range input (implicit ARIA role
    # "slider"); get_by_role also matches a [role="slider"] element.
    thumbs = sliders.get_by_role("slider", disabled=False)
    if thumbs.count() == 0:
        return  # every slider is disabled at defaults: nothing a user could move
    thumb = thumbs.first
    label = thumb.get_attribute("aria-label") or "?"
    thumb.scroll_into_view_if_needed()
    # At the top of its range ArrowRight would do nothing: step down instead.
    now = thumb.get_attribute("aria-valuenow") or thumb.evaluate("e => e.value ?? null")
    top = thumb.get_attribute("aria-valuemax") or thumb.get_attribute("max")
    key = "ArrowLeft" if _same_number(now, top) else "ArrowRight"
    url_before = page.url
    changes_before = _state_changes(page)

    thumb.focus()
    page.keyboard.press(key)

    try:
        page.wait_for_url(
            lambda url: url != url_before and bool(urlsplit(url).query), timeout=10_000
        )
    except PlaywrightTimeoutError:
        pytest.fail(
            f"/{path}: the URL did not change after pressing {key} on slider {label!r} "
            f"(still {page.url}); is it keyed and bound with bind='query-params'?"
        )
    _wait_idle(page, changes_before)
    page.screenshot(path=screenshot_dir / f"{_shot_name(path)}__slider.png")
    _assert_no_error(
        page, f"/{path} after pressing {key} on slider {label!r}", streamlit_server, mark
    )
    query = parse_qs(urlsplit(page.url).query)
    assert query, f"/{path}: no query parameter in {page.url} after moving the slider"


@pytest.mark.parametrize("path", PAGE_PARAMS)
def test_presenter_mode_by_link(page: Page, streamlit_server, screenshot_dir: Path, path: str):
    mark = streamlit_server.log_mark()
    _open(page, streamlit_server.url, path, query="presenter=true")
    page.screenshot(path=screenshot_dir / f"{_shot_name(path)}__presenter.png")
    _assert_no_error(page, f"/{path}?presenter=true", streamlit_server, mark)
    # The sidebar switch (key "presenter", bound to the URL) is on.
    on = page.locator('[data-testid="stSidebar"] input[type="checkbox"]:checked')
    assert on.count() >= 1, f"/{path}?presenter=true: no switch is on in the sidebar"
    assert "presenter=true" in page.url, f"presenter=true was dropped from the URL: {page.url}"


def _lesson_label(url_path: str) -> str:
    """The name Streamlit shows in the sidebar for a page: underscores become spaces."""
    return url_path.replace("_", " ")


def test_first_visit_deep_link_on_fresh_server(fresh_server, page: Page, screenshot_dir: Path):
    """The worked example opened first on a new server has its title and a named nav."""
    worked = next((p for _, p in PAGES if p == "Worked_example"), None)
    if worked is None:
        pytest.fail("pages/1_Worked_example.py is missing (no /Worked_example page)")
    server = fresh_server()
    _open(page, server.url, worked)
    page.screenshot(path=screenshot_dir / "first_visit_Worked_example.png")
    _assert_no_error(page, f"first visit to /{worked} on a fresh server", server)

    heading = page.locator('[data-testid="stMain"] h1').first
    expect(heading).to_contain_text(re.compile(r"worked example", re.IGNORECASE))
    expect(page).to_have_title(re.compile(r"worked example", re.IGNORECASE))

    nav = page.locator('[data-testid="stSidebarNav"]')
    expect(nav).to_be_visible()
    view_more = nav.locator('[data-testid="stSidebarNavViewButton"]')
    if view_more.count() and "more" in view_more.inner_text():
        view_more.click()
    links = nav.locator('[data-testid="stSidebarNavLink"]')
    labels = [t.strip() for t in links.all_inner_texts()]
    assert any("Worked example" in label for label in labels), labels
    for _, lesson in PAGES[1:]:
        assert any(_lesson_label(lesson) in label for label in labels), (
            f"no sidebar link named {_lesson_label(lesson)!r}: {labels}"
        )
    raw = [label for label in labels if re.match(r"^\d+_", label) or label.endswith(".py")]
    assert not raw, f"raw file names in the sidebar nav: {raw}"
