r"""Lesson 13's trained comparison: softmax attention against linear attention on recall.

The task: a sequence of T pairs (key, value), keys distinct, each drawn from SYMBOLS = 128
key symbols and 128 value symbols, one position per pair,
:math:`x_t = E_k[\mathrm{key}_t] + E_v[\mathrm{value}_t]`; then a query naming one stored
key, :math:`x_q = E_k[\mathrm{key}]`; the answer is the value stored with it (a guess is
right with probability 1/128). One attention layer, then a linear read-out:

.. math::

    q = x_q W_q,\; k_t = x_t W_k,\; v_t = x_t W_v, \qquad
    \text{softmax: } o = \sum_t \mathrm{softmax}_t(q \cdot k_t / \sqrt{d_k})\, v_t, \qquad
    \text{linear: } o = S q,\; S = \sum_t v_t k_t^\top, \qquad
    p = \mathrm{softmax}(o W_r + b_r)

with q, k of width d_k = 8 and v of width d_model = 64: the linear model keeps
d_model · d_k = 512 numbers whatever T is, the softmax model T (d_k + d_model). The
two models start from the same weights and see the same batches; they differ only in the
read. Only the query position reads, so the linear model needs :math:`S_T` alone.

Since the projections are linear and a position's input is a sum of two rows,
:math:`x_t W = (E_k W)[\mathrm{key}_t] + (E_v W)[\mathrm{value}_t]`: the forward projects
the two 128-row tables once (``Wqkv`` = :math:`[W_q | W_k | W_v]`) and looks rows up, and
the backward sums the gradients of each symbol's positions. Each layer is a
forward/backward pair, as in :mod:`attncore.train.layers`; float64, Adam at a constant
step size on one BLAS thread. A mini-batch has one number of pairs, drawn uniformly from
the trained range, so no padding is needed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .._checks import positive_number, whole_number
from ..measure import one_blas_thread
from .layers import (
    cross_entropy_backward,
    cross_entropy_forward,
    init_matrix,
    linear_backward,
    linear_forward,
    softmax_backward,
    softmax_forward,
)
from .run import Measure, TrainingRun, check_run_settings, progress_of_one, train

SYMBOLS = 128  # key symbols 0..127 and value symbols 0..127
CHANCE = 1 / SYMBOLS
MODELS = ("softmax", "linear")
TEST_PAIRS = (2, 4, 8, 16, 32, 64)
CHECK_SEQUENCES = 200  # held-out sequences per number of pairs at each checkpoint
EXAMPLE_PAIRS = 16  # the sequence whose scores the lesson shows


@dataclass(frozen=True)
class RecallConfig:
    """Settings of one lesson-13 run (both models); the defaults are the page's."""

    seed: int = 0
    steps: int = 1500
    batch: int = 64
    min_pairs: int = 2
    max_pairs: int = 64
    d_model: int = 64
    d_k: int = 8
    lr: float = 3e-3
    n_test: int = 1000
    checkpoints: int = 10

    def __post_init__(self):
        check_run_settings(self, heads=False)
        whole_number(self.min_pairs, "min_pairs", 1, SYMBOLS)
        whole_number(self.max_pairs, "max_pairs", self.min_pairs, SYMBOLS)
        whole_number(self.d_k, "d_k", 1, self.d_model)
        whole_number(self.n_test, "n_test", 1, 10000)
        whole_number(self.checkpoints, "checkpoints", 1, 100)
        if positive_number(self.lr, "lr") > 0.1:
            raise ValueError(f"lr must lie in (0, 0.1]; got {self.lr!r}")


# --- The task -----------------------------------------------------------------------------

def make_batch(rng: np.random.Generator, batch: int, pairs: int) -> dict:
    """``batch`` sequences of ``pairs`` pairs: keys (B, T) distinct in each row, values
    (B, T), the asked position where (B,), the query's key query (B,) and target (B,)."""
    keys = np.argsort(rng.random((batch, SYMBOLS)), axis=1)[:, :pairs]  # distinct per row
    values = rng.integers(0, SYMBOLS, (batch, pairs))
    where = rng.integers(0, pairs, batch)
    rows = np.arange(batch)
    return {"keys": keys, "values": values, "where": where,
            "query": keys[rows, where], "target": values[rows, where]}


# --- The layers ---------------------------------------------------------------------------

def symbol_sums(ids: np.ndarray, grad: np.ndarray, V: int) -> np.ndarray:
    """(V, k): row s sums the rows of ``grad`` (..., k) at the positions holding symbol s
    (a table lookup's gradient, as ``np.add.at`` gives it; one ``bincount`` over the
    entries (s, j) is faster here)."""
    k = grad.shape[-1]
    cells = (ids.reshape(-1, 1) * k + np.arange(k)).ravel()  # entry (s, j) of the (V, k) sum
    sums = np.bincount(cells, weights=grad.reshape(-1), minlength=V * k)
    return sums.reshape(V, k).astype(grad.dtype, copy=False)


def project_forward(batch: dict, p: dict, d_k: int):
    """q (B, d_k) of the query, k (B, T, d_k) and v (B, T, D) of the pairs.

    p holds E_key (V, D), E_value (V, D), Wqkv (D, 2 d_k + D). Returns ((q, k, v), cache).
    """
    table_k, c_k = linear_forward(p["E_key"], p["Wqkv"])  # (V, 2 d_k + D)
    table_v, c_v = linear_forward(p["E_value"], p["Wqkv"])  # (V, 2 d_k + D)
    pair = table_k[batch["keys"], d_k:] + table_v[batch["values"], d_k:]  # (B, T, d_k + D)
    q = table_k[batch["query"], :d_k]  # (B, d_k)
    return (q, pair[..., :d_k], pair[..., d_k:]), (batch, c_k, c_v, d_k)


def project_backward(dq, dk, dv, cache) -> dict:
    """Gradients {E_key, E_value, Wqkv} for :func:`project_forward`."""
    batch, c_k, c_v, d_k = cache
    V = c_k[0].shape[0]
    dpair = np.concatenate([dk, dv], axis=-1)  # (B, T, d_k + D)
    dtable_k = np.zeros((V, c_k[1].shape[1]), dtype=dq.dtype)  # (V, 2 d_k + D)
    dtable_v = np.zeros_like(dtable_k)
    dtable_k[:, d_k:] = symbol_sums(batch["keys"], dpair, V)
    dtable_k[:, :d_k] = symbol_sums(batch["query"], dq, V)
    dtable_v[:, d_k:] = symbol_sums(batch["values"], dpair, V)
    dE_key, dW_k, _ = linear_backward(dtable_k, c_k)
    dE_value, dW_v, _ = linear_backward(dtable_v, c_v)
    return {"E_key": dE_key, "E_value": dE_value, "Wqkv": dW_k + dW_v}


def softmax_read_forward(q, k, v):
    r""":math:`o = \sum_t a_t v_t`, :math:`a = \mathrm{softmax}(k_t \cdot q / \sqrt{d_k})`.

    q (B, d_k), k (B, T, d_k), v (B, T, D) -> (o (B, D), cache); cache[3] is a (B, T).
    """
    c = 1.0 / np.sqrt(q.shape[-1])
    a = softmax_forward((k @ q[:, :, None])[..., 0] * c)  # (B, T, d_k) x (B, d_k, 1) -> (B, T)
    o = (a[:, None, :] @ v)[:, 0]  # (B, 1, T) x (B, T, D) -> (B, D)
    return o, (q, k, v, a, c)


def softmax_read_backward(do, cache):
    """(dq, dk, dv) for :func:`softmax_read_forward`."""
    q, k, v, a, c = cache
    dv = a[:, :, None] * do[:, None, :]  # (B, T, D)
    da = (v @ do[:, :, None])[..., 0]  # (B, T)
    ds = softmax_backward(da, a) * c  # (B, T)
    dq = (ds[:, None, :] @ k)[:, 0]  # (B, 1, T) x (B, T, d_k) -> (B, d_k)
    dk = ds[:, :, None] * q[:, None, :]  # (B, T, d_k)
    return dq, dk, dv


def linear_read_forward(q, k, v):
    r""":math:`o = S q` with :math:`S = \sum_t v_t k_t^\top`.

    q (B, d_k), k (B, T, d_k), v (B, T, D) -> (o (B, D), cache); cache[3] is S (B, D, d_k).
    """
    S = v.transpose(0, 2, 1) @ k  # (B, D, T) x (B, T, d_k) -> (B, D, d_k)
    o = (S @ q[:, :, None])[..., 0]  # (B, D, d_k) x (B, d_k, 1) -> (B, D)
    return o, (q, k, v, S)


def linear_read_backward(do, cache):
    r"""(dq, dk, dv) for :func:`linear_read_forward`: with :math:`dS = do\, q^\top`,
    :math:`dq = S^\top do`, :math:`dv_t = (k_t \cdot q)\, do`, :math:`dk_t = (v_t \cdot do)\, q`."""
    q, k, v, S = cache
    dq = (S.transpose(0, 2, 1) @ do[:, :, None])[..., 0]  # (B, d_k, D) x (B, D, 1) -> (B, d_k)
    similarity = (k @ q[:, :, None])[..., 0]  # (B, T)
    dv = similarity[:, :, None] * do[:, None, :]  # (B, T, D)
    dk = (v @ do[:, :, None]) * q[:, None, :]  # (B, T, 1) * (B, 1, d_k) -> (B, T, d_k)
    return dq, dk, dv


READS = {"softmax": (softmax_read_forward, softmax_read_backward),
         "linear": (linear_read_forward, linear_read_backward)}


# --- The model ----------------------------------------------------------------------------

def init_params(config: RecallConfig, rng: np.random.Generator) -> dict:
    """The parameters both models share (the same draw for both)."""
    D, d_k = config.d_model, config.d_k
    return {
        "E_key": rng.standard_normal((SYMBOLS, D)) / np.sqrt(2),  # x_t has unit variance
        "E_value": rng.standard_normal((SYMBOLS, D)) / np.sqrt(2),
        "Wqkv": init_matrix(rng, D, 2 * d_k + D),
        "Wr": init_matrix(rng, D, SYMBOLS),
        "br": np.zeros(SYMBOLS),
    }


def forward(p: dict, batch: dict, model: str):
    """logits (B, SYMBOLS) over the values, and the caches of every layer."""
    d_k = (p["Wqkv"].shape[1] - p["Wqkv"].shape[0]) // 2
    (q, k, v), c_proj = project_forward(batch, p, d_k)
    o, c_read = READS[model][0](q, k, v)
    logits, c_out = linear_forward(o, p["Wr"], p["br"])
    return logits, (c_proj, c_read, c_out)


def loss_and_gradients(p: dict, batch: dict, model: str):
    """Mean cross-entropy of the stored value, and the gradient of every parameter."""
    logits, (c_proj, c_read, c_out) = forward(p, batch, model)
    loss, c_loss = cross_entropy_forward(logits, batch["target"])
    do, dWr, dbr = linear_backward(cross_entropy_backward(c_loss), c_out)
    grads = project_backward(*READS[model][1](do, c_read), c_proj)
    grads.update(Wr=dWr, br=dbr)
    return loss, grads


def scores(p: dict, batch: dict, model: str) -> np.ndarray:
    """(B, T) what the query gives each pair: softmax weights, or k_t · q for linear."""
    _, (_, c_read, _) = forward(p, batch, model)
    q, k = c_read[0], c_read[1]
    return c_read[3] if model == "softmax" else (k @ q[:, :, None])[..., 0]


def evaluate(p: dict, batch: dict, model: str) -> tuple[float, float]:
    """(accuracy, loss): the share of queries whose most probable value is the stored one,
    and the mean cross-entropy."""
    logits, _ = forward(p, batch, model)
    loss, _ = cross_entropy_forward(logits, batch["target"])
    return float(np.mean(np.argmax(logits, axis=1) == batch["target"])), loss


# --- Training -----------------------------------------------------------------------------

def train_model(config: RecallConfig, model: str, progress=None) -> TrainingRun:
    """Train one model. At each checkpoint: accuracy = mean over TEST_PAIRS of the held-out
    accuracy (CHECK_SEQUENCES each), loss = mean held-out loss, score = accuracy at the most
    pairs; curves ``pairs_<n>`` the accuracy at each n; snapshot "scores" (EXAMPLE_PAIRS,)
    the query's :func:`scores` on one example."""
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}; got {model!r}")
    check_rng = np.random.default_rng([config.seed, 5])
    held_out = {n: make_batch(check_rng, CHECK_SEQUENCES, n) for n in TEST_PAIRS}
    example = make_batch(np.random.default_rng([config.seed, 4]), 1, EXAMPLE_PAIRS)
    params = init_params(config, np.random.default_rng([config.seed, 2]))

    def loss_and_grads(p, rng, step):
        pairs = int(rng.integers(config.min_pairs, config.max_pairs + 1))
        return loss_and_gradients(p, make_batch(rng, config.batch, pairs), model)

    def measure(p):
        found = {n: evaluate(p, b, model) for n, b in held_out.items()}
        right = {n: a for n, (a, _) in found.items()}
        return Measure(accuracy=float(np.mean(list(right.values()))),
                       loss=float(np.mean([loss for _, loss in found.values()])),
                       score=right[max(right)],
                       snapshots={"scores": scores(p, example, model)[0]},
                       extra={f"pairs_{n}": a for n, a in right.items()})

    return train(f"recall ({model})", config.seed, config, params, loss_and_grads, measure,
                 example, steps=config.steps, lr=config.lr,
                 checkpoints=config.checkpoints, progress=progress)


@dataclass(frozen=True)
class RecallResult:
    """Both models trained and tested (dicts keyed by model name, MODELS).

    runs: each model's :class:`TrainingRun`; pairs (P,) the tested numbers of pairs;
    accuracy[model] (P,) on n_test fresh sequences per number (the same for both);
    state_numbers[model] (P,) the numbers the read keeps: d_model · d_k (linear) or
    n (d_k + d_model) (softmax); seconds the wall time of both trainings and the test.
    """

    config: RecallConfig
    runs: dict
    pairs: np.ndarray
    accuracy: dict
    state_numbers: dict
    seconds: float

    def summary(self) -> dict:
        """The figures the command line prints, as plain Python numbers."""
        c = self.config
        return {
            "task": "recall",
            "seed": c.seed,
            "steps": c.steps,
            "pairs": self.pairs.tolist(),
            "accuracy_softmax": [round(float(a), 4) for a in self.accuracy["softmax"]],
            "accuracy_linear": [round(float(a), 4) for a in self.accuracy["linear"]],
            "chance": round(CHANCE, 4),
            "state_numbers_linear": int(self.state_numbers["linear"][0]),
            "state_numbers_softmax": self.state_numbers["softmax"].tolist(),
            "seconds_softmax": round(self.runs["softmax"].seconds, 3),
            "seconds_linear": round(self.runs["linear"].seconds, 3),
            "seconds": round(self.seconds, 3),
        }


def train_recall(config: RecallConfig = RecallConfig(), progress=None) -> RecallResult:
    """Train the softmax model, then the linear one, on the same batches from the same
    weights, and test both on the same fresh sequences. ``progress(done, total)`` counts
    the steps of both (total = 2 x steps)."""
    start = time.perf_counter()
    pairs = np.array(TEST_PAIRS)
    test_rng = np.random.default_rng([config.seed, 6])
    tests = [make_batch(test_rng, config.n_test, int(n)) for n in pairs]
    runs, right = {}, {}
    with one_blas_thread():
        for i, model in enumerate(MODELS):
            runs[model] = train_model(config, model, progress_of_one(progress, i, len(MODELS)))
            right[model] = np.array([evaluate(runs[model].params, b, model)[0]
                                     for b in tests])
    numbers = {"linear": np.full(pairs.size, config.d_model * config.d_k),
               "softmax": pairs * (config.d_k + config.d_model)}
    return RecallResult(config, runs, pairs, right, numbers, time.perf_counter() - start)
