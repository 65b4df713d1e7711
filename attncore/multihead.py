r"""Multi-head attention: H heads, each with its own slice of W_Q, W_K, W_V.

.. math:: \mathrm{head}_h = \mathrm{softmax}\!\left(\frac{(X W_Q^h)(X W_K^h)^\top}
          {\sqrt{d_k}}\right) X W_V^h, \qquad
          \mathrm{MHA}(X) = [\mathrm{head}_1, \dots, \mathrm{head}_H]\, W_O

with :math:`W_Q^h = W_Q[:, h d_k:(h+1) d_k]` and :math:`d_k = d_v = d_{model} / H`. That
width is this implementation's convention (and the original Transformer's), not a law:
:math:`W_O \in \mathbb{R}^{H d_v \times d_{model}}` would take other widths. All heads
are computed at once by reshaping (no Python loop over heads).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import as_real_array, whole_number
from .attention import AttentionTrace, scaled_dot_product_attention
from .init import normal_weights


def check_heads(d_model: int, n_heads: int) -> int:
    """d_k = d_model / H, or ValueError when H does not divide d_model."""
    d_model = whole_number(d_model, "d_model", 1)
    n_heads = whole_number(n_heads, "n_heads", 1)
    if d_model % n_heads:
        raise ValueError(
            f"n_heads = {n_heads} does not divide d_model = {d_model}; this implementation "
            f"gives each head d_k = d_model / H whole dimensions (choose one of "
            f"{divisors(d_model)})"
        )
    return d_model // n_heads


def divisors(n: int) -> list[int]:
    """Head counts allowed for d_model = n."""
    return [h for h in range(1, n + 1) if n % h == 0]


def head_counts(d_model: int, *, designed: bool = False) -> list[int]:
    """The head counts H that work at this d_model, in increasing order.

    Random heads take any divisor of d_model. Designed heads (:func:`designed_params`)
    also need d_k = d_model / H >= 2 and d_model >= 5 (see :func:`_check_designed`), so
    the list can be empty for them.
    """
    d_model = whole_number(d_model, "d_model", 1)
    allowed = divisors(d_model)
    return [h for h in allowed if _designed_problem(d_model, h) is None] if designed else allowed


@dataclass(frozen=True)
class MultiHeadParams:
    """The four projection matrices of one multi-head attention layer.

    Attributes
    ----------
    w_q, w_k, w_v, w_o : ndarray (d_model, d_model)
    n_heads : int
        H; must divide d_model.
    """

    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray
    n_heads: int

    def __post_init__(self):
        shape = np.shape(self.w_q)
        if len(shape) != 2 or shape[0] != shape[1]:
            raise ValueError(f"W_Q must be square (d_model, d_model); got {shape}")
        for name in ("w_k", "w_v", "w_o"):
            if np.shape(getattr(self, name)) != shape:
                raise ValueError(f"{name.upper()} must have shape {shape} like W_Q; got "
                                 f"{np.shape(getattr(self, name))}")
        check_heads(shape[0], self.n_heads)

    @property
    def d_model(self) -> int:
        return self.w_q.shape[0]

    @property
    def d_k(self) -> int:
        return self.d_model // self.n_heads

    @property
    def n_parameters(self) -> int:
        """4 · d_model², whatever the number of heads."""
        return sum(w.size for w in (self.w_q, self.w_k, self.w_v, self.w_o))

    def head_weights(self, h: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Head h's own W_Qʰ, W_Kʰ, W_Vʰ: columns h·d_k to (h+1)·d_k, each (d_model, d_k)."""
        if not 0 <= h < self.n_heads:
            raise ValueError(f"head must lie in 0..{self.n_heads - 1}; got {h}")
        cols = slice(h * self.d_k, (h + 1) * self.d_k)
        return self.w_q[:, cols], self.w_k[:, cols], self.w_v[:, cols]


def init_params(d_model: int, n_heads: int, rng: np.random.Generator) -> MultiHeadParams:
    """Random projections with entries N(0, 1/d_model) (so X W keeps the scale of X)."""
    check_heads(d_model, n_heads)
    w = [normal_weights(rng, (d_model, d_model)) for _ in range(4)]
    return MultiHeadParams(*w, n_heads=n_heads)


def split_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    """(..., T, d_model) -> (..., H, T, d_k): head h gets columns h·d_k .. (h+1)·d_k."""
    *batch, T, d_model = x.shape
    d_k = check_heads(d_model, n_heads)
    return np.moveaxis(x.reshape(*batch, T, n_heads, d_k), -2, -3)  # (..., H, T, d_k)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """(..., H, T, d_k) -> (..., T, H·d_k): the concatenation of the heads."""
    *batch, H, T, d_k = x.shape
    return np.moveaxis(x, -3, -2).reshape(*batch, T, H * d_k)  # (..., T, H·d_k)


@dataclass(frozen=True)
class MultiHeadTrace:
    """Every intermediate of multi-head attention.

    Attributes
    ----------
    params : MultiHeadParams
    heads : AttentionTrace
        Per-head attention: q, k (..., H, T, d_k), v, weights (..., H, Tq, Tk),
        output = the head outputs (..., H, Tq, d_k).
    concat : ndarray (..., Tq, d_model)
        The head outputs side by side.
    output : ndarray (..., Tq, d_model)
        ``concat @ W_O``.
    """

    params: MultiHeadParams
    heads: AttentionTrace
    concat: np.ndarray
    output: np.ndarray

    @property
    def weights(self) -> np.ndarray:
        """Per-head weights (..., H, Tq, Tk)."""
        return self.heads.weights


def multi_head_attention(x_q, params: MultiHeadParams, x_kv=None, *, mask=None,
                         scale="sqrt_dk") -> MultiHeadTrace:
    """Multi-head attention, vectorised over heads.

    Parameters
    ----------
    x_q : array_like (..., Tq, d_model)
        The sequence that asks (queries).
    params : MultiHeadParams
    x_kv : array_like (..., Tk, d_model), optional
        The sequence attended to (keys and values). None: self-attention (x_kv = x_q);
        another sequence: cross-attention, with a rectangular Tq × Tk map.
    mask : array_like of bool, optional
        Broadcastable to (..., H, Tq, Tk); True means "may attend".
    """
    x_q = as_real_array(x_q, "X", min_ndim=2)
    x_kv = x_q if x_kv is None else as_real_array(x_kv, "X (keys and values)", min_ndim=2)
    for name, x in (("X", x_q), ("X (keys and values)", x_kv)):
        if x.shape[-1] != params.d_model:
            raise ValueError(f"{name} must have d_model = {params.d_model} columns; got "
                             f"shape {x.shape}")
    H = params.n_heads
    q = split_heads(x_q @ params.w_q, H)  # (..., Tq, d_model) -> (..., H, Tq, d_k)
    k = split_heads(x_kv @ params.w_k, H)  # (..., H, Tk, d_k)
    v = split_heads(x_kv @ params.w_v, H)  # (..., H, Tk, d_k)
    heads = scaled_dot_product_attention(q, k, v, mask=mask, scale=scale)
    concat = merge_heads(heads.output)  # (..., H, Tq, d_k) -> (..., Tq, d_model)
    return MultiHeadTrace(params, heads, concat, concat @ params.w_o)


@dataclass(frozen=True)
class HeadSlice:
    """One head's own part of a layer, and the check that it is the head's part of Q.

    Attributes
    ----------
    head : int
        h, counted from 0.
    first, last : int
        The first and last columns of W_Q, W_K and W_V the head owns, counted from 1
        (h·d_k + 1 to (h + 1)·d_k).
    w_q, w_k, w_v : ndarray (d_model, d_k)
        W_Qʰ, W_Kʰ, W_Vʰ.
    query_difference : float
        The largest |X W_Qʰ − Qʰ|, Qʰ the head's queries in the trace: 0, or rounding.
    """

    head: int
    first: int
    last: int
    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    query_difference: float


def head_slice(x, trace: MultiHeadTrace, h: int) -> HeadSlice:
    """Head ``h``'s slices of W_Q, W_K, W_V in ``trace`` (of self-attention on ``x``), and
    how far X W_Qʰ computed on its own lies from that head's queries.

    Examples
    --------
    >>> x = np.eye(4)
    >>> layer = multi_head_attention(x, init_params(4, 2, np.random.default_rng(0)))
    >>> part = head_slice(x, layer, 1)
    >>> (part.first, part.last, part.w_q.shape, part.query_difference)
    (3, 4, (4, 2), 0.0)
    """
    x = as_real_array(x, "X", min_ndim=2)
    params = trace.params
    w_q, w_k, w_v = params.head_weights(h)
    d_k = params.d_k
    difference = float(np.max(np.abs(x @ w_q - trace.heads.q[..., h, :, :])))
    return HeadSlice(h, h * d_k + 1, (h + 1) * d_k, w_q, w_k, w_v, difference)


# ---- Designed heads ------------------------------------------------------------------

DESIGNED_PATTERNS = ("previous", "self", "first", "same word")
_SHARPNESS = 12.0  # score gap that makes each designed head nearly one-hot


def designed_input(tokens, d_model: int, n_heads: int, *, max_len: int = 64,
                   seed: int = 0) -> np.ndarray:
    """Token features for designed heads: [1, cos pθ, sin pθ, word code, 0 ...].

    The position p enters as an angle pθ with θ = π / max_len (so positions never
    alias), and each distinct word (case-insensitive) gets a fixed random unit vector
    of m = min(d_k, d_model - 3) dimensions.

    Returns
    -------
    ndarray (T, d_model)
    """
    d_k = _check_designed(d_model, n_heads)
    T = len(tokens)
    if not 1 <= T <= max_len:
        raise ValueError(f"designed heads take 1 to {max_len} tokens; got {T}")
    m = min(d_k, d_model - 3)
    theta = np.pi / max_len
    pos = np.arange(T) * theta
    x = np.zeros((T, d_model))
    x[:, 0] = 1.0
    x[:, 1], x[:, 2] = np.cos(pos), np.sin(pos)
    vocab = sorted({t.lower() for t in tokens})
    codes = np.random.default_rng(seed).standard_normal((len(vocab), m))
    codes /= np.linalg.norm(codes, axis=1, keepdims=True)
    index = {w: i for i, w in enumerate(vocab)}
    x[:, 3:3 + m] = codes[[index[t.lower()] for t in tokens]]
    return x


def designed_params(d_model: int, n_heads: int, rng: np.random.Generator, *,
                    max_len: int = 64) -> MultiHeadParams:
    """Projections whose head h attends by ``DESIGNED_PATTERNS[h % 4]``, on the features
    of :func:`designed_input`.

    * previous: q_i = c·(cos iθ, sin iθ), k_j = c·(cos (j+1)θ, sin (j+1)θ), so
      q_i·k_j = c² cos((j + 1 - i)θ), largest at j = i - 1;
    * self: k_j = c·(cos jθ, sin jθ): largest at j = i;
    * first: q_i = c·(1, 0) from the constant feature, k_j = c·(cos jθ, sin jθ):
      largest at j = 0;
    * same word: q_i = k_i = c·(word code): largest where the words are equal.

    W_V and W_O are random (N(0, 1/d_model)): the patterns live in W_Q and W_K.
    """
    d_k = _check_designed(d_model, n_heads)
    m = min(d_k, d_model - 3)
    theta = np.pi / max_len
    c = np.sqrt(_SHARPNESS * np.sqrt(d_k) / (1 - np.cos(theta)))  # gap c²(1-cos θ)/√d_k
    rot = np.array([[np.cos(theta), np.sin(theta)], [-np.sin(theta), np.cos(theta)]])
    w_q = np.zeros((d_model, d_model))
    w_k = np.zeros((d_model, d_model))
    for h in range(n_heads):
        o = h * d_k  # the head's first column
        pattern = DESIGNED_PATTERNS[h % len(DESIGNED_PATTERNS)]
        if pattern == "previous":
            w_q[1:3, o:o + 2] = c * np.eye(2)
            w_k[1:3, o:o + 2] = c * rot  # (cos jθ, sin jθ) @ rot = (cos (j+1)θ, sin (j+1)θ)
        elif pattern == "self":
            w_q[1:3, o:o + 2] = c * np.eye(2)
            w_k[1:3, o:o + 2] = c * np.eye(2)
        elif pattern == "first":
            w_q[0, o] = c
            w_k[1:3, o:o + 2] = c * np.eye(2)
        else:
            # Unit word codes: q·k = c_w² cos(angle), c_w² at equal words.
            c_w = np.sqrt(_SHARPNESS * np.sqrt(d_k))
            w_q[3:3 + m, o:o + m] = c_w * np.eye(m)
            w_k[3:3 + m, o:o + m] = c_w * np.eye(m)
    w_v, w_o = (normal_weights(rng, (d_model, d_model)) for _ in range(2))
    return MultiHeadParams(w_q, w_k, w_v, w_o, n_heads)


def head_patterns(n_heads: int) -> list[str]:
    """The pattern of each designed head, as :func:`designed_params` assigns them."""
    return [DESIGNED_PATTERNS[h % len(DESIGNED_PATTERNS)] for h in range(n_heads)]


def _designed_problem(d_model: int, n_heads: int) -> str | None:
    """Why designed heads cannot be built with a valid (d_model, H), or None if they can."""
    d_k = d_model // n_heads
    if d_model < 5 or d_k < 2:
        return (f"designed heads need d_model >= 5 and d_k = d_model / H >= 2 (a position is "
                f"an angle, two numbers); got d_model = {d_model}, H = {n_heads}, d_k = {d_k}")
    return None


def _check_designed(d_model: int, n_heads: int) -> int:
    d_k = check_heads(d_model, n_heads)
    problem = _designed_problem(d_model, n_heads)
    if problem:
        raise ValueError(problem)
    return d_k


def pattern_holds(w, pattern: str, tokens) -> bool:
    """True when every row of one head's weights has its largest weight where ``pattern``
    says: the previous token (from the second row on), the token itself, the first token,
    or a token equal to it ("same word").

    Parameters
    ----------
    w : array_like (T, T)
        One head's weights, rows are queries.
    pattern : str
        One of :data:`DESIGNED_PATTERNS`.
    tokens : sequence of str (T,)
    """
    w = as_real_array(w, "weights", min_ndim=2)
    top = w.argmax(axis=-1)  # (T,): the key each query attends to most
    rows = np.arange(top.shape[-1])
    if pattern == "previous":
        return bool(np.all(top[1:] == rows[1:] - 1))
    if pattern == "self":
        return bool(np.all(top == rows))
    if pattern == "first":
        return bool(np.all(top == 0))
    if pattern == "same word":
        return bool(np.all(words_equal(tokens)[rows, top]))
    raise ValueError(f"pattern must be one of {DESIGNED_PATTERNS}; got {pattern!r}")


def words_equal(tokens) -> np.ndarray:
    """(T, T) bool: token i and token j are the same word (case-insensitive)."""
    low = [t.lower() for t in tokens]
    return np.array([[a == b for b in low] for a in low], dtype=bool)

