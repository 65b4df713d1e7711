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
    r"""Shannon entropy of each row in nats: :math:`-\sum_j w_j \ln w_j`.

    0 for a one-hot row; :math:`\log T_k` for a uniform row (the maximum).
    Terms with :math:`w_j = 0` contribute 0 (the limit of :math:`x \log x`).
    """
    w = _weights(w)
    logs = np.log(np.where(w > 0, w, 1.0))  # log 1 = 0 where w = 0
    return 0.0 - np.sum(w * logs, axis=-1)  # 0.0 - x: no "-0.0" for one-hot rows


def effective_keys(w) -> np.ndarray:
    r"""Effective number of keys attended to, :math:`e^{\text{entropy}}`: 1 (one-hot) to Tk
    (uniform)."""
    return np.exp(entropy(w))


def max_weight(w) -> np.ndarray:
    """The largest weight of each row: 1 for a one-hot row, 1/Tk for a uniform one."""
    return np.max(_weights(w), axis=-1)


# A row of weights is "nearly one-hot" when its largest weight is above this; every page
# that says so, and the glossary that defines it, use this one number.
NEARLY_ONE_HOT = 0.99


#: Tokens are called attention sinks only when they take at least this many times the
#: share an even spread would give them (lesson 9's [CLS] and [SEP], lesson 10's first
#: token).
SINK_FACTOR = 2


def nearly_one_hot(w) -> np.ndarray:
    """Whether each row puts more than :data:`NEARLY_ONE_HOT` of its weight on one key."""
    return max_weight(w) > NEARLY_ONE_HOT


def jacobian_norm(w) -> np.ndarray:
    r"""Frobenius norm of the softmax Jacobian :math:`J = \mathrm{diag}(w) - w w^\top` per row.

    It is 0 for a one-hot row (a saturated softmax passes no gradient) and
    :math:`\sqrt{(1 - 1/T_k)/T_k}` for a uniform row.

    Notes
    -----
    Since the row sums to 1, :math:`J_{ii} = w_i (1 - w_i) = w_i \sum_{j \ne i} w_j` and
    :math:`J_{ij} = -w_i w_j`, so

    .. math:: \|J\|_F^2 = \sum_i \Big(w_i \sum_{j \ne i} w_j\Big)^2
              + \sum_i w_i^2 \sum_{j \ne i} w_j^2,

    a sum of non-negative terms: nothing cancels, so a nearly saturated row keeps its
    digits (the expanded form :math:`\sum w^2 - 2\sum w^3 + (\sum w^2)^2` returns 0.0 for
    softmax([20, 0]), whose norm is 4.1e-9). The sums that leave one term out are
    prefix plus suffix sums, and everything is scaled by the largest diagonal entry so
    that squares of weights near 1e-300 do not underflow.
    """
    w = _weights(w)
    diag = w * _sum_of_others(w)  # (..., Tk): J_ii, each >= 0
    scale = np.max(diag, axis=-1, keepdims=True)  # (..., 1)
    scale = np.where(scale > 0, scale, 1.0)  # one-hot rows: every term is 0 anyway
    u2 = w * (w / scale)  # (..., Tk): w_i² / scale, so u2_i · u2_j = (w_i w_j / scale)²
    total = np.sum((diag / scale) ** 2 + u2 * _sum_of_others(u2), axis=-1)
    return scale[..., 0] * np.sqrt(total)


def _sum_of_others(x: np.ndarray) -> np.ndarray:
    """For each entry along the last axis, the sum of all the others (no subtraction)."""
    before = np.concatenate([np.zeros_like(x[..., :1]), np.cumsum(x, axis=-1)[..., :-1]],
                            axis=-1)
    after = np.concatenate([np.cumsum(x[..., ::-1], axis=-1)[..., ::-1][..., 1:],
                            np.zeros_like(x[..., :1])], axis=-1)
    return before + after


def _offset_mass(w: np.ndarray, offset: int) -> np.ndarray:
    """Weight on key j = i + offset for each row i (0 where that key does not exist)."""
    Tq, Tk = w.shape[-2:]
    i = np.arange(Tq)
    j = i + offset
    ok = (j >= 0) & (j < Tk)
    out = np.zeros(w.shape[:-1])
    out[..., ok] = w[..., i[ok], j[ok]]
    return out


def diagonal_mass(w) -> np.ndarray:
    """Weight each query puts on its own position (key j = i), shape (..., Tq)."""
    return _offset_mass(_weights(w), 0)


def previous_token_mass(w) -> np.ndarray:
    """Weight on the previous token (key j = i - 1); 0 for the first row."""
    return _offset_mass(_weights(w), -1)


def first_token_mass(w) -> np.ndarray:
    """Weight on the first key (j = 0), shape (..., Tq)."""
    return _weights(w)[..., 0]


def local_mass(w, window: int) -> np.ndarray:
    """Weight on keys within ``window`` positions of the query (|i - j| <= window)."""
    w = _weights(w)
    Tq, Tk = w.shape[-2:]
    near = np.abs(np.arange(Tq)[:, None] - np.arange(Tk)[None, :]) <= window
    return np.sum(w * near, axis=-1)


def sparsity(w, fraction: float = 0.5) -> np.ndarray:
    """Fraction of keys given less than ``fraction`` of the uniform weight 1/T_k, per row.

    Relative to uniform, so a uniform row scores 0 at every length (an absolute threshold
    such as 0.1 would call a uniform row over 11 keys, 1/11 each, fully sparse); a one-hot
    row scores (T_k - 1)/T_k, the most a row can.
    """
    w = _weights(w)
    return np.mean(w < fraction / w.shape[-1], axis=-1)


def head_similarity(w) -> np.ndarray:
    r"""Cosine similarity between the heads' weight matrices, flattened.

    Parameters
    ----------
    w : array_like (H, Tq, Tk)

    Returns
    -------
    ndarray (H, H)
        1 on the diagonal; 1 for two heads with proportional patterns; near 0 for heads
        that put their weight in different places (weights are non-negative, so never < 0).
    """
    w = _weights(w)
    if w.ndim != 3:
        raise ValueError(f"head_similarity needs weights of shape (H, Tq, Tk); got {w.shape}")
    flat = w.reshape(w.shape[0], -1)  # (H, Tq·Tk)
    norms = np.linalg.norm(flat, axis=1)
    norms = np.where(norms > 0, norms, 1.0)
    unit = flat / norms[:, None]
    return np.clip(unit @ unit.T, 0.0, 1.0)


def head_statistics(w) -> dict[str, np.ndarray]:
    """Per-head averages over rows of every statistic here: name -> (H,) array.

    Parameters
    ----------
    w : array_like (H, Tq, Tk)
    """
    w = _weights(w)
    return {
        "entropy": entropy(w).mean(axis=-1),
        "max weight": max_weight(w).mean(axis=-1),
        "diagonal": diagonal_mass(w).mean(axis=-1),
        "previous token": previous_token_mass(w).mean(axis=-1),
        "first token": first_token_mass(w).mean(axis=-1),
        "sparsity (< 1/(2T))": sparsity(w).mean(axis=-1),
    }
