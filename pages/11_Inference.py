"""Lesson 11: attention at inference, on lesson 10's model (the KV cache, grouped-query
heads, sliding windows with attention sinks, FlashAttention's online softmax)."""

import numpy as np
import pandas as pd
import streamlit as st

from attncore import cost, lm, scaled_dot_product_attention
from attncore.lm import inference as inf
from attncore.masks import causal_mask, sliding_window_mask
from pages.text import inference as say
from pages.ui import figures as fig
from pages.ui import lm as lm_ui
from pages.ui.controls import URL, bounded_slider
from pages.ui.figures.models import kv_cache_rows
from pages.ui.labels import md_escape
from pages.ui.layout import (
    bad_input_stops_page,
    bullet_list,
    practice_questions,
    show_diagram,
    show_figure,
    stop_page,
)
from pages.ui.live import offer_downloads
from pages.ui.lm_view import curve_with_progress, timed_curve
from pages.ui.page import Page, lesson_page
from pages.ui.shared import measured, measured_when
from pages.ui.tables import scrolled_table

MAX_STEPS = 24  # greedy tokens written twice, with and without the cache
TIMING_CONTEXTS = (16, 32, 64, 128, 256)
CONTEXTS = [512, 1024, 2048, 4096, 8192, 32768, 131072]
TEXTS = ["A story written for this project", "Python's own documentation", "Your own text"]
PAGE_TOKENS = 256  # tokens of the text the perplexities read, at most (and by default)
DEFAULT_WINDOW, DEFAULT_SINKS = 32, 4
CURVE_WINDOWS = (8, 16, 32, 64, 128)
FLASH_TOKENS = 48  # the real Q, K, V of one head on the text's first tokens
MEMORY_NS = (256, 512, 1024, 2048)
MIB = 2**20
SRAM_NUMBER_BYTES = 2  # the paper's count reads M as fp16 numbers, as on a GPU's SRAM
SERVED = 8  # conversations written at once: section 2's default batch, section 1's example
DOWNLOADS = ["Online softmax max"]  # the CSV: section 4's running maximum


def text_tokens(cfg: lm.LMConfig) -> int:
    """Tokens the perplexities read at most: learned positions stop at the model's context."""
    return min(PAGE_TOKENS, cfg.context_length)


@st.fragment
def kv_cache(page: Page, m: lm.LanguageModel, results: dict) -> None:
    """Greedy generation with and without the cache: same tokens, bytes held, time."""
    cfg = m.config
    c1, c2 = st.columns([3, 1])
    prompt = c1.text_input("Prompt", lm_ui.CACHE_PROMPT, key="inf_prompt", max_chars=300,
                           **URL)
    steps = c2.slider("New tokens", 2, MAX_STEPS, lm_ui.CACHE_STEPS, key="inf_steps", **URL)
    if not prompt.strip():
        st.info("Type a prompt to write from.")
        return
    with bad_input_stops_page():
        # Shared by every session of this server (the defaults measured at its start): the
        # times are then the first asker's, and the caption says so and when.
        result, measured_at = lm_ui.cache_comparison(m, prompt, steps)
    results["kv_cache"] = {
        "prompt": prompt, "ids_cached": result.ids_cached, "ids_uncached": result.ids_uncached,
        "max_logit_diff": result.max_logit_diff, "contexts": result.contexts,
        "seconds_cached": result.seconds_cached_each,
        "seconds_uncached": result.seconds_uncached_each,
        "cache_bytes": result.cache_bytes, "cache_bytes_formula": result.cache_bytes_formula,
        "seconds_measured_at_unix_time": measured_at}
    tokens_held = int(result.contexts[-1])
    held_ids = [*lm.prompt_ids(m, prompt).tolist(), *result.ids_cached][:tokens_held]
    # The cache as it grows: its rows after the last step, the newest highlighted.
    show_diagram(kv_cache_rows(cfg, tokens_held, page.font, per_token=say.per_token_bytes(cfg),
                               tokens=lm.pieces(m, held_ids), prompt=result.prompt_tokens),
                 key=page.key("diagram_cache"))
    step_numbers = np.arange(1, steps + 1)
    read_with = np.where(step_numbers == 1, result.prompt_tokens, 1)  # the prompt, then 1
    work = {"without the cache: the whole text again": result.contexts,
            "with the cache: the new token only": read_with}
    show_figure(fig.line_chart(step_numbers, work,
                               title=f"Tokens run through all {cfg.n_layers} layers at each "
                                     "step", x_title="step", y_title="tokens",
                               font_size=page.font, height=320),
                key="inf_fig_steps", alt=fig.describe_lines(
                    step_numbers, work, x_title="step", y_title="tokens run through the model"))
    written = "".join(lm.pieces(m, result.ids_cached))  # ␣ for spaces, ↵ for line breaks
    st.markdown(say.written_text(result, written))
    if not page.presenter:
        st.markdown(say.cache_intro(cfg))
    st.latex(say.cache_latex(cfg, tokens_held, result.cache_bytes_formula))
    st.markdown(say.held_text(result, cfg))
    st.caption(say.cache_caption(measured_when(measured_at), result))
    if not page.presenter:
        with st.expander("Each step's time"):
            st.table(pd.DataFrame({"context length (tokens attended to)": result.contexts,
                                   "with the cache (ms)": result.seconds_cached_each * 1000,
                                   "without (ms)": result.seconds_uncached_each * 1000})
                     .style.format(precision=1).hide(axis="index"))
        held_pieces = lm.pieces(m, held_ids)
        st.markdown(say.held_intro(result, cfg, held_pieces[-1]))
        scrolled_table(pd.DataFrame(say.held_rows(result, cfg, held_pieces)), height=220)

    st.subheader("Time of one new token against the context")
    contexts = tuple(c for c in TIMING_CONTEXTS if c <= cfg.context_length)
    times = measured("times", (m.sha256, contexts),
                     lambda: timed_curve(m, contexts), automatic=False, label="Measure",
                     key="inf_measure_times", shared=False,
                     note="Measures one new token at contexts "
                          f"{', '.join(map(str, contexts))} with and without the "
                          "cache, in 2 interleaved rounds: about 5 to "
                          "20 s for SmolLM2 here (the pass without the cache over the "
                          "longest context takes longest). The longest context is capped at "
                          f"{inf.MAX_TIMING_CONTEXT} tokens to keep the server free.")
    if times is None:
        return
    best_ms = {"without the cache": times.uncached.min(axis=0) * 1000,
               "with the cache": times.cached.min(axis=0) * 1000}
    show_figure(fig.line_chart(times.contexts, best_ms,
                               title="Time of one new token (best of the rounds)",
                               x_title="context (tokens)", y_title="ms", log_x=True,
                               log_y=True, font_size=page.font), key="inf_fig_times",
                alt=fig.describe_lines(times.contexts, best_ms, x_title="context",
                                       y_title="milliseconds"))
    st.markdown(say.timing_text(times, cfg, m.weights.bytes_per_token,
                                inf.cache_outweighs_weights_at(m), SERVED))


def grouped_query(m: lm.LanguageModel) -> None:
    """The cache of this model and of published ones at a context and batch."""
    H, KV = m.config.n_heads, m.config.n_kv_heads
    st.header(f"2 · Grouped-query attention: {H} query heads, {KV} key/value heads" if KV < H
              else f"2 · Grouped-query attention: here {H} heads, each with its own keys and "
                   "values")
    c1, c2 = st.columns(2)
    context = c1.select_slider("Context length (tokens)", CONTEXTS, value=8192, key="inf_ctx",
                               **URL)
    batch = c2.slider("Batch (conversations at once)", 1, 64, SERVED, key="inf_batch", **URL)
    # The sentence first: it links grouped-query attention, which the table's rows name.
    st.markdown(say.sharing_text(m.config, context, batch))
    table = pd.DataFrame(say.cache_rows(m.config, lm_ui.model_name(m), context, batch))
    st.table(table.style.format({"bytes a token (fp16)": "{:,}"}).hide(axis="index"))
    st.markdown(say.published_note(m.config, context))
    st.subheader(f"Sharing must be trained in: merge the {KV} KV heads into 1" if KV > 1 else
                 "Sharing must be trained in")


@st.fragment
def perplexity_sections(page: Page, m: lm.LanguageModel, results: dict
                        ) -> inf.WindowResult | None:
    """Sections 2 (the merge experiment) and 3 (sliding window and sinks): both read the
    same text, chosen here. The window's result, once measured."""
    cfg, name, most = m.config, md_escape(lm_ui.model_name(m)), text_tokens(m.config)
    least = min(64, most)
    c1, c2 = st.columns([2, 1])
    source = c1.radio("Text the perplexities are measured on", TEXTS, key="inf_text",
                      horizontal=True, **URL)
    with c2:
        tokens = bounded_slider(st, "Its first N tokens", least, most, most, key="inf_tokens",
                                step=32)
    own = st.text_area(f"Your own text (at least {least} tokens: a page or two)", "",
                       key="inf_own", max_chars=6000, height=100, **URL
                       ) if source == TEXTS[2] else ""
    text = {TEXTS[0]: inf.default_text(), TEXTS[1]: python_docs()}.get(source, own)
    ids = lm.encode(m, text)[:tokens]
    if ids.size < least:
        st.info(f"The text has {ids.size} tokens; type or paste at least {least}.")
        return None
    N = int(ids.size)
    defaults = source != TEXTS[2] and N == most
    st.caption(say.perplexity_caption(N, most, PAGE_TOKENS, name, cfg))
    merged = None
    if cfg.n_kv_heads == 1:
        st.markdown(f"{name} already has a single key/value head in each layer (multi-query "
                    "attention): there is nothing to merge. It was trained that way, which is "
                    "the point: sharing has to be learnt.")
    else:
        with bad_input_stops_page():
            merged = measured("merge", (m.sha256, text, N),
                              lambda: inf.merged_kv_perplexity(text, N, m=m),
                              automatic=defaults, label="Measure", key="inf_measure_merge",
                              note="Two passes over the text: press to measure.",
                              spinner="Two passes: the model as trained, then with its KV "
                                      "heads averaged…")
    if merged is not None:
        results["merged_kv_heads"] = {"tokens": merged.tokens, "perplexity_gqa": merged.gqa,
                                      "perplexity_merged": merged.merged}
        c1, c2 = st.columns(2)
        c1.metric(f"Perplexity, {cfg.n_kv_heads} KV heads (as trained)", f"{merged.gqa:.2f}")
        c2.metric(f"Perplexity, the {cfg.n_kv_heads} averaged into 1", f"{merged.merged:,.1f}",
                  delta=f"×{fig.said_number(merged.merged / merged.gqa)}",
                  delta_color="inverse")
        st.markdown(say.merge_text(merged, cfg))

    st.header("3 · Sliding window and attention sinks")
    c1, c2 = st.columns(2)
    if not page.presenter:
        st.markdown(say.SLIDING_WINDOW)
    with c1:
        window = bounded_slider(st, "Window W (each token sees itself and W − 1 before it)",
                                4, N, min(DEFAULT_WINDOW, N), key="inf_window")
    sinks = c2.slider("Sinks S (first tokens always visible)", 0, 16, DEFAULT_SINKS,
                      key="inf_sinks", **URL)
    # The cache at the text's last token: the rows the window and its sinks keep, and drop.
    show_diagram(kv_cache_rows(cfg, N, page.font, per_token=say.per_token_bytes(cfg),
                               tokens=lm.pieces(m, ids), window=window, sinks=sinks),
                 key=page.key("diagram_window"))
    shown = min(N, 64)  # the largest mask drawn cell by cell
    left, right = st.columns([2, 3])
    with left:
        preview = sliding_window_mask(shown, window, sinks=sinks)
        labels = [str(n + 1) for n in range(shown)]
        show_figure(fig.matrix_heatmap(preview, labels, labels, kind="mask",
                                       title=f"The mask, W = {window}, S = {sinks}: first "
                                             f"{shown} tokens", font_size=page.font - 2,
                                       height=440),
                    key="inf_fig_mask",
                    alt=f"The mask for W = {window} and S = {sinks} on the first {shown} "
                        "tokens. " + fig.describe_matrix(preview, labels, labels, kind="mask"))
        if window >= shown:
            st.caption(f"Within the first {shown} tokens a window of {window} is the causal "
                       "mask: the window shows further on.")
    automatic = defaults and (window, sinks) == (DEFAULT_WINDOW, DEFAULT_SINKS)
    with right, bad_input_stops_page():
        result = measured(
            "window", (m.sha256, text, N, window, sinks),
            # The defaults are kept on disk for every later process of this machine.
            lambda: inf.window_perplexities(text, window, sinks, N, shift=True, m=m,
                                            keep=automatic),
            automatic=automatic, label="Measure", key="inf_measure_window",
            note="Three passes over the text (full attention, window, window + sinks): press "
                 "to measure.",
            spinner="Three passes: full attention, the window, the window with sinks…")
        if result is not None:
            kinds = ["full", f"window {window}", f"+ {sinks} sinks"]
            values = [result.dense, result.window, result.window_sinks]
            show_figure(fig.bar_chart(kinds, values, title=f"Perplexity of {N} tokens",
                                      x_title="attention", y_title="perplexity", decimals=1,
                                      font_size=page.font), key="inf_fig_window",
                        alt=fig.describe_bars(kinds, values, what=f"Perplexity of {N} tokens"))
    if result is None:
        return None
    results["window"] = {"tokens": N, "window": window, "sinks": sinks,
                         "perplexity_dense": result.dense, "perplexity_window": result.window,
                         "perplexity_window_sinks": result.window_sinks}
    st.markdown(say.window_text(result, cfg))
    if result.shift is not None:
        where_attention_goes(page, result)
    st.subheader("Perplexity against the window")
    windows = [w for w in CURVE_WINDOWS if w < N]  # a longer window is full attention
    curve = measured("curve", (m.sha256, text, N, sinks),
                     lambda: curve_with_progress(m, text, N, windows, sinks),
                     automatic=False, label="Draw the curve", key="inf_curve",
                     note=f"{2 * len(windows) + 1} passes over the text (W = "
                          f"{', '.join(map(str, windows))}, without and with {sinks} "
                          "sinks): about 10 s for SmolLM2 here.")
    if curve is not None:
        lines = {"window": curve.window, f"window + {curve.sinks} sinks": curve.window_sinks,
                 "full attention": np.full(curve.windows.size, curve.dense)}
        show_figure(fig.line_chart(curve.windows, lines,
                                   title=f"Perplexity of {curve.tokens} tokens against W",
                                   x_title="window W", y_title="perplexity", log_x=True,
                                   log_y=True, dashed=("full attention",), font_size=page.font),
                    key="inf_fig_curve", alt=fig.describe_lines(
                        curve.windows, lines, x_title="window W", y_title="perplexity"))
    return result


def where_attention_goes(page: Page, result: inf.WindowResult) -> None:
    """Where token 1's weight goes once the window masks it, layer by layer, and the weight
    by distance back in one layer."""
    s, N, window, sinks = result.shift, result.tokens, result.window_size, result.sinks
    L = s.dense_first.size
    layer = bounded_slider(st, "Layer shown", 1, L, int(np.argmax(s.dense_first)) + 1,
                           key="inf_map_layer")
    where = {"full: on token 1": s.dense_first,
             "window: on the oldest token it keeps": s.window_oldest,
             f"window + sinks: on the {sinks} sinks": s.sinks_on_sinks}
    show_figure(fig.line_chart(np.arange(1, L + 1), where,
                               title=f"Where attention goes, rows {N - s.rows + 1} to {N} "
                                     "(mean over heads)", x_title="layer",
                               y_title="mean weight", font_size=page.font), key="inf_fig_shift",
                alt=fig.describe_lines(np.arange(1, L + 1), where, x_title="layer",
                                       y_title="mean weight"))
    st.markdown(say.shift_text(result))
    back = np.arange(window)  # distance back from the query: 0 is the token itself
    rows = np.arange(N - s.rows, N)  # the queries whose window has lost the first tokens
    by_distance = {name: s.maps[n, layer - 1][rows[:, None], rows[:, None] - back].mean(
        axis=0) for n, name in enumerate(["full", f"window {window}",
                                          f"window {window} + {sinks} sinks"])}
    show_figure(fig.line_chart(back, by_distance, title=f"Layer {layer}: weight by distance "
                               "back, mean over heads and rows", x_title="distance back "
                               "(0 = the token itself)", y_title="mean weight",
                               font_size=page.font), key="inf_fig_distance",
                alt=fig.describe_lines(back, by_distance, x_title="distance back",
                                       y_title="mean weight"))
    st.markdown(say.distance_text(layer, window, by_distance["full"].sum(),
                                  by_distance[f"window {window}"].sum()))


@st.cache_data(show_spinner=False)
def python_docs() -> str:
    """Python's own documentation of its execution model, which every install carries."""
    from pydoc_data.topics import topics

    return topics["execmodel"]


@st.cache_data(max_entries=4, show_spinner=False)
def flash_inputs(_m: lm.LanguageModel, sha256: str, tokens: int
                 ) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The real q (L, H, T, d_k), k and v (L, KV, T, d_k) and the weights on the project's
    text's first tokens, from the model of that sha256."""
    ids = lm.encode(_m, inf.default_text())[:tokens]
    trace = lm.run(ids.tolist(), m=_m)
    return list(trace.tokens), trace.q, trace.k, trace.v, trace.attentions


def raises(q, k, v, row: int, block_k: int) -> int:
    """How often a query row's running maximum rises as the key blocks arrive."""
    t = cost.online_softmax_attention(q, k, v, block_k, mask=causal_mask(len(q)))
    return int(np.count_nonzero(np.diff(t.running_max[:, row]) > 0))


@st.fragment
def online_softmax(page: Page, m: lm.LanguageModel, results: dict) -> None:
    """One real head's attention computed tile by tile, against plain attention; memory."""
    cfg = m.config
    L, H, d_k = cfg.n_layers, cfg.n_heads, cfg.d_head
    tokens, Q, K, V, A = flash_inputs(m, m.sha256, min(FLASH_TOKENS, cfg.context_length))
    T = len(tokens)
    first_row, first_block = max(1, T - 8), min(8, T)
    first_layer = max(1, round(L * 2 / 3))  # 20 of SmolLM2's 30
    # By default the head of that layer whose followed row sees its maximum rise most often:
    # the rescaling step at work (many heads find their maximum in block 1, the sink).
    default_head = max(range(H), key=lambda h: raises(
        Q[first_layer - 1, h].astype(np.float64), K[first_layer - 1, h // cfg.group],
        V[first_layer - 1, h // cfg.group], first_row - 1, first_block))
    c1, c2, c3 = st.columns(3)
    with c1:
        layer = bounded_slider(st, "Layer of the head", 1, L, first_layer, key="inf_fa_layer")
    head = c2.selectbox("Query head", list(range(1, H + 1)), index=default_head,
                        key="inf_fa_head", **URL)
    with c3:
        row = bounded_slider(st, "Query row followed", 1, T, first_row, key="inf_fa_row")
    c1, c2 = st.columns(2)
    with c1:
        block_k = bounded_slider(st, "Keys per block (B_c)", 1, T, first_block, key="inf_fa_bk")
    with c2:
        block_q = bounded_slider(st, "Query rows per tile (B_r)", 1, T, 16, key="inf_fa_bq")
    l, h, i = layer - 1, head - 1, row - 1
    g = h // cfg.group
    q, k, v = (a.astype(np.float64) for a in (Q[l, h], K[l, g], V[l, g]))  # (T, d_k) each
    mask = causal_mask(T)
    tiled = cost.online_softmax_attention(q, k, v, block_k, block_q, mask=mask)
    plain = scaled_dot_product_attention(q, k, v, mask=mask).output
    results["online_softmax"] = {
        "layer": layer, "head": head, "block_k": block_k, "block_q": block_q,
        "tokens": tokens, "key_blocks": [list(b) for b in tiled.key_blocks],
        "running_max": tiled.running_max.T, "denominator": tiled.denominator.T,
        "output": tiled.output, "plain_output": plain}
    st.markdown(say.tiling_text(layer, head, g + 1, T, tiled, block_k, block_q))
    st.markdown(f"Row {row} (“{md_escape(tokens[i])}”), block by block: a block entirely "
                "after the query is masked and changes nothing (−∞ while no key has been "
                "seen).")
    st.table(pd.DataFrame(say.block_rows(tiled, i)).set_index("block"))
    step = say.rescale_step(tiled, i)
    if step is not None:
        st.latex(step[0])
        st.caption(step[1])
    st.latex(r"o' = e^{m - m'}\, o + \sum_j e^{s_j - m'}\, v_j,\qquad "
             r"\text{output} = o / \ell")
    model_out = A[l, h].astype(np.float64) @ v
    st.markdown(say.flash_text(float(np.max(np.abs(tiled.output - plain))),
                               float(np.max(np.abs(tiled.output - model_out))), T, d_k))

    st.subheader("Memory: tiled, the n × n matrix never exists")
    sram_kb = st.slider(say.sram_label(SRAM_NUMBER_BYTES), 16, 256, 100, 4, key="inf_sram",
                        help=say.sram_help(SRAM_NUMBER_BYTES), **URL)
    ns = np.array([256, 1024, 4096, 16384, 65536])
    sram = sram_kb * 1024 // SRAM_NUMBER_BYTES  # numbers, not bytes
    counts = {"standard: 4nd + 4n²": [cost.hbm_accesses_standard(int(n), d_k) for n in ns],
              "FlashAttention (Algorithm 1)": [cost.hbm_accesses_flash(int(n), d_k, sram)
                                               for n in ns]}
    show_figure(fig.line_chart(ns, counts, title=f"Slow-memory reads and writes, one head, "
                               f"d = {d_k}, M = {sram_kb} KB", x_title="sequence length n",
                               y_title="numbers moved", log_x=True, log_y=True,
                               font_size=page.font),
                key="inf_fig_hbm", alt=fig.describe_lines(ns, counts, x_title="n",
                                                          y_title="numbers moved"))
    memory = measured(
        "memory", (), lambda: cost.tiled_memory(MEMORY_NS, d_k, 128, np.random.default_rng(0)),
        spinner="Measuring…", automatic=False, label="Measure memory and time",
        key="inf_measure_memory",
        shared=False, note=f"Runs plain and tiled attention (blocks of 128) on random (n, "
                           f"{d_k}) inputs for n = {', '.join(map(str, MEMORY_NS))}, "
                           "measuring the peak memory allocated and the time: about 2 s.")
    if memory is not None:
        peaks = {"plain (keeps the n × n weights)": memory.plain_peak / MIB,
                 "tiled (blocks of 128)": memory.tiled_peak / MIB}
        show_figure(fig.line_chart(memory.ns, peaks, title="Peak memory allocated, one head",
                                   x_title="n", y_title="MiB", log_x=True, log_y=True,
                                   font_size=page.font), key="inf_fig_memory",
                    alt=fig.describe_lines(memory.ns, peaks, x_title="n", y_title="MiB"))
        st.markdown(say.memory_text(memory, MIB))
    st.markdown(say.WHERE_TILING_PAYS)


def download_matrices(results: dict) -> dict:
    """The CSV: section 4's running maximum of every query row (a row per token) after each
    key block (a column per block)."""
    fa = results["online_softmax"]
    return {DOWNLOADS[0]: (fa["running_max"], fa["tokens"],
                           [f"keys {a + 1}-{b}" for a, b in fa["key_blocks"]])}


with lesson_page("inf") as page:
    m = lm_ui.load_language_model()
    if m is None:
        stop_page()
    lm_ui.model_note(m, page.presenter)
    # What the sections measure, for the downloads: sections rerun alone, as fragments, and
    # the buttons read this when clicked.
    results = {}
    offer_downloads(results, None if page.presenter else DOWNLOADS)
    st.header("1 · The KV cache")
    kv_cache(page, m, results)
    grouped_query(m)
    window = perplexity_sections(page, m, results)  # None until a window was measured
    st.header("4 · FlashAttention's online softmax")
    online_softmax(page, m, results)
    bullet_list("What to notice", say.notices(m.config, window))
    st.subheader("The formula")
    st.latex(r"\text{KV cache} = 2 \cdot L \cdot n_{KV} \cdot d_k \cdot T \cdot B \cdot b,"
             r"\qquad \ell' = e^{m - m'}\ell + \textstyle\sum_j e^{s_j - m'}")
    if not page.presenter:
        bullet_list("Try this", say.TRY_THIS, expanded=False)
        practice_questions("inf", say.practice(m.config))
    # The JSON: every measurement the page shows, as the sections kept it.
    page.downloads(results, download_matrices, dict, say.DOWNLOADS_NOTE)
    lm_ui.model_caption(m, "the same as lesson 10's, run here in NumPy (float32; the online "
                           "softmax in float64)")
