"""Lesson 3: causal and padding masks on a padded batch of sentences."""

import numpy as np
import pandas as pd
import streamlit as st

from attncore import causal_mask, combine_masks, padding_mask, pitfalls
from attncore import window_mask as local_window
from attncore.masks import leakage_test
from attncore.text import PAD, pad_batch, tokenize, toy_embeddings
from pages.text import masks as say
from pages.ui.choices import keep_offered
from pages.ui.controls import URL, bounded_slider
from pages.ui.figures import describe_grid, describe_matrix, heatmap_grid, matrix_heatmap
from pages.ui.figures.models import masked_flow
from pages.ui.glossary import term_link
from pages.ui.labels import md_escape
from pages.ui.layout import bullet_list, practice_questions, show_diagram, show_error, show_figure
from pages.ui.live import offer_downloads
from pages.ui.page import Page, lesson_page
from pages.ui.tables import editor_key

MAX_SENTENCES = 4
MAX_TOKENS = 24  # per sentence, so every matrix stays readable
D_MODEL = 8
DROPOUT_SEED = 1  # which weights section 5's one draw of dropout drops
DEFAULT_TEXT = "The cat sat on the mat\nA dog barked\nBirds sing at dawn"
MASKS = {  # short label (kept in the link) -> what it does
    "padding": "no query may attend to a <pad> key",
    "causal": "query i may attend to keys j ≤ i only: the "
              f"{term_link('causal-mask', 'causal mask')}",
    "padding+causal": f"the padding and {term_link('causal-mask', 'causal masks')} combined "
                      "(logical AND)",
    "window": "query i may attend to keys with |i − j| ≤ r: symmetric, r on each side",
    "custom": "tick the cells yourself",
    "none": "every query attends to every key",
}

PADDING_MASKS = ("padding", "padding+causal")  # the masks the padding-rows switch acts on


def row_labels(tokens: list[str]) -> list[str]:
    return [f"{i + 1}: {t}" for i, t in enumerate(tokens)]


@st.fragment
def fully_masked_section(page: Page, tokens: list[str], mask: np.ndarray,
                         scores: np.ndarray) -> None:
    """Section 3: one row masked completely, under three policies. Its row picker reruns
    this section only."""
    st.header("3 · −∞ or −1e9, and the fully masked row")
    T, labels = len(tokens), row_labels(tokens)
    row = st.selectbox("Row to mask completely", range(T), format_func=labels.__getitem__,
                       key="mk_block_row", **URL,
                       **keep_offered("mk_block_row", range(T), T - 1, labels.__getitem__))
    result = pitfalls.fully_masked_row(scores, mask, row)
    rows = {"fill −∞, plain softmax": result.inf.weights[row],
            "fill −1e9, plain softmax": result.big.weights[row],
            "attncore's policy": result.policy[row]}
    # A static table: three rows of text need no canvas grid (measured: no difference).
    st.table(pd.DataFrame({name: ["NaN" if np.isnan(v) else f"{v:.4f}" for v in vals]
                           for name, vals in rows.items()},
                          index=[f"key {j + 1}: {t}" for j, t in enumerate(tokens)]).T)
    st.markdown(say.fully_masked_text(tokens, result))
    if page.presenter:
        return
    st.markdown(say.plain_steps_text(tokens, result))
    kept = say.kept_rows_text(tokens, result)
    if kept:
        st.markdown(kept)
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
                              index=row_labels(real)).T
                 .map(lambda v: f"{v:.3g}"), width="stretch")
    st.markdown(say.leakage_text(leak, md_escape(swap_tokens[0]), len(real)))


@st.fragment
def dropout(tokens: list[str], mask: np.ndarray, q: np.ndarray, k: np.ndarray,
            v: np.ndarray) -> None:
    """Section 5: masking is not dropout. Its slider reruns this section only."""
    st.header("5 · Masking is not dropout")
    # p_drop, not p: p is a probability or a position elsewhere in the product. The key and
    # the link keep their name.
    p_drop = st.slider("Attention dropout p_drop", 0.0, 0.9, 0.5, 0.1, key="mk_dropout", **URL)
    sums = pitfalls.dropout_sums(q, k, v, mask, p_drop, np.random.default_rng(DROPOUT_SEED))
    # A static table, not st.dataframe: the grid's canvas cost most of this section's
    # redraw each time p_drop moved.
    st.table(pd.DataFrame({"after masking": sums.before,
                           "after masking and dropout": sums.after},
                          index=row_labels(tokens)).T
             .map(lambda v: f"{v:.4f}"))
    st.markdown(say.dropout_text(sums, DROPOUT_SEED))


PITFALLS = ("inverted mask", "off-by-one causal mask", "softmax over the wrong axis",
            "−1e9 in float16")


def pitfall_figures(page: Page, tokens: list[str], right: np.ndarray, wrong: np.ndarray,
                    titles: tuple, alts: tuple) -> None:
    """The right weights beside the mistaken ones."""
    for column, w, title, alt, side in zip(st.columns(2), (right, wrong), titles, alts,
                                           ("right", "wrong"), strict=True):
        with column:
            show_figure(matrix_heatmap(w, tokens, tokens, title=title, kind="weights",
                                       decimals=2, font_size=page.font),
                        key=f"mk_fig_pitfall_{side}",
                        alt=f"{alt} " + describe_matrix(w, tokens, tokens))


def inverted_section(page: Page, tokens: list[str], mask: np.ndarray, scores: np.ndarray,
                     weights: np.ndarray) -> None:
    """Pitfall (a): a "may attend" mask read as "masked"."""
    if not page.presenter:
        st.markdown(say.conventions_text())
    result = pitfalls.inverted_mask(scores, mask)
    pitfall_figures(page, tokens, weights, result.weights,
                    ("Weights: True read as may attend", "Weights: True read as masked"),
                    ("The mask read as meant.", "The same mask read inverted."))
    st.markdown(say.inverted_text(tokens, result))


def off_by_one_section(page: Page, tokens: list[str], scores: np.ndarray) -> None:
    """Pitfall (b): np.triu(k=0) instead of k=1 as the blocked cells."""
    if not page.presenter:
        st.markdown(
            "Written as True = blocked, the causal mask is "
            "`np.triu(np.ones((T, T), dtype=bool), k=1)`: the cells strictly above the "
            "diagonal. With `k=0` the diagonal is blocked as well. Both use this sentence's "
            "scores with the causal mask alone."
        )
    result = pitfalls.off_by_one(scores)
    pitfall_figures(page, tokens, result.right, result.wrong,
                    ("Weights: triu(k=1) blocked (causal)",
                     "Weights: triu(k=0) blocked (off by one)"),
                    ("The causal mask.", "The causal mask off by one: the diagonal blocked."))
    st.markdown(say.off_by_one_text(tokens, result))


def wrong_axis_section(page: Page, tokens: list[str], mask: np.ndarray, scores: np.ndarray,
                       weights: np.ndarray) -> None:
    """Pitfall (c): the softmax over the queries instead of the keys."""
    if not page.presenter:
        st.markdown(
            "Each query's row must be normalised over the keys: `softmax(s, axis=-1)`. Over "
            "the queries (`axis=0`, or `axis=-2` with a batch) each *column* sums to 1 "
            "instead. Both use this lesson's mask."
        )
    if not mask.any():
        st.info("This mask allows no cell: there is nothing to normalise.")
        return
    result = pitfalls.wrong_axis(scores, mask)
    pitfall_figures(page, tokens, weights, result.weights,
                    ("Weights: softmax over keys (axis −1)",
                     "Weights: softmax over queries (axis 0)"),
                    ("Rows sum to 1.", "Columns sum to 1."))
    st.markdown(say.wrong_axis_text(tokens, result))
    if not page.presenter:
        st.table(pd.DataFrame({"row sums (queries)": result.row_sums,
                               "column sums (keys)": result.column_sums},
                              index=row_labels(tokens)).T
                 .map(lambda v: f"{v:.4f}"))


def float16_section(page: Page, tokens: list[str], mask: np.ndarray,
                    scores: np.ndarray) -> None:
    """Pitfall (d): −1e9 cannot be stored in float16."""
    if not page.presenter:
        st.markdown(
            "Code that fills masked scores with −1e9 instead of −∞ meets float16, the "
            "half-precision type used to save memory, which cannot hold −1e9. NumPy, as "
            "here, stores it as −∞ (so does PyTorch's `.half()`); PyTorch's `masked_fill` on "
            "a float16 tensor refuses it instead, with “RuntimeError: value cannot be "
            "converted to type at::Half without overflow”. Below, the last row is masked "
            "completely, as section 3 does by default, and the masked softmax is computed in "
            "each type."
        )
    fills = pitfalls.fills_by_type(scores, mask)  # the last row masked, as in section 3
    st.table(pd.DataFrame(say.fills_table(fills)).T)
    text = say.float16_text(tokens, fills)
    if not page.presenter:
        text += say.lowest_fill_text(fills)
    st.markdown(text)


@st.fragment
def pitfalls_section(page: Page, tokens: list[str], mask: np.ndarray, scores: np.ndarray,
                     weights: np.ndarray) -> None:
    """Section 6: four ways to get masking wrong, each computed on this sentence. Its
    picker reruns this section only."""
    st.header("6 · Four pitfalls of masking by hand")
    if not page.presenter:
        st.markdown("Each is computed on this sentence's scores: what the right code gives "
                    "beside what the mistake gives.")
    pick = st.radio("Pitfall", PITFALLS, key="mk_pitfall", horizontal=True, **URL)
    if pick == "inverted mask":
        inverted_section(page, tokens, mask, scores, weights)
    elif pick == "off-by-one causal mask":
        off_by_one_section(page, tokens, scores)
    elif pick == "softmax over the wrong axis":
        wrong_axis_section(page, tokens, mask, scores, weights)
    else:
        float16_section(page, tokens, mask, scores)


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


def custom_mask(causal: np.ndarray) -> np.ndarray:
    """The mask the student ticks, starting from the causal one."""
    T = len(causal)
    st.markdown("Tick the cells that may be attended to (the default is causal):")
    # pandas' nullable "boolean", not NumPy's bool: a cell the student empties comes
    # back as None, which a bool column can hold only by changing its type (pandas
    # warns of that in the server's log on every such edit).
    grid = pd.DataFrame(causal, columns=[f"{t + 1}" for t in range(T)],
                        index=[f"{t + 1}" for t in range(T)]).astype("boolean")
    edited = st.data_editor(grid, key=editor_key("mk_custom", T), num_rows="fixed",
                            column_config={c: st.column_config.CheckboxColumn(c)
                                           for c in grid.columns})
    return edited.eq(True).fillna(False).to_numpy(dtype=bool)  # emptied: not ticked


@st.fragment
def lesson(page: Page, results: dict) -> None:
    """The batch, the controls and sections 1 to 6.

    A fragment: its controls rerun the lesson only, not the title, the closing notes
    and the downloads below it. What the sections show goes into ``results``, which
    the download buttons read when clicked.
    """
    # In presenter mode the text box shares the row of the controls, so that the masks show
    # on the first screen.
    if page.presenter:
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
    offer_downloads(results, None if page.presenter else DOWNLOADS)
    B, T = len(batch), len(batch[0])
    if not page.presenter:
        st.markdown(say.batch_text(batch, PAD, D_MODEL))
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
                              if kind == "window" and not page.presenter else ""))
    # r = T − 1 already lets every query see every key, so the slider stops there.
    width = bounded_slider(c3, "Window radius r", 0, T - 1, 1, "mk_window",
                           disabled=kind != "window")
    padded = kind in PADDING_MASKS
    pad_queries = (c3 if page.presenter else st).toggle(
        "Mask padding query rows too", value=False, key="mk_pad_queries", disabled=not padded,
        **URL, help="Acts with the padding masks only. Off: padding queries still attend to "
                    "real tokens (their outputs are ignored later). On: their rows are fully "
                    "masked and get all-zero weights.")
    if not padded and not page.presenter:
        st.caption(f"The padding-rows switch acts with the padding masks only "
                   f"({' and '.join(PADDING_MASKS)}); the {kind} mask leaves padding alone.")
    pad_queries = pad_queries and padded
    tokens = batch[b]
    length = int(lengths[b])

    pad_keys = padding_mask(lengths, T, queries=pad_queries)[b]  # (T, T) or (1, T)
    pad_m = np.broadcast_to(pad_keys, (T, T))
    causal = causal_mask(T)
    model = st.container()  # the model's diagram, once the mask (perhaps ticked) is known
    st.header("1 · The masks, for this sentence")
    if not page.presenter:
        st.markdown("Rows are queries, columns are keys; ✓ means *may attend*. A mask is a "
                    "boolean matrix, and combining masks is a logical AND. The "
                    f"{term_link('causal-mask', 'causal mask')} lets query i see keys j ≤ i: "
                    "itself and the tokens before it.")
    chosen = {
        "padding": pad_m, "causal": causal, "padding+causal": combine_masks(pad_m, causal),
        "window": local_window(T, width),
        "custom": custom_mask(causal) if kind == "custom" else causal,
        "none": np.ones((T, T), dtype=bool),
    }
    mask = chosen[kind]
    with model:
        show_diagram(masked_flow(batch, lengths, b, mask, kind, D_MODEL, page.font, pad=PAD,
                                 radius=width if kind == "window" else None),
                     key=page.key("diagram_flow"))
    shown = ["padding", "causal", "padding+causal", kind if kind not in
             ("padding", "causal", "padding+causal", "none") else "window"]
    masks = [chosen[name] for name in shown]
    show_figure(heatmap_grid(masks, tokens, tokens, shown, kind="mask",
                             font_size=page.font - 2),
                key="mk_fig_masks",
                alt="Masks, query rows and key columns; ✓ may attend, ✗ masked. "
                    + describe_grid(masks, shown, tokens, tokens, kind="mask"))

    x = toy_embeddings(tokens, D_MODEL, decimals=None)
    attention = pitfalls.random_self_attention(x, mask, np.random.default_rng(0))
    trace = attention.trace
    results |= {"batch": batch, "lengths": lengths, "sentence": b, "mask_kind": kind,
                "mask": mask, "tokens": tokens, "trace": trace}
    st.header(f"2 · Attention with the {kind} mask")
    if not page.presenter:
        st.markdown(f"{term_link('self-attention', 'Self-attention')}: Q = X W_Q, K = X W_K, "
                    "V = X W_V, all from the toy word embeddings X of this sentence (d_model = "
                    f"d_k = {D_MODEL}). Masked scores become −∞, so their exponentials are "
                    "exactly 0; the other cells are the scores QKᵀ/√d_k themselves.")
    c1, c2 = st.columns(2)
    with c1:
        show_figure(matrix_heatmap(trace.masked_scores, tokens, tokens,
                                   title="Scores QKᵀ/√d_k, −∞ where masked", kind="scores",
                                   decimals=2, font_size=page.font), key="mk_fig_masked",
                    alt="Scores, −∞ where masked. " + describe_matrix(
                        trace.masked_scores, tokens, tokens, kind="scores"))
    with c2:
        show_figure(matrix_heatmap(trace.weights, tokens, tokens, title="Weights",
                                   kind="weights", decimals=2, font_size=page.font),
                    key="mk_fig_weights",
                    alt="Weights: masked cells exactly 0. "
                        + describe_matrix(trace.weights, tokens, tokens))
    st.markdown(say.masked_weights_text(trace.weights, mask))
    warning = say.fully_masked_warning(tokens, trace.fully_masked)
    if warning:
        st.warning(warning)

    fully_masked_section(page, tokens, mask, trace.scaled_scores)
    leakage(tokens[:length], attention.w_q, attention.w_k, attention.w_v)
    dropout(tokens, mask, trace.q, trace.k, trace.v)
    pitfalls_section(page, tokens, mask, trace.scaled_scores, trace.weights)


def closing_notes(page: Page) -> None:
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
    st.latex(say.MASKED_SOFTMAX)
    st.markdown("Here s̃_ij = q_i · k_j / √d_k, the scaled score. A row with no allowed key "
                "(every M_ij = 0) makes this 0/0: attncore gives it all-zero weights and flags "
                "it (section 3).")
    if not page.presenter:
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
             "a": "Real tokens must not read padding, so padding keys are hidden from every "
                  "query. Outputs at padding positions are ignored later, so their rows need no "
                  "mask (masked fully, they are zero rows in attncore, whose softmax gives a fully "
                  "masked row zero weights; a plain −∞ softmax gives NaN, as section 3 shows)."},
            {"q": "With dropout p_drop = 0.5, can a row of weights sum to more than 1?",
             "a": "Yes: surviving weights are doubled (1/(1 − p_drop) = 2), so a row that "
                  "summed to 1 now sums to anything from 0 to 2; only its expected value is 1."},
        ])


with lesson_page("mk") as page:
    results = {}
    lesson(page, results)
    closing_notes(page)
    page.downloads(results, download_matrices, download_trace)
