"""The training loop shared by the three tasks, and the frozen result it returns.

A task supplies ``loss_and_grads(params, rng, step)`` (one mini-batch) and
``measure(params)`` (held-out accuracy, attention score and the attention snapshots);
:func:`train` runs Adam(W) for the given number of steps, measures at the
checkpoints, and returns a :class:`TrainingRun`. Small matrices train fastest on one
BLAS thread (OpenBLAS threads spin on a busy machine), so the loop runs inside
:func:`attncore.measure.one_blas_thread`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .._checks import whole_number
from ..measure import one_blas_thread
from .optim import AdamState, adam_step


@dataclass(frozen=True)
class Measure:
    """What a task measures on its held-out set at one checkpoint."""

    accuracy: float
    loss: float
    score: float
    snapshots: dict = field(default_factory=dict)  # name -> array of attention weights
    extra: dict = field(default_factory=dict)  # name -> float, e.g. one score per head


@dataclass(frozen=True)
class TrainingRun:
    """One finished training run.

    checkpoints (n,) are the steps at which the model was measured, 0 (untrained)
    first and the last step last; ``accuracy``, ``held_out_loss``, ``scores`` and
    ``seconds_at`` are (n,) over them. ``loss`` (steps,) is the training loss of
    each mini-batch. ``snapshots[name]`` is (n, ...) attention weights on the task's
    display examples; ``curves[name]`` (n,) is any further per-checkpoint measure.
    ``params`` are the trained parameters; ``examples`` the display examples' tokens.
    """

    task: str
    seed: int
    config: object
    loss: np.ndarray
    checkpoints: np.ndarray
    accuracy: np.ndarray
    held_out_loss: np.ndarray
    scores: np.ndarray
    seconds_at: np.ndarray
    snapshots: dict
    curves: dict
    params: dict
    examples: dict

    @property
    def steps(self) -> int:
        return int(self.checkpoints[-1])

    @property
    def seconds(self) -> float:
        return float(self.seconds_at[-1])

    @property
    def final_accuracy(self) -> float:
        return float(self.accuracy[-1])

    @property
    def attention_score(self) -> float:
        return float(self.scores[-1])

    def summary(self) -> dict:
        """The figures the command line prints, as plain Python numbers."""
        return {
            "task": self.task,
            "seed": self.seed,
            "steps": self.steps,
            "seconds": round(self.seconds, 3),
            "accuracy": round(self.final_accuracy, 4),
            "attention_score": round(self.attention_score, 4),
            "final_loss": round(float(self.loss[-1]), 4),
        }


def progress_of_one(progress: Callable[[int, int], None] | None, index: int, count: int):
    """``progress(done, total)`` of ``count`` models trained in turn, as the ``progress``
    of the one at ``index`` (from 0) sees it: its ``(step, steps)`` becomes
    ``(index · steps + step, count · steps)``. None for None."""
    if progress is None:
        return None
    return lambda step, steps: progress(index * steps + step, count * steps)


def checkpoint_steps(steps: int, count: int) -> np.ndarray:
    """``count + 1`` distinct steps from 0 to ``steps``, evenly spread (0 = untrained)."""
    return np.unique(np.round(np.linspace(0, steps, count + 1)).astype(int))


def train(
    task: str,
    seed: int,
    config,
    params: dict,
    loss_and_grads: Callable,
    measure: Callable,
    examples: dict,
    *,
    steps: int,
    lr: float,
    weight_decay: float = 0.0,
    checkpoints: int = 20,
    decay: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> TrainingRun:
    """Train ``params`` (a dict of arrays, updated in place) and measure at checkpoints.

    ``loss_and_grads(params, rng, step) -> (loss, grads)`` draws one mini-batch from
    ``rng``;
    ``measure(params) -> Measure``. With ``decay`` the step size falls along half a
    cosine from ``lr`` to ``lr / 10``. ``progress(step, steps)`` is called after each
    checkpoint (for a progress bar). Seeded: the same arguments give the same run.
    """
    rng = np.random.default_rng([seed, 1])  # the batches; the task seeds its own data
    marks = checkpoint_steps(steps, checkpoints)
    measured_at = set(marks.tolist())
    state = AdamState()
    losses = np.zeros(steps)
    measures, times = [], []
    with one_blas_thread():
        start = time.perf_counter()
        for step in range(steps + 1):
            if step in measured_at:
                measures.append(measure(params))
                times.append(time.perf_counter() - start)
                if progress is not None:
                    progress(step, steps)
            if step == steps:
                break
            losses[step], grads = loss_and_grads(params, rng, step)
            rate = lr * (0.55 + 0.45 * np.cos(np.pi * step / steps)) if decay else lr
            adam_step(params, grads, state, rate, weight_decay)
    names = measures[0].snapshots.keys()
    extra = measures[0].extra.keys()
    return TrainingRun(
        task=task,
        seed=seed,
        config=config,
        loss=losses,
        checkpoints=marks,
        accuracy=np.array([m.accuracy for m in measures]),
        held_out_loss=np.array([m.loss for m in measures]),
        scores=np.array([m.score for m in measures]),
        seconds_at=np.array(times),
        snapshots={n: np.stack([m.snapshots[n] for m in measures]) for n in names},
        curves={n: np.array([m.extra[n] for m in measures]) for n in extra},
        params={k: v.copy() for k, v in params.items()},
        examples=examples,
    )


def check_run_settings(config, *, heads: bool = True) -> None:
    """The settings every task shares: seed, steps, d_model, batch and (with ``heads``)
    a head count that divides d_model; ValueError naming the first one out of range."""
    whole_number(config.seed, "seed", 0, 2**32 - 1)
    whole_number(config.steps, "steps", 1, 5000)
    whole_number(config.d_model, "d_model", 2, 128)
    whole_number(config.batch, "batch", 1, 1024)
    if heads:
        whole_number(config.heads, "heads", 1, config.d_model)
        if config.d_model % config.heads:
            raise ValueError(f"d_model ({config.d_model}) must be divisible by heads; "
                             f"got heads={config.heads}")
