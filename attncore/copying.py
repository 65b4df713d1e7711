"""What lesson 0's two copying models show, read from their tests.

Lesson 0 trains a recurrent encoder-decoder that sees the source only through its last
state (the "fixed" model) and one with attention (:mod:`attncore.train.bottleneck`),
then tests both at every length. These functions read those tests where the lesson reads
them: the ends of the trained range, the positions the fixed model forgets, where the
attention model looks, and one decoding step's context computed again from its weights.
Each takes plain arrays and returns a frozen result; the page only lays them out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ._checks import as_real_array, whole_number

MODELS = ("fixed", "attention")


@dataclass(frozen=True)
class LengthReading:
    """Token accuracy against length, read at the ends of the trained range.

    ``first_tested`` and ``last_tested`` are the shortest and longest trained lengths that
    were tested; when no tested length was trained (a run on 1-letter strings, tests start
    at 2) both are the first tested length and ``any_trained`` is False. The attention
    model's accuracy runs from ``attention_low`` to ``attention_high`` over the trained
    lengths tested and ``last_tested``; ``fixed_first``, ``fixed_last`` and
    ``attention_last`` are the accuracies at the two ends. ``not_ahead`` lists the lengths
    where the attention model is not above the fixed one. ``far`` is the longest tested
    length past ``last_tested`` (None when there is none), where the two models reach
    ``attention_far`` and ``fixed_far`` (NaN when there is none).
    """

    any_trained: bool
    first_tested: int
    last_tested: int
    attention_low: float
    attention_high: float
    attention_last: float
    fixed_first: float
    fixed_last: float
    not_ahead: tuple[int, ...]
    far: int | None
    attention_far: float
    fixed_far: float

    @property
    def fixed_trend(self) -> str:
        """Where the fixed model goes from ``first_tested`` to ``last_tested``: "falls",
        "stays" or "rises", read from the two accuracies, not assumed."""
        if self.fixed_last < self.fixed_first:
            return "falls"
        return "stays" if self.fixed_last == self.fixed_first else "rises"


def _lengths(lengths) -> np.ndarray:
    arr = np.asarray(lengths)
    if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"lengths must be a non-empty list of whole numbers; got {lengths!r}")
    if np.any(np.diff(arr) <= 0):
        raise ValueError(f"lengths must increase; got {arr.tolist()}")
    return arr


def length_reading(lengths, accuracy: Mapping[str, np.ndarray], min_length: int,
                   max_length: int) -> LengthReading:
    """Read ``accuracy[model]`` (L,) at the tested ``lengths`` (L,) of models trained on
    strings of ``min_length`` to ``max_length`` symbols (see :class:`LengthReading`).

    >>> r = length_reading([2, 3, 4, 5], {"fixed": [0.9, 0.8, 0.5, 0.3],
    ...                                  "attention": [1.0, 1.0, 0.95, 0.6]}, 3, 4)
    >>> r.first_tested, r.last_tested, r.fixed_trend, r.far, r.attention_far
    (3, 4, 'falls', 5, 0.6)
    """
    lengths = _lengths(lengths)
    low = whole_number(min_length, "min_length", 1)
    high = whole_number(max_length, "max_length", low)
    acc = {}
    for model in MODELS:
        if model not in accuracy:
            raise ValueError(f"accuracy needs the models {MODELS}; got {sorted(accuracy)}")
        acc[model] = as_real_array(accuracy[model], f"accuracy of the {model} model",
                                   min_ndim=1)
        if acc[model].shape != lengths.shape:
            raise ValueError(f"accuracy of the {model} model must have one value per length "
                             f"({lengths.size}); got shape {acc[model].shape}")
    trained = (lengths >= low) & (lengths <= high)
    first = int(lengths[trained][0]) if trained.any() else int(lengths[0])
    last = int(lengths[trained][-1]) if trained.any() else int(lengths[0])
    inside = acc["attention"][trained | (lengths == last)]
    at_first, at_last = lengths == first, lengths == last
    ahead = acc["attention"] > acc["fixed"]
    past = lengths > last
    return LengthReading(
        any_trained=bool(trained.any()), first_tested=first, last_tested=last,
        attention_low=float(inside.min()), attention_high=float(inside.max()),
        attention_last=float(acc["attention"][at_last][0]),
        fixed_first=float(acc["fixed"][at_first][0]),
        fixed_last=float(acc["fixed"][at_last][0]),
        not_ahead=tuple(int(n) for n in lengths[~ahead]),
        far=int(lengths[past][-1]) if past.any() else None,
        attention_far=float(acc["attention"][past][-1]) if past.any() else float("nan"),
        fixed_far=float(acc["fixed"][past][-1]) if past.any() else float("nan"),
    )


@dataclass(frozen=True)
class PositionReading:
    """The fixed model's accuracy at each output position.

    ``grid`` (rows: ``shown_lengths``, the tested lengths from 2 on; columns: positions 1
    to the longest of them; NaN past each length). At ``length`` the accuracy at each of
    its positions is ``accuracy`` (length,); ``best`` and ``worst`` are the positions,
    counted from 1, it gets right most and least often (the first such on a tie).
    """

    shown_lengths: tuple[int, ...]
    grid: np.ndarray
    length: int
    accuracy: np.ndarray
    best: int
    worst: int


def position_reading(lengths, by_position, length: int) -> PositionReading:
    """Read ``by_position`` (L, longest length): accuracy at each output position of each
    tested length (NaN past it), at ``length``, one of the ``lengths`` tested.

    >>> r = position_reading([2, 3], [[1.0, 0.5, np.nan], [0.9, 0.4, 0.7]], 3)
    >>> r.best, r.worst, r.grid.shape
    (1, 2, (2, 3))
    """
    lengths = _lengths(lengths)
    by_position = np.asarray(by_position, dtype=np.float64)
    if by_position.ndim != 2 or by_position.shape[0] != lengths.size:
        raise ValueError(f"by_position must have one row per length ({lengths.size}); got "
                         f"shape {by_position.shape}")
    length = whole_number(length, "length", 1, by_position.shape[1])
    if length not in lengths:
        raise ValueError(f"length {length} was not tested; tested: {lengths.tolist()}")
    shown = lengths >= 2
    if not shown.any():
        raise ValueError("no tested length has two positions or more")
    shown_lengths = tuple(int(n) for n in lengths[shown])
    row = by_position[lengths == length][0][:length]
    return PositionReading(
        shown_lengths=shown_lengths, grid=by_position[shown][:, :max(shown_lengths)],
        length=length, accuracy=row, best=int(np.argmax(row)) + 1,
        worst=int(np.argmin(row)) + 1)


@dataclass(frozen=True)
class AlignmentReading:
    """Where the attention model looks while copying.

    Over many fresh strings of ``length`` symbols, output step t puts on average
    ``copied`` of its weight on source position t (the letter it copies), ``before`` on
    t − 1 and ``after`` on t + 1. In one example string, ``near`` is the share of output
    steps whose largest weight lies on position t or a neighbour (t ± 1).
    """

    length: int
    copied: float
    before: float
    after: float
    near: float


def alignment_reading(weights, offset_weights, offsets) -> AlignmentReading:
    """Read one example's weights (T, T) (output steps × source positions) and the mean
    weight ``offset_weights`` at each source-minus-output ``offsets`` (which hold −1, 0
    and 1).

    >>> r = alignment_reading(np.eye(3)[[0, 2, 1]], [0.1, 0.8, 0.1], [-1, 0, 1])
    >>> r.copied, round(r.near, 3)
    (0.8, 1.0)
    """
    weights = as_real_array(weights, "weights", min_ndim=2)
    if weights.ndim != 2 or weights.shape[0] != weights.shape[1]:
        raise ValueError(f"weights must be square (output steps × source positions); got "
                         f"shape {weights.shape}")
    by_offset = dict(zip((int(k) for k in offsets), np.asarray(offset_weights, dtype=float),
                         strict=True))
    missing = {-1, 0, 1} - set(by_offset)
    if missing:
        raise ValueError(f"offsets must hold -1, 0 and 1; missing {sorted(missing)}")
    T = weights.shape[0]
    near = np.mean(np.abs(weights.argmax(axis=1) - np.arange(T)) <= 1)
    return AlignmentReading(length=T, copied=float(by_offset[0]), before=float(by_offset[-1]),
                            after=float(by_offset[1]), near=float(near))


@dataclass(frozen=True)
class StepReading:
    """One decoding step of the attention model, checked.

    ``rebuilt`` is the context Σ_s α_ts h_s computed again from the weights shown, and
    ``difference`` its largest difference from the model's own context (0, or rounding);
    ``best`` is the source position, counted from 1, with the largest weight;
    ``mean_update`` the mean of the GRU's update gate z, the share of the old state kept.
    """

    rebuilt: np.ndarray
    difference: float
    best: int
    mean_update: float


def step_reading(weights, encoder_states, context, update) -> StepReading:
    """Check one step: ``weights`` (S,) α_t over the source, ``encoder_states`` (S, d),
    the model's ``context`` c_t (d,) and update gate ``update`` (d,).

    >>> r = step_reading([0.25, 0.75], [[1.0, 0.0], [0.0, 2.0]], [0.25, 1.5], [0.2, 0.4])
    >>> r.difference, r.best, round(r.mean_update, 3)
    (0.0, 2, 0.3)
    """
    weights = np.asarray(weights)
    states = np.asarray(encoder_states)
    if weights.ndim != 1 or states.ndim != 2 or states.shape[0] != weights.shape[0]:
        raise ValueError(f"weights (S,) and encoder states (S, d) must agree; got shapes "
                         f"{weights.shape} and {states.shape}")
    rebuilt = weights @ states  # Σ_s α_ts h_s, in the model's own precision
    return StepReading(rebuilt=rebuilt,
                       difference=float(np.abs(rebuilt - np.asarray(context)).max()),
                       best=int(np.argmax(weights)) + 1,
                       mean_update=float(np.mean(update)))
