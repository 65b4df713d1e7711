r"""Statistics of attention weights, row by row.

Every function takes weights ``w`` of shape (..., Tq, Tk) (or one row (Tk,)) whose
rows sum to 1, and returns one number per row, shape (..., Tq).
"""

from __future__ import annotations

import numpy as np

from ._checks import as_real_array


def _weights(w) -> np.ndarray:
    w = as_real_array(w, "weights", min_ndim=1)
    if np.any(w < 0):
        raise ValueError("weights must be non-negative (they are softmax outputs)")
    return w


def entropy(w) -> np.ndarray:
    r"""Shannon entropy of each row in nats: :math:`H = -\sum_j w_j \log w_j`.

    0 for a one-hot row; :math:`\log T_k` for a uniform row (the maximum).
    Terms with :math:`w_j = 0` contribute 0 (the limit of :math:`x \log x`).
    """
    w = _weights(w)
    logs = np.log(np.where(w > 0, w, 1.0))  # log 1 = 0 where w = 0
    return 0.0 - np.sum(w * logs, axis=-1)  # 0.0 - x: no "-0.0" for one-hot rows


def effective_keys(w) -> np.ndarray:
    r"""Effective number of keys attended to, :math:`e^{H}`: 1 (one-hot) to Tk (uniform)."""
    return np.exp(entropy(w))


def max_weight(w) -> np.ndarray:
    """The largest weight of each row: 1 for hard (one-hot) attention, 1/Tk for uniform."""
    return np.max(_weights(w), axis=-1)


def jacobian_norm(w) -> np.ndarray:
    r"""Frobenius norm of the softmax Jacobian :math:`J = \mathrm{diag}(w) - w w^\top` per row.

    Computed without forming J: :math:`\|J\|_F^2 = \sum_j w_j^2 - 2\sum_j w_j^3
    + (\sum_j w_j^2)^2`. It is 0 for a one-hot row (a saturated softmax passes no
    gradient) and :math:`\sqrt{(1 - 1/T_k)/T_k}` for a uniform row.
    """
    w = _weights(w)
    s2 = np.sum(w**2, axis=-1)
    s3 = np.sum(w**3, axis=-1)
    return np.sqrt(np.maximum(s2 - 2 * s3 + s2**2, 0.0))
