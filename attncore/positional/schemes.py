r"""The other ways to encode position, beside the sinusoidal table: a learned table
(:func:`learned_table`), relative positions (:func:`relative_positions`), RoPE
(:func:`rope`, and :func:`rope_scores`, lesson 5's check that a score depends on the
offset only) and ALiBi (:func:`alibi_slopes`, :func:`alibi_bias`, with
:func:`geometric_ratio` to say when the slopes are a geometric sequence).

Where each enters attention: a learned table is added to the token embeddings X, as the
sinusoidal one is; RoPE rotates the queries and keys; relative positions and ALiBi act on
the scores.
"""

from __future__ import annotations

import numpy as np

from .._checks import positive_number, whole_number
from ..masks import query_positions
from .table import frequencies


def learned_table(max_len: int, d_model: int, rng: np.random.Generator,
                  std: float = 0.1) -> np.ndarray:
    """A learned (here: random, seeded) position table, shape (max_len, d_model).

    Unlike the sinusoids it has no rule behind it: row p is just a trained vector, and a
    position past ``max_len`` has no row at all.
    """
    max_len = whole_number(max_len, "max_len", 1, 100_000)
    d_model = whole_number(d_model, "d_model", 1, 8192)
    return rng.standard_normal((max_len, d_model)) * positive_number(std, "std")


def relative_positions(t_q: int, t_k: int | None = None, clip: int | None = None) -> np.ndarray:
    """Relative distance j − p of key j from the query at position p, clipped to [-clip, clip].

    Parameters
    ----------
    t_q : int
    t_k : int, optional
        Tk >= Tq (default Tq). Query i sits at position p = i + (Tk − Tq), as in
        :func:`attncore.masks.causal_mask` (see :func:`attncore.masks.query_positions`),
        so the distance is 0 exactly where the causal mask's diagonal is.
    clip : int, optional

    Returns
    -------
    ndarray of int (Tq, Tk)
        Constant along every diagonal; models learn one vector per clipped distance
        (Shaw et al., 2018), so 2·clip + 1 vectors serve any length.
    """
    t_q = whole_number(t_q, "t_q", 1, 100_000)
    t_k = t_q if t_k is None else whole_number(t_k, "t_k", 1, 100_000)
    rel = np.arange(t_k)[None, :] - query_positions(t_q, t_k)[:, None]
    if clip is None:
        return rel
    clip = whole_number(clip, "clip", 0, 100_000)
    return np.clip(rel, -clip, clip)


def rope(x, positions=None, base: float = 10000.0) -> np.ndarray:
    r"""Rotary position embedding: rotate pair i of the vector at position p by p·ω_i.

    Pair i is the adjacent coordinates (2i, 2i+1), as in RoFormer (Su et al., 2021),
    not the half-split layout (i, i + d/2) of GPT-NeoX and many later models: the two
    layouts give the same scores up to a fixed permutation of the coordinates, but
    their weights are not interchangeable.

    Parameters
    ----------
    x : array_like (..., T, d)
        Queries or keys; d even.
    positions : array_like of int (T,), optional
        Default 0..T-1.

    Returns
    -------
    ndarray (..., T, d)
        Rotated vectors, with the same norms: pair i is multiplied by the rotation
        :math:`\begin{pmatrix}\cos p\omega_i & -\sin p\omega_i\\ \sin p\omega_i &
        \cos p\omega_i\end{pmatrix}`. Because rotations compose,
        :math:`\mathrm{rope}(q, m) \cdot \mathrm{rope}(k, n) = q^\top R_{(n-m)\omega} k`
        depends on the positions only through the offset n - m.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim < 2:
        raise ValueError(f"rope needs x of shape (..., T, d); got {x.shape}")
    T, d = x.shape[-2:]
    omega = frequencies(d, base)  # (d/2,)
    p = np.arange(T) if positions is None else np.asarray(positions, dtype=np.float64)
    if p.shape != (T,):
        raise ValueError(f"positions must have shape ({T},); got {p.shape}")
    angle = p[:, None] * omega[None, :]  # (T, d/2)
    c, s = np.cos(angle), np.sin(angle)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * c - odd * s
    out[..., 1::2] = even * s + odd * c
    return out


def rope_scores(t: int, d_k: int, rng: np.random.Generator, base: float = 10000.0
                ) -> np.ndarray:
    """(R_m q) · (R_n k) for one random query vector q and key vector k (drawn from
    ``rng`` in that order, d_k wide) placed at every query position m and key position
    n < ``t``: shape (T, T), rows m, columns n. Each diagonal holds one value up to
    rounding: the score depends on n − m only (q R_m^T R_n k = q R_{n−m} k)."""
    t = whole_number(t, "t", 1)
    q_vec, k_vec = rng.standard_normal(d_k), rng.standard_normal(d_k)
    return rope(np.tile(q_vec, (t, 1)), base=base) @ rope(np.tile(k_vec, (t, 1)), base=base).T


def alibi_slopes(n_heads: int) -> np.ndarray:
    """ALiBi's per-head slopes m_1 .. m_H, the rule of Press et al. (2022).

    For H a power of two: m_h = 2^(-8h/H) for h = 1..H, a geometric sequence from
    2^(-8/H) down to 2^(-8), each slope 2^(-8/H) times the one before. Otherwise
    (not geometric): with H' the largest power of two below H, heads 1..H' take the
    H'-head slopes and heads H'+1..H every other slope of the 2H'-head sequence,
    starting with its first: 6 heads give 1/4, 1/16, 1/64, 1/256, then 1/2, 1/8.

    Returns
    -------
    ndarray (H,)
        Positive slopes below 1; the smallest is always 2^(-8).
    """
    n_heads = whole_number(n_heads, "n_heads", 1, 1024)

    def power_of_two(n: int) -> np.ndarray:
        return 2.0 ** (-8.0 * np.arange(1, n + 1) / n)

    n = 2 ** int(np.floor(np.log2(n_heads)))
    slopes = power_of_two(n)
    if n < n_heads:
        slopes = np.concatenate([slopes, power_of_two(2 * n)[0::2][: n_heads - n]])
    return slopes


def geometric_ratio(values, rtol: float = 1e-9) -> float | None:
    """The common ratio of a sequence of at least two positive numbers when each is that
    ratio times the one before (a geometric sequence), else None."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1 or len(v) < 2 or np.any(v <= 0):
        return None
    ratios = v[1:] / v[:-1]
    return float(ratios[0]) if np.allclose(ratios, ratios[0], rtol=rtol, atol=0) else None


def alibi_bias(t: int, n_heads: int, causal: bool = False) -> np.ndarray:
    """ALiBi biases added to the scores of each head, shape (H, T, T).

    Query i, key j (positions counted from 0), slope m_h from :func:`alibi_slopes`:

    - ``causal=True``, the paper's form (a language model): -m_h·(i - j) for j <= i,
      -inf (masked) for j > i: the farther back the key, the larger the penalty;
    - ``causal=False``, symmetric: -m_h·|i - j|, the same penalty both ways, for a
      model that reads in both directions.

    The two agree wherever j <= i.
    """
    t = whole_number(t, "t", 1, 100_000)
    behind = np.arange(t)[:, None] - np.arange(t)[None, :]  # (T, T): i - j
    # 0.0 − x rather than −x: no −0.0 on the diagonal, which a table would print as "-0".
    bias = 0.0 - alibi_slopes(n_heads)[:, None, None] * np.abs(behind)[None]  # (H, T, T)
    if causal:
        bias = np.where(behind[None] >= 0, bias, -np.inf)
    return bias
