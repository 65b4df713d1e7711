"""Browser redraw time of every page: ``python -m benchmarks.redraw [--presses 3] [--all]
[--controls]``.

Not a test (the numbers depend on the machine and on its load): it starts its own
``streamlit run dashboard.py``, opens each page (home and every ``pages/*.py``) in
headless Chromium at 1280 × 720 (``--presenter``: in presenter mode), and moves a
slider of the main area with its arrow keys (right, then left, alternately, so the
value goes back and forth; left first for a slider at its largest value). By default
that is the page's first slider; ``--all`` measures every slider of the page. Sliders
inside a form (lesson 8's training settings) are left out: moving them redraws nothing
until the form is submitted.

``--controls`` measures the other controls of the main area instead, every one in turn,
with the keyboard and back and forth as a slider: a select box chooses a neighbouring
option (the next one, or the previous one from its last option), then its own option
again (arrow keys in its open list, then Enter, which is the key press timed); a radio
moves right, then left (left first from its last option); a toggle or a checkbox flips
with Space; a number input steps up, then down (down first at its largest value), which
Streamlit commits at once. Left out as for sliders: controls in a form, in a closed
expander, on a tab not shown, disabled ones, a radio with no option chosen, an empty
number input, and text inputs. ``--controls --all`` measures every slider, then every
other control. A control that cannot be driven is reported as "failed: <reason>", and
the run goes on; a select box with a single option is reported as not measured.

For each press it takes the time from the key press to the last change of the page's
DOM that can be seen, or the end of the last long task (Plotly drawing), once the page has
been calm for 0.5 s and its script run has finished. Changes inside a ``<canvas>`` are
left out: a canvas's children are fallback content that is never painted, and Glide's
grid (``st.dataframe``, ``st.data_editor``) rewrites the accessibility table it keeps
there 200 ms after each draw (a debounce in its code), which made every page with a grid
look 200 ms slower than what it showed. It prints the median and the range per slider
(per control, with its kind), with the machine's load average before and after and the
share of CPU time its host took for other virtual machines during the run ("stolen"),
as what it measured is shared with whatever else runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from conftest import CHROMIUM, CHROMIUM_ARGS, StreamlitServer  # noqa: E402
from playwright.sync_api import Error as PlaywrightError  # noqa: E402
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError  # noqa: E402
from test_pages import PAGES, _open, _runs_finished, _wait_idle  # noqa: E402

VIEWPORT = {"width": 1280, "height": 720}
SLOW_MS = 500  # a redraw slower than this is counted in the summary
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
# Marks the main area's other controls that a key press can change with
# data-bench-control="0", "1", ... on the input that takes the key (for a radio, its
# chosen option), and returns [kind, label, at its end] for each: at its end, a radio
# on its last option or a number input at its largest value goes back first. Left out:
# controls in a form or a closed expander, not shown (a tab not chosen), disabled, a radio
# with no option chosen, an empty number input.
_MARK_CONTROLS_JS = """
() => {
  document.querySelectorAll("[data-bench-control]")
    .forEach((el) => el.removeAttribute("data-bench-control"));
  const inputs = {
    stSelectbox: 'input[role="combobox"]',
    stRadio: 'input[type="radio"]:checked',
    stCheckbox: 'input[type="checkbox"]',
    stNumberInput: 'input[type="number"]',
  };
  const selector = Object.keys(inputs).map((id) => `[data-testid="stMain"] [data-testid="${id}"]`);
  const found = [];
  for (const box of document.querySelectorAll(selector.join(", "))) {
    const input = box.querySelector(inputs[box.dataset.testid]);
    if (!input || input.disabled || !box.checkVisibility()
        || box.closest('[data-testid="stForm"]') || box.closest("details:not([open])")) continue;
    if (input.type === "number" && input.value === "") continue;
    const kind = {stSelectbox: "select box", stRadio: "radio", stNumberInput: "number",
                  stCheckbox: input.getAttribute("role") === "switch" ? "toggle" : "checkbox",
                 }[box.dataset.testid];
    const radios = [...box.querySelectorAll('input[type="radio"]')];
    const atEnd = kind === "radio" ? input === radios[radios.length - 1]
      : kind === "number" ? input.max !== "" && Number(input.value) >= Number(input.max)
      : false;
    const label = box.querySelector('[data-testid="stWidgetLabel"]');
    const text = (label ? label.innerText : input.getAttribute("aria-label") || "")
      .replace(/\\s+/g, " ").trim();
    input.setAttribute("data-bench-control", String(found.length));
    found.push([kind, text || `${kind} ${found.length + 1}`, atEnd]);
  }
  return found;
}
"""
# The open list of a select box ``field``: its options' keys (the option's index), the
# chosen one and the active one (the one Enter chooses); null while the list is closed,
# has no active option, or its active option is still ``was``.
_LISTBOX_JS = """
([field, was]) => {
  if (field.getAttribute("aria-expanded") !== "true") return null;
  const list = document.getElementById(field.getAttribute("aria-controls"));
  const active = document.getElementById(field.getAttribute("aria-activedescendant"));
  if (!list || !active || active.dataset.key === was) return null;
  const options = [...list.querySelectorAll('[role="option"]')];
  const chosen = options.find((o) => o.getAttribute("aria-selected") === "true");
  return {keys: options.map((o) => o.dataset.key), active: active.dataset.key,
          chosen: chosen ? chosen.dataset.key : null};
}
"""
# The select box ``field`` has taken a choice: its list is closed and it shows another
# text than ``was`` (or it was drawn anew).
_CHOSEN_JS = """
([field, was]) => !field.isConnected
  || (field.getAttribute("aria-expanded") !== "true" && field.value !== was)
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
# The last change that can be seen: DOM changes inside a <canvas> (Glide's accessibility
# table, rewritten 200 ms after the grid draws) are never painted, and are left out.
_REDRAW_JS = """
() => Math.max(window.__stLastPaintedMutation, window.__stLastLongTask) - window.__benchKeyAt
"""
# The two keys that move a control there and back (a select box has its own way).
_STEP_KEYS = {
    "radio": ("ArrowRight", "ArrowLeft"),
    "toggle": ("Space", "Space"),
    "checkbox": ("Space", "Space"),
    "number": ("ArrowUp", "ArrowDown"),
}
LIST_OPEN_TIMEOUT_MS = 5_000


class NotDrivenError(Exception):
    """A control the benchmark could not move: the message says why."""


class OneOptionError(NotDrivenError):
    """A select box with one option: there is nothing to move it to, and nothing failed."""


@dataclass(frozen=True)
class Control:
    """A control of the main area other than a slider. A rerun may draw controls anew,
    add or remove some: the control is found again by its kind, its label and ``nth``,
    its rank among the controls of the same kind and label."""

    kind: str  # "select box", "radio", "toggle", "checkbox" or "number"
    label: str
    nth: int


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


def find_controls(page) -> list[Control]:
    """The main area's controls other than sliders that a key press can change, in page
    order."""
    seen: Counter[tuple[str, str]] = Counter()
    controls = []
    for kind, label, _ in page.evaluate(_MARK_CONTROLS_JS):
        controls.append(Control(kind, label, seen[kind, label]))
        seen[kind, label] += 1
    return controls


def locate(page, control: Control):
    """The input of ``control`` that takes its key presses, found again as the page is
    now, and whether it is at its end (moves back first)."""
    found = page.evaluate(_MARK_CONTROLS_JS)
    same = [i for i, (kind, label, _) in enumerate(found)
            if (kind, label) == (control.kind, control.label)]
    if control.nth >= len(same):
        raise NotDrivenError("not found on the page any more")
    index = same[control.nth]
    return page.locator(f'[data-bench-control="{index}"]'), found[index][2]


def open_list(page, field) -> dict:
    """Press ArrowDown in the focused select box ``field`` until its list is open with an
    active option; the list as ``_LISTBOX_JS`` reads it.

    Pressed again if the list is not there: a list can close as it opens (seen in the
    e2e tests after a scroll)."""
    handle = field.element_handle()
    for _ in range(3):
        page.keyboard.press("ArrowDown")
        try:
            return page.wait_for_function(_LISTBOX_JS, arg=[handle, None],
                                          timeout=LIST_OPEN_TIMEOUT_MS).json_value()
        except PlaywrightTimeoutError:
            continue
    raise NotDrivenError("its list of options did not open")


def choose_other_option(page, field, own: str | None) -> str:
    """Choose another option in the focused select box ``field``, with the keyboard only.

    ``own`` is the key of the option the box had before its first press (None on the
    first press): the box goes from its own option to a neighbour (the next one, or the
    previous one from the last option) and back. Returns ``own``.

    The list is opened and the option chosen again if Enter chose nothing: the main area
    can scroll as the list opens, and a scroll closes the list, at times before the Enter
    (seen on lesson 4 when the arrow key came at once after the focus).
    """
    shown, handle = field.input_value(), field.element_handle()
    for _ in range(3):
        try:
            own = _choose_in_list(page, field, own)
            page.wait_for_function(_CHOSEN_JS, arg=[handle, shown],
                                   timeout=LIST_OPEN_TIMEOUT_MS)
            return own
        except PlaywrightTimeoutError:
            continue
    raise NotDrivenError("no option chosen: its list closed before Enter, three times")


def _choose_in_list(page, field, own: str | None) -> str:
    """Open the list of the focused select box ``field``, move to the option to choose
    and press Enter; return ``own`` (see ``choose_other_option``), found on the first press.

    Options are told apart by their key in the list (their index), not by the text the
    box shows, which may differ from the option's text. The arrow keys move in the open
    list; Enter chooses, so it is the last key pressed before the rerun.
    """
    listbox = open_list(page, field)
    keys, chosen = listbox["keys"], listbox["chosen"]
    own = own if own is not None else chosen
    if own is None:
        raise NotDrivenError("no option chosen in its list")
    if own not in keys:
        raise NotDrivenError(f"its own option (key {own}) is gone from its list")
    if len(keys) < 2:
        raise OneOptionError("not measured: one option, nothing else to choose")
    if chosen != own:
        target = own
    else:
        at = keys.index(own)
        target = keys[at + 1] if at + 1 < len(keys) else keys[at - 1]
    active, handle = listbox["active"], field.element_handle()
    for _ in range(len(keys)):
        if active == target:
            break
        down = active not in keys or keys.index(active) < keys.index(target)
        page.keyboard.press("ArrowDown" if down else "ArrowUp")
        active = page.wait_for_function(_LISTBOX_JS, arg=[handle, active],
                                        timeout=LIST_OPEN_TIMEOUT_MS).json_value()["active"]
    if active != target:
        raise NotDrivenError(f"option (key {target}) not reached in its list")
    page.keyboard.press("Enter")
    return own


def control_times(page, control: Control, presses: int) -> list[float]:
    """Milliseconds from key press to calm, per press, for ``control``."""
    times = []
    keys = list(_STEP_KEYS.get(control.kind, ()))
    own = None
    for n in range(presses):
        field, at_end = locate(page, control)
        if n == 0 and at_end:
            keys.reverse()
        field.scroll_into_view_if_needed()
        field.focus()
        before = _runs_finished(page)
        if control.kind == "select box":
            own = choose_other_option(page, field, own)
        else:
            page.keyboard.press(keys[n % 2])
        _wait_idle(page, before)
        times.append(page.evaluate(_REDRAW_JS))
    return times


def control_result(page, control: Control, presses: int) -> list[float] | str:
    """``control_times``, or "failed: <reason>" for a control that could not be moved or
    whose rerun did not come (or why a control with one option was not measured)."""
    try:
        return control_times(page, control, presses)
    except OneOptionError as exc:
        return str(exc)
    except (NotDrivenError, AssertionError, PlaywrightError) as exc:
        return f"failed: {str(exc).splitlines()[0]}"


def measure_page(page, base_url: str, path: str, query: str, presses: int, every: bool,
                 controls: bool = False) -> list[tuple[str, str, list[float] | str]] | str:
    """(kind, label, times or why it failed) for the sliders and controls measured; or why
    none was. Sliders as ``every`` says unless only ``controls`` are asked for."""
    _open(page, base_url, path, query)
    page.evaluate(_KEY_JS)
    rows: list[tuple[str, str, list[float] | str]] = []
    if every or not controls:
        labels = page.evaluate(_MARK_SLIDERS_JS)
        if not labels and not controls:
            return "no slider outside a form"
        chosen = range(len(labels)) if every else range(1)
        rows += [("slider", labels[i], press_times(page, i, presses)) for i in chosen]
    if controls:
        rows += [(c.kind, c.label, control_result(page, c, presses))
                 for c in find_controls(page)]
        if not rows:
            return "no control to measure"
    return rows


def _group(kind: str) -> str:
    """How the table and the summary count a kind: as a slider or as a control."""
    return "slider" if kind == "slider" else "control"


def print_rows(name: str, rows, presses: int, seconds: float, with_kind: bool) -> None:
    """The table's lines for one page: one per slider or control, then a count."""
    for kind, label, result in rows:
        head = f"{name:<22} {kind:<10} " if with_kind else f"{name:<22} "
        if isinstance(result, str):
            print(f"{head}{label[:34]:<34} {result}", flush=True)
        else:
            print(f"{head}{label[:34]:<34} {statistics.median(result):9.0f} "
                  f"{min(result):6.0f} {max(result):6.0f}", flush=True)
    kinds = Counter(_group(kind) for kind, _, _ in rows)
    failed = sum(1 for *_, result in rows if _failed(result))
    counted = ", ".join(f"{n} {what}(s)" for what, n in kinds.items())
    counted += f", {failed} failed" if failed else ""
    print(f"{'':<22} ({counted}, {presses} presses each, {seconds:.0f} s)", flush=True)


def _failed(result) -> bool:
    return isinstance(result, str) and result.startswith("failed")


def summary(measured: list[tuple[float, str, str, str]], failed: int) -> str:
    """The slowest median and how many sliders and controls are over ``SLOW_MS``, from
    (median, page, kind, label) per slider or control."""
    slowest = max(measured)
    what = slowest[3] if slowest[2] == "slider" else f"{slowest[2]} {slowest[3]}"
    counts = []
    for group in ("slider", "control"):
        medians = [t for t, _, kind, _ in measured if _group(kind) == group]
        if medians:
            over = sum(1 for t in medians if t > SLOW_MS)
            counts.append(f"{over} of {len(medians)} {group}(s)")
    line = (f"slowest median: {slowest[0]:.0f} ms ({slowest[1]}, {what}); "
            f"{' and '.join(counts)} over {SLOW_MS} ms")
    return line + (f"; {failed} control(s) failed" if failed else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=5,
                        help="key presses per slider or control")
    parser.add_argument("--all", action="store_true", help="every slider, not the first")
    parser.add_argument("--controls", action="store_true",
                        help="select boxes, radios, toggles, checkboxes and number inputs "
                             "instead of sliders (with --all: as well as every slider)")
    parser.add_argument("--presenter", action="store_true", help="in presenter mode")
    parser.add_argument("pages", nargs="*", help="only pages whose path contains one of these")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    query = "presenter=true" if args.presenter else ""
    paths = [path for _, path in PAGES
             if not args.pages or any(p.lower() in (path or "home").lower() for p in args.pages)]
    load_before, ticks_before = os.getloadavg(), cpu_ticks()
    server = StreamlitServer().start()
    measured, failed = [], 0
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                         headless=True)
            context = browser.new_context(viewport=VIEWPORT)
            context.set_default_timeout(120_000)
            kind_column = f"{'kind':<10} " if args.controls else ""
            what = "control" if args.controls else "slider"
            print(f"{'page':<22} {kind_column}{what:<34} {'median ms':>9} {'min':>6} {'max':>6}")
            for path in paths:
                name = path or "home"
                page = context.new_page()
                started = time.monotonic()
                try:
                    result = measure_page(page, server.url, path, query, args.presses, args.all,
                                          args.controls)
                except Exception as exc:  # noqa: BLE001 - report it and go on to the next page
                    result = f"not measured: {str(exc).splitlines()[0]}"
                page.close()
                if isinstance(result, str):
                    print(f"{name:<22} {result}", flush=True)
                    continue
                print_rows(name, result, args.presses, time.monotonic() - started, args.controls)
                for kind, label, times in result:
                    if isinstance(times, str):
                        failed += _failed(times)
                    else:
                        measured.append((statistics.median(times), name, kind, label))
            browser.close()
    finally:
        server.close()
    load_after, ticks_after = os.getloadavg(), cpu_ticks()
    if measured:
        print(summary(measured, failed))
    print(f"machine: {os.cpu_count()} cores; load average (1, 5, 15 min) before "
          f"{', '.join(f'{x:.1f}' for x in load_before)}, after "
          f"{', '.join(f'{x:.1f}' for x in load_after)}; "
          f"{cpu_share(ticks_before, ticks_after)}")


if __name__ == "__main__":
    main()
