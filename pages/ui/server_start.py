"""What a freshly started server prepares before it takes its first visitor.

``streamlit run dashboard.py`` finds ``dashboard.app``, an ``st.App`` whose lifespan is
:func:`lifespan`: the server answers no request (its health check included) until
:func:`prepare` has run, so that the first visit to any lesson finds the work every page
needs done. Measured here, that work made a lesson's first run on a fresh server 0.4 to
2.7 s longer than its next one:

- the libraries the pages import (pandas, Plotly, SciPy, the tokenizers, attncore and
  pages.ui), found in the pages' own import lines, so a new lesson is covered by itself;
- the two models, read from their caches on disk (on a machine's very first start they
  are converted once, which the terminal reports as it goes);
- the kept results' versions, hashed from their modules' sources, so that no visit
  parses a source while another session's thread does (CPython 3.11's parser is not safe
  in two threads at once);
- the measurements a first visit would otherwise wait for: lesson 7's timings and lesson
  11's KV-cache comparison at their defaults (each caption says when it was measured).

It also sets NumPy's BLAS to one thread for the whole process (see
:func:`one_blas_thread_for_good`) and turns on ``faulthandler``.

Nothing here is shipped as a number: all of it is computed on this machine, at start.
Anything that fails is left to the page that needs it, which says what is wrong.
"""

from __future__ import annotations

import ast
import contextlib
import faulthandler
import importlib
import importlib.util
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

from attncore import measure, results_cache

ROOT = Path(__file__).resolve().parents[2]


def page_imports(root: Path = ROOT) -> list[str]:
    """The modules imported at the top of dashboard.py and every ``pages/*.py``: those
    named, and the submodules taken from them (``from attncore.lm import inference``)."""
    found: set[str] = set()
    for script in [root / "dashboard.py", *sorted((root / "pages").glob("*.py"))]:
        for node in ast.parse(script.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names
                             if _is_module(f"{node.module}.{alias.name}"))
    return sorted(found)


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # the part before the last dot is not a package
        return False


def _step(say: Callable[[str], None], what: str, work: Callable[[], object]) -> None:
    """Run one step of the preparation and say how long it took; a failure is reported
    in one line and left to the page that needs the step."""
    start = time.perf_counter()
    try:
        work()
    except Exception as exc:  # noqa: BLE001 - an optimisation: the page reports it itself
        say(f"  {what}: skipped ({type(exc).__name__}: {exc})")
        return
    say(f"  {what}: {time.perf_counter() - start:.1f} s")


def _models(say: Callable[[str], None]) -> None:
    from attncore import encoder, lm

    tenths = [-1]  # the last tenth of the way reported: a line every 10%, not per layer

    def heard(fraction: float, what: str) -> None:
        if int(fraction * 10) > tenths[0]:
            tenths[0] = int(fraction * 10)
            say(f"    first start on this machine, converting SmolLM2 ({fraction:.0%}): {what}")

    _step(say, "SmolLM2 (lessons 10 to 12)", lambda: lm.model(progress=heard))
    _step(say, "all-MiniLM-L6-v2 (lesson 9)", encoder.model)


def _cost_timings() -> None:
    from pages.ui.timings import measure_defaults

    measure_defaults()


def _kv_cache_comparison() -> None:
    from attncore import lm
    from pages.ui.lm import CACHE_PROMPT, CACHE_STEPS, cache_comparison

    cache_comparison(lm.model(), CACHE_PROMPT, CACHE_STEPS, in_session=False)


@contextlib.contextmanager
def _outside_a_session() -> Iterator[None]:
    """Streamlit warns when its caches are used outside a visitor's session, which is what
    the preparation does on purpose: that one warning is silenced while it runs."""
    log = logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def one_blas_thread_for_good() -> None:
    """NumPy's BLAS on one thread for the rest of the process.

    The lessons' small products and timings run on one thread (OpenBLAS's threads
    spin against other work on 2 cores), each inside ``attncore.measure.one_blas_thread``.
    The count is the whole process's, and each visitor's session is a thread of the
    server: set once here, no session's context changes it under another's product.
    """
    measure.pin_one_blas_thread()


def prepare(say: Callable[[str], None] = print) -> float:
    """Do the work every first visit would wait for; return the seconds it took."""
    start = time.perf_counter()
    faulthandler.enable()  # a crash in native code prints every thread's Python stack
    one_blas_thread_for_good()
    say("Attention Lab: preparing the lessons before the first visitor")
    with _outside_a_session():
        _step(say, "libraries the pages import",
              lambda: [importlib.import_module(name) for name in page_imports()])
        _models(say)
        _step(say, "the kept results' versions (each a hash of its modules' sources)",
              results_cache.versions)
        _step(say, "lesson 7's timings at its defaults", _cost_timings)
        _step(say, "lesson 11's KV-cache comparison at its defaults", _kv_cache_comparison)
    seconds = time.perf_counter() - start
    say(f"Attention Lab: ready in {seconds:.1f} s; the address above now answers")
    return seconds


@contextlib.asynccontextmanager
async def lifespan(_app) -> AsyncIterator[None]:
    """st.App's lifespan: prepare, then serve."""
    prepare(lambda line: print(line, flush=True))
    yield
