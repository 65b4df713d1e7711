r"""Lesson 2's experiments: why the scores are divided by :math:`\sqrt{d_k}`.

What is here: :func:`dot_product_stats` (samples of qᵀk against d_k and σ²),
:func:`sampling_spread` and :func:`moments_check` (how far those samples' moments stray
from the theory), :func:`saturation` (one query under the three scalings) and
:func:`typical_saturation` (a typical one of many), :func:`scaling_curves`
(max weight, entropy and Jacobian norm against d_k), :func:`temperature_sweep` and
:func:`weight_focus` (where a row's weight goes at a low temperature τ: lessons 1 and 2).

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
from .analysis import NEARLY_ONE_HOT  # one threshold, the glossary's
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
    raw, scaled : ndarray (N,)
        The samples of qᵀk and qᵀk/√d_k (N = ``n_samples``).
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
class SamplingSpread:
    """How far the empirical moments of :func:`dot_product_stats` stray from the theory:
    one standard deviation of each over repeated draws (new seeds).

    Attributes
    ----------
    mean_sd, scaled_mean_sd : float
        Of the sample mean of qᵀk, σ²·√(d_k/N), and of qᵀk/√d_k, σ²/√N (both means
        are 0 in theory, so these are absolute, not relative).
    variance_rel_sd : float
        Of either sample variance, relative to its theory value d_k·σ⁴ or σ⁴:
        √(2/(N − 1) + κ/N) (the same for both: one is the other times d_k).
    excess_kurtosis : float
        κ = 6/d_k, of qᵀk: 0 for a normal distribution; heavier tails when larger.
    normal_variance_rel_sd : float
        √(2/(N − 1)): what ``variance_rel_sd`` would be for normal samples (κ = 0).
    """

    mean_sd: float
    scaled_mean_sd: float
    variance_rel_sd: float
    excess_kurtosis: float
    normal_variance_rel_sd: float


def sampling_spread(d_k: int, n_samples: int, sigma2: float = 1.0) -> SamplingSpread:
    r"""The standard deviations of the empirical mean and variance of N = ``n_samples``
    draws of qᵀk, for q, k with independent N(0, σ²) components in d_k dimensions.

    Notes
    -----
    Each product :math:`p = q_i k_i` has :math:`E[p^2] = \sigma^4` and
    :math:`E[p^4] = E[q_i^4] E[k_i^4] = 3\sigma^4 \cdot 3\sigma^4 = 9\sigma^8`, so one
    product has kurtosis 9 (excess 6). Excess kurtosis divides by the number of
    independent terms summed, so :math:`s = q^\top k` has excess kurtosis
    :math:`\kappa = 6/d_k`. For any distribution with variance :math:`v` and excess
    kurtosis :math:`\kappa`, the unbiased sample variance :math:`S^2` of N draws has

    .. math:: \mathrm{Var}[S^2] = v^2 \left(\frac{2}{N-1} + \frac{\kappa}{N}\right),

    so its relative standard deviation is :math:`\sqrt{2/(N-1) + 6/(d_k N)}`: 9% at
    d_k = 1 and N = 1000, 4.6% at d_k = 64, where the normal-only
    :math:`\sqrt{2/(N-1)}` says 4.5% for both. σ² cancels from it. The sample mean has
    standard deviation :math:`\sqrt{v/N}`, with :math:`v = d_k\sigma^4` for qᵀk and
    :math:`\sigma^4` for qᵀk/√d_k.

    Examples
    --------
    >>> round(sampling_spread(1, 1000).variance_rel_sd, 4)
    0.0895
    """
    d_k = whole_number(d_k, "d_k", 1, 4096)
    n_samples = whole_number(n_samples, "n_samples", 2, 1_000_000)
    sigma2 = positive_number(sigma2, "sigma2")
    kurtosis = 6.0 / d_k
    return SamplingSpread(
        mean_sd=float(sigma2 * np.sqrt(d_k / n_samples)),
        scaled_mean_sd=float(sigma2 / np.sqrt(n_samples)),
        variance_rel_sd=float(np.sqrt(2.0 / (n_samples - 1) + kurtosis / n_samples)),
        excess_kurtosis=kurtosis,
        normal_variance_rel_sd=float(np.sqrt(2.0 / (n_samples - 1))),
    )


@dataclass(frozen=True)
class MomentsCheck:
    """How far one draw of :func:`dot_product_stats` landed from the theory, in the
    standard deviations of :func:`sampling_spread`.

    Attributes
    ----------
    spread : SamplingSpread
        For the draw's d_k, N and σ².
    mean_z : float
        The empirical mean of qᵀk/√d_k over its standard deviation σ²/√N (the same for
        qᵀk: both scale by √d_k).
    variance_z : float
        The empirical variance's relative error (against σ⁴, the same as against d_k·σ⁴
        for qᵀk) over its relative standard deviation.
    """

    spread: SamplingSpread
    mean_z: float
    variance_z: float


def moments_check(stats: DotProductStats) -> MomentsCheck:
    """Where the empirical moments of ``stats`` lie against the theory (0 and σ⁴ for
    qᵀk/√d_k), in standard deviations of repeated draws.

    Examples
    --------
    >>> draw = dot_product_stats(16, 1000, np.random.default_rng(0))
    >>> check = moments_check(draw)
    >>> bool(abs(check.mean_z - draw.scaled_mean / check.spread.scaled_mean_sd) < 1e-15)
    True
    """
    spread = sampling_spread(stats.d_k, stats.raw.size, stats.sigma2)
    return MomentsCheck(
        spread=spread,
        mean_z=float(stats.scaled_mean / spread.scaled_mean_sd),
        variance_z=float((stats.scaled_var / stats.theory_scaled_var - 1)
                         / spread.variance_rel_sd),
    )


@dataclass(frozen=True)
class Saturation:
    """One query against T_k keys under one scaling.

    Attributes
    ----------
    scaling : str
        "none", "sqrt_dk" or "dk".
    scores : ndarray (T_k,)
        The scaled scores handed to the softmax.
    weights : ndarray (T_k,)
    max_weight, entropy, effective_keys, jacobian_norm : float
    max_entropy : float
        ln T_k, the entropy of uniform attention.
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
    return _rows(_dot_products(d_k, n_keys, rng, sigma2), d_k, temperature)


def _dot_products(d_k: int, n_keys: int, rng: np.random.Generator,
                  sigma2: float) -> np.ndarray:
    """One random query's unscaled dot products with ``n_keys`` random keys: (T_k,)."""
    sigma = np.sqrt(sigma2)
    q = rng.standard_normal(d_k) * sigma  # (d_k,)
    k = rng.standard_normal((n_keys, d_k)) * sigma  # (T_k, d_k)
    return k @ q  # (T_k,)


def _rows(raw: np.ndarray, d_k: int, temperature: float = 1.0) -> dict[str, Saturation]:
    """The :class:`Saturation` of one row of unscaled dot products under each scaling."""
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
            max_entropy=float(np.log(raw.size)),
        )
    return out


#: How many queries :func:`typical_saturation` draws to choose a typical one from.
TYPICAL_CANDIDATES = 101


@dataclass(frozen=True)
class TypicalQuery:
    """The query of :func:`typical_saturation` and where it sits among those drawn.

    Attributes
    ----------
    rows : dict of str -> Saturation
        The chosen query under each of :data:`SCALINGS`, as :func:`saturation` gives it.
    chosen : int
        Its place among the candidates, in the order drawn (0 is the one
        :func:`saturation` would draw from the same ``rng``).
    candidates : int
        How many queries were drawn.
    lowest, highest : float
        The lowest and highest percentile (0 to 100) of its measures among the
        candidates': 50 and 50 when it is the median of every one.
    """

    rows: dict
    chosen: int
    candidates: int
    lowest: float
    highest: float


def typical_saturation(d_k: int, n_keys: int, rng: np.random.Generator,
                       sigma2: float = 1.0,
                       candidates: int = TYPICAL_CANDIDATES) -> TypicalQuery:
    """A typical query: of ``candidates`` random queries (each against its own
    ``n_keys`` random keys), the one whose measures sit nearest the middle of all of them.

    The measures are the largest weight, the entropy and the Jacobian norm under each of
    :data:`SCALINGS` (the effective number of keys follows the entropy). Each measure's
    percentile among the candidates counts the candidates below it plus half of those
    equal to it; the query chosen is the one whose percentile furthest from 50 is nearest
    50 (the first such, in the order drawn). One query drawn at random may be far from the
    middle: at d_k = 64 and 16 keys, about three draws in ten give the unscaled softmax a
    larger Jacobian norm than the scaled ones, against a median query's far smaller one.

    Examples
    --------
    >>> typical = typical_saturation(64, 2, np.random.default_rng(1))
    >>> typical.lowest, typical.highest  # with 2 keys every measure follows one gap
    (50.0, 50.0)
    """
    d_k = whole_number(d_k, "d_k", 1, 4096)
    n_keys = whole_number(n_keys, "n_keys", 1, 4096)
    sigma2 = positive_number(sigma2, "sigma2")
    candidates = whole_number(candidates, "candidates", 1, 10_001)
    if d_k * n_keys * candidates > 4 * MAX_DRAWS:
        raise ValueError("d_k × n_keys × candidates is too large for one run")
    raw = np.stack([_dot_products(d_k, n_keys, rng, sigma2)
                    for _ in range(candidates)])  # (candidates, T_k)
    measures = []
    for name in SCALINGS:
        w = softmax(raw * resolve_scale(name, d_k))  # (candidates, T_k)
        measures += [analysis.max_weight(w), analysis.entropy(w), analysis.jacobian_norm(w)]
    m = np.stack(measures)  # (measures, candidates)
    below = (m[:, None, :] < m[:, :, None]).sum(axis=-1)  # (measures, candidates)
    equal = (m[:, None, :] == m[:, :, None]).sum(axis=-1) - 1  # not counting itself
    percentile = 100 * (below + equal / 2) / max(candidates - 1, 1)
    chosen = int(np.argmin(np.abs(percentile - 50).max(axis=0)))
    return TypicalQuery(rows=_rows(raw[chosen], d_k), chosen=chosen, candidates=candidates,
                        lowest=float(percentile[:, chosen].min()),
                        highest=float(percentile[:, chosen].max()))


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
        ln T_k (T_k = ``n_keys``).
    max_weight_se : dict of str -> ndarray (m,)
        Standard error of each mean max weight: the trials' sample standard deviation
        over √trials (0 for a single trial).
    """

    d_ks: np.ndarray
    n_keys: int
    trials: int
    max_weight: dict
    entropy: dict
    jacobian_norm: dict
    max_entropy: float
    max_weight_se: dict


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
             for m in ("max_weight", "entropy", "jacobian_norm", "max_weight_se")}
    for i, d_k in enumerate(d_ks):
        d_k = whole_number(int(d_k), "d_k", 1, 4096)
        q = rng.standard_normal((trials, 1, d_k)) * sigma  # (trials, 1, d_k)
        k = rng.standard_normal((trials, n_keys, d_k)) * sigma  # (trials, T_k, d_k)
        raw = (q @ np.swapaxes(k, -1, -2))[:, 0, :]  # (trials, T_k)
        for name in SCALINGS:
            w = softmax(raw * resolve_scale(name, d_k))  # (trials, T_k)
            top = analysis.max_weight(w)
            stats["max_weight"][name][i] = top.mean()
            stats["max_weight_se"][name][i] = (
                top.std(ddof=1) / np.sqrt(trials) if trials > 1 else 0.0)
            stats["entropy"][name][i] = analysis.entropy(w).mean()
            stats["jacobian_norm"][name][i] = analysis.jacobian_norm(w).mean()
    return ScalingCurves(d_ks=d_ks, n_keys=n_keys, trials=trials,
                         max_entropy=float(np.log(n_keys)), **stats)


def temperature_sweep(scores, temperatures) -> np.ndarray:
    """softmax(scores / τ) for each temperature τ: shape (len(temperatures), T_k)."""
    temperatures = np.asarray(temperatures, dtype=np.float64)
    if temperatures.ndim != 1 or np.any(~np.isfinite(temperatures)) or np.any(temperatures <= 0):
        raise ValueError("temperatures must be a 1-D list of finite numbers > 0")
    return np.stack([softmax(scores, temperature=float(t)) for t in temperatures])


@dataclass(frozen=True)
class RowFocus:
    """Where one row of weights puts its weight at one temperature τ.

    Attributes
    ----------
    holders : tuple of int
        The fewest keys, largest weight first, whose weights add up to more than
        :data:`NEARLY_ONE_HOT`: one key for a nearly one-hot row.
    tied : tuple of int
        The keys tied for the row's largest score, in key order. As τ → 0 the row tends
        to equal weights on these keys: to a one-hot row only when there is one.
    visible : int
        How many keys the row may attend to (0 for a fully masked row).
    max_weight : float
        The row's largest weight (0 for a fully masked row).
    gap : float
        The largest score minus the smallest among ``holders`` (0 for one holder).
    """

    holders: tuple[int, ...]
    tied: tuple[int, ...]
    visible: int
    max_weight: float
    gap: float

    @property
    def nearly_one_hot(self) -> bool:
        """The largest weight is above :data:`NEARLY_ONE_HOT` (the glossary's meaning)."""
        return self.max_weight > NEARLY_ONE_HOT


def weight_focus(scores, temperature: float, mask=None) -> tuple[RowFocus, ...]:
    """Where each row's weight goes at temperature τ: which keys hold it, and which are
    tied for the largest score (a low τ sharpens a row towards those, never past them).

    Parameters
    ----------
    scores : array_like (Tk,) or (Tq, Tk)
        The scores handed to the softmax (already scaled), one row per query.
    temperature : float
        τ > 0.
    mask : array_like of bool, optional
        Broadcastable to (Tq, Tk); True means "may attend".

    Returns
    -------
    tuple of RowFocus
        One per row (one for a 1-D ``scores``).

    Notes
    -----
    Scores within ``1e-12·max(1, |largest|)`` of the largest count as tied: in exact
    arithmetic they are equal, and a rounding difference that small cannot separate them
    at any τ the lessons offer.

    Examples
    --------
    >>> [f.tied for f in weight_focus([[1.0, 0.0, 1.0], [0.0, 0.5, 2.0]], 0.1)]
    [(0, 2), (2,)]
    """
    scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    if scores.ndim != 2:
        raise ValueError(f"scores must be one row (Tk,) or a matrix (Tq, Tk); got {scores.shape}")
    weights = softmax(scores, temperature=temperature, mask=mask)  # (Tq, Tk)
    allowed = np.broadcast_to(True if mask is None else np.asarray(mask, dtype=bool),
                              scores.shape)
    focus = []
    for s, w, ok in zip(scores, weights, allowed, strict=True):
        if not ok.any():
            focus.append(RowFocus((), (), 0, 0.0, 0.0))
            continue
        top = np.max(s[ok])
        tied = np.flatnonzero(ok & (s >= top - 1e-12 * max(1.0, abs(top))))
        order = np.argsort(-w, kind="stable")
        n_holders = int(np.searchsorted(np.cumsum(w[order]), NEARLY_ONE_HOT, side="right")) + 1
        holders = order[:min(n_holders, int(ok.sum()))]
        focus.append(RowFocus(
            holders=tuple(int(j) for j in holders),
            tied=tuple(int(j) for j in tied),
            visible=int(ok.sum()),
            max_weight=float(w.max()),
            gap=float(s[holders].max() - s[holders].min()),
        ))
    return tuple(focus)
