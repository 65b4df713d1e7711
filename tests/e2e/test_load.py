"""A classroom at once: 20 browsers on one server, each on a page and moving a control.

One fresh server (so its memory is measured from a clean start) on 127.0.0.1; twenty
Chromium contexts opened together with Playwright's async API, cycling through every
page with different settings. Phase 1: all twenty open their link at once and wait
until it is drawn. Phase 2, once every page is up: all move a control at once (the
first enabled slider, or the presenter switch where there is none: in the sidebar,
opened first where presenter mode closed it), as a class does when the teacher says "now
move d_k", and wait for the rerun (a whole run, or the run of the fragment the control
is in). Every one must render with no exception and no error message.

Figures written to ``tests/e2e/screenshots/load_report.txt`` (and printed): the
server's resident memory (its whole process tree) before, at the peak and after, and
the server's CPU time, and the slowest rerun: from the key press to the end of the
script run as the browser receives it (Streamlit's "script_finished" message, after
which the app is "not running"), and to the page fully drawn. The browsers and the
server share the machine's 2 cores, so the time limits are generous.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import pytest
from test_pages import (
    _IDLE_JS,
    _INSTRUMENT_JS,
    EXCEPTION,
    PAGES,
    QUIET_MS,
    watch_script_runs,
)

pytestmark = pytest.mark.e2e

CLIENTS = 20
PAGE_TIMEOUT_MS = 120_000  # per page load and per rerun, on 2 busy cores
BUDGET_S = 270  # the whole crowd; pytest's own timeout is 300 s
VIEWPORT = {"width": 1280, "height": 720}
ERROR_ALERT = '[data-testid="stAlertContentError"]'
COLLAPSED_SIDEBAR = '[data-testid="stSidebar"][data-collapsed="true"]'
EXPAND_SIDEBAR = '[data-testid="stExpandSidebarButton"]'
# How a rerun may end and count as a success: a whole run, or the run of the fragment
# the moved control sits in (a lesson body or a section that reruns alone).
SUCCESSFUL_RUNS = ("FINISHED_SUCCESSFULLY", "FINISHED_FRAGMENT_RUN_SUCCESSFULLY")
RSS_LIMIT_MB = 2048  # a leak guard, far above what the server needs

# Different settings per visit (cycled per page): defaults, a larger or other view.
LONG = " ".join(f"word{i}" for i in range(30))
VARIANTS: dict[str, list[dict[str, str]]] = {
    "": [{}, {"presenter": "true"}],
    "Worked_example": [{"we_preset": "Random", "we_tokens": "6", "we_dk": "4"},
                       {"we_preset": "The cat sat"}, {"we_temp": "0.5", "we_causal": "true"}],
    "Scaling": [{"sc_dk": "1024", "sc_samples": "10000"}, {"sc_nkeys": "64"}, {}],
    "Masks": [{"mk_mask": "window", "mk_window": "5"},
              {"mk_text": "\n".join([LONG] * 4), "mk_mask": "padding+causal"}, {}],
    "Multi_head": [{"mha_dmodel": "128", "mha_heads": "16"},
                   {"mha_weights": "designed", "mha_dmodel": "64", "mha_heads": "8"}, {}],
    "Positional_encoding": [{"pe_len": "512", "pe_dmodel": "512"}, {"pe_base": "100"}, {}],
    "Scoring_and_seq2seq": [{"s2s_model": "Luong", "s2s_luong_score": "general"},
                            {"s2s_source": LONG, "s2s_target": LONG}, {}],
    "Cost": [{"cost_max_n": "1024", "cost_heads": "2"}, {}, {"cost_dk": "16"}],
}

def _watch_runs(page, visit: Visit) -> None:
    """Note the time and status of every script run the server reports finished, and
    count the page's websockets (more than one means it reconnected)."""
    def on_socket(ws) -> None:
        if "/_stcore/stream" in ws.url:
            visit.sockets += 1

    page.on("websocket", on_socket)
    watch_script_runs(page, lambda status: visit.finished.append((time.monotonic(), status)))


# No CSS animation or transition: twenty software-rendered pages repainting loading
# shimmers and spinners would spend the 2 cores on paint; this test measures the server.
_STILL_JS = """
document.addEventListener("DOMContentLoaded", () => {
  const style = document.createElement("style");
  style.textContent = "*, *::before, *::after { animation: none !important; " +
                      "transition: none !important; }";
  document.head.appendChild(style);
});
"""
@dataclass
class Visit:
    n: int
    path: str
    query: str
    load_s: float | None = None
    moved: str | None = None
    rerun_ms: float | None = None  # input -> the server's "script finished" in the browser
    drawn_ms: float | None = None  # input -> idle and drawn (includes QUIET_MS of calm)
    problems: list[str] = field(default_factory=list)
    sockets: int = 0  # websockets the page opened to the server: more than 1 = reconnects
    finished: list[tuple[float, str]] = field(default_factory=list)  # (time, status)
    stage: str = "waiting"
    trail: list[tuple[str, float]] = field(default_factory=list)

    def at(self, stage: str, t0: float) -> None:
        self.stage = stage
        self.trail.append((stage, time.monotonic() - t0))

    @property
    def where(self) -> str:
        return f"#{self.n} /{self.path}" + (f"?{self.query}" if self.query else "")


def _crowd() -> list[Visit]:
    paths = [path for _, path in PAGES]
    visits, seen = [], dict.fromkeys(paths, 0)
    for n in range(CLIENTS):
        path = paths[n % len(paths)]
        options = VARIANTS.get(path, [{}])
        visits.append(Visit(n, path, urlencode(options[seen[path] % len(options)])))
        seen[path] += 1
    return visits


def _stat_fields(pid: int | str) -> list[str] | None:
    """/proc/<pid>/stat after the command name (which may hold spaces): state, ppid..."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _tree(root: int) -> list[int]:
    """``root`` and all its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        fields = _stat_fields(entry)
        if fields is not None:
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _tree_rss_mb(root: int) -> float:
    """Resident memory of the server's process tree (VmRSS summed), in MiB."""
    total_kb = 0
    for pid in _tree(root):
        try:
            with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
                total_kb += next((int(line.split()[1]) for line in fh
                                  if line.startswith("VmRSS:")), 0)
        except OSError:
            continue
    return total_kb / 1024


def _tree_cpu_s(root: int) -> float:
    """CPU seconds (user + system) the server's process tree has used so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in _tree(root):
        fields = _stat_fields(pid)
        if fields is not None:
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


class _Sampler(threading.Thread):
    """Samples the server's memory every ``every`` seconds; keeps the peak."""

    def __init__(self, pid: int, every: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.pid, self.every, self.peak = pid, every, 0.0
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.peak = max(self.peak, _tree_rss_mb(self.pid))
            self._stop_event.wait(self.every)

    def stop(self) -> float:
        self._stop_event.set()
        self.join(timeout=5)
        return self.peak


class _Crowd:
    """The shared clock, and the point where every visit has loaded (or failed to)."""

    def __init__(self, visits: list[Visit], server_pid: int) -> None:
        self.visits, self.pid = visits, server_pid
        self.t0 = time.monotonic()
        self.waiting = len(visits)
        self.all_loaded = asyncio.Event()
        self.loaded_after_s: float | None = None
        self.rss_loaded: float | None = None
        self.cpu_loaded: float | None = None

    def loaded(self) -> None:
        """Called exactly once per visit, whether its page loaded or not."""
        self.waiting -= 1
        if self.waiting == 0:
            self.loaded_after_s = time.monotonic() - self.t0
            self.rss_loaded = _tree_rss_mb(self.pid)
            self.cpu_loaded = _tree_cpu_s(self.pid)
            self.all_loaded.set()


# Where a page stands, for the report when it never becomes idle.
_PROBE_JS = """
() => {
  const app = document.querySelector('[data-testid="stApp"]');
  const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')];
  return {
    connection: app && app.getAttribute("data-test-connection-state"),
    script: app && app.getAttribute("data-test-script-state"),
    placeholders: document.querySelectorAll('[data-testid="stSkeleton"]').length,
    charts: `${charts.filter((c) => c.querySelector(".main-svg")).length}/${charts.length} drawn`,
    quietMs: Math.round(performance.now() - window.__stLastMutation),
  };
}
"""


async def _idle(page) -> None:
    """``_IDLE_JS`` of test_pages (idle and drawn), with a probe on failure."""
    try:
        await page.wait_for_function(_IDLE_JS, arg=QUIET_MS, polling=500,
                                     timeout=PAGE_TIMEOUT_MS)
    except Exception as exc:
        try:
            probe = await page.evaluate(_PROBE_JS)
        except Exception as inner:  # noqa: BLE001 - the page may be gone
            probe = repr(inner)
        raise AssertionError(f"not idle after {PAGE_TIMEOUT_MS / 1e3:.0f} s: {probe}") from exc


async def _run_finished(visit: Visit, since: float) -> tuple[float, str]:
    """The first "script finished" message received after ``since`` (monotonic)."""
    deadline = since + PAGE_TIMEOUT_MS / 1e3
    while time.monotonic() < deadline:
        done = [(t, status) for t, status in visit.finished if t > since]
        if done:
            return done[0]
        await asyncio.sleep(0.1)
    raise AssertionError(f"no script run finished within {PAGE_TIMEOUT_MS / 1e3:.0f} s "
                         f"of the input ({visit.sockets} websocket(s) opened)")


async def _load(browser, base_url: str, visit: Visit, crowd: _Crowd):
    """Phase 1: a new context and page on ``visit``'s link, waited for until drawn."""
    context = await browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    page = await context.new_page()
    _watch_runs(page, visit)
    for script in (_INSTRUMENT_JS, _STILL_JS):
        await page.add_init_script(script)
    start = time.monotonic()
    url = f"{base_url}/{visit.path}" + (f"?{visit.query}" if visit.query else "")
    visit.at("goto", crowd.t0)
    await page.goto(url, wait_until="domcontentloaded", timeout=PAGE_TIMEOUT_MS)
    visit.at("first run", crowd.t0)
    await _run_finished(visit, start)
    await _idle(page)
    visit.load_s = time.monotonic() - start
    if await page.locator(EXCEPTION).count():
        visit.problems.append("stException after the first run (see the server log)")
    return context, page


async def _move(page, visit: Visit, crowd: _Crowd) -> None:
    """Phase 2: move a control (all visits at once) and wait for the rerun, drawn."""
    visit.at("move", crowd.t0)
    url_before = page.url
    thumbs = page.locator('[data-testid="stSlider"]').get_by_role("slider", disabled=False)
    if await thumbs.count():
        thumb = thumbs.first
        value, top = await thumb.input_value(), await thumb.get_attribute("max")
        key = "ArrowLeft" if value == top else "ArrowRight"
        visit.moved = f"{key} on slider {await thumb.get_attribute('aria-label')!r}"
        await thumb.focus()
        pressed = time.monotonic()
        await page.keyboard.press(key)
    else:
        visit.moved = "click on the presenter switch"
        if await page.locator(COLLAPSED_SIDEBAR).count():
            # presenter mode closes the sidebar, where the switch is: open it first
            await page.locator(EXPAND_SIDEBAR).click()
            await page.locator('[data-testid="stSidebar"][data-collapsed="false"]').wait_for()
        switch = page.get_by_role("switch", name="Presenter mode", exact=True)
        label = switch.locator("xpath=ancestor::label[1]")
        await label.scroll_into_view_if_needed()
        pressed = time.monotonic()
        await label.click()
    visit.at("link", crowd.t0)
    await page.wait_for_url(lambda u: u != url_before, timeout=PAGE_TIMEOUT_MS)
    visit.at("rerun", crowd.t0)
    finished, status = await _run_finished(visit, pressed)
    visit.rerun_ms = (finished - pressed) * 1e3
    if status not in SUCCESSFUL_RUNS:
        visit.problems.append(f"the rerun ended with {status}")
    visit.at("drawn", crowd.t0)
    await _idle(page)
    visit.drawn_ms = (time.monotonic() - pressed) * 1e3

    visit.at("checks", crowd.t0)
    if await page.locator(EXCEPTION).count():
        visit.problems.append("stException on screen")
    if await page.locator(ERROR_ALERT).count():
        texts = await page.locator(ERROR_ALERT).all_inner_texts()
        visit.problems.append(f"error message: {texts}")
    if not await page.locator('[data-testid="stMain"] h1').count():
        visit.problems.append("no title rendered")


async def _visit(browser, base_url: str, visit: Visit, crowd: _Crowd) -> None:
    context = page = None
    try:
        try:
            context, page = await _load(browser, base_url, visit, crowd)
        finally:
            crowd.loaded()
        await crowd.all_loaded.wait()
        await _move(page, visit, crowd)
        visit.at("done", crowd.t0)
    except Exception as exc:  # noqa: BLE001 - reported per visit, the crowd goes on
        visit.problems.append(f"at {visit.stage!r}: {type(exc).__name__}: "
                              f"{str(exc).splitlines()[0][:300]}")
    finally:
        if context is not None:
            await context.close()


async def _crowd_run(launch: dict, base_url: str, crowd: _Crowd) -> None:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(**launch)
        try:
            crowd.t0 = time.monotonic()
            tasks = [asyncio.create_task(_visit(browser, base_url, v, crowd))
                     for v in crowd.visits]
            _, late = await asyncio.wait(tasks, timeout=BUDGET_S)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
            for visit in crowd.visits:
                if visit.stage != "done":
                    visit.problems.append(f"still at {visit.stage!r} after {BUDGET_S} s")
        finally:
            await browser.close()


def _run_in_thread(launch: dict, base_url: str, crowd: _Crowd) -> None:
    """asyncio in its own thread: the session's sync Playwright owns the main thread."""
    errors: list[BaseException] = []

    def target() -> None:
        try:
            asyncio.run(_crowd_run(launch, base_url, crowd))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            errors.append(exc)

    thread = threading.Thread(target=target, name="e2e-crowd", daemon=True)
    thread.start()
    thread.join(timeout=BUDGET_S + 20)
    if thread.is_alive():
        pytest.fail(f"the crowd did not finish within {BUDGET_S + 20} s")
    if errors:
        raise errors[0]


def _report(crowd: _Crowd, server_url: str, wall: float, rss: dict[str, float],
            cpu: dict[str, float]) -> str:
    visits = crowd.visits
    reruns = [v for v in visits if v.rerun_ms is not None]
    drawn = [v for v in visits if v.drawn_ms is not None]
    loads = [v.load_s for v in visits if v.load_s is not None]
    lines = [
        f"Load test: {CLIENTS} Chromium contexts opened at once on one server ({server_url}), "
        f"{os.cpu_count()} CPU cores. All pages drawn after "
        f"{crowd.loaded_after_s or float('nan'):.1f} s; then every visit moved a control at "
        f"once; whole run {wall:.1f} s.",
        "Server RSS (python process tree, MiB): " + ", ".join(
            f"{name} {value:.0f}" for name, value in rss.items()),
        "Server CPU time used (s; the browsers share the same 2 cores): " + ", ".join(
            f"{name} {value:.1f}" for name, value in cpu.items()),
    ]
    if reruns:
        slowest = max(reruns, key=lambda v: v.rerun_ms)
        lines.append(
            f"Slowest rerun, input -> the run's end reaching the browser (script_finished): "
            f"{slowest.rerun_ms / 1e3:.2f} s "
            f"({slowest.where}, {slowest.moved}); median "
            f"{statistics.median(v.rerun_ms for v in reruns) / 1e3:.2f} s over {len(reruns)}.")
    if drawn:
        slowest = max(drawn, key=lambda v: v.drawn_ms)
        lines.append(f"Slowest rerun, input -> drawn and calm for {QUIET_MS} ms: "
                     f"{slowest.drawn_ms / 1e3:.2f} s ({slowest.where}).")
    if loads:
        lines.append(f"Page loads (link -> first run drawn), all at once: median "
                     f"{statistics.median(loads):.1f} s, slowest {max(loads):.1f} s.")
    reconnected = [v for v in visits if v.sockets > 1]
    if reconnected:
        lines.append(f"Pages whose websocket reconnected: {len(reconnected)} "
                     f"({', '.join(f'#{v.n}' for v in reconnected)}).")
    lines.append("Per visit: link | load s | rerun s (script finished) | drawn s | websockets | "
                 "move | problems")
    for v in visits:
        def fmt(x, scale=1.0, digits=1):
            return "-" if x is None else f"{x / scale:.{digits}f}"

        lines.append(f"  {v.where[:80]} | {fmt(v.load_s)} | {fmt(v.rerun_ms, 1e3, 2)} | "
                     f"{fmt(v.drawn_ms, 1e3, 2)} | {v.sockets} | {v.moved or '-'} | "
                     f"{'; '.join(v.problems) or 'ok'}")
    return "\n".join(lines)


@pytest.mark.load
def test_twenty_browsers_at_once(fresh_server, chromium_launch_options: dict,
                                 screenshot_dir: Path):
    server = fresh_server()
    assert server.url.startswith("http://127.0.0.1:"), server.url
    assert server.proc is not None
    crowd = _Crowd(_crowd(), server.proc.pid)

    rss = {"before (idle, fresh)": _tree_rss_mb(crowd.pid)}
    cpu_start = _tree_cpu_s(crowd.pid)
    sampler = _Sampler(crowd.pid)
    sampler.start()
    started = time.monotonic()
    try:
        _run_in_thread(chromium_launch_options, server.url, crowd)
    finally:
        peak = sampler.stop()
    wall = time.monotonic() - started
    if crowd.rss_loaded is not None:
        rss["all 20 pages open"] = crowd.rss_loaded
    rss["peak"] = peak
    time.sleep(2)  # the contexts are closed: let the server drop their sessions
    rss["after (contexts closed)"] = _tree_rss_mb(crowd.pid)
    cpu_end = _tree_cpu_s(crowd.pid)
    cpu = {"whole run": cpu_end - cpu_start}
    if crowd.cpu_loaded is not None:
        cpu["20 first runs"] = crowd.cpu_loaded - cpu_start
        cpu["20 simultaneous reruns"] = cpu_end - crowd.cpu_loaded

    report = _report(crowd, server.url, wall, rss, cpu)
    (screenshot_dir / "load_report.txt").write_text(report + "\n", encoding="utf-8")
    print("\n" + report)

    failed = [f"{v.where}: {'; '.join(v.problems)}" for v in crowd.visits if v.problems]
    log = f"\n--- server log ---\n{server.log(6_000)}" if failed else ""
    assert not failed, "visits that failed:\n" + "\n".join(failed) + log
    after = rss["after (contexts closed)"]
    assert after < RSS_LIMIT_MB, f"server RSS after the crowd: {after:.0f} MiB"
