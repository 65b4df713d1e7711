"""Attention a few query rows at a time (lesson 7, section 2): each chunk's softmax needs
only its own rows of scores, so the output is the same to rounding while at most
chunk · Tk weights exist at once; :func:`chunk_experiment` measures both."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import whole_number
from ..measure import peak_memories
from .counts import check_cost_size
from .lean import lean_attention


def lean_output(q, k, v) -> np.ndarray:
    """The output of :func:`lean_attention` (which also makes the whole weights)."""
    return lean_attention(q, k, v)[1]


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
    (full, full_peak), (parts, chunk_peak) = peak_memories(
        [(lean_output, (q, k, v)), (chunked_attention, (q, k, v, chunk))])
    return ChunkExperiment(n, heads, d_k, chunk, float(np.max(np.abs(full - parts))),
                           full_peak, chunk_peak)
