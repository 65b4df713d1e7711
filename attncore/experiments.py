r"""Experiments behind the lessons: why the scores are divided by :math:`\sqrt{d_k}`.

If q and k have independent components with mean 0 and variance :math:`\sigma^2`,
then :math:`q^\top k = \sum_{i=1}^{d_k} q_i k_i` is a sum of :math:`d_k` independent
products, each with mean 0 and variance :math:`E[q_i^2] E[k_i^2] = \sigma^4`, so

.. math:: E[q^\top k] = 0, \qquad \mathrm{Var}[q^\top k] = d_k \sigma^4,
          \qquad \mathrm{Var}[q^\top k / \sqrt{d_k}] = \sigma^4 .

Randomness enters only through the ``rng`` argument.
"""

from __future__ import annotations

import time
import tracemalloc
from dataclasses import dataclass

import numpy as np

from . import analysis
from ._checks import positive_number
from .attention import resolve_scale, scaled_dot_product_attention
from .softmax import softmax

#: The three scalings compared in the lesson, as accepted by ``scale=``.
SCALINGS = ("none", "sqrt_dk", "dk")
SCALING_LABELS = {"none": "no scaling", "sqrt_dk": "1/√d_k", "dk": "1/d_k"}

#: Largest d_k × samples drawn in one experiment (two arrays of float64 of this size).
MAX_DRAWS = 10_500_000
_CHUNK = 250_000  # elements drawn at a time, to keep memory small


def _count(value, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be a whole number; got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must lie in {low}..{high}; got {value}")
    return int(value)


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
    d_k = _count(d_k, "d_k", 1, 4096)
    n_samples = _count(n_samples, "n_samples", 2, 1_000_000)
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
    d_k = _count(d_k, "d_k", 1, 4096)
    n_keys = _count(n_keys, "n_keys", 1, 4096)
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
    n_keys = _count(n_keys, "n_keys", 1, 4096)
    trials = _count(trials, "trials", 1, 10_000)
    sigma2 = positive_number(sigma2, "sigma2")
    if int(d_ks.max()) * n_keys * trials > 4 * MAX_DRAWS:
        raise ValueError("d_k × n_keys × trials is too large for one run; use fewer trials")
    sigma = np.sqrt(sigma2)
    stats = {m: {name: np.empty(d_ks.size) for name in SCALINGS}
             for m in ("max_weight", "entropy", "jacobian_norm")}
    for i, d_k in enumerate(d_ks):
        d_k = _count(int(d_k), "d_k", 1, 4096)
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


@dataclass(frozen=True)
class LeakageTest:
    """Outputs before and after changing one token, with and without a mask.

    Attributes
    ----------
    position : int
        The token that was changed.
    diff_masked, diff_unmasked : ndarray (T,)
        max |Δ output| per position under the mask and without it.
    """

    position: int
    diff_masked: np.ndarray
    diff_unmasked: np.ndarray


def leakage_test(x, x_changed, w_q, w_k, w_v, mask) -> LeakageTest:
    """Self-attention outputs of ``x`` and ``x_changed`` (which differ in one row).

    Under a causal mask, the outputs at positions before the changed one must be
    exactly equal (difference 0.0): no information flows from the future.

    Parameters
    ----------
    x, x_changed : array_like (T, d_model)
    w_q, w_k, w_v : array_like (d_model, d_k), (d_model, d_k), (d_model, d_v)
    mask : array_like of bool (T, T)
    """
    x = np.asarray(x, dtype=np.float64)
    x_changed = np.asarray(x_changed, dtype=np.float64)
    if x.shape != x_changed.shape or x.ndim != 2:
        raise ValueError(f"x and x_changed must be (T, d_model) of one shape; got {x.shape} "
                         f"and {x_changed.shape}")
    rows = np.flatnonzero(np.any(x != x_changed, axis=1))
    if rows.size != 1:
        raise ValueError(f"x_changed must differ from x in exactly one row; differs in "
                         f"{rows.size}")

    def out(inputs, m):
        return scaled_dot_product_attention(inputs @ w_q, inputs @ w_k, inputs @ w_v,
                                            mask=m).output

    return LeakageTest(
        position=int(rows[0]),
        diff_masked=np.max(np.abs(out(x_changed, mask) - out(x, mask)), axis=-1),
        diff_unmasked=np.max(np.abs(out(x_changed, None) - out(x, None)), axis=-1),
    )


@dataclass(frozen=True)
class PermutationTest:
    """Self-attention outputs of a sequence and of its shuffle.

    Attributes
    ----------
    perm : ndarray of int (T,)
        The shuffle: token perm[i] moves to position i.
    diff_without, diff_with : float
        max |attn(shuffled) - shuffle(attn(original))| without positional encodings
        (rounding only, about 1e-16: attention is permutation-equivariant) and with
        them added (order now matters).
    """

    perm: np.ndarray
    diff_without: float
    diff_with: float


def permutation_test(x, pe, w_q, w_k, w_v, rng: np.random.Generator) -> PermutationTest:
    """Shuffle the tokens of ``x`` and compare self-attention outputs, with and without
    the positional encoding ``pe`` (T, d_model) added after the shuffle.

    Without positions, permuting the input rows permutes the output rows the same way:
    attn(P X) = P attn(X). With positions added, the shuffled tokens sit at new
    positions, so the equality breaks.
    """
    x = np.asarray(x, dtype=np.float64)
    pe = np.asarray(pe, dtype=np.float64)
    if pe.shape != x.shape:
        raise ValueError(f"pe must have the shape of x {x.shape}; got {pe.shape}")
    T = x.shape[0]
    perm = rng.permutation(T)
    if T > 1:
        while np.array_equal(perm, np.arange(T)):  # a shuffle that moves something
            perm = rng.permutation(T)

    def attn(inputs):
        return scaled_dot_product_attention(inputs @ w_q, inputs @ w_k, inputs @ w_v).output

    without = np.max(np.abs(attn(x[perm]) - attn(x)[perm]))
    with_pe = np.max(np.abs(attn(x[perm] + pe) - attn(x + pe)[perm]))
    return PermutationTest(perm=perm, diff_without=float(without), diff_with=float(with_pe))


#: Largest H·n² (weights held at once) a measurement may ask for: 4 heads of 1024².
MAX_WEIGHT_ELEMENTS = 4 * 1024 * 1024


def best_time(fn, repeats: int, min_total: float = 0.0, max_calls: int = 200) -> float:
    """Shortest wall time of at least ``repeats`` calls of ``fn``.

    Calls go on (up to ``max_calls``) until ``min_total`` seconds have passed, so a
    fast call is timed many times and its minimum is not one disturbed sample.
    """
    best, total, calls = np.inf, 0.0, 0
    while calls < repeats or (total < min_total and calls < max_calls):
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        best, total, calls = min(best, elapsed), total + elapsed, calls + 1
    return best


def peak_memory(fn) -> tuple[object, int]:
    """Call ``fn`` and return its result and the peak bytes allocated meanwhile.

    tracemalloc sees NumPy's array allocations, so the peak includes every
    temporary the call made, not just what it returned.
    """
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base, _ = tracemalloc.get_traced_memory()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return result, peak - base


def textbook_attention(q, k, v):
    """Attention as a textbook writes it: a Python loop over the heads.

    q, k, v : (H, T, d); returns weights (H, Tq, Tk) and outputs (H, Tq, d_v).
    """
    H, Tq, d_k = q.shape
    weights = np.empty((H, Tq, k.shape[1]))
    out = np.empty((H, Tq, v.shape[2]))
    for h in range(H):
        s = q[h] @ k[h].T / np.sqrt(d_k)  # (Tq, d_k) x (d_k, Tk) -> (Tq, Tk)
        e = np.exp(s - s.max(axis=1, keepdims=True))
        weights[h] = e / e.sum(axis=1, keepdims=True)
        out[h] = weights[h] @ v[h]  # (Tq, Tk) x (Tk, d_v) -> (Tq, d_v)
    return weights, out


def chunked_attention(q, k, v, chunk: int) -> np.ndarray:
    """The attention output computed ``chunk`` query rows at a time.

    Each chunk's softmax needs only its own rows of scores, so at most
    (..., chunk, Tk) weights exist at once instead of (..., Tq, Tk); the output is
    the same (up to rounding).
    """
    q = np.asarray(q, dtype=np.float64)
    if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
        raise ValueError(f"chunk must be a whole number >= 1; got {chunk!r}")
    parts = [scaled_dot_product_attention(q[..., i:i + chunk, :], k, v).output
             for i in range(0, q.shape[-2], chunk)]
    return np.concatenate(parts, axis=-2)


@dataclass(frozen=True)
class CostPoint:
    """One measurement of attention at sequence length n.

    Attributes
    ----------
    n, heads, d_k : int
    seconds : float
        Best time of scaled dot-product attention (weights returned).
    peak_bytes : int
        Peak memory of that call (tracemalloc).
    weights_bytes : int
        Size of the weights alone, H·n²·8 bytes (float64).
    """

    n: int
    heads: int
    d_k: int
    seconds: float
    peak_bytes: int
    weights_bytes: int


def cost_point(n: int, heads: int, d_k: int, repeats: int,
               rng: np.random.Generator) -> CostPoint:
    """Time and peak memory of attention on random (H, n, d_k) inputs."""
    n = _count(n, "n", 1, 8192)
    heads = _count(heads, "heads", 1, 64)
    d_k = _count(d_k, "d_k", 1, 1024)
    repeats = _count(repeats, "repeats", 1, 20)
    if heads * n * n > MAX_WEIGHT_ELEMENTS:
        raise ValueError(
            f"H·n² = {heads * n * n:,} weights exceeds the cap of {MAX_WEIGHT_ELEMENTS:,} "
            f"({MAX_WEIGHT_ELEMENTS * 8 / 2**20:.0f} MB); use fewer heads or a shorter n"
        )
    q, k, v = (rng.standard_normal((heads, n, d_k)) for _ in range(3))
    seconds = best_time(lambda: scaled_dot_product_attention(q, k, v), repeats, min_total=0.05)
    _, peak = peak_memory(lambda: scaled_dot_product_attention(q, k, v))
    return CostPoint(n, heads, d_k, seconds, peak, heads * n * n * 8)
