r"""FlashAttention (lesson 11, section 4): attention tile by tile with the online softmax,
never holding the Tq × Tk weights (:func:`online_softmax_attention` and its
:class:`OnlineSoftmaxTrace`); the slow-memory (HBM) reads and writes of standard attention
and of FlashAttention, counted as the paper counts them; and the memory of each, measured
(:func:`tiled_memory`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import whole_number
from ..attention import check_qkv, scaled_dot_product_attention
from ..measure import best_time, one_blas_thread, peak_memories


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
    inputs = [(*(rng.standard_normal((n, d)) for _ in range(3)), min(block, int(n)))
              for n in ns]
    plain = peak_memories([(_plain, (q, k, v)) for q, k, v, _ in inputs])
    tiled = peak_memories([(_tiled, (q, k, v, b)) for q, k, v, b in inputs])
    plain_peak, tiled_peak = [peak for _, peak in plain], [peak for _, peak in tiled]
    diff = max(float(np.max(np.abs(p - t)))
               for (p, _), (t, _) in zip(plain, tiled, strict=True))
    plain_t, tiled_t = [], []
    with one_blas_thread():
        for q, k, v, b in inputs:
            plain_t.append(best_time(lambda q=q, k=k, v=v: _plain(q, k, v), 2))
            tiled_t.append(best_time(lambda q=q, k=k, v=v, b=b: _tiled(q, k, v, b), 2))
    return TiledMemory(ns, d, block, np.array(plain_peak), np.array(tiled_peak),
                       np.array(plain_t), np.array(tiled_t), diff)


def _plain(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    return scaled_dot_product_attention(q, k, v).output


def _tiled(q: np.ndarray, k: np.ndarray, v: np.ndarray, block: int) -> np.ndarray:
    return online_softmax_attention(q, k, v, block, block, keep_states=False).output
