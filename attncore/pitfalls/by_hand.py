r"""Masking by hand, and how it goes wrong: the textbook's masked softmax and the
mistaken readings of a mask, each as code elsewhere writes it.

Everywhere else in attncore a boolean mask means **True = may attend**, masked scores
become :math:`-\infty` and a fully masked row gets all-zero weights
(:mod:`attncore.softmax`). Code written elsewhere makes other choices; the functions here
reproduce them so that a page can show their numbers:

* :func:`plain_masked_softmax`: the textbook masked softmax, with no policy for a fully
  masked row, in any float type. Fill :math:`-\infty` and such a row is NaN; fill -1e9 and
  it is uniform over keys that were all meant to be hidden; fill -1e9 in float16, which
  cannot hold it (:func:`stored_as`), and it is NaN again.
* :func:`read_mask`: which cells a boolean mask lets through under each convention,
  ``"keep"`` (True or 1 = may attend, hidden with ``np.where(mask == 0, -inf, s)``) or
  ``"blocked"`` (True = masked, hidden with ``s.masked_fill(mask, float("-inf"))``: PyTorch's
  ``masked_fill`` writes the value where the mask is True). A mask written in one
  convention and read in the other is inverted.
* :func:`blocked_triangle`: ``np.triu(ones, k)``, the usual way to write a causal mask as
  "True = blocked". k = 1 is right; k = 0 also blocks the diagonal (the off-by-one).
* :func:`softmax_over_queries`: the softmax taken over the wrong axis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import as_bool_mask, as_real_array, whole_number
from ..softmax import softmax

#: How each convention hides the cells of a boolean mask ``mask`` in the scores ``s``, as
#: code a student can run (NumPy for "keep", PyTorch for "blocked"); lesson 3 shows these.
CONVENTIONS = {
    "keep": "np.where(mask == 0, -np.inf, s)",  # True or 1 = may attend (attncore's)
    "blocked": 's.masked_fill(mask, float("-inf"))',  # True = masked
}


@dataclass(frozen=True)
class PlainSoftmax:
    """Every step of the textbook masked softmax, in one float type (NaN is possible).

    Attributes
    ----------
    filled : ndarray (..., Tk)
        The scores with ``fill`` (as that float type stores it) in the masked cells.
    shift : ndarray (..., 1)
        The row maximum m.
    centred : ndarray (..., Tk)
        ``filled - shift``; NaN where both are -inf (-inf - (-inf) is undefined).
    exps : ndarray (..., Tk)
        ``exp(centred)``.
    row_sums : ndarray (..., 1)
    weights : ndarray (..., Tk)
        ``exps / row_sums``; a fully masked row is NaN (fill -inf, or -1e9 in float16)
        or uniform (a finite fill).
    """

    filled: np.ndarray
    shift: np.ndarray
    centred: np.ndarray
    exps: np.ndarray
    row_sums: np.ndarray
    weights: np.ndarray


def stored_as(value: float, dtype) -> float:
    """``value`` as the float type ``dtype`` stores it, back as a Python float.

    A number beyond the type's largest finite value (``np.finfo(dtype).max``, 65,504 for
    float16) becomes ±inf, as NumPy's cast (and PyTorch's ``.half()``) makes it; PyTorch's
    ``masked_fill`` refuses such a value instead ("value cannot be converted to type
    at::Half without overflow").

    >>> stored_as(-1e9, np.float16), stored_as(-1e9, np.float32)
    (-inf, -1000000000.0)
    """
    dtype = _float_type(dtype)
    with np.errstate(over="ignore"):
        return float(np.asarray(float(value)).astype(dtype))


def plain_masked_softmax(scores, allowed, fill: float, dtype=np.float64) -> PlainSoftmax:
    r"""The textbook masked softmax: masked scores replaced by ``fill``, then
    :math:`e^{s - m} / \sum e^{s - m}` with m the row maximum, all in ``dtype``.

    Parameters
    ----------
    scores : array_like (..., Tk)
        Finite scores.
    allowed : array_like of bool, broadcastable to ``scores``
        True = may attend.
    fill : float
        What masked scores become: ``-np.inf``, ``-1e9``, ``np.finfo(dtype).min`` ...
    dtype : float type
        The type every step is computed in (float64, float32, float16).

    Returns
    -------
    PlainSoftmax
        Rows with at least one allowed key sum to 1 (to the type's rounding); a fully
        masked row is NaN or uniform, never the zeros of :func:`attncore.softmax.softmax`.
    """
    dtype = _float_type(dtype)
    scores = as_real_array(scores, "scores", min_ndim=1)
    allowed = _broadcast(allowed, scores.shape)
    with np.errstate(over="ignore", invalid="ignore"):
        filled = np.where(allowed, scores.astype(dtype), np.asarray(float(fill)).astype(dtype))
        shift = np.max(filled, axis=-1, keepdims=True)
        centred = filled - shift
        exps = np.exp(centred)
        row_sums = np.sum(exps, axis=-1, keepdims=True)
        weights = exps / row_sums
    return PlainSoftmax(filled, shift, centred, exps, row_sums, weights)


def read_mask(mask, convention: str) -> np.ndarray:
    """The cells a boolean mask lets through (True = may attend) when read by
    ``convention``: ``"keep"`` (True = may attend, as attncore) or ``"blocked"`` (True =
    masked, as PyTorch's ``masked_fill`` and ``nn.MultiheadAttention``'s ``attn_mask``)."""
    mask = as_bool_mask(mask)
    if convention == "keep":
        return mask.copy()
    if convention == "blocked":
        return ~mask
    raise ValueError(f"convention must be one of {sorted(CONVENTIONS)}; got {convention!r}")


def blocked_triangle(t: int, k: int) -> np.ndarray:
    """``np.triu(ones((T, T)), k)`` as a boolean "True = blocked" mask, shape (T, T).

    k = 1 blocks the keys after each query: the causal mask. k = 0 blocks the diagonal as
    well, so no token sees itself and the first query sees nothing.
    """
    t = whole_number(t, "T", 1)
    k = whole_number(k, "k")
    return np.triu(np.ones((t, t), dtype=bool), k=k)


def softmax_over_queries(scores, allowed) -> np.ndarray:
    """The softmax taken over the queries (axis -2) instead of the keys: each *column*
    that keeps an allowed cell sums to 1, and the rows sum to anything.

    Parameters
    ----------
    scores : array_like (..., Tq, Tk)
    allowed : array_like of bool, broadcastable to ``scores``; True = may attend
    """
    scores = as_real_array(scores, "scores", min_ndim=2)
    return softmax(scores, axis=-2, mask=_broadcast(allowed, scores.shape))


def _float_type(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    if not np.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype must be a float type (float16, float32, float64); got {dtype}")
    return dtype


def _broadcast(mask, shape) -> np.ndarray:
    mask = as_bool_mask(mask)
    try:
        return np.broadcast_to(mask, shape)
    except ValueError as exc:
        raise ValueError(f"mask of shape {mask.shape} does not broadcast to the scores' "
                         f"shape {shape}") from exc
