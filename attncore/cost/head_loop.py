"""A Python loop over the heads against one vectorised call (lesson 7, section 3):
:func:`textbook_attention` as a textbook writes it, :func:`head_loop_attention` the lean
form once per head, and :func:`loop_experiment`, which times the loop against the call."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import whole_number
from ..measure import best_time, one_blas_thread
from .counts import check_cost_size
from .lean import lean_attention


def textbook_attention(q, k, v) -> tuple[np.ndarray, np.ndarray]:
    """Attention as a textbook writes it: a Python loop over the heads.

    q, k, v : (H, T, d); returns weights (H, Tq, Tk) and outputs (H, Tq, d_v).
    """
    H, Tq, d_k = q.shape
    weights = np.empty((H, Tq, k.shape[1]))
    out = np.empty((H, Tq, v.shape[2]))
    for h in range(H):
        s = q[h] @ k[h].T / np.sqrt(d_k)  # (Tq, d_k) x (d_k, Tk) -> (Tq, Tk)
        e = np.exp(s - s.max(axis=1, keepdims=True))
        weights[h] = e / e.sum(axis=1, keepdims=True)
        out[h] = weights[h] @ v[h]  # (Tq, Tk) x (Tk, d_v) -> (Tq, d_v)
    return weights, out


def head_loop_attention(q, k, v) -> np.ndarray:
    """:func:`lean_attention` called once per head in a Python loop: the same arithmetic as
    one call over all the heads, so timing the two measures only what splitting the call
    changes (a call's fixed cost paid H times, and smaller arrays per call).

    q, k, v : (H, T, d); returns the outputs (H, Tq, d_v).
    """
    return np.stack([lean_attention(q[h], k[h], v[h])[1] for h in range(q.shape[0])])



@dataclass(frozen=True)
class LoopExperiment:
    """One vectorised call over all heads against a Python loop over the heads, both
    doing the same arithmetic (:func:`head_loop_attention`).

    Attributes
    ----------
    n, heads, d_k, rounds : int
    vectorised_seconds, loop_seconds : float
        The best time of each, interleaved over ``rounds`` rounds on one BLAS thread.
    ratios : ndarray (rounds,)
        loop / vectorised within each round: their spread says how sure the speed-up is.
    max_difference : float
        max |vectorised − loop| over the outputs.
    conclusive : bool
        True when every round agrees on which of the two was faster (every ratio above 1,
        or every one below it).
    """

    n: int
    heads: int
    d_k: int
    rounds: int
    vectorised_seconds: float
    loop_seconds: float
    ratios: np.ndarray
    max_difference: float

    @property
    def speedup(self) -> float:
        return self.loop_seconds / self.vectorised_seconds

    @property
    def conclusive(self) -> bool:
        return bool(np.all(self.ratios > 1) or np.all(self.ratios < 1))


def loop_experiment(n: int, heads: int, d_k: int, rounds: int,
                    rng: np.random.Generator, *, min_round: float = 0.02) -> LoopExperiment:
    """Time :func:`lean_attention` (one call for all heads) against
    :func:`head_loop_attention` (the same function, once per head in a Python loop) on the
    same random (H, n, d_k) inputs, interleaved. The loop's body is the vectorised call's
    arithmetic, so the ratio measures only what splitting the call per head changes (a
    fixed cost per call, paid H times; one head's smaller arrays, which may fit the caches
    better): with one head it is close to 1."""
    n = whole_number(n, "n", 1, 8192)
    heads = whole_number(heads, "heads", 1, 256)
    d_k = whole_number(d_k, "d_k", 1, 1024)
    rounds = whole_number(rounds, "rounds", 1, 20)
    check_cost_size(n, heads)
    q, k, v = (rng.standard_normal((heads, n, d_k)) for _ in range(3))

    def vectorised():
        return lean_attention(q, k, v)[1]

    def loop():
        return head_loop_attention(q, k, v)

    times = np.empty((rounds, 2))
    with one_blas_thread():
        vectorised(), loop()  # warm-up
        for r in range(rounds):
            order = (0, 1) if r % 2 == 0 else (1, 0)
            for i in order:
                times[r, i] = best_time((vectorised, loop)[i], 1, min_total=min_round,
                                        max_calls=50)
    diff = float(np.max(np.abs(vectorised() - loop())))
    return LoopExperiment(n, heads, d_k, rounds, float(times[:, 0].min()),
                          float(times[:, 1].min()), times[:, 1] / times[:, 0], diff)
