r"""Compatibility (score) functions between queries and keys.

All return scores of shape ``(..., Tq, Tk)``: rows are queries, columns are keys.

======================  ==========================================  ==================
name                    score(q, k)                                 parameters
======================  ==========================================  ==================
``dot``                 :math:`q^\top k`                            0
``scaled_dot``          :math:`q^\top k / \sqrt{d_k}`               0
``general`` (Luong)     :math:`q^\top W k`                          d_q · d_k
``additive`` (Bahdanau) :math:`v^\top \tanh(W_q q + W_k k)`         d_a (d_q + d_k + 1)
======================  ==========================================  ==================

These four names (:data:`SCORE_NAMES`) are the only ones used anywhere in the project;
Luong's "concat" score is the additive one. :func:`score_parameter_count` counts each
one's parameters.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_real_array, require_finite

#: The score functions, by the one name each has everywhere.
SCORE_NAMES = ("dot", "scaled_dot", "general", "additive")

#: How a page writes each name.
SCORE_LABELS = {"dot": "dot", "scaled_dot": "scaled dot", "general": "general",
                "additive": "additive"}


def check_qk(q, k, q_name: str = "Q", k_name: str = "K") -> tuple[np.ndarray, np.ndarray]:
    """Validate queries (..., Tq, d) and keys (..., Tk, d) for a dot-product score."""
    q = as_real_array(q, q_name, min_ndim=2)
    k = as_real_array(k, k_name, min_ndim=2)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"{q_name} and {k_name} must have the same last dimension d_k; "
            f"got {q_name} {q.shape} and {k_name} {k.shape}"
        )
    try:
        np.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    except ValueError as exc:
        raise ValueError(
            f"batch dimensions of {q_name} {q.shape} and {k_name} {k.shape} do not broadcast"
        ) from exc
    return q, k


def dot_scores(q, k) -> np.ndarray:
    r"""Dot-product scores :math:`S = Q K^\top`.

    Parameters
    ----------
    q : array_like (..., Tq, d_k)
    k : array_like (..., Tk, d_k)

    Returns
    -------
    ndarray (..., Tq, Tk)
        ``S[..., i, j] = q_i · k_j``.
    """
    q, k = check_qk(q, k)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow raises just below
        s = q @ np.swapaxes(k, -1, -2)  # (..., Tq, d_k) x (..., d_k, Tk) -> (..., Tq, Tk)
    return require_finite(s, "Q Kᵀ")


def scaled_dot_scores(q, k) -> np.ndarray:
    r"""Scaled dot-product scores :math:`Q K^\top / \sqrt{d_k}`, shape (..., Tq, Tk)."""
    q, k = check_qk(q, k)
    return dot_scores(q, k) / np.sqrt(q.shape[-1])  # dividing cannot overflow


def general_scores(q, k, w) -> np.ndarray:
    r"""Luong's "general" scores :math:`q^\top W k`.

    Parameters
    ----------
    q : array_like (..., Tq, d_q)
    k : array_like (..., Tk, d_k)
    w : array_like (d_q, d_k)

    Returns
    -------
    ndarray (..., Tq, Tk)
        With ``w`` the identity this equals :func:`dot_scores`.
    """
    q = as_real_array(q, "Q", min_ndim=2)
    k = as_real_array(k, "K", min_ndim=2)
    w = as_real_array(w, "W", min_ndim=2)
    if w.shape != (q.shape[-1], k.shape[-1]):
        raise ValueError(
            f"W must have shape (d_q, d_k) = {(q.shape[-1], k.shape[-1])}; got {w.shape}"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        s = q @ w @ np.swapaxes(k, -1, -2)  # (..., Tq, d_q) x (d_q, d_k) x (..., d_k, Tk)
    return require_finite(s, "Q W Kᵀ")


def additive_scores(q, k, w_q, w_k, v) -> np.ndarray:
    r"""Bahdanau's additive (concat) scores :math:`v^\top \tanh(W_q q_i + W_k k_j)`.

    Parameters
    ----------
    q : array_like (..., Tq, d_q)
    k : array_like (..., Tk, d_k)
    w_q : array_like (d_a, d_q)
    w_k : array_like (d_a, d_k)
    v : array_like (d_a,)

    Returns
    -------
    ndarray (..., Tq, Tk)
        Each score lies in ``[-sum|v|, sum|v|]`` because tanh is bounded.
    """
    q = as_real_array(q, "Q", min_ndim=2)
    k = as_real_array(k, "K", min_ndim=2)
    w_q = as_real_array(w_q, "W_q", min_ndim=2)
    w_k = as_real_array(w_k, "W_k", min_ndim=2)
    v = as_real_array(v, "v", min_ndim=1)
    d_a = v.shape[0]
    if v.ndim != 1 or w_q.shape != (d_a, q.shape[-1]) or w_k.shape != (d_a, k.shape[-1]):
        raise ValueError(
            "additive score needs v (d_a,), W_q (d_a, d_q), W_k (d_a, d_k); got "
            f"v {v.shape}, W_q {w_q.shape}, W_k {w_k.shape} for d_q={q.shape[-1]}, "
            f"d_k={k.shape[-1]}"
        )
    hq = q @ w_q.T  # (..., Tq, d_a)
    hk = k @ w_k.T  # (..., Tk, d_a)
    hidden = np.tanh(hq[..., :, None, :] + hk[..., None, :, :])  # (..., Tq, Tk, d_a)
    return require_finite(hidden @ v, "additive scores")  # (..., Tq, Tk)


def score_parameter_count(name: str, d_q: int, d_k: int, d_a: int | None = None) -> int:
    """Number of learned parameters of a score function (see the module table)."""
    if name in ("dot", "scaled_dot"):
        return 0
    if name == "general":
        return d_q * d_k
    if name == "additive":
        if d_a is None:
            raise ValueError("the additive score needs the attention size d_a")
        return d_a * (d_q + d_k + 1)
    raise ValueError(f"unknown score {name!r}; expected one of {', '.join(SCORE_NAMES)}")
