"""Fuzz every page through its own controls (SPEC 5: extremes and nasty input never crash).

Each round sets a random subset of the page's widgets to random *allowed* values,
biased towards the extremes, edits a few cells of its data editors (through
``at.session_state``, the only way AppTest can edit them), reruns the page and checks
for exceptions and for tracebacks shown in ``st.error``. Widgets are re-read after
every run, because controls appear, disappear and change their ranges.

Environment:
    FUZZ_ROUNDS  rounds per page (default 25; CI's deep run uses 200)
    FUZZ_SEED    seed of the run (default 1234); a failure prints the seed and the
                 settings to reproduce it.
    FUZZ_MAX_SECONDS  if set, a script run slower than this fails too (SPEC 6 asks
                 for about 1.5 s at the largest settings; off by default, as shared
                 CI machines are noisy).
"""

from __future__ import annotations

import copy
import functools
import json
import math
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import app_scripts, assert_no_exception, new_app, problems, run_page, script_id
from streamlit.proto.NumberInput_pb2 import NumberInput as NumberInputProto
from streamlit.proto.Slider_pb2 import Slider as SliderProto
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1.element_tree import Dataframe, Widget

FUZZ_ROUNDS = int(os.environ.get("FUZZ_ROUNDS", "25"))
FUZZ_SEED = int(os.environ.get("FUZZ_SEED", "1234"))
FUZZ_MAX_SECONDS = float(os.environ.get("FUZZ_MAX_SECONDS") or "inf")
RUN_TIMEOUT = 30  # seconds per script run
MAX_DISTINCT_FAILURES = 3  # keep fuzzing after a failure to report a few distinct ones

SCRIPTS = app_scripts()
SCRIPT_IDS = [script_id(p) for p in SCRIPTS]

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
INT_EXTREMES = [0, 1, -1, 2, 10**6, -(10**6), 10**15, -(10**15)]
# What a browser's data editor can send for a number cell (JSON: no NaN or inf).
CELL_NUMBERS = [None, 0.0, 1.0, -1.0, 0.5, 1e-300, 1e6, -1e6, 1e300, -1e300]
EDITOR = "data_editor"

FUZZED_TYPES = {
    "slider",
    "select_slider",
    "selectbox",
    "radio",
    "toggle",
    "checkbox",
    "number_input",
    "text_input",
    "text_area",
    "multiselect",
    "button_group",
    "button",
}


# ---------------------------------------------------------------- widgets and values


def fuzzable_widgets(at) -> list[Widget]:
    """The enabled widgets of the current run that the fuzzer knows how to set."""
    return [
        node
        for node in at
        if isinstance(node, Widget)
        and node.type in FUZZED_TYPES
        and not getattr(node.proto, "disabled", False)
    ]


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


def _biased_index(n: int, rng: random.Random) -> int:
    """An index in range(n): first or last with probability 0.35 each, else uniform."""
    r = rng.random()
    if r < 0.35:
        return 0
    if r < 0.70:
        return n - 1
    return rng.randrange(n)


def _slider_value(w: Widget, rng: random.Random) -> Any:
    proto = w.proto
    lo, hi, step = proto.min, proto.max, proto.step or 1
    n_steps = max(0, int(math.floor((hi - lo) / step + 1e-9)))

    def one() -> Any:
        k = _biased_index(n_steps + 1, rng)
        raw = hi if k == n_steps else lo + k * step
        if proto.data_type == SliderProto.FLOAT:
            raw = min(max(float(f"{raw:.12g}"), lo), hi)  # 0.1 + 2 * 0.1 -> 0.3
            return raw
        if proto.data_type == SliderProto.INT:
            return int(round(raw))
        return _deserialize_slider(proto, raw)

    if len(proto.default) == 2:
        return sorted([one(), one()])
    return one()


def _deserialize_slider(proto: SliderProto, raw: float) -> Any:
    """A date, time or datetime slider value from its microseconds."""
    from streamlit.elements.widgets.slider import SliderSerde

    return SliderSerde(
        [], proto.data_type, True, None, proto.min, proto.max
    ).deserialize_single_value(raw)


def _select_slider_value(w: Widget, rng: random.Random) -> Any:
    opts = w.options
    if not opts:
        return _SKIP
    if len(w.proto.default) == 2:
        i, j = sorted([_biased_index(len(opts), rng), _biased_index(len(opts), rng)])
        return [opts[i], opts[j]]
    return opts[_biased_index(len(opts), rng)]


def _number_value(w: Widget, rng: random.Random) -> Any:
    proto = w.proto
    is_int = proto.data_type == NumberInputProto.INT
    lo = proto.min if proto.has_min else None
    hi = proto.max if proto.has_max else None
    if not proto.HasField("default") and rng.random() < 0.1:
        return None  # an input that starts empty can be cleared again
    cast = int if is_int else float
    if lo is not None and hi is not None:
        r = rng.random()
        if r < 0.35:
            return cast(lo)
        if r < 0.70:
            return cast(hi)
        return rng.randint(int(lo), int(hi)) if is_int else rng.uniform(lo, hi)
    pool = [cast(v) for v in (INT_EXTREMES if is_int else FLOAT_EXTREMES)]
    pool = [v for v in pool if (lo is None or v >= lo) and (hi is None or v <= hi)]
    pool += [cast(b) for b in (lo, hi) if b is not None]
    return rng.choice(pool)


def _text_value(w: Widget, rng: random.Random) -> Any:
    text = rng.choice(NASTY_TEXT)
    max_chars = getattr(w.proto, "max_chars", 0)
    return text[:max_chars] if max_chars else text  # the browser enforces max_chars


def _choice_value(w: Widget, rng: random.Random) -> Any:
    opts = w.options
    return opts[_biased_index(len(opts), rng)] if opts else _SKIP


def _multi_value(w: Widget, rng: random.Random) -> Any:
    opts = list(w.options)
    limit = getattr(w.proto, "max_selections", 0) or len(opts)
    r = rng.random()
    if r < 0.25:
        return []
    if r < 0.5:
        return opts[:limit]
    return rng.sample(opts, rng.randint(0, min(limit, len(opts))))


def _button_group_value(w: Widget, rng: random.Random) -> Any:
    if w._is_single_select:
        return None if rng.random() < 0.15 else _choice_value(w, rng)
    return _multi_value(w, rng)


class _Skip:
    def __repr__(self) -> str:
        return "<skip>"


_SKIP = _Skip()
CLICK = "click"

PICKERS = {
    "slider": _slider_value,
    "select_slider": _select_slider_value,
    "selectbox": _choice_value,
    "radio": _choice_value,
    "toggle": lambda w, rng: rng.random() < 0.5,
    "checkbox": lambda w, rng: rng.random() < 0.5,
    "number_input": _number_value,
    "text_input": _text_value,
    "text_area": _text_value,
    "multiselect": _multi_value,
    "button_group": _button_group_value,
    "button": lambda w, rng: CLICK,
}


@dataclass
class Setting:
    ref: str
    value: Any
    by_label: bool = False

    def code(self) -> str:
        if self.value is CLICK:
            return f"{self.ref}.click()"
        if self.ref.startswith("at.session_state"):
            return f"{self.ref} = {show(self.value)}"
        if self.by_label:
            return f"set_label({self.ref}, {show(self.value)})  # from test_fuzz"
        return f"{self.ref}.set_value({show(self.value)})"


def apply(w: Widget, value: Any) -> Setting | None:
    """Set one widget; None when the value is no change, or one AppTest cannot send."""
    if value is _SKIP or (value is not CLICK and _same(w.value, value)):
        return None
    old = w._value
    try:
        if value is CLICK:
            w.click()
        else:
            w.set_value(value)
        w._widget_state  # noqa: B018 - serialise now, so a bad value fails here, not in run()
    except (ValueError, TypeError, KeyError, IndexError):
        w._value = old
        if w.type in LABELLED and _are_labels(w, value):
            set_label(w, value)
            return Setting(widget_ref(w), value, by_label=True)
        return None
    return Setting(widget_ref(w), value)


# Widgets whose options reach the browser as labels (``format_func`` applied).
LABELLED = {"selectbox", "radio", "select_slider", "multiselect", "button_group"}
_LABEL_CLASSES: dict[type, type] = {}


def _are_labels(w: Widget, value: Any) -> bool:
    values = value if isinstance(value, (list, tuple)) else [value]
    return all(v is None or v in w.options for v in values)


def set_label(w: Widget, value: str | list[str] | None) -> Widget:
    """Select options by the labels the page shows, exactly as a browser does.

    AppTest's ``set_value`` wants the raw option and maps it through the page's
    ``format_func``; the fuzzer only knows the labels (the raw options stay on the
    server). So the widget state is built from the labels, which is what the
    browser sends. Works for selectbox, radio, select_slider, multiselect, pills.
    """
    cls = type(w)
    if cls not in _LABEL_CLASSES:

        def _widget_state(self) -> WidgetState:
            ws = WidgetState()
            ws.id = self.id
            if isinstance(self._labels, list):
                ws.string_array_value.data[:] = self._labels
            elif self._labels is not None:
                ws.string_value = self._labels
            return ws

        _LABEL_CLASSES[cls] = type(
            f"Labelled{cls.__name__}", (cls,), {"_widget_state": property(_widget_state)}
        )
    labels = list(value) if isinstance(value, (list, tuple)) else value
    if w.type in {"select_slider", "button_group"} and not isinstance(labels, list):
        labels = [] if labels is None else [labels]
    w.__class__ = _LABEL_CLASSES[cls]
    w._labels = labels
    w._value = value
    return w


def _same(current: Any, value: Any) -> bool:
    if isinstance(current, (list, tuple)) and isinstance(value, (list, tuple)):
        return list(current) == list(value)
    return type(current) is type(value) and current == value


def state_of(at) -> dict[str, Any]:
    """The value of every settable widget and every editor's edits, by reference."""
    state = {widget_ref(w): w.value for w in fuzzable_widgets(at) if w.type != "button"}
    for d in data_editors(at):
        state[editor_ref(d)] = editor_edits(at, d)
    return state


# ---------------------------------------------------------------- data editors


def data_editors(at) -> list[Dataframe]:
    """The keyed, enabled data editors of the current run."""
    return [d for d in at.data_editor if d.key and not d.proto.disabled]


def editor_ref(d: Dataframe) -> str:
    return f"at.session_state[{d.key!r}]"


def editor_edits(at, d: Dataframe) -> dict[str, Any]:
    """The editor's current edit state, as AppTest accepts it in session state."""
    empty = {"edited_rows": {}, "added_rows": [], "deleted_rows": []}
    try:
        edits = at.session_state[d.key]
    except KeyError:
        return empty
    if isinstance(edits, str):
        edits = json.loads(edits)
    if not isinstance(edits, dict):
        return empty
    edits = {**empty, **copy.deepcopy(edits)}
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
        kind = type_config.get("type")
        if kind is None:
            dtype = frame[name].dtype
            kind = {"b": "checkbox", "i": "number", "u": "number", "f": "number"}.get(
                dtype.kind, "text"
            )
        columns.append((str(name), kind, {**type_config, "required": cfg.get("required")}))
    return columns


def _cell_pool(kind: str, cfg: dict) -> list[Any]:
    if kind == "number":
        lo, hi = cfg.get("min_value"), cfg.get("max_value")
        pool = [
            v
            for v in CELL_NUMBERS
            if v is None or ((lo is None or v >= lo) and (hi is None or v <= hi))
        ]
        pool += [b for b in (lo, hi) if b is not None]
    elif kind == "text":
        max_chars = cfg.get("max_chars") or None
        pool = [None] + [t[:max_chars] for t in NASTY_TEXT]
    elif kind == "checkbox":
        pool = [None, True, False]
    else:
        return []
    return [v for v in pool if v is not None] if cfg.get("required") else pool


def _cell_extreme(kind: str, cfg: dict, end: str) -> Any:
    """One end of a cell: "cleared", "min" (-1e300 / "") or "max" (1e300 / LONG_TEXT)."""
    if end == "cleared":
        return _SKIP if cfg.get("required") else None
    if kind == "number":
        bound = cfg.get("max_value" if end == "max" else "min_value")
        return bound if bound is not None else (1e300 if end == "max" else -1e300)
    if kind == "text":
        return LONG_TEXT[: cfg.get("max_chars") or None] if end == "max" else ""
    if kind == "checkbox":
        return end == "max"
    return _SKIP


def edit_editor(
    at,
    d: Dataframe,
    cells: list[tuple[int, str, Any]],
    rows: tuple[list[dict], list[int]] | None = None,
    *,
    reset: bool = False,
) -> Setting | None:
    """Add cell edits (row, column, value) and rows (added, deleted) to an editor's edits.

    ``reset`` first undoes the earlier edits. The whole new edit state goes into
    ``at.session_state``, so the returned setting replays exactly.
    """
    edits = editor_edits(at, d)
    new = copy.deepcopy(edits)
    if reset:
        new = {"edited_rows": {}, "added_rows": [], "deleted_rows": []}
    n_rows = d.value.shape[0]
    # Edits of rows the table no longer has are dropped, as the browser does.
    new["edited_rows"] = {r: c for r, c in new["edited_rows"].items() if r < n_rows}
    for row, name, value in cells:
        if value is not _SKIP:
            new["edited_rows"].setdefault(row, {})[name] = value
    if rows:
        added, deleted = rows
        new["added_rows"] += added
        new["deleted_rows"] = sorted(set(new["deleted_rows"]) | set(deleted))
    if new == edits:
        return None
    at.session_state[d.key] = new
    return Setting(editor_ref(d), new)


def fuzz_editor(at, d: Dataframe, rng: random.Random) -> Setting | None:
    """Edit one to three random cells; in a dynamic editor maybe add or delete a row.

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
    rows = None
    if d.editing_mode == "dynamic" and rng.random() < 0.3:
        if n_rows and rng.random() < 0.5:
            rows = ([], [rng.randrange(n_rows)])
        else:
            rows = ([{n: rng.choice(_cell_pool(k, c)) for n, k, c in columns}], [])
    return edit_editor(at, d, cells, rows, reset=reset)


def fill_editor(at, d: Dataframe, end: str) -> Setting | None:
    """Every editable cell at one end (see ``_cell_extreme``)."""
    cells = [
        (row, name, _cell_extreme(kind, cfg, end))
        for row in range(d.value.shape[0])
        for name, kind, cfg in editor_columns(d)
    ]
    return edit_editor(at, d, cells)


# ---------------------------------------------------------------- random fuzzing


@pytest.mark.parametrize("script", SCRIPTS, ids=SCRIPT_IDS)
def test_random_settings(script: Path) -> None:
    rng = random.Random(f"{FUZZ_SEED}:{script.name}")
    at = run_page(script, timeout=RUN_TIMEOUT)
    assert_no_exception(at, f"{script.name} at defaults")
    defaults = state_of(at)

    history: list[list[Setting]] = []
    failures: dict[str, str] = {}
    slowest = (0.0, -1)
    for round_no in range(FUZZ_ROUNDS):
        controls = [*fuzzable_widgets(at), *data_editors(at)]
        if not controls:
            break
        before = state_of(at)
        share = 1.0 if rng.random() < 0.1 else rng.uniform(0.1, 0.5)
        chosen = [c for c in controls if rng.random() < share] or [rng.choice(controls)]
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
            found.append(
                f"SlowRun: a run took longer than FUZZ_MAX_SECONDS={FUZZ_MAX_SECONDS:g} s\n"
                f"this one took {elapsed:.2f} s"
            )

        sig = found[0].splitlines()[0] if found else ""
        if found and sig not in failures:
            changed = [
                Setting(ref, value)
                for ref, value in before.items()
                if ref not in defaults or not _same(defaults[ref], value)
            ]
            failures[sig] = _report(script, round_no, history, changed, found)
            if len(failures) >= MAX_DISTINCT_FAILURES:
                break

    print(
        f"{script.name}: {len(history)} rounds, FUZZ_SEED={FUZZ_SEED}, "
        f"slowest run {slowest[0]:.2f} s (round {slowest[1]})"
    )
    if failures:
        raise AssertionError("\n\n=====\n\n".join(failures.values()))


def _report(
    script: Path,
    round_no: int,
    history: list[list[Setting]],
    before: list[Setting],
    found: list[str],
) -> str:
    """How a failing round happened: the seed, the settings and a replay to paste."""
    rel = f"pages/{script.name}" if script.parent.name == "pages" else script.name

    def block(settings: list[Setting]) -> str:
        return "\n".join(f"  {s.code()}" for s in settings) or "  (none)"

    text = (
        f"{script.name}: fuzz round {round_no} failed.\n"
        f"Reproduce: FUZZ_SEED={FUZZ_SEED} FUZZ_ROUNDS={round_no + 1} pytest "
        f"tests/pages/test_fuzz.py -k 'test_random_settings and {script.name}'\n"
        f"Problems:\n" + "\n---\n".join(found) + "\n"
        f"Controls away from their defaults before the round:\n{block(before)}\n"
        f"Settings of the failing round:\n{block(history[-1])}\n"
        f"Likely replay: at = run_page({rel!r}); the first block; at.run(); "
        f"the second block; at.run()."
    )
    if len(history) <= 10:
        replay = [f"at = run_page({rel!r})"]
        for n, settings in enumerate(history):
            replay += [f"# round {n}", *(s.code() for s in settings), "at.run()"]
        text += "\nExact replay:\n" + "\n".join(f"  {line}" for line in replay)
    return text


# ---------------------------------------------------------------- deterministic extremes


def _extreme(w: Widget, end: str) -> Any:
    """The value of ``w`` at one end: "min" (first / off) or "max" (last / on)."""
    last = end == "max"
    if w.type == "slider":
        proto = w.proto
        raw = proto.max if last else proto.min
        if proto.data_type == SliderProto.INT:
            raw = int(raw)
        elif proto.data_type != SliderProto.FLOAT:
            raw = _deserialize_slider(proto, raw)
        return [raw, raw] if len(proto.default) == 2 else raw
    if w.type in {"select_slider", "selectbox", "radio"}:
        if not w.options:
            return _SKIP
        opt = w.options[-1 if last else 0]
        return [opt, opt] if w.type == "select_slider" and len(w.proto.default) == 2 else opt
    if w.type in {"toggle", "checkbox"}:
        return last
    if w.type == "number_input":
        proto = w.proto
        cast = int if proto.data_type == NumberInputProto.INT else float
        if last:
            return cast(proto.max) if proto.has_max else cast(1e6)
        return cast(proto.min) if proto.has_min else cast(-1e6)
    return _SKIP


SLIDERS = {"slider", "select_slider"}
SELECTS = {"selectbox", "radio", "select_slider"}
TOGGLES = {"toggle", "checkbox"}
NUMBERS = {"number_input"}
EXTREMES = {
    "sliders_at_min": (SLIDERS, "min"),
    "sliders_at_max": (SLIDERS, "max"),
    "selects_at_last_option": (SELECTS, "max"),
    "toggles_on": (TOGGLES, "max"),
    "numbers_at_min": (NUMBERS, "min"),
    "numbers_at_max": (NUMBERS, "max"),
    "everything_at_min": (SLIDERS | SELECTS | TOGGLES | NUMBERS, "min"),
    "everything_at_max": (SLIDERS | SELECTS | TOGGLES | NUMBERS, "max"),
    "cells_cleared": ({EDITOR}, "cleared"),
    "cells_at_min": ({EDITOR}, "min"),  # -1e300 in number cells, "" in text cells
    "cells_at_max": ({EDITOR}, "max"),  # 1e300 in number cells, 500 words in text cells
}


@pytest.mark.parametrize("case", list(EXTREMES))
@pytest.mark.parametrize("script", SCRIPTS, ids=SCRIPT_IDS)
def test_extremes(script: Path, case: str) -> None:
    """All chosen controls at one end in one run; repeated while new controls appear."""
    types, end = EXTREMES[case]
    at = run_page(script, timeout=RUN_TIMEOUT)
    assert_no_exception(at, f"{script.name} at defaults")
    done: list[Setting] = []
    for _ in range(3):  # a control revealed by the last run gets its turn in the next
        todo = [
            s for w in fuzzable_widgets(at) if w.type in types and (s := apply(w, _extreme(w, end)))
        ]
        if EDITOR in types:
            todo += [s for d in data_editors(at) if (s := fill_editor(at, d, end))]
        if not todo:
            break
        done += todo
        at.run()
        assert_no_exception(at, f"{script.name}, {case}:\n  " + "\n  ".join(s.code() for s in done))


# ---------------------------------------------------------------- nonsense links

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


@pytest.mark.parametrize("param", NONSENSE_PARAMS)
@pytest.mark.parametrize("script", SCRIPTS, ids=SCRIPT_IDS)
def test_nonsense_query_params(script: Path, param: str) -> None:
    """SPEC 5: a link with nonsense in every query parameter still opens the page."""
    keys = _keys_at_defaults(script)
    at = new_app(script, timeout=RUN_TIMEOUT)
    at.query_params = dict.fromkeys(keys, param)
    at.run()
    assert_no_exception(at, f"{script.name} opened with ?{'&'.join(keys)} = {param!r}")


@functools.cache
def _keys_at_defaults(script: Path) -> list[str]:
    """The keys of the widgets and data editors a page shows at its defaults."""
    at = run_page(script, timeout=RUN_TIMEOUT)
    keys = {w.key for w in at if isinstance(w, Widget) and w.key}
    return sorted(keys | {d.key for d in data_editors(at)})
