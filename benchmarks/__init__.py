"""Benchmarks: scripts, not tests (timings depend on the machine and its load). Each runs
from the repository's root as ``.venv/bin/python -m benchmarks.<name>`` (``--help`` lists
its options); docs/performance.md gives their dated results.

* ``attention``: attention against NumPy's matrix multiply, the readable form and a loop;
* ``bottleneck``: lesson 0's two trainings at the page's defaults and slowest settings;
* ``training``: lesson 8's three trainings at the page's defaults;
* ``language_model``: lessons 10 and 11's model: restart, a pass, one token with the cache
  (``lm_reference`` is the PyTorch reference it runs in another interpreter);
* ``patching``: lesson 12's grids, against a loop of full passes;
* ``page_scripts``: each page's script run after a control change (AppTest);
* ``redraw``: in the browser, a key press to the last change on screen;
* ``first_visit``: in the browser, each page's first visit on a fresh server.
"""
