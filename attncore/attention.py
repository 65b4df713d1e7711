r"""Scaled dot-product attention that returns every intermediate as a trace.

.. math:: \mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V

Shapes: ``Q (..., Tq, d_k)``, ``K (..., Tk, d_k)``, ``V (..., Tk, d_v)``; the leading
``...`` may be a batch ``B``, heads ``H``, or both ``(B, H)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ._checks import as_bool_mask, as_real_array, positive_number, require_finite
from .scores import check_qk
from .softmax import SoftmaxSteps, softmax, softmax_steps

#: Names accepted by ``scale``: the multiplier applied to Q Kᵀ.
SCALE_CHOICES = ("sqrt_dk", "none", "dk")


def resolve_scale(scale, d_k: int) -> float:
    """The multiplier for Q Kᵀ: ``"sqrt_dk"`` → 1/√d_k, ``"none"`` → 1, ``"dk"`` → 1/d_k.

    A positive number is used as it is.
    """
    if isinstance(scale, str):
        if scale == "sqrt_dk":
            return 1.0 / np.sqrt(d_k)
        if scale == "none":
            return 1.0
        if scale == "dk":
            return 1.0 / d_k
        raise ValueError(
            f"scale must be one of {SCALE_CHOICES} or a positive number; got {scale!r}"
        )
    return positive_number(scale, "scale")


@dataclass(frozen=True)
class AttentionTrace:
    """Everything scaled dot-product attention computed, from inputs to output.

    Attributes
    ----------
    q, k, v : ndarray
        ``(..., Tq, d_k)``, ``(..., Tk, d_k)``, ``(..., Tk, d_v)``.
    scale : float
        The multiplier applied to Q Kᵀ (1/√d_k by default).
    temperature : float
        The softmax temperature τ.
    mask : ndarray of bool or None
        Broadcastable to ``(..., Tq, Tk)``; True means "may attend".
    raw_scores : ndarray (..., Tq, Tk)
        ``Q Kᵀ``.
    weights : ndarray (..., Tq, Tk)
        Softmax output: rows sum to 1, masked entries exactly 0, fully masked
        rows all 0 (see :mod:`attncore.softmax`).
    dropout_weights : ndarray (..., Tq, Tk)
        The weights actually applied to V: ``weights`` after attention dropout
        (kept entries rescaled by 1/(1-p)); the same array as ``weights`` when p = 0.
    output : ndarray (..., Tq, d_v)
        ``dropout_weights @ v``.
    dropout : float
        The dropout probability p.
    """

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    scale: float
    temperature: float
    mask: np.ndarray | None
    raw_scores: np.ndarray
    weights: np.ndarray
    dropout_weights: np.ndarray
    output: np.ndarray
    dropout: float = 0.0

    @property
    def d_k(self) -> int:
        return self.q.shape[-1]

    @cached_property
    def scaled_scores(self) -> np.ndarray:
        """``scale · Q Kᵀ``, shape (..., Tq, Tk)."""
        return self.raw_scores * self.scale

    @cached_property
    def masked_scores(self) -> np.ndarray:
        """Scaled scores with ``-inf`` wherever the mask forbids attending."""
        if self.mask is None:
            return self.scaled_scores
        return np.where(self.mask, self.scaled_scores, -np.inf)

    @cached_property
    def logits(self) -> np.ndarray:
        """What enters the softmax: ``masked_scores / temperature``, shape (..., Tq, Tk)."""
        return self.softmax_steps().logits

    @cached_property
    def fully_masked(self) -> np.ndarray:
        """Bool (..., Tq): rows in which every key is masked (weights all 0)."""
        shape = self.weights.shape
        if self.mask is None:
            return np.zeros(shape[:-1], dtype=bool)
        return ~np.any(np.broadcast_to(self.mask, shape), axis=-1)

    def softmax_steps(self, subtract_max=True) -> SoftmaxSteps:
        """The softmax of this trace step by step: logits, shift, exps, row sums, weights.

        With the default the steps are exactly those that gave ``weights``;
        ``subtract_max="if_needed"`` writes them as a student computes by hand, exp(s)
        without the shift while that is safe (see :func:`attncore.softmax.softmax_steps`).
        """
        return softmax_steps(self.scaled_scores, temperature=self.temperature, mask=self.mask,
                             subtract_max=subtract_max)


def scaled_dot_product_attention(
    q,
    k,
    v,
    *,
    scale="sqrt_dk",
    temperature: float = 1.0,
    mask=None,
    dropout: float = 0.0,
    rng: np.random.Generator | None = None,
) -> AttentionTrace:
    r"""Scaled dot-product attention, vectorised over any leading dimensions.

    Parameters
    ----------
    q : array_like (..., Tq, d_k)
        Queries, one row per query token.
    k : array_like (..., Tk, d_k)
        Keys, one row per key token.
    v : array_like (..., Tk, d_v)
        Values, one row per key token.
    scale : {"sqrt_dk", "none", "dk"} or float
        Multiplier of Q Kᵀ: 1/√d_k (default), 1, 1/d_k, or a positive number.
    temperature : float
        τ > 0: weights = softmax(scale · Q Kᵀ / τ).
    mask : array_like of bool, optional
        Broadcastable to (..., Tq, Tk); True means "may attend".
    dropout : float
        Attention dropout probability p in [0, 1); needs ``rng`` when p > 0.
    rng : numpy.random.Generator, optional
        The source of randomness for dropout.

    Returns
    -------
    AttentionTrace
        ``weights`` (..., Tq, Tk) with rows summing to 1 (0 for fully masked rows)
        and ``output`` (..., Tq, d_v).

    Notes
    -----
    .. math:: W = \mathrm{softmax}\!\left(\frac{\mathrm{scale}\cdot QK^\top}{T}
              + \log M\right), \qquad O = W V

    This is the readable form, holding every intermediate; :func:`attncore.cost.lean_attention`
    computes the same weights and output holding a single (..., Tq, Tk) array.

    Examples
    --------
    >>> t = scaled_dot_product_attention([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0], [0.0]])
    >>> t.weights.shape, round(float(t.weights.sum()), 12)
    ((1, 2), 1.0)
    """
    q, k, v = check_qkv(q, k, v)
    factor = resolve_scale(scale, q.shape[-1])
    temperature = positive_number(temperature, "temperature")
    mask = None if mask is None else check_mask(mask, q.shape[:-1] + k.shape[-2:-1])
    dropout = _check_dropout(dropout, rng)

    with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported just below
        raw = q @ np.swapaxes(k, -1, -2)  # (..., Tq, d_k) x (..., d_k, Tk) -> (..., Tq, Tk)
        scaled = require_finite(raw * factor, "the scaled scores Q Kᵀ · scale")
    weights = softmax(scaled, temperature=temperature, mask=mask)  # (..., Tq, Tk)
    applied = _apply_dropout(weights, dropout, rng)
    with np.errstate(over="ignore", invalid="ignore"):
        output = applied @ v  # (..., Tq, Tk) x (..., Tk, d_v) -> (..., Tq, d_v)
    require_finite(output, "the output W V")

    return AttentionTrace(q=q, k=k, v=v, scale=factor, temperature=temperature, mask=mask,
                          raw_scores=raw, weights=weights, dropout_weights=applied,
                          output=output, dropout=dropout)


def check_qkv(q, k, v) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Q, K, V as float64 arrays whose shapes fit together, or ValueError naming the misfit."""
    q, k = check_qk(q, k)
    v = as_real_array(v, "V", min_ndim=2)
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(
            f"K and V need one row per key token; got K {k.shape} ({k.shape[-2]} keys) "
            f"and V {v.shape} ({v.shape[-2]} rows)"
        )
    return q, k, v


def check_mask(mask, scores_shape: tuple) -> np.ndarray:
    """A boolean mask that broadcasts to the scores' shape (..., Tq, Tk)."""
    mask = as_bool_mask(mask)
    try:
        np.broadcast_shapes(mask.shape, scores_shape)
    except ValueError as exc:
        raise ValueError(
            f"mask of shape {mask.shape} does not broadcast to the scores' shape "
            f"(..., Tq, Tk) = {scores_shape}"
        ) from exc
    return mask


def _apply_dropout(weights: np.ndarray, p: float, rng) -> np.ndarray:
    """Attention dropout: zero each weight with probability p, rescale the rest by 1/(1-p)."""
    if p == 0.0:
        return weights
    keep = rng.random(weights.shape) >= p
    return np.where(keep, weights / (1.0 - p), 0.0)


def _check_dropout(dropout, rng) -> float:
    if isinstance(dropout, bool) or not isinstance(dropout, (int, float)):
        raise ValueError(f"dropout must be a number in [0, 1); got {dropout!r}")
    dropout = float(dropout)
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"dropout must be in [0, 1); got {dropout!r}")
    if dropout > 0.0 and not isinstance(rng, np.random.Generator):
        raise ValueError(
            "dropout > 0 needs rng=np.random.default_rng(seed) so the result is reproducible"
        )
    return dropout
