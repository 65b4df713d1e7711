"""What lesson 0's two copying models show, read from their tests.

Lesson 0 trains a recurrent encoder-decoder that sees the source only through its last
state (the "fixed" model) and one with attention (:mod:`attncore.train.bottleneck`),
then tests both at every length. These functions read those tests where the lesson reads
them: the ends of the trained range, the positions the fixed model forgets (decoding its
own letters and with teacher forcing), how many test strings training had drawn too,
where the attention model looks, and one decoding step's context computed again from its
weights and its arithmetic written out. Each takes plain arrays (or a traced step) and
returns a frozen result; the page only lays them out.
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

    ``rebuilt`` is the context Σ_j α_tj h_j computed again from the model's full-precision
    weights, and ``difference`` its largest difference from the model's own context (0, or
    rounding); ``rounded_difference`` is that difference when the weights are first rounded
    to ``decimals`` decimals, as a reader copying printed weights gets it, and
    ``rounded_sum`` the sum of those rounded weights;
    ``best`` is the source position, counted from 1, with the largest weight;
    ``mean_update`` the mean of the GRU's update gate z, the share of the old state kept.
    """

    rebuilt: np.ndarray
    difference: float
    best: int
    mean_update: float
    rounded_difference: float
    rounded_sum: float
    decimals: int


def step_reading(weights, encoder_states, context, update, decimals: int = 2) -> StepReading:
    """Check one step: ``weights`` (S,) α_t over the source, ``encoder_states`` (S, d),
    the model's ``context`` c_t (d,) and update gate ``update`` (d,); ``decimals`` the
    decimals the weights are printed with.

    >>> r = step_reading([0.25, 0.75], [[1.0, 0.0], [0.0, 2.0]], [0.25, 1.5], [0.2, 0.4])
    >>> r.difference, r.best, round(r.mean_update, 3)
    (0.0, 2, 0.3)
    >>> # printed to 1 decimal, 0.25 and 0.75 read 0.2 and 0.8: c = (0.2, 1.6), 0.1 off
    >>> r = step_reading([0.25, 0.75], [[1.0, 0.0], [0.0, 2.0]], [0.25, 1.5], [0.2, 0.4], 1)
    >>> round(r.rounded_difference, 12), round(r.rounded_sum, 12)
    (0.1, 1.0)
    """
    weights = np.asarray(weights)
    states = np.asarray(encoder_states)
    if weights.ndim != 1 or states.ndim != 2 or states.shape[0] != weights.shape[0]:
        raise ValueError(f"weights (S,) and encoder states (S, d) must agree; got shapes "
                         f"{weights.shape} and {states.shape}")
    decimals = whole_number(decimals, "decimals", 0)
    rebuilt = weights @ states  # Σ_j α_tj h_j, in the model's own precision
    rounded = np.round(weights.astype(np.float64), decimals)  # as printed
    context = np.asarray(context)
    return StepReading(rebuilt=rebuilt,
                       difference=float(np.abs(rebuilt - context).max()),
                       best=int(np.argmax(weights)) + 1,
                       mean_update=float(np.mean(update)),
                       rounded_difference=float(np.abs(rounded @ states - context).max()),
                       rounded_sum=float(rounded.sum()), decimals=decimals)


@dataclass(frozen=True)
class ForcedReading:
    """The fixed model's accuracy at each output position of strings of ``length``
    symbols, decoding greedily (``greedy``: each step reads the model's own last output)
    and with teacher forcing (``forced``: each step reads the correct previous symbol), on
    the same strings. Both read BOS at position 1, so they agree there. ``widest`` is the
    position, counted from 1, where forced is furthest above greedy (the first such),
    ``lowest`` where forced is lowest.
    """

    length: int
    greedy: np.ndarray
    forced: np.ndarray
    widest: int
    lowest: int

    @property
    def gap(self) -> np.ndarray:
        """Forced minus greedy accuracy at each position: what errors compounding cost."""
        return self.forced - self.greedy


def forced_reading(lengths, greedy_by_position, forced_by_position, length: int) -> ForcedReading:
    """Read both (L, longest length) accuracies by position (NaN past each length) at
    ``length``, one of the ``lengths`` tested.

    >>> r = forced_reading([2, 3], [[1, .5, np.nan], [.9, .4, .2]],
    ...                    [[1, .6, np.nan], [.9, .7, .6]], 3)
    >>> r.widest, r.lowest, np.round(r.gap, 2).tolist()
    (3, 3, [0.0, 0.3, 0.4])
    """
    greedy = position_reading(lengths, greedy_by_position, length).accuracy
    forced = position_reading(lengths, forced_by_position, length).accuracy
    gap = forced - greedy
    return ForcedReading(length=int(length), greedy=greedy, forced=forced,
                         widest=int(np.argmax(gap)) + 1, lowest=int(np.argmin(forced)) + 1)


@dataclass(frozen=True)
class TrainingCoverage:
    """How many of the test strings training had drawn too.

    Each training step draws ``batch`` strings of one length, uniform over the
    ``trained`` lengths, so training draws about ``drawn`` = steps × batch / trained
    strings of each (expected). A length n has ``possible`` = symbols^n strings; a test
    string, uniform over them, was also drawn in training with probability ``share`` =
    1 − (1 − 1/possible)^drawn (0 for a length not trained): the expected share of the
    test strings of that length that were training strings. One entry per tested length
    in ``lengths``.
    """

    steps: int
    batch: int
    min_length: int
    max_length: int
    drawn: float
    lengths: tuple[int, ...]
    possible: tuple[int, ...]
    share: np.ndarray

    @property
    def trained(self) -> int:
        return self.max_length - self.min_length + 1


def training_coverage(lengths, min_length: int, max_length: int, steps: int, batch: int,
                      symbols: int) -> TrainingCoverage:
    """The :class:`TrainingCoverage` of a run trained on ``min_length`` to ``max_length``
    for ``steps`` steps of ``batch`` strings of ``symbols`` symbols, tested at ``lengths``.

    >>> c = training_coverage([2, 3], 2, 3, 10, 4, 2)  # 20 strings of each length drawn
    >>> c.drawn, c.possible, np.round(c.share, 4).tolist()
    (20.0, (4, 8), [0.9968, 0.9308])
    """
    lengths = _lengths(lengths)
    low = whole_number(min_length, "min_length", 1)
    high = whole_number(max_length, "max_length", low)
    steps = whole_number(steps, "steps", 1)
    batch = whole_number(batch, "batch", 1)
    symbols = whole_number(symbols, "symbols", 2)
    drawn = steps * batch / (high - low + 1)
    possible = tuple(symbols ** int(n) for n in lengths)
    trained = (lengths >= low) & (lengths <= high)
    # 1 − (1 − 1/N)^k, written so that a huge N (12^20) keeps its digits
    share = np.where(trained, -np.expm1(drawn * np.log1p(-1.0 / np.array(possible, float))),
                     0.0)
    return TrainingCoverage(steps=steps, batch=batch, min_length=low, max_length=high,
                            drawn=float(drawn), lengths=tuple(int(n) for n in lengths),
                            possible=possible, share=share)


@dataclass(frozen=True)
class StepArithmetic:
    """One step t of the attention model's decoding, with every number its arithmetic
    shows (from :func:`attncore.train.bottleneck.trace_step`).

    Score: ``position`` b, counted from 1, is the source position with the largest weight;
    its score e_tb = Σ_a v_a tanh(q_a + u_a) adds ``score_terms`` (A,), from ``v``,
    ``q`` = W s_(t−1) and ``u`` = U h_b (A,) each; ``scores`` e_tj (S,) are every
    position's. Softmax: ``shift`` m = max_j e_tj, ``exps`` e^(e_tj − m) (S,), ``total``
    Z their sum, ``weights`` = exps / Z (S,). Context: ``top`` the positions of the
    largest weights (largest first), ``top_states`` (len(top), d) their h_j, ``rest``
    (d,) Σ α_tj h_j over the other positions; ``context`` c_t = Σ_top α_tj h_j + rest.
    Output: ``token`` the symbol written (the largest logit) and ``runner_up`` the next;
    logits = ``from_state`` + ``from_context`` + ``bias`` (V,); ``out_shift`` their
    largest, ``out_exps`` e^(logit − out_shift) (V,), ``out_total`` their sum and
    ``probabilities`` = out_exps / out_total.
    """

    t: int
    position: int
    v: np.ndarray
    q: np.ndarray
    u: np.ndarray
    score_terms: np.ndarray
    scores: np.ndarray
    shift: float
    exps: np.ndarray
    total: float
    weights: np.ndarray
    top: tuple[int, ...]
    top_states: np.ndarray
    rest: np.ndarray
    context: np.ndarray
    token: int
    runner_up: int
    from_state: np.ndarray
    from_context: np.ndarray
    bias: np.ndarray
    logits: np.ndarray
    out_shift: float
    out_exps: np.ndarray
    out_total: float
    probabilities: np.ndarray


def step_arithmetic(step, encoder_states, shown: int = 3) -> StepArithmetic:
    """The arithmetic of one traced step ``step`` (a DecodingStep: its scores, the score's
    v, W s_(t−1) and U h_j, the output layer's parts) over ``encoder_states`` (S, d),
    with the ``shown`` largest weights written out in the context (in float64, from the
    model's own numbers).

    >>> from types import SimpleNamespace as N
    >>> # scores 0 and 2 ln 2 · tanh(artanh 1/2) = ln 2: weights 1/3 and 2/3
    >>> s = N(t=1, score_weights=np.array([2 * np.log(2)]), projected_state=np.array([0.0]),
    ...       projected_sources=np.array([[0.0], [np.arctanh(0.5)]]),
    ...       from_state=np.array([1.0, 0.0]), from_context=np.array([0.0, 0.0]),
    ...       output_bias=np.array([0.0, 0.0]))
    >>> a = step_arithmetic(s, [[1.0, 0.0], [0.0, 1.0]], shown=1)
    >>> a.position, a.top, np.round(a.rest, 12).tolist(), a.token, a.runner_up
    (2, (2,), [0.333333333333, 0.0], 0, 1)
    """
    states = as_real_array(encoder_states, "encoder_states", min_ndim=2).astype(np.float64)
    v = np.asarray(step.score_weights, dtype=np.float64)
    q = np.asarray(step.projected_state, dtype=np.float64)
    sources = np.asarray(step.projected_sources, dtype=np.float64)  # (S, A)
    if states.ndim != 2 or sources.ndim != 2 or sources.shape[0] != states.shape[0]:
        raise ValueError(f"the step's U h_j (S, A) and the encoder states (S, d) must have "
                         f"one row per source position; got {sources.shape} and {states.shape}")
    shown = whole_number(shown, "shown", 1)
    every = np.tanh(q + sources) * v  # (S, A): v_a tanh(q_a + u_sa)
    scores = every.sum(axis=1)
    shift = float(scores.max())
    exps = np.exp(scores - shift)
    total = float(exps.sum())
    weights = exps / total
    order = np.argsort(-weights, kind="stable")
    top = order[:shown]
    others = order[shown:]
    rest = weights[others] @ states[others] if others.size else np.zeros(states.shape[1])
    context = weights @ states
    parts = [np.asarray(x, dtype=np.float64) for x in
             (step.from_state, step.from_context, step.output_bias)]
    logits = parts[0] + parts[1] + parts[2]
    ranked = np.argsort(-logits, kind="stable")
    out_shift = float(logits.max())
    out_exps = np.exp(logits - out_shift)
    b = int(order[0])
    return StepArithmetic(
        t=int(step.t), position=b + 1, v=v, q=q, u=sources[b], score_terms=every[b],
        scores=scores, shift=shift, exps=exps, total=total, weights=weights,
        top=tuple(int(i) + 1 for i in top), top_states=states[top], rest=rest,
        context=context, token=int(ranked[0]), runner_up=int(ranked[1]),
        from_state=parts[0], from_context=parts[1], bias=parts[2], logits=logits,
        out_shift=out_shift, out_exps=out_exps, out_total=float(out_exps.sum()),
        probabilities=out_exps / out_exps.sum())
