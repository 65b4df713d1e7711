"""Lesson 11: attention at inference, on lesson 10's model (the KV cache, grouped-query
heads, sliding windows with attention sinks, FlashAttention's online softmax)."""

from fractions import Fraction

import numpy as np
import pandas as pd
import streamlit as st

from attncore import cost, lm, scaled_dot_product_attention
from attncore.lm import inference as inf
from attncore.masks import causal_mask, sliding_window_mask
from pages.ui.controls import URL, bounded_slider
from pages.ui.figures import (
    bar_chart,
    describe_bars,
    describe_lines,
    describe_matrix,
    line_chart,
    matrix_heatmap,
    said_number,
)
from pages.ui.glossary import term_link
from pages.ui.labels import md_escape
from pages.ui.layout import (
    bad_input_stops_page,
    bullet_list,
    figure_font,
    finish_page,
    lesson_header,
    practice_questions,
    setup_page,
    show_figure,
)
from pages.ui.lm import (
    CACHE_PROMPT,
    CACHE_STEPS,
    cache_comparison,
    load_language_model,
    model_caption,
    model_name,
    model_note,
)
from pages.ui.numbers import difference_text, number_text, percent_text
from pages.ui.shared import measured, measured_when
from pages.ui.tables import scrolled_table, to_csv, to_json

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
SERVED = 8  # conversations written at once: section 2's default batch, section 1's example

presenter = setup_page("Attention at inference", "⚡")
font = figure_font(presenter)
lesson_header(
    "11 · Attention at inference",
    "measure on lesson 10's model what attention costs when it writes, and how real "
    f"systems cope: the {term_link('kv-cache', 'KV cache')}, shared key/value heads, a "
    "sliding window with attention "
    "sinks, and FlashAttention's online softmax.",
)
m = load_language_model()
if m is None:
    st.stop()
cfg = m.config
L, H, KV, d_k = cfg.n_layers, cfg.n_heads, cfg.n_kv_heads, cfg.d_head
name = md_escape(model_name(m))
# Learned positions stop at the model's context: no pass here reads past it.
TEXT_TOKENS = min(PAGE_TOKENS, cfg.context_length)
MIN_TEXT = min(64, TEXT_TOKENS)
model_note(m, presenter)


# What the sections measured last, for the downloads (sections rerun alone, as fragments;
# the buttons read this when clicked).
results: dict = st.session_state.setdefault("_inf_results", {})


def window_share(maps: np.ndarray, layer: int, rows: np.ndarray, window: int) -> float:
    """The mean weight a query row puts on its window's tokens (itself and the W − 1 before
    it), in one layer's head-averaged map (T, T)."""
    back = np.arange(window)
    return float(maps[layer][rows[:, None], rows[:, None] - back].sum(axis=1).mean())


def mb(n_bytes: float) -> str:
    """Bytes as MB (10⁶) with 3 significant digits, or GB past 1000 MB."""
    return f"{n_bytes / 1e9:.3g} GB" if n_bytes >= 1e9 else f"{n_bytes / 1e6:.3g} MB"


st.header("1 · The KV cache")


@st.fragment
def kv_cache(presenter: bool, font: int) -> None:
    """Greedy generation with and without the cache: same tokens, bytes held, time."""
    c1, c2 = st.columns([3, 1])
    prompt = c1.text_input("Prompt", CACHE_PROMPT, key="inf_prompt", max_chars=300, **URL)
    steps = c2.slider("New tokens", 2, MAX_STEPS, CACHE_STEPS, key="inf_steps", **URL)
    if not prompt.strip():
        st.info("Type a prompt to write from.")
        return
    with bad_input_stops_page():
        # Shared by every session of this server (the defaults measured at its start): the
        # times are then the first asker's, and the caption says so and when.
        result, measured_at = cache_comparison(m, prompt, steps)
    results["kv_cache"] = {
        "prompt": prompt, "ids_cached": result.ids_cached, "ids_uncached": result.ids_uncached,
        "max_logit_diff": result.max_logit_diff, "contexts": result.contexts,
        "seconds_cached": result.seconds_cached_each,
        "seconds_uncached": result.seconds_uncached_each,
        "cache_bytes": result.cache_bytes, "cache_bytes_formula": result.cache_bytes_formula,
        "seconds_measured_at_unix_time": measured_at}
    held, formula = result.cache_bytes, result.cache_bytes_formula
    tokens_held = int(result.contexts[-1])
    step_numbers = np.arange(1, steps + 1)
    read_with = np.where(step_numbers == 1, result.prompt_tokens, 1)  # the prompt, then 1
    work = {"without the cache: the whole text again": result.contexts,
            "with the cache: the new token only": read_with}
    show_figure(line_chart(step_numbers, work,
                           title=f"Tokens run through all {L} layers at each step",
                           x_title="step", y_title="tokens", font_size=font, height=320),
                key="inf_fig_steps",
                alt=describe_lines(step_numbers, work, x_title="step", y_title="tokens read"))
    written = "".join(lm.pieces(m, result.ids_cached))  # ␣ for spaces, ↵ for line breaks
    apart = next((n for n, (a, b) in enumerate(zip(result.ids_cached, result.ids_uncached,
                                                     strict=True), start=1) if a != b), None)
    st.markdown(
        f"Written with the cache: **{md_escape(written)}**. Without it: "
        + ("**the same tokens**" if result.same_tokens else
           f"**other tokens from step {apart} on**")
        + f" (the largest difference of any logit over the {steps} steps: "
        f"{difference_text(result.max_logit_diff)}"
        + ("; the two runs add the same float32 numbers in other orders, so they differ by "
           "rounding only)." if result.max_logit_diff and result.same_tokens else ")."))
    if not presenter:
        st.markdown(f"The KV cache holds, for each of the {L} "
                    f"layers, a key and a value vector of d_k = {d_k} numbers per "
                    f"{term_link('n_KV', 'key/value head')} (n_KV = {KV}) and for each of the "
                    "T tokens, each number of b bytes:")
    st.latex(rf"2 \cdot L \cdot n_{{KV}} \cdot d_k \cdot T \cdot b = 2 \cdot {L} \cdot {KV} "
             rf"\cdot {d_k} \cdot {tokens_held} \cdot 4 = {formula:,}\ \text{{bytes}}")
    st.markdown(f"After the last step the cache holds the keys and values of {tokens_held} "
                f"tokens: **{held:,} bytes** measured on the arrays themselves, "
                + ("equal to the formula." if held == formula else
                   f"against {formula:,} from the formula.")
                + f" That is {2 * L * KV * d_k * 4:,} bytes per token, in float32.")
    seconds = pd.DataFrame({"context (tokens read)": result.contexts,
                            "with the cache (ms)": result.seconds_cached_each * 1000,
                            "without (ms)": result.seconds_uncached_each * 1000})
    st.caption(f"{measured_when(measured_at)}, {steps} steps: "
               f"{result.seconds_cached:.2f} s with the cache, "
               f"{result.seconds_uncached:.2f} s without (wall time on this machine, which "
               "others share: another run will differ).")
    if not presenter:
        with st.expander("Each step's time"):
            st.table(seconds.style.format(precision=1).hide(axis="index"))
        prompt_ids = lm.encode(m, prompt)
        held_ids = [*prompt_ids.tolist(), *result.ids_cached][:tokens_held]
        per_token = 2 * L * KV * d_k * 4
        st.markdown(f"The {tokens_held} tokens whose keys and values the cache holds, "
                    f"{per_token:,} bytes each:")
        scrolled_table(pd.DataFrame({
            "position": np.arange(1, tokens_held + 1), "token": lm.pieces(m, held_ids),
            "from": ["prompt"] * prompt_ids.size + [f"step {n}" for n in range(
                1, tokens_held - prompt_ids.size + 1)],
            "bytes held up to here": [f"{per_token * n:,}" for n in range(1, tokens_held + 1)]}),
            height=220)

    st.subheader("Time of one new token against the context")
    contexts = tuple(c for c in TIMING_CONTEXTS if c <= cfg.context_length)
    times = measured("times", (m.sha256, contexts),
                     lambda: timed_curve(contexts), automatic=False, label="Measure",
                     key="inf_measure_times", shared=False,
                     note="Measures one new token at contexts "
                          f"{', '.join(map(str, contexts))} with and without the "
                          "cache, in 2 interleaved rounds: about 5 to "
                          "20 s for SmolLM2 here (the pass without the cache over the "
                          "longest context takes longest). The longest context is capped at "
                          f"{inf.MAX_TIMING_CONTEXT} tokens to keep the server free.")
    if times is None:
        return
    ctx = times.contexts
    best_ms = {"without the cache": times.uncached.min(axis=0) * 1000,
               "with the cache": times.cached.min(axis=0) * 1000}
    show_figure(line_chart(ctx, best_ms, title="Time of one new token (best of the rounds)",
                           x_title="context (tokens)", y_title="ms", log_x=True, log_y=True,
                           font_size=font), key="inf_fig_times",
                alt=describe_lines(ctx, best_ms, x_title="context", y_title="milliseconds"))
    lo_c, hi_c = times.cached_exponents.min(), times.cached_exponents.max()
    lo_u, hi_u = times.uncached_exponents.min(), times.uncached_exponents.max()
    longest = int(ctx.max())
    per_token, weights = inf.cache_bytes(cfg, 1), m.weights.bytes_per_token
    outweighs = inf.cache_outweighs_weights_at(m)  # tokens of context, one conversation
    st.markdown(
        f"Fitted growth, time ∝ context^k, one fit per round: with the cache k = "
        f"{number_text(lo_c, 2)} to {number_text(hi_c, 2)}"
        + (" (nearly flat here: every k below 0.2)" if hi_c < 0.2 else "")
        + f", without k = {number_text(lo_u, 2)} to {number_text(hi_u, 2)} (each step runs "
        "the whole context "
        "through the model again). "
        + ("A k below 1 without the cache comes from the fixed part of a pass (reading the "
           f"weights, the {cfg.vocab_size:,} logits), which short contexts do not hide; the "
           "attention part alone grows as context². " if lo_u < 1 else "")
        + f"With the cache each step runs one new token through the model, but its "
        f"attention still reads the keys and values of every earlier token: {per_token:,} "
        f"bytes a token of context, a part that grows linearly with it. At {longest} tokens "
        f"that is {per_token * longest / weights:.1%} of the {weights / 1e6:.0f} MB of "
        "weights each step reads, hidden by them; from "
        f"{outweighs:,} tokens on the cache outweighs the weights, and reading it dominates a "
        "step whose speed is set by memory, as generation's usually is"
        + (f". That is longer than the {cfg.context_length:,} tokens this model was trained "
           f"for, but a server writing for {SERVED} conversations at once reads {SERVED} caches "
           f"and the weights once a step: the caches outweigh the weights from "
           f"{-(-outweighs // SERVED):,} tokens on" if outweighs > cfg.context_length else "")
        + ". That is why grouped-query heads (section 2) matter.")


def timed_curve(contexts: tuple[int, ...]) -> inf.TokenTimes:
    bar = st.progress(0.0, text="Timing…")
    result = inf.token_times(contexts, rounds=2,
                             progress=lambda f: bar.progress(f, text="Timing…"), m=m)
    bar.empty()
    return result


kv_cache(presenter, font)

st.header(f"2 · Grouped-query attention: {H} query heads, {KV} key/value heads" if KV < H else
          f"2 · Grouped-query attention: here {H} heads, each with its own keys and values")
c1, c2 = st.columns(2)
context = c1.select_slider("Context length (tokens)", CONTEXTS, value=8192, key="inf_ctx",
                           **URL)
batch = c2.slider("Batch (conversations at once)", 1, 64, SERVED, key="inf_batch", **URL)
rows = []
beyond = "†"  # a context longer than the model was trained for
# This model as trained, and as it would be with every head its own K and V (MHA) or one
# K and V for all (MQA): one row per number of KV heads.
kinds = {H: "multi-head (MHA)", 1: "multi-query (MQA)"}
kinds = {H: kinds[H], **({KV: "grouped-query (GQA)"} if 1 < KV < H else {}), 1: kinds[1]}
for kv, kind in kinds.items():
    rows.append({"model": f"{model_name(m)}, {kind}" + (", as trained" if kv == KV else ""),
                 "KV heads": kv, "layers": L,
                 "head size": d_k, "bytes a token (fp16)": 2 * L * kv * d_k * 2,
                 "cache (fp16)": mb(inf.cache_bytes(cfg, context, batch, kv, 2)),
                 "cache (float32, as here)": mb(inf.cache_bytes(cfg, context, batch, kv, 4)),
                 "context it was trained for": f"{cfg.context_length:,}"
                 + (f" {beyond}" if context > cfg.context_length else "")})
rolling = []
for c in inf.PUBLISHED:
    held = c.tokens_held(context)
    if held < context:
        rolling.append(c)
    rows.append({"model": f"{c.name} ({c.kind})", "KV heads": c.kv_heads, "layers": c.layers,
                 "head size": c.head_size, "bytes a token (fp16)": 2 * c.layers * c.kv_heads
                 * c.head_size * 2,
                 "cache (fp16)": mb(c.cache_bytes(context, batch))
                 + (" ✱" if held < context else ""),
                 "cache (float32, as here)": "—",
                 "context it was trained for": f"{c.context:,}"
                 + (f" {beyond}" if context > c.context else "")})
table = pd.DataFrame(rows)
st.table(table.style.format({"bytes a token (fp16)": "{:,}"}).hide(axis="index"))
gqa, mha = inf.cache_bytes(cfg, context, batch, KV, 2), inf.cache_bytes(cfg, context, batch, H, 2)
mqa = inf.cache_bytes(cfg, context, batch, 1, 2)
if KV == H:
    sharing = (f"{mb(mha)} in fp16: each of its {H} heads has its own keys and values "
               f"(multi-head attention), so there is nothing shared. "
               f"{term_link('gqa', 'Grouped-query attention')} would let several query heads "
               f"read one key/value head; with one for all {H} (multi-query) the cache "
               f"would take {mb(mqa)}, {H}× less.")
elif KV == 1:
    sharing = (f"{mb(gqa)} in fp16 with its one KV head, which all {H} query heads read "
               f"(multi-query attention), against {mb(mha)} if each had its own ({H}× more).")
else:
    sharing = (f"{mb(gqa)} in fp16 with its {KV} KV heads, against {mb(mha)} if each of its "
               f"{H} query heads had its own ({H // KV}× more: "
               f"{term_link('gqa', 'grouped-query attention')} shares each key/value head "
               f"among {H // KV} query heads).")
st.markdown(f"At {context:,} tokens and a batch of {batch}, this model's cache takes "
            f"{sharing} The published rows are from each model's config.json "
            "(layers, attention heads, key/value heads, head size, sliding window), and the "
            "context each was trained on is from its paper or model card; caches are in fp16 "
            "(2 bytes a number), as models are usually served."
            + "".join(f" ✱ {c.name} attends through a sliding window of {c.window:,} tokens: "
                      f"its rolling cache keeps only the last {c.window:,}, so it stops "
                      f"growing there." for c in rolling)
            + (f" {beyond} The context is longer than the model was trained for: its cache "
               "is what that length would take, not a length the model handles well."
               if any(beyond in r["context it was trained for"] for r in rows) else ""))
st.subheader(f"Sharing must be trained in: merge the {KV} KV heads into 1" if KV > 1 else
             "Sharing must be trained in")


def way_back(result: inf.WindowResult) -> str:
    """How much of what the window cost in perplexity the sinks give back."""
    cost = result.window - result.dense
    if result.window_sinks <= result.dense:
        return ", as good as full attention or better."
    if cost <= 0:
        return ": the window alone costs nothing on this text."
    return f", {percent_text((result.window - result.window_sinks) / cost)} of the way back."


def window_notice(shown) -> str:
    """What section 3 measured (the window and sinks it measured with), for What to notice."""
    if shown is None:
        return ("A model trained with full attention leans on its first tokens: section 3 "
                "measures what a sliding window costs it and what a few sinks give back.")
    result, window, sinks = shown
    said = (f"On section 3's text a window of {window} takes perplexity from "
            f"{result.dense:.1f} (full attention) to {result.window:.1f}")
    if not sinks:
        return said + "; with S = 0 no sink is kept: set S above 0 to see what sinks give back."
    return (said + f"; keeping the first {sinks} tokens visible brings it to "
            f"{result.window_sinks:.1f}" + way_back(result))


@st.fragment
def perplexity_sections(presenter: bool, font: int):
    """Sections 2 (the merge experiment) and 3 (sliding window and sinks): both read the
    same text, chosen here."""
    c1, c2 = st.columns([2, 1])
    source = c1.radio("Text the perplexities are measured on", TEXTS, key="inf_text",
                      horizontal=True, **URL)
    with c2:
        tokens = bounded_slider(st, "Its first N tokens", MIN_TEXT, TEXT_TOKENS, TEXT_TOKENS,
                                key="inf_tokens", step=32)
    own = st.text_area(f"Your own text (at least {MIN_TEXT} tokens: a page or two)", "",
                       key="inf_own", max_chars=6000, height=100, **URL
                       ) if source == TEXTS[2] else ""
    text = {TEXTS[0]: inf.default_text(), TEXTS[1]: python_docs()}.get(source, own)
    ids = lm.encode(m, text)[:tokens]
    if ids.size < MIN_TEXT:
        st.info(f"The text has {ids.size} tokens; type or paste at least {MIN_TEXT}.")
        return None
    N = int(ids.size)
    defaults = source != TEXTS[2] and N == TEXT_TOKENS
    st.caption(f"{term_link('perplexity', 'Perplexity')} = e^(mean "
               f"{term_link('cross-entropy', 'cross-entropy')}) of the model's prediction of "
               f"each of tokens 2 to {N}: how many tokens it is, on average, as unsure between. "
               f"Every measurement is one pass over the {N} tokens (about a second for "
               f"SmolLM2 here); the page reads at most {TEXT_TOKENS} tokens, "
               + (f"to keep a shared server free (the command line reads up to "
                  f"{inf.MAX_TOKENS})." if TEXT_TOKENS == PAGE_TOKENS else
                  f"the context {name} was trained on"
                  + ("." if cfg.uses_rope else " (its learned positions stop there).")))
    merged = None
    if KV == 1:
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
        c1.metric(f"Perplexity, {KV} KV heads (as trained)", f"{merged.gqa:.2f}")
        ratio = merged.merged / merged.gqa
        c2.metric(f"Perplexity, the {KV} averaged into 1", f"{merged.merged:,.1f}",
                  delta=f"×{said_number(ratio)}", delta_color="inverse")
        st.markdown(
            f"Averaging each layer's {KV} key heads (and {KV} value heads) into one is how the GQA "
            f"paper starts converting a multi-head model"
            + (" such as this one" if KV == H else "") + ", and it then *trains further*. "
            f"Without that training, perplexity goes from {merged.gqa:.1f} to "
            f"{merged.merged:,.1f}, {said_number(ratio)} times as high"
            + (", at least ten times: the model falls apart. The heads learnt different "
               "keys; sharing has to be learnt." if ratio >= 10 else
               ". The heads learnt different keys, and averaging them costs what they learnt "
               "apart; sharing has to be learnt." if ratio > 1 else "."))

    st.header("3 · Sliding window and attention sinks")
    c1, c2 = st.columns(2)
    if not presenter:
        st.markdown(f"A {term_link('sliding-window', 'sliding window')} here is causal, of "
                    "size W: each token sees itself and the W − 1 tokens before it, never a "
                    "later one (lesson 3's local window is symmetric instead: radius r on "
                    "both sides). Sinks S are the first tokens, kept visible to every later "
                    f"token (an {term_link('attention-sink', 'attention sink')}, measured "
                    "below).")
    with c1:
        window = bounded_slider(st, "Window W (each token sees itself and W − 1 before it)",
                                4, N, min(DEFAULT_WINDOW, N), key="inf_window")
    sinks = c2.slider("Sinks S (first tokens always visible)", 0, 16, DEFAULT_SINKS,
                      key="inf_sinks", **URL)
    shown = min(N, 64)  # the largest mask drawn cell by cell
    left, right = st.columns([2, 3])
    with left:
        preview = sliding_window_mask(shown, window, sinks=sinks)
        labels = [str(n + 1) for n in range(shown)]
        show_figure(matrix_heatmap(preview, labels, labels, kind="mask",
                                   title=f"The mask, W = {window}, S = {sinks}: first "
                                         f"{shown} tokens", font_size=font - 2, height=440),
                    key="inf_fig_mask",
                    alt=f"The mask for W = {window} and S = {sinks} on the first {shown} "
                        "tokens. " + describe_matrix(preview, labels, labels, kind="mask"))
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
            show_figure(bar_chart(kinds, values, title=f"Perplexity of {N} tokens",
                                  x_title="attention", y_title="perplexity", decimals=1,
                                  font_size=font), key="inf_fig_window",
                        alt=describe_bars(kinds, values, what=f"Perplexity of {N} tokens"))
    if result is None:
        return None
    results["window"] = {"tokens": N, "window": window, "sinks": sinks,
                         "perplexity_dense": result.dense, "perplexity_window": result.window,
                         "perplexity_window_sinks": result.window_sinks}
    st.markdown(
        f"Perplexity with full attention: {result.dense:.1f}. "
        f"Each token seeing only itself and the {window - 1} before it: "
        f"{result.window:.1f}. The same window plus the first {sinks} tokens: "
        f"{result.window_sinks:.1f}" + way_back(result)
        + (" The tokens keep their own positions (RoPE still sees the true distances); "
           "StreamingLLM also renumbers the positions inside its cache." if cfg.uses_rope else
           " The tokens keep their own positions (each its own learned position vector)."))
    if result.shift is not None:
        s = result.shift
        layer = bounded_slider(st, "Layer shown", 1, L, int(np.argmax(s.dense_first)) + 1,
                               key="inf_map_layer")
        where = {"full: on token 1": s.dense_first,
                 "window: on the oldest token it keeps": s.window_oldest,
                 f"window + sinks: on the {sinks} sinks": s.sinks_on_sinks}
        show_figure(line_chart(np.arange(1, L + 1), where,
                               title=f"Where attention goes, rows {N - s.rows + 1} to {N} "
                                     "(mean over heads)", x_title="layer",
                               y_title="mean weight", font_size=font), key="inf_fig_shift",
                    alt=describe_lines(np.arange(1, L + 1), where, x_title="layer",
                                       y_title="mean weight"))
        top = int(np.argmax(s.dense_first))
        gained = s.window_oldest[top] - s.dense_oldest[top]  # what the oldest kept token gained
        rows = np.arange(N - s.rows, N)  # the queries whose window has lost the first tokens
        held = window_share(s.maps[0], top, rows, window)  # full attention, on the window
        first, on_sinks = s.dense_first[top], s.sinks_on_sinks[top]
        st.markdown(
            f"For the {s.rows} queries whose window has lost the first tokens: with full "
            f"attention layer {top + 1} puts {percent_text(first)} of its weight on token 1. "
            "Masked out, "
            + (f"less than half of that weight moves to the oldest token the window keeps "
               f"(from {s.dense_oldest[top]:.1%} to {s.window_oldest[top]:.1%}): the rest "
               "spreads over the window, onto tokens that held "
               f"{percent_text(held)} of the query's weight with full attention. "
               if gained < first / 2 else
               f"most of that weight moves to the oldest token the window keeps (from "
               f"{s.dense_oldest[top]:.1%} to {s.window_oldest[top]:.1%}): it takes token "
               "1's place. ")
            + ("Set S above 0 to give the first tokens back." if not sinks else
               f"Give the first {sinks} back and they take {percent_text(on_sinks)} of the weight"
               + (f", at least half of what token 1 held: they take its place as the "
                  f"{term_link('attention-sink', 'attention sink')}, often read as a place "
                  "to put weight the model has no use for."
                  if on_sinks >= first / 2 else
                  f", less than half of the {percent_text(first)} token 1 held.")))
        back = np.arange(window)  # distance back from the query: 0 is the token itself
        by_distance = {name: s.maps[n, layer - 1][rows[:, None], rows[:, None] - back].mean(
            axis=0) for n, name in enumerate(["full", f"window {window}",
                                              f"window {window} + {sinks} sinks"])}
        show_figure(line_chart(back, by_distance, title=f"Layer {layer}: weight by distance "
                               "back, mean over heads and rows", x_title="distance back "
                               "(0 = the token itself)", y_title="mean weight",
                               font_size=font), key="inf_fig_distance",
                    alt=describe_lines(back, by_distance, x_title="distance back",
                                       y_title="mean weight"))
        full_share = by_distance["full"].sum()  # weight on the window's tokens, full attention
        windowed = by_distance[f"window {window}"].sum()
        st.markdown(f"In layer {layer} the window's {window} tokens get "
                    f"{percent_text(full_share)} of a query's weight with full attention and "
                    f"{percent_text(windowed)} under the "
                    f"window: {100 * (windowed - full_share):.0f} percentage points more, "
                    f"{said_number(windowed / full_share)} times as much, spread over "
                    "them: the weight that had no other place to go.")
    st.subheader("Perplexity against the window")
    curve = measured("curve", (m.sha256, text, N, sinks),
                     lambda: curve_with_progress(text, N, sinks),
                     automatic=False, label="Draw the curve", key="inf_curve",
                     note=f"{2 * len(curve_windows(N)) + 1} passes over the text (W = "
                          f"{', '.join(map(str, curve_windows(N)))}, without and with {sinks} "
                          "sinks): about 10 s for SmolLM2 here.")
    if curve is not None:
        lines = {"window": curve.window, f"window + {curve.sinks} sinks": curve.window_sinks,
                 "full attention": np.full(curve.windows.size, curve.dense)}
        show_figure(line_chart(curve.windows, lines,
                               title=f"Perplexity of {curve.tokens} tokens against W",
                               x_title="window W", y_title="perplexity", log_x=True,
                               log_y=True, dashed=("full attention",), font_size=font),
                    key="inf_fig_curve", alt=describe_lines(curve.windows, lines,
                                                            x_title="window W",
                                                            y_title="perplexity"))
    return result, window, sinks


@st.cache_data(show_spinner=False)
def python_docs() -> str:
    """Python's own documentation of its execution model, which every install carries."""
    from pydoc_data.topics import topics

    return topics["execmodel"]


def curve_windows(N: int) -> list[int]:
    """The windows of the curve shorter than the text (a longer one is full attention)."""
    return [w for w in CURVE_WINDOWS if w < N]


def curve_with_progress(text: str, N: int, sinks: int) -> inf.WindowCurve:
    windows = curve_windows(N)
    bar = st.progress(0.0, text="Measuring…")
    curve = inf.window_curve(text, windows, sinks, N, progress=lambda f: bar.progress(
        f, text="Measuring…"), m=m)
    bar.empty()
    return curve


shown_window = perplexity_sections(presenter, font)  # None until a window was measured

st.header("4 · FlashAttention's online softmax")


@st.cache_data(max_entries=4, show_spinner=False)
def flash_inputs(_m: lm.SmolLM, sha256: str, tokens: int
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
def online_softmax(presenter: bool, font: int) -> None:
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
    model_out = A[l, h].astype(np.float64) @ v
    gap = float(np.max(np.abs(tiled.output - plain)))
    rows_tile = min(block_q, T)
    sizes = sorted({b - a for a, b in tiled.key_blocks}, reverse=True)
    blocks_said = (f"{len(tiled.key_blocks)} block{'s' if len(tiled.key_blocks) > 1 else ''} "
                   f"of {block_k}" + (f" (the last of {sizes[-1]})" if len(sizes) > 1 else ""))
    tile = rows_tile * sizes[0]
    st.markdown(
        f"Layer {layer}, head {head}, on the first {T} tokens of the story: q, k and v as the "
        f"model computed them (k and v are KV head {g + 1}'s). The keys arrive in "
        f"{blocks_said}; each tile holds at most {rows_tile} × {sizes[0]} = {tile:,} scores"
        + (f", never the whole {T} × {T} matrix ({T * T:,} scores)." if tile < T * T else
           f": with both blocks as long as the text, one tile is the whole {T} × {T} "
           "matrix, and nothing is saved. Make a block smaller to see the tiling."))
    blocks = tiled.key_blocks
    m_row, l_row = tiled.running_max[:, i], tiled.denominator[:, i]
    prev_m = np.concatenate([[-np.inf], m_row[:-1]])
    with np.errstate(invalid="ignore"):
        rescale = np.where(np.isfinite(prev_m), np.exp(prev_m - np.where(
            np.isfinite(m_row), m_row, 0)), np.nan)
    table = pd.DataFrame({
        "block": np.arange(1, len(blocks) + 1),
        "keys": [f"{a + 1}–{b}" for a, b in blocks],
        "m (running max)": [number_text(x, 4) for x in m_row],
        "e^(m_old − m)": ["—" if not np.isfinite(x) else number_text(x, 4) for x in rescale],
        "ℓ (denominator)": [number_text(x, 4) for x in l_row],
        "o/ℓ, first number": [number_text(x, 4) for x in tiled.partial_output[:, i, 0]]})
    st.markdown(f"Row {row} (“{md_escape(tokens[i])}”), block by block: a block entirely "
                "after the query is masked and changes nothing (−∞ while no key has been "
                "seen).")
    st.table(table.set_index("block"))
    changed = [b for b in range(1, len(blocks)) if np.isfinite(m_row[b - 1])
               and m_row[b] > m_row[b - 1]]
    if changed:
        b = changed[-1]
        st.latex(rf"m' = \max({m_row[b - 1]:.4f},\ \max_j s_j) = {m_row[b]:.4f},\quad "
                 rf"\ell' = e^{{{m_row[b - 1]:.4f} - {m_row[b]:.4f}}}\cdot {l_row[b - 1]:.4f}"
                 rf" + \sum_j e^{{s_j - m'}} = {l_row[b]:.4f}")
        st.caption(f"Block {b + 1} raised the maximum, so the sum so far, taken against the "
                   "old maximum, is rescaled by e^(m_old − m) before the new terms are added; "
                   "the output is rescaled the same way.")
    st.latex(r"o' = e^{m - m'}\, o + \sum_j e^{s_j - m'}\, v_j,\qquad "
             r"\text{output} = o / \ell")
    st.markdown(
        f"The tiled result against plain attention, both in float64: largest difference "
        f"{difference_text(gap)} over all {T} × {d_k} outputs (the "
        f"same sums in another order). Against the model's own float32 weights times v: "
        f"{difference_text(float(np.max(np.abs(tiled.output - model_out))))}.")

    st.subheader("Memory: tiled, the n × n matrix never exists")
    sram_kb = st.slider("On-chip memory M (KB) for the paper's count", 16, 256, 100, 4,
                        key="inf_sram", **URL)
    ns = np.array([256, 1024, 4096, 16384, 65536])
    sram = sram_kb * 1024 // 2  # numbers of 2 bytes (fp16), as on a GPU
    counts = {"standard: 4nd + 4n²": [cost.hbm_accesses_standard(int(n), d_k) for n in ns],
              "FlashAttention (Algorithm 1)": [cost.hbm_accesses_flash(int(n), d_k, sram)
                                               for n in ns]}
    show_figure(line_chart(ns, counts, title=f"Slow-memory reads and writes, one head, "
                           f"d = {d_k}, M = {sram_kb} KB", x_title="sequence length n",
                           y_title="numbers moved", log_x=True, log_y=True, font_size=font),
                key="inf_fig_hbm", alt=describe_lines(ns, counts, x_title="n",
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
        show_figure(line_chart(memory.ns, peaks, title="Peak memory allocated, one head",
                               x_title="n", y_title="MiB", log_x=True, log_y=True,
                               font_size=font), key="inf_fig_memory",
                    alt=describe_lines(memory.ns, peaks, x_title="n", y_title="MiB"))
        ratio = memory.tiled_seconds / memory.plain_seconds
        st.markdown(
            f"At n = {memory.ns[-1]:,}: plain {memory.plain_peak[-1] / MIB:.1f} MiB, tiled "
            f"{memory.tiled_peak[-1] / MIB:.2f} MiB; largest difference of the outputs "
            f"{difference_text(memory.max_difference)}. Time, tiled / plain, this run: "
            + ", ".join(f"n = {n}: {r:.2f}" for n, r in zip(memory.ns, ratio, strict=True))
            + ".")
    st.markdown(
        "**Where tiling pays off.** On a CPU the caches are managed by the "
        "hardware and BLAS already works in blocks, so the n × n matrix costs memory but "
        "little time; and NumPy runs each tile as a separate call from Python. FlashAttention "
        "pays off on a GPU, where one fused kernel keeps each tile in the fast on-chip "
        "memory and the slow memory's bandwidth is the limit: it moves far fewer numbers "
        "(the chart above), and it lets n grow where the n × n matrix would not fit.")


online_softmax(presenter, font)

bullet_list("What to notice", [
    "The KV cache changes the work, not the arithmetic: on the same tokens it gives the "
    "same logits up to rounding, but each step runs one new token through the model instead "
    "of the whole text (its attention still reads every earlier key and value), and memory "
    "grows by the same number of bytes a token.",
    (f"This model stores {KV} key/value head{'s' if KV > 1 else ''} for {H} query heads: "
     f"{Fraction(KV, H)} of the cache multi-head attention would need." if KV < H else
     f"This model stores a key and a value head for each of its {H} heads (multi-head "
     "attention): grouped-query models keep a fraction of that.")
    + (" Averaging heads after training is not the same thing: section 2 measures what it "
       "costs." if KV > 1 else " It was trained that way: sharing has to be learnt."),
    window_notice(shown_window),
    "FlashAttention's online softmax computes the same numbers as plain attention in exact "
    "arithmetic; in floating point they agree up to rounding (section 4 measures the "
    "difference), as it only changes the order of the sums, rescaling as a larger maximum "
    "arrives.",
])
st.subheader("The formula")
st.latex(r"\text{KV cache} = 2 \cdot L \cdot n_{KV} \cdot d_k \cdot T \cdot B \cdot b,\qquad "
         r"\ell' = e^{m - m'}\ell + \textstyle\sum_j e^{s_j - m'}")
if not presenter:
    bullet_list("Try this", [
        "Set the context to 131,072 tokens and the batch to 64: which published models' "
        "caches fit in 80 GB, and which of them were trained on that length?",
        "Set S to 0, then 1: how much does one sink token give back?",
        "Make the window as large as the text: the window is the causal mask again.",
        "Set the keys per block to 1: the online softmax becomes a running sum, one key at "
        "a time.",
    ], expanded=False)
    practice_questions("inf", [
        {"q": f"How many bytes does this model's KV cache hold per token, in float32 ({L} "
              f"layers, {KV} KV heads of {d_k})?", "value": float(2 * L * KV * d_k * 4),
         "tol": 0.5, "a": f"2 · {L} · {KV} · {d_k} · 4 = {2 * L * KV * d_k * 4:,} bytes."},
        {"q": f"With {H} KV heads instead of {KV}, how many times larger would the cache be?",
         "value": float(H // KV), "tol": 0.01,
         "a": f"{H} / {KV} = {H // KV}: the cache holds one key and one value vector per KV "
              "head, layer and token."} if KV < H else
        {"q": f"With 1 KV head shared by all {H} heads (multi-query) instead of {KV}, how many "
              "times smaller would the cache be?", "value": float(H), "tol": 0.01,
         "a": f"{H} / 1 = {H}: the cache holds one key and one value vector per KV head, layer "
              "and token."},
        {"q": "Why does the online softmax multiply its running sum by e^(m − m′)?",
         "a": "The terms so far were computed as e^(s − m) with the old maximum m; a new "
              "maximum m′ needs them as e^(s − m′) = e^(s − m) · e^(m − m′). The factor "
              "rescales them without going back to the old keys."},
    ])
if not presenter:
    st.subheader("Download")
    st.markdown("**CSV**: the online softmax's running maximum m of every query row (a row "
                "per token) after each key block (a column per block), for the head and "
                "blocks of section 4. **Whole trace**: every measurement the page shows "
                "(the cache comparison, the merged heads, the window, the online softmax's "
                "states and output), as JSON.")

    def running_max_csv() -> str:
        fa = results["online_softmax"]
        blocks = [f"keys {a + 1}-{b}" for a, b in fa["key_blocks"]]
        return to_csv(fa["running_max"], fa["tokens"], blocks)

    c1, c2 = st.columns(2)
    c1.download_button("CSV", running_max_csv, file_name="inf_online_softmax_max.csv",
                       mime="text/csv", key="inf_dl_csv", on_click="ignore")
    c2.download_button("Whole trace (JSON)", lambda: to_json(results),
                       file_name="inf_trace.json", mime="application/json",
                       key="inf_dl_json", on_click="ignore")
model_caption(m, "the same as lesson 10's, run here in NumPy (float32; the online softmax in "
                 "float64)")
finish_page()
