r"""The memory-lean form of scaled dot-product attention, timed by lesson 7 and the benchmark.

:func:`lean_attention` holds one (..., Tq, Tk) array at a time, the weights, and equals
:func:`attncore.attention.scaled_dot_product_attention` up to rounding. The lesson's
function is the plain one, which reads as its formula; this one is what the timings run.
"""

from __future__ import annotations

import numpy as np

from ..attention import check_qkv


def lean_attention(q, k, v) -> tuple[np.ndarray, np.ndarray]:
    r"""softmax(Q Kᵀ/√d_k) V holding a single (..., Tq, Tk) array: the weights.

    Same result as :func:`attncore.attention.scaled_dot_product_attention` (to
    rounding, about 1e-16), with three memory savings that make it hard to read, which
    is why the lesson's function is the plain one:

    * 1/√d_k is folded into Q (the small array) instead of Q Kᵀ;
    * the softmax runs in place, subtracting the row maximum only when some score could
      exceed 30 in size (bounded by Cauchy–Schwarz, \|s_ij\| <= \|q_i\| \|k_j\|): below
      that, exp stays within [1e-13, 1e13] and the shift cancels in exact arithmetic;
    * one product with V augmented by a column of ones gives both E V and the row sums.

    Parameters
    ----------
    q, k, v : array_like (..., Tq, d_k), (..., Tk, d_k), (..., Tk, d_v)

    Returns
    -------
    weights : ndarray (..., Tq, Tk), rows summing to 1
    output : ndarray (..., Tq, d_v)
    """
    q, k, v = check_qkv(q, k, v)
    q = q / np.sqrt(q.shape[-1])
    s = q @ np.swapaxes(k, -1, -2)  # (..., Tq, d_k) x (..., d_k, Tk) -> (..., Tq, Tk)
    bound = _max_row_norm(q) * _max_row_norm(k)
    if not bound < 1e300 and not np.all(np.isfinite(s)):
        raise ValueError("the scores Q Kᵀ/√d_k overflowed float64; use smaller inputs")
    if not bound <= _EXP_SAFE:
        s -= np.max(s, axis=-1, keepdims=True)
    np.exp(s, out=s)
    ones = np.ones(v.shape[:-1] + (1,))
    ev = s @ np.concatenate([v, ones], axis=-1)  # (..., Tq, Tk) x (..., Tk, d_v + 1)
    inv = 1.0 / ev[..., -1:]  # (..., Tq, 1): one over each row sum
    s *= inv
    return s, ev[..., :-1] * inv


# exp(s) for |s| <= 30 lies in [1e-13, 1e13]: E V cannot overflow where W V would not.
_EXP_SAFE = 30.0


def _max_row_norm(x: np.ndarray) -> float:
    with np.errstate(over="ignore"):
        return float(np.sqrt(np.max(np.sum(x * x, axis=-1))))
