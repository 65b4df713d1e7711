"""Lesson 3's comparisons, each computed whole on one sentence's scores (those of
:func:`random_self_attention`), as a frozen result the page lays out.

:func:`fully_masked_row` (a row with no key under the two fills and attncore's policy),
:func:`inverted_mask` (a "may attend" mask read as "True = masked"), :func:`off_by_one`
(``triu(k=0)`` for ``triu(k=1)``), :func:`wrong_axis` (the softmax over the queries),
:func:`fills_by_type` (-1e9 in float64, float32 and float16) and :func:`dropout_sums`
(masking acts before the normalisation, attention dropout after it, so only dropout
changes a row's sum). The by-hand steps they compare are in
:mod:`attncore.pitfalls.by_hand`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import as_real_array, whole_number
from ..attention import AttentionTrace, scaled_dot_product_attention
from ..init import normal_weights
from ..softmax import fully_masked_rows, softmax
from .by_hand import (
    PlainSoftmax,
    _broadcast,
    blocked_triangle,
    plain_masked_softmax,
    read_mask,
    softmax_over_queries,
    stored_as,
)

#: A row sum within this of 1 is 1: float64 rounding of a handful of additions.
SUMS_TO_ONE = 1e-12


@dataclass(frozen=True)
class FullyMaskedRow:
    """One query row masked completely, under the two textbook fills and attncore's
    policy, and what the fills do to the rows that keep a key.

    Attributes
    ----------
    row : int
        The row masked completely.
    mask : ndarray of bool (Tq, Tk)
        The mask with that row blocked; True = may attend.
    inf, big : PlainSoftmax
        The plain masked softmax with -inf and with -1e9 as the fill, in float64: the
        row is NaN with -inf (-inf - (-inf) is undefined) and uniform with -1e9.
    half : PlainSoftmax
        -1e9 as the fill in float16, which stores it as -inf (:func:`stored_as`).
    policy : ndarray (Tq, Tk)
        attncore's softmax: the row gets all-zero weights, never NaN.
    kept : ndarray of bool (Tq,)
        The rows that keep at least one key.
    gap : float
        Largest |w(-inf) - w(-1e9)| on the kept rows (0.0 when no row keeps a key).
    tails : ndarray (n,)
        e^(-1e9 - m) at the masked keys of the kept rows (n may be 0): exactly 0 when
        they underflow, which is when the two fills give the same weights.
    """

    row: int
    mask: np.ndarray
    inf: PlainSoftmax
    big: PlainSoftmax
    half: PlainSoftmax
    policy: np.ndarray
    kept: np.ndarray
    gap: float
    tails: np.ndarray


def fully_masked_row(scores, mask, row: int) -> FullyMaskedRow:
    """Mask every key of query ``row`` and compute the weights three ways.

    Parameters
    ----------
    scores : array_like (Tq, Tk)
        Finite scores.
    mask : array_like of bool, broadcastable to (Tq, Tk); True = may attend
    row : int
        0 to Tq - 1.

    >>> r = fully_masked_row([[1.0, 2.0], [3.0, 4.0]], [[True, True], [True, True]], 1)
    >>> bool(np.isnan(r.inf.weights[1]).all()), r.big.weights[1].tolist(), r.gap
    (True, [0.5, 0.5], 0.0)
    """
    scores = _square(scores)
    row = whole_number(row, "row", 0, scores.shape[0] - 1)
    blocked = np.array(_broadcast(mask, scores.shape))  # a copy: the caller's mask stays
    blocked[row] = False
    inf = plain_masked_softmax(scores, blocked, -np.inf)
    big = plain_masked_softmax(scores, blocked, -1e9)
    kept = ~fully_masked_rows(blocked)
    gap = float(np.max(np.abs(inf.weights[kept] - big.weights[kept]), initial=0.0))
    return FullyMaskedRow(row=row, mask=blocked, inf=inf, big=big,
                          half=plain_masked_softmax(scores, blocked, -1e9, np.float16),
                          policy=softmax(scores, mask=blocked), kept=kept, gap=gap,
                          tails=big.exps[kept][~blocked[kept]])


@dataclass(frozen=True)
class InvertedMask:
    """A "may attend" mask read as "True = masked" (:func:`read_mask`, ``"blocked"``).

    Attributes
    ----------
    allowed, hidden : int
        Cells the mask allows and cells it hides (read as meant).
    weights : ndarray (Tq, Tk)
        The softmax under the inverted reading: every weight on a cell the mask hides.
    empty : ndarray of bool (Tq,)
        Rows the inverted reading leaves with no key.
    left : float
        Largest weight on a cell the mask allows: exactly 0.
    query, key : int or None
        The first row that keeps a key and the key its largest weight goes to (None
        when no row keeps one).
    """

    allowed: int
    hidden: int
    weights: np.ndarray
    empty: np.ndarray
    left: float
    query: int | None
    key: int | None


def inverted_mask(scores, mask) -> InvertedMask:
    """The softmax of ``scores`` (Tq, Tk) with ``mask`` (True = may attend) read the
    other way, as code where True means masked reads it."""
    scores = _square(scores)
    mask = _broadcast(mask, scores.shape)
    opened = read_mask(mask, "blocked")
    weights = softmax(scores, mask=opened)
    empty = fully_masked_rows(opened)
    query = key = None
    if not empty.all():
        query = int(np.flatnonzero(~empty)[0])
        key = int(np.argmax(weights[query]))
    return InvertedMask(allowed=int(mask.sum()), hidden=int((~mask).sum()), weights=weights,
                        empty=empty, left=float(np.max(weights[mask], initial=0.0)),
                        query=query, key=key)


@dataclass(frozen=True)
class OffByOne:
    """The causal mask written as ``np.triu(ones, k)`` blocked: k = 1 (right) and k = 0.

    Attributes
    ----------
    right, wrong : ndarray (T, T)
        The softmax under the causal mask and under the one that blocks the diagonal too.
    empty : ndarray of bool (T,)
        Rows k = 0 leaves with no key: row 0 (it may see only itself).
    """

    right: np.ndarray
    wrong: np.ndarray
    empty: np.ndarray


def off_by_one(scores) -> OffByOne:
    """The weights of square ``scores`` (T, T) under ``triu(k=1)`` and ``triu(k=0)``
    read as "True = blocked" (:func:`blocked_triangle`)."""
    scores = _square(scores)
    t = scores.shape[0]
    right_mask, wrong_mask = ~blocked_triangle(t, 1), ~blocked_triangle(t, 0)
    return OffByOne(right=softmax(scores, mask=right_mask),
                    wrong=softmax(scores, mask=wrong_mask), empty=fully_masked_rows(wrong_mask))


@dataclass(frozen=True)
class WrongAxis:
    """The softmax over the queries, with its row and column sums.

    Attributes
    ----------
    weights : ndarray (Tq, Tk)
        :func:`softmax_over_queries`.
    row_sums : ndarray (Tq,)
    column_sums : ndarray (Tk,)
    live_rows, live_columns : ndarray of bool
        Rows that keep a key and columns that keep a query.
    """

    weights: np.ndarray
    row_sums: np.ndarray
    column_sums: np.ndarray
    live_rows: np.ndarray
    live_columns: np.ndarray

    @property
    def column_gap(self) -> float:
        """Largest |column sum - 1| over the columns that keep a query: rounding only."""
        return float(np.max(np.abs(self.column_sums[self.live_columns] - 1)))

    @property
    def rows_sum_to_one(self) -> bool:
        """Whether the rows that keep a key happen to sum to 1 as well (one token does)."""
        return bool(np.all(np.abs(self.row_sums[self.live_rows] - 1) <= SUMS_TO_ONE))


def wrong_axis(scores, mask) -> WrongAxis:
    """The softmax of ``scores`` (Tq, Tk) over the queries under ``mask`` (True = may
    attend), which must allow at least one cell."""
    scores = _square(scores)
    mask = _broadcast(mask, scores.shape)
    if not mask.any():
        raise ValueError("the mask allows no cell: there is nothing to normalise")
    weights = softmax_over_queries(scores, mask)
    return WrongAxis(weights=weights, row_sums=weights.sum(axis=1),
                     column_sums=weights.sum(axis=0), live_rows=mask.any(axis=1),
                     live_columns=mask.any(axis=0))


@dataclass(frozen=True)
class RandomSelfAttention:
    """Self-attention of token embeddings through random projections: what lesson 3
    masks.

    Attributes
    ----------
    w_q, w_k, w_v : ndarray (d_model, d_model)
        The projections, drawn by :func:`attncore.init.normal_weights`.
    trace : AttentionTrace
        Attention of Q = X W_Q, K = X W_K, V = X W_V under the mask.
    """

    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    trace: AttentionTrace


def random_self_attention(x, mask, rng: np.random.Generator) -> RandomSelfAttention:
    """Draw W_Q, W_K, W_V (d_model, d_model), in that order, from ``rng`` and attend
    from ``x`` (T, d_model) to itself under ``mask`` (True = may attend, or None)."""
    x = as_real_array(x, "x", min_ndim=2)
    d_model = x.shape[-1]
    w_q, w_k, w_v = (normal_weights(rng, (d_model, d_model)) for _ in range(3))
    trace = scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v, mask=mask)  # (T, T)
    return RandomSelfAttention(w_q=w_q, w_k=w_k, w_v=w_v, trace=trace)


#: The float types and fills of :func:`fills_by_type`: -1e9 in each type, and float16's
#: own lowest number, which it stores as it is.
FILLS_BY_TYPE = ((np.float64, -1e9), (np.float32, -1e9), (np.float16, -1e9),
                 (np.float16, float(np.finfo(np.float16).min)))


@dataclass(frozen=True)
class FillInType:
    """One fill in one float type, with the last row masked completely.

    Attributes
    ----------
    dtype : numpy dtype
    fill : float
        The fill as written.
    largest : float
        The type's largest finite number.
    stored : float
        The fill as the type stores it (-inf when it does not fit).
    plain : PlainSoftmax
        The plain masked softmax in that type.
    gap : float
        Largest difference from the fill -inf (in the same type) on the rows that keep
        a key, in float64.
    """

    dtype: np.dtype
    fill: float
    largest: float
    stored: float
    plain: PlainSoftmax
    gap: float


@dataclass(frozen=True)
class FillsByType:
    """:data:`FILLS_BY_TYPE` computed on one set of scores, the last row masked.

    Attributes
    ----------
    cases : tuple of FillInType
        In the order of :data:`FILLS_BY_TYPE`.
    """

    cases: tuple[FillInType, ...]

    def case(self, dtype, fill: float) -> FillInType:
        """The case of ``dtype`` and ``fill``."""
        return next(c for c in self.cases if c.dtype == np.dtype(dtype) and c.fill == fill)

    @property
    def lowest_like_double(self) -> bool:
        """Whether float16's own lowest number gives the fully masked row what -1e9 gives
        in float64, to float16's precision."""
        low = self.case(np.float16, float(np.finfo(np.float16).min)).plain.weights[-1]
        double = self.case(np.float64, -1e9).plain.weights[-1]
        return bool(np.allclose(low.astype(np.float64), double,
                                rtol=float(np.finfo(np.float16).eps)))


def fills_by_type(scores, mask) -> FillsByType:
    """The plain masked softmax of ``scores`` (T, T) under ``mask`` (True = may attend)
    with its last row masked completely, for each fill and type of :data:`FILLS_BY_TYPE`."""
    scores = _square(scores)
    blocked = np.array(_broadcast(mask, scores.shape))
    blocked[-1] = False
    kept = ~fully_masked_rows(blocked)
    cases = []
    for dtype, fill in FILLS_BY_TYPE:
        plain = plain_masked_softmax(scores, blocked, fill, dtype)
        reference = plain_masked_softmax(scores, blocked, -np.inf, dtype)
        gap = np.max(np.abs(plain.weights[kept].astype(np.float64)
                            - reference.weights[kept].astype(np.float64)), initial=0.0)
        cases.append(FillInType(dtype=np.dtype(dtype), fill=fill,
                                largest=float(np.finfo(dtype).max),
                                stored=stored_as(fill, dtype), plain=plain, gap=float(gap)))
    return FillsByType(tuple(cases))


@dataclass(frozen=True)
class DropoutSums:
    """Row sums of the weights after masking, and after masking and attention dropout.

    Attributes
    ----------
    p_drop : float
    before, after : ndarray (Tq,)
        1 for each row that keeps a key before dropout; anything after, with an
        expected value of 1.
    kept : ndarray of bool (Tq,)
        The rows that keep a key.
    """

    p_drop: float
    before: np.ndarray
    after: np.ndarray
    kept: np.ndarray

    @property
    def off(self) -> int:
        """How many rows that keep a key no longer sum to 1 after dropout."""
        return int(np.count_nonzero(np.abs(self.after[self.kept] - 1) > SUMS_TO_ONE))


def dropout_sums(q, k, v, mask, p_drop: float, rng: np.random.Generator) -> DropoutSums:
    """Masking acts before the softmax's normalisation, attention dropout after it: the
    row sums of :func:`attncore.attention.scaled_dot_product_attention` with both.

    Parameters
    ----------
    q, k, v : array_like (Tq, d_k), (Tk, d_k), (Tk, d_v)
    mask : array_like of bool (Tq, Tk); True = may attend
    p_drop : float
        Dropout probability in [0, 1).
    rng : numpy.random.Generator
        Which weights are dropped.
    """
    trace = scaled_dot_product_attention(q, k, v, mask=mask, dropout=p_drop, rng=rng)
    return DropoutSums(p_drop=float(p_drop), before=trace.weights.sum(axis=-1),
                       after=trace.dropout_weights.sum(axis=-1),
                       kept=~fully_masked_rows(np.broadcast_to(trace.mask, trace.weights.shape)))


def _square(scores) -> np.ndarray:
    """Scores (Tq, Tk) of one sentence."""
    scores = as_real_array(scores, "scores", min_ndim=2)
    if scores.ndim != 2:
        raise ValueError(f"scores must be one matrix (Tq, Tk); got shape {scores.shape}")
    return scores
