r"""Softmax with temperature and a boolean mask, its steps, and its Jacobian.

.. math:: \mathrm{softmax}(s)_j = \frac{e^{(s_j - m)/\tau}}{\sum_k e^{(s_k - m)/\tau}},
          \quad m = \max_k s_k

with τ the temperature (T is the number of tokens everywhere in Attention Lab).

**Fully masked rows.** When a mask forbids every key of a row there is nothing to
attend to: with :math:`-\infty` scores the textbook formula gives NaN (0/0 without the
shift by the maximum; NaN/NaN with it, as -inf - (-inf) is undefined), and with
a large negative stand-in such as -1e9 it silently gives uniform weights over keys
that were meant to be hidden (:func:`attncore.pitfalls.plain_masked_softmax` computes
both, for lesson 3). Our policy: such a row gets all-zero weights (so its
attention output is the zero vector) and is reported by :func:`fully_masked_rows`.
Never NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import as_bool_mask, as_real_array, positive_number

#: While every |logit| is at most this, exp(logit) lies in [1e-13, 1e13]: the textbook
#: exp(s) can neither overflow nor lose a weight to underflow, so hand arithmetic may skip
#: the shift by the row maximum (which cancels in exact arithmetic).
HAND_EXP_LIMIT = 30.0


@dataclass(frozen=True)
class SoftmaxSteps:
    """Every intermediate of one softmax, for showing the computation.

    Attributes
    ----------
    logits : ndarray (..., n)
        ``x / temperature`` with masked entries set to ``-inf``.
    shift : ndarray (..., 1)
        The row maximum m subtracted before ``exp`` (0 for fully masked rows, and
        everywhere when ``subtract_max`` is False).
    exps : ndarray (..., n)
        ``exp(logits - shift)``; exactly 0 where masked.
    row_sums : ndarray (..., 1)
        Sum of ``exps`` along the axis; 0 only for fully masked rows.
    weights : ndarray (..., n)
        ``exps / row_sums``: each row sums to 1, fully masked rows are all 0.
    fully_masked : ndarray (...,) of bool
        True where the mask forbade every entry of the row.
    """

    logits: np.ndarray
    shift: np.ndarray
    exps: np.ndarray
    row_sums: np.ndarray
    weights: np.ndarray
    fully_masked: np.ndarray


def softmax_steps(
    x, axis: int = -1, temperature: float = 1.0, mask=None, *, subtract_max=True
) -> SoftmaxSteps:
    """Softmax along ``axis`` keeping every intermediate (see :class:`SoftmaxSteps`).

    Parameters
    ----------
    x : array_like (..., n)
        Finite scores.
    axis : int
        The axis that is normalised (the keys).
    temperature : float
        τ > 0. A small τ sharpens towards the one-hot argmax, a large τ flattens
        towards uniform.
    mask : array_like of bool, optional
        Broadcastable to ``x``; True means "may attend".
    subtract_max : bool or "if_needed"
        True: subtract the row maximum before ``exp`` (the stable form, and what
        :func:`softmax` does). False: the textbook form ``exp(s)``; the weights are the
        same to rounding unless ``exp`` overflows, which raises ValueError.
        "if_needed": the textbook form while every finite |logit| is at most
        :data:`HAND_EXP_LIMIT`, the stable form otherwise; for hand arithmetic.
    """
    x = as_real_array(x, "scores", min_ndim=1)
    temperature = positive_number(temperature, "temperature")
    with np.errstate(over="ignore"):
        logits = x / temperature
    if not np.all(np.isfinite(logits)):
        raise ValueError(
            f"scores / temperature overflowed float64 (temperature {temperature:g}); "
            "use a larger temperature or smaller scores"
        )
    if mask is None:
        masked = np.zeros(x.shape, dtype=bool)
    else:
        masked = ~_broadcast_mask(mask, x.shape)
        logits = np.where(masked, -np.inf, logits)
    if subtract_max == "if_needed":
        finite = logits[np.isfinite(logits)]
        subtract_max = bool(finite.size) and float(np.max(np.abs(finite))) > HAND_EXP_LIMIT
    elif not isinstance(subtract_max, bool):
        raise ValueError(f"subtract_max must be True, False or 'if_needed'; got {subtract_max!r}")
    allowed_any = np.any(~masked, axis=axis, keepdims=True)
    shift = np.max(logits, axis=axis, keepdims=True)
    shift = np.where(allowed_any & subtract_max, shift, 0.0)
    with np.errstate(over="ignore"):
        exps = np.exp(logits - shift)
    if not np.all(np.isfinite(exps)):
        raise ValueError(
            "exp of the scores overflowed: call with subtract_max=True (the stable form)"
        )
    row_sums = np.sum(exps, axis=axis, keepdims=True)
    weights = np.divide(exps, row_sums, out=np.zeros_like(exps), where=row_sums > 0)
    return SoftmaxSteps(
        logits=logits,
        shift=shift,
        exps=exps,
        row_sums=row_sums,
        weights=weights,
        fully_masked=~np.squeeze(allowed_any, axis=axis),
    )


def softmax(x, axis: int = -1, temperature: float = 1.0, mask=None) -> np.ndarray:
    """Numerically stable softmax along ``axis``.

    Parameters
    ----------
    x : array_like (..., n)
        Finite scores.
    axis : int
        The axis to normalise; rows are the default.
    temperature : float
        τ > 0; the scores are divided by τ first.
    mask : array_like of bool, optional
        Broadcastable to ``x``; True means "may attend".

    Returns
    -------
    ndarray, same shape as ``x``
        Non-negative; sums to 1 along ``axis`` for every row with at least one
        allowed entry; masked entries are exactly 0; fully masked rows are all 0.

    Examples
    --------
    >>> softmax([0.0, 0.0]).tolist()
    [0.5, 0.5]
    """
    return softmax_steps(x, axis=axis, temperature=temperature, mask=mask).weights


def fully_masked_rows(mask, axis: int = -1) -> np.ndarray:
    """True for each row of ``mask`` in which no entry may be attended to."""
    mask = as_bool_mask(mask)
    return ~np.any(mask, axis=axis)


def softmax_jacobian(p) -> np.ndarray:
    r"""Jacobian of the softmax at output ``p``: :math:`J = \mathrm{diag}(p) - p p^\top`.

    Parameters
    ----------
    p : array_like (..., n)
        Softmax outputs (rows summing to 1).

    Returns
    -------
    ndarray (..., n, n)
        ``J[..., i, j] = d p_i / d s_j`` for temperature 1. Symmetric; each row
        sums to 0 because the outputs always sum to 1.
    """
    p = as_real_array(p, "p", min_ndim=1)
    return p[..., :, None] * np.eye(p.shape[-1]) - p[..., :, None] * p[..., None, :]


def _broadcast_mask(mask, shape) -> np.ndarray:
    mask = as_bool_mask(mask)
    try:
        return np.broadcast_to(mask, shape)
    except ValueError as exc:
        raise ValueError(
            f"mask of shape {mask.shape} does not broadcast to the scores' shape {shape}"
        ) from exc
