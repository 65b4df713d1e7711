r"""Experiments with stored pairs: how many a memory gives back, and a key written twice.

:func:`recall_curve` stores n random pairs (unit keys in d_k dimensions, unit values) and
reads every stored key back: a read is *recalled* when, of the n stored values, the right
one is nearest to it in cosine. Softmax attention keeps every pair and recalls them all
(with a large enough scale); a d_v × d_k state holds about d_k pairs without crosstalk,
and past that the reads blur.

:func:`write_twice` writes one key twice, with an old and a new value: linear attention
reads the sum, the delta rule (β = 1) the new value, gated delta also fades every older
pair by α at each later write.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import as_real_array, positive_number, whole_number
from ..softmax import softmax
from .rules import RULES, MemoryTrace, SoftmaxMemory, rule_rates, write_and_read, write_pairs

PAIR_COUNTS = (4, 16, 64, 256)
SEEDS = (0, 1, 2, 3, 4)
#: The softmax rule's scale for unit keys: a stored key scores 8 against itself and
#: 8 cos θ against another (1/√d_k would leave the weights nearly uniform).
SOFTMAX_SCALE = 8.0
MAX_PAIRS = 4096
MAX_DIM = 512


def unit_rows(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Random unit vectors along the last axis (uniform on the sphere)."""
    x = rng.standard_normal(shape)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def random_pairs(seed: int, n: int, d_k: int, d_v: int) -> tuple[np.ndarray, np.ndarray]:
    """n unit keys (n, d_k) and n unit values (n, d_v), the same for every rule."""
    rng = np.random.default_rng([seed, n])
    return unit_rows(rng, (n, d_k)), unit_rows(rng, (n, d_v))


def counts_and_seeds(pair_counts, seeds) -> tuple[np.ndarray, np.ndarray]:
    """The numbers of pairs to store (each 1..MAX_PAIRS) and the seeds of their draws, as
    arrays, at least one of each; ValueError otherwise."""
    counts = np.array([whole_number(n, "each pair count", 1, MAX_PAIRS) for n in pair_counts])
    seed_list = np.array([whole_number(s, "each seed", 0, 2**32 - 1) for s in seeds])
    if counts.size == 0 or seed_list.size == 0:
        raise ValueError("pair_counts and seeds need at least one entry each")
    return counts, seed_list


def _rate(x, name: str) -> float:
    arr = as_real_array(x, name)
    if arr.ndim != 0 or not 0.0 <= float(arr) <= 1.0:
        raise ValueError(f"{name} must be one number in [0, 1]; got {x!r}")
    return float(arr)


def _rule(rule: str) -> str:
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}; got {rule!r}")
    return rule


def _read_back(rule, keys, values, beta, alpha, scale) -> np.ndarray:
    """Write (s, n) pairs per seed and read each stored key: reads (s, n, d_v). ``beta``
    and ``alpha`` are the ones the rule has (:func:`attncore.memory.rules.rule_rates`)."""
    if rule == "softmax":
        scores = scale * (keys @ keys.transpose(0, 2, 1))  # (s, n, d_k) x (s, d_k, n)
        return softmax(scores, axis=-1) @ values  # (s, n, n) x (s, n, d_v) -> (s, n, d_v)
    rates = np.ones(keys.shape[:2])
    states, _, _ = write_pairs(keys, values, alpha * rates, beta * rates, rule != "linear")
    return keys @ states[:, -1].transpose(0, 2, 1)  # (s, n, d_k) x (s, d_k, d_v)


@dataclass(frozen=True)
class RecallCurve:
    """Recall against the number of stored pairs, one row per seed.

    pair_counts (c,), seeds (s,); recall (s, c) the share of stored keys whose read is
    nearest (cosine) to the right value; cosine (s, c) the mean cosine of a read with the
    right value (0 for a read of zeros); state_numbers (c,) what the memory holds: d_v d_k
    for a recurrent rule, n (d_k + d_v) for softmax; beta and alpha the rates the rule
    wrote with (1 for a setting it has not: the delta rule's alpha is 1).
    """

    rule: str
    d_k: int
    d_v: int
    beta: float
    alpha: float
    scale: float
    pair_counts: np.ndarray
    seeds: np.ndarray
    recall: np.ndarray
    cosine: np.ndarray
    state_numbers: np.ndarray

    @property
    def mean_recall(self) -> np.ndarray:
        """(c,) recall averaged over the seeds."""
        return self.recall.mean(axis=0)

    @property
    def mean_cosine(self) -> np.ndarray:
        """(c,) cosine averaged over the seeds."""
        return self.cosine.mean(axis=0)


def recall_curve(d_k: int = 16, pair_counts=PAIR_COUNTS, seeds=SEEDS, rule: str = "linear",
                 beta=1.0, alpha=1.0, scale=SOFTMAX_SCALE, d_v: int | None = None
                 ) -> RecallCurve:
    r"""Store n random pairs for each n of ``pair_counts`` and read every key back.

    Parameters
    ----------
    d_k : int
        Key width.
    pair_counts : sequence of int
        The numbers of stored pairs n.
    seeds : sequence of int
        One draw of pairs per seed (and count), the same draw for every rule.
    rule : str
        One of :data:`attncore.memory.rules.RULES`.
    beta, alpha : float
        The delta rules' write strength and gated delta's decay, each in [0, 1]; a rule
        ignores the ones it has not (the delta rule writes with α = 1 whatever ``alpha``).
    scale : float
        The softmax rule's scale (:data:`SOFTMAX_SCALE`).
    d_v : int, optional
        Value width (d_k by default).

    Returns
    -------
    RecallCurve
        recall and cosine (seeds, counts), each in [0, 1] for recall, [-1, 1] for cosine;
        ``beta`` and ``alpha`` the ones the rule wrote with (1 for a setting it has not).

    Notes
    -----
    Read j is recalled when :math:`\arg\max_t \cos(\mathrm{read}_j, v_t) = j`. For linear
    attention :math:`\mathrm{read}_j = v_j + \sum_{t \ne j} (k_t \cdot k_j) v_t`; with
    random unit keys each overlap has variance 1/d_k, so the leak grows like
    :math:`\sqrt{n / d_k}`.
    """
    d_k = whole_number(d_k, "d_k", 1, MAX_DIM)
    d_v = d_k if d_v is None else whole_number(d_v, "d_v", 1, MAX_DIM)
    counts, seed_list = counts_and_seeds(pair_counts, seeds)
    rule = _rule(rule)
    beta, alpha = rule_rates(rule, _rate(beta, "beta"), _rate(alpha, "alpha"))
    scale = positive_number(scale, "scale")
    recall = np.zeros((seed_list.size, counts.size))
    cosine = np.zeros_like(recall)
    for c, n in enumerate(counts):
        pairs = [random_pairs(int(s), int(n), d_k, d_v) for s in seed_list]
        keys = np.stack([k for k, _ in pairs])  # (s, n, d_k)
        values = np.stack([v for _, v in pairs])  # (s, n, d_v)
        reads = _read_back(rule, keys, values, beta, alpha, scale)  # (s, n, d_v)
        norms = np.linalg.norm(reads, axis=-1, keepdims=True)
        unit = np.divide(reads, norms, out=np.zeros_like(reads), where=norms > 0)
        cos = unit @ values.transpose(0, 2, 1)  # (s, n, d_v) x (s, d_v, n) -> (s, n, n)
        right = np.diagonal(cos, axis1=1, axis2=2)  # (s, n)
        hit = (np.argmax(cos, axis=-1) == np.arange(n)) & (norms[..., 0] > 0)
        recall[:, c], cosine[:, c] = hit.mean(axis=1), right.mean(axis=1)
    numbers = counts * (d_k + d_v) if rule == "softmax" else np.full(counts.size, d_v * d_k)
    return RecallCurve(rule, d_k, d_v, beta, alpha, scale, counts, seed_list, recall,
                       cosine, numbers)


@dataclass(frozen=True)
class WriteTwice:
    """One key written twice, after a pair with another key.

    memory: the rule's result for the writes (k_other, v_other), (k, v_old), (k, v_new)
    (orthonormal keys, unit values) read with the queries (k, k_other); coefficients
    (2, 3): row 0 the read at k, row 1 the read at k_other, each written as a combination
    of the columns (v_other, v_old, v_new) (exact: every read is one).
    """

    rule: str
    memory: MemoryTrace | SoftmaxMemory
    coefficients: np.ndarray

    @property
    def at_twice(self) -> np.ndarray:
        """(3,) the read at the key written twice, on (v_other, v_old, v_new)."""
        return self.coefficients[0]

    @property
    def at_other(self) -> np.ndarray:
        """(3,) the read at the other key, on (v_other, v_old, v_new)."""
        return self.coefficients[1]


def write_twice(rule: str, d_k: int = 8, d_v: int | None = None, beta=1.0, alpha=1.0,
                scale=SOFTMAX_SCALE, seed: int = 0) -> WriteTwice:
    r"""Write (k_other, v_other), then key k with v_old and again with v_new, and read.

    Parameters
    ----------
    rule : str
        One of :data:`attncore.memory.rules.RULES`.
    d_k : int
        Key width, at least 2 (two orthonormal keys).
    d_v : int, optional
        Value width, at least 3 (three independent values); d_k by default.
    beta, alpha : float
        Write strength and decay, each in [0, 1], the same at every write.
    scale : float
        The softmax rule's scale.
    seed : int

    Returns
    -------
    WriteTwice

    Notes
    -----
    With orthonormal keys the reads are, on (v_other, v_old, v_new):

    * linear: at k (0, 1, 1), the sum; at k_other (1, 0, 0);
    * delta: at k (0, β(1 − β), β), the new value at β = 1; at k_other (β, 0, 0);
    * gated delta: at k (0, αβ(1 − β), β); at k_other (α²β, 0, 0), faded by α at each of
      the two later writes;
    * softmax: at k the two copies of k weigh the same, so v_old and v_new count equally.
    """
    rule = _rule(rule)
    d_k = whole_number(d_k, "d_k", 2, MAX_DIM)
    d_v = d_k if d_v is None else d_v
    d_v = whole_number(d_v, "d_v", 3, MAX_DIM)
    seed = whole_number(seed, "seed", 0, 2**32 - 1)
    beta, alpha = _rate(beta, "beta"), _rate(alpha, "alpha")
    rng = np.random.default_rng([seed, 2])
    basis, _ = np.linalg.qr(rng.standard_normal((d_k, 2)))  # two orthonormal columns
    k_other, k = basis.T
    values = unit_rows(rng, (3, d_v))  # v_other, v_old, v_new
    memory = write_and_read(rule, np.stack([k_other, k, k]), values, np.stack([k, k_other]),
                            beta=beta, alpha=alpha, scale=scale)
    coefficients = np.linalg.lstsq(values.T, memory.reads.T, rcond=None)[0].T  # (2, 3)
    return WriteTwice(rule, memory, coefficients)
