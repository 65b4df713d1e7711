r"""Writing (key, value) pairs into a memory and reading it back: the four rules.

Each rule writes n pairs :math:`(k_t, v_t)` in order and reads with m queries :math:`q_j`.
The three recurrent rules keep one matrix :math:`S` (d_v, d_k), :math:`S_0 = 0`, whatever
n is; softmax attention keeps every pair (the KV cache, n (d_k + d_v) numbers).

* softmax: :math:`\mathrm{read}_j = \sum_t \mathrm{softmax}_t(c\, q_j \cdot k_t)\, v_t`;
* linear: :math:`S_t = S_{t-1} + v_t k_t^\top`;
* delta: :math:`S_t = S_{t-1} + \beta_t (v_t - S_{t-1} k_t) k_t^\top`;
* gated delta: :math:`S_t = \alpha_t S_{t-1} + \beta_t (v_t - \alpha_t S_{t-1} k_t) k_t^\top
  = \alpha_t S_{t-1}(I - \beta_t k_t k_t^\top) + \beta_t v_t k_t^\top`;

and a recurrent rule reads :math:`\mathrm{read}_j = S_n q_j`. One write of every recurrent
rule is :math:`S_t = \alpha_t S_{t-1} + w_t k_t^\top` with what it writes along the key,
:math:`w_t = v_t` (linear) or :math:`w_t = \beta_t (v_t - r_t)` (delta, gated), where
:math:`r_t = \alpha_t S_{t-1} k_t` is what the memory said about :math:`k_t` just before
(:class:`MemoryTrace` keeps :math:`r_t` and :math:`w_t`). Keys are used as given: the
delta rule erases exactly what it overwrites only for unit keys. Vectors are rows, so
:math:`S q` is ``q @ S.T``. float64 throughout.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import as_real_array, positive_number, require_finite, whole_number
from ..softmax import softmax

RULES = ("softmax", "linear", "delta", "gated_delta")
RECURRENT_RULES = RULES[1:]
#: The settings each rule has: β the write strength of both delta rules, α the decay of
#: gated delta only (the delta rule keeps its state whole, α = 1).
RATES = {"softmax": (), "linear": (), "delta": ("beta",), "gated_delta": ("beta", "alpha")}


def rule_rates(rule: str, beta, alpha):
    """The (β, α) that ``rule`` writes with: the given ones for the settings it has
    (:data:`RATES`), 1 for those it has not (so the delta rule ignores α)."""
    if rule not in RATES:
        raise ValueError(f"rule must be one of {RULES}; got {rule!r}")
    has = RATES[rule]
    return (beta if "beta" in has else 1.0), (alpha if "alpha" in has else 1.0)


# --- Checks ---------------------------------------------------------------------------

def _matrix(x, name: str, expected: str) -> np.ndarray:
    arr = as_real_array(x, name)
    if arr.ndim != 2:
        raise ValueError(f"{name} must have shape {expected}; got shape {arr.shape}")
    return arr


def check_pairs(keys, values, queries=None):
    """``keys`` (n, d_k), ``values`` (n, d_v) and ``queries`` (m, d_k) as float64 arrays,
    or ValueError naming the argument, the shape received and the shape expected."""
    keys = _matrix(keys, "keys", "(n, d_k)")
    n, d_k = keys.shape
    values = _matrix(values, "values", f"(n, d_v) with n = {n} (one row per key)")
    if values.shape[0] != n:
        raise ValueError(f"values must have shape (n, d_v) with n = {n} (one row per key); "
                         f"got shape {values.shape}")
    if queries is None:
        return keys, values, None
    queries = _matrix(queries, "queries", f"(m, d_k) with d_k = {d_k} (as keys)")
    if queries.shape[1] != d_k:
        raise ValueError(f"queries must have shape (m, d_k) with d_k = {d_k} (as keys); "
                         f"got shape {queries.shape}")
    return keys, values, queries


def check_rate(x, name: str, n: int) -> np.ndarray:
    """``beta`` or ``alpha``: a number or one per write, each in [0, 1]; returned (n,)."""
    arr = as_real_array(x, name)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    elif arr.shape != (n,):
        raise ValueError(f"{name} must be a number or have shape (n,) = ({n},), one per "
                         f"write; got shape {arr.shape}")
    outside = np.flatnonzero((arr < 0) | (arr > 1))
    if outside.size:
        t = int(outside[0])
        raise ValueError(f"{name} must lie in [0, 1]; got {float(arr[t]):g} at write {t}")
    return arr


# --- The recurrence, vectorised over any leading axes -----------------------------------

def write_pairs(keys, values, alpha, beta, correct: bool):
    """Run the recurrence with no checks; leading axes (seeds, say) are kept apart.

    keys (..., n, d_k), values (..., n, d_v), alpha and beta (..., n); ``correct`` False
    is the linear rule (:math:`w_t = v_t`, alpha and beta unused). Returns states
    (..., n, d_v, d_k), retrieved (..., n, d_v) and written (..., n, d_v).
    """
    *lead, n, d_k = keys.shape
    d_v = values.shape[-1]
    S = np.zeros((*lead, d_v, d_k))
    states = np.empty((*lead, n, d_v, d_k))
    retrieved = np.empty((*lead, n, d_v))
    written = np.empty((*lead, n, d_v))
    for t in range(n):
        k = keys[..., t, :]  # (..., d_k)
        if correct:
            S = alpha[..., t, None, None] * S
        r = (S @ k[..., :, None])[..., 0]  # (..., d_v, d_k) x (..., d_k, 1) -> (..., d_v)
        w = beta[..., t, None] * (values[..., t, :] - r) if correct else values[..., t, :]
        S = S + w[..., :, None] * k[..., None, :]  # w kᵀ: (..., d_v, d_k)
        states[..., t, :, :], retrieved[..., t, :], written[..., t, :] = S, r, w
    return states, retrieved, written


# --- Results ----------------------------------------------------------------------------

@dataclass(frozen=True)
class MemoryTrace:
    """A recurrent rule's writes and reads, every state kept.

    Attributes
    ----------
    rule : str
        "linear", "delta" or "gated_delta".
    keys, values, queries : ndarray
        (n, d_k), (n, d_v), (m, d_k), as given.
    alpha, beta : ndarray (n,)
        The decay and write strength of each write (1 where the rule has none).
    states : ndarray (n, d_v, d_k)
        :math:`S_t` after write t (``states[-1]`` is :math:`S_n`).
    retrieved : ndarray (n, d_v)
        :math:`r_t = \\alpha_t S_{t-1} k_t`, what the memory said about key t just before
        writing it.
    written : ndarray (n, d_v)
        :math:`w_t` with :math:`S_t = \\alpha_t S_{t-1} + w_t k_t^\\top`.
    reads : ndarray (m, d_v)
        :math:`S_n q_j`.
    """

    rule: str
    keys: np.ndarray
    values: np.ndarray
    queries: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    states: np.ndarray
    retrieved: np.ndarray
    written: np.ndarray
    reads: np.ndarray

    @property
    def state(self) -> np.ndarray:
        """:math:`S_n` (d_v, d_k)."""
        return self.states[-1]

    @property
    def state_numbers(self) -> int:
        """d_v · d_k, whatever the number of pairs."""
        return int(self.states[-1].size)


@dataclass(frozen=True)
class SoftmaxMemory:
    """Softmax attention over every stored pair.

    keys (n, d_k), values (n, d_v), queries (m, d_k); scale the multiplier c of the scores;
    scores (m, n) :math:`c\\, q_j \\cdot k_t`; weights (m, n), rows summing to 1;
    reads (m, d_v) = weights @ values.
    """

    keys: np.ndarray
    values: np.ndarray
    queries: np.ndarray
    scale: float
    scores: np.ndarray
    weights: np.ndarray
    reads: np.ndarray
    rule: str = "softmax"

    @property
    def state_numbers(self) -> int:
        """n (d_k + d_v): the cache grows with every pair."""
        return int(self.keys.size + self.values.size)


# --- The four rules ---------------------------------------------------------------------

def softmax_memory(keys, values, queries, scale=None) -> SoftmaxMemory:
    r"""Read every stored pair with softmax attention.

    Parameters
    ----------
    keys, values, queries : array_like (n, d_k), (n, d_v), (m, d_k)
    scale : float, optional
        c > 0; 1/√d_k by default.

    Returns
    -------
    SoftmaxMemory
        ``reads`` (m, d_v): each a convex combination of the values.

    Notes
    -----
    .. math:: \mathrm{read}_j = \sum_t \mathrm{softmax}_t(c\, q_j \cdot k_t)\, v_t

    Examples
    --------
    >>> softmax_memory([[1.0, 0.0]], [[2.0]], [[0.0, 1.0]]).reads.tolist()
    [[2.0]]
    """
    keys, values, queries = check_pairs(keys, values, queries)
    scale = 1.0 / np.sqrt(keys.shape[1]) if scale is None else positive_number(scale, "scale")
    scores = require_finite(scale * (queries @ keys.T), "scale · q·k")  # (m, d_k) x (d_k, n)
    weights = softmax(scores, axis=-1)  # (m, n)
    return SoftmaxMemory(keys, values, queries, scale, scores, weights, weights @ values)


def _recurrent(rule: str, keys, values, queries, alpha, beta) -> MemoryTrace:
    keys, values, queries = check_pairs(keys, values, queries)
    n = keys.shape[0]
    beta, alpha = check_rate(beta, "beta", n), check_rate(alpha, "alpha", n)
    states, retrieved, written = write_pairs(keys, values, alpha, beta, rule != "linear")
    require_finite(states, f"the {rule} rule's state")
    reads = queries @ states[-1].T  # (m, d_k) x (d_k, d_v) -> (m, d_v)
    return MemoryTrace(rule, keys, values, queries, alpha, beta, states, retrieved,
                       written, reads)


def linear_memory(keys, values, queries) -> MemoryTrace:
    r"""Linear attention: add every pair's outer product into one state.

    Parameters
    ----------
    keys, values, queries : array_like (n, d_k), (n, d_v), (m, d_k)

    Returns
    -------
    MemoryTrace
        ``states`` (n, d_v, d_k), ``reads`` (m, d_v).

    Notes
    -----
    .. math:: S_t = S_{t-1} + v_t k_t^\top, \qquad
              \mathrm{read}_j = S_n q_j = \sum_t (k_t \cdot q_j)\, v_t

    so every stored value leaks into a read in proportion to its key's overlap with the
    query (:func:`crosstalk`).

    Examples
    --------
    >>> linear_memory([[1.0, 0.0], [1.0, 0.0]], [[1.0], [2.0]], [[1.0, 0.0]]).reads.tolist()
    [[3.0]]
    """
    return _recurrent("linear", keys, values, queries, 1.0, 1.0)


def delta_memory(keys, values, queries, beta=1.0) -> MemoryTrace:
    r"""The delta rule: write the error of what the state says about each key.

    Parameters
    ----------
    keys, values, queries : array_like (n, d_k), (n, d_v), (m, d_k)
    beta : float or array_like (n,)
        Write strength of each write, in [0, 1].

    Returns
    -------
    MemoryTrace

    Notes
    -----
    .. math:: S_t = S_{t-1} + \beta_t (v_t - S_{t-1} k_t)\, k_t^\top

    With a unit key and β = 1, :math:`S_t k_t = v_t`: the new value replaces the old.

    Examples
    --------
    >>> delta_memory([[1.0, 0.0], [1.0, 0.0]], [[1.0], [2.0]], [[1.0, 0.0]]).reads.tolist()
    [[2.0]]
    """
    return _recurrent("delta", keys, values, queries, 1.0, beta)


def gated_delta_memory(keys, values, queries, beta=1.0, alpha=1.0) -> MemoryTrace:
    r"""Gated delta: decay the state by α, then write as the delta rule.

    Parameters
    ----------
    keys, values, queries : array_like (n, d_k), (n, d_v), (m, d_k)
    beta : float or array_like (n,)
        Write strength, in [0, 1].
    alpha : float or array_like (n,)
        What is kept of the state at each write, in [0, 1] (0 forgets everything).

    Returns
    -------
    MemoryTrace

    Notes
    -----
    .. math:: S_t = \alpha_t S_{t-1} + \beta_t (v_t - \alpha_t S_{t-1} k_t)\, k_t^\top
              = \alpha_t S_{t-1} (I - \beta_t k_t k_t^\top) + \beta_t v_t k_t^\top

    Examples
    --------
    >>> gated_delta_memory([[1.0, 0.0], [0.0, 1.0]], [[1.0], [2.0]], [[1.0, 0.0]],
    ...                    alpha=0.5).reads.tolist()
    [[0.5]]
    """
    return _recurrent("gated_delta", keys, values, queries, alpha, beta)


def write_and_read(rule: str, keys, values, queries, beta=1.0, alpha=1.0, scale=None):
    """Any rule by name (:data:`RULES`); each takes the settings it has (linear neither
    β nor α, delta β, gated delta both, softmax the scale) and ignores the others."""
    if rule == "softmax":
        return softmax_memory(keys, values, queries, scale)
    if rule == "linear":
        return linear_memory(keys, values, queries)
    if rule == "delta":
        return delta_memory(keys, values, queries, beta)
    if rule == "gated_delta":
        return gated_delta_memory(keys, values, queries, beta, alpha)
    raise ValueError(f"rule must be one of {RULES}; got {rule!r}")


# --- What a linear-attention read is made of -----------------------------------------------

@dataclass(frozen=True)
class Crosstalk:
    """One linear-attention read split into the wanted pair's term and the others' leak.

    query, wanted: the indexes j and t; similarities (n,) :math:`k_s \\cdot q_j`; terms
    (n, d_v) :math:`(k_s \\cdot q_j) v_s`; signal (d_v,) the wanted term; leak (d_v,) the
    sum of the others; read (d_v,) = signal + leak (to rounding).
    """

    query: int
    wanted: int
    similarities: np.ndarray
    terms: np.ndarray
    signal: np.ndarray
    leak: np.ndarray
    read: np.ndarray

    @property
    def leak_ratio(self) -> float:
        """‖leak‖ / ‖signal‖ (inf when the signal is 0)."""
        signal = float(np.linalg.norm(self.signal))
        leak = float(np.linalg.norm(self.leak))
        return leak / signal if signal > 0 else (0.0 if leak == 0 else float("inf"))


def crosstalk(trace: MemoryTrace, query: int = 0, wanted: int | None = None) -> Crosstalk:
    r"""Split read ``query`` of a linear-attention trace as
    :math:`\mathrm{read}_j = (k_t \cdot q_j) v_t + \sum_{s \ne t} (k_s \cdot q_j) v_s`.

    ``wanted`` is the stored pair t the query asks for; by default the key most similar
    to the query (the last such key on a tie).
    """
    if getattr(trace, "rule", None) != "linear":
        raise ValueError("crosstalk splits a read of linear attention (a MemoryTrace of "
                         f"rule 'linear'); got rule {getattr(trace, 'rule', None)!r}")
    n, m = trace.keys.shape[0], trace.queries.shape[0]
    j = whole_number(query, "query", 0, m - 1)
    similarities = trace.keys @ trace.queries[j]  # (n, d_k) x (d_k,) -> (n,)
    if wanted is None:
        wanted = int(n - 1 - np.argmax(similarities[::-1]))
    t = whole_number(wanted, "wanted", 0, n - 1)
    terms = similarities[:, None] * trace.values  # (n, d_v)
    leak = np.delete(terms, t, axis=0).sum(axis=0)  # (d_v,)
    return Crosstalk(j, t, similarities, terms, terms[t], leak, trace.reads[j])
