"""Lesson 3: causal and padding masks on a padded batch of sentences."""

import numpy as np
import pandas as pd
import streamlit as st

from attncore import causal_mask, combine_masks, padding_mask, scaled_dot_product_attention
from attncore import window_mask as local_window
from attncore.init import normal_weights
from attncore.masks import leakage_test
from attncore.pitfalls import (
    CONVENTIONS,
    blocked_triangle,
    plain_masked_softmax,
    read_mask,
    softmax_over_queries,
    stored_as,
)
from attncore.softmax import fully_masked_rows, softmax
from attncore.text import PAD, pad_batch, tokenize, toy_embeddings
from pages.ui.choices import keep_offered
from pages.ui.controls import URL, bounded_slider
from pages.ui.figures import (
    describe_grid,
    describe_matrix,
    heatmap_grid,
    matrix_heatmap,
    said_number,
)
from pages.ui.glossary import term_link
from pages.ui.labels import md_escape
from pages.ui.layout import (
    bullet_list,
    figure_font,
    finish_page,
    lesson_header,
    practice_questions,
    setup_page,
    show_error,
    show_figure,
)
from pages.ui.live import lesson_downloads, offer_downloads
from pages.ui.numbers import difference_text, number_text
from pages.ui.tables import editor_key

MAX_SENTENCES = 4
MAX_TOKENS = 24  # per sentence, so every matrix stays readable
D_MODEL = 8
DEFAULT_TEXT = "The cat sat on the mat\nA dog barked\nBirds sing at dawn"
MASKS = {  # short label (kept in the link) -> what it does
    "padding": "no query may attend to a <pad> key",
    "causal": "query i may attend to keys j ≤ i only",
    "padding+causal": "padding and causal combined (logical AND)",
    "window": "query i may attend to keys with |i − j| ≤ r: symmetric, r on each side",
    "custom": "tick the cells yourself",
    "none": "every query attends to every key",
}

PADDING_MASKS = ("padding", "padding+causal")  # the masks the padding-rows switch acts on

presenter = setup_page("Masks", "🎭")
font = figure_font(presenter)
lesson_header(
    "3 · Causal and padding masks",
    f"build a batch {term_link('padding', 'padded')} to one length, see which keys each query "
    f"may attend to under each {term_link('mask', 'mask')}, and check that masked weights are "
    "exactly 0 while every row that keeps a key still sums to 1.",
)

def values_text(values: np.ndarray, decimals: int = 4) -> str:
    """Several numbers said as one: "NaN" when all are NaN, "exactly 0" when all are 0,
    the value when all are equal, otherwise their range."""
    values = np.asarray(values, dtype=np.float64).ravel()
    if np.all(np.isnan(values)):
        return "NaN"
    if np.all(values == 0):
        return "exactly 0"
    if np.all(values == values[0]):
        return number_text(values[0], decimals).replace("-", "−")
    finite = values[~np.isnan(values)]
    low, high = (number_text(x, decimals).replace("-", "−") for x in (finite.min(), finite.max()))
    return f"from {low} to {high}"


@st.fragment
def fully_masked_row(tokens: list[str], mask: np.ndarray, q: np.ndarray, k: np.ndarray,
                     v: np.ndarray, scores: np.ndarray) -> None:
    """Section 3: one row masked completely, under three policies. Its row picker reruns
    this section only."""
    st.header("3 · −∞ or −1e9, and the fully masked row")
    T = len(tokens)

    def row_label(i: int) -> str:
        return f"{i + 1}: {tokens[i]}"

    row = st.selectbox("Row to mask completely", range(T), format_func=row_label,
                       key="mk_block_row", **URL,
                       **keep_offered("mk_block_row", range(T), T - 1, row_label))
    blocked_mask = mask.copy()
    blocked_mask[row] = False
    inf = plain_masked_softmax(scores, blocked_mask, -np.inf)
    big = plain_masked_softmax(scores, blocked_mask, -1e9)
    ours = scaled_dot_product_attention(q, k, v, mask=blocked_mask).weights
    rows = {"fill −∞, plain softmax": inf.weights[row],
            "fill −1e9, plain softmax": big.weights[row],
            "attncore's policy": ours[row]}
    # A static table, as in section 5: three rows of text that the mask picker changes
    # need no canvas grid (measured, it made no difference beyond the noise).
    st.table(pd.DataFrame({name: ["NaN" if np.isnan(v) else f"{v:.4f}" for v in vals]
                           for name, vals in rows.items()},
                          index=[f"key {j + 1}: {t}" for j, t in enumerate(tokens)]).T)
    said = f"row {row + 1} (“{md_escape(tokens[row])}”)"
    # NaN is named once, where it first appears (a fully masked row filled with −∞ is NaN).
    nan_named = " (“not a number”)" if np.all(np.isnan(inf.weights[row])) else ""
    st.markdown(f"With every key of {said} masked, each weight of the row is "
                f"**{values_text(inf.weights[row])}**{nan_named} when −∞ fills the masked scores, "
                f"**{values_text(big.weights[row])}** when −1e9 does, and "
                f"**{values_text(ours[row])}** under attncore's policy, which also flags "
                "the row.")
    if presenter:
        return
    # Each step of the plain softmax (the row maximum m is subtracted first, as every
    # stable softmax does), said from the numbers it produced.
    undefined = " (−∞ − (−∞) is undefined)" if np.all(np.isnan(inf.centred[row])) else ""
    st.markdown(
        f"**Fill −∞.** Every score of {said} is {values_text(inf.filled[row])}, so the "
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
    kept = ~fully_masked_rows(blocked_mask)
    if kept.any():
        gap = float(np.max(np.abs(inf.weights[kept] - big.weights[kept])))
        hidden = ~blocked_mask[kept]  # masked cells of the rows that keep a key
        verdict = "the same weights" if gap == 0 else "different weights"
        tails = big.exps[kept][hidden]  # e^(−1e9 − m) of their masked keys
        if not hidden.any():
            why = " (No key of theirs is masked, so the fill never enters.)"
        elif np.all(tails == 0):
            why = " Their masked keys' e^(−1e9 − m) underflow to exactly 0 in float64."
        else:
            why = f" Their masked keys' e^(−1e9 − m) are {values_text(tails)}."
        # In float16 −1e9 is stored as −∞, so the fully masked row is what −∞ gives there.
        half = plain_masked_softmax(scores, blocked_mask, -1e9, np.float16)
        st.markdown(
            f"**The rows that keep a key** ({int(kept.sum())} here): on them "
            f"−∞ and −1e9 give {verdict}, the largest difference being "
            f"{difference_text(gap)}.{why} The two fills differ {'only ' if gap == 0 else ''}"
            f"on a fully masked row. In float16, which cannot hold −1e9, they do not differ "
            f"even there: −1e9 is stored as {whole_text(stored_as(-1e9, np.float16))} and "
            f"{said} gets {values_text(half.weights[row])} (pitfall “−1e9 in float16” in "
            "section 6)."
        )
    st.markdown("**attncore's policy:** a row with no key gets all-zero weights and a zero "
                "output, and is flagged; never NaN.")


@st.fragment
def leakage(real: list[str], w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray) -> None:
    """Section 4: the causal mask hides the future. Its text box reruns this section only."""
    st.header("4 · The leakage test: the causal mask hides the future")
    swap = st.text_input("Replace the last real token with", "dog", key="mk_swap",
                         max_chars=40, **URL)
    swap_tokens = tokenize(swap or "")
    if not real:
        st.info("This sentence is empty: choose another.")
        return
    if not swap_tokens:
        st.info("Type a word to put in place of the last token.")
        return
    changed = [*real[:-1], swap_tokens[0]]
    x_real = toy_embeddings(real, D_MODEL, decimals=None)
    x_changed = toy_embeddings(changed, D_MODEL, decimals=None)
    if np.array_equal(x_real, x_changed):
        st.info(f"“{md_escape(swap_tokens[0])}” has the same embedding as the last token "
                "(words are case-insensitive): type a different word.")
        return
    leak = leakage_test(x_real, x_changed, w_q, w_k, w_v, causal_mask(len(real)))
    st.dataframe(pd.DataFrame({"with causal mask": leak.diff_masked,
                               "without mask": leak.diff_unmasked},
                              index=[f"{i + 1}: {t}" for i, t in enumerate(real)]).T
                 .map(lambda v: f"{v:.3g}"), width="stretch")
    word = md_escape(swap_tokens[0])
    if leak.position == 0:
        st.markdown(f"Changing token 1 to “{word}”: this sentence has no earlier position "
                    "to check. Choose a sentence of two tokens or more.")
        return
    masked = float(np.max(leak.diff_masked[:leak.position]))
    unmasked = float(np.max(leak.diff_unmasked[:leak.position]))
    st.markdown(
        f"Changing token {leak.position + 1} to “{word}” (the causal mask alone, on this "
        f"sentence's {len(real)} real tokens): under the causal mask the largest change at "
        f"earlier positions is **{difference_text(masked)}**; without the mask it is "
        f"{said_number(unmasked)}."
    )


@st.fragment
def dropout(tokens: list[str], mask: np.ndarray, q: np.ndarray, k: np.ndarray,
            v: np.ndarray, weights: np.ndarray) -> None:
    """Section 5: masking is not dropout. Its slider reruns this section only."""
    st.header("5 · Masking is not dropout")
    # p_drop, not p: p is a probability or a position elsewhere in the product. The key and
    # the link keep their name.
    p_drop = st.slider("Attention dropout p_drop", 0.0, 0.9, 0.5, 0.1, key="mk_dropout", **URL)
    dropped = scaled_dot_product_attention(q, k, v, mask=mask, dropout=p_drop,
                                           rng=np.random.default_rng(1))
    # A static table, not st.dataframe: the grid's canvas cost most of this section's
    # redraw each time p_drop moved.
    after = dropped.dropout_weights.sum(axis=1)
    st.table(pd.DataFrame({"after masking": weights.sum(axis=1),
                           "after masking and dropout": after},
                          index=[f"{i + 1}: {t}" for i, t in enumerate(tokens)]).T
             .map(lambda v: f"{v:.4f}"))
    kept = ~fully_masked_rows(mask)
    off = int(np.count_nonzero(np.abs(after[kept] - 1) > 1e-12))
    if p_drop == 0:
        effect = "With p_drop = 0 nothing is dropped, so every row still sums as before."
    else:
        counted = (f"here {off} of the {int(kept.sum())} rows that keep a key are off 1 (one "
                   "draw, seed 1)" if kept.any() else "here no row keeps a key")
        effect = (f"Dropout zeroes each weight with probability p_drop *after* the softmax and "
                  f"rescales the survivors by 1/(1 − p_drop) = "
                  f"{number_text(1 / (1 - p_drop), 3)}, so a row's sum is no longer 1, only "
                  f"its expected value is: {counted}.")
    st.markdown(f"{effect} Masking acts *before* the normalisation, so every row that keeps "
                "a key still sums to 1.")


PITFALLS = ("inverted mask", "off-by-one causal mask", "softmax over the wrong axis",
            "−1e9 in float16")


def pitfall_figures(tokens: list[str], right: np.ndarray, wrong: np.ndarray, titles: tuple,
                    alts: tuple) -> None:
    """The right weights beside the mistaken ones."""
    for column, w, title, alt, side in zip(st.columns(2), (right, wrong), titles, alts,
                                           ("right", "wrong"), strict=True):
        with column:
            show_figure(matrix_heatmap(w, tokens, tokens, title=title, kind="weights",
                                       decimals=2, font_size=font),
                        key=f"mk_fig_pitfall_{side}",
                        alt=f"{alt} " + describe_matrix(w, tokens, tokens))


def whole_text(x: float) -> str:
    """A whole number with thousands separated (65,504), −∞, or in scientific notation
    from a million on."""
    if np.isinf(x) or abs(x) >= 1e6:
        return number_text(x, 3).replace("-", "−")
    return f"{x:,.0f}".replace("-", "−")


def named(tokens: list[str], i: int) -> str:
    return f"{i + 1} (“{md_escape(tokens[i])}”)"


def rows_named(tokens: list[str], rows: np.ndarray) -> str:
    rows = np.flatnonzero(rows)
    return ("Row " if rows.size == 1 else "Rows ") + ", ".join(named(tokens, i) for i in rows)


def inverted_mask(tokens: list[str], mask: np.ndarray, scores: np.ndarray,
                  weights: np.ndarray) -> None:
    """Pitfall (a): a "may attend" mask read as "masked"."""
    if not presenter:
        st.markdown(
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
    opened = read_mask(mask, "blocked")
    wrong = softmax(scores, mask=opened)
    pitfall_figures(tokens, weights, wrong,
                    ("Weights: True read as may attend", "Weights: True read as masked"),
                    ("The mask read as meant.", "The same mask read inverted."))
    empty = fully_masked_rows(opened)
    text = (f"Read as True = masked, the mask hides the {int(mask.sum())} cells it allows and "
            f"opens the {int((~mask).sum())} it hides")
    if empty.all():
        text += ": no row keeps a key."
    else:
        i = int(np.flatnonzero(~empty)[0])
        j = int(np.argmax(wrong[i]))
        text += (f". The weight left on the keys the mask allows is "
                 f"{difference_text(float(np.max(wrong[mask], initial=0.0)))}: every weight "
                 f"lands on a key the mask forbids. Query {named(tokens, i)} gives "
                 f"{number_text(wrong[i, j], 4)} to key {named(tokens, j)}, which it must "
                 "not see.")
    if empty.any() and not empty.all():
        text += (f" {rows_named(tokens, empty)} keep{'s' if empty.sum() == 1 else ''} no key: "
                 "NaN with a plain softmax, zeros here.")
    st.markdown(text)


def off_by_one(tokens: list[str], scores: np.ndarray) -> None:
    """Pitfall (b): np.triu(k=0) instead of k=1 as the blocked cells."""
    T = len(tokens)
    if not presenter:
        st.markdown(
            "Written as True = blocked, the causal mask is "
            "`np.triu(np.ones((T, T), dtype=bool), k=1)`: the cells strictly above the "
            "diagonal. With `k=0` the diagonal is blocked as well. Both use this sentence's "
            "scores with the causal mask alone."
        )
    right_mask, wrong_mask = ~blocked_triangle(T, 1), ~blocked_triangle(T, 0)
    right, wrong = softmax(scores, mask=right_mask), softmax(scores, mask=wrong_mask)
    pitfall_figures(tokens, right, wrong, ("Weights: triu(k=1) blocked (causal)",
                                           "Weights: triu(k=0) blocked (off by one)"),
                    ("The causal mask.", "The causal mask off by one: the diagonal blocked."))
    text = (f"With k = 0 no token sees itself: the diagonal weights, "
            f"{values_text(np.diag(right))} with k = 1, are {values_text(np.diag(wrong))}.")
    empty = fully_masked_rows(wrong_mask)
    if empty.any():
        text += (f" {rows_named(tokens, empty)} keep{'s' if empty.sum() == 1 else ''} no key: "
                 "NaN with a plain softmax, zeros here.")
    if T >= 2:
        text += (f" Query {named(tokens, 1)} can look only at token 1, with weight "
                 f"{number_text(wrong[1, 0], 4)} instead of {number_text(right[1, 0], 4)}.")
    st.markdown(text)


def wrong_axis(tokens: list[str], mask: np.ndarray, scores: np.ndarray,
               weights: np.ndarray) -> None:
    """Pitfall (c): the softmax over the queries instead of the keys."""
    if not presenter:
        st.markdown(
            "Each query's row must be normalised over the keys: `softmax(s, axis=-1)`. Over "
            "the queries (`axis=0`, or `axis=-2` with a batch) each *column* sums to 1 "
            "instead. Both use this lesson's mask."
        )
    if not mask.any():
        st.info("This mask allows no cell: there is nothing to normalise.")
        return
    wrong = softmax_over_queries(scores, mask)
    pitfall_figures(tokens, weights, wrong, ("Weights: softmax over keys (axis −1)",
                                             "Weights: softmax over queries (axis 0)"),
                    ("Rows sum to 1.", "Columns sum to 1."))
    rows, cols = wrong.sum(axis=1), wrong.sum(axis=0)
    live_rows, live_cols = mask.any(axis=1), mask.any(axis=0)
    col_gap = float(np.max(np.abs(cols[live_cols] - 1)))
    low, high = float(rows[live_rows].min()), float(rows[live_rows].max())
    text = (f"Over the queries, each of the {int(live_cols.sum())} columns that keep a query "
            f"sums to 1 (largest gap {difference_text(col_gap, rounding=True)})")
    if np.all(np.abs(rows[live_rows] - 1) <= 1e-12):
        text += (", and here the rows happen to sum to 1 as well"
                 + (" (one token: its row is its column)" if len(tokens) == 1 else "")
                 + ", so the mistake does not show. Try another mask or sentence.")
    else:
        text += (f", while the rows that keep a key sum to anything from "
                 f"{number_text(low, 4)} to {number_text(high, 4)} instead of 1.")
    st.markdown(text)
    if not presenter:
        st.table(pd.DataFrame({"row sums (queries)": rows, "column sums (keys)": cols},
                              index=[f"{i + 1}: {t}" for i, t in enumerate(tokens)]).T
                 .map(lambda v: f"{v:.4f}"))


def float16_fill(tokens: list[str], mask: np.ndarray, scores: np.ndarray) -> None:
    """Pitfall (d): −1e9 cannot be stored in float16."""
    T = len(tokens)
    if not presenter:
        st.markdown(
            "Code that fills masked scores with −1e9 instead of −∞ meets float16, the "
            "half-precision type used to save memory, which cannot hold −1e9. NumPy, as "
            "here, stores it as −∞ (so does PyTorch's `.half()`); PyTorch's `masked_fill` on "
            "a float16 tensor refuses it instead, with “RuntimeError: value cannot be "
            "converted to type at::Half without overflow”. Below, the last row is masked "
            "completely, as section 3 does by default, and the masked softmax is computed in "
            "each type."
        )
    blocked = mask.copy()
    blocked[-1] = False  # the last row masked completely, as section 3 does by default
    kept = ~fully_masked_rows(blocked)
    lowest = float(np.finfo(np.float16).min)
    cases = [("float64", np.float64, -1e9, "−1e9"), ("float32", np.float32, -1e9, "−1e9"),
             ("float16", np.float16, -1e9, "−1e9"),
             ("float16", np.float16, lowest, "finfo(float16).min")]
    table, results = {}, {}
    for name, dtype, fill, fill_name in cases:
        plain = plain_masked_softmax(scores, blocked, fill, dtype)
        reference = plain_masked_softmax(scores, blocked, -np.inf, dtype)
        results[(name, fill)] = plain
        gap = np.max(np.abs(plain.weights[kept].astype(np.float64)
                            - reference.weights[kept].astype(np.float64)), initial=0.0)
        largest = float(np.finfo(dtype).max)
        table[f"{name}, fill {fill_name}"] = {
            "largest finite number": whole_text(largest),
            "the fill, as stored": whole_text(stored_as(fill, dtype)),
            f"row {T}, fully masked: each weight": values_text(plain.weights[-1]),
            "other rows: largest difference from fill −∞": difference_text(float(gap)),
        }
    st.table(pd.DataFrame(table).T)
    half = results[("float16", -1e9)]
    double = results[("float64", -1e9)]
    largest16 = float(np.finfo(np.float16).max)
    like_inf = " as with −∞ in section 3" if np.all(np.isnan(half.weights[-1])) else ""
    text = (f"float16's largest finite number is {whole_text(largest16)}, so −1e9 is stored "
            f"as {whole_text(stored_as(-1e9, np.float16))}, and row {named(tokens, T - 1)}, "
            f"masked completely, gets **{values_text(half.weights[-1])}**{like_inf}; in "
            f"float64 it gets {values_text(double.weights[-1])}.")
    if not presenter:
        low = results[("float16", lowest)]
        alike = np.allclose(low.weights[-1].astype(np.float64), double.weights[-1],
                            rtol=float(np.finfo(np.float16).eps))
        text += (f" The float16 type's own lowest number, `np.finfo(np.float16).min` = "
                 f"{whole_text(lowest)}, is stored as it is: with it that row gets "
                 f"{values_text(low.weights[-1])}"
                 + (", as −1e9 gives in float64 (to float16's precision)." if alike else "."))
    st.markdown(text)


@st.fragment
def pitfalls(tokens: list[str], mask: np.ndarray, scores: np.ndarray,
             weights: np.ndarray) -> None:
    """Section 6: four ways to get masking wrong, each computed on this sentence. Its
    picker reruns this section only."""
    st.header("6 · Four pitfalls of masking by hand")
    if not presenter:
        st.markdown("Each is computed on this sentence's scores: what the right code gives "
                    "beside what the mistake gives.")
    pick = st.radio("Pitfall", PITFALLS, key="mk_pitfall", horizontal=True, **URL)
    if pick == "inverted mask":
        inverted_mask(tokens, mask, scores, weights)
    elif pick == "off-by-one causal mask":
        off_by_one(tokens, scores)
    elif pick == "softmax over the wrong axis":
        wrong_axis(tokens, mask, scores, weights)
    else:
        float16_fill(tokens, mask, scores)


DOWNLOADS = ["Mask", "Scores", "Masked scores", "Weights", "Output"]


def download_matrices(results: dict) -> dict:
    """The matrices the lesson shows now: name -> (matrix, row labels, column labels)."""
    tokens, trace = results["tokens"], results["trace"]
    return dict(zip(DOWNLOADS, [
        (results["mask"].astype(int), tokens, tokens),
        (trace.scaled_scores, tokens, tokens),
        (trace.masked_scores, tokens, tokens),
        (trace.weights, tokens, tokens),
        (trace.output, tokens, [f"d{c + 1}" for c in range(D_MODEL)])], strict=True))


def download_trace(results: dict) -> dict:
    """The whole computation the lesson shows now, for the JSON download."""
    trace = results["trace"]
    return {
        "batch": results["batch"], "lengths": results["lengths"],
        "sentence": results["sentence"], "mask_kind": results["mask_kind"],
        "mask": results["mask"], "scores": trace.scaled_scores,
        "masked_scores": trace.masked_scores, "weights": trace.weights,
        "fully_masked_rows": trace.fully_masked, "output": trace.output,
    }


@st.fragment
def lesson(results: dict) -> None:
    """The batch, the controls and sections 1 to 5.

    A fragment: its controls rerun the lesson only, not the title, the closing notes
    and the downloads below it. What the sections show goes into ``results``, which
    the download buttons read when clicked.
    """
    # In presenter mode the text box shares the row of the controls, so that the masks show
    # on the first screen.
    if presenter:
        top, c1, c2, c3 = st.columns([3, 2, 3, 3])
    else:
        top = st.container()
    text = top.text_area("Sentences, one per line (1 to 4)", DEFAULT_TEXT, key="mk_text",
                         max_chars=2000, **URL)
    lines = [line for line in (text or "").splitlines() if line.strip()]
    if not lines:
        offer_downloads(results, None)
        st.info("Type at least one sentence (one per line) to build a batch.")
        return
    if len(lines) > MAX_SENTENCES:
        st.warning(f"Only the first {MAX_SENTENCES} sentences are used.")
        lines = lines[:MAX_SENTENCES]
    if any(len(tokenize(line)) > MAX_TOKENS for line in lines):
        st.warning(f"Sentences longer than {MAX_TOKENS} tokens are cut to {MAX_TOKENS}.")
    try:
        batch, lengths = pad_batch(lines, max_tokens=MAX_TOKENS)
    except ValueError as exc:
        offer_downloads(results, None)
        show_error(exc)
        return
    # The downloads offer the same matrices whatever the batch (none on a projector).
    offer_downloads(results, None if presenter else DOWNLOADS)
    B, T = len(batch), len(batch[0])
    if not presenter:
        st.markdown(f"**The batch** (B = {B} sentences, padded with `{PAD}` to T = {T} tokens):")
        st.dataframe(pd.DataFrame(batch, index=[f"sentence {b + 1}" for b in range(B)],
                                  columns=[f"{t + 1}" for t in range(T)]), width="stretch")
        c1, c2, c3 = st.columns([2, 3, 2])
    sentence_label = "sentence {}".format
    b = c1.selectbox("Sentence", range(B), format_func=lambda i: sentence_label(i + 1),
                     key="mk_sentence", **URL,
                     **keep_offered("mk_sentence", range(B), min(1, B - 1),
                                    lambda i: sentence_label(i + 1)))
    kind = c2.selectbox("Mask", list(MASKS), index=2, key="mk_mask", **URL)
    # Lesson 11's window is another one: causal, the W most recent tokens.
    c2.caption(MASKS[kind] + (f" (lesson 11's {term_link('sliding-window', 'sliding window')} "
                              "is causal instead: the W most recent tokens)"
                              if kind == "window" and not presenter else ""))
    # r = T − 1 already lets every query see every key, so the slider stops there.
    width = bounded_slider(c3, "Window radius r", 0, T - 1, 1, "mk_window",
                           disabled=kind != "window")
    padded = kind in PADDING_MASKS
    pad_queries = (c3 if presenter else st).toggle("Mask padding query rows too", value=False,
                            key="mk_pad_queries", disabled=not padded, **URL,
                            help="Acts with the padding masks only. Off: padding queries still "
                                 "attend to real tokens (their outputs are ignored later). On: "
                                 "their rows are fully masked and get all-zero weights.")
    if not padded and not presenter:
        st.caption(f"The padding-rows switch acts with the padding masks only "
                   f"({' and '.join(PADDING_MASKS)}); the {kind} mask leaves padding alone.")
    pad_queries = pad_queries and padded
    tokens = batch[b]
    length = int(lengths[b])

    pad_keys = padding_mask(lengths, T, queries=pad_queries)[b]  # (T, T) or (1, T)
    pad_m = np.broadcast_to(pad_keys, (T, T))
    causal = causal_mask(T)
    window = local_window(T, width)
    st.header("1 · The masks, for this sentence")
    if not presenter:
        st.markdown("Rows are queries, columns are keys; ✓ means *may attend*. A mask is a "
                    "boolean matrix, and combining masks is a logical AND. The "
                    f"{term_link('causal-mask', 'causal mask')} lets query i see keys j ≤ i: "
                    "itself and the tokens before it.")
    if kind == "custom":
        st.markdown("Tick the cells that may be attended to (the default is causal):")
        # pandas' nullable "boolean", not NumPy's bool: a cell the student empties comes
        # back as None, which a bool column can hold only by changing its type (pandas
        # warns of that in the server's log on every such edit).
        grid = pd.DataFrame(causal, columns=[f"{t + 1}" for t in range(T)],
                            index=[f"{t + 1}" for t in range(T)]).astype("boolean")
        edited = st.data_editor(grid, key=editor_key("mk_custom", T), num_rows="fixed",
                                column_config={c: st.column_config.CheckboxColumn(c)
                                               for c in grid.columns})
        custom = edited.eq(True).fillna(False).to_numpy(dtype=bool)  # emptied: not ticked
    else:
        custom = causal
    chosen = {
        "padding": pad_m, "causal": causal, "padding+causal": combine_masks(pad_m, causal),
        "window": window, "custom": custom, "none": np.ones((T, T), dtype=bool),
    }
    mask = chosen[kind]
    shown = ["padding", "causal", "padding+causal", kind if kind not in
             ("padding", "causal", "padding+causal", "none") else "window"]
    masks = [chosen[name] for name in shown]
    show_figure(heatmap_grid(masks, tokens, tokens, shown, kind="mask", font_size=font - 2),
                key="mk_fig_masks",
                alt="Masks, query rows and key columns; ✓ may attend, ✗ masked. "
                    + describe_grid(masks, shown, tokens, tokens, kind="mask"))

    rng = np.random.default_rng(0)
    w_q, w_k, w_v = (normal_weights(rng, (D_MODEL, D_MODEL)) for _ in range(3))
    x = toy_embeddings(tokens, D_MODEL, decimals=None)
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    trace = scaled_dot_product_attention(q, k, v, mask=mask)
    results |= {"batch": batch, "lengths": lengths, "sentence": b, "mask_kind": kind,
                "mask": mask, "tokens": tokens, "trace": trace}
    st.header(f"2 · Attention with the {kind} mask")
    if not presenter:
        st.markdown(f"{term_link('self-attention', 'Self-attention')}: Q = X W_Q, K = X W_K, "
                    "V = X W_V, all from the toy word embeddings X of this sentence (d_model = "
                    f"d_k = {D_MODEL}). Masked scores become −∞, so their exponentials are "
                    "exactly 0; the other cells are the scores QKᵀ/√d_k themselves.")
    c1, c2 = st.columns(2)
    with c1:
        show_figure(matrix_heatmap(trace.masked_scores, tokens, tokens,
                                   title="Scores QKᵀ/√d_k, −∞ where masked", kind="scores",
                                   decimals=2, font_size=font), key="mk_fig_masked",
                    alt="Scores, −∞ where masked. " + describe_matrix(
                        trace.masked_scores, tokens, tokens, kind="scores"))
    with c2:
        show_figure(matrix_heatmap(trace.weights, tokens, tokens, title="Weights",
                                   kind="weights", decimals=2, font_size=font),
                    key="mk_fig_weights",
                    alt="Weights: masked cells exactly 0. "
                        + describe_matrix(trace.weights, tokens, tokens))
    sums = trace.weights.sum(axis=1)
    masked_values = trace.weights[~mask]
    masked_text = (f"{masked_values.size} cells, the largest is "
                   f"{difference_text(np.max(masked_values))}" if masked_values.size
                   else "none (no cell is masked)")
    st.markdown(f"**Masked weights:** {masked_text}. **Row sums:** "
                f"{', '.join(f'{s:.6f}' for s in sums)}.")
    blocked = np.flatnonzero(trace.fully_masked)
    if blocked.size:
        names = ", ".join(f"{i + 1} ({md_escape(tokens[i])})" for i in blocked)
        st.warning(f"Fully masked rows: {names}. Every key is masked, so there is nothing to "
                   "attend to: by our policy these rows get all-zero weights and a zero output "
                   "(never NaN). Section 3 shows what other choices give.")

    fully_masked_row(tokens, mask, q, k, v, trace.scaled_scores)
    leakage(tokens[:length], w_q, w_k, w_v)
    dropout(tokens, mask, q, k, v, trace.weights)
    pitfalls(tokens, mask, trace.scaled_scores, trace.weights)


def closing_notes() -> None:
    """What to notice, the formula and, off the projector, things to try and questions."""
    bullet_list("What to notice", [
        "Masked weights are exactly 0, not just small: the −∞ scores give e^(−∞) = 0.",
        "Every row with at least one allowed key sums to 1: the softmax renormalises over the "
        "keys that remain.",
        "Padding masks columns (keys); the causal mask is lower triangular; combined, a real "
        "token's query sees itself and the real tokens before it.",
        "Under the causal mask, changing a later token leaves earlier outputs exactly unchanged.",
    ])
    st.subheader("The formula")
    st.latex(r"w_{ij} = \frac{M_{ij}\, e^{s_{ij}}}{\sum_{j'} M_{ij'}\, e^{s_{ij'}}}"
             r" = \mathrm{softmax}_j\big(s_{ij} + \log M_{ij}\big),\quad"
             r" M_{ij} \in \{0, 1\},\ \log 0 = -\infty")
    st.markdown("A row with no allowed key (every M_ij = 0) makes this 0/0: attncore gives it "
                "all-zero weights and flags it (section 3).")
    if not presenter:
        bullet_list("Try this", [
            "Choose “custom” and untick a whole row: the row is flagged as fully masked.",
            "With the default sentences, choose sentence 2 (“A dog barked”, the shortest) and "
            "the padding mask: its `<pad>` columns are grey (−∞) in the scores and exactly 0 in "
            "the weights.",
            "Switch on “Mask padding query rows too” and look at the last rows.",
            "Choose the window mask with radius r = 0: every token attends only to itself, so "
            "its output is its value.",
        ], expanded=False)
        practice_questions("mk", [
            {"q": "A row has scores [2, 1, 5] and the third key is masked. What is the weight "
                  "of the first key?",
             "value": float(np.e / (np.e + 1)), "tol": 1e-3,
             "a": "Only keys 1 and 2 remain: e² / (e² + e¹) = e / (e + 1) ≈ 0.7311."},
            {"q": "Why does a padding mask act on keys (columns) rather than queries (rows)?",
             "a": "A real token must not take information from padding, so padding keys are "
                  "hidden from every query. The outputs at padding positions are simply ignored "
                  "later, so their rows need no mask (masking them fully gives zero rows)."},
            {"q": "With dropout p_drop = 0.5, can a row of weights sum to more than 1?",
             "a": "Yes: surviving weights are doubled (1/(1 − p_drop) = 2), so a row that "
                  "summed to 1 now sums to anything from 0 to 2; only its expected value is 1."},
        ])


results = {}
lesson(results)
closing_notes()
lesson_downloads("mk", results, download_matrices, download_trace)
finish_page()
