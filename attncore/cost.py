r"""Lesson 7's experiments: what attention costs in time and memory, measured here.

What is here:

* :func:`lean_attention`, the memory-lean form of scaled dot-product attention (one
  (..., Tq, Tk) array alive at a time), equal to
  :func:`attncore.attention.scaled_dot_product_attention` up to rounding;
* :func:`textbook_attention`, the same computation as a Python loop over heads;
  :func:`head_loop_attention`, the lean form called once per head; and
  :func:`chunked_attention`, a few query rows at a time;
* :func:`attention_multiply_adds` and :func:`projection_multiply_adds`, what the
  arithmetic costs, counted;
* :func:`growth_exponent` and :func:`local_exponents`, the slope of time against n on
  log-log axes;
* the lesson's three experiments, each returning a frozen result:
  :func:`measure_growth` (time and memory against n, with the fitted growth exponent
  and its spread), :func:`chunk_experiment` and :func:`loop_experiment`.

Timings on a shared machine are noisy, so every measurement here runs on one BLAS
thread (:mod:`attncore.measure` says why), warms up first, interleaves the sizes so a
burst of load hits them all alike, keeps the minimum of many calls, and reports its
spread.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import whole_number
from .attention import check_qkv
from .measure import best_time, one_blas_thread, peak_memory

#: Largest H·n² (weights held at once) a measurement may ask for: 4 heads of 1024².
MAX_WEIGHT_ELEMENTS = 4 * 1024 * 1024

#: The growth exponent is called conclusive when the per-round fits agree within this.
EXPONENT_SPREAD_LIMIT = 0.3

#: A measured exponent within this of 2 is said to grow "like n²".
SQUARE_TOLERANCE = 0.15

MIB = 2**20


def lean_attention(q, k, v) -> tuple[np.ndarray, np.ndarray]:
    r"""softmax(Q Kᵀ/√d_k) V holding a single (..., Tq, Tk) array: the weights.

    Same result as :func:`attncore.attention.scaled_dot_product_attention` (to
    rounding, about 1e-16), with three memory savings that make it hard to read, which
    is why the lesson's function is the plain one:

    * 1/√d_k is folded into Q (the small array) instead of Q Kᵀ;
    * the softmax runs in place, subtracting the row maximum only when some score could
      exceed 30 in size (bounded by Cauchy–Schwarz, \|s_ij\| <= \|q_i\| \|k_j\|): below
      that, exp stays within [1e-13, 1e13] and the shift cancels in exact arithmetic;
    * one product with V augmented by a column of ones gives both E V and the row sums.

    Parameters
    ----------
    q, k, v : array_like (..., Tq, d_k), (..., Tk, d_k), (..., Tk, d_v)

    Returns
    -------
    weights : ndarray (..., Tq, Tk), rows summing to 1
    output : ndarray (..., Tq, d_v)
    """
    q, k, v = check_qkv(q, k, v)
    q = q / np.sqrt(q.shape[-1])
    s = q @ np.swapaxes(k, -1, -2)  # (..., Tq, d_k) x (..., d_k, Tk) -> (..., Tq, Tk)
    bound = _max_row_norm(q) * _max_row_norm(k)
    if not bound < 1e300 and not np.all(np.isfinite(s)):
        raise ValueError("the scores Q Kᵀ/√d_k overflowed float64; use smaller inputs")
    if not bound <= _EXP_SAFE:
        s -= np.max(s, axis=-1, keepdims=True)
    np.exp(s, out=s)
    ones = np.ones(v.shape[:-1] + (1,))
    ev = s @ np.concatenate([v, ones], axis=-1)  # (..., Tq, Tk) x (..., Tk, d_v + 1)
    inv = 1.0 / ev[..., -1:]  # (..., Tq, 1): one over each row sum
    s *= inv
    return s, ev[..., :-1] * inv


# exp(s) for |s| <= 30 lies in [1e-13, 1e13]: E V cannot overflow where W V would not.
_EXP_SAFE = 30.0


def _max_row_norm(x: np.ndarray) -> float:
    with np.errstate(over="ignore"):
        return float(np.sqrt(np.max(np.sum(x * x, axis=-1))))


def textbook_attention(q, k, v) -> tuple[np.ndarray, np.ndarray]:
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


def head_loop_attention(q, k, v) -> np.ndarray:
    """:func:`lean_attention` called once per head in a Python loop: the same arithmetic as
    one call over all the heads, so timing the two measures only what splitting the call
    changes (a call's fixed cost paid H times, and smaller arrays per call).

    q, k, v : (H, T, d); returns the outputs (H, Tq, d_v).
    """
    return np.stack([lean_attention(q[h], k[h], v[h])[1] for h in range(q.shape[0])])


def chunked_attention(q, k, v, chunk: int) -> np.ndarray:
    """The attention output computed ``chunk`` query rows at a time.

    Each chunk's softmax needs only its own rows of scores, so at most
    (..., chunk, Tk) weights exist at once instead of (..., Tq, Tk); the output is
    the same (up to rounding).
    """
    q = np.asarray(q, dtype=np.float64)
    chunk = whole_number(chunk, "chunk", 1)
    parts = [lean_attention(q[..., i:i + chunk, :], k, v)[1]
             for i in range(0, q.shape[-2], chunk)]
    return np.concatenate(parts, axis=-2)


def growth_exponent(ns, seconds) -> float:
    """Least-squares slope of log(seconds) against log(n): time ∝ n^slope."""
    return float(np.polyfit(np.log(np.asarray(ns, float)), np.log(np.asarray(seconds)), 1)[0])


def local_exponents(ns, seconds) -> np.ndarray:
    """The slope between each pair of neighbouring lengths, log(t₂/t₁) / log(n₂/n₁): how
    fast time grows in each stretch of n (m lengths give m − 1 slopes)."""
    ns, seconds = np.asarray(ns, float), np.asarray(seconds, float)
    return np.diff(np.log(seconds)) / np.diff(np.log(ns))


def against_square(exponent: float, tolerance: float = SQUARE_TOLERANCE) -> str:
    """How a measured growth exponent compares with the 2 of attention's arithmetic:
    ``"slower"`` (below 2 − tolerance), ``"like n²"`` (within it) or ``"faster"``.

    >>> against_square(1.57), against_square(1.95), against_square(2.4)
    ('slower', 'like n²', 'faster')
    """
    if exponent < 2 - tolerance:
        return "slower"
    return "faster" if exponent > 2 + tolerance else "like n²"


def shared_verdict(exponents) -> str | None:
    """The word of :func:`against_square` that every exponent in ``exponents`` gets (the
    minima's fit and each round's, say), or None when they differ: a verdict that the
    spread between rounds could reverse is not a verdict.

    >>> shared_verdict([2.02, 1.93, 2.10]), shared_verdict([1.9, 1.8])
    ('like n²', None)
    """
    words = {against_square(float(e)) for e in exponents}
    return words.pop() if len(words) == 1 else None


def attention_multiply_adds(n: int, heads: int, d_k: int) -> int:
    r"""Multiply-adds of attention itself on n tokens: :math:`2 H n^2 d_k`.

    Per head, Q Kᵀ is an (n × d_k)(d_k × n) product and the weights times V an
    (n × n)(n × d_k) one: n²·d_k multiply-adds each. The softmax adds H·n² exponentials;
    the four projections are counted by :func:`projection_multiply_adds`.

    >>> attention_multiply_adds(512, 4, 64)  # 2 · 4 · 512² · 64
    134217728
    """
    return 2 * heads * n * n * d_k


def projection_multiply_adds(n: int, d_model: int) -> int:
    r"""Multiply-adds of an attention layer's four projections on n tokens:
    :math:`4 n d_{\text{model}}^2`.

    Q, K and V from the tokens' vectors and the output through W_O are each an
    (n × d_model)(d_model × d_model) product. Against attention's 2·n²·d_model (with
    H·d_k = d_model) they cost more while n < 2·d_model: on short sequences a layer's time
    grows nearly linearly in n.

    >>> projection_multiply_adds(512, 256)  # 4 · 512 · 256²
    134217728
    """
    return 4 * n * d_model * d_model


@dataclass(frozen=True)
class Growth:
    """Time and memory of :func:`lean_attention` against the sequence length n.

    Attributes
    ----------
    ns : ndarray of int (m,)
    heads, d_k, rounds : int
    seconds : ndarray (m,)
        Per n, the shortest of all its timed calls.
    round_seconds : ndarray (rounds, m)
        Per round, the best of that round's calls; the rounds interleave the sizes.
    peak_bytes : ndarray of int (m,)
        Peak memory of one call (tracemalloc).
    weights_bytes : ndarray of int (m,)
        H·n²·8 bytes: the float64 weights alone.
    fit_ns : ndarray of int
        The lengths the exponent is fitted over (those with n >= ``fit_from``, where
        the n² work outweighs the fixed cost of a call).
    exponent : float
        Slope of log time against log n over ``fit_ns``, from the minima.
    exponent_low, exponent_high : float
        The smallest and largest slope among the rounds fitted one by one.
    conclusive : bool
        True when that spread is at most :data:`EXPONENT_SPREAD_LIMIT`.
    """

    ns: np.ndarray
    heads: int
    d_k: int
    rounds: int
    seconds: np.ndarray
    round_seconds: np.ndarray
    peak_bytes: np.ndarray
    weights_bytes: np.ndarray
    fit_ns: np.ndarray
    exponent: float
    exponent_low: float
    exponent_high: float

    @property
    def conclusive(self) -> bool:
        return self.exponent_high - self.exponent_low <= EXPONENT_SPREAD_LIMIT


def check_cost_size(n: int, heads: int) -> None:
    """Refuse H·n² above :data:`MAX_WEIGHT_ELEMENTS` with a message that says the cap."""
    if heads * n * n > MAX_WEIGHT_ELEMENTS:
        raise ValueError(
            f"H·n² = {heads * n * n:,} weights exceeds the cap of {MAX_WEIGHT_ELEMENTS:,} "
            f"({MAX_WEIGHT_ELEMENTS * 8 / MIB:.0f} MiB); use fewer heads or a shorter n"
        )


def measure_growth(ns, heads: int, d_k: int, rounds: int, rng: np.random.Generator,
                   *, fit_from: int = 128, min_round: float = 0.02,
                   progress=None) -> Growth:
    """Time :func:`lean_attention` at every n in ``ns`` over ``rounds`` interleaved rounds.

    Each round visits the sizes in a new random order and times each size until
    ``min_round`` seconds (or 50 calls) have passed, keeping its best; one warm-up call
    per size comes first, and everything runs on one BLAS thread.

    Parameters
    ----------
    ns : sequence of int
        At least two lengths, each 2..8192, with H·n² <= :data:`MAX_WEIGHT_ELEMENTS`.
    heads, d_k, rounds : int
        1..64, 1..1024, 2..20.
    rng : numpy.random.Generator
        For the inputs and the order of the sizes.
    fit_from : int
        The exponent is fitted over n >= fit_from (over all n if fewer than two qualify).
    progress : callable, optional
        Called with a fraction in [0, 1] after each round.
    """
    ns = np.array(sorted({whole_number(n, "n", 2, 8192) for n in ns}), dtype=int)
    if ns.size < 2:
        raise ValueError(f"measure_growth needs at least two lengths n; got {ns.tolist()}")
    heads = whole_number(heads, "heads", 1, 64)
    d_k = whole_number(d_k, "d_k", 1, 1024)
    rounds = whole_number(rounds, "rounds", 2, 20)
    for n in ns:
        check_cost_size(int(n), heads)
    inputs = [tuple(rng.standard_normal((heads, n, d_k)) for _ in range(3)) for n in ns]
    round_seconds = np.empty((rounds, ns.size))
    with one_blas_thread():
        for qkv in inputs:  # warm-up: first-touch page faults, BLAS buffers
            lean_attention(*qkv)
        for r in range(rounds):
            for i in rng.permutation(ns.size):
                round_seconds[r, i] = best_time(lambda qkv=inputs[i]: lean_attention(*qkv),
                                                1, min_total=min_round, max_calls=50)
            if progress is not None:
                progress((r + 1) / rounds)
        peaks = np.array([peak_memory(lambda qkv=qkv: lean_attention(*qkv))[1]
                          for qkv in inputs])
    fit = ns >= fit_from if np.count_nonzero(ns >= fit_from) >= 2 else np.ones(ns.size, bool)
    per_round = [growth_exponent(ns[fit], row[fit]) for row in round_seconds]
    seconds = round_seconds.min(axis=0)
    return Growth(ns=ns, heads=heads, d_k=d_k, rounds=rounds, seconds=seconds,
                  round_seconds=round_seconds, peak_bytes=peaks,
                  weights_bytes=heads * ns * ns * 8, fit_ns=ns[fit],
                  exponent=growth_exponent(ns[fit], seconds[fit]),
                  exponent_low=float(min(per_round)), exponent_high=float(max(per_round)))


@dataclass(frozen=True)
class ChunkExperiment:
    """The full attention output against the same output computed a chunk of rows at a time.

    Attributes
    ----------
    n, heads, d_k, chunk : int
    max_difference : float
        max |full − chunked| over the output.
    full_peak_bytes, chunk_peak_bytes : int
        Peak memory of each computation (tracemalloc).
    """

    n: int
    heads: int
    d_k: int
    chunk: int
    max_difference: float
    full_peak_bytes: int
    chunk_peak_bytes: int


def chunk_experiment(n: int, heads: int, d_k: int, chunk: int,
                     rng: np.random.Generator) -> ChunkExperiment:
    """Compute one random (H, n, d_k) attention whole and in chunks; compare output and memory."""
    n = whole_number(n, "n", 1, 8192)
    heads = whole_number(heads, "heads", 1, 64)
    d_k = whole_number(d_k, "d_k", 1, 1024)
    chunk = whole_number(chunk, "chunk", 1, n)
    check_cost_size(n, heads)
    q, k, v = (rng.standard_normal((heads, n, d_k)) for _ in range(3))
    full, full_peak = peak_memory(lambda: lean_attention(q, k, v)[1])
    parts, chunk_peak = peak_memory(lambda: chunked_attention(q, k, v, chunk))
    return ChunkExperiment(n, heads, d_k, chunk, float(np.max(np.abs(full - parts))),
                           full_peak, chunk_peak)


@dataclass(frozen=True)
class LoopExperiment:
    """One vectorised call over all heads against a Python loop over the heads, both
    doing the same arithmetic (:func:`head_loop_attention`).

    Attributes
    ----------
    n, heads, d_k, rounds : int
    vectorised_seconds, loop_seconds : float
        The best time of each, interleaved over ``rounds`` rounds on one BLAS thread.
    ratios : ndarray (rounds,)
        loop / vectorised within each round: their spread says how sure the speed-up is.
    max_difference : float
        max |vectorised − loop| over the outputs.
    """

    n: int
    heads: int
    d_k: int
    rounds: int
    vectorised_seconds: float
    loop_seconds: float
    ratios: np.ndarray
    max_difference: float

    @property
    def speedup(self) -> float:
        return self.loop_seconds / self.vectorised_seconds


def loop_experiment(n: int, heads: int, d_k: int, rounds: int,
                    rng: np.random.Generator, *, min_round: float = 0.02) -> LoopExperiment:
    """Time :func:`lean_attention` (one call for all heads) against
    :func:`head_loop_attention` (the same function, once per head in a Python loop) on the
    same random (H, n, d_k) inputs, interleaved. The loop's body is the vectorised call's
    arithmetic, so the ratio measures only what splitting the call per head changes (a
    fixed cost per call, paid H times; one head's smaller arrays, which may fit the caches
    better): with one head it is close to 1."""
    n = whole_number(n, "n", 1, 8192)
    heads = whole_number(heads, "heads", 1, 256)
    d_k = whole_number(d_k, "d_k", 1, 1024)
    rounds = whole_number(rounds, "rounds", 1, 20)
    check_cost_size(n, heads)
    q, k, v = (rng.standard_normal((heads, n, d_k)) for _ in range(3))

    def vectorised():
        return lean_attention(q, k, v)[1]

    def loop():
        return head_loop_attention(q, k, v)

    times = np.empty((rounds, 2))
    with one_blas_thread():
        vectorised(), loop()  # warm-up
        for r in range(rounds):
            order = (0, 1) if r % 2 == 0 else (1, 0)
            for i in order:
                times[r, i] = best_time((vectorised, loop)[i], 1, min_total=min_round,
                                        max_calls=50)
    diff = float(np.max(np.abs(vectorised() - loop())))
    return LoopExperiment(n, heads, d_k, rounds, float(times[:, 0].min()),
                          float(times[:, 1].min()), times[:, 1] / times[:, 0], diff)


@dataclass(frozen=True)
class OnlineSoftmaxTrace:
    r"""FlashAttention's online softmax, one key block at a time, with every running state.

    For each query row the loop keeps three things while the key blocks arrive: the largest
    score seen so far m, the denominator ℓ = Σ e^{s − m} over the keys seen, and the
    unnormalised output o = Σ e^{s − m} v. A new block with scores s_b gives

    .. math:: m' = \max(m, \max_j s_{bj}),\quad
              \ell' = e^{m - m'}\,\ell + \sum_j e^{s_{bj} - m'},\quad
              o' = e^{m - m'}\,o + \sum_j e^{s_{bj} - m'} v_j

    (the factor e^{m − m'} rescales what was summed against the old maximum), and after
    the last block the output is o / ℓ: exactly softmax(s) V, without ever holding a
    whole row of weights, let alone the Tq × Tk matrix.

    Attributes
    ----------
    block_q, block_k : int
        Query rows and keys per tile.
    key_blocks : list of (start, stop)
        The key range of each block, in order.
    running_max, denominator : ndarray (n_blocks, Tq)
        m and ℓ of every query row after each key block (−∞ and 0 while a row has seen
        no key it may attend to).
    partial_output : ndarray (n_blocks, Tq, d_v)
        o / ℓ after each block: the attention output over the keys seen so far.
    output : ndarray (Tq, d_v)
        The result; a row whose every key is masked is 0 (the softmax policy).
    largest_tile : int
        The most scores held at once: block_q · block_k.
    """

    block_q: int
    block_k: int
    key_blocks: list[tuple[int, int]]
    running_max: np.ndarray
    denominator: np.ndarray
    partial_output: np.ndarray
    output: np.ndarray
    largest_tile: int


def online_softmax_attention(q, k, v, block_k: int, block_q: int | None = None, mask=None,
                             keep_states: bool = True) -> OnlineSoftmaxTrace:
    """softmax(Q Kᵀ/√d_k) V computed tile by tile with the online softmax (FlashAttention).

    Parameters
    ----------
    q, k, v : array_like (Tq, d_k), (Tk, d_k), (Tk, d_v)
    block_k : int
        Keys per block (1 .. Tk).
    block_q : int, optional
        Query rows per tile (default all of them); the rows are independent, so this
        changes the memory held, never the numbers.
    mask : array_like of bool (Tq, Tk), optional
        True means "may attend".
    keep_states : bool
        Keep m, ℓ and the partial output after every block (for the lesson); off for a
        memory measurement, as they hold n_blocks × Tq numbers each.

    Returns
    -------
    OnlineSoftmaxTrace
        ``output`` equals :func:`attncore.attention.scaled_dot_product_attention`'s to
        rounding (about 1e-16 in float64).
    """
    q, k, v = check_qkv(q, k, v)
    if q.ndim != 2:
        raise ValueError(f"online_softmax_attention takes one head: q (Tq, d_k); got {q.shape}")
    Tq, Tk, d_v = q.shape[0], k.shape[0], v.shape[1]
    block_k = whole_number(block_k, "block_k", 1, Tk)
    block_q = Tq if block_q is None else whole_number(block_q, "block_q", 1, Tq)
    allowed = None if mask is None else np.broadcast_to(np.asarray(mask, dtype=bool), (Tq, Tk))
    scale = 1.0 / np.sqrt(q.shape[1])
    starts = list(range(0, Tk, block_k))
    kept = len(starts) if keep_states else 0
    m = np.full((kept, Tq), -np.inf)
    ell = np.zeros((kept, Tq))
    partial = np.zeros((kept, Tq, d_v))
    out = np.zeros((Tq, d_v))
    for r0 in range(0, Tq, block_q):
        rows = slice(r0, r0 + block_q)
        qb = q[rows] * scale  # (bq, d_k)
        m_run = np.full(qb.shape[0], -np.inf)  # the running maximum of each row
        l_run = np.zeros(qb.shape[0])  # the running denominator
        o_run = np.zeros((qb.shape[0], d_v))  # the running output, not yet divided by l
        for b, c0 in enumerate(starts):
            cols = slice(c0, c0 + block_k)
            s = qb @ k[cols].T  # (bq, d_k) x (d_k, bk) -> (bq, bk)
            if allowed is not None:
                s = np.where(allowed[rows, cols], s, -np.inf)
            m_new = np.maximum(m_run, s.max(axis=1))
            seen = np.isfinite(m_new)  # rows that have met a key they may attend to
            shift = np.where(seen, m_new, 0.0)
            rescale = np.where(seen, np.exp(m_run - shift), 0.0)  # e^{m − m'}; 0 at first
            p = np.exp(s - shift[:, None])  # (bq, bk); exactly 0 where masked
            l_run = rescale * l_run + p.sum(axis=1)
            o_run = rescale[:, None] * o_run + p @ v[cols]  # (bq, bk) x (bk, d_v)
            m_run = m_new
            if keep_states:
                m[b, rows], ell[b, rows] = m_run, l_run
                partial[b, rows] = _divided(o_run, l_run)
        out[rows] = _divided(o_run, l_run)
    return OnlineSoftmaxTrace(block_q=block_q, block_k=block_k,
                              key_blocks=[(c, min(c + block_k, Tk)) for c in starts],
                              running_max=m, denominator=ell, partial_output=partial,
                              output=out, largest_tile=min(block_q, Tq) * block_k)


def _divided(o: np.ndarray, ell: np.ndarray) -> np.ndarray:
    """o / ℓ row by row; 0 for a row that has seen no key (ℓ = 0), as the softmax policy."""
    return np.divide(o, ell[:, None], out=np.zeros_like(o), where=ell[:, None] > 0)


def hbm_accesses_standard(n: int, d: int) -> int:
    """Slow-memory (HBM) reads and writes of standard attention, in numbers, as the
    FlashAttention paper counts them (its Algorithm 0): read Q, K and write S = Q Kᵀ
    (2nd + n²); read S, write P = softmax(S) (2n²); read P and V, write O (n² + 2nd).
    4nd + 4n² in all."""
    return 4 * n * d + 4 * n * n


def hbm_accesses_flash(n: int, d: int, sram: int) -> int:
    """Slow-memory reads and writes of FlashAttention's Algorithm 1 for an on-chip memory
    of ``sram`` numbers: key/value blocks of B_c = ⌈M / 4d⌉ rows are read once (2nd); for
    each of the T_c = ⌈n / B_c⌉ blocks every query row is read, and its output, m and ℓ
    read and written: T_c (n d + 2 (n d + 2n)). Θ(n² d² / M) for large n."""
    block_c = -(-sram // (4 * d))
    t_c = -(-n // block_c)
    return 2 * n * d + t_c * (n * d + 2 * (n * d + 2 * n))


@dataclass(frozen=True)
class TiledMemory:
    """Peak bytes allocated by plain attention and by the tiled online softmax, for one
    head of random (n, d) inputs at each n; and the time of each (one BLAS thread)."""

    ns: np.ndarray
    d: int
    block: int
    plain_peak: np.ndarray
    tiled_peak: np.ndarray
    plain_seconds: np.ndarray
    tiled_seconds: np.ndarray
    max_difference: float


def tiled_memory(ns, d: int, block: int, rng: np.random.Generator) -> TiledMemory:
    """Measure :class:`TiledMemory` (n at most 4096: plain attention holds n² weights)."""
    ns = np.array([whole_number(int(n), "n", 1, 4096) for n in ns])
    d = whole_number(d, "d", 1, 256)
    block = whole_number(block, "block", 1, 4096)
    from .attention import scaled_dot_product_attention

    plain_peak, tiled_peak, plain_t, tiled_t, diff = [], [], [], [], 0.0
    with one_blas_thread():
        for n in ns:
            q, k, v = (rng.standard_normal((n, d)) for _ in range(3))
            b = min(block, int(n))
            plain, peak = peak_memory(lambda q=q, k=k, v=v: scaled_dot_product_attention(
                q, k, v).output)
            tiled, tpeak = peak_memory(lambda q=q, k=k, v=v, b=b: _tiled(q, k, v, b))
            plain_peak.append(peak)
            tiled_peak.append(tpeak)
            diff = max(diff, float(np.max(np.abs(plain - tiled))))
            plain_t.append(best_time(lambda q=q, k=k, v=v: scaled_dot_product_attention(
                q, k, v).output, 2))
            tiled_t.append(best_time(lambda q=q, k=k, v=v, b=b: _tiled(q, k, v, b), 2))
    return TiledMemory(ns, d, block, np.array(plain_peak), np.array(tiled_peak),
                       np.array(plain_t), np.array(tiled_t), diff)


def _tiled(q: np.ndarray, k: np.ndarray, v: np.ndarray, block: int) -> np.ndarray:
    return online_softmax_attention(q, k, v, block, block, keep_states=False).output
