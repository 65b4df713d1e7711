"""Lesson 0's settings: the caps on each, the estimated time of a run that keeps their
combination within a time limit, and :class:`BottleneckConfig`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._checks import positive_number, whole_number
from .task import LONGEST_TESTED, SHORTEST_TESTED

# Caps on each setting, and on their combination: the estimated time of one call of
# train_bottleneck (both models, then the test) may not exceed ESTIMATE_LIMIT, so that
# nothing accepted takes more than LIMIT_SECONDS on the development machine;
# the estimate keeps a sixth in hand for other work on the machine.
MAX_D_MODEL = 64
MAX_LENGTH = 20
MAX_STEPS = 1500
MAX_BATCH = 64
MAX_TEST = 1000
LIMIT_SECONDS = 30.0
ESTIMATE_LIMIT = 25.0
# Milliseconds per training step of both models together, batch 64, strings of T symbols:
# a T + b T d² + c T² d (time steps, the gates' products, the attention's T x T scores),
# fitted to process times measured on the development machine (2 cores, one BLAS thread)
# at d = 8..64 and T = 3..20 while other work ran (load average about 2.7); within 15%
# of the measurements, and above them on an idle machine.
STEP_MS = (1.14, 2.28e-4, 5.97e-4)


def step_ms(d_model: int, length) -> np.ndarray:
    """Estimated milliseconds of one training step of both models (see STEP_MS)."""
    a, b, c = STEP_MS
    T = np.asarray(length, dtype=float)
    return a * T + b * T * d_model**2 + c * T**2 * d_model


def estimated_seconds(d_model: int, min_length: int, max_length: int, steps: int,
                      n_test: int = 200) -> float:
    """Estimated wall time of :func:`train_bottleneck`: the steps (a batch's length is
    uniform over the trained range), 10% more for the checkpoints, and the test, whose
    greedy decoding and teacher-forced pass of n_test strings at each tested length cost
    together at most about twice a training step at that length per 200 strings
    (measured at d = 64, lengths 2 to 24, both models: 1.3 s against 1.6 s estimated)."""
    train_ms = steps * step_ms(d_model, np.arange(min_length, max_length + 1)).mean() * 1.1
    tested = np.arange(SHORTEST_TESTED, max(LONGEST_TESTED, max_length + 4) + 1)
    test_ms = 2 * step_ms(d_model, tested).sum() * max(1.0, n_test / 200)
    return float(train_ms + test_ms) / 1000


def max_steps(d_model: int, min_length: int, max_length: int, n_test: int = 200) -> int:
    """The most steps (at most MAX_STEPS) whose estimated time stays within ESTIMATE_LIMIT;
    0 if even the test alone would not."""
    fixed = estimated_seconds(d_model, min_length, max_length, 0, n_test)
    per_step = estimated_seconds(d_model, min_length, max_length, 1, n_test) - fixed
    return int(np.clip((ESTIMATE_LIMIT - fixed) // per_step, 0, MAX_STEPS))


@dataclass(frozen=True)
class BottleneckConfig:
    """Settings of one lesson-0 run (both models); the defaults are the page's defaults.

    d_model is the width d of every vector (embeddings, encoder and decoder states,
    the attention's hidden layer); strings are min_length..max_length symbols long;
    n_test fresh strings are decoded at each tested length. Adam's step size starts at
    lr and falls along half a cosine to lr / 10 (:func:`attncore.train.run.train`'s
    ``decay``). Measured with the attention model: at a constant 3e-3 (the prototype's
    rate) it reached only 0.94-0.99 token accuracy at length 12 over seeds 0-5, still
    rising at the last step; 0.012 with the decay reached 0.99-1.00 at 12 and 0.96-0.99
    at 16 in each of seeds 0-15 (the fixed model: 0.41-0.45 at 12).
    """

    seed: int = 0
    d_model: int = 32
    min_length: int = 3
    max_length: int = 16
    steps: int = 800
    batch: int = 64
    lr: float = 0.012
    n_test: int = 200
    checkpoints: int = 10

    def __post_init__(self):
        whole_number(self.seed, "seed", 0, 2**32 - 1)
        whole_number(self.d_model, "d_model", 4, MAX_D_MODEL)
        whole_number(self.min_length, "min_length", 1, MAX_LENGTH)
        whole_number(self.max_length, "max_length", self.min_length, MAX_LENGTH)
        whole_number(self.steps, "steps", 1, MAX_STEPS)
        whole_number(self.batch, "batch", 1, MAX_BATCH)
        whole_number(self.n_test, "n_test", 1, MAX_TEST)
        whole_number(self.checkpoints, "checkpoints", 1, 100)
        positive_number(self.lr, "lr")
        if self.lr > 0.1:
            raise ValueError(f"lr must lie in (0, 0.1]; got {self.lr!r}")
        most = max_steps(self.d_model, self.min_length, self.max_length, self.n_test)
        if self.steps > most:
            raise ValueError(
                f"steps must lie in 1..{most} at d_model={self.d_model} and lengths "
                f"{self.min_length}-{self.max_length} (more would train for over "
                f"{LIMIT_SECONDS:.0f} s); got {self.steps}. A smaller d_model or "
                "max_length allows more steps")

    @property
    def train_lengths(self) -> tuple[int, int]:
        return (self.min_length, self.max_length)

    @property
    def test_lengths(self) -> np.ndarray:
        """Every length from 2 to 20, or to 4 past the longest trained length if later."""
        longest = max(LONGEST_TESTED, self.max_length + 4)
        return np.arange(SHORTEST_TESTED, longest + 1)
