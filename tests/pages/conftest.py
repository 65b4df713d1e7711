"""Shared AppTest helpers for the page tests.

Every app script is run the way a browser session runs it: the home page from
``dashboard.py`` itself, a lesson by switching to its ``pages/`` file from
``dashboard.py`` (the folder mode of a multipage app). Paths are absolute and built
from this file, because AppTest resolves relative paths against the calling file.
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.util import patch_config_options

from pages.ui.lessons import LESSONS

ROOT = Path(__file__).resolve().parents[2]
MAIN_SCRIPT = ROOT / "dashboard.py"
PAGES_DIR = ROOT / "pages"

# The shared sidebar switch (pages/ui/layout.py); the one widget without a page prefix.
PRESENTER_KEY = "presenter"

# Widget keys the fuzz tests (test_fuzz.py) never set or click, with the reason: the
# registry's slow controls (buttons that train a model or run the language model for
# seconds by design), which each page's own tests press at small settings.
NOT_FUZZED: dict[str, str] = {
    f"{lesson.prefix}_{name}": f"{what} (seconds); the page's own tests press it"
    for lesson in LESSONS for name, what in lesson.slow_controls
}


def app_scripts() -> list[Path]:
    """``dashboard.py`` and every top-level ``pages/*.py``, sorted; absolute paths.

    Files under ``pages/ui/`` are shared code, not pages, and are left out. A script
    that does not exist yet is left out too, so the list grows as pages are added.
    """
    scripts = [MAIN_SCRIPT] if MAIN_SCRIPT.is_file() else []
    scripts += sorted(p for p in PAGES_DIR.glob("*.py") if p.is_file())
    return scripts


def script_id(path: Path) -> str:
    """The test id of a script: its file name, e.g. ``1_Worked_example.py``."""
    return Path(path).name


def _resolve(path: str | Path) -> Path:
    path = Path(path)
    return path if path.is_absolute() else ROOT / path


@functools.cache
def _component_manager() -> object | None:
    """One registry of custom components for every AppTest in the session.

    A fresh AppTest scans the metadata of every installed package for custom
    components on its first run (about 0.5 s, nearly all of a small page's first
    run); a real server does it once for all sessions, and so do we. Private
    Streamlit API: when it moves, each AppTest simply scans again.
    """
    try:
        from streamlit.components.v2.component_manager import BidiComponentManager
    except ImportError:
        return None
    manager = BidiComponentManager()
    manager.discover_and_register_components(start_file_watching=False)
    return manager


def _share_compiled_scripts() -> None:
    """Compile each app script once per test session, as a real server does.

    AppTest makes a new ``ScriptCache`` for every run, so every rerun parses the page
    again and rewrites it for Streamlit's "magic" (about a tenth of a fuzz round). A
    server keeps one cache until a file changes; no file changes during a test session.
    Private Streamlit API: if it moves, the getattr finds nothing and AppTest simply
    compiles every run again.
    """
    from streamlit.testing.v1 import app_test, local_script_runner

    script_cache = getattr(app_test, "ScriptCache", None)
    if script_cache is None or not hasattr(local_script_runner, "ScriptCache"):
        return
    shared = script_cache()
    app_test.ScriptCache = local_script_runner.ScriptCache = lambda: shared


_share_compiled_scripts()


def new_app(path: str | Path, timeout: float = 30) -> AppTest:
    """An AppTest for one app script, not yet run.

    ``path`` is absolute or relative to the repository root (``"dashboard.py"``,
    ``"pages/1_Worked_example.py"``). A lesson page is opened from ``dashboard.py``
    with ``switch_page``, so links between pages resolve as in the real app.
    ``timeout`` (seconds) is the default for every later ``at.run()``.
    """
    path = _resolve(path).resolve()
    at = AppTest.from_file(MAIN_SCRIPT, default_timeout=timeout)
    manager = _component_manager()
    if manager is not None and getattr(at, "_bidi_component_manager", False) is None:
        at._bidi_component_manager = manager
    if path != MAIN_SCRIPT.resolve():
        at.switch_page(str(path.relative_to(ROOT)))
    return at


def run_page(path: str | Path, timeout: float = 30) -> AppTest:
    """Run one app script at its defaults and return the AppTest after ``.run()``."""
    return new_app(path, timeout=timeout).run()


def page_at_defaults(path: str | Path) -> AppTest:
    """One run of a script at its defaults, shared by every test of the session that
    only reads it (title, keys, figures, links...).

    A first run at the defaults costs up to seconds on the lessons with a model or a
    measurement, and a dozen tests per page look at the same run. Never set a widget or
    rerun the returned AppTest: take ``run_page`` for that.
    """
    return _page_at_defaults(_resolve(path).resolve())


@functools.cache
def _page_at_defaults(path: Path) -> AppTest:
    return run_page(path)


def page_in_presenter_mode(path: str | Path) -> AppTest:
    """The same for a script run at its defaults, then with presenter mode switched on
    (as a teacher does in the sidebar): one run of each page for the session, shared by
    the tests that only read it. Fails if the run at the defaults went wrong."""
    return _page_in_presenter_mode(_resolve(path).resolve())


@functools.cache
def _page_in_presenter_mode(path: Path) -> AppTest:
    at = run_page(path)
    assert_no_exception(at, f"{path.name} at defaults")
    at.toggle(key=PRESENTER_KEY).set_value(True).run()
    return at


def problems(at: AppTest) -> list[str]:
    """What went wrong in the last run: uncaught exceptions and tracebacks in ``st.error``.

    Each uncaught exception gives its type, message and the last frames of its stack
    trace; an ``st.error`` whose text contains "Traceback" counts too (a Python trace
    shown to a student is a bug, even when caught).
    """
    found = []
    for exc in at.exception:
        trace = "\n".join(line.rstrip() for line in exc.stack_trace[-8:])
        kind = getattr(exc.proto, "type", "") or "Exception"
        found.append(f"{kind}: {exc.message}\n{trace}".rstrip())
    for err in at.error:
        if "Traceback" in str(err.value):
            found.append(f"st.error shows a traceback:\n{err.value}")
    return found


def assert_no_exception(at: AppTest, context: str = "") -> None:
    """Fail, showing every exception message and trace, if the last run went wrong.

    ``context`` (for example the widget settings of the run) is added to the message.
    """
    found = problems(at)
    if found:
        head = f"{context}\n" if context else ""
        raise AssertionError(head + "\n---\n".join(found))


@pytest.fixture(autouse=True)
def _clear_streamlit_caches() -> Iterator[None]:
    """Start every test with empty ``st.cache_data`` and ``st.cache_resource``."""
    st.cache_data.clear()
    st.cache_resource.clear()
    yield


@pytest.fixture(autouse=True)
def _show_error_details() -> Iterator[None]:
    """Let uncaught exceptions keep their message and trace in tests.

    ``.streamlit/config.toml`` redacts error details for students
    (``client.showErrorDetails = "none"``); AppTest reads that file too, which would
    leave every failure with the same redacted text.
    """
    with patch_config_options({"client.showErrorDetails": "full"}):
        yield


def open_page(path: str | Path, timeout: float = 60, **query: str) -> AppTest:
    """Open a script as its link would, with these query parameters, and run it.

    Fails (with the exception's message and trace) if the run raised.
    """
    at = new_app(path, timeout=timeout)
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    assert_no_exception(at, f"opening {_resolve(path).name} with {query}")
    return at


def text_of(at: AppTest, kind: str = "markdown") -> str:
    """The text of every element of one kind (markdown by default), joined by spaces."""
    return " ".join(str(e.value) for e in getattr(at, kind))


def chart_spec(at: AppTest, key: str) -> dict:
    """The Plotly figure drawn by ``st.plotly_chart(..., key=key)``, as JSON."""
    specs = {chart.proto.id: json.loads(chart.proto.spec) for chart in at.get("plotly_chart")}
    found = [spec for element_id, spec in specs.items() if key in element_id]
    assert found, f"no chart with key {key!r}; ids: {list(specs)}"
    return found[0]


def chart_array(at: AppTest, key: str, field: str = "z", trace: int = 0) -> np.ndarray:
    """A numeric field of one of the chart's traces (the first by default; Plotly may send
    a base64 typed array)."""
    data = chart_spec(at, key)["data"][trace][field]
    if not isinstance(data, dict):
        return np.asarray(data, dtype=np.float64)
    flat = np.frombuffer(base64.b64decode(data["bdata"]), dtype=np.dtype(data["dtype"]))
    shape = data.get("shape")  # "6, 6" in Plotly's JSON
    if isinstance(shape, str):
        shape = [int(n) for n in shape.split(",")]
    return flat.reshape(shape) if shape else flat


_SHOWN_NUMBER = re.compile(r"exactly 0|(-?\d+(?:\.\d+)?)(?:×10([⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))?")
_DIGITS = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")


def shown_number(text: str) -> float:
    """The first number in ``text`` as the pages write one (pages/ui/numbers.py):
    ``0.401``, ``1.4×10⁻¹⁵``, ``exactly 0``; read by these rules, not by the page's code."""
    match = _SHOWN_NUMBER.search(text)
    assert match, f"no number in {text[:200]!r}"
    if match.group(0) == "exactly 0":
        return 0.0
    mantissa, power = match.groups()
    return float(mantissa) * 10.0 ** int(power.translate(_DIGITS)) if power else float(mantissa)
