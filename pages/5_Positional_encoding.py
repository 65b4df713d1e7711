"""Lesson 5: positional encodings, sinusoidal and the others."""

import math

import numpy as np
import pandas as pd
import streamlit as st

from attncore import positional as pos
from attncore.init import normal_weights
from attncore.positional import permutation_test
from attncore.text import SENTENCES, toy_embeddings
from pages.ui.controls import URL, bounded_slider, capped_tokens, seed_input
from pages.ui.figures import (
    describe_lines,
    describe_matrix,
    line_chart,
    matrix_heatmap,
    said_number,
)
from pages.ui.glossary import term_link
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
from pages.ui.live import keep, lesson_downloads, offer_downloads
from pages.ui.numbers import difference_text, number_text

BASES = [100, 300, 1000, 3000, 10000, 30000, 100000]
DEFAULT_LEN, DEFAULT_D, DEFAULT_BASE = 64, 64, 10000
MAX_TOKENS = 24
# Above this, a difference is more than rounding (which is about 1e-16 here).
ORDER_MATTERS = 1e-9
TABLE_CELLS = 64  # rows and columns of the sinusoidal table drawn; larger tables are sampled
VIEWS = ["Table", "Chosen pairs", "Wavelengths"]
MAX_CURVES = 6  # sin/cos pairs drawn at once in "Chosen pairs"

presenter = setup_page("Positional encodings", "📍")
font = figure_font(presenter)
lesson_header(
    "5 · Positional encodings",
    "see how sines and cosines of many wavelengths give every position its own vector, "
    "why attention needs them, and how other schemes encode order.",
)

def position_labels(n: int) -> list[str]:
    """Positions p = 0, 1, …, n − 1: the formula's p, on every axis, table and download of
    the lesson (one numbering, so that row "1" is PE(1))."""
    return [f"{p}" for p in range(n)]


def sub(n: int) -> str:
    """A whole number as subscript characters, for prose: sub(-4) = "₋₄"."""
    return str(n).translate(str.maketrans("-0123456789", "₋₀₁₂₃₄₅₆₇₈₉"))


def cosine_text(x: float) -> str:
    """A cosine with 4 decimals: 0.99984 must not read as a rounded 1."""
    return number_text(x, 4)


@st.cache_data(max_entries=32, show_spinner=False)
def encodings(T: int, d: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    """The T × d sinusoidal table and its similarities PE·PEᵀ (T × T, a T²·d product),
    computed once per setting for the page and its figures."""
    pe = pos.sinusoidal(T, d, base)
    return pe, pe @ pe.T


def table_sample(T: int, d: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Rows and columns of the T × d table to draw: all of them up to TABLE_CELLS a side,
    else one position in ``row_step`` and one sin/cos pair in ``pair_step`` (both of its
    columns). Every drawn cell is a true entry: averaging blocks of the fast columns,
    which swing between −1 and 1, would paint them white."""
    row_step = -(-T // TABLE_CELLS)
    pair_step = -(-(d // 2) // (TABLE_CELLS // 2))
    rows = np.arange(0, T, row_step)
    pairs = np.arange(0, d // 2, pair_step)
    return rows, np.sort(np.concatenate([2 * pairs, 2 * pairs + 1])), row_step, pair_step


def sample_note(row_step: int, pair_step: int, examples: bool = False) -> str:
    """What a sampled table draws, e.g. "1 position in 8 and 1 sin/cos pair in 8"."""
    first = f" (p = 0, {row_step}, {2 * row_step}, …)" if examples else ""
    parts = [f"1 position in {row_step}{first}"] if row_step > 1 else []
    parts += [f"1 sin/cos pair in {pair_step}"] if pair_step > 1 else []
    return " and ".join(parts)


@st.cache_resource(max_entries=32, show_spinner=False)
def table_figures(T: int, d: int, base: float, font: int) -> dict:
    """The three large heatmaps depend only on these settings: build them once each, with
    their text alternatives; each entry is (figure, text alternative)."""
    pe, sim = encodings(T, d, base)
    cosine = sim / np.outer(np.linalg.norm(pe, axis=1), np.linalg.norm(pe, axis=1))
    positions = position_labels(T)
    rows, cols, row_step, pair_step = table_sample(T, d)
    title = f"PE: {T} positions × {d} dimensions"
    if row_step > 1 or pair_step > 1:
        title += f" ({sample_note(row_step, pair_step)} drawn)"
    table = matrix_heatmap(pe[np.ix_(rows, cols)], [positions[r] for r in rows],
                           [f"{c}" for c in cols], title=title, kind="scores", decimals=2,
                           x_title="dimension", y_title="position p", font_size=font,
                           height=480)
    table.update_traces(zmin=-1.0, zmax=1.0, selector={"type": "heatmap"})  # PE's true range
    # The similarities swing as fast as the fastest pair: sampled like the table's rows.
    drawn = [positions[r] for r in rows]
    note = f" ({sample_note(row_step, 1)} drawn)" if row_step > 1 else ""
    lengths = pos.wavelengths(d, base)
    table_alt = (f"The sinusoidal table, positions p = 0 to {T - 1} down and {d} dimensions "
                 f"across, values from {number_text(pe.min(), 3)} to "
                 f"{number_text(pe.max(), 3)}: dimension 2i is a sine and 2i + 1 a "
                 f"cosine of the position; pair 0 has a wavelength of 2π ≈ "
                 f"{said_number(lengths[0])} positions"
                 + (f", pair {d // 2 - 1} of {said_number(lengths[-1])}." if d > 2 else "."))
    distances = sorted({1, min(5, T - 1), T - 1})
    along = lambda m: "; ".join(f"at distance {k}: {said_number(m[0, k])}"  # noqa: E731
                                for k in distances)
    return {
        "table": (table, table_alt),
        "similarity": (
            # 2 decimals: at d_model = 2, PE(0)·PE(6) = cos 6 = 0.96 would print as 1.0,
            # the diagonal's value.
            matrix_heatmap(sim[np.ix_(rows, rows)], drawn, drawn, title="PE · PEᵀ" + note,
                           kind="scores", decimals=2, x_title="position q",
                           y_title="position p", font_size=font),
            f"PE(p) · PE(q) between every two positions: {sim[0, 0]:.3g} on the diagonal, "
            f"{along(sim)}; the same along each diagonal."),
        "cosine": (
            matrix_heatmap(cosine[np.ix_(rows, rows)], drawn, drawn,
                           title="Cosine similarity" + note, kind="scores", decimals=2,
                           x_title="position q", y_title="position p", font_size=font),
            f"Cosine similarity between every two positions: 1 on the diagonal, "
            f"{along(cosine)}; the same along each diagonal."),
    }


def sampled_rows_note(row_step: int) -> str:
    """What pair 0's columns look like when one row in ``row_step`` is drawn, decided by
    the turn the drawn rows show: pair 0 turns by ω₀ = 1 radian per position, so by
    ``row_step`` radians between drawn rows, which reads as speckle when that is more
    than a quarter turn, and as a slow wave the encoding does not have (an alias) when
    it is close to a whole number of turns."""
    seen = pos.apparent_turn(row_step)
    said = (f" Pair 0 turns by {row_step} radians between drawn rows (a full turn is 2π ≈ "
            f"6.28), which the drawn rows show as a turn of {seen:.2f} radians")
    if seen >= np.pi / 2:
        return said + ", more than a quarter turn from row to row: its columns look speckled."
    return (said + f": its columns seem to wave once every {2 * np.pi / seen:.1f} drawn rows, "
            f"an artefact of drawing 1 row in {row_step} (aliasing), not a slow wave of the "
            f"encoding, which turns once every 6.28 positions.")


@st.fragment
def table_section(pe: np.ndarray, base: float, table: tuple, font: int) -> None:
    """The table, chosen sin/cos pairs against position, or every pair's wavelength.

    One figure at a time: T, d_model and the base change all three, and every figure a
    slider changes costs the browser a redraw. The view picker reruns this section only.
    """
    T, d = pe.shape
    view = st.radio("Show", VIEWS, horizontal=True, key="pe_view", **URL,
                    help="The table as a heatmap, chosen columns of it as curves, or the "
                         "wavelength of every sin/cos pair.")
    lengths = pos.wavelengths(d, base)
    if view == "Table":
        show_figure(table[0], key="pe_fig_table", alt=table[1])
        _, _, row_step, pair_step = table_sample(T, d)
        if row_step > 1 or pair_step > 1:
            st.caption(f"The table has {T * d:,} entries: it draws "
                       f"{sample_note(row_step, pair_step, examples=True)}, "
                       f"each cell a true entry, never an average."
                       + (sampled_rows_note(row_step) if row_step > 1 else ""))
    elif view == "Chosen pairs":
        pairs = list(range(d // 2))
        if len(pairs) == 1:
            chosen = [0]
            st.caption("d_model = 2: a single sin/cos pair, pair 0, is plotted.")
        else:
            chosen = st.multiselect("Sin/cos pairs to plot against position", pairs,
                                    default=sorted({0, 1, d // 8, d // 2 - 1}),
                                    key="pe_pairs", **URL)
        plotted = sorted(set(chosen))[:MAX_CURVES]
        if len(set(chosen)) > MAX_CURVES:
            st.caption(f"{len(set(chosen))} pairs chosen: the first {MAX_CURVES} are plotted "
                       f"(pairs {', '.join(map(str, plotted))}), so that the curves stay "
                       "readable.")
        series = {f"dim {2 * i} (sin, pair {i})": pe[:, 2 * i] for i in plotted}
        if series:
            show_figure(line_chart(np.arange(T), series, title="Chosen dimensions",
                                   x_title="position p", y_title="PE", font_size=font),
                        key="pe_fig_dims",
                        alt=describe_lines(np.arange(T), series, x_title="position p",
                                           y_title="Chosen dimensions of PE"))
        else:
            st.info("Choose at least one pair to plot.")
    elif len(lengths) > 1:  # one pair is one number, said below
        wavelength = {"wavelength 2π·b^(2i/d)": lengths}
        show_figure(line_chart(np.arange(d // 2), wavelength,
                               title="Wavelength of each pair", x_title="pair i",
                               y_title="positions (log)", log_y=True, font_size=font),
                    key="pe_fig_wavelengths",
                    alt=describe_lines(np.arange(d // 2), wavelength, x_title="pair i",
                                       y_title="Wavelength in positions (log axis)"))
    if len(lengths) == 1:
        st.caption(f"A single pair, pair 0: its wavelength is 2π ≈ {lengths[0]:.2f} positions.")
    else:
        st.caption(f"Wavelengths run from 2π ≈ {lengths[0]:.2f} positions (pair 0) to "
                   f"{said_number(lengths[-1])} positions (pair {d // 2 - 1}), a geometric "
                   f"progression: each pair's is b^(2/d_model) ≈ "
                   f"{said_number(lengths[1] / lengths[0])} times the one before.")


@st.fragment
def similarity_section(figures: dict, note: str) -> None:
    """PE · PEᵀ or the cosine similarity: one map at a time (its picker reruns it alone)."""
    left, right = st.columns(2)
    name = right.radio("Similarity", ["PE · PEᵀ", "Cosine"], horizontal=True,
                       key="pe_similarity", **URL)
    with left:
        if name == "Cosine":
            show_figure(figures["cosine"][0], key="pe_fig_cosine", alt=figures["cosine"][1])
        else:
            show_figure(figures["similarity"][0], key="pe_fig_similarity",
                        alt=figures["similarity"][1])
    right.markdown(note)


@st.fragment
def shift_section(pe: np.ndarray, base: float, results: dict) -> None:
    """One rotation R_k moves every PE(p) to PE(p + k)."""
    T, d = pe.shape
    dims = [f"{c}" for c in range(d)]
    st.header("3 · The shift property: one rotation per offset")
    k = bounded_slider(st, "Offset k", 1, T - 1, 3, key="pe_offset")
    R = pos.shift_rotation(k, d, base)
    err = np.max(np.abs(pe[k:] - pe[:-k] @ R.T)) if T > k else 0.0
    left, right = st.columns(2)
    with left:
        shown = min(d, 16)
        show_figure(matrix_heatmap(R[:shown, :shown], dims[:shown], dims[:shown],
                                   title=f"R_k for k = {k}" + (f" (first {shown} dims)"
                                                               if shown < d else ""),
                                   kind="scores", decimals=2, x_title="dimension",
                                   y_title="dimension", font_size=font),
                    key="pe_fig_rotation",
                    alt=f"R_k for k = {k}: block diagonal, one 2 × 2 rotation per sin/cos "
                        "pair. " + describe_matrix(R[:shown, :shown], dims[:shown],
                                                  dims[:shown], kind="values",
                                                  rows="dimension", cols="dimension"))
    with right:
        st.latex(r"PE(p + k) = R_k\, PE(p)\quad\text{for every } p")
        st.markdown(f"R_k is block diagonal: one 2×2 rotation by k·ωᵢ per pair, the same for "
                    f"every position. Its blocks, rows (cos kωᵢ, sin kωᵢ) and (−sin kωᵢ, "
                    f"cos kωᵢ), turn the other way from RoPE's in section 5 because a pair "
                    f"holds its sine first. Checked on all {T - k} positions that have a "
                    f"position k = {k} further on in the table, p = 0 to {T - k - 1}: the largest "
                    f"error is **{difference_text(err, rounding=True)}**.")
    for name, value in (("offset", k), ("rotation", R), ("shift_error", err)):
        keep(results, name, value)


@st.fragment
def shuffle_section(d: int, base: float, results: dict) -> None:
    """Self-attention with and without positions, on a sentence and its shuffle."""
    st.header("4 · Without positions, attention ignores word order")
    sentence = st.text_input("Sentence", SENTENCES["cat"], key="pe_sentence", max_chars=400,
                             **URL)
    seed = seed_input(st, "pe_seed", "Shuffle seed")
    tokens = capped_tokens(sentence, "sentence", MAX_TOKENS)
    if len(tokens) < 2:
        st.info("Type a sentence of at least two tokens to shuffle.")
        keep(results, "permutation", None)
        return
    n = len(tokens)
    x = toy_embeddings(tokens, d, decimals=None)
    # The shuffle comes from the seed alone, the weights from a stream of their own: a new
    # d_model or base changes the numbers below, not which shuffle is shown.
    weights_rng = np.random.default_rng([seed, 1])
    w_q, w_k, w_v = (normal_weights(weights_rng, (d, d)) for _ in range(3))
    perm_test = permutation_test(x, pos.sinusoidal(n, d, base), w_q, w_k, w_v,
                                 np.random.default_rng(seed))
    shuffled = [tokens[i] for i in perm_test.perm]
    # A static table: Glide's grid (st.dataframe) is slow to draw again, and this section
    # is drawn again whenever d_model or the base moves.
    st.table(pd.DataFrame([tokens, shuffled], index=["original", "shuffled"],
                          columns=position_labels(n)))
    if perm_test.diff_with > ORDER_MATTERS:
        with_positions = (f"they differ by up to {number_text(perm_test.diff_with, 3)}: the "
                          "order now matters.")
    else:
        with_positions = (f"they differ by only "
                          f"{difference_text(perm_test.diff_with, rounding=True)}: for this "
                          "sentence and shuffle, the positions change nothing either.")
    st.markdown(
        f"The columns are the positions p = 0 to {n - 1}. Shuffle the tokens, run "
        f"{term_link('self-attention', 'self-attention')}, and compare its outputs with the "
        f"original outputs shuffled the same way. **Without** positional encodings they match, "
        f"to a largest difference of {difference_text(perm_test.diff_without, rounding=True)}: "
        f"attention is permutation-equivariant, it sees a bag of words. **With** sinusoidal "
        f"encodings added (PE(p) to whichever token is now at p) {with_positions}"
    )
    keep(results, "permutation", {"perm": perm_test.perm, "diff_without": perm_test.diff_without,
                                  "diff_with": perm_test.diff_with})


SMALL = 16  # positions and dimensions of the small figures of section 5
ROPE_BASE = 10000.0  # RoFormer's (Su et al., 2021)
ALIBI_FORMS = ["Causal (the paper's)", "Symmetric"]


def learned_scheme(small: int, d: int) -> None:
    """A learned table: one trained vector per position, none past its length."""
    st.subheader("Learned table")
    width = min(d, SMALL)
    labels = position_labels(small)
    learned = pos.learned_table(small, width, np.random.default_rng(0))
    left, right = st.columns(2)
    with left:
        dims = [f"{c}" for c in range(width)]
        show_figure(matrix_heatmap(learned, labels, dims, title="Learned table E (random here)",
                                   kind="scores", decimals=2, x_title="dimension",
                                   y_title="position p", font_size=font - 2),
                    key="pe_fig_learned",
                    alt=f"A learned table E of {small} rows (random here), one vector per "
                        "position. " + describe_matrix(learned, labels, dims, kind="values",
                                                      rows="position", cols="dimension"))
    with right:
        st.latex(r"x_p \;\leftarrow\; x_p + E_p,\qquad "
                 r"E \in \mathbb{R}^{T_{\max} \times d_{model}}")
        if not presenter:
            st.markdown(
                f"Row p of a table E is added to the embedding x_p of the token at position p, "
                f"as the sinusoids are, but E has no formula: it is trained with the model "
                f"(here random numbers, seed 0, for {small} positions and {width} dimensions"
                + (f", not d_model = {d}, to keep the figure small" if width < d else "")
                + "). "
                f"A table of T_max rows has nothing for p ≥ T_max: this one, T_max = {small}, "
                f"cannot place a token at p = {small}, and a trained model has learned nothing "
                "for rows it never saw (GPT-2's table has T_max = 1,024).")


@st.fragment
def relative_scheme(small: int, results: dict) -> None:
    """Relative positions j − i, clipped: redrawn alone when the clip moves."""
    st.subheader("Relative positions (Shaw et al., 2018)")
    left, right = st.columns(2)
    clip = left.slider("Relative distance clip C", 1, 16, 4, key="pe_clip", **URL,
                       help="Offsets j − i beyond ±C share the vector of ±C: 2C + 1 vectors "
                            "are learned.")
    labels = position_labels(small)
    rel = pos.relative_positions(small, clip=clip)
    with left:
        show_figure(matrix_heatmap(rel, labels, labels, title=f"clip(j − i, C), C = {clip}",
                                   kind="scores", decimals=0, x_title="key j",
                                   y_title="query i", font_size=font - 2), key="pe_fig_relative",
                    alt=f"The offset j − i of key j from query i, clipped at ±{clip}: which "
                        "learned vector each score uses. " + describe_matrix(
                        rel, labels, labels, kind="values", rows="query i", cols="key j"))
    with right:
        st.latex(r"s_{ij} = \frac{q_i \cdot \left(k_j + a_{\mathrm{clip}(j-i,\,C)}\right)}"
                 r"{\sqrt{d_k}}")
        st.latex(r"\mathrm{clip}(x, C) = \max(-C,\ \min(C, x))")
        clipped = int(np.count_nonzero(rel != pos.relative_positions(small)))
        pairs = (f"here {clipped} of the {small * small} query–key pairs are farther apart "
                 f"than {clip} and use a{sub(-clip)} or a{sub(clip)}" if clipped else
                 f"here no two of the {small} positions are farther apart than {clip}, so "
                 "nothing is clipped")
        if presenter:
            st.markdown(f"{2 * clip + 1} learned vectors a, one per clipped offset; {pairs}.")
        else:
            st.markdown(
                f"Nothing is added to the inputs. In the score of query i and key j, a learned "
                f"vector a is added to the key vector k_j, chosen by the key's offset j − i "
                f"from the query, clipped to ±C; the figure shows that offset, so each cell "
                f"says which of the 2C + 1 = {2 * clip + 1} vectors a{sub(-clip)} … "
                f"a{sub(clip)} its score uses. "
                f"The same {2 * clip + 1} vectors serve any length; {pairs}. The slider sets "
                f"C. The vectors are trained with the model and not drawn here; Shaw et al. "
                f"add a second such set to the values as well.")
    keep(results, "relative", rel)


def rope_scheme(small: int, d: int, results: dict) -> None:
    """RoPE: the same query and key vectors at every pair of positions."""
    st.subheader("RoPE (Su et al., 2021)")
    width = min(d, SMALL)
    labels = position_labels(small)
    rng = np.random.default_rng(1)
    q_vec, k_vec = rng.standard_normal(width), rng.standard_normal(width)
    # RoPE keeps RoFormer's base, not the table's: its figure shows that a score depends on
    # n − m only, true for any base, and so does not change with the Base slider.
    rope_scores = (pos.rope(np.tile(q_vec, (small, 1)), base=ROPE_BASE)
                   @ pos.rope(np.tile(k_vec, (small, 1)), base=ROPE_BASE).T)  # (m, n)
    spread = difference_text(pos.offset_spread(rope_scores), rounding=True)
    left, right = st.columns(2)
    with left:
        show_figure(matrix_heatmap(rope_scores, labels, labels,
                                   title=f"(R_m q) · (R_n k), base {ROPE_BASE:,.0f}",
                                   kind="scores", decimals=1, x_title="key position n",
                                   y_title="query position m", font_size=font - 2),
                    key="pe_fig_rope",
                    alt="RoPE scores of one query vector q placed at every position m and one "
                        "key vector k at every n: "
                        + describe_matrix(rope_scores, labels, labels, kind="scores",
                                          rows="query position", cols="key position")
                        + f" Each diagonal holds one value, up to rounding: the score "
                          f"depends on n − m only. Largest spread along a diagonal: {spread}.")
    with right:
        st.latex(r"R(\alpha) = \begin{pmatrix}\cos\alpha & -\sin\alpha\\ \sin\alpha & "
                 r"\cos\alpha\end{pmatrix},\qquad \theta_i = b^{-2i/d_k}")
        st.latex(r"R_p = \mathrm{diag}\big(R(p\theta_0),\, \dots,\, "
                 r"R(p\theta_{d_k/2-1})\big)")
        st.latex(r"(R_m q)\cdot(R_n k) = q^\top R_m^\top R_n\, k = q^\top R_{n-m}\, k")
        if presenter:
            st.markdown(f"The score depends on n − m only: the largest spread along a "
                        f"diagonal is {spread}.")
        else:
            st.markdown(
                f"Nothing is added to the inputs: in every layer the query at position m and "
                f"the key at position n are rotated, pair i (dimensions 2i and 2i + 1) by the "
                f"angle m·θᵢ or n·θᵢ. A rotation's transpose turns back (Rₘᵀ = R₋ₘ) and "
                f"turns add up (R₋ₘ Rₙ = Rₙ₋ₘ), so the score depends on the offset n − m "
                f"only. The figure places one random q and k (d_k = {width}, seed 1) at "
                f"every m and n, with b = {ROPE_BASE:,.0f} (RoFormer's base, whatever the Base "
                f"slider says; θᵢ plays the part of the table's ωᵢ): every diagonal holds one "
                f"value, up to rounding: the largest spread along a diagonal is {spread}. It "
                f"shows the dot product before the division by √d_k.")
    results["rope"] = rope_scores


def slopes_sentence(slopes: np.ndarray) -> str:
    """What the ALiBi slopes are, decided by the numbers: one slope, a geometric sequence
    (with its ratio), or two interleaved ones (the paper's rule when H is not a power of
    two)."""
    listed = "Slopes: " + ", ".join(f"{s:.4g}" for s in slopes)
    H = len(slopes)
    if H == 1:
        return f"{listed}: one head, one slope, 2^(−8)."
    ratio = pos.geometric_ratio(slopes)
    if ratio is not None:
        return (f"{listed}: a geometric sequence, each slope {ratio:.4g} = 2^(−8/{H}) times "
                "the one before.")
    below = 2 ** int(np.floor(np.log2(H)))
    rest = ", ".join(f"{s:.4g}" for s in slopes[below:])
    return (f"{listed}: not one geometric sequence. {H} is not a power of two, so "
            f"{heads_text(1, below)} take the {below}-head slopes 2^(−8h/{below}) and "
            f"{heads_text(below + 1, H)} every other slope of the {2 * below}-head sequence, "
            f"from its first: {rest}.")


def heads_text(first: int, last: int) -> str:
    """ "head 5", "heads 5 and 6", "heads 1 to 4"."""
    if first == last:
        return f"head {first}"
    return f"heads {first} {'and' if last == first + 1 else 'to'} {last}"


@st.fragment
def alibi_scheme(small: int, results: dict) -> None:
    """ALiBi's linear biases, one head at a time: redrawn alone when its controls move."""
    st.subheader("ALiBi (Press et al., 2022)")
    c1, c2, c3 = st.columns(3)
    heads = c1.slider("ALiBi heads H", 1, 16, 8, key="pe_heads", **URL,
                      help="The number of heads, and so the slopes m_1 … m_H.")
    head = c2.selectbox("ALiBi head shown h", range(1, heads + 1), key="pe_alibi_head", **URL,
                        help="The head whose bias is drawn (heads are numbered from 1, as in "
                             "the slope formula).")
    form = c3.radio("ALiBi form", ALIBI_FORMS, key="pe_alibi_form", **URL,
                    help="The paper's causal bias (later keys masked) or the same penalty "
                         "both ways.")
    causal = form == ALIBI_FORMS[0]
    labels = position_labels(small)
    bias = pos.alibi_bias(small, heads, causal=causal)[head - 1]
    slopes = pos.alibi_slopes(heads)
    m = slopes[head - 1]
    left, right = st.columns(2)
    with left:
        show_figure(matrix_heatmap(bias, labels, labels,
                                   title=f"ALiBi bias, head {head} (m = {m:.4g}), "
                                         f"{'causal' if causal else 'symmetric'}",
                                   kind="scores", decimals=2, x_title="key j",
                                   y_title="query i", font_size=font - 2), key="pe_fig_alibi",
                    alt=f"ALiBi bias of head {head}, slope {m:.4g}, "
                        f"{'causal: keys after the query masked' if causal else 'symmetric'}: "
                        + describe_matrix(bias, labels, labels, kind="scores",
                                          rows="query i", cols="key j"))
    with right:
        if causal:
            st.latex(r"s_{ij} = \begin{cases}\dfrac{q_i \cdot k_j}{\sqrt{d_k}} - m_h\,(i - j)"
                     r" & j \le i\\[4pt] -\infty\ \text{(masked)} & j > i\end{cases}")
        else:
            st.latex(r"s_{ij} = \frac{q_i \cdot k_j}{\sqrt{d_k}} - m_h\,|i - j|")
        st.latex(r"m_h = 2^{-8h/H},\quad h = 1, \dots, H\qquad (H \text{ a power of two})")
        st.caption(slopes_sentence(slopes))
        if not presenter:
            st.markdown(
                f"Nothing is added to the inputs: each head h adds to its scores a penalty "
                f"proportional to the distance, with its own fixed slope m_h (not learned). "
                f"The paper trains causal language models: query i sees keys j ≤ i (a "
                f"{term_link('causal-mask', 'causal mask')}), the farther back the larger the "
                f"penalty. The symmetric form puts the same penalty on keys after the query, "
                f"for a model that reads both ways; the two agree on and below the diagonal. "
                f"The controls: H sets how many slopes there are, h which head's bias is drawn "
                f"(here m{sub(head)} = {m:.4g}: a key 10 positions back loses {10 * m:.4g} from "
                f"its score), and the form switches between the two.")
    keep(results, "alibi", bias)
    keep(results, "alibi_slopes", slopes)


DOWNLOADS = ["Sinusoidal table", "PE · PEᵀ", "Rotation R_k (k in the trace)",
             "Relative positions", "RoPE scores", "ALiBi bias (head shown)"]


def download_matrices(results: dict) -> dict:
    """The matrices the lesson shows now: name -> (matrix, row labels, column labels).

    Each matrix's labels come from its own shape: a button clicked while the lesson
    reruns may find some sections' results already new and others not yet."""
    positions = position_labels

    def dims(n: int) -> list[str]:
        return [f"{c}" for c in range(n)]

    pe = results["pe"]
    matrices = [(pe, positions(len(pe)), dims(pe.shape[1])),
                (pe @ pe.T, positions(len(pe)), positions(len(pe))),  # as encodings() does
                (results["rotation"], dims(len(results["rotation"])),
                 dims(len(results["rotation"])))]
    matrices += [(results[name], positions(len(results[name])),
                  positions(len(results[name]))) for name in ("relative", "rope", "alibi")]
    return dict(zip(DOWNLOADS, matrices, strict=True))


def download_trace(results: dict) -> dict:
    """The whole computation the lesson shows now, for the JSON download."""
    return dict(results)


@st.fragment
def lesson(results: dict) -> None:
    """The controls, sections 1 to 5, what to notice and things to try.

    A fragment: T, d_model and the base rerun the lesson only, not the title, the
    practice questions and the downloads below it; the notes that quote the lesson's
    numbers are inside it, so they follow the sliders. What the sections show goes into
    ``results``, which the download buttons read when clicked.
    """
    c1, c2, c3 = st.columns(3)
    max_len = c1.slider("Positions (max length)", 8, 512, DEFAULT_LEN, key="pe_len", **URL)
    d_model = c2.slider("d_model (even)", 2, 512, DEFAULT_D, step=2, key="pe_dmodel", **URL)
    base = c3.select_slider("Base", BASES, value=DEFAULT_BASE, key="pe_base", **URL)
    T, d = max_len, d_model
    if d % 2:  # a link can carry an odd value past the slider's step of 2
        even = max(d - 1, 2)
        st.info(f"d_model must be even (sin/cos pairs): using {even} instead of {d}.")
        d = even

    try:
        pe, sim = encodings(T, d, base)
    except ValueError as exc:
        offer_downloads(results, None)
        show_error(exc)
        return
    # The downloads offer the same matrices whatever the settings (none on a projector).
    offer_downloads(results, None if presenter else DOWNLOADS)
    # What the sections show goes into `results`, for the downloads below the lesson. The
    # sections that rerun alone when their own controls move (st.fragment) keep their
    # latest results there too (pages.ui.live.keep).
    results |= {"max_len": T, "d_model": d, "base": base, "pe": pe,
                "wavelengths": pos.wavelengths(d, base)}

    figures = table_figures(T, d, base, font)

    st.header("1 · The sinusoidal table")
    formula = (r"PE_{p,\,2i} = \sin(p\,\omega_i),\qquad PE_{p,\,2i+1} = \cos(p\,\omega_i),"
               r"\qquad \omega_i = \frac{1}{b^{2i/d_{model}}}")
    if not presenter:  # on a projector the table comes first, on the first screen
        st.latex(formula)
    table_section(pe, base, figures["table"], font)
    if presenter:
        st.latex(formula)
    st.markdown(
        f"A {term_link('positional-encoding', 'positional encoding')} gives each position p "
        f"a vector PE(p) of {term_link('d_model', 'd_model')} = {d} numbers, added to the "
        f"embedding of the token at that position. **Positions are counted from 0, as in the "
        f"formula: p = 0, 1, …, {T - 1}** on every axis, table and download of this lesson, "
        f"so row p = 0 alternates 0 (sin 0) and 1 (cos 0). Dimensions and pairs are counted "
        f"from 0 too: pair i is dimensions 2i (sin) and 2i + 1 (cos). Every value lies in "
        f"[−1, 1] (here from {number_text(pe.min(), 3)} to {number_text(pe.max(), 3)}).")
    if not presenter:
        omega = pos.frequencies(d, base)
        st.markdown(
            f"Pair i turns by ωᵢ radians per position: pair 0 by ω₀ = b⁰ = 1, pair "
            f"{d // 2 - 1} by {said_number(omega[-1])}, so the left columns change fast and "
            f"the right ones slowly." if d > 2 else
            "With d_model = 2 there is one pair, turning by ω₀ = b⁰ = 1 radian per position "
            "whatever the base.")

    st.header("2 · Similarity depends on the offset only")
    norms = np.linalg.norm(pe, axis=1)
    # How alike PE(0) is to PE(k), k = 1 … T − 1: the first row of the cosine map, which
    # holds every distance (the map is the same along each diagonal).
    cos_k = sim[0, 1:] / norms[0] ** 2
    nearest = 1 + int(np.argmax(cos_k))
    if nearest == 1:
        alike = (f"Neighbours (distance 1) have cosine {cosine_text(cos_k[0])}, and no two "
                 f"positions farther apart are as alike")
    else:
        alike = (f"Neighbours (distance 1) have cosine {cosine_text(cos_k[0])}, but "
                 f"positions {nearest} apart are more alike still (cosine "
                 f"{cosine_text(cos_k[nearest - 1])}): similarity does not simply fall with "
                 f"distance")
    half = d // 2
    length = (f"√{half} = {math.isqrt(half)}" if math.isqrt(half) ** 2 == half
              else f"√{half} ≈ {number_text(math.sqrt(half), 3)}")
    similarity_section(figures, (
        f"PE(p)·PE(q) = Σᵢ cos((p − q)ωᵢ): it depends on p − q only, so the matrix is constant "
        f"along every diagonal, up to rounding: the largest spread along a diagonal is "
        f"{difference_text(pos.offset_spread(sim), rounding=True)}. "
        f"Every PE(p) has the same length, √(d_model / 2) = {length}, since each pair adds "
        f"sin² + cos² = 1; the largest difference between two lengths is "
        f"{difference_text(np.ptp(norms), rounding=True)}. So the cosine is PE · PEᵀ divided "
        f"by {half}, with the same diagonals. {alike}."))

    shift_section(pe, base, results)
    shuffle_section(d, base, results)

    st.header("5 · Other ways to encode position")
    small = min(T, SMALL)
    if not presenter:
        st.markdown(
            f"The sinusoidal table is fixed and added to the inputs once. A learned table is "
            f"added the same way; the three others put position into every attention score "
            f"instead. Each figure here uses the first {small} positions, p = 0 to "
            f"{small - 1}; {term_link('rope', 'RoPE')} and {term_link('alibi', 'ALiBi')} are "
            f"in the glossary.")
    learned_scheme(small, d)
    relative_scheme(small, results)
    rope_scheme(small, d, results)
    alibi_scheme(small, results)

    notes(T, d, cos_k, nearest)


def base_sentence(d: int, k: int) -> str:
    """What the base does to far positions, decided by the cosines at distance k with the
    bases 100 and 10,000 at this d_model."""
    if d == 2:
        return ("Set the base to 100 at d_model = 2: nothing changes, since the only pair "
                "turns by ω₀ = b⁰ = 1 whatever the base.")
    low, high = pos.offset_cosine(k, d, 100.0), pos.offset_cosine(k, d, 10000.0)
    longest = pos.wavelengths(d, 100.0)[-1], pos.wavelengths(d, 10000.0)[-1]
    said = cosine_text(low), cosine_text(high)
    if said[0] == said[1]:
        verdict = "far positions look about as alike"
    else:
        verdict = f"far positions look {'less' if low < high else 'more'} alike"
    return (f"Set the base to 100 (d_model = {d}): every pair but pair 0 turns faster (the "
            f"slowest pair's wavelength falls from {said_number(longest[1])} to "
            f"{said_number(longest[0])} positions), and {verdict}: positions {k} apart have "
            f"cosine {said[0]} with base 100 and {said[1]} with base 10,000.")


def notes(T: int, d: int, cos_k: np.ndarray, nearest: int) -> None:
    """What to notice and, off the projector, things to try: they quote the lesson's
    numbers, so they are drawn with it."""
    if nearest == 1:
        alike = (f"neighbours are the most alike (cosine {cosine_text(cos_k[0])} at these "
                 "settings)")
    else:
        alike = (f"at these settings positions {nearest} apart are more alike (cosine "
                 f"{cosine_text(cos_k[nearest - 1])}) than neighbours "
                 f"({cosine_text(cos_k[0])})")
    bullet_list("What to notice", [
        f"Each position gets its own vector; {alike}.",
        "PE·PEᵀ is constant along its diagonals: similarity depends on the distance, not on "
        "where you are in the sentence.",
        "One fixed rotation moves every PE(p) to PE(p + k): an offset is a linear map of the "
        "encoding, which Vaswani et al. hoped would let attention learn relative positions.",
        "Without positional information, shuffling the words only shuffles the outputs (up to "
        "rounding).",
        "Relative positions, RoPE and ALiBi put position into the scores instead of the "
        "inputs; a RoPE score depends on the offset n − m only.",
    ])
    if not presenter:
        few, many = pos.alibi_slopes(1), pos.alibi_slopes(16)
        bullet_list("Try this", [
            base_sentence(d, T // 2),
            "Set d_model = 2: a single sin/cos pair, a point going round the circle; the "
            "cosine of positions p and q is then cos(p − q).",
            "Type a sentence with a repeated word and try several shuffle seeds: without "
            "positions the largest difference stays at rounding level for every shuffle; "
            "compare it with the difference with positions.",
            f"Compare ALiBi with 1 head and with 16: one head has the single slope "
            f"{few[0]:.4g}; 16 heads run from {many.max():.4g} down to {many.min():.4g}.",
            "Switch ALiBi to symmetric: the cells on and below the diagonal stay as they "
            "were; the keys after the query, masked in the causal form, get the penalty of "
            "the keys as far behind.",
        ], expanded=False)


def questions() -> None:
    """Practice questions, off the projector; their answers come from attncore, as the
    figures' numbers do."""
    if presenter:
        return
    # Row p = 1, column 0 of the very table the lesson draws: sin(1 · ω₀), and ω₀ = b⁰ = 1
    # for every base and d_model.
    entry = float(pos.sinusoidal(2, 2, DEFAULT_BASE)[1, 0])
    slopes = pos.alibi_slopes(6)
    practice_questions("pe", [
        {"q": "What is PE(1, 0), the entry in row p = 1 and column 0 of the table (the "
              "second row: p counts from 0)?", "value": entry, "tol": 1e-3,
         "a": f"sin(1 · ω₀) = sin(1 / b⁰) = sin 1 ≈ {entry:.4f}, whatever the base and "
              "d_model: b⁰ = 1. The row above it, p = 0, holds sin 0 = 0."},
        {"q": "Why does the encoding use both sin and cos?",
         "a": "A pair (sin, cos) is a point on a circle; moving by k positions is a rotation, "
              "a linear map, which needs both coordinates (sin alone is not enough)."},
        {"q": "What does self-attention without positions compute for “dog bites man” "
              "compared with “man bites dog”?",
         "a": "The same three output vectors (up to rounding), in a different order: it "
              "cannot tell the sentences apart."},
        {"q": "With H = 6 ALiBi heads, what is the slope m₅ of head 5?",
         "value": float(slopes[4]), "tol": 1e-3,
         "a": f"{slopes[4]:.4g}. 6 is not a power of two, so heads 1 to 4 take the 4-head "
              f"slopes 2^(−8h/4): {', '.join(f'{s:.4g}' for s in slopes[:4])}; heads 5 and 6 "
              f"take every other slope of the 8-head sequence 2^(−8h/8), from its first: "
              f"{slopes[4]:.4g} and {slopes[5]:.4g}. The six slopes are not one geometric "
              "sequence."},
    ])


results = {}
lesson(results)
questions()
lesson_downloads("pe", results, download_matrices, download_trace)
finish_page()
