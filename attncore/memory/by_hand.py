r"""Three pairs written into a state and read back, small enough to check by hand.

The keys (d_k = 3) and values (d_v = 2) are one-decimal numbers: every entry of every
outer product :math:`v_t k_t^\top`, of every state :math:`S_t` and of the linear read
:math:`S q = \sum_t (k_t \cdot q)\, v_t` has at most two decimals, and is rounded to
:data:`DECIMALS` decimals to drop binary floating point's last bits (0.8 × 0.8 is
0.6400000000000001 in float64, and 0.6² + 0.8² is 1.0000000000000002). The softmax read of the
same pairs, :math:`\sum_t \mathrm{softmax}_t(c\, k_t \cdot q)\, v_t`, needs a calculator
for its exponentials only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import positive_number, whole_number
from .rules import crosstalk, linear_memory, softmax_memory

#: k₁ and k₂ are orthogonal; k₃ overlaps k₁ (k₁ · k₃ = 0.6). Every key has length 1.
KEYS = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.6, 0.0, 0.8))
VALUES = ((2.0, 0.0), (0.0, 2.0), (1.0, 1.0))
SCALES = (1.0, 2.0, 4.0, 8.0)  # the softmax's sharpness c the lesson offers
DECIMALS = 12  # far below what the page shows, far above float64's last bits
MAX_SCALE = 50.0  # e^50 ≈ 5×10²¹ still fits float64 with room; the page offers at most 8


@dataclass(frozen=True)
class WorkedMemory:
    """The pairs written one at a time and read with one stored key.

    keys (n, d_k), values (n, d_v); outer (n, d_v, d_k) each write :math:`v_t k_t^\\top`;
    states (n, d_v, d_k) :math:`S_t` after write t; query the index j of the stored key
    read, q (d_k,) that key; similarities (n,) :math:`k_t \\cdot q`; linear_terms (n, d_v)
    :math:`(k_t \\cdot q) v_t`; linear_read (d_v,) :math:`S_n q`; leak (d_v,) the terms of
    the other pairs, summed; scale c; scores (n,) :math:`c\\, k_t \\cdot q`; exponentials
    (n,) :math:`e^{\\text{score}}`; weights (n,) the softmax; softmax_read (d_v,).
    """

    keys: np.ndarray
    values: np.ndarray
    outer: np.ndarray
    states: np.ndarray
    query: int
    q: np.ndarray
    similarities: np.ndarray
    linear_terms: np.ndarray
    linear_read: np.ndarray
    leak: np.ndarray
    scale: float
    scores: np.ndarray
    exponentials: np.ndarray
    weights: np.ndarray
    softmax_read: np.ndarray

    @property
    def wanted(self) -> np.ndarray:
        """(d_v,) the value stored with the key read."""
        return self.values[self.query]

    @property
    def linear_error(self) -> float:
        """‖linear read − wanted value‖ (the leak's length)."""
        return float(np.linalg.norm(self.linear_read - self.wanted))

    @property
    def softmax_error(self) -> float:
        """‖softmax read − wanted value‖."""
        return float(np.linalg.norm(self.softmax_read - self.wanted))


def worked_memory(query: int = 0, scale: float = 4.0, keys=KEYS, values=VALUES
                  ) -> WorkedMemory:
    """Write ``keys`` and ``values`` with linear attention, then read stored key ``query``
    (from 0) with linear attention and with softmax attention of sharpness ``scale``.

    >>> w = worked_memory(0)
    >>> w.states[-1].tolist()
    [[2.6, 0.0, 0.8], [0.6, 2.0, 0.8]]
    >>> w.linear_read.tolist()
    [2.6, 0.6]
    """
    keys, values = np.asarray(keys, dtype=np.float64), np.asarray(values, dtype=np.float64)
    n = len(keys)
    j = whole_number(query, "query", 0, n - 1)
    c = positive_number(scale, "scale")
    if c > MAX_SCALE:
        raise ValueError(f"scale must be at most {MAX_SCALE:g}; got {c:g}")
    q = keys[j]
    trace = linear_memory(keys, values, q[None, :])
    split = crosstalk(trace, 0, j)
    soft = softmax_memory(keys, values, q[None, :], scale=c)
    outer = values[:, :, None] * keys[:, None, :]  # v_t k_tᵀ: (n, d_v, 1) x (n, 1, d_k)
    exact = lambda a: np.round(a, DECIMALS) + 0.0  # noqa: E731  (+ 0.0: no -0.0)
    scores = soft.scores[0]
    return WorkedMemory(keys, values, exact(outer), exact(trace.states), j, q,
                        exact(split.similarities), exact(split.terms), exact(trace.reads[0]),
                        exact(split.leak), c, scores, np.exp(scores), soft.weights[0],
                        soft.reads[0])
