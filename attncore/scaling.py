r"""Lesson 2's experiments: why the scores are divided by :math:`\sqrt{d_k}`.

What is here: :func:`dot_product_stats` (samples of qᵀk against d_k and σ²),
:func:`saturation` (one query under the three scalings), :func:`scaling_curves`
(max weight, entropy and Jacobian norm against d_k) and :func:`temperature_sweep`.

If q and k have independent components with mean 0 and variance :math:`\sigma^2`,
then :math:`q^\top k = \sum_{i=1}^{d_k} q_i k_i` is a sum of :math:`d_k` independent
products, each with mean 0 and variance :math:`E[q_i^2] E[k_i^2] = \sigma^4`, so

.. math:: E[q^\top k] = 0, \qquad \mathrm{Var}[q^\top k] = d_k \sigma^4,
          \qquad \mathrm{Var}[q^\top k / \sqrt{d_k}] = \sigma^4 .

Randomness enters only through the ``rng`` argument.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import analysis
from ._checks import positive_number, whole_number
from .attention import resolve_scale
from .softmax import softmax

#: The three scalings compared in the lesson, as accepted by ``scale=``.
SCALINGS = ("none", "sqrt_dk", "dk")
SCALING_LABELS = {"none": "no scaling", "sqrt_dk": "1/√d_k", "dk": "1/d_k"}

#: Largest d_k × samples drawn in one experiment (two arrays of float64 of this size).
MAX_DRAWS = 10_500_000
_CHUNK = 250_000  # elements drawn at a time, to keep memory small


@dataclass(frozen=True)
class DotProductStats:
    """Samples of qᵀk and qᵀk/√d_k with their empirical and theoretical moments.

    Attributes
    ----------
    d_k : int
    sigma2 : float
        Variance σ² of every component of q and k.
    raw, scaled : ndarray (n,)
        The samples of qᵀk and qᵀk/√d_k.
    mean, var, scaled_mean, scaled_var : float
        Empirical moments (variance with ddof=1).
    theory_var, theory_scaled_var : float
        d_k·σ⁴ and σ⁴ (both means are 0 in theory).
    """

    d_k: int
    sigma2: float
    raw: np.ndarray
    scaled: np.ndarray
    mean: float
    var: float
    scaled_mean: float
    scaled_var: float
    theory_var: float
    theory_scaled_var: float


def dot_product_stats(
    d_k: int, n_samples: int, rng: np.random.Generator, sigma2: float = 1.0
) -> DotProductStats:
    """Draw ``n_samples`` pairs q, k ~ N(0, σ² I) in d_k dimensions; return qᵀk statistics.

    Parameters
    ----------
    d_k : int
        Dimension, 1 to 4096.
    n_samples : int
        Pairs drawn, 2 to 1,000,000, with d_k · n_samples <= :data:`MAX_DRAWS`.
    rng : numpy.random.Generator
    sigma2 : float
        Component variance σ² > 0.
    """
    d_k = whole_number(d_k, "d_k", 1, 4096)
    n_samples = whole_number(n_samples, "n_samples", 2, 1_000_000)
    sigma2 = positive_number(sigma2, "sigma2")
    if d_k * n_samples > MAX_DRAWS:
        raise ValueError(
            f"d_k × n_samples = {d_k * n_samples:,} exceeds the cap of {MAX_DRAWS:,} draws; "
            "use fewer samples"
        )
    sigma = np.sqrt(sigma2)
    raw = np.empty(n_samples)
    rows = max(1, _CHUNK // d_k)
    for start in range(0, n_samples, rows):
        n = min(rows, n_samples - start)
        q = rng.standard_normal((n, d_k)) * sigma  # (n, d_k)
        k = rng.standard_normal((n, d_k)) * sigma  # (n, d_k)
        raw[start:start + n] = np.einsum("nd,nd->n", q, k)  # (n,)
    scaled = raw / np.sqrt(d_k)
    return DotProductStats(
        d_k=d_k,
        sigma2=sigma2,
        raw=raw,
        scaled=scaled,
        mean=float(raw.mean()),
        var=float(raw.var(ddof=1)),
        scaled_mean=float(scaled.mean()),
        scaled_var=float(scaled.var(ddof=1)),
        theory_var=d_k * sigma2**2,
        theory_scaled_var=sigma2**2,
    )


@dataclass(frozen=True)
class Saturation:
    """One query against n keys under one scaling.

    Attributes
    ----------
    scaling : str
        "none", "sqrt_dk" or "dk".
    scores : ndarray (n,)
        The scaled scores handed to the softmax.
    weights : ndarray (n,)
    max_weight, entropy, effective_keys, jacobian_norm : float
    max_entropy : float
        log n, the entropy of uniform attention.
    """

    scaling: str
    scores: np.ndarray
    weights: np.ndarray
    max_weight: float
    entropy: float
    effective_keys: float
    jacobian_norm: float
    max_entropy: float


def saturation(d_k: int, n_keys: int, rng: np.random.Generator, sigma2: float = 1.0,
               temperature: float = 1.0) -> dict[str, Saturation]:
    """One random query against ``n_keys`` random keys, under each of :data:`SCALINGS`.

    The same q and keys are used for all three scalings, so only the scaling differs.
    """
    d_k = whole_number(d_k, "d_k", 1, 4096)
    n_keys = whole_number(n_keys, "n_keys", 1, 4096)
    sigma2 = positive_number(sigma2, "sigma2")
    sigma = np.sqrt(sigma2)
    q = rng.standard_normal(d_k) * sigma  # (d_k,)
    k = rng.standard_normal((n_keys, d_k)) * sigma  # (n, d_k)
    raw = k @ q  # (n,)
    out = {}
    for name in SCALINGS:
        s = raw * resolve_scale(name, d_k)
        w = softmax(s, temperature=temperature)
        out[name] = Saturation(
            scaling=name,
            scores=s,
            weights=w,
            max_weight=float(analysis.max_weight(w)),
            entropy=float(analysis.entropy(w)),
            effective_keys=float(analysis.effective_keys(w)),
            jacobian_norm=float(analysis.jacobian_norm(w)),
            max_entropy=float(np.log(n_keys)),
        )
    return out


@dataclass(frozen=True)
class ScalingCurves:
    """Averages over trials against d_k, for each scaling.

    Attributes
    ----------
    d_ks : ndarray of int (m,)
    n_keys, trials : int
    max_weight, entropy, jacobian_norm : dict of str -> ndarray (m,)
        Mean over trials, keyed by scaling name.
    max_entropy : float
        log n_keys.
    """

    d_ks: np.ndarray
    n_keys: int
    trials: int
    max_weight: dict
    entropy: dict
    jacobian_norm: dict
    max_entropy: float


def scaling_curves(d_ks, n_keys: int, trials: int, rng: np.random.Generator,
                   sigma2: float = 1.0) -> ScalingCurves:
    """Mean max weight, entropy and Jacobian norm of softmax(scale · qᵀk) against d_k.

    For each d_k, ``trials`` independent queries each meet ``n_keys`` keys; the three
    scalings see the same draws.
    """
    d_ks = np.asarray(d_ks)
    if d_ks.ndim != 1 or d_ks.size == 0 or not np.issubdtype(d_ks.dtype, np.integer):
        raise ValueError(f"d_ks must be a 1-D list of whole numbers; got {d_ks!r}")
    n_keys = whole_number(n_keys, "n_keys", 1, 4096)
    trials = whole_number(trials, "trials", 1, 10_000)
    sigma2 = positive_number(sigma2, "sigma2")
    if int(d_ks.max()) * n_keys * trials > 4 * MAX_DRAWS:
        raise ValueError("d_k × n_keys × trials is too large for one run; use fewer trials")
    sigma = np.sqrt(sigma2)
    stats = {m: {name: np.empty(d_ks.size) for name in SCALINGS}
             for m in ("max_weight", "entropy", "jacobian_norm")}
    for i, d_k in enumerate(d_ks):
        d_k = whole_number(int(d_k), "d_k", 1, 4096)
        q = rng.standard_normal((trials, 1, d_k)) * sigma  # (trials, 1, d_k)
        k = rng.standard_normal((trials, n_keys, d_k)) * sigma  # (trials, n, d_k)
        raw = (q @ np.swapaxes(k, -1, -2))[:, 0, :]  # (trials, n)
        for name in SCALINGS:
            w = softmax(raw * resolve_scale(name, d_k))  # (trials, n)
            stats["max_weight"][name][i] = analysis.max_weight(w).mean()
            stats["entropy"][name][i] = analysis.entropy(w).mean()
            stats["jacobian_norm"][name][i] = analysis.jacobian_norm(w).mean()
    return ScalingCurves(d_ks=d_ks, n_keys=n_keys, trials=trials,
                         max_entropy=float(np.log(n_keys)), **stats)


def temperature_sweep(scores, temperatures) -> np.ndarray:
    """softmax(scores / T) for each T: shape (len(temperatures), n)."""
    temperatures = np.asarray(temperatures, dtype=np.float64)
    if temperatures.ndim != 1 or np.any(~np.isfinite(temperatures)) or np.any(temperatures <= 0):
        raise ValueError("temperatures must be a 1-D list of finite numbers > 0")
    return np.stack([softmax(scores, temperature=float(t)) for t in temperatures])
