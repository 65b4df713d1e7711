"""Browser redraw time of every page: ``python tests/bench_redraw.py [--presses 5]``.

Not a test (the numbers depend on the machine and on its load): it starts its own
``streamlit run dashboard.py``, opens each page (home and every ``pages/*.py``) in
headless Chromium at 1280 × 720, focuses the page's first slider that can move, and
presses an arrow key (right, then left, alternately, so the value goes back and forth).
For each press it takes the time from the key press to the last change of the page's
DOM or the end of the last long task (Plotly drawing), once the page has been calm for
0.5 s and its script run has finished; it prints the median and the range per page, with
the machine's load average before and after, as what it measured is shared with whatever
else runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from conftest import CHROMIUM, CHROMIUM_ARGS, StreamlitServer  # noqa: E402
from test_pages import PAGES, _open, _runs_finished, _wait_idle  # noqa: E402

VIEWPORT = {"width": 1280, "height": 720}
# The first slider of the main area that is enabled; its thumb is a range input.
SLIDER = '[data-testid="stMain"] [data-testid="stSlider"] input[type="range"]:not([disabled])'
# The moment of the key press, taken in the page itself (no round trip in the number).
_KEY_JS = """
() => {
  if (window.__benchKeyWatch) return;
  window.__benchKeyWatch = true;
  document.addEventListener("keydown", () => { window.__benchKeyAt = performance.now(); },
                            {capture: true});
}
"""
_REDRAW_JS = """
() => Math.max(window.__stLastMutation, window.__stLastLongTask) - window.__benchKeyAt
"""


def redraw_times(page, base_url: str, path: str, presses: int) -> list[float] | str:
    """Milliseconds from key press to calm, per press; or why the page was not measured."""
    _open(page, base_url, path)
    page.evaluate(_KEY_JS)
    thumbs = page.locator(SLIDER)
    if thumbs.count() == 0:
        return "no slider"
    thumb = thumbs.first
    thumb.scroll_into_view_if_needed()
    times = []
    for n in range(presses):
        thumb.focus()
        before = _runs_finished(page)
        page.keyboard.press("ArrowRight" if n % 2 == 0 else "ArrowLeft")
        _wait_idle(page, before)
        times.append(page.evaluate(_REDRAW_JS))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=5, help="key presses per page")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    load_before = os.getloadavg()
    server = StreamlitServer().start()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                         headless=True)
            context = browser.new_context(viewport=VIEWPORT)
            context.set_default_timeout(120_000)
            print(f"{'page':<22} {'median ms':>9} {'min':>6} {'max':>6}  presses")
            for _, path in PAGES:
                page = context.new_page()
                started = time.monotonic()
                result = redraw_times(page, server.url, path, args.presses)
                page.close()
                name = path or "home"
                if isinstance(result, str):
                    print(f"{name:<22} {result}")
                    continue
                print(f"{name:<22} {statistics.median(result):9.0f} {min(result):6.0f} "
                      f"{max(result):6.0f}  {len(result)} ({time.monotonic() - started:.0f} s)",
                      flush=True)
            browser.close()
    finally:
        server.close()
    load_after = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores; load average (1, 5, 15 min) before "
          f"{', '.join(f'{x:.1f}' for x in load_before)}, after "
          f"{', '.join(f'{x:.1f}' for x in load_after)}")


if __name__ == "__main__":
    main()
