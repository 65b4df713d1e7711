"""Lesson 7's timings: what it measures at its defaults, and the measurements shared by
the visitors of a server.

A timing is this visitor's own, unless a conclusive one (its rounds agree: a run disturbed
by other work is never passed on) was made on this server before: by another visitor, or
at the server's start (server_start.py measures the defaults, so that the lesson's first
visitor does not wait for them). The page says when each was measured.
"""

from __future__ import annotations

import time

import numpy as np
import streamlit as st

from attncore import cost

LENGTHS = (64, 128, 256, 512, 1024, 2048)
# The loop over heads against one vectorised call, at the user's heads and where many
# small heads make the loop's per-head Python overhead show.
LOOP_N = 512
MANY_HEADS = {"n": 64, "heads": 64, "d_k": 8}
#: The lesson's controls at their defaults: largest n, heads H, d_k and rounds.
DEFAULT_MAX_N, DEFAULT_HEADS, DEFAULT_D_K, DEFAULT_ROUNDS = 512, 4, 64, 5


@st.cache_resource(show_spinner=False)
def conclusive_runs() -> dict:
    """Measurements shared by every visitor of this server: only conclusive ones are kept,
    so a run disturbed by other work is never shown to the next visitor as the result."""
    return {}


def lengths_measured(max_n: int, heads: int) -> list[int]:
    """The lengths section 1 measures: up to ``max_n``, within the cap on H·n² weights."""
    return [n for n in LENGTHS if n <= max_n and heads * n * n <= cost.MAX_WEIGHT_ELEMENTS]


def growth_run(ns: list[int], heads: int, d_k: int, rounds: int, progress=None):
    """Section 1's measurement: its key among the shared runs, and the measuring itself."""
    return (("growth", tuple(ns), heads, d_k, rounds),
            lambda: cost.measure_growth(ns, heads, d_k, rounds, np.random.default_rng(0),
                                        progress=progress))


def loop_runs(heads: int, d_k: int, rounds: int):
    """Section 3's two measurements (the user's heads, and many small heads): their keys
    and the measuring."""
    return [(("loop", LOOP_N, heads, d_k, rounds),
             lambda: cost.loop_experiment(LOOP_N, heads, d_k, rounds, np.random.default_rng(1))),
            (("loop", *MANY_HEADS.values(), rounds),
             lambda: cost.loop_experiment(**MANY_HEADS, rounds=rounds,
                                          rng=np.random.default_rng(2)))]


def _share(key: tuple, result) -> tuple:
    entry = (result, time.strftime("%H:%M:%S"))
    if getattr(result, "conclusive", False):
        conclusive_runs()[key] = entry
    return entry


def timing(key: tuple, measure, force: bool):
    """This visitor's result for ``key`` and when it was measured, else a conclusive one
    from another visitor or the server's start, else a new measurement (kept for this
    visitor; shared only when conclusive)."""
    mine = st.session_state.setdefault("cost_results", {})
    if not force and key in mine:
        return mine[key]
    shared = conclusive_runs()
    if not force and key in shared:
        return shared[key]
    mine[key] = _share(key, measure())
    return mine[key]


def measure_defaults() -> None:
    """The lesson's measurements at its defaults, made outside any visit (at the server's
    start) and shared when conclusive."""
    ns = lengths_measured(DEFAULT_MAX_N, DEFAULT_HEADS)
    runs = [growth_run(ns, DEFAULT_HEADS, DEFAULT_D_K, DEFAULT_ROUNDS),
            *loop_runs(DEFAULT_HEADS, DEFAULT_D_K, DEFAULT_ROUNDS)]
    for key, measure in runs:
        if key not in conclusive_runs():
            _share(key, measure())
