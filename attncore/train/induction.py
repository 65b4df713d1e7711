r"""Induction heads: a 2-layer attention-only causal transformer on repeated segments.

Each sequence is a random segment of distinct tokens repeated until the sequence is
full ("7 3 9 1 | 7 3 9 1 | 7 3"). From the second copy on, the next token can be
read off the earlier copy: find where the current token occurred before and copy the
token that followed it. Olsson et al. (2022) showed that two layers learn this with
two cooperating heads: a *previous-token head* in layer 1 (each position attends to
the one before, so it knows its predecessor) and an *induction head* in layer 2 (the
query, the current token, matches keys whose predecessor is that token, and copies
what is there). In their models the loss falls in a sudden step (a plateau, then a
drop) as the pair forms. Whether it does here is measured, not assumed:
:func:`loss_drop` finds the steepest stretch of a loss curve and compares it with the
slope before it (at the page's defaults the held-out loss falls from the start, then
faster while the heads form: no plateau, so no sudden step).

Model (no MLP, no LayerNorm): :math:`x_0 = E[\text{ids}] + P`,
:math:`x_1 = x_0 + \mathrm{MHA}_1(x_0)`, :math:`x_2 = x_1 + \mathrm{MHA}_2(x_1)`,
logits :math:`= x_2 U`, causal masks in both layers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import positive_number, whole_number
from .attention import ATTENTION_KEYS, self_attention_backward, self_attention_forward
from .layers import (
    cross_entropy_backward,
    cross_entropy_forward,
    embedding_backward,
    embedding_forward,
    init_matrix,
    linear_backward,
    linear_forward,
)
from .run import Measure, TrainingRun, check_run_settings, train

LAYERS = 2
#: A loss curve falls "in a step" when its steepest stretch falls at least this many
#: times as fast as the curve fell, on average, before that stretch (a plateau, then a
#: drop); a steady fall, or one that speeds up gradually, stays below it.
STEP_RATIO = 3.0


@dataclass(frozen=True)
class InductionConfig:
    """Settings of one induction run; the defaults are the page's defaults."""

    seed: int = 0
    steps: int = 250
    d_model: int = 32
    heads: int = 2
    vocab: int = 32
    length: int = 20
    min_period: int = 4
    max_period: int = 8
    batch: int = 32
    lr: float = 0.01
    n_held_out: int = 256

    def __post_init__(self):
        check_run_settings(self)
        whole_number(self.vocab, "vocab", 4, 1000)
        whole_number(self.min_period, "min_period", 2, self.vocab)
        whole_number(self.max_period, "max_period", self.min_period, self.vocab)
        whole_number(self.length, "length", self.max_period + 2, 256)
        whole_number(self.n_held_out, "n_held_out", 1, 100_000)
        positive_number(self.lr, "lr")


def make_sequences(rng: np.random.Generator, n: int, config: InductionConfig):
    """ids (n, length) and periods (n,): each row repeats a segment of distinct tokens."""
    period = rng.integers(config.min_period, config.max_period + 1, n)
    segment = np.argsort(rng.random((n, config.vocab)), axis=1)  # a random order of all tokens
    where = np.arange(config.length)[None, :] % period[:, None]  # (n, T) index into the segment
    return np.take_along_axis(segment, where, axis=1), period


def predictable(period: np.ndarray, T: int) -> np.ndarray:
    """(n, T - 1): True where the next token is determined by an earlier copy
    (from the second copy of the segment on, position t >= period)."""
    return np.arange(T - 1)[None, :] >= period[:, None]


def init_params(config: InductionConfig, rng: np.random.Generator) -> dict:
    """E (V, D), P (T, D), "L1.Wq" ... "L2.Wo" (D, D) and the unembedding U (D, V)."""
    D, V = config.d_model, config.vocab
    p = {
        "E": rng.standard_normal((V, D)) / np.sqrt(D),
        "P": rng.standard_normal((config.length, D)) / np.sqrt(D),
    }
    for layer in range(1, LAYERS + 1):
        for name in ATTENTION_KEYS:
            p[f"L{layer}.{name}"] = init_matrix(rng, D, D)
    p["U"] = init_matrix(rng, D, V)
    return p


def forward(p: dict, ids: np.ndarray, heads: int):
    """Logits (B, T, V) and caches; caches["L1"][4], caches["L2"][4] are the weights
    (B, H, T, T) of the two layers."""
    B, T = ids.shape
    x, c_emb = embedding_forward(ids, p["E"])
    x = x + p["P"][:T]  # (B, T, D)
    causal = np.tril(np.ones((T, T), dtype=bool))  # row t may attend to 0..t
    caches = {"emb": c_emb, "T": T}
    for layer in range(1, LAYERS + 1):
        weights = {k: p[f"L{layer}.{k}"] for k in ATTENTION_KEYS}
        y, caches[f"L{layer}"] = self_attention_forward(x, weights, heads, causal)
        x = x + y  # residual stream
    logits, caches["out"] = linear_forward(x, p["U"])
    return logits, caches


def backward(p: dict, dlogits: np.ndarray, caches: dict) -> dict:
    """Gradients of every parameter, given dlogits (B, T, V)."""
    g = {}
    dx, g["U"], _ = linear_backward(dlogits, caches["out"])
    for layer in range(LAYERS, 0, -1):
        dy, grads = self_attention_backward(dx, caches[f"L{layer}"])
        dx = dx + dy  # x_out = x_in + y
        g.update({f"L{layer}.{k}": v for k, v in grads.items()})
    g["E"] = embedding_backward(dx, caches["emb"])
    g["P"] = np.zeros_like(p["P"])
    g["P"][: caches["T"]] = dx.sum(axis=0)
    return g


def head_scores(a1: np.ndarray, a2: np.ndarray, ids: np.ndarray, period: np.ndarray) -> dict:
    """Per head: the previous-token score of layer 1 and the induction
    (prefix-matching) score of layer 2.

    previous-token: the mean weight from position t on t - 1 (t >= 1);
    prefix-matching: from a query t in a later copy (t >= period), the total weight on
    the keys s whose predecessor is the current token (ids[s - 1] == ids[t]), i.e.
    on the tokens that followed every earlier copy of it.
    a1, a2 (B, H, T, T), ids (B, T), period (B,); returns {"prev": (H,), "induction": (H,)}.
    """
    B, H, T, _ = a1.shape
    t = np.arange(1, T)
    prev = a1[:, :, t, t - 1].mean(axis=(0, 2))  # (H,)
    follows = np.zeros((B, T, T), dtype=bool)  # [b, t, s]: ids[b, s - 1] == ids[b, t]
    follows[:, :, 1:] = ids[:, :, None] == ids[:, None, :-1]
    mass = np.sum(a2 * follows[:, None], axis=-1)  # (B, H, T)
    later = np.arange(T)[None, :] >= period[:, None]  # (B, T)
    induction = mass.transpose(0, 2, 1)[later].mean(axis=0)  # (pairs, H) -> (H,)
    return {"prev": prev, "induction": induction}


def train_induction(config: InductionConfig = InductionConfig(), progress=None) -> TrainingRun:
    """Train the 2-layer model. Accuracy: held-out next-token predictions at the
    predictable positions; score: the best layer-2 head's induction score."""
    data_rng = np.random.default_rng([config.seed, 0])
    h_ids, h_period = make_sequences(data_rng, config.n_held_out, config)
    h_mask = predictable(h_period, config.length)
    params = init_params(config, np.random.default_rng([config.seed, 2]))
    H, V = config.heads, config.vocab

    def loss_and_grads(p, rng, step):
        ids, period = make_sequences(rng, config.batch, config)
        logits, caches = forward(p, ids[:, :-1], H)
        loss, c = cross_entropy_forward(logits.reshape(-1, V), ids[:, 1:].ravel(),
                                        predictable(period, config.length).ravel())
        return loss, backward(p, cross_entropy_backward(c).reshape(logits.shape), caches)

    def measure(p):
        logits, caches = forward(p, h_ids[:, :-1], H)
        loss, _ = cross_entropy_forward(logits.reshape(-1, V), h_ids[:, 1:].ravel(), h_mask.ravel())
        right = (logits.argmax(-1) == h_ids[:, 1:])[h_mask]
        a1, a2 = caches["L1"][4], caches["L2"][4]
        s = head_scores(a1, a2, h_ids[:, :-1], h_period)
        # heads counted from 1, as the page's panels name them ("layer 1, head 1")
        extra = {f"layer 1, head {h + 1}: previous-token": s["prev"][h] for h in range(H)}
        extra |= {f"layer 2, head {h + 1}: induction": s["induction"][h] for h in range(H)}
        return Measure(
            accuracy=float(right.mean()),
            loss=loss,
            score=float(s["induction"].max()),
            snapshots={"L1": a1[0], "L2": a2[0]},
            extra={k: float(v) for k, v in extra.items()},
        )

    examples = {"ids": h_ids[0, :-1], "period": int(h_period[0])}
    return train("induction", config.seed, config, params, loss_and_grads, measure, examples,
                 steps=config.steps, lr=config.lr, progress=progress)


@dataclass(frozen=True)
class LossDrop:
    """The steepest stretch of a loss curve and the slope before it.

    The loss falls from ``loss_from`` at step ``start`` to ``loss_to`` at step ``end``
    (the stretch, about a tenth of the run), ``slope`` a step on average (positive =
    falling); ``slope_before`` is the mean fall a step from the first checkpoint to
    ``start`` (NaN when the stretch starts at the first checkpoint); ``ratio`` is
    ``slope / slope_before`` (inf when the loss did not fall before the stretch, NaN
    when there is nothing before it or the loss never fell).
    """

    start: int
    end: int
    loss_from: float
    loss_to: float
    slope: float
    slope_before: float
    ratio: float

    @property
    def fell(self) -> bool:
        """Whether the loss fell anywhere (the steepest stretch falls)."""
        return self.slope > 0

    @property
    def at_start(self) -> bool:
        """Whether the steepest stretch is the first one: the loss fell fastest at once."""
        return np.isnan(self.slope_before)

    @property
    def speeds_up(self) -> bool:
        """Whether the steepest stretch falls faster than the loss fell, on average, before
        it. Not always: a fast first interval can make the mean before it steeper."""
        return self.fell and not self.at_start and self.ratio > 1

    @property
    def is_step(self) -> bool:
        """A plateau, then a drop: the stretch falls at least STEP_RATIO times as fast as
        the loss fell before it."""
        return self.fell and not self.at_start and self.ratio >= STEP_RATIO


def loss_drop(steps, loss, fraction: float = 0.1) -> LossDrop:
    """Find the steepest fall of ``loss`` (n,) measured at ``steps`` (n,), increasing,
    over stretches of about ``fraction`` of the checkpoint intervals (at least one).

    Notes
    -----
    With checkpoints :math:`s_0 < \\dots < s_n` and a stretch of w intervals, the slope
    of the stretch starting at i is :math:`(L_i - L_{i+w}) / (s_{i+w} - s_i)`; the
    steepest is compared with the mean slope before it, :math:`(L_0 - L_i) / (s_i - s_0)`.
    """
    s = np.asarray(steps, dtype=np.float64)
    y = np.asarray(loss, dtype=np.float64)
    if s.ndim != 1 or s.shape != y.shape or s.size < 2:
        raise ValueError(f"steps and loss must be two 1-D arrays of the same length, at "
                         f"least 2; got shapes {s.shape} and {y.shape}")
    if not (np.all(np.isfinite(s)) and np.all(np.isfinite(y))):
        raise ValueError("steps and loss must be finite numbers")
    if np.any(np.diff(s) <= 0):
        raise ValueError("steps must increase")
    w = max(1, int(round(fraction * (s.size - 1))))
    slopes = (y[:-w] - y[w:]) / (s[w:] - s[:-w])  # (n - w,) fall a step of each stretch
    i = int(np.argmax(slopes))
    slope = float(slopes[i])
    before = float((y[0] - y[i]) / (s[i] - s[0])) if i else np.nan
    # nothing before the stretch, or no fall: no ratio; no fall before it: infinitely faster
    ratio = np.nan if i == 0 or slope <= 0 else (slope / before if before > 0 else np.inf)
    return LossDrop(start=int(s[i]), end=int(s[i + w]), loss_from=float(y[i]),
                    loss_to=float(y[i + w]), slope=slope, slope_before=before, ratio=ratio)
