r"""Attention collapse and over-sparsity: the pooling model trained under bad settings.

The pooling-only sentiment model (fast, about a quarter of a second) is trained under
settings that break its attention, and the *normalised entropy* of its pooling
weights is followed over training:

.. math:: \tilde H = -\frac{1}{\log T}\sum_t a_t \log a_t \in [0, 1]

1 is uniform attention (collapse: every word weighs the same, nothing is picked
out); 0 is one-hot attention (over-sparse: one word takes everything, and the
softmax is saturated so its gradient all but vanishes, so a wrong first choice is
never corrected). A sensible run starts near 1 and falls as the weights move onto
the sentiment words.
"""

from __future__ import annotations

from .run import TrainingRun
from .sentiment import SentimentConfig, train_sentiment

STEPS = 200

SETTINGS = {
    "sensible (lr 0.01, scale 1, τ 1)": {},
    "too sharp: temperature τ = 0.05": {"temperature": 0.05},
    "too flat: temperature τ = 20": {"temperature": 20.0},
    "large initial scale (× 8)": {"init_scale": 8.0},
    "large step size (lr = 0.3)": {"lr": 0.3},
}


def train_setting(name: str, seed: int = 0, steps: int = STEPS, progress=None) -> TrainingRun:
    """Train the pooling-only sentiment model under ``SETTINGS[name]`` (the sentiment
    defaults otherwise) for ``steps`` steps.

    ``run.curves["pool_entropy"]`` is the mean normalised entropy at each checkpoint,
    ``run.curves["max_weight"]`` the mean largest weight.
    """
    if name not in SETTINGS:
        raise ValueError(f"name must be one of {list(SETTINGS)}; got {name!r}")
    config = SentimentConfig(model="pooling", seed=seed, steps=steps, **SETTINGS[name])
    return train_sentiment(config, progress=progress)
