"""The machinery behind test_fuzz.py: values for a page's controls, edits of its data
editors, fuzz rounds, and failure reports with a replay to paste.

Controls are re-read after every run, because they appear, disappear and change their
ranges. Only the kinds of control the app uses are handled (``PICKERS``; data editors
with a fixed number of rows); ``undriven`` lists anything else a page shows, and a test
fails on it. Widgets whose key is in ``conftest.NOT_FUZZED`` are never set or clicked.

Environment:
    FUZZ_ROUNDS  rounds per page (default 25; CI's deep run uses 200)
    FUZZ_SEED    seed of the run (default 1234); a failure prints the seed and the
                 settings to reproduce it.
    FUZZ_PAGE_SECONDS  a page's rounds stop once they have taken this long (default 20;
                 at least MIN_ROUNDS run, and the count is printed). Lesson 7 measures
                 timings on every run, and lesson 11 runs the language model over
                 hundreds of tokens: 1 to 6 s a round on 2 busy cores, so that without
                 the limit CI's 200 rounds of these pages would take most of the suite
                 (with 60 s they took 3 of its 10 minutes). The lighter pages run
                 all their rounds within it. "inf" for a deep run.
    FUZZ_MAX_SECONDS  if set, a script run slower than this fails too (a page should take
                 about 1.5 s at the largest settings; off by default, as shared
                 CI machines are noisy).

AppTest has no public way to send an invalid value or to choose an option by its label,
so this module uses three private parts of Streamlit 1.67's testing API (requirements.txt
admits only the Streamlit versions the suite has passed on): ``Widget._value`` (to undo
a value AppTest cannot send), ``Widget._widget_state`` (to serialise a value at once, so
that a bad one fails here and not in the run), and the subclass in ``choose_by_label``.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import os
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conftest import NOT_FUZZED, new_app, page_at_defaults, problems, run_page
from streamlit.proto.NumberInput_pb2 import NumberInput as NumberInputProto
from streamlit.proto.Slider_pb2 import Slider as SliderProto
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Dataframe, Widget

FUZZ_ROUNDS = int(os.environ.get("FUZZ_ROUNDS", "25"))
FUZZ_SEED = int(os.environ.get("FUZZ_SEED", "1234"))
FUZZ_MAX_SECONDS = float(os.environ.get("FUZZ_MAX_SECONDS") or "inf")
FUZZ_PAGE_SECONDS = float(os.environ.get("FUZZ_PAGE_SECONDS") or "20")
MIN_ROUNDS = 8
RUN_TIMEOUT = 30  # seconds per script run
MAX_DISTINCT_FAILURES = 3  # keep fuzzing after a failure to report a few distinct ones

LONG_TEXT = " ".join(["attention"] * 499 + ["end."])  # 500 words
NASTY_TEXT = [
    "",
    "   ",
    "a",
    LONG_TEXT,
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "Ünïcødé 你好 🙂",
    "1e300",
    "nan",
    "-inf",
]
# Values a person can type into a number input with no bound on that side.
FLOAT_EXTREMES = [0.0, 1.0, -1.0, 0.5, 1e-9, -1e-9, 1e6, -1e6, 1e300, -1e300]
# What a browser's data editor can send for a number cell (JSON: no NaN or inf).
CELL_NUMBERS = [None, 0.0, 1.0, -1.0, 0.5, 1e-300, 1e6, -1e6, 1e300, -1e300]
NONSENSE_PARAMS = [
    "nonsense",
    "",
    "-1",
    "1e300",
    "nan",
    "inf",
    "-inf",
    "999999999",
    "[1, 2]",
    "<script>alert(1)</script>",
]

# ---------------------------------------------------------------- values for widgets


def _biased_index(n: int, rng: random.Random) -> int:
    """An index in range(n): first or last with probability 0.35 each, else uniform."""
    r = rng.random()
    if r < 0.35:
        return 0
    if r < 0.70:
        return n - 1
    return rng.randrange(n)


class _Skip:
    def __repr__(self) -> str:
        return "<skip>"


SKIP = _Skip()  # no value to try for this widget
CLICK = "click"


def _slider_value(w: Widget, rng: random.Random) -> int | float:
    lo, hi, step = w.proto.min, w.proto.max, w.proto.step or 1
    n_steps = max(0, int(math.floor((hi - lo) / step + 1e-9)))
    k = _biased_index(n_steps + 1, rng)
    raw = hi if k == n_steps else lo + k * step
    if w.proto.data_type == SliderProto.INT:
        return int(round(raw))
    return min(max(float(f"{raw:.12g}"), lo), hi)  # 0.1 + 2 * 0.1 -> 0.3


def _choice_value(w: Widget, rng: random.Random) -> Any:
    return w.options[_biased_index(len(w.options), rng)] if w.options else SKIP


def _multi_value(w: Widget, rng: random.Random) -> list:
    opts = list(w.options)
    limit = w.proto.max_selections or len(opts)
    r = rng.random()
    if r < 0.25:
        return []
    if r < 0.5:
        return opts[:limit]
    return rng.sample(opts, rng.randint(0, min(limit, len(opts))))


def _number_value(w: Widget, rng: random.Random) -> float | None:
    proto = w.proto
    lo = proto.min if proto.has_min else None
    hi = proto.max if proto.has_max else None
    if not proto.HasField("default") and rng.random() < 0.1:
        return None  # an input that starts empty can be cleared again
    if lo is not None and hi is not None:
        r = rng.random()
        if r < 0.35:
            return float(lo)
        if r < 0.70:
            return float(hi)
        return rng.uniform(lo, hi)
    pool = [v for v in FLOAT_EXTREMES if (lo is None or v >= lo) and (hi is None or v <= hi)]
    pool += [float(b) for b in (lo, hi) if b is not None]
    return rng.choice(pool)


def _text_value(w: Widget, rng: random.Random) -> str:
    text = rng.choice(NASTY_TEXT)
    return text[: w.proto.max_chars] if w.proto.max_chars else text  # the browser's limit


# The kinds of widget the pages use, each with a random allowed value.
PICKERS = {
    "slider": _slider_value,
    "select_slider": _choice_value,
    "selectbox": _choice_value,
    "radio": _choice_value,
    "multiselect": _multi_value,
    "toggle": lambda w, rng: rng.random() < 0.5,
    "number_input": _number_value,
    "text_input": _text_value,
    "text_area": _text_value,
    "button": lambda w, rng: CLICK,
}
# Widgets whose options reach the browser as labels (``format_func`` applied).
OPTION_WIDGETS = {"selectbox", "radio", "select_slider", "multiselect"}
# Shown but not fuzzed: the pages' downloads never rerun them (on_click="ignore").
NOT_SETTINGS = {"download_button"}


def _extreme(w: Widget, end: str) -> Any:
    """The value of ``w`` at one end: "min" (first option, off) or "max" (last, on)."""
    last = end == "max"
    if w.type == "slider":
        raw = w.proto.max if last else w.proto.min
        return int(raw) if w.proto.data_type == SliderProto.INT else raw
    if w.type in {"select_slider", "selectbox", "radio"}:
        return w.options[-1 if last else 0] if w.options else SKIP
    if w.type == "toggle":
        return last
    if w.type == "number_input":
        if last:
            return float(w.proto.max) if w.proto.has_max else 1e6
        return float(w.proto.min) if w.proto.has_min else -1e6
    return SKIP


# ---------------------------------------------------------------- the page's controls


def controls(at: AppTest) -> list[Widget]:
    """The enabled widgets of the current run that the fuzzer sets (NOT_FUZZED left out)."""
    return [
        w
        for w in at
        if isinstance(w, Widget)
        and w.type in PICKERS
        and not w.proto.disabled
        and w.key not in NOT_FUZZED
    ]


def editors(at: AppTest) -> list[Dataframe]:
    """The keyed, enabled data editors of the current run (NOT_FUZZED left out)."""
    return [
        d for d in at.data_editor if d.key and not d.proto.disabled and d.key not in NOT_FUZZED
    ]


def undriven(at: AppTest) -> list[str]:
    """Controls of the current run that the fuzzer cannot drive, described.

    Only the kinds the app uses have a picker: single-value int and float sliders, float
    number inputs, fixed-size data editors, and the widget types in PICKERS.
    """
    found = []
    for w in at:
        if not isinstance(w, Widget) or w.key in NOT_FUZZED or w.type in NOT_SETTINGS:
            continue
        if w.type not in PICKERS:
            found.append(f"{widget_ref(w)}: no picker for a {w.type}")
        elif w.type in {"slider", "select_slider"} and len(w.proto.default) != 1:
            found.append(f"{widget_ref(w)}: a range")
        elif w.type == "slider" and w.proto.data_type not in (SliderProto.INT, SliderProto.FLOAT):
            found.append(f"{widget_ref(w)}: a date or time slider")
        elif w.type == "number_input" and w.proto.data_type != NumberInputProto.FLOAT:
            found.append(f"{widget_ref(w)}: an integer number input")
    found += [f"{editor_ref(d)}: rows can be added" for d in editors(at)
              if d.editing_mode != "fixed"]
    return found


@functools.cache
def linked_keys(script: Path) -> list[str]:
    """The keys of the widgets and data editors a page shows at its defaults (NOT_FUZZED
    left out): the query parameters a link to the page can carry."""
    at = page_at_defaults(script)
    keys = {w.key for w in at if isinstance(w, Widget) and w.key} - set(NOT_FUZZED)
    return sorted(keys | {d.key for d in editors(at)})


def open_link(script: Path, params: dict[str, str]) -> AppTest:
    """Open a page with these query parameters, as a link would, and run it."""
    at = new_app(script, timeout=RUN_TIMEOUT)
    at.query_params = params
    return at.run()


# ---------------------------------------------------------------- setting a widget


def widget_ref(w: Widget) -> str:
    """Python that finds the widget in an AppTest, for a reproduction snippet."""
    if w.key:
        return f"at.{w.type}(key={w.key!r})"
    return f"at.{w.type}[label={getattr(w, 'label', '')!r}]"


def show(value: Any) -> str:
    """Python for ``value``, with the 500-word sentence (or its start) as LONG_TEXT."""
    if isinstance(value, str) and len(value) > 40 and LONG_TEXT.startswith(value):
        return "LONG_TEXT" if value == LONG_TEXT else f"LONG_TEXT[:{len(value)}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{show(k)}: {show(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + "".join(f"{show(v)}, " for v in value).rstrip(" ") + ")"
    return repr(value)


@dataclass
class Setting:
    """One change made to a page, replayable as a line of Python."""

    ref: str
    value: Any
    by_label: bool = False

    def code(self) -> str:
        if self.value is CLICK:
            return f"{self.ref}.click()"
        if self.ref.startswith("at.session_state"):
            return f"{self.ref} = {show(self.value)}"
        if self.by_label:
            return f"choose_by_label({self.ref}, {show(self.value)})  # from fuzzing.py"
        return f"{self.ref}.set_value({show(self.value)})"


def replay(settings: list[Setting]) -> str:
    """The settings as lines of Python, indented for a failure message."""
    return "\n".join(f"  {s.code()}" for s in settings) or "  (none)"


def _same(current: Any, value: Any) -> bool:
    if isinstance(current, (list, tuple)) and isinstance(value, (list, tuple)):
        return list(current) == list(value)
    return type(current) is type(value) and current == value


def apply(w: Widget, value: Any) -> Setting | None:
    """Set (or click) one widget; None when that changes nothing or AppTest cannot send it.

    An option widget's value is one of its labels: when ``set_value`` cannot send a
    label, it is chosen by label instead (``choose_by_label``).
    """
    if value is SKIP or (value is not CLICK and _same(w.value, value)):
        return None
    if value is CLICK:
        w.click()
        return Setting(widget_ref(w), CLICK)
    old = w._value
    try:
        w.set_value(value)
        w._widget_state  # noqa: B018 - serialise now, so a bad value fails here, not in run()
    except (ValueError, TypeError, KeyError, IndexError):
        w._value = old
        labels = value if isinstance(value, list) else [value]
        if w.type in OPTION_WIDGETS and all(v in w.options for v in labels):
            choose_by_label(w, value)
            return Setting(widget_ref(w), value, by_label=True)
        return None
    return Setting(widget_ref(w), value)


_BY_LABEL: dict[type, type] = {}


def choose_by_label(w: Widget, value: str | list[str]) -> Widget:
    """Choose options by the labels the page shows, exactly as a browser does.

    Works around an upstream limitation of AppTest: ``set_value`` on an option
    widget wants the raw option, and maps it through the page's ``format_func`` to find
    its label; the fuzzer knows only the labels (``w.options``), since the raw options
    stay on the server. With ``format_func=LABELS.get`` (lesson 1's examples) a label
    maps to None and the widget state breaks. The browser sends the labels themselves,
    so this widget object gets a subclass whose ``_widget_state`` (private) does too.
    """
    cls = type(w)
    if cls not in _BY_LABEL:

        def _widget_state(self) -> WidgetState:
            ws = WidgetState()
            ws.id = self.id
            if isinstance(self._labels, list):
                ws.string_array_value.data[:] = self._labels
            else:
                ws.string_value = self._labels
            return ws

        _BY_LABEL[cls] = type(f"ByLabel{cls.__name__}", (cls,), {"_widget_state":
                                                                  property(_widget_state)})
    labels = list(value) if isinstance(value, list) else value
    if w.type == "select_slider" and not isinstance(labels, list):
        labels = [labels]  # a select slider's state is a list, even for one value
    w.__class__ = _BY_LABEL[cls]
    w._labels = labels
    w._value = value
    return w


# ---------------------------------------------------------------- data editors


def editor_ref(d: Dataframe) -> str:
    return f"at.session_state[{d.key!r}]"


def _no_edits() -> dict[str, Any]:
    return {"edited_rows": {}, "added_rows": [], "deleted_rows": []}


def editor_edits(at: AppTest, d: Dataframe) -> dict[str, Any]:
    """The editor's current edit state, as AppTest accepts it in session state."""
    try:
        edits = at.session_state[d.key]
    except KeyError:
        return _no_edits()
    if isinstance(edits, str):
        edits = json.loads(edits)
    if not isinstance(edits, dict):
        return _no_edits()
    edits = {**_no_edits(), **copy.deepcopy(edits)}
    edits["edited_rows"] = {int(r): cells for r, cells in edits["edited_rows"].items()}
    return edits


def editor_columns(d: Dataframe) -> list[tuple[str, str, dict]]:
    """(name, kind, type_config) of each column a student can edit."""
    config = json.loads(d.proto.columns or "{}")
    frame = d.value
    columns = []
    for name in frame.columns:
        cfg = config.get(str(name), {})
        if cfg.get("disabled") or cfg.get("hidden"):
            continue
        type_config = cfg.get("type_config", {})
        kind = type_config.get("type") or {"b": "checkbox", "i": "number", "u": "number",
                                           "f": "number"}.get(frame[name].dtype.kind, "text")
        columns.append((str(name), kind, type_config))
    return columns


def _cell_pool(kind: str, cfg: dict) -> list[Any]:
    if kind == "number":
        lo, hi = cfg.get("min_value"), cfg.get("max_value")
        pool = [v for v in CELL_NUMBERS
                if v is None or ((lo is None or v >= lo) and (hi is None or v <= hi))]
        return pool + [b for b in (lo, hi) if b is not None]
    if kind == "text":
        return [None] + [t[: cfg.get("max_chars") or None] for t in NASTY_TEXT]
    if kind == "checkbox":
        return [None, True, False]
    return []


def _cell_extreme(kind: str, cfg: dict, end: str) -> Any:
    """One end of a cell: "cleared", "min" (-1e300 / "") or "max" (1e300 / LONG_TEXT)."""
    if end == "cleared":
        return None
    if kind == "number":
        bound = cfg.get("max_value" if end == "max" else "min_value")
        return bound if bound is not None else (1e300 if end == "max" else -1e300)
    if kind == "text":
        return LONG_TEXT[: cfg.get("max_chars") or None] if end == "max" else ""
    if kind == "checkbox":
        return end == "max"
    return SKIP


def edit_editor(at: AppTest, d: Dataframe, cells: list[tuple[int, str, Any]], *,
                reset: bool = False) -> Setting | None:
    """Add cell edits (row, column, value) to an editor's edits; ``reset`` undoes the
    earlier ones first. The whole new edit state goes into ``at.session_state`` (the
    only way AppTest can edit a data editor), so the returned setting replays exactly."""
    edits = editor_edits(at, d)
    new = _no_edits() if reset else copy.deepcopy(edits)
    # Edits of rows the table no longer has are dropped, as the browser does.
    new["edited_rows"] = {r: c for r, c in new["edited_rows"].items() if r < d.value.shape[0]}
    for row, name, value in cells:
        if value is not SKIP:
            new["edited_rows"].setdefault(row, {})[name] = value
    if new == edits:
        return None
    at.session_state[d.key] = new
    return Setting(editor_ref(d), new)


def fuzz_editor(at: AppTest, d: Dataframe, rng: random.Random) -> Setting | None:
    """Edit one to three random cells.

    One time in four the earlier edits are undone first, as a student fixing the
    table would; otherwise one bad cell keeps the page in its error state for good.
    """
    reset = rng.random() < 0.25
    columns = [(n, k, c) for n, k, c in editor_columns(d) if _cell_pool(k, c)]
    n_rows = d.value.shape[0]
    cells = []
    if columns and n_rows:
        for _ in range(rng.randint(1, 3)):
            name, kind, cfg = rng.choice(columns)
            cells.append((rng.randrange(n_rows), name, rng.choice(_cell_pool(kind, cfg))))
    return edit_editor(at, d, cells, reset=reset)


def fill_editor(at: AppTest, d: Dataframe, end: str) -> Setting | None:
    """Every editable cell at one end (see ``_cell_extreme``)."""
    cells = [(row, name, _cell_extreme(kind, cfg, end))
             for row in range(d.value.shape[0]) for name, kind, cfg in editor_columns(d)]
    return edit_editor(at, d, cells)


def state_of(at: AppTest) -> dict[str, Any]:
    """The value of every settable widget and every editor's edits, by reference."""
    state = {widget_ref(w): w.value for w in controls(at) if w.type != "button"}
    for d in editors(at):
        state[editor_ref(d)] = editor_edits(at, d)
    return state


# ---------------------------------------------------------------- random rounds


def fuzz(at: AppTest, script: Path, rounds: int = FUZZ_ROUNDS,
         seed: int = FUZZ_SEED) -> list[str]:
    """Fuzz a page, already run at its defaults, for ``rounds`` rounds; return a report
    of each distinct failure.

    Each round sets a random share of the page's controls to random allowed values,
    biased towards the extremes, edits a few cells of its data editors, reruns the page
    and looks for exceptions, tracebacks shown in ``st.error``, timeouts and runs slower
    than FUZZ_MAX_SECONDS.
    """
    rng = random.Random(f"{seed}:{script.name}")
    defaults = state_of(at)
    history: list[list[Setting]] = []
    failures: dict[str, str] = {}
    slowest = (0.0, -1)
    started = time.perf_counter()
    for round_no in range(rounds):
        if round_no >= MIN_ROUNDS and time.perf_counter() - started > FUZZ_PAGE_SECONDS:
            print(f"{script.name}: stopped after {round_no} of {rounds} rounds, "
                  f"FUZZ_PAGE_SECONDS={FUZZ_PAGE_SECONDS:g}")
            break
        candidates = [*controls(at), *editors(at)]
        if not candidates:
            break
        before = state_of(at)
        share = 1.0 if rng.random() < 0.1 else rng.uniform(0.1, 0.5)
        chosen = [c for c in candidates if rng.random() < share] or [rng.choice(candidates)]
        settings = []
        for c in chosen:
            if isinstance(c, Dataframe):
                setting = fuzz_editor(at, c, rng)
            else:
                setting = apply(c, PICKERS[c.type](c, rng))
            if setting:
                settings.append(setting)
        history.append(settings)

        start = time.perf_counter()
        timed_out = False
        try:
            at.run()
            found = problems(at)
        except RuntimeError as exc:  # AppTest's script-run timeout
            found, timed_out = [f"RuntimeError: {exc}"], True
        elapsed = time.perf_counter() - start
        if timed_out:
            at = run_page(script, timeout=RUN_TIMEOUT)  # a timed-out AppTest is unusable
        slowest = max(slowest, (elapsed, round_no))
        if elapsed > FUZZ_MAX_SECONDS:
            found.append(f"SlowRun: a run took longer than FUZZ_MAX_SECONDS="
                         f"{FUZZ_MAX_SECONDS:g} s\nthis one took {elapsed:.2f} s")

        signature = found[0].splitlines()[0] if found else ""
        if found and signature not in failures:
            changed = [Setting(ref, value) for ref, value in before.items()
                       if ref not in defaults or not _same(defaults[ref], value)]
            failures[signature] = _report(script, seed, round_no, history, changed, found)
            if len(failures) >= MAX_DISTINCT_FAILURES:
                break
    print(f"{script.name}: {len(history)} rounds, FUZZ_SEED={seed}, "
          f"slowest run {slowest[0]:.2f} s (round {slowest[1]})")
    return list(failures.values())


def _report(script: Path, seed: int, round_no: int, history: list[list[Setting]],
            before: list[Setting], found: list[str]) -> str:
    """How a failing round happened: the seed, the settings and a replay to paste."""
    rel = f"pages/{script.name}" if script.parent.name == "pages" else script.name
    text = (
        f"{script.name}: fuzz round {round_no} failed.\n"
        f"Reproduce: FUZZ_SEED={seed} FUZZ_ROUNDS={round_no + 1} pytest "
        f"tests/pages/test_fuzz.py -k 'test_random_settings and {script.name}'\n"
        f"Problems:\n" + "\n---\n".join(found) + "\n"
        f"Controls away from their defaults before the round:\n{replay(before)}\n"
        f"Settings of the failing round:\n{replay(history[-1])}\n"
        f"Likely replay: at = run_page({rel!r}); the first block; at.run(); "
        f"the second block; at.run()."
    )
    if len(history) <= 10:
        lines = [f"at = run_page({rel!r})"]
        for n, settings in enumerate(history):
            lines += [f"# round {n}", *(s.code() for s in settings), "at.run()"]
        text += "\nExact replay:\n" + "\n".join(f"  {line}" for line in lines)
    return text


# ---------------------------------------------------------------- extremes

_SLIDERS = {"slider", "select_slider"}
_SELECTS = {"selectbox", "radio", "select_slider"}
_TOGGLES = {"toggle"}
_NUMBERS = {"number_input"}
_EDITOR = "data_editor"
# Each case: the kinds of control set and the end they are set to.
EXTREMES = {
    "sliders_at_min": (_SLIDERS, "min"),
    "sliders_at_max": (_SLIDERS, "max"),
    "selects_at_last_option": (_SELECTS, "max"),
    "toggles_on": (_TOGGLES, "max"),
    "numbers_at_min": (_NUMBERS, "min"),
    "numbers_at_max": (_NUMBERS, "max"),
    "everything_at_min": (_SLIDERS | _SELECTS | _TOGGLES | _NUMBERS, "min"),
    "everything_at_max": (_SLIDERS | _SELECTS | _TOGGLES | _NUMBERS, "max"),
    "cells_cleared": ({_EDITOR}, "cleared"),
    "cells_at_min": ({_EDITOR}, "min"),  # -1e300 in number cells, "" in text cells
    "cells_at_max": ({_EDITOR}, "max"),  # 1e300 in number cells, 500 words in text cells
}


def push_to_extremes(at: AppTest, case: str) -> Iterator[list[Setting]]:
    """Set every control of the case's kinds to its end and rerun the page; again for
    controls a run revealed, up to three runs. Yields the settings made so far after
    each run."""
    kinds, end = EXTREMES[case]
    done: list[Setting] = []
    for _ in range(3):
        todo = [s for w in controls(at) if w.type in kinds and (s := apply(w, _extreme(w, end)))]
        if _EDITOR in kinds:
            todo += [s for d in editors(at) if (s := fill_editor(at, d, end))]
        if not todo:
            return
        done += todo
        at.run()
        yield done
