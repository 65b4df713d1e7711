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
from .softmax import SoftmaxSteps, softmax_steps

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

    Stored: the inputs, the settings, the weights and the output. The score
    matrices are recomputed from Q and K on first access (then kept), so that a
    large call holds one (..., Tq, Tk) array rather than four.

    Attributes
    ----------
    q, k, v : ndarray
        ``(..., Tq, d_k)``, ``(..., Tk, d_k)``, ``(..., Tk, d_v)``.
    scale : float
        The multiplier applied to Q Kᵀ (1/√d_k by default).
    temperature : float
        The softmax temperature T.
    mask : ndarray of bool or None
        Broadcastable to ``(..., Tq, Tk)``; True means "may attend".
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
    weights: np.ndarray
    dropout_weights: np.ndarray
    output: np.ndarray
    dropout: float = 0.0

    @property
    def d_k(self) -> int:
        return self.q.shape[-1]

    @cached_property
    def raw_scores(self) -> np.ndarray:
        """``Q Kᵀ``, shape (..., Tq, Tk)."""
        return self.q @ np.swapaxes(self.k, -1, -2)

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
    def fully_masked(self) -> np.ndarray:
        """Bool (..., Tq): rows in which every key is masked (weights all 0)."""
        shape = self.weights.shape
        if self.mask is None:
            return np.zeros(shape[:-1], dtype=bool)
        return ~np.any(np.broadcast_to(self.mask, shape), axis=-1)

    def softmax_steps(self) -> SoftmaxSteps:
        """The softmax of this trace, step by step (logits, shift, exps, row sums)."""
        return softmax_steps(self.scaled_scores, temperature=self.temperature, mask=self.mask)


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
        T > 0: weights = softmax(scale · Q Kᵀ / T).
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

    Examples
    --------
    >>> t = scaled_dot_product_attention([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0], [0.0]])
    >>> t.weights.shape, round(float(t.weights.sum()), 12)
    ((1, 2), 1.0)
    """
    q, k = check_qk(q, k)
    v = as_real_array(v, "V", min_ndim=2)
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(
            f"K and V need one row per key token; got K {k.shape} ({k.shape[-2]} keys) "
            f"and V {v.shape} ({v.shape[-2]} rows)"
        )
    factor = resolve_scale(scale, q.shape[-1])
    temperature = positive_number(temperature, "temperature")
    dropout = _check_dropout(dropout, rng)

    # Fold scale and temperature into Q, the small array, rather than into Q Kᵀ.
    multiplier = factor / temperature
    q_scaled = require_finite(q * multiplier, "Q · scale / temperature")
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is checked just below
        s = q_scaled @ np.swapaxes(k, -1, -2)  # (..., Tq, d_k) x (..., d_k, Tk) -> (..., Tq, Tk)
    # Cauchy-Schwarz: |s_ij| <= |q_i| |k_j|, so one bound from the row norms tells
    # whether Q Kᵀ can overflow and whether exp needs the row maximum subtracted.
    bound = multiplier * _max_row_norm(q) * _max_row_norm(k)
    if not bound < 1e300:
        require_finite(s, "the scaled scores Q Kᵀ · scale / T")
    if mask is not None:
        mask = as_bool_mask(mask)
        try:
            allowed = np.broadcast_to(mask, s.shape)
        except ValueError as exc:
            raise ValueError(
                f"mask of shape {mask.shape} does not broadcast to the scores' shape "
                f"(..., Tq, Tk) = {s.shape}"
            ) from exc
        np.copyto(s, -np.inf, where=~allowed)
    # Softmax in place, so the call holds a single (..., Tq, Tk) array. Subtracting
    # the row maximum only matters when exp could overflow or underflow: with every
    # |s| <= 30, exp(s) lies in [1e-13, 1e13] and the shift cancels in exact
    # arithmetic. Under a mask we always subtract it: the bound comes from every key,
    # masked ones included, so skipping the shift by the bound would let a masked
    # (future) key change the rounding of earlier rows; the row maximum itself
    # depends only on the keys the row may attend to.
    if mask is not None or not bound <= _EXP_SAFE:
        row_max = np.max(s, axis=-1, keepdims=True)
        row_max[~np.isfinite(row_max)] = 0.0  # fully masked rows: exp(-inf - 0) = 0
        s -= row_max
    np.exp(s, out=s)
    # One matrix product gives both E V and the row sums E 1: append a column of ones.
    ones = np.ones(v.shape[:-1] + (1,))
    with np.errstate(over="ignore", invalid="ignore"):  # the output is checked below
        ev = s @ np.concatenate([v, ones], axis=-1)  # (..., Tq, Tk) x (..., Tk, d_v + 1)
    row_sum = ev[..., -1:]
    inv = np.divide(1.0, row_sum, out=np.zeros_like(row_sum), where=row_sum > 0)
    s *= inv  # fully masked rows stay all 0
    weights = s
    output = ev[..., :-1] * inv

    applied = weights
    if dropout > 0.0:
        keep = rng.random(weights.shape) >= dropout
        applied = np.where(keep, weights / (1.0 - dropout), 0.0)
        with np.errstate(over="ignore", invalid="ignore"):
            output = applied @ v  # (..., Tq, Tk) x (..., Tk, d_v) -> (..., Tq, d_v)
    require_finite(output, "the output W V")

    return AttentionTrace(
        q=q,
        k=k,
        v=v,
        scale=factor,
        temperature=temperature,
        mask=mask,
        weights=weights,
        dropout_weights=applied,
        output=output,
        dropout=dropout,
    )


# Skip the row-max shift only while exp(s) stays within [e^-30, e^30] ~ [1e-13, 1e13],
# so that E V cannot overflow where the normalised W V would not.
_EXP_SAFE = 30.0


def _max_row_norm(x: np.ndarray) -> float:
    with np.errstate(over="ignore"):
        return float(np.sqrt(np.max(np.sum(x * x, axis=-1))))


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
