"""Two sessions' first runs at once on a fresh server: no half-imported module.

Streamlit runs each browser session's script in its own thread. On a freshly started
server the load test saw the home page fail with "partially initialized module 'pandas'
has no attribute 'Series'": one session was still importing pandas while another built
a Plotly figure, and Plotly looks pandas up in ``sys.modules`` without waiting for its
import to finish. The package ``pages/ui/figures/``, the only code that calls Plotly,
now imports pandas in full first (in its ``__init__``, which runs before any of its
modules).

The race is made certain here, in a fresh interpreter: thread A imports pandas (directly,
as a lesson page does, or through ``pages.ui.figures``, as the home page does)
through a loader that pauses before running pandas' code (the module is then in
``sys.modules`` and empty, as it is for a moment on a real server); meanwhile thread B
imports the pages' shared code and builds a heatmap, as the home page does.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import importlib
    import importlib.abc
    import importlib.util
    import sys
    import threading
    import time

    started = threading.Event()


    class SlowPandas(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name != "pandas":
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec("pandas")
            real = spec.loader.exec_module

            def exec_module(module):
                started.set()  # pandas is in sys.modules now, still empty
                time.sleep(1.0)
                real(module)

            spec.loader.exec_module = exec_module
            return spec


    sys.meta_path.insert(0, SlowPandas())
    errors = []


    def first_run_a():
        importlib.import_module(sys.argv[1])


    def first_run_b():
        started.wait(10)
        try:
            from pages.ui.figures import matrix_heatmap
            matrix_heatmap([[0.5, 0.5], [0.25, 0.75]], ["a", "b"], ["a", "b"], title="W")
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")


    threads = [threading.Thread(target=first_run_a), threading.Thread(target=first_run_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    print(errors[0] if errors else "ok")
""")


# "pandas": a lesson page importing pandas while the home page draws (fails without the
# import in figures/__init__.py). "pages.ui.figures": the home page's own first import under way
# in the other thread, paused inside pandas; the second thread must wait for it.
@pytest.mark.parametrize("first_import", ["pandas", "pages.ui.figures"])
def test_a_page_waits_for_a_half_imported_pandas(first_import: str) -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT, first_import], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok", done.stdout + done.stderr
