"""Lesson 1's sentences that depend on its example, as plain functions of it.

Each is said for the example on the page (its sizes, its scores, its scaling and its
mask), so that the page never states what this example does not do.
"""

from __future__ import annotations

import numpy as np

from attncore.attention import AttentionTrace
from attncore.exercise import StepCheck, stretch_key
from attncore.scaling import weight_focus
from attncore.softmax import HAND_EXP_LIMIT, SoftmaxSteps
from pages.ui.glossary import term_link
from pages.ui.labels import md_escape
from pages.ui.numbers import difference_text, number_text

# The temperature slider's ends: "Try this" says what they do to the example on the page.
TAU_LOW, TAU_HIGH = 0.1, 5.0
ROOT_DECIMALS = 3  # √d_k, when it is not whole


def root_text(d_k: int) -> str:
    """√d_k after its sign: "= 2" when it is whole, "≈ 1.414" when rounded (√2 is not
    1.414)."""
    root = float(np.sqrt(d_k))
    return f"= {root:.0f}" if root == round(root) else f"≈ {number_text(root, ROOT_DECIMALS)}"


def scores_shape_text(T: int, d_k: int) -> str:
    """The shapes of step 1."""
    return (f"Shape: Q ({T} × {d_k}) · Kᵀ ({d_k} × {T}) → S ({T} × {T}). Rows are queries, "
            f"columns are keys: the {term_link('scores', 'scores')}.")


def scaling_text(d_k: int) -> str:
    """What step 2 divides by, with the page's d_k."""
    return (f"Every score is divided by √d_k = √{d_k} {root_text(d_k)}. When q and k have "
            "independent components, this keeps the spread of the scores from growing with "
            "d_k (lesson 2 shows why).")


def shift_text(steps: SoftmaxSteps) -> str | None:
    """Why each row's maximum was subtracted before exp, with the largest logit; None when
    the logits were small enough for the textbook exp(x)."""
    if not np.any(steps.shift != 0):
        return None
    largest = np.max(np.abs(steps.logits[np.isfinite(steps.logits)]))
    return (f"Some logits x = s̃/τ here are larger than {HAND_EXP_LIMIT:g} in size (up to "
            f"{largest:.4g}), so each row's maximum m was subtracted before exp: every "
            "e^(x−m) then lies between 0 and 1 and cannot overflow, and e^(x−m) / Σ e^(x−m) "
            "gives the same weights.")


def row_sums_text(weights: np.ndarray) -> str:
    """How far the rows of weights are from summing to 1: rounding, or exactly 0."""
    deviation = np.max(np.abs(weights.sum(axis=1) - 1))
    return (f"Every row of weights sums to 1: the largest deviation is "
            f"{difference_text(deviation, rounding=True)}.")


def output_shape_text(T: int, d_v: int) -> str:
    """The shapes of step 4."""
    return (f"Shape: W ({T} × {T}) · V ({T} × {d_v}) → O ({T} × {d_v}). Each output row is a "
            "blend of the value rows, mixed by that query's weights.")


def check_intro(decimals: int, masked: bool) -> str:
    """What "Check your work" marks as right, at the decimals chosen, and, with a mask,
    which step 2 and step 3 cells it asks for."""
    return (
        f"Compute the steps by hand and type your numbers (leave a cell blank to skip it). "
        f"A cell is right within ±{10.0 ** -decimals:g}, one unit in the last of the "
        f"{decimals} decimals chosen above. Carry more decimals in your intermediate steps "
        "than you type: weights rounded to that many can move an output by more."
        + (" With the causal mask, step 2 asks for every scaled score, the hidden ones "
           "included, before they become −∞ (the figure of step 2 shows them masked); "
           "step 3's hidden weights are 0." if masked else ""))


def marked_text(marked: StepCheck) -> str:
    """One step's marks, counted."""
    right = marked.n_attempted - marked.n_wrong
    return f"**{marked.title}:** {right} of {marked.n_attempted} filled cells right."


def said_list(words: list[str]) -> str:
    """"x1", "x1 and x3", "x1, x2 and x3"."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def token_names(tokens: list[str]) -> list[str]:
    """Each token's name for a sentence, quoted, with its position when a name repeats."""
    return [f"“{md_escape(t)}”" + ("" if tokens.count(t) == 1 else f" ({i + 1})")
            for i, t in enumerate(tokens)]


def low_tau_item(trace: AttentionTrace | None, names: list[str]) -> str:
    """Try this: what τ = TAU_LOW does to each row of the example on the page.

    A low τ sharpens a row towards its largest scores, never past them: keys tied for
    the largest share the weight however low τ goes (attncore.scaling.weight_focus).
    """
    rule = (f"Set the temperature τ to {TAU_LOW:g}: a low τ makes the softmax "
            f"{term_link('sharp', 'sharp')}, gathering each row's weight on its largest "
            "scores; keys tied for the largest score share it equally, however low τ goes. "
            "It stays smooth and differentiable; only in the limit τ → 0 does a row become an "
            "argmax: all its weight on the key with its largest score, or shared equally by "
            f"the keys tied for it. {term_link('hard', 'Hard attention')} (lesson 6) instead "
            "picks one key outright, and that choice has no gradient.")
    flat = (f" Set it to {TAU_HIGH:g}: every row flattens towards uniform weights over the "
            "keys it may see.")
    if trace is None:
        return rule + flat
    rows = weight_focus(trace.scaled_scores, TAU_LOW, trace.mask)
    groups = {}  # (what one row does, what several do) -> the rows that do it, in order
    for i, row in enumerate(rows):
        keys = said_list([names[j] for j in sorted(row.holders)])
        among = "between" if len(row.holders) == 2 else "among"
        if row.visible == 1:
            kind = ("sees only one key (weight 1)", "see only one key (weight 1)")
        elif row.nearly_one_hot:
            kind = (f"becomes {term_link('one-hot', 'nearly one-hot')}",
                    f"become {term_link('one-hot', 'nearly one-hot')}")
        elif set(row.holders) == set(row.tied):
            kind = (f"splits its weight equally {among} {keys}, tied for its largest score",
                    f"each split their weight equally {among} {keys}, tied for their largest "
                    "score")
        else:
            close = (f"weight over {keys} (scores within {number_text(row.gap, 3)} of each "
                     f"other): τ = {TAU_LOW:g} is not low enough to separate them")
            kind = (f"still spreads its {close}", f"each still spread their {close}")
        groups.setdefault(kind, []).append(names[i])
    said = [f"{said_list(which)} {one if len(which) == 1 else many}"
            for (one, many), which in groups.items()]
    return f"{rule} Here, at τ = {TAU_LOW:g}: {'; '.join(said)}.{flat}"


def scaling_item(d_k: int, scaled: bool) -> str:
    """Try this: what the scaling toggle does to the scores on the page."""
    if d_k == 1:
        return ("Switch the scaling off and on: with d_k = 1, √d_k = 1, so nothing changes. "
                "Pick d_k = 4 to see it matter.")
    # Multiplying a row's scores by c > 1 raises its largest weight, 1 / Σ_j e^{c(s_j − max)},
    # unless the scores of the keys it may see are all equal (then it is 1/their number).
    unless = "unless the scores of the keys it may see are all equal"
    if scaled:
        return (f"Switch the scaling off: every score is then multiplied by √d_k = √{d_k} "
                f"{root_text(d_k)}, so every row sharpens (its largest weight rises), "
                f"{unless}.")
    return (f"Switch the scaling on: every score is divided by √d_k = √{d_k} "
            f"{root_text(d_k)}, so every row flattens (its largest weight falls), {unless}.")


def longer_key_item(trace: AttentionTrace | None, names: list[str]) -> str:
    """Try this: who turns to the first key when it is made 10 times longer.

    Only the first key's column of scores changes, 10 times over: a query turns to it if
    their dot product is positive, away if negative, and not at all if it is 0
    (attncore.exercise.stretch_key). The first key, because the causal mask hides it
    from no query.
    """
    rule = ("Make one key much longer (multiply its row of K by 10): its scores are multiplied "
            "by 10 and no other score moves, so a query turns to it only if their dot product "
            "is positive; with a negative one the query turns away, and with q·k = 0 it keeps "
            "exactly the weights it has.")
    if trace is None:
        return rule
    stretch = stretch_key(trace, 0)
    groups = [
        (stretch.change > 0, "turn to it (q·k > 0)", "turns to it (q·k > 0)"),
        ((stretch.change == 0) & (stretch.dots == 0) & ~stretch.only_key,
         "keep their weights (q·k = 0)", "keeps its weights (q·k = 0)"),
        (stretch.change < 0, "turn away from it (q·k < 0)", "turns away from it (q·k < 0)"),
        (stretch.only_key, "see only this key and keep weight 1",
         "sees only this key and keeps weight 1"),
    ]
    said = []
    for rows, many, one in groups:
        which = [names[i] for i in np.flatnonzero(rows)]
        if which:
            said.append(f"{said_list(which)} {one if len(which) == 1 else many}")
    return f"{rule} Try it on the first key, {names[0]}: {'; '.join(said)}."


# "What to notice": each holds for every example, setting and edit.
NOTICE = [
    "The weights in each row are at least 0 and sum to 1 (a key the "
    f"{term_link('mask', 'mask')} hides gets exactly 0): each output row is a weighted "
    "average of the value rows.",
    "In each row, the largest score among the keys the query may see gets the largest "
    "weight, and a dot product rewards length as well as direction "
    "(q·k = |q| |k| cos θ): in the textbook example q₁ = [1, 0] scores k₁ = [1, 0] (same "
    "direction) and k₃ = [1, 1] (45° away, but √2 times longer) equally, so without "
    f"the {term_link('causal-mask', 'causal mask')} x1 gives them the same weight.",
    "Adding the same number to every score of a row changes nothing: the softmax only "
    "sees differences.",
    "With the causal mask, token 1 can only see itself, so its output is exactly v₁.",
]

# The practice questions (their answers hold for the examples they name).
PRACTICE = [
    {"q": "In the textbook example (scaling on, τ = 1), which key does query x3 "
          "attend to most, and why?",
     "a": "x3 itself: q₃ = [1, 1] has the largest dot product with k₃ = [1, 1] "
          "(1 + 1 = 2), against 1 for k₁ and k₂."},
    {"q": "Every score in a row of 3 keys is 0. What is each weight?",
     "value": 1 / 3, "tol": 1e-3,
     "a": "e⁰ / (e⁰ + e⁰ + e⁰) = 1/3 ≈ 0.3333 each."},
    {"q": "If you double every value vector v_j, what happens to the weights and to "
          "the output?",
     "a": "The weights do not depend on V, so they stay the same; the output, a "
          "weighted sum of the values, doubles."},
    {"q": "With the causal mask, what is the output of the first token?",
     "a": "Its own value v₁: it may only attend to key 1, so w₁₁ = 1."},
]


# Above the inputs' editor (off the projector, where the model's diagram is drawn instead).
INPUTS_TEXT = (
    "Each row is a token. Its **query** q asks *what am I looking for?*, its **key** k "
    "says *what do I contain?*, its **value** v is *what I pass on*. Each query is scored "
    f"against every key, a {term_link('softmax', 'softmax')} turns each query's scores into "
    "weights, and the weights mix the values. Edit any cell or token name; everything below "
    "is recomputed."
)


# The temperature slider's help: what τ does, for every row.
TAU_HELP = ("Below 1 it sharpens each row towards its largest scores, above 1 it flattens it "
            "towards uniform weights; a row whose keys all score the same stays as it is.")


# Step 2, with the causal mask on.
CAUSAL_TEXT = (f"**{term_link('causal-mask', 'Causal mask')}:** query i may only look at keys "
               "j ≤ i (itself and the tokens before it); the others become −∞ before the "
               "softmax.")


def given_text(tokens) -> str:
    """What X and the W matrices of a preset built from toy embeddings are."""
    return ("X holds a toy embedding per word, a row per token ("
            + ", ".join(md_escape(t) for t in tokens) + "): the same word, whatever its case, "
            "always gets the same vector. The W matrices are seeded projections.")


# Step 3's definition (off the projector).
SOFTMAX_TEXT = (f"The {term_link('softmax', 'softmax')} of each row, with τ the "
                f"{term_link('tau', 'temperature')} (τ = 1: the plain softmax).")


# Try this: the "Uniform" example, true for its every size and the mask.
UNIFORM_ITEM = ("Pick the “Uniform” example: every query is 0, so every score is 0 and every "
                "weight is 1/T (T tokens), whatever K is; with the causal mask, row i's weights "
                "are 1/i on the keys it may see.")
