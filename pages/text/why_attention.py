"""Lesson 0's sentences that depend on its trained models, as plain functions of them.

Each reads the readings of :mod:`attncore.copying` (or a decoding step, or the layer
counts of :mod:`attncore.recurrence`) and says what those numbers show: a direction, a
fall or a likely cause is stated only when the numbers give it.
"""

from __future__ import annotations

import numpy as np

from attncore.copying import (
    AlignmentReading,
    ForcedReading,
    LengthReading,
    PositionReading,
    StepReading,
    TrainingCoverage,
)
from attncore.recurrence import LayerComparison
from attncore.train.bottleneck import EarlierStates
from pages.ui.glossary import term_link
from pages.ui.numbers import (
    difference_text,
    number_text,
    probability_text,
    significant_text,
    superscript,
)
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


def introduction_text(symbols: int) -> str:
    """The two models and the task, before the page's figures (off a projector)."""
    return (
        "Before Transformers, neural machine translation was mostly done by two recurrent "
        "networks (here "
        f"{term_link('gru', 'GRUs')}, gated recurrent units): an **encoder** reads the source "
        "one token at a time, updating a state vector, and a **decoder** writes the output "
        "one token at a time from its own state "
        f"({term_link('decoder-state', 'the states hⱼ and sₜ')}). In the first such models "
        "(Sutskever et al. 2014, Cho et al. 2014) the decoder saw the source only through "
        "the encoder's **last** state: one vector of d numbers, whatever the sentence's "
        "length. Bahdanau, Cho and Bengio (2015) let the decoder look back at **every** "
        "encoder state at each step, with weights from a softmax: attention. Here both "
        "models learn the simplest task that needs the whole source, copying a random "
        f"string of the {symbols} letters {LETTERS[0]} to {LETTERS[symbols - 1]}, so that "
        "nothing but memory can help.")


def progress_text(done: int, total: int) -> str:
    """The progress bar's label while both models train: ``done`` of ``total`` steps in
    all, the fixed model's first (total = 2 × steps), counted per model."""
    steps = total // 2
    if done <= steps:
        return f"Training the fixed-context model: step {done} of {steps}"
    return f"Training the attention model: step {done - steps} of {steps}"


def _and(items: list) -> str:
    """'2', '2 and 3', '2, 3 and 4'."""
    words = [str(i) for i in items]
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]


def test_strings_text(n_test: int, c: TrainingCoverage) -> str:
    """What the test strings are: drawn anew for the test, so at a short trained length
    many were trained on too, and at a length with fewer possible strings than draws some
    repeat."""
    most = [n for n, share in zip(c.lengths, c.share, strict=True) if share >= 0.5]
    some = [n for n, share in zip(c.lengths, c.share, strict=True) if share > 0]
    if most:
        trained = f"at {_and(most)} letters most were also trained on"
    elif some:
        trained = "at the trained lengths some may also have been trained on"
    else:
        trained = "no tested length was trained, so none was trained on"
    text = f"drawn anew, not kept apart from training: {trained}"
    few = [(n, total) for n, total in zip(c.lengths, c.possible, strict=True) if total < n_test]
    if len(few) == 1:
        text += (f"; only {few[0][1]:,} strings of {few[0][0]} letters exist, so the "
                 f"{n_test} draws must repeat some")
    elif few:
        counts = _and([f"{total:,} of {n} letters" for n, total in few])
        text += f"; only {counts} exist, so the {n_test} draws must repeat some"
    return text


def comparison_text(n_test: int, first: int, last: int, symbols: int,
                    coverage: TrainingCoverage) -> str:
    """What the accuracy chart compares, defined where it is read (also on a projector,
    where the introduction is hidden)."""
    return (
        "**Fixed context**: the decoder reads the encoder's last state h_n alone, at every "
        "step. **Attention**: at each step t it reads every encoder state h_j, weighted by "
        "α_tj (weights that sum to 1 over the source positions j). Each model is tested on "
        f"{n_test} fresh random strings of each length from {first} to {last} "
        f"({test_strings_text(n_test, coverage)}), writing every letter "
        "after its own previous one and always the most likely "
        f"({term_link('greedy', 'greedy decoding')}). **Token accuracy** is the share of "
        f"letters written right; chance, a blind guess among the {symbols} letters, gets "
        f"1/{symbols}.")


def bahdanau_text() -> str:
    """The paper's figure that the accuracy chart echoes."""
    return (
        "Compare Bahdanau et al.'s figure 2: their models without attention lose "
        f"{term_link('bleu', 'BLEU')} (a score of a translation against a reference "
        "translation) steadily as sentences grow; the one with attention trained on sentences "
        "of up to 50 words holds (the one trained on up to 30 falls too, later). A vector of "
        "d numbers can hold only so much of a string; attention reads the encoder's states "
        "again at every step instead.")


def coverage_text(c: TrainingCoverage, symbols: int) -> str:
    """How many test strings of each short length training had drawn too (expected, from
    the settings): most at a length with few possible strings, few past it."""
    span = (f"each length from {c.min_length} to {c.max_length}" if c.trained > 1
            else f"length {c.min_length}")
    text = (f"Training drew about {c.drawn:,.0f} strings of {span} ({c.steps:,} steps of "
            f"{c.batch} strings, each step one length).")
    tested = [(n, total, share) for n, total, share in zip(c.lengths, c.possible, c.share,
                                                           strict=True)
              if c.min_length <= n <= c.max_length]
    if not tested:
        return text + " No tested length was trained: every test string was new."
    first_new = next((i for i, item in enumerate(tested) if item[2] < 0.5), None)
    shown = tested if first_new is None else tested[:first_new + 1]
    parts = [f"of the {symbols}{superscript(n)} = {total:,} possible strings of {n} letters "
             f"it drew about {percent(share)}" if k == 0 else
             f"of the {symbols}{superscript(n)} = {total:,} of {n} letters about "
             f"{percent(share)}" for k, (n, total, share) in enumerate(shown)]
    listed = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
    text += " O" + listed[1:]  # "of the ..." opens the sentence
    most = [str(n) for n, _, share in tested if share >= 0.5]
    if not most:
        return text + ": at every length tested most test strings were new."
    said = ", ".join(most[:-1]) + " and " + most[-1] if len(most) > 1 else most[0]
    text += f": at {said} letters most test strings had also been trained on"
    if first_new is None:
        return text + "."
    return text + f"; from {tested[first_new][0]} letters on most were new."


def predict_text(length: int) -> str:
    """The question asked before the positions' figure."""
    return (f"**Predict first:** the encoder reads a string of {length} letters from left to "
            "right, and the fixed model's decoder starts from its last state. Which letters "
            "will it copy right most often: the first ones or the last ones? Decide, then "
            "look.")


def forced_text(r: ForcedReading) -> str:
    """Errors that compound against what the state holds: teacher-forced against greedy
    accuracy by position, each conclusion chosen by the numbers."""
    n, g, f = r.length, r.greedy, r.forced
    low = f[r.lowest - 1]
    text = (
        "Two things can lose the later letters: errors that compound (each wrong letter is "
        "read by the next step) and a state that does not hold them. "
        f"{term_link('teacher-forcing', 'Teacher forcing')} separates them: each step reads "
        f"the correct previous letter, as in training. At length {n} the fixed model then "
        f"gets the first letter right {percent(f[0])} of the time and the last "
        f"{percent(f[-1])} (greedy: {percent(g[0])} and {percent(g[-1])}); its lowest is "
        f"position {r.lowest}, {percent(low)}.")
    if f[-1] < f[0]:
        text += (" Even with no earlier mistake to follow it copies the later letters less "
                 "often than the first: what the decoder recovers from the state falls along "
                 "the string.")
    else:
        text += (" With no earlier mistake to follow it copies the last letter as often as the "
                 "first or more: the fall along the string comes from errors compounding.")
    gap = r.gap
    if gap.max() > 0:
        every = " at every later position" if (gap[1:] > 0).all() else ""
        w = r.widest - 1
        # with a decimal, so that the two shares and their difference add up as printed
        text += (f" Greedy decoding gets fewer right{every}, by up to {percent(gap.max(), 1)} "
                 f"of the strings (position {r.widest}: {percent(r.forced[w], 1)} against "
                 f"{percent(r.greedy[w], 1)}): that part is errors compounding.")
    else:
        text += " Greedy decoding gets no fewer right at any position: no errors compound."
    if r.lowest < n and f[-1] > low:
        text += (f" With teacher forcing the last letter ({percent(f[-1])}), read last by the "
                 f"encoder, is copied more often than position {r.lowest}.")
    return text


def position_text(r: PositionReading, d_model: int) -> str:
    """Which positions the fixed model gets right most and least often."""
    row = r.accuracy
    return (f"At length {r.length} the fixed-context model gets position {r.best} right "
            f"most often ({percent(row[r.best - 1])}) and position {r.worst} least "
            f"({percent(row[r.worst - 1])}); the first letter {percent(row[0])}, the last "
            f"{percent(row[-1])}. Everything it knows about the source comes from the "
            f"{d_model} numbers of the encoder's last state.")


def alignment_text(r: AlignmentReading, earlier: EarlierStates, n_test: int,
                   max_length: int) -> str:
    """Where the attention model looks, and what its weight before the copied letter is
    for: measured (the copy with and without it), its reason left open."""
    T = r.length
    text = (
        f"Each row is one step of decoding; its weights sum to 1 over the {T} encoder "
        f"states. Over {n_test} fresh strings of {T} letters, step t puts on "
        f"average {r.copied:.2f} of its weight on source position t, the letter it is "
        f"copying, {r.before:.2f} on position t − 1 and {r.after:.2f} on position "
        f"t + 1; in this string the largest weight is on position t or a neighbour in "
        f"{percent(r.near)} of the rows.")
    if T > max_length:
        text += (f" The weight on the exact position is {'not ' if r.copied < 0.9 else ''}"
                 f"close to 1; these strings of {T} letters are longer than any trained (at "
                 f"most {max_length}), so this alignment shows the model past what it learned.")
    return text + " " + earlier_text(earlier) + (
        " This alignment was learned from the copying loss alone; nothing told the model "
        "which position to read.")


def earlier_text(e: EarlierStates) -> str:
    """Only h_t and later states can carry letter t; what the weight on the earlier ones
    is for is measured by moving it onto them, its reason is not."""
    before, later = percent(e.accuracy), percent(e.accuracy_later_only)
    if e.accuracy_later_only >= e.accuracy:
        verdict = "so the copy does not need the earlier states"
    elif e.accuracy_later_only >= e.accuracy - 0.01:
        verdict = "so the copy barely depends on the earlier states"
    else:
        verdict = ("so the model uses the earlier states, for something other than letter t "
                   "(what, is not measured here)")
    return (
        "The encoder reads left to right, so h_(t−1) and the states before it have not read "
        "letter t: only h_t and later states can carry it. Over the steps that have earlier "
        f"states (steps 2 to {e.length}), {e.weight_before:.2f} of the weight, on average, "
        f"still falls on them, {e.weight_previous:.2f} of it on h_(t−1) alone. Why is "
        "not measured here; whether the copy needs it is: letting each step read h_t and "
        "later states only (the same scores, the softmax over those alone) takes the "
        f"accuracy on the same {e.strings} strings from {before} to {later}, {verdict}.")


def step_text(step, check: StepReading, source: list[int], d_model: int) -> str:
    """One decoding step of the attention model in words: ``step`` is the model's own
    (attncore.train.bottleneck.trace_step), ``check`` its context computed again."""
    best = check.best
    gap = difference_text(check.difference, rounding=True)
    places = check.decimals
    off = check.rounded_difference
    printed = ("exactly 0" if off == 0 else significant_text(off, 2))
    return (
        f"The decoder's previous state s_(t−1) gives a score e_tj for each source position "
        f"(its last letter plays no part in the score); the softmax turns them into "
        f"weights, largest on position {best} "
        f"({symbol(source[best - 1])}, {step.weights[best - 1]:.2f}). The context c_t is the "
        f"weighted sum of the {len(source)} encoder states ({d_model} numbers each; computed "
        f"again from the full-precision weights (shown rounded to {places} decimals), it "
        f"differs by {gap}; from the rounded weights, which add up to "
        f"{number_text(check.rounded_sum, places)}, by up to {printed}). "
        f"The GRU mixes c_t and the last letter written ({symbol(step.previous_token)}) "
        f"into its new state, keeping on average "
        f"{check.mean_update:.2f} of the old one (its update gate z: "
        f"s_t = (1 − z)∘s̃_t + z∘s_(t−1), s̃_t the GRU's candidate state, PyTorch's "
        f"convention; Bahdanau et al. and lesson 6 write z the other way round); the output "
        f"layer gives {symbol(step.token)} the largest probability, "
        f"{probability_text(np.max(step.probabilities))}. "
        f"The letter to copy was {symbol(source[step.t - 1])}.")


def layers_lead(compared: LayerComparison) -> str:
    """What the table compares, with its terms defined before it."""
    return (
        f"One layer of each kind on n = {compared.n} tokens (the longest trained string) of "
        f"d = {compared.d} numbers. A recurrent layer (a GRU, as above) updates its state "
        f"token by token. A {term_link('self-attention', 'self-attention')} layer lets every "
        "position of one sequence look at every other at once, after four learned "
        f"{term_link('projection', 'projections')}, d × d matrices, turn each token's vector "
        "into a query, a key and a value and map the result back (W_Q, W_K, W_V and W_O). "
        f"Costs are counted in {term_link('multiply-add', 'multiply-adds')}: one "
        "multiplication and one addition each.")


def layers_text(compared: LayerComparison) -> str:
    """Recurrence against self-attention for the longest trained string: which part costs
    more is read from the counts."""
    whole = compared.attention_multiply_adds + compared.projection_multiply_adds
    cheaper = "less" if whole < compared.gru_multiply_adds else (
        "more" if whole > compared.gru_multiply_adds else "as much")
    n, d = compared.n, compared.d
    order = {True: "<", False: ">"}[n < d] if n != d else "="
    which = ("self-attention's is the smaller" if n < d else
             "a recurrent layer's is the smaller" if n > d else "the two are equal")
    cost = (f"first the cost per layer, n²·d against n·d², of which {which} when n {order} d "
            f"(here n = {n} {order} d = {d}: without the constant factors, n²·d = "
            f"{n * n * d:,} against n·d² = {n * d * d:,}; counted whole, as in the table, "
            f"{whole:,} against {compared.gru_multiply_adds:,}; "
            "n < d is, they note, the usual case in machine translation)")
    return (
        "The recurrent encoder above had to run its steps one after the other, and in the "
        "fixed-context model a letter at the start reached the decoder only through every "
        "update in between. Self-attention "
        "(lesson 1 on) compares every pair of positions at once, in one step, and gives every "
        "pair a direct path. Its cost per layer grows like n²·d against the recurrent n·d²; "
        f"here the whole self-attention layer, its four projections included, costs "
        f"{cheaper} than the GRU layer ({whole:,} against {compared.gru_multiply_adds:,} "
        f"multiply-adds, of which attention's own part, Q Kᵀ and the weights times V, is "
        f"{compared.attention_multiply_adds:,}; the products of matrices only, biases "
        "and entry-by-entry products not counted). An RNN is sometimes said to cost "
        "O(n³): it is O(n·d²). Vaswani et al. (2017, section 4 and table 1) weigh the same "
        f"three things for the Transformer, which keeps attention and drops recurrence: {cost}, "
        "computing every position at once, and the one-step path between any two positions.")


def notice_items(lengths: LengthReading, alignment: AlignmentReading,
                 parameters: dict, n_test: int) -> list[str]:
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
        f"neighbour; over {n_test} fresh strings of {alignment.length} letters a step puts on "
        f"average {alignment.copied:.2f} of its weight on the copied position itself.",
        f"The attention model has {attention - fixed:,} more trained numbers than the fixed one "
        f"(W_a, U_a and v_a of the score: {percent(attention / fixed - 1)} more); what it adds "
        "is a way to read every encoder state.",
    ]
