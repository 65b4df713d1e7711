r"""Positional encodings, and lesson 5's test that attention needs them.

What is here: the sinusoidal table (:func:`sinusoidal`, its :func:`frequencies` and
:func:`wavelengths`, the :func:`shift_rotation` that moves it by an offset), a learned
table (:func:`learned_table`), relative positions (:func:`relative_positions`), RoPE
(:func:`rope`), ALiBi (:func:`alibi_slopes`, :func:`alibi_bias`), the Toeplitz check
:func:`offset_spread`, :func:`offset_cosine`, :func:`geometric_ratio`,
:func:`apparent_turn` (what a table drawn one row in several shows), and
:func:`permutation_test`.

Sinusoidal (Vaswani et al., 2017):

.. math:: PE_{p, 2i} = \sin\!\left(\frac{p}{b^{2i/d_{model}}}\right), \qquad
          PE_{p, 2i+1} = \cos\!\left(\frac{p}{b^{2i/d_{model}}}\right)

with base b = 10000 by default. Pair i is a point on the unit circle turning at
angular speed :math:`\omega_i = b^{-2i/d_{model}}` (wavelength :math:`2\pi/\omega_i`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import as_real_array, positive_number, whole_number
from .attention import scaled_dot_product_attention
from .masks import query_positions


def frequencies(d_model: int, base: float = 10000.0) -> np.ndarray:
    """Angular speeds ω_i = base^(-2i/d_model) of the d_model/2 sin/cos pairs."""
    d_model = whole_number(d_model, "d_model", 2, 8192)
    if d_model % 2:
        raise ValueError(
            f"d_model must be even for sinusoidal encodings (sin/cos pairs); got {d_model}"
        )
    base = positive_number(base, "base")
    if base <= 1:
        raise ValueError(f"base must be > 1; got {base}")
    return base ** (-np.arange(0, d_model, 2) / d_model)  # (d_model/2,)


def wavelengths(d_model: int, base: float = 10000.0) -> np.ndarray:
    """Wavelength 2π/ω_i = 2π·base^(2i/d_model) of each pair, in positions: from 2π (pair
    0) to 2π·base^(1 − 2/d_model) (the last pair, just under 2π·base), a geometric
    progression of ratio base^(2/d_model)."""
    return 2 * np.pi / frequencies(d_model, base)


def offset_cosine(offset, d_model: int, base: float = 10000.0) -> np.ndarray:
    r"""Cosine similarity of PE(p) and PE(p + k), the same for every p.

    Each pair contributes :math:`\sin p\omega\sin(p+k)\omega + \cos p\omega\cos(p+k)\omega =
    \cos k\omega` to the dot product, and every PE(p) has squared length d_model/2, so

    .. math:: \cos(PE(p), PE(p+k)) = \frac{2}{d_{model}} \sum_i \cos(k\,\omega_i).

    Parameters
    ----------
    offset : int or array_like of int
        The distance k (any shape).

    Returns
    -------
    ndarray, the shape of ``offset``, values in [-1, 1]; 1 at k = 0.
    """
    omega = frequencies(d_model, base)  # (d_model/2,)
    k = np.asarray(offset, dtype=np.float64)
    return np.cos(k[..., None] * omega).mean(axis=-1)


def sinusoidal(max_len: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """The sinusoidal encoding table.

    Returns
    -------
    ndarray (max_len, d_model)
        Row p is PE(p); even columns are sines, odd columns cosines; every value
        lies in [-1, 1]; PE(0) alternates 0 and 1.
    """
    max_len = whole_number(max_len, "max_len", 1, 100_000)
    omega = frequencies(d_model, base)
    angles = np.arange(max_len)[:, None] * omega[None, :]  # (T, d_model/2)
    pe = np.empty((max_len, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe


def shift_rotation(offset: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    r"""The block-diagonal rotation R_k with PE(p + k) = R_k PE(p) for every p.

    Pair i of PE(p) is :math:`(\sin p\omega_i, \cos p\omega_i)`; by the angle-addition
    formulas

    .. math:: \begin{pmatrix}\sin (p+k)\omega \\ \cos (p+k)\omega\end{pmatrix} =
              \begin{pmatrix}\cos k\omega & \sin k\omega \\ -\sin k\omega & \cos k\omega
              \end{pmatrix} \begin{pmatrix}\sin p\omega \\ \cos p\omega\end{pmatrix},

    a matrix that depends on the offset k but not on p.

    Returns
    -------
    ndarray (d_model, d_model)
    """
    b = whole_number(offset, "offset") * frequencies(d_model, base)  # (d_model/2,)
    r = np.zeros((d_model, d_model))
    c, s = np.cos(b), np.sin(b)
    i = np.arange(0, d_model, 2)
    r[i, i], r[i, i + 1], r[i + 1, i], r[i + 1, i + 1] = c, s, -s, c
    return r


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


def apparent_turn(angle: float) -> float:
    """The turn, in [0, π], that samples taken every ``angle`` radians of a rotation show.

    Turns that differ by a whole number of full turns (2π) land on the same points, so
    samples of a pair turning by 6 radians per sample show a turn of 2π − 6 ≈ 0.28
    radians (backwards): the slow wave a table drawn one row in 6 seems to have in its
    fastest columns is an alias of the sampling. Sign is dropped: backwards or forwards,
    a column of sines shows the same wave.

    >>> round(apparent_turn(6.0), 4), apparent_turn(2.0)
    (0.2832, 2.0)
    """
    turn = float(np.mod(angle, 2 * np.pi))
    return min(turn, 2 * np.pi - turn)


def offset_spread(m) -> float:
    """Largest spread (max - min) along any diagonal of a square matrix: 0 when the
    matrix depends on the offset j - i only (a Toeplitz matrix)."""
    m = np.asarray(m, dtype=np.float64)
    T = m.shape[0]
    return max((float(np.ptp(np.diagonal(m, k))) for k in range(-T + 1, T)), default=0.0)


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
    x = as_real_array(x, "x", min_ndim=2)
    pe = as_real_array(pe, "pe", min_ndim=2)
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
