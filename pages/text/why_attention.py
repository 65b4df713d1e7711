"""Lesson 0's sentences that depend on its trained models, as plain functions of them.

Each reads the readings of :mod:`attncore.copying` (or a decoding step, or the layer
counts of :mod:`attncore.recurrence`) and says what those numbers show: a direction, a
fall or a likely cause is stated only when the numbers give it.
"""

from __future__ import annotations

import numpy as np

from attncore.copying import AlignmentReading, LengthReading, PositionReading, StepReading
from attncore.recurrence import LayerComparison
from pages.ui.glossary import term_link
from pages.ui.numbers import difference_text, probability_text
from pages.ui.numbers import percent_text as percent  # never a false 0% or 100%

LETTERS = "ABCDEFGHIJKL"  # the 12 symbols, ids 0..11, shown as letters


def symbol(i: int) -> str:
    """A symbol id as the page writes it: a letter, or BOS for the decoder's first input."""
    return LETTERS[i] if 0 <= i < len(LETTERS) else "BOS"


def length_text(r: LengthReading, chance: float) -> str:
    """What the accuracy curves show, read from them."""
    # Tests start at length 2: a run trained on 1-letter strings alone has no tested
    # length inside its shaded band, and the sentence says so instead of calling 2 trained.
    where = ("On the trained lengths (shaded)" if r.any_trained else
             f"No tested length was trained (tests start at {r.first_tested}); from length "
             f"{r.first_tested}")
    longest = r.last_tested
    text = (f"{where} the attention model copies {percent(r.attention_low)} to "
            f"{percent(r.attention_high)} of the letters right; the fixed-context model goes "
            f"from {percent(r.fixed_first)} at length {r.first_tested} to "
            f"{percent(r.fixed_last)} at length {longest} (chance: {percent(chance)}).")
    if not r.not_ahead:
        text += " The attention model is ahead at every length tested."
    else:
        plural = "s" if len(r.not_ahead) > 1 else ""
        text += (f" The fixed model is level or ahead at length{plural} "
                 f"{', '.join(str(n) for n in r.not_ahead)}.")
    if r.far is not None:
        if r.attention_far < r.attention_last:
            text += (f" Past the trained lengths the attention model falls too, from "
                     f"{percent(r.attention_last)} at length {longest} to "
                     f"{percent(r.attention_far)} at length {r.far} (the fixed one "
                     f"{percent(r.fixed_far)}): likely because it never had to keep track of "
                     "a position that far, and where it looks depends on where the decoder is "
                     f"in the string, learned only up to length {longest}.")
        else:
            text += (f" Past the trained lengths the attention model keeps "
                     f"{percent(r.attention_far)} at length {r.far} "
                     f"(the fixed one {percent(r.fixed_far)}).")
    return text


def position_text(r: PositionReading, d_model: int) -> str:
    """Which positions the fixed model gets right most and least often."""
    row = r.accuracy
    return (f"At length {r.length} the fixed-context model gets position {r.best} right "
            f"most often ({percent(row[r.best - 1])}) and position {r.worst} least "
            f"({percent(row[r.worst - 1])}); the first letter {percent(row[0])}, the last "
            f"{percent(row[-1])}. Everything it knows about the source comes from the "
            f"{d_model} numbers of the encoder's last state, which the encoder rewrote "
            "at every letter.")


def alignment_text(r: AlignmentReading, n_test: int, max_length: int) -> str:
    """Where the attention model looks, and what the weight on the copied letter says.

    Why the weight spreads is not measured: it is offered as a likely reason only, and
    only when the example's length was trained (past it, the model is off its ground).
    """
    T = r.length
    if T > max_length:
        exact = (f"is {'not ' if r.copied < 0.9 else ''}close to 1; these strings of {T} "
                 f"letters are longer than any trained (at most {max_length}), so "
                 "this alignment shows the model past what it learned.")
    elif r.copied < 0.9:
        exact = ("is not close to 1. A likely reason (not measured here): an encoder state "
                 "is not a picture of its own letter but a mix of everything read so far "
                 "(h_(t+1) may still carry letter t), so neighbouring states can serve the "
                 "copy too.")
    else:
        exact = "comes close to 1."
    return (
        f"Each row is one step of decoding; its weights sum to 1 over the {T} encoder "
        f"states. Over {n_test} fresh strings of {T} letters, step t puts on "
        f"average {r.copied:.2f} of its weight on source position t, the letter it is "
        f"copying, {r.before:.2f} on position t − 1 and {r.after:.2f} on position "
        f"t + 1; in this string the largest weight is on position t or a neighbour in "
        f"{percent(r.near)} of the rows. The weight on the exact position {exact} This "
        "alignment was learned from the copying loss alone; nothing told the model which "
        "position to read.")


def step_text(step, check: StepReading, source: list[int], d_model: int) -> str:
    """One decoding step of the attention model in words: ``step`` is the model's own
    (attncore.train.bottleneck.trace_step), ``check`` its context computed again."""
    best = check.best
    gap = difference_text(check.difference, rounding=True)
    return (
        f"The decoder's previous state s_(t−1) gives a score e_ts for each source position "
        f"(its last letter plays no part in the score); the softmax turns them into "
        f"weights, largest on position {best} "
        f"({symbol(source[best - 1])}, {step.weights[best - 1]:.2f}). The context c_t is the "
        f"weighted sum of the {len(source)} encoder states ({d_model} numbers each; computed "
        f"again from the weights shown, it differs by {gap}). "
        f"The GRU mixes c_t and the last letter written ({symbol(step.previous_token)}) "
        f"into its new state, keeping on average "
        f"{check.mean_update:.2f} of the old one (its update gate z: "
        f"s_t = (1 − z)∘s̃_t + z∘s_(t−1), s̃_t the GRU's candidate state, PyTorch's "
        f"convention; Bahdanau et al. and lesson 6 write z the other way round); the output "
        f"layer gives {symbol(step.token)} the largest probability, "
        f"{probability_text(np.max(step.probabilities))}. "
        f"The letter to copy was {symbol(source[step.t - 1])}.")


def layers_text(compared: LayerComparison) -> str:
    """Recurrence against self-attention for the longest trained string: which part costs
    more is read from the counts."""
    cheaper = ("smaller" if compared.attention_multiply_adds < compared.gru_multiply_adds
               else "larger")
    return (
        f"For n = {compared.n} tokens (the longest trained string) and d = {compared.d}. The "
        "recurrent encoder above had to run its steps one after the other, and in the "
        "fixed-context model a letter at the start reached the decoder only through every "
        "update in between. Self-attention "
        "(lesson 1 on) compares every pair of positions at once, in one step, and gives every "
        "pair a direct path. Its cost per layer grows like n²·d against the recurrent n·d²; "
        f"here attention's own part is {cheaper} than the GRU's "
        f"({compared.attention_multiply_adds:,} against {compared.gru_multiply_adds:,} "
        f"{term_link('multiply-add', 'multiply-adds')}; the products of matrices only, biases "
        "and entry-by-entry products not counted). An RNN is sometimes said to cost "
        "O(n³): it is O(n·d²). Vaswani et al. (2017, table 1) compare the same three things; "
        "computing every position at once and the one-step path between any two positions "
        "are the reasons they give for the Transformer, which keeps attention and drops "
        "recurrence.")


def notice_items(lengths: LengthReading, alignment: AlignmentReading,
                 parameters: dict) -> list[str]:
    """The "What to notice" bullets: the fixed model's direction read from its two ends,
    the alignment's share, and the trained numbers attention adds."""
    attention, fixed = parameters["attention"], parameters["fixed"]
    over = "Over the trained lengths" if lengths.any_trained else "From the shortest tested length"
    return [
        f"{over} the fixed-context model {lengths.fixed_trend} from "
        f"{percent(lengths.fixed_first)} of the letters right at length {lengths.first_tested} "
        f"to {percent(lengths.fixed_last)} at length {lengths.last_tested}, while the attention "
        f"model stays between {percent(lengths.attention_low)} and "
        f"{percent(lengths.attention_high)}.",
        f"The alignment, learned from the copying loss alone: {percent(alignment.near)} of the "
        "output steps of the example put their largest weight on the position they copy or a "
        f"neighbour, and on average {alignment.copied:.2f} of it on the copied position itself.",
        f"The attention model has {attention - fixed:,} more trained numbers than the fixed one "
        f"(W, U and v of the score: {percent(attention / fixed - 1)} more); what it adds is a "
        "way to read every encoder state.",
    ]
