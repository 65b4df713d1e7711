"""Lesson 12's sentences that depend on its results, as plain functions of them.

Each is chosen by the numbers it is given: where the lens first ranks the answer 1st,
which position carries the answer into each layer, which heads restore it, which knockout
windows halve it, so that the page never states what this pair did not show. Arrays are
in model order, layer 0 first; the sentences count layers and heads from 1.
"""

from __future__ import annotations

import math

import numpy as np

from attncore.lm.answer import FirstGuess
from attncore.lm.lens import Attribution
from attncore.lm.pair import Pair
from pages.ui.glossary import term_link
from pages.ui.labels import token_code
from pages.ui.numbers import (
    difference_text,
    number_text,
    probability_text,
    said_number,
    significant_text,
    whole_text,
)

HALF = 0.5  # "carries the answer": a patch that restores at least half of it
SMALL = 0.05  # "alone does not carry the answer": a patch that moves less than 5% of the way
LOOKS = 0.5  # "looks at": at least half the last token's attention
NEAR_ZERO = 0.1  # "near 0": a patch that restores less than a tenth of the way

#: Why the plain lens is read with care (said off the projector).
LENS_CAVEAT = (
    "The plain lens is a rough instrument, in large models as in small ones: the earlier "
    "layers were never trained to be read through the last layer's norm and output matrix "
    "(the tuned lens, Belrose et al. 2023, trains a map per layer for this reason). "
    "Patching, below, asks the causal question instead.")


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def changed_names(pair: Pair) -> str:
    """The changed tokens of the clean prompt, quoted: "'␣France'"."""
    return ", ".join(f"'{pair.clean_tokens[p]}'" for p in pair.changed)


def position_labels(pair: Pair) -> list[str]:
    """One label per position, unique even when a token repeats: "1:The", "2:␣capital"."""
    return [f"{n + 1}:{t}" for n, t in enumerate(pair.clean_tokens)]


def _strip(pieces: list[str], changed: list[int]) -> str:
    return " · ".join(f"**{token_code(t)}**" if n in changed else token_code(t)
                      for n, t in enumerate(pieces))


def pair_text(pair: Pair) -> str:
    """Both prompts' tokens, the changed ones in bold, and the two answers compared."""
    changed = [int(p) for p in pair.changed]
    return (f"Clean ({pair.n_tokens} tokens): {_strip(pair.clean_tokens, changed)}  \n"
            f"Corrupted: {_strip(pair.corrupt_tokens, changed)}  \n"
            f"Answer {token_code(pair.answer_token)} against {token_code(pair.wrong_token)}; "
            f"the changed position{'s are' if len(changed) > 1 else ' is'} in bold.")


def patching_note(n_layers: int, n_heads: int, n_tokens: int, preset: bool) -> str:
    """What pressing the button will take: one patched run per layer and position and per
    head, L·(T + H) runs."""
    return (f"Patching runs the model about {n_layers * (n_heads + n_tokens)} times on "
            f"{n_tokens} tokens: a few seconds here, longer for longer prompts; a bar shows "
            "how far it is. Press the button"
            + (" once: this preset is then kept for every student of this machine." if preset
               else "."))


def seconds_caption(seconds: float) -> str:
    """How long the study took when it was computed."""
    return (f"Both runs, the lens and both patching grids took {number_text(seconds, 1)} s "
            "when this server first computed them (one batch of patched runs a layer, each "
            "starting at the layer it changes).")


def gap_warning(ld_clean: float, ld_corrupt: float, answer: str) -> str | None:
    """A warning when recovery, which divides by LD_clean − LD_corrupted, reads backwards
    (a gap of 0 or less) or magnifies noise (a gap under 1); None otherwise."""
    gap = ld_clean - ld_corrupt
    if gap <= 0:
        return (f"The corrupted prompt prefers {token_code(answer)} at least as much as the "
                f"clean one (LD {number_text(ld_corrupt, 2)} against "
                f"{number_text(ld_clean, 2)}): recovery below reads backwards. Swap the "
                "prompts or the answers.")
    if gap < 1:
        return (f"The two prompts' LDs differ by only {number_text(gap, 2)}: recovery divides "
                "by that difference, so small changes look large. Read it with care.")
    return None


def odds_text(ld: float) -> str:
    """The odds e^LD : 1 of the answer against the wrong one, to 3 significant digits from
    100 on, else 2: "1,500 : 1", "7.4 : 1", "1 : 412", "3.54×10¹⁴ : 1"."""
    try:
        x = math.exp(abs(ld))
    except OverflowError:
        return "more than 10³⁰⁰ : 1" if ld > 0 else "1 : more than 10³⁰⁰"
    shown = (significant_text(x, 3) if x >= 1e6 else whole_text(float(f"{x:.3g}"))
             if x >= 100 else significant_text(x, 2))
    return f"{shown} : 1" if ld >= 0 else f"1 : {shown}"


def ld_text(ld_clean: float, ld_corrupt: float, answer: str, wrong: str) -> str:
    """What LD compares, and both LDs as odds: the softmax makes the ratio of two
    probabilities e to the power of their logits' difference."""
    a, w = token_code(answer), token_code(wrong)
    return (f"LD = logit({a}) − logit({w}) at the last position. The softmax makes "
            f"p({a}) / p({w}) = $e^{{LD}}$, the odds of {a} against {w}: the clean prompt's LD of "
            f"{number_text(ld_clean, 2)} is odds of {odds_text(ld_clean)}, the corrupted "
            f"prompt's LD of {number_text(ld_corrupt, 2)} is odds of {odds_text(ld_corrupt)}.")


def lens_text(rank: np.ndarray, answer: str) -> str:
    """The answer's rank after the embedding, a few layers before the last (in a model
    deep enough) and where it first ranks 1st, if it does. ``rank`` has L + 1 rows."""
    n_layers = len(rank) - 1
    tops = np.flatnonzero(rank == 1)
    late = n_layers - 3 if n_layers > 4 else None
    if tops.size == 0:
        top_text = f"never ranks 1st, not even after the last layer, {n_layers}"
    elif tops[0] == n_layers:
        top_text = f"ranks 1st only after the last layer, {n_layers}"
    else:
        first = int(tops[0])
        top_text = (f"first ranks 1st after layer {first}"
                    + (" and stays there" if (rank[first:] == 1).all()
                       else ", but not at every later layer"))
    return (f"{token_code(answer)} ranks {int(rank[0]):,} after the embedding, "
            + (f"{int(rank[late]):,} after layer {late}, " if late is not None else "")
            + f"and {top_text}.")


def first_row_text(guess: FirstGuess, p_top: float, learned_positions: bool) -> str:
    """Why the lens's row 0 (the stream before any layer) guesses what it does: with a tied
    output matrix, each token's logit is its embedding's dot product with the stream."""
    token, top, runner = (token_code(p) for p in guess.pieces)
    stream = f"{token}'s own embedding" + (" plus its position's" if learned_positions else "")
    gap = guess.top_logit - guess.runner_up_logit
    p_said = (f"p({top}) = {probability_text(p_top, 3)}" if p_top < 1 else
              f"p({top}) is 1 to float64's precision")
    scores = (f"{top} scores {number_text(guess.top_logit, 1)}, the runner-up {runner} "
              f"{number_text(guess.runner_up_logit, 1)}: a gap of {number_text(gap, 1)}, odds "
              f"of {odds_text(gap)} against the runner-up, so {p_said}.")
    row = "Row 0 (after layer 0: no layer has run)"
    if not guess.tied:
        return (f"{row} reads {stream} through an output matrix of its own (not tied to the "
                f"embedding): {scores}")
    tied = (f"{row} is {stream}. The output matrix is the embedding table transposed "
            "(tied), so each token's logit there is its embedding's dot product with that "
            "stream after the final norm")
    if guess.top == guess.token:
        return (f"{tied}, and a vector's dot product with itself is large: {scores} A guess "
                "that repeats the input says nothing yet about the answer.")
    return (f"{tied}; yet the token itself, {number_text(guess.token_logit, 1)}, is not the "
            f"top: {scores}")


def lens_alt(rank: np.ndarray, answer: str) -> str:
    """The lens chart's text alternative: the answer's rank after the embedding, after the
    last layer, its worst rank and where it first reaches its best."""
    n_layers = len(rank) - 1
    worst, best = int(np.argmax(rank)), int(np.argmin(rank))  # the first of each
    said = [f"{int(rank[0]):,} after the embedding (layer 0)"]
    if worst not in (0, n_layers):
        said.append(f"worst rank {int(rank[worst]):,} after layer {worst}")
    if best not in (0, n_layers):
        said.append(f"best rank {int(rank[best]):,} first after layer {best}")
    said.append(f"{int(rank[-1]):,} after the last layer, {n_layers}")
    return (f"Rank of {answer} after each layer (1 = the top guess; log scale): "
            + ", ".join(said) + ".")


def components(dla: Attribution, biases: bool) -> tuple[list[str], np.ndarray]:
    """Every component's name and direct part of LD, in the order they write: the
    embedding, each head (layer by layer), each FFN, and the biases if the model has any."""
    n_layers, n_heads = dla.heads.shape
    names = (["embedding"]
             + [f"L{layer + 1} H{head + 1}" for layer in range(n_layers)
                for head in range(n_heads)]
             + [f"FFN {layer + 1}" for layer in range(n_layers)]
             + (["biases"] if biases else []))
    parts = np.concatenate([[dla.embed], dla.heads.ravel(), dla.ffn]
                           + ([[dla.biases]] if biases else []))
    return names, parts


def attribution_intro(dla: Attribution, learned_positions: bool, biases: bool, rms: bool
                       ) -> str:
    """What the clean stream is a sum of, how heads are named (the example is the head with
    the largest part in size) and why LD splits exactly."""
    n_layers, n_heads = dla.heads.shape
    layer, head = (int(i) + 1 for i in np.unravel_index(np.argmax(np.abs(dla.heads)),
                                                         dla.heads.shape))
    embedding = ("the token's embedding plus its position's (learned positions)"
                 if learned_positions else "the token's embedding")
    biases_said = (", and the attention layers' output biases, which no one head writes"
                   if biases else "")
    frozen = ("Freeze the final RMSNorm's scale at the clean run's value, and everything "
              "after the sum is linear" if rms else
              "Freeze the final LayerNorm's scale σ at the clean run's value (its centring, "
              "subtracting the mean, is linear already), and everything after the sum is "
              "linear; the norm's own bias adds a part of its own, counted with the biases")
    return (f"The clean stream at the last position after layer {n_layers} is a sum: "
            f"{embedding}, what each of the {n_layers * n_heads} heads wrote (its output times "
            f"its slice of W_O) and what each of the {n_layers} FFNs wrote{biases_said}. A head "
            "is named by its layer and its number in that layer, both counted from 1: "
            f"{term_link('head-label', f'L{layer} H{head}')} is head {head} of layer {layer}. "
            f"{frozen}, so LD splits exactly into one part per component "
            f"({term_link('direct-attribution', 'direct logit attribution')}):")


def formula_terms(rms: bool) -> str:
    """The symbols of the attribution formula, said right after it."""
    rest = (f"{term_link('g', 'g')} the final norm's gain (one learned number per dimension), "
            "⊙ multiplies number by number, and W_U[t] is the output matrix's column for "
            "token t.")
    if rms:
        return ("Here c is what one component wrote (a vector as wide as the stream), "
                f"{term_link('rms', 'rms')} the root mean square of the clean stream's "
                f"numbers there (frozen), {rest}")
    return ("Here c is what one component wrote (a vector as wide as the stream), c̄ the "
            "mean of its numbers, σ the standard deviation of the clean stream's numbers "
            f"there (frozen), b the final norm's bias, {rest}")


def attribution_sum_text(dla: Attribution, biases: bool) -> str:
    """The parts added up, against the run's own LD, and why they differ."""
    n_layers, n_heads = dla.heads.shape
    return (f"Embedding {number_text(dla.embed, 3)} + {n_layers * n_heads} heads "
            f"{number_text(float(dla.heads.sum()), 3)} + {n_layers} FFNs "
            f"{number_text(float(dla.ffn.sum()), 3)}"
            + (f" + biases {number_text(dla.biases, 3)}" if biases else "")
            + f" = **{number_text(dla.total, 4)}**; the clean LD is "
            f"**{number_text(dla.ld, 4)}**: they differ by {difference_text(dla.total - dla.ld)} "
            "(the model adds its parts in float32; they are summed here in float64).")


def largest_parts_title(count: int, ld: float) -> str:
    """The title of the chart of the ``count`` parts of LD largest in size."""
    return f"The {count} largest parts of LD = {number_text(ld, 2)} in size, either sign"


def largest_parts_alt(names: list[str], parts: np.ndarray, limit: int = 3) -> str:
    """The chart's text alternative: its bars (``names``, ``parts``, largest in size first),
    the ``limit`` largest said, and the most negative named as such."""
    parts = np.asarray(parts, dtype=np.float64)
    said = [f"“{name}” {said_number(part)}" for name, part in zip(names, parts, strict=True)]
    low = int(np.argmin(parts))
    negative = (f"The most negative: “{names[low]}”, {said_number(parts[low])}."
                if parts[low] < 0 else "None is negative.")
    return (f"The {len(said)} largest direct parts of the logit difference in size, either "
            f"sign. Largest in size: " + "; ".join(said[:limit]) + f". {negative}")


def largest_part_caption(names: list[str], parts: np.ndarray) -> str:
    """What "direct" leaves out, and the largest part (in size, of either sign)."""
    top = int(np.argmax(np.abs(parts)))
    return ("Direct means what a component writes straight into the answer. A head whose "
            "output only changes what later layers compute gets nothing here; patching "
            f"sees it. The largest part here is {names[top]}'s, {number_text(parts[top], 2)}.")


def carrier_runs(residual: np.ndarray, pair: Pair) -> list[tuple[int, int, str]]:
    """Which position carries the answer into each layer, as runs of layers (first, last,
    from 0) with one carrier: "changed", "last", a position's label, or "" when no single
    position restores at least half of it. ``residual`` is (L, T)."""
    changed, labels = [int(p) for p in pair.changed], position_labels(pair)
    runs: list[tuple[int, int, str]] = []
    for layer, row in enumerate(residual):
        best = int(np.argmax(row))
        who = ("" if row[best] < HALF else "changed" if best in changed
               else "last" if best == pair.n_tokens - 1 else labels[best])
        if runs and runs[-1][2] == who:
            runs[-1] = (runs[-1][0], layer, who)
        else:
            runs.append((layer, layer, who))
    return runs


def span(first: int, last: int) -> str:
    """Layers ``first`` to ``last`` (from 0), counted from 1: "layer 4", "layers 1–3"."""
    return f"layer {first + 1}" if first == last else f"layers {first + 1}–{last + 1}"


def _where(who: str, pair: Pair) -> str:
    return {"changed": f"the changed token{'s' if len(pair.changed) > 1 else ''} "
                       f"({changed_names(pair)})",
            "last": f"the last token ('{pair.clean_tokens[-1]}')",
            "": "no single position (none restores half)"}.get(who, f"'{who}'")


def carrier_lines(runs: list[tuple[int, int, str]], pair: Pair) -> list[str]:
    """One line per run of layers: "entering layers 1–18: the changed token ('␣France')"."""
    return [f"entering {span(a, b)}: {_where(who, pair)}" for a, b, who in runs]


def moved_into(runs: list[tuple[int, int, str]]) -> int | None:
    """The layer (from 1) inside which the answer moves from the changed token(s) to the
    last token, when one run of layers hands it straight to the next; else None."""
    for (_, _, before), (first, _, after) in zip(runs, runs[1:], strict=False):
        if before == "changed" and after == "last":
            return first  # the last token carries it entering layer first + 1
    return None


def move_layers(residual: np.ndarray, pair: Pair, into: int) -> tuple[int, int]:
    """The layers (first, last, from 1) inside which the answer moves to the last token,
    ``into`` being the layer after which the last token carries it (:func:`moved_into`):
    ``into`` alone when the last token's patch restores near 0 (under NEAR_ZERO) entering
    it, so that the recovery jumps inside that one layer; else from the layer entered by the
    last stream that restores near 0 there, to ``into``."""
    last = residual[:, pair.n_tokens - 1]
    near = np.flatnonzero(np.abs(last[:into]) < NEAR_ZERO)
    return (int(near[-1]) + 1 if near.size else 1), into


def moved_text(pair: Pair, layers: tuple[int, int], last_row: np.ndarray) -> str:
    """Where the information moves from the changed token(s) to the last token: inside one
    layer when its recovery jumps there from near 0, else over ``layers`` with the
    recoveries of the last token's patch entering each (``last_row``: the residual grid's
    column of the last position, layer 0 first)."""
    first, last = layers
    moves = f"the information moves from {changed_names(pair)} to the last token"
    heads = "Only attention moves information between positions, so heads of"
    if first == last:
        return (f"The last token's patch restores {number_text(last_row[last - 1], 2)} "
                f"entering layer {last} and {number_text(last_row[last], 2)} entering layer "
                f"{last + 1}: {moves} inside layer {last}, where its recovery jumps from near "
                f"0 (under {NEAR_ZERO:g}). {heads} layer {last} must move it. The head grid "
                "below looks for them.")
    values = [number_text(r, 2) for r in last_row[first - 1:last + 1]]
    if len(values) <= 7:
        rise = (f"{values[0]} entering layer {first}, then {', '.join(values[1:-1])} and "
                f"{values[-1]} entering layers {first + 1} to {last + 1}")
    else:
        steps = np.diff(last_row[first - 1:last + 1])
        big = int(np.argmax(np.abs(steps)))  # inside layer first + big
        rise = (f"{values[0]} entering layer {first} and {values[-1]} entering layer "
                f"{last + 1}; its largest step is inside layer {first + big}, from "
                f"{values[big]} to {values[big + 1]}")
    return (f"{moves[0].upper()}{moves[1:]} over {span(first - 1, last - 1)}, not inside one "
            f"layer: the last token's patch restores {rise}. {heads} these layers move it. "
            "The head grid below looks for them.")


def embedding_back_text(back: float) -> str:
    """Patching the changed token's embedding gives back the clean run: recovery 1 up to
    rounding, and by how much it is not."""
    return (f"Putting back the changed token's own embedding (entering layer 1) makes the "
            f"corrupted run the clean one: recovery {significant_text(back, 9)}, 1 up to "
            f"float32 rounding ({difference_text(back - 1)}: the patched runs go in batches, "
            "and BLAS rounds a row differently with the batch's size).")


def said_heads(top: list[tuple[int, int, float]]) -> list[str]:
    """Heads as (layer, head, recovery) from 0, named: "L17 H3 (0.42)"."""
    return [f"L{layer + 1} H{head + 1} ({number_text(r, 2)})" for layer, head, r in top]


def heads_text(heads: np.ndarray, top: list[tuple[int, int, float]]) -> str:
    """The heads that restore most, those that push the other way, and the grid's sum."""
    said = said_heads(top)
    pushing = int(np.count_nonzero(heads < -SMALL))
    return (f"Patching **{said[0]}** alone restores the most; then {', '.join(said[1:])}. "
            f"{_plural(pushing, 'head pushes', 'heads push')} the other way (below "
            f"−{SMALL:g}). The {heads.size} single-head recoveries add up to "
            f"{number_text(heads.sum(), 2)}: effects through later layers do not simply add.")


def agreement_text(top: list[tuple[int, int, float]], layers: tuple[int, int] | None
                   ) -> str | None:
    """Which of the heads that restore most sit in the layers (first, last, from 1) where
    the residual grid showed the information move; None when there is no such move or
    none of them sits there."""
    if layers is None:
        return None
    first, last = layers
    inside = [head for head in top if first <= head[0] + 1 <= last]
    if not inside:
        return None
    where = f"layer {last}" if first == last else f"layers {first}–{last}"
    names = ", ".join(f"L{layer + 1} H{head + 1}" for layer, head, _ in inside)
    sit = "sits" if len(inside) == 1 else "sit"
    return (f"{len(inside)} of the {len(top)} heads that restore most {sit} in {where}, where "
            f"the residual grid showed the information move: {names}"
            + (", the first the one that restores most." if inside[0] == top[0] else "."))


def runs_of(numbers: list[int]) -> list[tuple[int, int]]:
    """Consecutive runs of sorted whole numbers: [12, 16, 17, 18] -> [(12, 12), (16, 18)]."""
    found: list[tuple[int, int]] = []
    for n in numbers:
        if found and n == found[-1][1] + 1:
            found[-1] = (found[-1][0], n)
        else:
            found.append((n, n))
    return found


def knockout_definition(cut: str, answer: str) -> str:
    """What the knockout does (``cut``: the changed tokens, quoted), said on the projector
    too, where its chart is shown."""
    return (f"{term_link('knockout', 'Attention knockout')}: run the clean prompt, but forbid "
            f"the last token to read {cut} in a window of consecutive layers (in every head: "
            f"that one entry of the mask is closed), and watch p({token_code(answer)}).")


#: Why the knockout window starts at KNOCKOUT_WINDOW = 1 layer (true of every pair).
WINDOW_REASON = (
    "The window starts at 1 layer, the narrowest: each point is then one layer's edge, and a "
    "dip names that layer; a wider window spreads one layer's dip over every window that "
    "holds it. Widen it when no layer halves p: information moved over several layers can "
    "survive the loss of any one.")


def knockout_text(windows: list[tuple[int, int]], probs: np.ndarray, p_none: float,
                  answer: str) -> str:
    """The lowest p(answer) of the knockout windows, which windows at least halve it and
    the layers all of those share."""
    worst = int(np.argmin(probs))
    width = windows[0][1] - windows[0][0] + 1
    harmful = [w for w, p in zip(windows, probs, strict=True) if p < p_none / 2]
    text = (f"With nothing cut p({token_code(answer)}) is {number_text(p_none, 3)}. Cutting "
            f"the edge in {span(*windows[worst])} leaves {number_text(probs[worst], 3)}, the "
            "lowest. ")
    if not harmful:
        return text + "No window halves it."
    if len(harmful) == 1:
        return text + "It is the only window that halves it."
    shared = set(range(harmful[0][0], harmful[0][1] + 1))
    for a, b in harmful[1:]:
        shared &= set(range(a, b + 1))
    starts = ", ".join(span(a, b).removeprefix("layers ").removeprefix("layer ")
                       for a, b in runs_of([first for first, _ in harmful]))
    which = f"layers {starts}" if width == 1 else f"those starting at layers {starts}"
    return text + (f"{len(harmful)} of the {len(windows)} windows at least halve it ({which})"
                   + (f"; all of them include {span(min(shared), max(shared))}."
                      if shared else "."))


def knockout_alt(windows: list[tuple[int, int]], probs: np.ndarray, p_none: float,
                 answer: str) -> str:
    """The knockout chart's text alternative: its first and last windows and its lowest,
    which is the finding, and p(answer) with nothing cut. ``answer`` as spoken."""
    worst = int(np.argmin(probs))
    width = windows[0][1] - windows[0][0] + 1
    return (f"p of {answer} with the edge cut, one point per window of "
            f"{_plural(width, 'layer', 'layers')} by its first layer: "
            f"{said_number(probs[0])} for {span(*windows[0])}, {said_number(probs[-1])} for "
            f"{span(*windows[-1])}; lowest {said_number(probs[worst])}, for "
            f"{span(*windows[worst])}. With nothing cut: {said_number(p_none)}.")


def labelled_heads(looks: np.ndarray, heads: np.ndarray, top: list[tuple[int, int, float]],
                   idle: int = 1) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The heads the scatter names, as (layer, head) from 0: the heads of ``top`` (those
    that restore most) and the one that pushes the answer back most, if any pushes by SMALL
    or more; then the ``idle`` that look most at the changed token (at least LOOKS) yet
    change it by less than SMALL."""
    strong = [(layer, head) for layer, head, _ in top]
    back = np.unravel_index(int(np.argmin(heads)), heads.shape)
    if heads[back] <= -SMALL:
        strong.append((int(back[0]), int(back[1])))
    H = heads.shape[1]
    idle_cells = np.flatnonzero(((looks >= LOOKS) & (np.abs(heads) < SMALL)).ravel())
    lookers = idle_cells[np.argsort(-looks.ravel()[idle_cells], kind="stable")][:idle]
    return strong, [(int(i) // H, int(i) % H) for i in lookers]


def labelled_text(n_top: int, pushes_back: bool, idle: list[tuple[int, int]], pair: Pair
                  ) -> str:
    """Which heads the scatter names, and why: the ``n_top`` that restore most, the one that
    pushes back most (if ``pushes_back``), the ``idle`` lookers."""
    text = f"Named: the {_plural(n_top, 'head', 'heads')} that restore most"
    if pushes_back:
        text += ", the head that pushes the answer back most"
    if idle:
        text += (f", and the {_plural(len(idle), 'head that looks', 'heads that look')} most "
                 f"at {changed_names(pair)} (at least {LOOKS:g}) yet, patched alone, "
                 f"{'moves' if len(idle) == 1 else 'move'} it by less than {SMALL:g}")
    return text + "."


def looks_lines(looks: np.ndarray, heads: np.ndarray, first_token: np.ndarray,
                top: list[tuple[int, int, float]], pair: Pair) -> list[str]:
    """Where the heads look against what patching them does: the top head's look, the
    heads that look yet alone do not carry the answer, the attention sinks (when the first
    token is not a changed one) and the correlation. ``looks``, ``heads`` and ``first_token`` are
    (L, H): attention to the changed token(s), recovery, attention to the first token."""
    lookers = looks >= LOOKS
    idle = lookers & (np.abs(heads) < SMALL)
    sinks = first_token >= LOOKS
    best_l, best_h, _ = top[0]
    r = _correlation(looks.ravel(), heads.ravel())
    others = np.ones(looks.shape, bool)
    others[best_l, best_h] = False
    r_others = _correlation(looks[others], heads[others])
    lines = [
        f"L{best_l + 1} H{best_h + 1}, the head that restores most, puts "
        f"{number_text(looks[best_l, best_h], 2)} of the last token's attention on "
        f"{changed_names(pair)}.",
        f"{_plural(int(lookers.sum()), 'head puts', 'heads put')} at least {LOOKS:g} of it "
        "there" + idle_text(int(lookers.sum()), int(idle.sum())),
    ]
    if 0 not in pair.changed:
        lines.append(
            f"{_plural(int(sinks.sum()), 'head puts', 'heads put')} at least {LOOKS:g} of the "
            "last token's attention on the first token, the attention sink of lessons 10 and "
            "11 (lesson 10 averages over the query rows after the "
            "first; here only the last token's row counts)" + (
                f"; their recoveries lie between {number_text(heads[sinks].min(), 2)} and "
                f"{number_text(heads[sinks].max(), 2)}." if sinks.any() else "."))
    said = f"Across all {heads.size} heads the correlation between looking and restoring " \
        "(patched alone) is "
    if r is None:
        lines.append(said + "undefined: " + ("no head looks more than another."
                                             if looks.std() == 0 else
                                             "every head restores the same."))
    elif r_others is None:
        lines.append(said + f"r = {number_text(r, 2)}.")
    else:
        lines.append(said + f"r = {number_text(r, 2)}; without L{best_l + 1} H{best_h + 1} it "
                     f"is {number_text(r_others, 2)}"
                     + (": that one head makes most of it." if abs(r_others) < abs(r) / 2
                        else "."))
    return lines


def _correlation(x: np.ndarray, y: np.ndarray) -> float | None:
    """Pearson's r of x and y; None when either does not vary (r is then undefined)."""
    if x.size < 2 or x.std() == 0 or y.std() == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def idle_text(n_lookers: int, n_idle: int) -> str:
    """The end of the sentence on the ``n_lookers`` heads that look at the changed token:
    how many of them (``n_idle``), patched alone, move the answer by less than SMALL, and
    what that does not show (patching one head tests whether it suffices alone, not whether
    it is needed: another head can do the same work)."""
    if not n_lookers:
        return "."
    if not n_idle:
        return (f"; {'it moves' if n_lookers == 1 else 'each moves'} the answer by at least "
                f"{SMALL:g} of the way when patched alone.")
    one = n_idle == 1
    return (f"; of these, {n_idle} {'moves' if one else 'move'} the answer by less than "
            f"{SMALL:g} of the way when patched alone: alone "
            f"{'it does' if one else 'they do'} not carry the answer. That does not show "
            f"{'it is' if one else 'they are'} unnecessary: patching one head into the "
            "corrupted run tests whether it suffices, not whether it is needed, and another "
            "head can do the same work.")


def moving_text(heads: np.ndarray) -> str:
    """How many heads move the answer by at least SMALL of the way when patched alone, in
    either direction: towards the clean answer (recovery ≥ SMALL) or away (≤ −SMALL)."""
    towards = int(np.count_nonzero(heads >= SMALL))
    away = int(np.count_nonzero(heads <= -SMALL))
    return (f"Here {towards + away} of the {heads.size} heads move the answer by at least "
            f"{SMALL:g} of the way when patched alone, in either direction ({towards} towards "
            f"the clean answer, {away} away from it); each of the others moves it by less.")
