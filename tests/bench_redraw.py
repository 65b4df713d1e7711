"""Browser redraw time of every page: ``python tests/bench_redraw.py [--presses 3] [--all]``.

Not a test (the numbers depend on the machine and on its load): it starts its own
``streamlit run dashboard.py``, opens each page (home and every ``pages/*.py``) in
headless Chromium at 1280 × 720 (``--presenter``: in presenter mode), and moves a
slider of the main area with its arrow keys (right, then left, alternately, so the
value goes back and forth; left first for a slider at its largest value). By default
that is the page's first slider; ``--all`` measures every slider of the page. Sliders
inside a form (lesson 8's training settings) are left out: moving them redraws nothing
until the form is submitted.

For each press it takes the time from the key press to the last change of the page's
DOM or the end of the last long task (Plotly drawing), once the page has been calm for
0.5 s and its script run has finished. It prints the median and the range per slider,
with the machine's load average before and after and the share of CPU time its host
took for other virtual machines during the run ("stolen"), as what it measured is shared
with whatever else runs.
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
# Marks the main area's sliders that can move and are not in a form (their thumbs are
# range inputs) with data-bench-slider="0", "1", ... and returns their labels.
_MARK_SLIDERS_JS = """
() => {
  const found = [...document.querySelectorAll(
      '[data-testid="stMain"] [data-testid="stSlider"]')]
    .filter((s) => !s.closest('[data-testid="stForm"]'))
    .map((s) => [s, s.querySelector('input[type="range"]:not([disabled])')])
    .filter(([, thumb]) => thumb);
  return found.map(([s, thumb], i) => {
    thumb.setAttribute("data-bench-slider", String(i));
    // a slider at its largest value moves left first
    thumb.setAttribute("data-bench-at-max", String(thumb.value === thumb.max));
    const label = s.querySelector('[data-testid="stWidgetLabel"]');
    return label ? label.innerText.trim() : `slider ${i + 1}`;
  });
}
"""
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


def cpu_ticks() -> list[int] | None:
    """The machine's CPU time counters (user, nice, system, idle, iowait, irq, softirq,
    steal), from /proc/stat; None where there is none."""
    try:
        with open("/proc/stat") as f:
            return [int(x) for x in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None


def cpu_share(before: list[int] | None, after: list[int] | None) -> str:
    """What the machine's CPUs did between two readings: busy, idle and stolen (time a
    virtual machine's host gave to other machines, which slows every figure here)."""
    if not before or not after:
        return "CPU shares not available"
    spent = [b - a for a, b in zip(before, after, strict=True)]
    total = sum(spent) or 1
    idle, steal = spent[3] + spent[4], spent[7]
    return (f"CPUs {100 * (total - idle - steal) / total:.0f}% busy, {100 * idle / total:.0f}% "
            f"idle, {100 * steal / total:.0f}% stolen by the host")


def press_times(page, index: int, presses: int) -> list[float]:
    """Milliseconds from key press to calm, per press, for the page's slider ``index``."""
    times = []
    keys = ["ArrowRight", "ArrowLeft"]
    for n in range(presses):
        # Found again each time: a full rerun may draw the slider anew.
        page.evaluate(_MARK_SLIDERS_JS)
        thumb = page.locator(f'[data-bench-slider="{index}"]')
        if n == 0 and thumb.get_attribute("data-bench-at-max") == "true":
            keys.reverse()
        thumb.scroll_into_view_if_needed()
        thumb.focus()
        before = _runs_finished(page)
        page.keyboard.press(keys[n % 2])
        _wait_idle(page, before)
        times.append(page.evaluate(_REDRAW_JS))
    return times


def measure_page(page, base_url: str, path: str, query: str, presses: int,
                 every: bool) -> list[tuple[str, list[float]]] | str:
    """(slider label, times) for the sliders measured; or why none was."""
    _open(page, base_url, path, query)
    page.evaluate(_KEY_JS)
    labels = page.evaluate(_MARK_SLIDERS_JS)
    if not labels:
        return "no slider outside a form"
    chosen = range(len(labels)) if every else range(1)
    return [(labels[i], press_times(page, i, presses)) for i in chosen]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=5, help="key presses per slider")
    parser.add_argument("--all", action="store_true", help="every slider, not the first")
    parser.add_argument("--presenter", action="store_true", help="in presenter mode")
    parser.add_argument("pages", nargs="*", help="only pages whose path contains one of these")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    query = "presenter=true" if args.presenter else ""
    paths = [path for _, path in PAGES
             if not args.pages or any(p.lower() in (path or "home").lower() for p in args.pages)]
    load_before, ticks_before = os.getloadavg(), cpu_ticks()
    server = StreamlitServer().start()
    worst = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                         headless=True)
            context = browser.new_context(viewport=VIEWPORT)
            context.set_default_timeout(120_000)
            print(f"{'page':<22} {'slider':<34} {'median ms':>9} {'min':>6} {'max':>6}")
            for path in paths:
                name = path or "home"
                page = context.new_page()
                started = time.monotonic()
                try:
                    result = measure_page(page, server.url, path, query, args.presses, args.all)
                except Exception as exc:  # noqa: BLE001 - report it and go on to the next page
                    result = f"not measured: {str(exc).splitlines()[0]}"
                page.close()
                if isinstance(result, str):
                    print(f"{name:<22} {result}", flush=True)
                    continue
                for label, times in result:
                    print(f"{name:<22} {label[:34]:<34} {statistics.median(times):9.0f} "
                          f"{min(times):6.0f} {max(times):6.0f}", flush=True)
                    worst.append((statistics.median(times), name, label))
                print(f"{'':<22} ({len(result)} slider(s), {args.presses} presses each, "
                      f"{time.monotonic() - started:.0f} s)", flush=True)
            browser.close()
    finally:
        server.close()
    load_after, ticks_after = os.getloadavg(), cpu_ticks()
    if worst:
        slowest = max(worst)
        over = sum(1 for t, _, _ in worst if t > 500)
        print(f"slowest median: {slowest[0]:.0f} ms ({slowest[1]}, {slowest[2]}); "
              f"{over} of {len(worst)} slider(s) over 500 ms")
    print(f"machine: {os.cpu_count()} cores; load average (1, 5, 15 min) before "
          f"{', '.join(f'{x:.1f}' for x in load_before)}, after "
          f"{', '.join(f'{x:.1f}' for x in load_after)}; "
          f"{cpu_share(ticks_before, ticks_after)}")


if __name__ == "__main__":
    main()
