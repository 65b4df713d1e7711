r"""The sinusoidal table and lesson 5's checks of it.

:func:`sinusoidal` (Vaswani et al., 2017), its :func:`frequencies` and
:func:`wavelengths`, :func:`offset_cosine` (how alike two positions k apart are), the
:func:`shift_rotation` that moves it by an offset, :func:`apparent_turn` (what a table
drawn one row in several shows) and the Toeplitz check :func:`offset_spread`. Lesson 5's
checks, as frozen results: :func:`sinusoidal_table` (the table and how alike its
positions are), :func:`table_sample` (the true entries a large table is drawn with),
:func:`shift_check` (one rotation moves every position) and :func:`permutation_test`
(attention needs positions to see order).

.. math:: PE_{p, 2i} = \sin\!\left(\frac{p}{b^{2i/d_{model}}}\right), \qquad
          PE_{p, 2i+1} = \cos\!\left(\frac{p}{b^{2i/d_{model}}}\right)

with base b = 10000 by default. Pair i is a point on the unit circle turning at
angular speed :math:`\omega_i = b^{-2i/d_{model}}` (wavelength :math:`2\pi/\omega_i`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .._checks import as_real_array, positive_number, whole_number
from ..attention import scaled_dot_product_attention
from ..masks import causal_mask


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
class SinusoidalTable:
    """The sinusoidal table and how alike its positions are.

    Attributes
    ----------
    pe : ndarray (T, d_model)
        :func:`sinusoidal`.
    similarity : ndarray (T, T)
        PE · PEᵀ: Σᵢ cos((p − q)ωᵢ), a function of p − q only.
    norms : ndarray (T,)
        |PE(p)|, √(d_model / 2) for every p (each pair adds sin² + cos² = 1).
    """

    pe: np.ndarray
    similarity: np.ndarray
    norms: np.ndarray

    @cached_property
    def cosine(self) -> np.ndarray:
        """Cosine similarity of every two positions, (T, T): 1 on the diagonal."""
        return self.similarity / np.outer(self.norms, self.norms)

    @cached_property
    def offset_cosines(self) -> np.ndarray:
        """cos(PE(0), PE(k)) for k = 1 … T − 1, shape (T − 1,): the first row of the
        cosine map, which holds every distance (the map is constant along diagonals)."""
        return self.similarity[0, 1:] / self.norms[0] ** 2

    @property
    def nearest(self) -> int | None:
        """The distance k ≥ 1 at which positions are most alike (None for one position)."""
        return 1 + int(np.argmax(self.offset_cosines)) if self.offset_cosines.size else None

    @cached_property
    def diagonal_spread(self) -> float:
        """Largest spread along a diagonal of PE · PEᵀ (:func:`offset_spread`): rounding."""
        return offset_spread(self.similarity)

    @property
    def length_spread(self) -> float:
        """Largest difference between two lengths |PE(p)|: rounding."""
        return float(np.ptp(self.norms))


def sinusoidal_table(max_len: int, d_model: int, base: float = 10000.0) -> SinusoidalTable:
    """:func:`sinusoidal` with its similarities PE · PEᵀ (a T² · d_model product) and its
    row lengths."""
    pe = sinusoidal(max_len, d_model, base)
    return SinusoidalTable(pe=pe, similarity=pe @ pe.T, norms=np.linalg.norm(pe, axis=1))


@dataclass(frozen=True)
class TableSample:
    """The rows and columns of a sinusoidal table drawn at most ``cells`` a side.

    Attributes
    ----------
    rows : ndarray of int
        Positions p = 0, row_step, 2·row_step, …
    columns : ndarray of int
        Both columns (sin 2i, cos 2i + 1) of pairs i = 0, pair_step, 2·pair_step, …
    row_step, pair_step : int
        1 when every position (every pair) is drawn.
    """

    rows: np.ndarray
    columns: np.ndarray
    row_step: int
    pair_step: int

    @property
    def sampled(self) -> bool:
        """Whether some rows or columns are left out."""
        return self.row_step > 1 or self.pair_step > 1


def table_sample(max_len: int, d_model: int, cells: int) -> TableSample:
    """Which entries of the (T, d_model) table to draw with at most ``cells`` (even) rows
    and columns: all of them if they fit, else one position in ``row_step`` and one
    sin/cos pair in ``pair_step``. Every drawn cell is a true entry: averaging blocks of
    the fast columns, which swing between −1 and 1, would bring them near 0.

    >>> s = table_sample(512, 512, 64)
    >>> s.row_step, s.pair_step, s.rows[:3].tolist(), s.columns[:4].tolist()
    (8, 8, [0, 8, 16], [0, 1, 16, 17])
    """
    T = whole_number(max_len, "max_len", 1)
    d_model = whole_number(d_model, "d_model", 2)
    cells = whole_number(cells, "cells", 2)
    row_step = -(-T // cells)
    pair_step = -(-(d_model // 2) // (cells // 2))
    pairs = np.arange(0, d_model // 2, pair_step)
    return TableSample(rows=np.arange(0, T, row_step),
                       columns=np.sort(np.concatenate([2 * pairs, 2 * pairs + 1])),
                       row_step=row_step, pair_step=pair_step)


@dataclass(frozen=True)
class ShiftCheck:
    """One rotation R_k moves every row of the sinusoidal table k positions on.

    Attributes
    ----------
    offset : int
        k.
    rotation : ndarray (d_model, d_model)
        :func:`shift_rotation`.
    checked : int
        Positions with a position k further on in the table: T − k (0 when k ≥ T).
    error : float
        max |PE(p + k) − R_k PE(p)| over those positions: rounding (0.0 when none).
    """

    offset: int
    rotation: np.ndarray
    checked: int
    error: float


def shift_check(pe, offset: int, base: float = 10000.0) -> ShiftCheck:
    """Check PE(p + k) = R_k PE(p) on every row of ``pe`` (T, d_model), the table of
    :func:`sinusoidal` with this ``base``, that has a row k further on."""
    pe = as_real_array(pe, "pe", min_ndim=2)
    T, d_model = pe.shape
    k = whole_number(offset, "offset", 1)
    rotation = shift_rotation(k, d_model, base)
    error = float(np.max(np.abs(pe[k:] - pe[:-k] @ rotation.T))) if T > k else 0.0
    return ShiftCheck(offset=k, rotation=rotation, checked=max(T - k, 0), error=error)


@dataclass(frozen=True)
class PermutationTest:
    """Self-attention outputs of a sequence and of its shuffle.

    Attributes
    ----------
    perm : ndarray of int (T,)
        The shuffle: token perm[i] moves to position i.
    diff_without, diff_with : float
        max |attn(shuffled) - shuffle(attn(original))|, no mask, without positional
        encodings (rounding only, about 1e-16: attention is permutation-equivariant) and with
        them added (order now matters).
    diff_causal : float
        The same without positional encodings but with a causal mask: query i sees the
        keys j <= i, a set the shuffle changes, so the outputs differ without positions too.
    """

    perm: np.ndarray
    diff_without: float
    diff_with: float
    diff_causal: float


def permutation_test(x, pe, w_q, w_k, w_v, rng: np.random.Generator) -> PermutationTest:
    """Shuffle the tokens of ``x`` and compare self-attention outputs, with and without
    the positional encoding ``pe`` (T, d_model) added after the shuffle.

    Without positions, permuting the input rows permutes the output rows the same way:
    attn(P X) = P attn(X). With positions added, the shuffled tokens sit at new
    positions, so the equality breaks; with a causal mask, each token sees the tokens now
    before it, so it breaks too.
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

    def attn(inputs, mask=None):
        return scaled_dot_product_attention(inputs @ w_q, inputs @ w_k, inputs @ w_v,
                                            mask=mask).output

    without = np.max(np.abs(attn(x[perm]) - attn(x)[perm]))
    with_pe = np.max(np.abs(attn(x[perm] + pe) - attn(x + pe)[perm]))
    causal = np.max(np.abs(attn(x[perm], causal_mask(T)) - attn(x, causal_mask(T))[perm]))
    return PermutationTest(perm=perm, diff_without=float(without), diff_with=float(with_pe),
                           diff_causal=float(causal))
