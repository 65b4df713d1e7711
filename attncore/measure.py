"""Measuring tools: time and peak memory of a call, and BLAS kept to one thread.

OpenBLAS's worker threads spin while they wait for a core: on a busy 2-core machine small
matrix products became about 15× slower, and one thread made them repeatable. Every
timing shown to a student, and small-matrix work such as training, runs inside
:func:`one_blas_thread`.
"""

from __future__ import annotations

import contextlib
import functools
import threading
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

    Entering or leaving a thread-count context calls OpenBLAS's set-threads function,
    which is not safe while another thread is inside a product: a server whose sessions
    trained a model while another session's timing context closed died of a
    segmentation fault inside the training's product. Once pinned, every
    :func:`one_blas_thread` context does nothing.
    """
    global _pinned
    _blas().limit(limits=1, user_api="blas")
    _pinned = True


_LONG_WORK = threading.RLock()


def one_at_a_time() -> threading.RLock:
    """A context that runs a process's long computations (trainings, kept results) one
    after another, each in the thread that asked for it.

    A server's sessions each run in their own thread. When 20 first visits on a fresh
    machine started lesson 0's, 8's and 13's trainings together beside the language
    model's passes, the server died of a segmentation fault inside NumPy (seen twice,
    in a product and in ``bincount``; the cause inside the libraries was not found).
    One long computation at a time never crashed; a visitor whose training waits sees
    its progress bar start later.
    """
    return _LONG_WORK


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


def peak_memory(fn) -> tuple[object, int]:
    """Call ``fn`` and return its result and the peak bytes allocated meanwhile.

    tracemalloc sees NumPy's array allocations, so the peak includes every
    temporary the call made, not just what it returned.
    """
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base, _ = tracemalloc.get_traced_memory()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return result, peak - base
