"""Lesson 4: multi-head attention, and self- against cross-attention."""

import numpy as np
import pandas as pd
import streamlit as st

from attncore import analysis, causal_mask
from attncore import multihead as mh
from attncore.positional import sinusoidal
from attncore.text import SENTENCES, toy_embeddings
from pages.text.multi_head import (
    cross_text,
    designed_text,
    parameters_text,
    shapes_table,
    similarity_text,
    sizes_text,
    slice_alt,
    slice_text,
)
from pages.ui.choices import keep_offered, offered_value
from pages.ui.controls import URL, capped_tokens, seed_input
from pages.ui.figures import (
    SERIES_COLOURS,
    bar_chart,
    describe_bars,
    describe_grid,
    describe_matrix,
    heatmap_grid,
    matrix_heatmap,
)
from pages.ui.figures.models import multi_head_flow
from pages.ui.glossary import term_link
from pages.ui.layout import (
    bullet_list,
    practice_questions,
    show_diagram,
    show_error,
    show_figure,
)
from pages.ui.live import offer_downloads
from pages.ui.numbers import number_text
from pages.ui.page import Page, lesson_page

MAX_TOKENS = 24
MAX_SHOWN_HEADS = 16  # heatmaps drawn; statistics cover every head
SLICE_FIGURE_PX = 520  # the W slice figure, beside its picker (px)
D_MODELS = [8, 16, 32, 64, 128]
STATIC_TABLE_ROWS = 16  # up to this many heads the statistics are a static table
DEFAULT_SENTENCE = "The cat sat on the mat because the cat was tired"


@st.cache_data(max_entries=64, show_spinner=False)
def attend(tokens: tuple[str, ...], d_model: int, H: int, weights_kind: str, seed: int,
           use_pe: bool, causal: bool) -> tuple[np.ndarray, mh.MultiHeadParams,
                                                mh.MultiHeadTrace]:
    """X, the parameters and the multi-head trace of one setting (cached on the setting)."""
    rng = np.random.default_rng(seed)
    if weights_kind == "designed":
        x = mh.designed_input(tokens, d_model, H)
        params = mh.designed_params(d_model, H, rng)
    else:
        x = toy_embeddings(tokens, d_model, seed=seed, decimals=None)
        if use_pe:
            x = x + sinusoidal(len(tokens), d_model)
        params = mh.init_params(d_model, H, rng)
    mask = causal_mask(len(tokens)) if causal else None
    return x, params, mh.multi_head_attention(x, params, mask=mask)


def head_label(h: int) -> str:
    return f"head {h + 1}"


def model_diagram(page: Page, T: int, params: mh.MultiHeadParams, head: int,
                  causal: bool) -> None:
    """The layer: X, Q, K and V split into H heads of d_k (``head`` highlighted), their
    concatenation and W_O, with this sentence's shapes."""
    show_diagram(multi_head_flow(T, params.d_model, params.n_heads, page.font, head=head,
                                 causal=causal), key=page.key("diagram_heads"))


@st.fragment
def shapes_and_slices(page: Page, number: int, x: np.ndarray, trace: mh.MultiHeadTrace,
                      causal: bool, drawn: int | None) -> None:
    """Section: the shapes of every step (the layer's diagram, off the projector, where it
    is drawn at the top with head ``drawn``), and one head's slices of W_Q, W_K, W_V.

    Its head and matrix pickers rerun this section only (and a new head the page, on a
    projector, for the diagram at the top).
    """
    params = trace.params
    st.header(f"{number} · The shapes, with this configuration's numbers")
    st.markdown(sizes_text(len(x), params))
    place = None if page.presenter else st.container()  # the diagram, for the head below
    if not page.presenter:
        st.markdown(shapes_table(len(x), params, causal))
    H = params.n_heads
    head = st.selectbox("Head to inspect", range(H), format_func=head_label, key="mha_head",
                        **URL, **keep_offered("mha_head", range(H), 0, head_label))
    if place is None and head != drawn:
        st.rerun()
    if place is not None:
        with place:
            model_diagram(page, len(x), params, head, causal)
    part = mh.head_slice(x, trace, head)
    st.markdown(slice_text(part))
    # One matrix at a time: the three slices look alike (random numbers); what matters is
    # which columns the head owns, the same for all three.
    left, right = st.columns([1, 2])
    name = left.radio("Matrix", ["W_Q", "W_K", "W_V"], key="mha_matrix", horizontal=True,
                      **URL)
    m = dict(zip(["W_Q", "W_K", "W_V"], (part.w_q, part.w_k, part.w_v), strict=True))[name]
    dims = [f"{r + 1}" for r in range(params.d_model)]
    columns = [f"{c}" for c in range(part.first, part.last + 1)]
    # A whole number of pixels wide: in a column two thirds of the page wide the figure's
    # width came out fractional, Streamlit measured it twice (538.672 then 538.671875 px)
    # and Plotly.js drew the figure a second time for the difference.
    with right, st.container(width=SLICE_FIGURE_PX):
        show_figure(matrix_heatmap(m, dims, columns, title=f"{name} columns of head {head + 1}",
                                   kind="values", decimals=2, x_title="column",
                                   y_title="row", font_size=page.font),
                    key="mha_fig_slice",
                    alt=slice_alt(part, name)
                        + describe_matrix(m, dims, columns, kind="values",
                                          rows="input dimension", cols="output column"))


SIMILARITY = "similarity between heads"


@st.fragment
def head_chart(stats: dict[str, np.ndarray], similarity: np.ndarray, font: int) -> None:
    """One statistic of every head as bars, or the heads' similarity as a map.

    One chart at a time: d_model, H and the seed change them all. Its picker reruns this
    chart only."""
    left, right = st.columns(2)
    chart = right.selectbox("Chart", [*stats, SIMILARITY], key="mha_stat", **URL)
    H = len(similarity)
    heads = [f"h{h + 1}" for h in range(H)]
    with left:
        if chart == SIMILARITY:
            show_figure(matrix_heatmap(similarity, heads, heads,
                                       title="Similarity between heads (cosine)", decimals=2,
                                       x_title="head", y_title="head", font_size=font),
                        key="mha_fig_similarity",
                        alt=similarity_text(similarity, heads))
            right.caption("The similarity of two heads is the cosine between their weight "
                          "maps: 1 when they attend alike, lower the more their weight falls "
                          "on different keys.")
        else:
            show_figure(bar_chart(heads, stats[chart], title=chart, x_title="head",
                                  y_title=chart, colour=SERIES_COLOURS[2], font_size=font),
                        key="mha_fig_stat",
                        alt=describe_bars(heads, stats[chart], what=f"{chart}, per head"))


@st.cache_data(max_entries=64, show_spinner=False)
def cross_weights(src: tuple[str, ...], tgt: tuple[str, ...], d_model: int, H: int,
                  seed: int) -> np.ndarray:
    """Cross-attention weights (H, len(tgt), len(src)) of random heads, cached."""
    params = mh.init_params(d_model, H, np.random.default_rng(seed + 1))
    x_src = toy_embeddings(src, d_model, seed=seed, decimals=None)
    x_tgt = toy_embeddings(tgt, d_model, seed=seed, decimals=None)
    return mh.multi_head_attention(x_tgt, params, x_kv=x_src).weights


@st.fragment
def cross_attention(H: int, seed: int, font: int) -> None:
    """Section 5; its sentences and head picker rerun this section only.

    The pair goes through random heads of their own, H of them as above, in a layer of
    the largest d_model offered (every H offered divides it): what this section shows
    (a rectangular map whose rows sum to 1) does not depend on d_model, and a map that
    does not change is not redrawn when d_model moves."""
    d_model = max(D_MODELS)
    st.header("5 · Self-attention against cross-attention")
    c1, c2, c3 = st.columns([3, 3, 1])
    source = c1.text_input("Source (keys and values)", SENTENCES["translation_source"],
                           key="mha_source", max_chars=400, **URL)
    target = c2.text_input("Target (queries)", SENTENCES["translation_target"],
                           key="mha_target", max_chars=400, **URL)
    h = c3.selectbox("Head", range(H), format_func=head_label, key="mha_cross_head", **URL,
                     **keep_offered("mha_cross_head", range(H), 0, head_label))
    src = capped_tokens(source, "source", MAX_TOKENS)
    tgt = capped_tokens(target, "target", MAX_TOKENS)
    if not src or not tgt:
        st.info("Type both a source and a target sentence.")
        return
    cross = cross_weights(tuple(src), tuple(tgt), d_model, H, seed)
    show_diagram(multi_head_flow(len(tgt), d_model, H, font, head=h, Tk=len(src)),
                 key="mha_diagram_cross")
    left, right = st.columns(2)
    with left:
        show_figure(matrix_heatmap(cross[h], tgt, src, title=f"Cross-attention, head {h + 1}",
                                   decimals=2, x_title="source (key)",
                                   y_title="target (query)", font_size=font),
                    key="mha_fig_cross",
                    alt=f"Cross-attention of head {h + 1}: target tokens look at source "
                        "tokens. " + describe_matrix(cross[h], tgt, src))
    right.markdown(cross_text(len(tgt), len(src), H, d_model))


def download_names(H: int) -> list[str]:
    """The matrices the downloads offer for H heads."""
    return [f"Head {h + 1} weights" for h in range(H)] + [
        "Average weights", "Head statistics", "Output"]


def statistics_table(w: np.ndarray) -> pd.DataFrame:
    """Each head's statistics (analysis.head_statistics), a row per head."""
    return pd.DataFrame(analysis.head_statistics(w),
                        index=[f"head {h + 1}" for h in range(len(w))])


def download_matrices(results: dict) -> dict:
    """The matrices the lesson shows now: name -> (matrix, row labels, column labels)."""
    tokens, trace = results["tokens"], results["trace"]
    w, table = trace.weights, statistics_table(trace.weights)
    dims = [f"{r + 1}" for r in range(trace.output.shape[1])]
    return dict(zip(download_names(len(w)), [
        *((w[h], tokens, tokens) for h in range(len(w))),
        (w.mean(axis=0), tokens, tokens),
        (table.to_numpy(), list(table.index), list(table.columns)),
        (trace.output, tokens, dims)], strict=True))


def download_trace(results: dict) -> dict:
    """The whole computation the lesson shows now, for the JSON download."""
    params, trace = results["params"], results["trace"]
    return {
        "tokens": results["tokens"], "d_model": params.d_model, "heads": params.n_heads,
        "d_k": params.d_k, "weights_kind": results["weights_kind"], "X": results["x"],
        "W_Q": params.w_q, "W_K": params.w_k, "W_V": params.w_v, "W_O": params.w_o,
        "weights": trace.weights, "head_outputs": trace.heads.output, "concat": trace.concat,
        "output": trace.output,
    }


@st.fragment
def lesson(page: Page, results: dict) -> None:
    """The controls and sections 1 to 5.

    A fragment: a control reruns the lesson only, not the title, the closing notes and
    the downloads below it (Streamlit redraws every element a rerun touches, and these
    are about a fifth of the page). What the sections show goes into ``results``, which
    the download buttons read when clicked.
    """
    sentence = st.text_input("Sentence", DEFAULT_SENTENCE, key="mha_sentence", max_chars=400,
                             **URL)
    c1, c2, c3, c4 = st.columns(4)
    d_model = c1.select_slider("d_model", D_MODELS, value=32, key="mha_dmodel", **URL)
    weights_kind = c3.radio("Matrices W_Q, W_K, W_V", ["random", "designed"],
                            key="mha_weights", horizontal=True, **URL,
                            help="random: drawn from the seed; designed: built so that each "
                                 "head does one job (previous token, self, first token, "
                                 "same word).")
    allowed = mh.head_counts(d_model, designed=weights_kind == "designed")
    n_heads = c2.selectbox(
        "Heads H", allowed, key="mha_heads", **URL,
        help="This implementation gives each head d_k = d_model / H columns (as the original "
             "Transformer does), so only divisors of d_model are offered. Designed heads also "
             "need d_k ≥ 2 (a position is an angle, two numbers).",
        **keep_offered("mha_heads", allowed, 4 if 4 in allowed else allowed[0]))
    seed = seed_input(c4, "mha_seed")
    c1, c2 = st.columns(2)
    causal = c1.toggle("Causal mask", value=False, key="mha_causal", **URL)
    use_pe = c2.toggle("Add sinusoidal positional encoding", value=True, key="mha_pe",
                       disabled=weights_kind == "designed", **URL,
                       help="Designed heads read positions from their own features.")
    if not page.presenter:
        # Positions come before lesson 5 explains them: say what the switch adds, and why.
        st.markdown(
            f"{term_link('positional-encoding', 'Positional encoding')}: the switch adds to "
            "each token's vector a fixed pattern of sines and cosines of its position "
            "([lesson 5](./Positional_encoding) explains it). Without it, equal words get equal "
            "queries, keys and values wherever they stand, and (without the causal mask) "
            "reordering the words only reorders the outputs. Designed heads (W_Q, W_K, W_V "
            "built so that each head does one job: previous token, self, first token, same "
            "word) carry position features of their own, so the switch does not apply to "
            "them."
        )

    H = n_heads
    tokens = capped_tokens(sentence, "sentence", MAX_TOKENS)
    if not tokens:
        offer_downloads(results, None)
        st.info("Type a sentence to see its attention heads.")
        return
    try:
        x, params, trace = attend(tuple(tokens), d_model, H, weights_kind, seed, use_pe, causal)
    except ValueError as exc:
        offer_downloads(results, None)
        show_error(exc)
        return
    w = trace.weights  # (H, T, T)
    # The downloads below offer every head's weights: a new H reruns the page.
    offer_downloads(results, None if page.presenter else download_names(H))
    results |= {"tokens": tokens, "weights_kind": weights_kind, "x": x, "params": params,
                "trace": trace}

    # In presenter mode the layer's diagram and every head's weights come first, so that they
    # show on the first screen; the diagram highlights the head that section 2 shows.
    if page.presenter:
        drawn = offered_value("mha_head", range(H), 0, head_label)
        model_diagram(page, len(tokens), params, drawn, causal)
    else:
        shapes_and_slices(page, 1, x, trace, causal, None)
    st.header(f"{2 - page.presenter} · Every head's weights, and their average")
    patterns = mh.head_patterns(H) if weights_kind == "designed" else None
    shown = min(H, MAX_SHOWN_HEADS)
    if shown < H:
        st.caption(f"Showing the first {shown} of {H} heads; the statistics below cover all.")
    # The average is the grid's last panel: one figure for d_model, H and the seed to redraw.
    maps = [*(w[h] for h in range(shown)), w.mean(axis=0)]
    names = ([f"head {h + 1}" + (f": {patterns[h]}" if patterns else "") for h in range(shown)]
             + [f"average of the {H} heads" if H > 1 else "average (one head: itself)"])
    show_figure(heatmap_grid(maps, tokens, tokens, names, decimals=2, font_size=page.font - 2,
                             columns=2 if page.presenter else 4), key="mha_fig_heads",
                alt="Each head's weights, queries by keys, and their average. "
                    + describe_grid(maps, names, tokens, tokens))
    if patterns:
        rows = [(f"head {h + 1}", patterns[h],
                 "✓" if mh.pattern_holds(w[h], patterns[h], tokens) else "✗")
                for h in range(shown)]
        # Said from the check: "is" only when every shown head passes it.
        st.markdown(designed_text(all(mark == "✓" for *_, mark in rows)))
        # A static table: a few rows of text need no canvas grid (measured on switching to
        # designed heads, it made no difference beyond the noise).
        st.table(pd.DataFrame(rows, columns=["head", "pattern", "largest weight there"])
                 .style.hide(axis="index"))
    if page.presenter:
        shapes_and_slices(page, 2, x, trace, causal, drawn)

    st.header("3 · What each head does, in numbers")
    if not page.presenter:
        st.markdown(
            "Each number is a head's average over its query rows: the "
            f"{term_link('entropy', 'entropy')} of a row (in nats: 0 when one key takes all the "
            "weight, ln T when it is uniform over all T keys), its largest weight, the weight on "
            "the query's own token (diagonal), on the token before it (previous token; 0 for the "
            "first row) and on the first token, and the share of keys given less than half the "
            "uniform weight 1/T (sparsity, < 1/(2T): 0 for a uniform row at every T)."
        )
    table = statistics_table(w)
    # number_text: a designed head's entropy of 1.4e-4 must not read as a false "0.000".
    shown_table = table.style.format(lambda v: number_text(v, 3))
    if not page.presenter and H <= STATIC_TABLE_ROWS:  # static: a canvas grid redraws slowly
        st.table(shown_table)
    elif not page.presenter:
        st.dataframe(shown_table, width="stretch")

    head_chart({name: table[name].to_numpy() for name in table},
               analysis.head_similarity(w), page.font)

    st.header("4 · One head against H heads: the same parameters")
    one = mh.init_params(d_model, 1, np.random.default_rng(seed))
    st.markdown(parameters_text(one, params))

    cross_attention(H, seed, page.font)


def closing_notes(page: Page) -> None:
    """What to notice, the formula and, off the projector, things to try and questions."""
    bullet_list("What to notice", [
        "Every head has its own W_Qʰ, W_Kʰ, W_Vʰ: column slices of the full matrices, so H heads "
        "cost no more parameters than one.",
        f"Random {term_link('projection', 'projection')} matrices give the heads no "
        "particular job; designed heads are "
        "built for one each (previous token, self, first token, same word), jobs that trained "
        "heads can "
        "learn (lesson 9 shows a trained model's heads). Their statistics show the difference.",
        "The average over heads can hide what every single head does.",
        "A cross-attention map has one row per target token and one column per source token: "
        "rectangular when the two lengths differ.",
    ])
    st.subheader("The formula")
    st.latex(r"\mathrm{head}_h = \mathrm{softmax}\!\left(\frac{X W_Q^h (X W_K^h)^\top}{\sqrt{d_k}}"
             r"\right) X W_V^h,\qquad \mathrm{MHA}(X) = [\mathrm{head}_1 \cdots \mathrm{head}_H]"
             r"\, W_O")
    if not page.presenter:
        bullet_list("Try this", [
            "Switch to designed heads with 4 or 8 heads and compare them with random ones.",
            "With random projections, set d_model = 8 and H = 8: each head has d_k = 1, a single "
            "number per token.",
            "Turn the causal mask on: every head becomes lower triangular.",
            "Edit the target sentence to a longer one: the cross-attention maps grow taller.",
        ], expanded=False)
        practice_questions("mha", [
            {"q": "d_model = 64 and H = 8. What is d_k?", "value": 8.0, "tol": 1e-9,
             "a": "d_k = d_model / H = 64 / 8 = 8."},
            {"q": "How many parameters do W_Q, W_K, W_V and W_O have together when d_model = 64, "
                  "with 1 head and with 8 heads (d_k = d_model / H, no biases)?",
             "value": 16384.0, "tol": 0.5,
             "a": "4 · 64² = 16,384 in both cases: the heads share out the same matrices."},
            {"q": "Why does this lesson not offer H = 3 with d_model = 32?",
             "a": "It gives each head d_k = d_model / H columns of W_Q, W_K and W_V (as the "
                  "original Transformer does), and 32 / 3 is not a whole number. That is a "
                  "convention, not a law: W_O has H·d_v rows and d_model columns, so a layer "
                  "could have 3 heads with d_k = d_v = 8, and W_O of 24 × 32."},
        ])


with lesson_page("mha") as page:
    results = {}
    lesson(page, results)
    closing_notes(page)
    page.downloads(results, download_matrices, download_trace)
