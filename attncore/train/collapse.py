r"""Attention collapse and over-sparsity: the pooling model trained under bad settings.

The pooling-only sentiment model (fast, about a quarter of a second) is trained under
settings that may break its attention, and the *normalised entropy* of its pooling
weights is followed over training:

.. math:: \tilde H = -\frac{1}{\log T}\sum_t a_t \log a_t \in [0, 1]

1 is uniform attention (collapse: every word weighs the same, nothing is picked
out); 0 is one-hot attention (one word takes everything, and the softmax is saturated
so its gradient all but vanishes). A sensible run starts near 1 and falls as the
weights move onto the sentiment words, at seed 0 down to nearly one-hot on them: one-hot
at the end is what it learnt. One-hot at the start is what harms: the weights sit on
words chance chose and get almost no gradient to leave them.

Which settings attention recovers from is measured, not assumed: :func:`outcome` says
how a run started (nearly one-hot, nearly uniform, or in between) and whether its
weight moved onto the key words. At seed 0 a low temperature (τ = 0.05) starts sharp
but not one-hot and recovers; a large initial scale starts nearly one-hot on the wrong
words and stays there.
"""

from __future__ import annotations

from dataclasses import dataclass

from .run import TrainingRun
from .sentiment import SentimentConfig, train_sentiment

STEPS = 200

SETTINGS = {
    "sensible (lr 0.01, scale 1, τ 1)": {},
    "low temperature τ = 0.05": {"temperature": 0.05},
    "high temperature τ = 20": {"temperature": 20.0},
    "large initial scale (× 8)": {"init_scale": 8.0},
    "large step size (lr = 0.3)": {"lr": 0.3},
}
SENSIBLE = next(iter(SETTINGS))

#: A run "starts nearly one-hot" when at least this share of the held-out sentences'
#: pooling rows are nearly one-hot (largest weight above NEARLY_ONE_HOT) at step 0.
ONE_HOT_SHARE = 0.5
#: A run's pooling weights are "nearly uniform" at a mean normalised entropy this high.
NEARLY_UNIFORM = 0.95
#: A run's pooling weights are "sharp" below this mean normalised entropy (and not nearly
#: one-hot), "spread" from here up to NEARLY_UNIFORM.
SHARP = 0.5
#: The weight on the key words "moves onto them" when it rises by at least this much.
MOVED = 0.25


def train_setting(name: str, seed: int = 0, steps: int = STEPS, progress=None) -> TrainingRun:
    """Train the pooling-only sentiment model under ``SETTINGS[name]`` (the sentiment
    defaults otherwise) for ``steps`` steps.

    ``run.curves["pool_entropy"]`` is the mean normalised entropy at each checkpoint,
    ``run.curves["max_weight"]`` the mean largest weight, ``run.curves["one_hot_share"]``
    the share of nearly one-hot rows.
    """
    if name not in SETTINGS:
        raise ValueError(f"name must be one of {list(SETTINGS)}; got {name!r}")
    config = SentimentConfig(model="pooling", seed=seed, steps=steps, **SETTINGS[name])
    return train_sentiment(config, progress=progress)


@dataclass(frozen=True)
class Outcome:
    """How one run's pooling attention started and ended, on the held-out sentences.

    ``entropy_*``: mean normalised entropy; ``one_hot_*``: share of nearly one-hot rows;
    ``key_*``: mean weight on sentiment and negation words; ``accuracy``: at the end.
    """

    entropy_start: float
    entropy_end: float
    one_hot_start: float
    one_hot_end: float
    key_start: float
    key_end: float
    accuracy: float

    @property
    def start(self) -> str:
        """"nearly one-hot", "nearly uniform", "sharp" (entropy below SHARP) or "spread"."""
        return _state(self.entropy_start, self.one_hot_start)

    @property
    def end(self) -> str:
        return _state(self.entropy_end, self.one_hot_end)

    @property
    def moved(self) -> bool:
        """Whether the weight on the key words rose by at least MOVED."""
        return self.key_end - self.key_start >= MOVED


def _state(entropy: float, one_hot: float) -> str:
    if one_hot >= ONE_HOT_SHARE:
        return "nearly one-hot"
    if entropy >= NEARLY_UNIFORM:
        return "nearly uniform"
    return "sharp" if entropy < SHARP else "spread"


def outcome(run: TrainingRun) -> Outcome:
    """The :class:`Outcome` of a pooling run (from :func:`train_setting`)."""
    c = run.curves
    return Outcome(
        entropy_start=float(c["pool_entropy"][0]), entropy_end=float(c["pool_entropy"][-1]),
        one_hot_start=float(c["one_hot_share"][0]), one_hot_end=float(c["one_hot_share"][-1]),
        key_start=float(run.scores[0]), key_end=float(run.scores[-1]),
        accuracy=float(run.accuracy[-1]))
