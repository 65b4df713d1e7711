"""Lesson 0's training: each model trained with checkpoints, then both tested on the same
fresh strings (:func:`train_bottleneck`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ...measure import one_blas_thread
from ..layers import cross_entropy_forward
from ..run import Measure, TrainingRun, train
from .backward import loss_and_gradients
from .decoding import EarlierStates, accuracy_by_length, decode, earlier_states, weight_by_offset
from .network import count_parameters, forward, init_params
from .settings import BottleneckConfig
from .task import (
    CHANCE,
    CHECK_LENGTHS,
    CHECK_STRINGS,
    EXAMPLE_LENGTH,
    MODELS,
    OFFSETS,
    SYMBOLS,
    example_string,
    make_strings,
)


def check_lengths(config: BottleneckConfig) -> np.ndarray:
    """Up to CHECK_LENGTHS lengths evenly spread from min_length to max_length (both in)."""
    spread = np.linspace(config.min_length, config.max_length, CHECK_LENGTHS)
    return np.unique(np.round(spread).astype(int))


def train_model(config: BottleneckConfig, model: str, progress=None) -> TrainingRun:
    """Train one of the two models (float32, Adam with a cosine decay, one BLAS thread).

    At each checkpoint it measures, on CHECK_STRINGS held-out strings at each of
    :func:`check_lengths`: accuracy = greedy token accuracy, loss = teacher-forced
    cross-entropy per symbol, score = greedy token accuracy at the longest trained length;
    the attention model also its weights on the example string (snapshot "alignment",
    T x T) and curve "aligned_weight", the mean weight α_tt on the symbol being copied.
    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}; got {model!r}")
    check_rng = np.random.default_rng([config.seed, 5])
    held_out = [make_strings(check_rng, CHECK_STRINGS, n) for n in check_lengths(config)]
    example = example_string(config.seed)[None, :]
    params = init_params(config.d_model, np.random.default_rng([config.seed, 2]), model)

    def loss_and_grads(p, rng, step):
        length = rng.integers(config.min_length, config.max_length + 1)
        return loss_and_gradients(p, make_strings(rng, config.batch, length), model)

    def measure(p):
        runs = [decode(p, src, model) for src in held_out]
        losses = []
        for src in held_out:
            logits, _ = forward(p, src, model)
            losses.append(cross_entropy_forward(logits.reshape(-1, SYMBOLS), src.ravel())[0])
        right = np.concatenate([run.correct.ravel() for run in runs])
        lengths = np.array([src.shape[1] for src in held_out])
        snapshots, extra = {}, {}
        if model == "attention":
            snapshots["alignment"] = decode(p, example, model).weights[0]
            diagonal = [run.weights.diagonal(axis1=1, axis2=2).ravel() for run in runs]
            extra["aligned_weight"] = float(np.concatenate(diagonal).mean())
        return Measure(
            accuracy=float(right.mean()),
            loss=float(np.average(losses, weights=lengths)),  # per symbol, as training
            score=runs[-1].accuracy,
            snapshots=snapshots,
            extra=extra,
        )

    return train(f"bottleneck ({model})", config.seed, config, params, loss_and_grads,
                 measure, {"example": example[0]}, steps=config.steps, lr=config.lr,
                 decay=True, checkpoints=config.checkpoints, progress=progress)


@dataclass(frozen=True)
class BottleneckResult:
    """Both models trained and tested (dicts are keyed by model name, MODELS).

    runs: each model's :class:`TrainingRun` (loss per step, checkpoint measures, trained
    params). lengths (L,) the tested lengths; accuracy[model] (L,) greedy token accuracy
    on n_test fresh strings per length; position_accuracy[model] (L, max length) the same
    per output position, NaN past each length; forced_position_accuracy[model] the same on
    the same strings with teacher forcing (each step reading the correct previous symbol);
    example[model] the :class:`Decoding` of one string of EXAMPLE_LENGTH symbols (the same
    string for both); offset_weights (5,) the attention model's :func:`weight_by_offset`
    at OFFSETS (-2..2) over n_test fresh strings of EXAMPLE_LENGTH symbols, and earlier its
    :class:`EarlierStates` on the same strings; parameters[model] the number of trained
    numbers; seconds the wall time of training both and testing.
    """

    config: BottleneckConfig
    runs: dict
    lengths: np.ndarray
    accuracy: dict
    position_accuracy: dict
    example: dict
    offset_weights: np.ndarray
    parameters: dict
    seconds: float
    forced_position_accuracy: dict
    earlier: EarlierStates
    chance: float = field(default=CHANCE)

    def summary(self) -> dict:
        """The figures the command line prints, as plain Python numbers."""
        c = self.config
        return {
            "task": "bottleneck",
            "seed": c.seed,
            "steps": c.steps,
            "d_model": c.d_model,
            "train_lengths": [c.min_length, c.max_length],
            "lengths": self.lengths.tolist(),
            "accuracy_attention": [round(float(a), 4) for a in self.accuracy["attention"]],
            "accuracy_fixed": [round(float(a), 4) for a in self.accuracy["fixed"]],
            "chance": round(self.chance, 4),
            "offsets": OFFSETS.tolist(),
            "offset_weights_attention": [round(float(w), 4) for w in self.offset_weights],
            "weight_before_attention": round(self.earlier.weight_before, 4),
            "accuracy_later_states_only": round(self.earlier.accuracy_later_only, 4),
            "n_test": c.n_test,
            "parameters_fixed": self.parameters["fixed"],
            "parameters_attention": self.parameters["attention"],
            "seconds_fixed": round(self.runs["fixed"].seconds, 3),
            "seconds_attention": round(self.runs["attention"].seconds, 3),
            "seconds": round(self.seconds, 3),
        }


_DEFAULTS = BottleneckConfig()  # the page's


def train_bottleneck(config: BottleneckConfig = _DEFAULTS,
                     progress=None) -> BottleneckResult:
    """Train the fixed model, then the attention model, on the same batches, and test both
    on the same fresh strings. ``progress(done, total)`` counts the steps of both models
    (total = 2 x steps; the fixed model's come first)."""
    start = time.perf_counter()
    limit = one_blas_thread()
    runs, accuracy, by_position, forced, example, count = {}, {}, {}, {}, {}, {}
    with limit:
        for i, model in enumerate(MODELS):
            report = None if progress is None else (
                lambda step, steps, i=i: progress(i * steps + step, len(MODELS) * steps))
            run = runs[model] = train_model(config, model, report)
            accuracy[model], by_position[model] = accuracy_by_length(
                run.params, model, config.test_lengths, config.n_test, config.seed)
            forced[model] = accuracy_by_length(run.params, model, config.test_lengths,
                                               config.n_test, config.seed, True)[1]
            example[model] = decode(run.params, run.examples["example"], model)
            count[model] = count_parameters(config.d_model, model)
        strings = make_strings(np.random.default_rng([config.seed, 6]), config.n_test,
                               EXAMPLE_LENGTH)
        offsets = weight_by_offset(decode(runs["attention"].params, strings, "attention").weights)
        earlier = earlier_states(runs["attention"].params, strings)
    return BottleneckResult(config, runs, config.test_lengths, accuracy, by_position,
                            example, offsets, count, time.perf_counter() - start,
                            forced_position_accuracy=forced, earlier=earlier)
