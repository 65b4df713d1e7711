"""Lesson 5: positional encodings, sinusoidal and the others."""

import numpy as np
import pandas as pd
import streamlit as st

from attncore import positional as pos
from attncore.init import normal_weights
from attncore.positional import permutation_test
from attncore.text import SENTENCES, toy_embeddings
from pages.text import positional_encoding as say
from pages.ui.controls import URL, bounded_slider, capped_tokens, seed_input
from pages.ui.figures import describe_lines, describe_matrix, line_chart, matrix_heatmap
from pages.ui.figures.models import SCHEME_ENTRIES, positional_flow
from pages.ui.layout import bullet_list, practice_questions, show_diagram, show_error, show_figure
from pages.ui.live import keep, offer_downloads
from pages.ui.numbers import exact_text
from pages.ui.page import Page, lesson_page

BASES = [100, 300, 1000, 3000, 10000, 30000, 100000]
DEFAULT_LEN, DEFAULT_D, DEFAULT_BASE = 64, 64, 10000
MAX_TOKENS = 24
TABLE_CELLS = 64  # rows and columns of the sinusoidal table drawn; larger tables are sampled
VIEWS = ["Table", "Chosen pairs", "Wavelengths"]
MAX_CURVES = 6  # sin/cos pairs drawn at once in "Chosen pairs"
SMALL = 16  # positions and dimensions of the small figures of section 5
ROPE_BASE = 10000.0  # RoFormer's (Su et al., 2021)
ALIBI_FORMS = ["Causal (the paper's)", "Symmetric"]


def position_labels(n: int) -> list[str]:
    """Positions p = 0, 1, …, n − 1: the formula's p, on every axis, table and download of
    the lesson (one numbering, so that row "1" is PE(1))."""
    return [f"{p}" for p in range(n)]


@st.cache_data(max_entries=32, show_spinner=False)
def encodings(T: int, d: int, base: float) -> pos.SinusoidalTable:
    """The T × d sinusoidal table and its similarities PE·PEᵀ (T × T, a T²·d product),
    computed once per setting for the page and its figures."""
    return pos.sinusoidal_table(T, d, base)


@st.cache_resource(max_entries=32, show_spinner=False)
def table_figures(T: int, d: int, base: float, font: int) -> dict:
    """The three large heatmaps depend only on these settings: build them once each, with
    their text alternatives; each entry is (figure, text alternative)."""
    table = encodings(T, d, base)
    pe, sim = table.pe, table.similarity
    positions = position_labels(T)
    sample = pos.table_sample(T, d, TABLE_CELLS)  # true entries, never block averages
    rows, cols, row_step = sample.rows, sample.columns, sample.row_step
    title = f"PE: {T} positions × {d} dimensions"
    if sample.sampled:
        title += f" ({say.sample_note(row_step, sample.pair_step)} drawn)"
    heatmap = matrix_heatmap(pe[np.ix_(rows, cols)], [positions[r] for r in rows],
                             [f"{c}" for c in cols], title=title, kind="scores", decimals=2,
                             x_title="dimension", y_title="position p", font_size=font,
                             height=480)
    heatmap.update_traces(zmin=-1.0, zmax=1.0, selector={"type": "heatmap"})  # PE's range
    # The similarities swing as fast as the fastest pair: sampled like the table's rows.
    drawn = [positions[r] for r in rows]
    note = f" ({say.sample_note(row_step, 1)} drawn)" if row_step > 1 else ""
    return {
        "table": (heatmap, say.table_alt(pe, base)),
        "similarity": (
            # 2 decimals: at d_model = 2, PE(0)·PE(6) = cos 6 = 0.96 would print as 1.0,
            # the diagonal's value.
            matrix_heatmap(sim[np.ix_(rows, rows)], drawn, drawn, title="PE · PEᵀ" + note,
                           kind="scores", decimals=2, x_title="position p′",
                           y_title="position p", font_size=font),
            say.similarity_alt(sim, cosine=False)),
        "cosine": (
            matrix_heatmap(table.cosine[np.ix_(rows, rows)], drawn, drawn,
                           title="Cosine similarity" + note, kind="scores", decimals=2,
                           x_title="position p′", y_title="position p", font_size=font),
            say.similarity_alt(table.cosine, cosine=True)),
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
        sample = pos.table_sample(T, d, TABLE_CELLS)
        if sample.sampled:
            st.caption(say.sampled_table_caption(T, d, sample.row_step, sample.pair_step))
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
            st.caption(say.chosen_pairs_caption(len(set(chosen)), plotted))
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
    st.caption(say.wavelengths_caption(lengths))


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
def shift_section(page: Page, pe: np.ndarray, base: float, results: dict) -> None:
    """One rotation R_Δ moves every PE(p) to PE(p + Δ)."""
    T, d = pe.shape
    dims = [f"{c}" for c in range(d)]
    st.header("3 · The shift property: one rotation per offset")
    k = bounded_slider(st, "Offset Δ", 1, T - 1, 3, key="pe_offset")
    shift = pos.shift_check(pe, k, base)
    R, shown = shift.rotation, min(d, 16)
    left, right = st.columns(2)
    with left:
        show_figure(matrix_heatmap(R[:shown, :shown], dims[:shown], dims[:shown],
                                   title=f"R_Δ for Δ = {k}" + (f" (first {shown} dims)"
                                                               if shown < d else ""),
                                   kind="scores", decimals=2, x_title="dimension",
                                   y_title="dimension", font_size=page.font),
                    key="pe_fig_rotation",
                    alt=f"R_Δ for Δ = {k}: block diagonal, one 2 × 2 rotation per sin/cos "
                        "pair. " + describe_matrix(R[:shown, :shown], dims[:shown],
                                                  dims[:shown], kind="values",
                                                  rows="dimension", cols="dimension"))
    with right:
        st.latex(r"PE(p + \Delta) = R_\Delta\, PE(p)\quad\text{for every } p")
        st.markdown(say.shift_text(shift))
    for name, value in (("offset", k), ("rotation", R), ("shift_error", shift.error)):
        keep(results, name, value)


@st.fragment
def shuffle_section(d: int, base: float, results: dict) -> None:
    """Self-attention with and without positions, on a sentence and its shuffle."""
    st.header("4 · Without positions or a mask, attention ignores word order")
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
    st.markdown(say.shuffle_text(n, perm_test))
    keep(results, "permutation", {"perm": perm_test.perm, "diff_without": perm_test.diff_without,
                                  "diff_with": perm_test.diff_with,
                                  "diff_causal": perm_test.diff_causal})


def learned_scheme(page: Page, small: int, d: int) -> None:
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
                                   y_title="position p", font_size=page.font - 2),
                    key="pe_fig_learned",
                    alt=f"A learned table E of {small} rows (random here), one vector per "
                        "position. " + describe_matrix(learned, labels, dims, kind="values",
                                                      rows="position", cols="dimension"))
    with right:
        st.latex(r"x_p \;\leftarrow\; x_p + E_p,\qquad "
                 r"E \in \mathbb{R}^{T_{\max} \times d_{model}}")
        if not page.presenter:
            st.markdown(say.learned_text(small, width, d))


@st.fragment
def relative_scheme(page: Page, small: int, results: dict) -> None:
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
                                   y_title="query i", font_size=page.font - 2),
                    key="pe_fig_relative",
                    alt=f"The offset j − i of key j from query i, clipped at ±{clip}: which "
                        "learned vector each score uses. " + describe_matrix(
                        rel, labels, labels, kind="values", rows="query i", cols="key j"))
    with right:
        st.latex(r"s_{ij} = \frac{q_i \cdot \left(k_j + a_{\mathrm{clip}(j-i,\,C)}\right)}"
                 r"{\sqrt{d_k}}")
        st.latex(r"\mathrm{clip}(x, C) = \max(-C,\ \min(C, x))")
        st.markdown(say.relative_text(rel, clip, page.presenter))
    keep(results, "relative", rel)


def rope_scheme(page: Page, small: int, d: int, results: dict) -> None:
    """RoPE: the same query and key vectors at every pair of positions."""
    st.subheader("RoPE (Su et al., 2021)")
    width = min(d, SMALL)
    labels = position_labels(small)
    # RoPE keeps RoFormer's base, not the table's: its figure shows that a score depends on
    # p′ − p only, true for any base, and so does not change with the Base slider.
    rope_scores = pos.rope_scores(small, width, np.random.default_rng(1), ROPE_BASE)  # (p, p′)
    left, right = st.columns(2)
    with left:
        show_figure(matrix_heatmap(rope_scores, labels, labels,
                                   title=f"(R_p q) · (R_p′ k), base {ROPE_BASE:,.0f}",
                                   kind="scores", decimals=1, x_title="key position p′",
                                   y_title="query position p", font_size=page.font - 2),
                    key="pe_fig_rope",
                    alt=say.rope_alt(rope_scores, describe_matrix(
                        rope_scores, labels, labels, kind="scores", rows="query position",
                        cols="key position")))
    with right:
        st.latex(r"R(\alpha) = \begin{pmatrix}\cos\alpha & -\sin\alpha\\ \sin\alpha & "
                 r"\cos\alpha\end{pmatrix},\qquad \theta_i = b^{-2i/d_k}")
        st.latex(r"R_p = \mathrm{diag}\big(R(p\theta_0),\, \dots,\, "
                 r"R(p\theta_{d_k/2-1})\big)")
        st.latex(r"(R_p q)\cdot(R_{p'} k) = q^\top R_p^\top R_{p'}\, k = q^\top R_{p'-p}\, k")
        st.markdown(say.rope_text(rope_scores, width, ROPE_BASE, page.presenter))
    results["rope"] = rope_scores


@st.fragment
def alibi_scheme(page: Page, small: int, results: dict) -> None:
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
                                   title=f"ALiBi bias, head {head} (m = {exact_text(m)}), "
                                         f"{'causal' if causal else 'symmetric'}",
                                   kind="scores", decimals=2, x_title="key j",
                                   y_title="query i", font_size=page.font - 2),
                    key="pe_fig_alibi",
                    alt=f"ALiBi bias of head {head}, slope {exact_text(m)}, "
                        f"{'causal: keys after the query masked' if causal else 'symmetric'}: "
                        + describe_matrix(bias, labels, labels, kind="bias values",
                                          rows="query i", cols="key j"))
    with right:
        if causal:
            st.latex(r"s_{ij} = \begin{cases}\dfrac{q_i \cdot k_j}{\sqrt{d_k}} - m_h\,(i - j)"
                     r" & j \le i\\[4pt] -\infty\ \text{(masked)} & j > i\end{cases}")
        else:
            st.latex(r"s_{ij} = \frac{q_i \cdot k_j}{\sqrt{d_k}} - m_h\,|i - j|")
        st.latex(say.ALIBI_SLOPES)
        st.caption(say.slopes_text(slopes))
        if not page.presenter:
            st.markdown(say.alibi_text(head, m))
    keep(results, "alibi", bias)
    keep(results, "alibi_slopes", slopes)


@st.fragment
def model_diagram(page: Page, T: int, d: int) -> None:
    """Where each scheme enters attention, the one picked highlighted (its picker reruns
    the diagram alone)."""
    if not page.presenter:  # on a projector the diagram comes right after the controls
        st.markdown(say.DIAGRAM_TEXT)
    scheme = st.radio("Scheme shown in the diagram", list(SCHEME_ENTRIES), horizontal=True,
                      key="pe_scheme", **URL)
    show_diagram(positional_flow(T, d, scheme, page.font), key=page.key("diagram_flow"))


DOWNLOADS = ["Sinusoidal table", "PE · PEᵀ", "Rotation R_Δ (Δ in the trace)",
             "Relative positions", "RoPE scores", "ALiBi bias (head shown)"]


def download_matrices(results: dict) -> dict:
    """The matrices the lesson shows now: name -> (matrix, row labels, column labels).

    Each matrix's labels come from its own shape: a button clicked while the lesson
    reruns may find some sections' results already new and others not yet."""
    labels, pe, rotation = position_labels, results["pe"], results["rotation"]  # dimensions too
    matrices = [(pe, labels(len(pe)), labels(pe.shape[1])),
                (results["similarity"], labels(len(pe)), labels(len(pe))),
                (rotation, labels(len(rotation)), labels(len(rotation)))]
    matrices += [(results[name], labels(len(results[name])), labels(len(results[name])))
                 for name in ("relative", "rope", "alibi")]
    return dict(zip(DOWNLOADS, matrices, strict=True))


def download_trace(results: dict) -> dict:
    """The whole computation the lesson shows now, for the JSON download (PE · PEᵀ is
    in the CSV, and follows from the table)."""
    return {name: value for name, value in results.items() if name != "similarity"}


@st.fragment
def lesson(page: Page, results: dict) -> None:
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
        table = encodings(T, d, base)
    except ValueError as exc:
        offer_downloads(results, None)
        show_error(exc)
        return
    pe = table.pe
    # The downloads offer the same matrices whatever the settings (none on a projector).
    offer_downloads(results, None if page.presenter else DOWNLOADS)
    # What the sections show goes into `results`, for the downloads below the lesson. The
    # sections that rerun alone when their own controls move (st.fragment) keep their
    # latest results there too (pages.ui.live.keep).
    results |= {"max_len": T, "d_model": d, "base": base, "pe": pe,
                "wavelengths": pos.wavelengths(d, base), "similarity": table.similarity}

    figures = table_figures(T, d, base, page.font)
    model_diagram(page, T, d)

    st.header("1 · The sinusoidal table")
    formula = (r"PE_{p,\,2i} = \sin(p\,\omega_i),\qquad PE_{p,\,2i+1} = \cos(p\,\omega_i),"
               r"\qquad \omega_i = \frac{1}{b^{2i/d_{model}}}")
    if not page.presenter:  # on a projector the table comes first, on the first screen
        st.latex(formula)
    table_section(pe, base, figures["table"], page.font)
    if page.presenter:
        st.latex(formula)
    st.markdown(say.table_text(pe))
    if not page.presenter:
        st.markdown(say.turns_text(d, base))

    st.header("2 · Similarity depends on the offset only")
    similarity_section(figures, say.similarity_text(table))

    shift_section(page, pe, base, results)
    shuffle_section(d, base, results)

    st.header("5 · Other ways to encode position")
    small = min(T, SMALL)
    if not page.presenter:
        st.markdown(say.schemes_text(small))
    learned_scheme(page, small, d)
    relative_scheme(page, small, results)
    rope_scheme(page, small, d, results)
    alibi_scheme(page, small, results)

    notes(page, T, d, table)


def notes(page: Page, T: int, d: int, table: pos.SinusoidalTable) -> None:
    """What to notice and, off the projector, things to try: they quote the lesson's
    numbers, so they are drawn with it."""
    bullet_list("What to notice", say.notice_items(table))
    if not page.presenter:
        bullet_list("Try this", say.try_items(d, T), expanded=False)


def questions(page: Page) -> None:
    """Practice questions, off the projector; their answers come from attncore, as the
    figures' numbers do."""
    if page.presenter:
        return
    # Row p = 1, column 0 of the very table the lesson draws: sin(1 · ω₀), and ω₀ = b⁰ = 1
    # for every base and d_model.
    practice_questions("pe", say.questions(float(pos.sinusoidal(2, 2, DEFAULT_BASE)[1, 0]),
                                           pos.alibi_slopes(6)))


with lesson_page("pe") as page:
    results = {}
    lesson(page, results)
    questions(page)
    page.downloads(results, download_matrices, download_trace)
