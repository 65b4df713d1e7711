"""Measuring tools: time and peak memory of a call (the memory in a process of its own),
and BLAS kept to one thread.

OpenBLAS's worker threads spin while they wait for a core: on a busy 2-core machine small
matrix products became about 15× slower, and one thread made them repeatable. Every
timing shown to a student, and small-matrix work such as training, runs inside
:func:`one_blas_thread`.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pickle
import subprocess
import sys
import time
import tracemalloc

import numpy as np
from threadpoolctl import ThreadpoolController


@functools.cache
def _blas() -> ThreadpoolController:
    """threadpoolctl's controller, made once: making one scans the loaded libraries."""
    return ThreadpoolController()


_pinned = False  # set by pin_one_blas_thread: the whole process runs BLAS on one thread


def pin_one_blas_thread() -> None:
    """NumPy's BLAS on one thread for the rest of the process (a server's start).

    The thread count is a setting of the whole process, and a server runs each
    visitor's session in a thread of its own: one session leaving its
    :func:`one_blas_thread` context would give BLAS its threads back while another
    session's timing or training runs, and OpenBLAS's set-threads function is not meant
    to be called while another thread is inside a product. Once pinned, every
    :func:`one_blas_thread` context does nothing.
    """
    global _pinned
    _blas().limit(limits=1, user_api="blas")
    _pinned = True


def one_blas_thread():
    """A context in which NumPy's BLAS uses one thread (threadpoolctl); nothing to do
    once the process is pinned to one (:func:`pin_one_blas_thread`).

    On a busy 2-core machine OpenBLAS's worker threads spin waiting for a core and
    small products slow down many times over; one thread makes timings repeatable.
    """
    if _pinned:
        return contextlib.nullcontext()
    return _blas().limit(limits=1, user_api="blas")


def best_time(fn, repeats: int, min_total: float = 0.0, max_calls: int = 200) -> float:
    """Shortest wall time of at least ``repeats`` calls of ``fn``.

    Calls go on (up to ``max_calls``) until ``min_total`` seconds have passed, so a
    fast call is timed many times and its minimum is not one disturbed sample.
    """
    best, total, calls = np.inf, 0.0, 0
    while calls < repeats or (total < min_total and calls < max_calls):
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        best, total, calls = min(best, elapsed), total + elapsed, calls + 1
    return best


def _peaks_here(calls, keep_results: bool) -> list[tuple[object, int]]:
    """Each ``fn(*args)`` of ``calls`` in turn, with tracemalloc on: its result (or
    None) and the peak bytes it allocated above what was allocated when it began."""
    tracemalloc.start()
    try:
        found = []
        for fn, args in calls:
            tracemalloc.reset_peak()
            base, _ = tracemalloc.get_traced_memory()
            result = fn(*args)
            _, peak = tracemalloc.get_traced_memory()
            found.append((result if keep_results else None, peak - base))
            del result
        return found
    finally:
        tracemalloc.stop()


def peak_memories(calls, keep_results: bool = True) -> list[tuple[object, int]]:
    """For each ``(fn, args)`` of ``calls``: the result of ``fn(*args)`` (None unless
    ``keep_results``) and the peak bytes allocated during the call.

    The calls run one after another in a new Python process whose only thread is
    theirs, so the peak is the call's own: tracemalloc (which sees NumPy's array
    allocations, every temporary included) counts the allocations of every thread of a
    process, which in a server are other visitors' sessions too. Starting and stopping
    it while other threads allocate can also crash the process: NumPy allocates without
    holding the GIL, and CPython 3.11's tracemalloc does not guard that against
    ``tracemalloc.stop()``. A server with 20 first visits died of it, inside NumPy.

    ``fn`` and ``args`` go to the new process by pickle, so ``fn`` is a function
    defined at a module's top level (not a lambda) that the new process, started with
    this one's ``sys.path``, can import. Each call starts a Python process: measure a
    batch in one call.
    """
    calls = [(fn, tuple(args)) for fn, args in calls]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p or os.getcwd() for p in sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", "from attncore.measure import _child; _child()"],
        input=pickle.dumps((calls, keep_results), protocol=pickle.HIGHEST_PROTOCOL),
        capture_output=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError("measuring memory in a process of its own failed: "
                           + done.stderr.decode(errors="replace").strip()[-2000:])
    return pickle.loads(done.stdout)


def _child() -> None:
    """The measuring process of :func:`peak_memories`: its calls from standard input,
    their results and peaks to standard output, both pickled."""
    calls, keep_results = pickle.load(sys.stdin.buffer)
    found = _peaks_here(calls, keep_results)
    sys.stdout.buffer.write(pickle.dumps(found, protocol=pickle.HIGHEST_PROTOCOL))
