r"""What a linear-attention read takes in from the other stored pairs: the crosstalk.

After n pairs, reading stored key :math:`k_j` gives

.. math:: S_n k_j = (k_j \cdot k_j)\, v_j + \sum_{t \ne j} (k_t \cdot k_j)\, v_t

With unit keys the first term is :math:`v_j` itself; the sum is the leak. With n random
unit keys in d_k dimensions each overlap :math:`k_t \cdot k_j` has mean 0 and variance
:math:`1/d_k`, so with random unit values the leak's squared length averages
:math:`(n - 1)/d_k`: it is as long as the value itself once n − 1 reaches d_k. At most
d_k keys can be orthogonal, so no choice of keys avoids the leak past d_k pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import whole_number
from .rules import Crosstalk, crosstalk, linear_memory
from .stored_pairs import MAX_DIM, MAX_PAIRS, SEEDS, counts_and_seeds, random_pairs


def first_read(d_k: int, n: int, seed: int = 0) -> Crosstalk:
    """Store n random pairs (unit keys and values, d_v = d_k, as
    :func:`attncore.memory.stored_pairs.recall_curve` draws them) with linear attention and
    split the read of the first stored key into its own term and the others' leak."""
    d_k = whole_number(d_k, "d_k", 1, MAX_DIM)
    n = whole_number(n, "n", 1, MAX_PAIRS)
    keys, values = random_pairs(whole_number(seed, "seed", 0, 2**32 - 1), n, d_k, d_k)
    return crosstalk(linear_memory(keys, values, keys[:1]), query=0, wanted=0)


@dataclass(frozen=True)
class LeakCurve:
    """The leak of linear-attention reads against the number of stored pairs.

    pair_counts (c,); ratio (s, c) the mean over the n reads of a draw of
    ‖leak‖ / ‖own term‖ (0 for n = 1), one row per seed; expected (c,)
    :math:`\\sqrt{(n - 1)/d_k}`, the root of the leak's mean squared length.
    """

    d_k: int
    pair_counts: np.ndarray
    seeds: np.ndarray
    ratio: np.ndarray
    expected: np.ndarray

    @property
    def mean_ratio(self) -> np.ndarray:
        """(c,) the ratio averaged over the seeds."""
        return self.ratio.mean(axis=0)

    @property
    def as_long_at(self) -> int | None:
        """The fewest pairs, of those measured, whose mean leak is at least as long as the
        value read (None if none is)."""
        found = np.flatnonzero(self.mean_ratio >= 1.0)
        return int(self.pair_counts[found[0]]) if found.size else None


def leak_curve(d_k: int, pair_counts, seeds=SEEDS) -> LeakCurve:
    r"""Store n random pairs for each n of ``pair_counts`` (the draws of
    :func:`attncore.memory.stored_pairs.recall_curve`) and measure every read's leak.

    The read of key j is :math:`\sum_t (k_t \cdot k_j) v_t`; with G = K Kᵀ the overlaps,
    the leak of every read at once is :math:`(G - \mathrm{diag}(G)) V`.
    """
    d_k = whole_number(d_k, "d_k", 1, MAX_DIM)
    counts, seed_list = counts_and_seeds(pair_counts, seeds)
    ratio = np.zeros((seed_list.size, counts.size))
    for c, n in enumerate(counts):
        for s, seed in enumerate(seed_list):
            keys, values = random_pairs(int(seed), int(n), d_k, d_k)
            overlaps = keys @ keys.T  # (n, d_k) x (d_k, n) -> (n, n)
            own = np.diagonal(overlaps)[:, None] * values  # (n, d_v)
            leak = (overlaps - np.diag(np.diagonal(overlaps))) @ values  # (n, n) x (n, d_v)
            ratio[s, c] = np.mean(np.linalg.norm(leak, axis=1) / np.linalg.norm(own, axis=1))
    return LeakCurve(d_k, counts, seed_list, ratio, np.sqrt((counts - 1) / d_k))
