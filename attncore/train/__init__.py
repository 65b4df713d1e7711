"""attncore.train: small models that learn attention, in NumPy with hand-written gradients.

Modules, each one idea:

* ``layers`` — embedding, linear, softmax, cross-entropy (forward/backward pairs);
* ``attention`` — multi-head self-attention, attention pooling, cross-attention;
* ``optim`` — Adam and AdamW; ``run`` — the shared training loop and its result;
* ``sentiment``, ``alignment``, ``induction`` — the three lessons' tasks;
* ``gru``, ``bottleneck`` — lesson 0: a GRU encoder-decoder copying strings through a
  fixed-size context or with Bahdanau attention (``train_task("bottleneck")`` returns a
  :class:`BottleneckResult`: both models, their accuracy against length);
* ``collapse`` — attention collapse and over-sparsity under bad settings.

Their benchmarks are ``benchmarks/training.py`` and ``benchmarks/bottleneck.py``.

The attention score each task reports:

* sentiment: the mean held-out pooling weight on sentiment and negation words;
* alignment: the fraction of target words whose largest weight is on their source word;
* induction: the best layer-2 head's induction (prefix-matching) score.
"""

from __future__ import annotations

from .alignment import AlignmentConfig, train_alignment
from .bottleneck import BottleneckConfig, BottleneckResult, train_bottleneck
from .induction import InductionConfig, train_induction
from .run import TrainingRun
from .sentiment import SentimentConfig, train_sentiment

TASKS = {
    "sentiment": (SentimentConfig, train_sentiment),
    "alignment": (AlignmentConfig, train_alignment),
    "induction": (InductionConfig, train_induction),
    "bottleneck": (BottleneckConfig, train_bottleneck),
}


def train_task(task: str, seed: int = 0, progress=None,
               **settings) -> TrainingRun | BottleneckResult:
    """Train ``task`` at its defaults (the page's), changed by ``settings``; every result
    has ``summary()``, the figures the command line prints."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {sorted(TASKS)}; got {task!r}")
    config_type, trainer = TASKS[task]
    return trainer(config_type(seed=seed, **settings), progress=progress)


__all__ = [
    "AlignmentConfig",
    "BottleneckConfig",
    "BottleneckResult",
    "InductionConfig",
    "SentimentConfig",
    "TASKS",
    "TrainingRun",
    "train_alignment",
    "train_bottleneck",
    "train_induction",
    "train_sentiment",
    "train_task",
]
