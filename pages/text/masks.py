"""Lesson 3's sentences that depend on its numbers, as plain functions of its results.

Each sentence is chosen by the numbers it is given (a fill that changes nothing is said
to change nothing; a row count comes from the rows counted), so that the page never
states what this sentence and mask did not give.
"""

from __future__ import annotations

import numpy as np

from attncore.masks import LeakageTest
from attncore.pitfalls import (
    CONVENTIONS,
    DropoutSums,
    FillsByType,
    FullyMaskedRow,
    InvertedMask,
    OffByOne,
    WrongAxis,
    stored_as,
)
from pages.ui.glossary import term_link
from pages.ui.labels import md_escape
from pages.ui.numbers import difference_text, number_text, said_number, values_text, whole_text

LOWEST_HALF = float(np.finfo(np.float16).min)  # float16's own lowest number


def named(tokens: list[str], i: int) -> str:
    """Token ``i`` by its position from 1 and its text: 2 (“dog”)."""
    return f"{i + 1} (“{md_escape(tokens[i])}”)"


def rows_named(tokens: list[str], rows: np.ndarray) -> str:
    """The rows flagged in ``rows``, named: "Row 1 (“A”)", "Rows 1 (“A”), 2 (“dog”)"."""
    rows = np.flatnonzero(rows)
    return ("Row " if rows.size == 1 else "Rows ") + ", ".join(named(tokens, i) for i in rows)


def _keep_no_key(tokens: list[str], empty: np.ndarray) -> str:
    return (f" {rows_named(tokens, empty)} keep{'s' if empty.sum() == 1 else ''} no key: "
            "NaN with a plain softmax, zeros here.")


def batch_text(batch: list[list[str]], pad: str, d_model: int) -> str:
    """What the batch table shows: B sentences padded to T tokens, each token a vector of
    d_model numbers."""
    return (f"**The batch** (B = {len(batch)} sentences, padded with `{pad}` to "
            f"T = {len(batch[0])} tokens, each token a vector of "
            f"{term_link('d_model', 'd_model')} = {d_model} numbers):")


def masked_weights_text(weights: np.ndarray, mask: np.ndarray) -> str:
    """The weights of the masked cells (exactly 0) and every row's sum."""
    masked_values = weights[~np.broadcast_to(mask, weights.shape)]
    masked_text = (f"{masked_values.size} cells, the largest is "
                   f"{difference_text(np.max(masked_values))}" if masked_values.size
                   else "none (no cell is masked)")
    sums = weights.sum(axis=1)
    return (f"**Masked weights:** {masked_text}. **Row sums:** "
            f"{', '.join(f'{s:.6f}' for s in sums)}.")


def fully_masked_warning(tokens: list[str], fully_masked: np.ndarray) -> str | None:
    """The rows of the chosen mask with no key, named; None when every row keeps one."""
    blocked = np.flatnonzero(fully_masked)
    if not blocked.size:
        return None
    names = ", ".join(f"{i + 1} ({md_escape(tokens[i])})" for i in blocked)
    return (f"Fully masked rows: {names}. Every key is masked, so there is nothing to "
            "attend to: by our policy these rows get all-zero weights and a zero output "
            "(never NaN). Section 3 shows what other choices give.")


def _row_said(tokens: list[str], row: int) -> str:
    return f"row {row + 1} (“{md_escape(tokens[row])}”)"


def fully_masked_text(tokens: list[str], r: FullyMaskedRow) -> str:
    """Each weight of the row masked completely, under the two fills and our policy."""
    row = r.row
    # NaN is named once, where it first appears (a fully masked row filled with −∞ is NaN).
    nan_named = " (“not a number”)" if np.all(np.isnan(r.inf.weights[row])) else ""
    return (f"With every key of {_row_said(tokens, row)} masked, each weight of the row is "
            f"**{values_text(r.inf.weights[row])}**{nan_named} when −∞ fills the masked "
            f"scores, **{values_text(r.big.weights[row])}** when −1e9 does, and "
            f"**{values_text(r.policy[row])}** under attncore's policy, which also flags "
            "the row.")


def plain_steps_text(tokens: list[str], r: FullyMaskedRow) -> str:
    """Each step of the plain softmax on that row (the row maximum m subtracted first, as
    every stable softmax does), said from the numbers it produced."""
    inf, big, row = r.inf, r.big, r.row
    undefined = " (−∞ − (−∞) is undefined)" if np.all(np.isnan(inf.centred[row])) else ""
    return (
        f"**Fill −∞.** Every score of {_row_said(tokens, row)} is "
        f"{values_text(inf.filled[row])}, so the "
        f"maximum m is {values_text(inf.shift[row])} and each s − m is "
        f"{values_text(inf.centred[row])}{undefined}; e^(s − m) is "
        f"{values_text(inf.exps[row])}, the sum is {values_text(inf.row_sums[row])}, and each "
        f"weight is {values_text(inf.exps[row])} / {values_text(inf.row_sums[row])} = "
        f"**{values_text(inf.weights[row])}**. (Without subtracting m: e^(−∞) = 0 and 0/0, "
        "NaN as well.) NaN spreads through every later layer.\n\n"
        f"**Fill −1e9.** Every score is {values_text(big.filled[row], 0)}, so m is "
        f"{values_text(big.shift[row], 0)}, each s − m is {values_text(big.centred[row])} and "
        f"e^(s − m) is {values_text(big.exps[row])}: the sum is "
        f"{values_text(big.row_sums[row])} and each weight is "
        f"**{values_text(big.weights[row])}**, spread over keys that were all meant to be "
        "hidden, with nothing to warn of it."
    )


def kept_rows_text(tokens: list[str], r: FullyMaskedRow) -> str | None:
    """What the two fills do to the rows that keep a key, and to the masked row in
    float16; None when no row keeps a key."""
    if not r.kept.any():
        return None
    verdict = "the same weights" if r.gap == 0 else "different weights"
    if not r.tails.size:
        why = " (No key of theirs is masked, so the fill never enters.)"
    elif np.all(r.tails == 0):
        why = " Their masked keys' e^(−1e9 − m) underflow to exactly 0 in float64."
    else:
        why = f" Their masked keys' e^(−1e9 − m) are {values_text(r.tails)}."
    # In float16 −1e9 is stored as −∞, so the fully masked row is what −∞ gives there.
    return (
        f"**The rows that keep a key** ({int(r.kept.sum())} here): on them "
        f"−∞ and −1e9 give {verdict}, the largest difference being "
        f"{difference_text(r.gap)}.{why} The two fills differ {'only ' if r.gap == 0 else ''}"
        f"on a fully masked row. In float16, which cannot hold −1e9, they do not differ "
        f"even there: −1e9 is stored as {whole_text(stored_as(-1e9, np.float16))} and "
        f"{_row_said(tokens, r.row)} gets {values_text(r.half.weights[r.row])} (pitfall "
        "“−1e9 in float16” in section 6)."
    )


def leakage_text(leak: LeakageTest, word: str, real_tokens: int) -> str:
    """What changing the last real token to ``word`` did to the outputs before it: the
    largest change there, with the causal mask and without it."""
    if leak.position == 0:
        return (f"Changing token 1 to “{word}”: this sentence has no earlier position "
                "to check. Choose a sentence of two tokens or more.")
    masked = float(np.max(leak.diff_masked[:leak.position]))
    unmasked = float(np.max(leak.diff_unmasked[:leak.position]))
    return (
        f"Changing token {leak.position + 1} to “{word}” (the causal mask alone, on this "
        f"sentence's {real_tokens} real tokens): under the causal mask the largest change at "
        f"earlier positions is **{difference_text(masked)}**; without the mask it is "
        f"{said_number(unmasked)}."
    )


def dropout_text(d: DropoutSums, seed: int) -> str:
    """What dropout (one draw from ``seed``) did to the row sums, and why masking does
    not do it."""
    if d.p_drop == 0:
        effect = "With p_drop = 0 nothing is dropped, so every row still sums as before."
    else:
        counted = (f"here {d.off} of the {int(d.kept.sum())} rows that keep a key are off 1 "
                   f"(one draw, seed {seed})" if d.kept.any() else "here no row keeps a key")
        effect = (f"Dropout zeroes each weight with probability p_drop *after* the softmax and "
                  f"rescales the survivors by 1/(1 − p_drop) = "
                  f"{number_text(1 / (1 - d.p_drop), 3)}, so a row's sum is no longer 1, only "
                  f"its expected value is: {counted}.")
    return (f"{effect} Masking acts *before* the normalisation, so every row that keeps "
            "a key still sums to 1.")


def conventions_text() -> str:
    """Which way round a boolean mask is read, in the code a student will meet."""
    return (
        "Whether True means *may attend* or *masked* is a convention, and code differs:\n"
        "- here True (or 1) means **may attend**; code with this convention hides cells "
        f"with `{CONVENTIONS['keep']}`;\n"
        "- code where True means **masked** hides them with "
        f"`{CONVENTIONS['blocked']}` (PyTorch's `masked_fill` writes the value where the "
        "mask is True);\n"
        "- in PyTorch, `nn.MultiheadAttention` reads a boolean `attn_mask` or "
        "`key_padding_mask` as True = *not allowed to attend*, while "
        "`F.scaled_dot_product_attention` reads a boolean `attn_mask` as True = *may "
        "attend*: one tensor does opposite things in the two;\n"
        "- Hugging Face's `attention_mask` marks real tokens with 1 and padding with 0, as "
        "here, so it is inverted (`attention_mask == 0`) before it can serve as a "
        "`key_padding_mask`.\n\n"
        "Left, this lesson's mask read as True = may attend; right, the same mask given "
        "to code that reads True as masked."
    )


def inverted_text(tokens: list[str], r: InvertedMask) -> str:
    """What the mask read inverted hides and opens, and where the weight lands."""
    text = (f"Read as True = masked, the mask hides the {r.allowed} cells it allows and "
            f"opens the {r.hidden} it hides")
    if r.query is None:
        return text + ": no row keeps a key."
    text += (f". The weight left on the keys the mask allows is {difference_text(r.left)}: "
             f"every weight lands on a key the mask forbids. Query {named(tokens, r.query)} "
             f"gives {number_text(r.weights[r.query, r.key], 4)} to key "
             f"{named(tokens, r.key)}, which it must not see.")
    if r.empty.any():
        text += _keep_no_key(tokens, r.empty)
    return text


def off_by_one_text(tokens: list[str], r: OffByOne) -> str:
    """What blocking the diagonal too does: no token sees itself, row 1 sees nothing."""
    text = (f"With k = 0 no token sees itself: the diagonal weights, "
            f"{values_text(np.diag(r.right))} with k = 1, are {values_text(np.diag(r.wrong))}.")
    if r.empty.any():
        text += _keep_no_key(tokens, r.empty)
    if len(tokens) >= 2:
        text += (f" Query {named(tokens, 1)} can look only at token 1, with weight "
                 f"{number_text(r.wrong[1, 0], 4)} instead of {number_text(r.right[1, 0], 4)}.")
    return text


def wrong_axis_text(tokens: list[str], r: WrongAxis) -> str:
    """The column sums (1) and the row sums (anything) of the softmax over the queries."""
    text = (f"Over the queries, each of the {int(r.live_columns.sum())} columns that keep a "
            f"query sums to 1 (largest gap {difference_text(r.column_gap, rounding=True)})")
    if r.rows_sum_to_one:
        return (text + ", and here the rows happen to sum to 1 as well"
                + (" (one token: its row is its column)" if len(tokens) == 1 else "")
                + ", so the mistake does not show. Try another mask or sentence.")
    live = r.row_sums[r.live_rows]
    return (text + f", while the rows that keep a key sum to anything from "
            f"{number_text(live.min(), 4)} to {number_text(live.max(), 4)} instead of 1.")


def fills_table(fills: FillsByType) -> dict[str, dict[str, str]]:
    """Each fill in each type: row label -> column -> cell, for a table."""
    table = {}
    for case in fills.cases:
        fill_name = "finfo(float16).min" if case.fill == LOWEST_HALF else "−1e9"
        table[f"{case.dtype.name}, fill {fill_name}"] = {
            "largest finite number": whole_text(case.largest),
            "the fill, as stored": whole_text(case.stored),
            f"row {len(case.plain.weights)}, fully masked: each weight":
                values_text(case.plain.weights[-1]),
            "other rows: largest difference from fill −∞": difference_text(case.gap),
        }
    return table


def float16_text(tokens: list[str], fills: FillsByType) -> str:
    """What −1e9 becomes in float16, and what the fully masked last row gets."""
    half, double = fills.case(np.float16, -1e9), fills.case(np.float64, -1e9)
    like_inf = " as with −∞ in section 3" if np.all(np.isnan(half.plain.weights[-1])) else ""
    return (f"float16's largest finite number is {whole_text(half.largest)}, so −1e9 is stored "
            f"as {whole_text(half.stored)}, and row {named(tokens, len(tokens) - 1)}, "
            f"masked completely, gets **{values_text(half.plain.weights[-1])}**{like_inf}; in "
            f"float64 it gets {values_text(double.plain.weights[-1])}.")


def lowest_fill_text(fills: FillsByType) -> str:
    """What float16's own lowest number gives that row instead (to follow float16_text)."""
    low = fills.case(np.float16, LOWEST_HALF)
    return (f" The float16 type's own lowest number, `np.finfo(np.float16).min` = "
            f"{whole_text(LOWEST_HALF)}, is stored as it is: with it that row gets "
            f"{values_text(low.plain.weights[-1])}"
            + (", as −1e9 gives in float64 (to float16's precision)."
               if fills.lowest_like_double else "."))


#: The masked softmax, in the scaled scores s̃ (lesson 1's q_i · k_j / √d_k).
MASKED_SOFTMAX = (r"w_{ij} = \frac{M_{ij}\, e^{\tilde s_{ij}}}{\sum_{j'} M_{ij'}\, "
                  r"e^{\tilde s_{ij'}}} = \mathrm{softmax}_j\big(\tilde s_{ij} + \log M_{ij}"
                  r"\big),\quad M_{ij} \in \{0, 1\},\ \log 0 = -\infty")
