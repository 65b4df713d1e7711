"""Lesson 5: positional encodings, sinusoidal and the others."""

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
from pages.ui.numbers import difference_text

BASES = [100, 300, 1000, 3000, 10000, 30000, 100000]
MAX_TOKENS = 24
TABLE_CELLS = 64  # rows and columns of the sinusoidal table drawn; larger tables are sampled
VIEWS = ["Table", "Chosen pairs", "Wavelengths"]

presenter = setup_page("Positional encodings", "📍")
font = figure_font(presenter)
lesson_header(
    "5 · Positional encodings",
    "see how sines and cosines of many wavelengths give every position its own vector, "
    "why attention needs them, and how other schemes encode order.",
)

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
    first = f" (1, {1 + row_step}, {1 + 2 * row_step}, …)" if examples else ""
    parts = [f"1 position in {row_step}{first}"] if row_step > 1 else []
    parts += [f"1 sin/cos pair in {pair_step}"] if pair_step > 1 else []
    return " and ".join(parts)


@st.cache_resource(max_entries=32, show_spinner=False)
def table_figures(T: int, d: int, base: float, font: int) -> dict:
    """The three large heatmaps depend only on these settings: build them once each, with
    their text alternatives; each entry is (figure, text alternative)."""
    pe, sim = encodings(T, d, base)
    cosine = sim / np.outer(np.linalg.norm(pe, axis=1), np.linalg.norm(pe, axis=1))
    positions = [f"{p + 1}" for p in range(T)]
    rows, cols, row_step, pair_step = table_sample(T, d)
    title = f"PE: {T} positions × {d} dimensions"
    if row_step > 1 or pair_step > 1:
        title += f" ({sample_note(row_step, pair_step)} drawn)"
    table = matrix_heatmap(pe[np.ix_(rows, cols)], [positions[r] for r in rows],
                           [f"{c}" for c in cols], title=title, kind="scores", decimals=2,
                           x_title="dimension", y_title="position", font_size=font,
                           height=480)
    table.update_traces(zmin=-1.0, zmax=1.0, selector={"type": "heatmap"})  # PE's true range
    # The similarities swing as fast as the fastest pair: sampled like the table's rows.
    drawn = [positions[r] for r in rows]
    note = f" ({sample_note(row_step, 1)} drawn)" if row_step > 1 else ""
    lengths = pos.wavelengths(d, base)
    table_alt = (f"The sinusoidal table, {T} positions down and {d} dimensions across, values "
                 f"from {pe.min():.3f} to {pe.max():.3f}: dimension 2i is a sine and 2i + 1 a "
                 f"cosine of the position; pair 0 repeats every {said_number(lengths[0])} "
                 f"positions, pair {d // 2 - 1} every {said_number(lengths[-1])}.")
    distances = sorted({1, min(5, T - 1), T - 1})
    along = lambda m: "; ".join(f"at distance {k}: {m[0, k]:.3g}" for k in distances)  # noqa: E731
    return {
        "table": (table, table_alt),
        "similarity": (
            matrix_heatmap(sim[np.ix_(rows, rows)], drawn, drawn, title="PE · PEᵀ" + note,
                           kind="scores", decimals=1, x_title="position", y_title="position",
                           font_size=font),
            f"PE · PEᵀ between every two positions: {sim[0, 0]:.3g} on the diagonal, "
            f"{along(sim)}; the same along each diagonal."),
        "cosine": (
            matrix_heatmap(cosine[np.ix_(rows, rows)], drawn, drawn,
                           title="Cosine similarity" + note, kind="scores", decimals=2,
                           x_title="position", y_title="position", font_size=font),
            f"Cosine similarity between every two positions: 1 on the diagonal, "
            f"{along(cosine)}; the same along each diagonal."),
    }


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
                       "each cell a true entry, never an average. The fastest columns change "
                       "more between drawn rows than the eye can follow, so they look "
                       "speckled.")
    elif view == "Chosen pairs":
        pairs = list(range(d // 2))
        if len(pairs) == 1:
            chosen = [0]
            st.caption("d_model = 2: a single sin/cos pair, pair 0, is plotted.")
        else:
            chosen = st.multiselect("Sin/cos pairs to plot against position", pairs,
                                    default=sorted({0, 1, d // 8, d // 2 - 1}),
                                    key="pe_pairs", **URL)
        series = {f"dim {2 * i} (sin, pair {i})": pe[:, 2 * i] for i in sorted(set(chosen))[:6]}
        if series:
            show_figure(line_chart(np.arange(1, T + 1), series, title="Chosen dimensions",
                                   x_title="position", y_title="PE", font_size=font),
                        key="pe_fig_dims",
                        alt=describe_lines(np.arange(1, T + 1), series, x_title="position",
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
                   f"{lengths[-1]:,.0f} positions (pair {d // 2 - 1}), a geometric "
                   "progression.")


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
                    f"every position. Checked on all {max(T - k, 0)} positions: the largest "
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
                          columns=[f"{p + 1}" for p in range(n)]))
    st.markdown(
        f"Shuffle the tokens, run self-attention, and un-shuffle the outputs. **Without** "
        f"positional encodings the outputs match the original ones (largest difference "
        f"{difference_text(perm_test.diff_without, rounding=True)}): attention is "
        f"permutation-equivariant, it sees a bag of words. **With** sinusoidal encodings "
        f"added they differ by up to "
        f"{perm_test.diff_with:.3f}: the order now matters."
    )
    keep(results, "permutation", {"perm": perm_test.perm, "diff_without": perm_test.diff_without,
                                  "diff_with": perm_test.diff_with})


SMALL = 16  # positions and dimensions of the small figures of section 5
ROPE_BASE = 10000.0  # RoFormer's (Su et al., 2021)


@st.fragment
def relative_figure(small: int, results: dict) -> None:
    """Relative positions j − i, clipped: redrawn alone when the clip moves."""
    clip = st.slider("Relative distance clip", 1, 16, 4, key="pe_clip", **URL)
    labels = [f"{p + 1}" for p in range(small)]
    rel = pos.relative_positions(small, clip=clip)
    show_figure(matrix_heatmap(rel, labels, labels, title=f"Relative j − i, clipped at "
                               f"±{clip}", kind="scores", decimals=0, x_title="key j",
                               y_title="query i", font_size=font - 2), key="pe_fig_relative",
                alt=f"Relative positions j − i, clipped at ±{clip}. " + describe_matrix(
                    rel, labels, labels, kind="values", rows="query i", cols="key j"))
    st.caption(f"{2 * clip + 1} distance vectors serve any length.")
    keep(results, "relative", rel)


@st.fragment
def alibi_figure(small: int, results: dict) -> None:
    """ALiBi's linear biases, one head at a time: redrawn alone when its controls move."""
    c1, c2 = st.columns(2)
    heads = c1.slider("ALiBi heads", 1, 16, 8, key="pe_heads", **URL)
    head = c2.selectbox("ALiBi head shown", range(1, heads + 1), key="pe_alibi_head", **URL)
    labels = [f"{p + 1}" for p in range(small)]
    bias = pos.alibi_bias(small, heads)
    slopes = pos.alibi_slopes(heads)
    show_figure(matrix_heatmap(bias[head - 1], labels, labels,
                               title=f"ALiBi bias, head {head} (slope {slopes[head - 1]:.4g})",
                               kind="scores", decimals=2, x_title="key j",
                               y_title="query i", font_size=font - 2), key="pe_fig_alibi",
                alt=f"ALiBi bias of head {head}, slope {slopes[head - 1]:.4g}: "
                    + describe_matrix(bias[head - 1], labels, labels, kind="scores",
                                      rows="query i", cols="key j"))
    st.caption("Slopes: " + ", ".join(f"{s:.4g}" for s in slopes) + " (a geometric sequence).")
    keep(results, "alibi", bias[head - 1])
    keep(results, "alibi_slopes", slopes)


DOWNLOADS = ["Sinusoidal table", "PE · PEᵀ", "Rotation R_k (k in the trace)",
             "Relative positions", "RoPE scores", "ALiBi bias (head shown)"]


def download_matrices(results: dict) -> dict:
    """The matrices the lesson shows now: name -> (matrix, row labels, column labels).

    Each matrix's labels come from its own shape: a button clicked while the lesson
    reruns may find some sections' results already new and others not yet."""
    def positions(n: int) -> list[str]:
        return [f"{p + 1}" for p in range(n)]

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
    """The controls and sections 1 to 5.

    A fragment: T, d_model and the base rerun the lesson only, not the title, the
    closing notes and the downloads below it. What the sections show goes into
    ``results``, which the download buttons read when clicked.
    """
    c1, c2, c3 = st.columns(3)
    max_len = c1.slider("Positions (max length)", 8, 512, 64, key="pe_len", **URL)
    d_model = c2.slider("d_model (even)", 2, 512, 64, step=2, key="pe_dmodel", **URL)
    base = c3.select_slider("Base", BASES, value=10000, key="pe_base", **URL)
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
    dims = [f"{c}" for c in range(d)]  # dimensions and pairs are numbered as in the formula
    positions = [f"{p + 1}" for p in range(T)]  # counted from 1: label p + 1 is the formula's p
    # What the sections show goes into `results`, for the downloads below the lesson. The
    # sections that rerun alone when their own controls move (st.fragment) keep their
    # latest results there too (pages.ui.live.keep).
    results |= {"max_len": T, "d_model": d, "base": base, "pe": pe,
                "wavelengths": pos.wavelengths(d, base)}

    figures = table_figures(T, d, base, font)

    st.header("1 · The sinusoidal table")
    formula = (r"PE_{p,\,2i} = \sin\!\left(\frac{p}{b^{2i/d_{model}}}\right),\qquad "
               r"PE_{p,\,2i+1} = \cos\!\left(\frac{p}{b^{2i/d_{model}}}\right)")
    if not presenter:  # on a projector the table comes first, on the first screen
        st.latex(formula)
    table_section(pe, base, figures["table"], font)
    if presenter:
        st.latex(formula)
    st.markdown(f"Every value lies in [−1, 1] (here from {pe.min():.3f} to {pe.max():.3f}). "
                "Positions are counted from 1 and the formula's p is the position − 1: position "
                "1 has p = 0, so its row alternates 0 (sin 0) and 1 (cos 0). Dimensions and pairs "
                "are numbered as in the formula, from 0. Left columns change fast, right columns "
                "slowly.")

    st.header("2 · Similarity depends on the offset only")
    norms = np.linalg.norm(pe, axis=1)
    similarity_section(figures, (
        f"PE(p)·PE(q) = Σᵢ cos((p − q)ωᵢ): it depends on p − q only, so the matrix is constant "
        f"along every diagonal (largest spread along a diagonal: "
        f"{difference_text(pos.offset_spread(sim), rounding=True)}). "
        f"Every PE(p) has the same length, √(d_model / 2) = {norms.min():.3g} (largest "
        f"difference {difference_text(np.ptp(norms), rounding=True)}): the cosine is PE · PEᵀ "
        f"divided by {norms.min() ** 2:.3g}, with the same diagonals."))

    shift_section(pe, base, results)
    shuffle_section(d, base, results)

    st.header("5 · Other ways to encode position")
    small = min(T, SMALL)
    labels = positions[:small]
    learned = pos.learned_table(small, min(d, SMALL), np.random.default_rng(0))
    rng = np.random.default_rng(1)
    q_vec, k_vec = rng.standard_normal(min(d, SMALL)), rng.standard_normal(min(d, SMALL))
    # RoPE keeps RoFormer's base, not the table's: its figure shows that a score depends on
    # m − n only, true for any base, and so does not change with the Base slider.
    rope_scores = (pos.rope(np.tile(q_vec, (small, 1)), base=ROPE_BASE)
                   @ pos.rope(np.tile(k_vec, (small, 1)), base=ROPE_BASE).T)
    results["rope"] = rope_scores
    c1, c2 = st.columns(2)
    with c1:
        show_figure(matrix_heatmap(learned, labels, dims[:learned.shape[1]],
                                   title="Learned table (random here)", kind="scores",
                                   decimals=2, x_title="dimension", y_title="position",
                                   font_size=font - 2), key="pe_fig_learned",
                    alt="A learned table (random here), one vector per position. "
                        + describe_matrix(learned, labels, dims[:learned.shape[1]],
                                          kind="values", rows="position", cols="dimension"))
        st.caption(f"One trained vector per position: nothing for positions beyond {small}.")
    with c2:
        relative_figure(small, results)
    c1, c2 = st.columns(2)
    with c1:
        show_figure(matrix_heatmap(rope_scores, labels, labels,
                                   title=f"RoPE (base {ROPE_BASE:g}): the same q and k at m, n",
                                   kind="scores", decimals=1, x_title="key position n",
                                   y_title="query position m", font_size=font - 2),
                    key="pe_fig_rope",
                    alt="RoPE scores of one query and one key vector placed at every m and n: "
                        + describe_matrix(rope_scores, labels, labels, kind="scores",
                                          rows="query position", cols="key position")
                        + " The same along each diagonal: the score depends on m − n only.")
        st.caption(f"The score depends on m − n only (largest spread along a diagonal: "
                   f"{difference_text(pos.offset_spread(rope_scores), rounding=True)}).")
    with c2:
        alibi_figure(small, results)


def closing_notes() -> None:
    """What to notice and, off the projector, things to try and questions."""
    bullet_list("What to notice", [
        "Each position gets a unique vector; nearby positions get similar vectors.",
        "PE·PEᵀ is constant along diagonals: similarity depends on the distance, not on where "
        "you are in the sentence.",
        "A fixed rotation moves any PE(p) to PE(p + k), which makes relative offsets easy for "
        "a linear layer to read.",
        "Without positional information, shuffling the words just shuffles the outputs.",
    ])
    if not presenter:
        bullet_list("Try this", [
            "Set the base to 100: the wavelengths shrink and far positions start to look alike.",
            "Set d_model = 2: a single sin/cos pair, a point going round the circle.",
            "Type a sentence with a repeated word and shuffle it with different seeds.",
            "Compare ALiBi with 1 head and with 16: the slopes spread over a wider range.",
        ], expanded=False)
        practice_questions("pe", [
            {"q": "What is PE(1, 0) = sin(1 / b⁰)?", "value": float(np.sin(1.0)), "tol": 1e-3,
             "a": "sin(1) ≈ 0.8415, whatever the base: b⁰ = 1."},
            {"q": "Why does the encoding use both sin and cos?",
             "a": "A pair (sin, cos) is a point on a circle; moving by k positions is a rotation, "
                  "a linear map, which needs both coordinates (sin alone is not enough)."},
            {"q": "What does self-attention without positions compute for “dog bites man” "
                  "compared with “man bites dog”?",
             "a": "The same three output vectors, in a different order: it cannot tell the "
                  "sentences apart."},
        ])


results = {}
lesson(results)
closing_notes()
lesson_downloads("pe", results, download_matrices, download_trace)
finish_page()
