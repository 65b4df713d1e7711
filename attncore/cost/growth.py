r"""How attention's time grows with the sequence length n (lesson 7, section 1): the
timing experiment :func:`measure_growth`, the slope it fits on log-log axes
(:func:`growth_exponent`, :func:`local_exponents`) and what that slope says against the
2 of the arithmetic (:func:`against_square`, :func:`shared_verdict`).

Timings on a shared machine are noisy, so the measurement runs on one BLAS thread
(:mod:`attncore.measure` says why), warms up first, interleaves the sizes so a burst of
load hits them all alike, keeps the minimum of many calls, and reports its spread.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import whole_number
from ..measure import best_time, one_blas_thread, peak_memories
from .counts import check_cost_size
from .lean import lean_attention

#: The growth exponent is called conclusive when the per-round fits agree within this.
EXPONENT_SPREAD_LIMIT = 0.3

#: A measured exponent within this of 2 is said to grow "like n²".
SQUARE_TOLERANCE = 0.15


def growth_exponent(ns, seconds) -> float:
    """Least-squares slope of log(seconds) against log(n): time ∝ n^slope."""
    return float(np.polyfit(np.log(np.asarray(ns, float)), np.log(np.asarray(seconds)), 1)[0])


def local_exponents(ns, seconds) -> np.ndarray:
    """The slope between each pair of neighbouring lengths, log(t₂/t₁) / log(n₂/n₁): how
    fast time grows in each stretch of n (m lengths give m − 1 slopes)."""
    ns, seconds = np.asarray(ns, float), np.asarray(seconds, float)
    return np.diff(np.log(seconds)) / np.diff(np.log(ns))


def against_square(exponent: float, tolerance: float = SQUARE_TOLERANCE) -> str:
    """How a measured growth exponent compares with the 2 of attention's arithmetic:
    ``"slower"`` (below 2 − tolerance), ``"like n²"`` (within it) or ``"faster"``.

    >>> against_square(1.57), against_square(1.95), against_square(2.4)
    ('slower', 'like n²', 'faster')
    """
    if exponent < 2 - tolerance:
        return "slower"
    return "faster" if exponent > 2 + tolerance else "like n²"


def shared_verdict(exponents) -> str | None:
    """The word of :func:`against_square` that every exponent in ``exponents`` gets (the
    minima's fit and each round's, say), or None when they differ: a verdict that the
    spread between rounds could reverse is not a verdict.

    >>> shared_verdict([2.02, 1.93, 2.10]), shared_verdict([1.9, 1.8])
    ('like n²', None)
    """
    words = {against_square(float(e)) for e in exponents}
    return words.pop() if len(words) == 1 else None


@dataclass(frozen=True)
class Growth:
    """Time and memory of :func:`lean_attention` against the sequence length n.

    Attributes
    ----------
    ns : ndarray of int (m,)
    heads, d_k, rounds : int
    seconds : ndarray (m,)
        Per n, the shortest of all its timed calls.
    round_seconds : ndarray (rounds, m)
        Per round, the best of that round's calls; the rounds interleave the sizes.
    peak_bytes : ndarray of int (m,)
        Peak memory of one call (tracemalloc).
    weights_bytes : ndarray of int (m,)
        H·n²·8 bytes: the float64 weights alone.
    fit_ns : ndarray of int
        The lengths the exponent is fitted over (those with n >= ``fit_from``, where
        the n² work outweighs the fixed cost of a call).
    exponent : float
        Slope of log time against log n over ``fit_ns``, from the minima.
    exponent_low, exponent_high : float
        The smallest and largest slope among the rounds fitted one by one.
    conclusive : bool
        True when that spread is at most :data:`EXPONENT_SPREAD_LIMIT`.
    """

    ns: np.ndarray
    heads: int
    d_k: int
    rounds: int
    seconds: np.ndarray
    round_seconds: np.ndarray
    peak_bytes: np.ndarray
    weights_bytes: np.ndarray
    fit_ns: np.ndarray
    exponent: float
    exponent_low: float
    exponent_high: float

    @property
    def conclusive(self) -> bool:
        return self.exponent_high - self.exponent_low <= EXPONENT_SPREAD_LIMIT



def measure_growth(ns, heads: int, d_k: int, rounds: int, rng: np.random.Generator,
                   *, fit_from: int = 128, min_round: float = 0.02,
                   progress=None) -> Growth:
    """Time :func:`lean_attention` at every n in ``ns`` over ``rounds`` interleaved rounds.

    Each round visits the sizes in a new random order and times each size until
    ``min_round`` seconds (or 50 calls) have passed, keeping its best; one warm-up call
    per size comes first, and everything runs on one BLAS thread.

    Parameters
    ----------
    ns : sequence of int
        At least two lengths, each 2..8192, with H·n² <= :data:`MAX_WEIGHT_ELEMENTS`.
    heads, d_k, rounds : int
        1..64, 1..1024, 2..20.
    rng : numpy.random.Generator
        For the inputs and the order of the sizes.
    fit_from : int
        The exponent is fitted over n >= fit_from (over all n if fewer than two qualify).
    progress : callable, optional
        Called with a fraction in [0, 1] after each round.
    """
    ns = np.array(sorted({whole_number(n, "n", 2, 8192) for n in ns}), dtype=int)
    if ns.size < 2:
        raise ValueError(f"measure_growth needs at least two lengths n; got {ns.tolist()}")
    heads = whole_number(heads, "heads", 1, 64)
    d_k = whole_number(d_k, "d_k", 1, 1024)
    rounds = whole_number(rounds, "rounds", 2, 20)
    for n in ns:
        check_cost_size(int(n), heads)
    inputs = [tuple(rng.standard_normal((heads, n, d_k)) for _ in range(3)) for n in ns]
    round_seconds = np.empty((rounds, ns.size))
    with one_blas_thread():
        for qkv in inputs:  # warm-up: first-touch page faults, BLAS buffers
            lean_attention(*qkv)
        for r in range(rounds):
            for i in rng.permutation(ns.size):
                round_seconds[r, i] = best_time(lambda qkv=inputs[i]: lean_attention(*qkv),
                                                1, min_total=min_round, max_calls=50)
            if progress is not None:
                progress((r + 1) / rounds)
    peaks = np.array([peak for _, peak in peak_memories(
        [(lean_attention, qkv) for qkv in inputs], keep_results=False)])
    fit = ns >= fit_from if np.count_nonzero(ns >= fit_from) >= 2 else np.ones(ns.size, bool)
    per_round = [growth_exponent(ns[fit], row[fit]) for row in round_seconds]
    seconds = round_seconds.min(axis=0)
    return Growth(ns=ns, heads=heads, d_k=d_k, rounds=rounds, seconds=seconds,
                  round_seconds=round_seconds, peak_bytes=peaks,
                  weights_bytes=heads * ns * ns * 8, fit_ns=ns[fit],
                  exponent=growth_exponent(ns[fit], seconds[fit]),
                  exponent_low=float(min(per_round)), exponent_high=float(max(per_round)))
