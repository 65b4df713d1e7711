"""Lesson 3: causal and padding masks on a padded batch of sentences."""

import numpy as np
import pandas as pd
import streamlit as st

from attncore import causal_mask, combine_masks, padding_mask, scaled_dot_product_attention
from attncore import window_mask as local_window
from attncore.init import normal_weights
from attncore.masks import leakage_test
from attncore.softmax import softmax_with_fill
from attncore.text import PAD, pad_batch, tokenize, toy_embeddings
from pages.ui.choices import keep_offered
from pages.ui.controls import URL, bounded_slider
from pages.ui.figures import describe_grid, describe_matrix, heatmap_grid, matrix_heatmap
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
from pages.ui.numbers import difference_text
from pages.ui.tables import editor_key

MAX_SENTENCES = 4
MAX_TOKENS = 24  # per sentence, so every matrix stays readable
D_MODEL = 8
DEFAULT_TEXT = "The cat sat on the mat\nA dog barked\nBirds sing at dawn"
MASKS = {  # short label (kept in the link) -> what it does
    "padding": "no query may attend to a <pad> key",
    "causal": "query i may attend to keys j ≤ i only",
    "padding+causal": "padding and causal combined (logical AND)",
    "window": "query i may attend to keys with |i − j| ≤ r",
    "custom": "tick the cells yourself",
    "none": "every query attends to every key",
}

PADDING_MASKS = ("padding", "padding+causal")  # the masks the padding-rows switch acts on

presenter = setup_page("Masks", "🎭")
font = figure_font(presenter)
lesson_header(
    "3 · Causal and padding masks",
    "build a padded batch, see which keys each query may attend to, and check that masked "
    "weights are exactly 0 while every row still sums to 1.",
)

@st.fragment
def fully_masked_row(tokens: list[str], mask: np.ndarray, q: np.ndarray, k: np.ndarray,
                     v: np.ndarray, scores: np.ndarray) -> None:
    """Section 3: one row masked completely, under three policies. Its row picker reruns
    this section only."""
    st.header("3 · Why −∞ and not −1e9, and the fully masked row")
    T = len(tokens)

    def row_label(i: int) -> str:
        return f"{i + 1}: {tokens[i]}"

    row = st.selectbox("Row to mask completely", range(T), format_func=row_label,
                       key="mk_block_row", **URL,
                       **keep_offered("mk_block_row", range(T), T - 1, row_label))
    blocked_mask = mask.copy()
    blocked_mask[row] = False
    rows = {
        "fill −∞, plain softmax": softmax_with_fill(scores, blocked_mask, -np.inf)[row],
        "fill −1e9, plain softmax": softmax_with_fill(scores, blocked_mask, -1e9)[row],
        "attncore's policy": scaled_dot_product_attention(q, k, v,
                                                          mask=blocked_mask).weights[row],
    }
    # A static table, as in section 5: three rows of text that the mask picker changes
    # need no canvas grid (measured, it made no difference beyond the noise).
    st.table(pd.DataFrame({name: [f"{v:.4f}" for v in vals] for name, vals in rows.items()},
                          index=[f"key {j + 1}: {t}" for j, t in enumerate(tokens)]).T)
    st.markdown(
        "With −∞ every exponential is e^(−∞ − (−∞)) = e^NaN: the row is 0/0 = **NaN**, and "
        "NaN spreads through every later layer. With −1e9 the row silently becomes "
        "**uniform** over keys that were meant to be hidden. Our policy gives **zero "
        "weights** and flags the row."
    )


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
    earlier = leak.diff_masked[:leak.position]
    st.markdown(
        f"Changing token {leak.position + 1} to “{md_escape(swap_tokens[0])}”: under the "
        f"causal mask the largest change at earlier positions is "
        f"**{difference_text(np.max(earlier, initial=0.0))}**; without the mask it is "
        f"{np.max(leak.diff_unmasked[:leak.position], initial=0.0):.3g}."
    )


@st.fragment
def dropout(tokens: list[str], mask: np.ndarray, q: np.ndarray, k: np.ndarray,
            v: np.ndarray, weights: np.ndarray) -> None:
    """Section 5: masking is not dropout. Its slider reruns this section only."""
    st.header("5 · Masking is not dropout")
    p = st.slider("Attention dropout p", 0.0, 0.9, 0.5, 0.1, key="mk_dropout", **URL)
    dropped = scaled_dot_product_attention(q, k, v, mask=mask, dropout=p,
                                           rng=np.random.default_rng(1))
    # A static table, not st.dataframe: the grid's canvas cost most of this section's
    # redraw each time p moved.
    st.table(pd.DataFrame({"after masking": weights.sum(axis=1),
                           "after masking and dropout": dropped.dropout_weights.sum(axis=1)},
                          index=[f"{i + 1}: {t}" for i, t in enumerate(tokens)]).T
             .map(lambda v: f"{v:.4f}"))
    st.markdown(f"Dropout zeroes weights *after* the softmax and rescales the survivors by "
                f"1/(1 − p) = {1 / (1 - p):.3g}, so a row's sum is no longer 1 (only its "
                "expected value is). Masking acts *before* the normalisation, so rows still "
                "sum to 1.")


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
    c2.caption(MASKS[kind])
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
                    "boolean matrix, and combining masks is a logical AND.")
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
        st.markdown("Q = X W_Q, K = X W_K, V = X W_V from toy word embeddings X (d_model = "
                    f"{D_MODEL}). Masked scores become −∞, so their exponentials are exactly 0; "
                    "the other cells are the scores QKᵀ/√d_k themselves.")
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
    st.markdown(
        f"**Masked weights:** {masked_values.size} cells, the largest is "
        f"{difference_text(np.max(masked_values, initial=0.0))}. **Row sums:** "
        f"{', '.join(f'{s:.6f}' for s in sums)}."
    )
    blocked = np.flatnonzero(trace.fully_masked)
    if blocked.size:
        names = ", ".join(f"{i + 1} ({md_escape(tokens[i])})" for i in blocked)
        st.warning(f"Fully masked rows: {names}. Every key is masked, so there is nothing to "
                   "attend to: by our policy these rows get all-zero weights and a zero output "
                   "(never NaN). Section 3 shows what other choices give.")

    fully_masked_row(tokens, mask, q, k, v, trace.scaled_scores)
    leakage(tokens[:length], w_q, w_k, w_v)
    dropout(tokens, mask, q, k, v, trace.weights)


def closing_notes() -> None:
    """What to notice, the formula and, off the projector, things to try and questions."""
    bullet_list("What to notice", [
        "Masked weights are exactly 0, not just small: the −∞ scores give e^(−∞) = 0.",
        "Every row with at least one allowed key sums to 1: the softmax renormalises over the "
        "keys that remain.",
        "Padding masks columns (keys); the causal mask is lower triangular; combined, a query "
        "sees only earlier real tokens.",
        "Under the causal mask, changing a later token leaves earlier outputs exactly unchanged.",
    ])
    st.subheader("The formula")
    st.latex(r"w_{ij} = \frac{M_{ij}\, e^{s_{ij}}}{\sum_{j'} M_{ij'}\, e^{s_{ij'}}}"
             r" = \mathrm{softmax}_j\big(s_{ij} + \log M_{ij}\big),\quad"
             r" M_{ij} \in \{0, 1\},\ \log 0 = -\infty")
    if not presenter:
        bullet_list("Try this", [
            "Choose “custom” and untick a whole row: the row is flagged as fully masked.",
            "Choose sentence 2 (the shortest) with the padding mask: its <pad> columns are grey.",
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
            {"q": "With dropout p = 0.5, can a row of weights sum to more than 1?",
             "a": "Yes: surviving weights are doubled, so a row sums to anything from 0 to 2; "
                  "only its expected value is 1."},
        ])


results = {}
lesson(results)
closing_notes()
lesson_downloads("mk", results, download_matrices, download_trace)
finish_page()
