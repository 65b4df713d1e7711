"""The browser tier's shared helpers, and the first visit on a freshly started server.

``PAGES`` lists home and every ``pages/*.py`` as Streamlit names them, so a new lesson is
covered the day it is added. ``_open`` loads a page and waits until its first run is
drawn; ``_wait_idle`` waits for a rerun without racing it. Every page's deep link, a
control moved, presenter mode and the page at its defaults are checked in
``test_classroom.py`` (one page load serves several checks: a load costs seconds on
2 cores). Screenshots go to ``tests/e2e/screenshots/`` (gitignored).
"""

from __future__ import annotations

import re
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from axe_audit import audit
from playwright.sync_api import Page, expect

from pages.ui.lessons import LESSONS

pytestmark = pytest.mark.e2e

REPO_ROOT = Path(__file__).resolve().parents[2]
PAGES_DIR = REPO_ROOT / "pages"

APP = '[data-testid="stApp"]'
NAV_LINKS = '[data-testid="stSidebar"] [data-testid="stPageLink-NavLink"]'
EXCEPTION = '[data-testid="stException"]'
# A Python traceback printed anywhere on the page (st.exception with details, st.code
# of a traceback, a raw st.write of format_exc...). The exact header avoids matching a
# sentence that merely mentions the word.
TRACEBACK = re.compile(r"Traceback \(most recent call last\)")
RUN_TIMEOUT_MS = 60_000  # a run and its drawing; generous: 2 cores shared with the page tier


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

# Installed before the app's own code. It records the time of the last DOM change (and
# of the last one outside a <canvas>, for the redraw benchmark) and of the end of the
# last long task (Plotly draws a page of charts in long tasks). The app's
# script state alone is not enough to know a page is drawn: the frontend loads each
# element type's code lazily and shows a placeholder (stSkeleton) meanwhile, which on a
# busy machine lasts seconds after the run ends; so we also wait for no placeholder, every
# chart drawn and a quiet DOM.
_INSTRUMENT_JS = """
(() => {
  window.__stLastMutation = performance.now();
  window.__stLastLongTask = 0;
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        window.__stLastLongTask = Math.max(window.__stLastLongTask, e.startTime + e.duration);
      }
    }).observe({type: "longtask", buffered: true});
  } catch (e) { /* no longtask API: the DOM check alone */ }
  // The last change that can be seen: what a <canvas> holds is fallback content, never
  // painted (Glide's grid keeps its accessibility table there, updated 200 ms after each
  // draw of the grid).
  window.__stLastPaintedMutation = window.__stLastMutation;
  const painted = (m) => {
    const el = m.target.nodeType === 1 ? m.target : m.target.parentElement;
    if (!el) return true;
    if (m.type === "attributes" && el.tagName === "CANVAS") return true;  // a resize
    return !el.closest("canvas");
  };
  new MutationObserver((list) => {
    const now = performance.now();
    window.__stLastMutation = now;
    if (list.some(painted)) window.__stLastPaintedMutation = now;
  }).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
})();
"""

# The app is idle and drawn: connected, script not running, no lazy-loading placeholder
# left, every Plotly chart drawn, no DOM change and no long task for ``quietMs``.
_IDLE_JS = """
(quietMs) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || window.__stLastMutation === undefined) return false;
  if (app.getAttribute("data-test-connection-state") !== "CONNECTED") return false;
  if (app.getAttribute("data-test-script-state") !== "notRunning") return false;
  if (document.querySelector('[data-testid="stSkeleton"]')) return false;
  const charts = document.querySelectorAll('[data-testid="stPlotlyChart"]');
  if (![...charts].every((el) => el.querySelector(".main-svg"))) return false;
  const now = performance.now();
  return now - window.__stLastMutation >= quietMs && now - window.__stLastLongTask >= quietMs;
}
"""
QUIET_MS = 500


def watch_script_runs(page, on_finished: Callable[[str], None]) -> None:
    """Call ``on_finished(status)`` for every script run the server reports finished.

    Streamlit sends a ForwardMsg "script_finished" on the page's websocket at the end of
    every run. Counting these, rather than changes of the app's data-test-script-state
    attribute, also sees a run whose "running" and "notRunning" reached a starved
    browser together and were drawn in one render: the attribute then never changes,
    and a wait on it never ends (seen on 2 busy cores). Works with Playwright's sync
    and async pages alike.
    """
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    def on_frame(payload) -> None:
        # script_finished is a few bytes: leave the large frames (figures) undecoded.
        if not isinstance(payload, (bytes, bytearray)) or len(payload) > 4096:
            return
        try:
            msg = ForwardMsg.FromString(bytes(payload))
        except Exception:  # noqa: BLE001 - not a ForwardMsg: nothing to note
            return
        if msg.WhichOneof("type") == "script_finished":
            on_finished(ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished))

    def on_socket(ws) -> None:
        if "/_stcore/stream" in ws.url:
            ws.on("framereceived", on_frame)

    page.on("websocket", on_socket)


# Script runs finished so far, per page (a reload or a reconnect keeps counting).
_RUNS: weakref.WeakKeyDictionary[Page, list[str]] = weakref.WeakKeyDictionary()


def _watch(page: Page) -> None:
    """Count the page's finished script runs (``_runs_finished``) and time its DOM changes
    (``_INSTRUMENT_JS``) from its next navigation on; once per page."""
    if page not in _RUNS:
        runs: list[str] = []
        _RUNS[page] = runs

        def finished(status: str) -> None:
            if status != "FINISHED_EARLY_FOR_RERUN":  # cut short: its rerun is what counts
                runs.append(status)

        watch_script_runs(page, finished)
        page.add_init_script(_INSTRUMENT_JS)


def _open(page: Page, base_url: str, path: str, query: str = "") -> None:
    _watch(page)
    before = _runs_finished(page)
    url = f"{base_url}/{path}" + (f"?{query}" if query else "")
    page.goto(url, wait_until="domcontentloaded")
    _wait_idle(page, before)


def _wait_idle(page: Page, runs_before: int) -> None:
    """Wait until a script run after the first ``runs_before`` has finished and the
    page is idle and drawn (``runs_before`` from ``_runs_finished`` before the input)."""
    deadline = time.monotonic() + RUN_TIMEOUT_MS / 1e3
    while _runs_finished(page) <= runs_before:
        if time.monotonic() > deadline:
            raise AssertionError(
                f"no script run finished within {RUN_TIMEOUT_MS / 1e3:.0f} s on {page.url}")
        page.wait_for_timeout(50)  # lets Playwright deliver the websocket's frames
    page.wait_for_function(_IDLE_JS, arg=QUIET_MS, polling=100,
                           timeout=max(deadline - time.monotonic(), 1.0) * 1e3)


def _runs_finished(page: Page) -> int:
    """Script runs of this page that the server has reported finished so far."""
    return len(_RUNS.get(page, ()))


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


def _shot_name(path: str) -> str:
    return path or "home"


def test_first_visit_deep_link_on_fresh_server(fresh_server, page: Page, screenshot_dir: Path):
    """The worked example opened first on a new server has its title and a named nav; the
    server prepared the lessons before it answered (pages/ui/server_start.py). Then, each
    in a new tab at 1280 × 720, axe-core's audit passes as soon as the page is drawn on
    the three views where it once found scrolling boxes the keyboard could not reach
    on first visits: home and the worked example in presenter mode, the masks lesson at its
    defaults."""
    worked = next((p for _, p in PAGES if p == "Worked_example"), None)
    if worked is None:
        pytest.fail("pages/1_Worked_example.py is missing (no /Worked_example page)")
    server = fresh_server()
    assert "Attention Lab: ready in" in server.log(), server.log(4_000)
    _open(page, server.url, worked)
    page.screenshot(path=screenshot_dir / "first_visit_Worked_example.png")
    _assert_no_error(page, f"first visit to /{worked} on a fresh server", server)

    heading = page.locator('[data-testid="stMain"] h1').first
    expect(heading).to_contain_text(re.compile(r"worked example", re.IGNORECASE))
    expect(page).to_have_title(re.compile(r"worked example", re.IGNORECASE))

    # Our own page list (Streamlit's is hidden): "Home", then every lesson numbered.
    links = page.locator(NAV_LINKS)
    labels = [t.strip() for t in links.locator('[data-testid="stMarkdownContainer"]')
              .all_inner_texts()]
    expected = ["Home"] + [lesson.label for lesson in LESSONS]
    assert labels == expected, f"sidebar links {labels}, expected {expected}"
    # Where each link leads, as the browser resolves its address from this page (opened
    # in a new tab or copied): an empty address would be this lesson again.
    hrefs = [urlsplit(urljoin(page.url, links.nth(i).get_attribute("href") or "")).path
             for i in range(links.count())]
    assert hrefs == ["/"] + [f"/{name}" for _, name in PAGES[1:]], hrefs
    raw = [label for label in labels if re.match(r"^\d+_", label) or label.endswith(".py")
           or label.lower() == "dashboard"]
    assert not raw, f"raw file names in the sidebar nav: {raw}"

    for path, query in (("", "presenter=true"), (worked, "presenter=true"), ("Masks", "")):
        tab = page.context.new_page()
        tab.set_viewport_size({"width": 1280, "height": 720})
        _open(tab, server.url, path, query)
        found = audit(tab)  # WCAG 2.1 AA as soon as the page is drawn (axe_audit.py)
        assert not found, f"/{path}?{query} on a fresh server:\n" + "\n".join(found)
        tab.close()
