"""Lesson 10: a real language model writes (SmolLM2-135M-Instruct by default, or a model the
server's operator lists; run by our own NumPy code)."""

import io
from fractions import Fraction

import numpy as np
import pandas as pd
import streamlit as st

from attncore import lm
from attncore.analysis import SINK_FACTOR
from attncore.lm import heads as lm_heads
from attncore.lm.tokens import byte_level_pieces
from attncore.pretrained_files import EXPECTED_CONFIG as MINILM
from pages.ui.arithmetic import num
from pages.ui.controls import URL, bounded_slider, seed_input
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
from pages.ui.labels import md_escape, plotly_safe
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
    choose_model,
    load_language_model,
    model_caption,
    model_name,
    model_note,
    token_strip,
)
from pages.ui.numbers import difference_text, number_text, percent_text, significant_text
from pages.ui.shared import measured
from pages.ui.tables import scrolled_table, to_csv

MAX_PROMPT_TOKENS = 96  # prompt tokens read here (chat template included); the core allows 256
MAX_CHARS = 600
MAX_NEW_TOKENS = 32  # one generation: 32 passes, about 1.5 s here
TOP_SHOWN = 10
DEFAULT_PROMPT = "The capital of France is"
# SmolLM2's strongest induction heads sit in layers 18 and 19 of 30: sections 2, 5 and the
# download open at layer 19, and another model's at the same depth.
DEFAULT_DEPTH = 19 / 30
DEFAULT_HEAD = 7  # the head worked by hand, when the model has that many
DEFAULT_CHANGE = " dog"
DEFAULT_SEGMENT = 25  # tokens in each random segment of the induction test
IND_SEQUENCES, IND_TOP, IND_DRAWS = 3, 5, 4  # its sequences, heads switched off, random draws

presenter = setup_page("A real language model", "✍️")
font = figure_font(presenter)
header = st.container()  # the title first, then the model picker (when there is a choice)
choice = choose_model()
with header:
    lesson_header(
        "10 · A real language model writes",
        f"run {md_escape(choice)}, a real decoder, on your own prompt: the next token and how "
        "it is chosen, where the newest token looks, the causal mask checked, the "
        f"{term_link('induction-head', 'induction heads')} that copy, and one head computed "
        "by hand.",
    )
m = load_language_model(choice)
if m is None:
    st.stop()
cfg = m.config
L, H, KV, d_k = cfg.n_layers, cfg.n_heads, cfg.n_kv_heads, cfg.d_head
name = md_escape(model_name(m))
# Learned positions stop at the model's context; nothing here reads past it.
PAGE_MAX_TOKENS = min(MAX_PROMPT_TOKENS, cfg.context_length)
DEFAULT_LAYER = max(1, round(DEFAULT_DEPTH * L))
model_note(m, presenter)

st.header("1 · Predict the next token")
# On a projector the prompt and the chat switch share a row, and the token strip follows the
# first figure (below), so that the whole figure reaches the first screen at 1280 × 720.
prompt_box, chat_box = st.columns([3, 1], vertical_alignment="bottom") if presenter else (
    st.container(), st.container())
prompt = prompt_box.text_area("Your prompt (any language, symbols, HTML: all shown as text)",
                              DEFAULT_PROMPT, key="lm_prompt", max_chars=MAX_CHARS,
                              height=68 if presenter else 80,
                              label_visibility="collapsed" if presenter else "visible", **URL)
CHAT = "Chat: wrap the prompt in the model's own chat template"
has_template = bool(m.chat_template)
NO_TEMPLATE = (f"{name} has no chat template: it was not trained on conversations (a base "
               "model, as GPT-2 is), so there is nothing to wrap the prompt in, and the "
               "switch stays off. It continues your text.")
# A kept "on" from another model is not used: a model without a template is never wrapped.
chat = chat_box.toggle("Chat template" if presenter else CHAT, value=False, key="lm_chat",
                       **URL, disabled=not has_template,
                       help=(f"{CHAT}. " if presenter else "") + (
                           "The template comes from the model's own files (the GGUF's "
                           "metadata or the folder's tokenizer_config.json); its special "
                           "tokens (such as <|im_start|>) are shown as they are."
                           if has_template else NO_TEMPLATE)) and has_template
if not has_template and not presenter:
    st.caption(NO_TEMPLATE)
if not prompt.strip():
    st.info("Type a prompt to run the model on it.")
    finish_page()
    st.stop()
text = lm.chat_prompt(m, prompt) if chat else prompt
with bad_input_stops_page():
    # run() caches its traces per text, so moving any other control reuses this one.
    trace = lm.run(text, max_tokens=PAGE_MAX_TOKENS, m=m)
tokens = list(trace.tokens)
T = len(tokens)
if trace.truncated:
    st.warning(f"The prompt has {trace.n_tokens} tokens; this page reads its first "
               f"{PAGE_MAX_TOKENS} and predicts what follows them.")


def prompt_tokens() -> None:
    """The prompt's tokens, and what the forward pass over them cost here."""
    token_strip(tokens, trace.ids)
    st.caption(f"One forward pass of {name} over these {T} token{'s' if T > 1 else ''} took "
               f"**{trace.seconds * 1000:,.0f} ms** on this machine (the pass that computed "
               "everything this page shows, every intermediate recorded; wall time, on a "
               "machine others may share).")


if not presenter:
    prompt_tokens()
probs = trace.next_token_probs()  # temperature 1: the model's own distribution
top = np.argsort(-probs, kind="stable")[:TOP_SHOWN]
top_tokens = lm.pieces(m, top)


@st.fragment
def sampling_section(probs: np.ndarray, top: np.ndarray, top_tokens: list[str],
                     text: str, presenter: bool, font: int) -> None:
    """The top 10, the sampling controls and generation: the controls rerun this section
    only."""
    left, right = st.columns([3, 2])
    with right:
        temperature = st.slider("Temperature τ (0 = always the most likely)", 0.0, 2.0, 0.8,
                                0.05, key="lm_temp", **URL)
        top_k = st.slider("Top-k (0 = off)", 0, 100, 0, key="lm_topk", **URL)
        top_p = st.slider("Top-p (1 = off)", 0.05, 1.0, 0.95, 0.05, key="lm_topp", **URL)
        seed = seed_input(st, "lm_seed")
    sampling = lm.Sampling(temperature=float(temperature), top_k=int(top_k),
                           top_p=float(top_p), seed=seed)
    drawn = lm.sampling_distribution(np.log(np.maximum(probs, 1e-300)), sampling)
    kept = int(np.count_nonzero(drawn))
    with left:
        show_figure(bar_chart(top_tokens, probs[top],
                              title=f"The {TOP_SHOWN} most likely next tokens",
                              x_title="next token", y_title="probability",
                              y_range=(0, 1.05), decimals=2, font_size=font),
                    key="lm_fig_top",
                    alt=describe_bars(top_tokens, probs[top], what=f"The model's probability "
                                      f"of each of the {TOP_SHOWN} most likely next tokens"))
    best = int(top[0])
    if not presenter:
        st.markdown(
            f"The model gives one {term_link('logit', 'logit')} per token of its vocabulary; "
            "their softmax is the next-token distribution. To draw a token: divide the "
            f"logits by the temperature τ (τ = 0 is {term_link('greedy', 'greedy')}: always "
            f"the most likely token); {term_link('top-k', 'top-k')} keeps the k most likely "
            "tokens; top-p keeps the smallest set of tokens whose probabilities (at this τ) "
            "add up to at "
            "least p, taken most likely first (after top-k, among the tokens it kept, their "
            "probabilities renormalised); what is kept is renormalised to sum to 1.")
    st.markdown(f"Most likely next token: **{md_escape(top_tokens[0])}** (id {best}) with "
                f"probability {number_text(probs[best], 3)}. With τ = {temperature:g}, top-k "
                f"{top_k or 'off'} and top-p {top_p:g}, {kept:,} of the "
                f"{probs.size:,} tokens can be drawn; the most likely now has probability "
                f"{number_text(drawn[best], 3)}.")
    if not presenter:
        st.table(pd.DataFrame({
            "rank": np.arange(1, TOP_SHOWN + 1), "token": top_tokens,
            "id": top, "model (τ = 1)": [number_text(p, 4) for p in probs[top]],
            "drawn from (after τ, top-k, top-p)": [number_text(p, 4) if p else "cut"
                                                   for p in drawn[top]]}
        ).set_index("rank"))
    n_new = st.slider("New tokens to write", 1, MAX_NEW_TOKENS, 12, key="lm_new", **URL)
    settings = (text, n_new, sampling)
    if st.button(f"Write {n_new} tokens", key="lm_generate", type="primary"):
        bar = st.progress(0.0, text="Writing…")
        steps = []
        with bad_input_stops_page():  # past a learned-positions model's context
            for n, step in enumerate(lm.generate_steps(text, n_new, sampling, m=m), start=1):
                steps.append(step)
                bar.progress(n / n_new, text=f"Token {n} of {n_new}: "
                                             f"{plotly_safe(step.token)}")
        bar.empty()
        st.session_state["_lm_generated"] = (settings, steps)
    done = st.session_state.get("_lm_generated")
    if done and done[0] == settings:
        show_generation(done[1], presenter)
    elif done:
        st.caption("The settings changed since the last text was written: press the button "
                   "to write again.")


def show_generation(steps: list, presenter: bool) -> None:
    """The written tokens, each with its probability and the model's runner-ups."""
    written = lm.decode(m, [s.id for s in steps]).replace("\n", " ↵ ")
    st.markdown("**Written:** " + md_escape(written))
    if steps and steps[-1].id in lm.generation.stop_ids(m):
        st.caption(f"Stopped at {steps[-1].token}, the model's end-of-text token.")
    rows = {"step": np.arange(1, len(steps) + 1), "token": [s.token for s in steps],
            "drawn with probability": [number_text(s.probability, 3) for s in steps],
            "model's probability": [number_text(s.model_probability, 3) for s in steps]}
    if not presenter:
        rows["runner-ups (model's probability)"] = [
            " · ".join(f"{t} {number_text(p, 2)}" for t, p in zip(
                s.runner_up_tokens[:4], s.runner_up_probs[:4], strict=True)) for s in steps]
    st.table(pd.DataFrame(rows).set_index("step"))
    seconds = np.array([s.seconds for s in steps])
    st.caption(f"Each token is one pass through the model with the "
               f"{term_link('kv-cache', 'KV cache')} (lesson 11): "
               f"median {np.median(seconds) * 1000:.0f} ms a token here, the first (the "
               f"whole prompt) {seconds[0] * 1000:.0f} ms (this run, on a machine others "
               "may share).")


sampling_section(probs, top, top_tokens, text, presenter, font)
if presenter:
    prompt_tokens()

st.header("2 · Where the newest token looks")


@st.cache_data(max_entries=16, show_spinner=False)
def statistics(_m: lm.SmolLM, sha256: str, text: str) -> dict[str, np.ndarray]:
    """Per-head statistics of the prompt's trace on the model of that sha256, averaged over
    its query rows after the first (cached: about 0.1 s for 96 tokens of SmolLM2)."""
    return lm.head_statistics(lm.run(text, max_tokens=PAGE_MAX_TOKENS, m=_m).attentions)


def kv_label(h: int) -> str:
    """A head's row label: the KV head it reads, when heads share them."""
    return f"H{h + 1} · KV{trace.kv_head[h] + 1}" if cfg.group > 1 else f"H{h + 1}"


@st.fragment
def newest_token(trace: lm.LMTrace, presenter: bool, font: int) -> None:
    """The last row of every head of one layer, grouped by the KV head they share."""
    tokens = list(trace.tokens)
    layer = bounded_slider(st, "Layer", 1, L, DEFAULT_LAYER, key="lm_layer")
    rows = trace.attentions[layer - 1, :, -1, :]  # (H, T): the newest token's row
    show_figure(matrix_heatmap(rows, [kv_label(h) for h in range(H)], tokens,
                               title=f"Layer {layer}: where “{plotly_safe(tokens[-1])}” "
                                     "looks, head by head",
                               x_title="key (earlier token)",
                               y_title="query head · the KV head it reads"
                               if cfg.group > 1 else "head",
                               decimals=1 if presenter else 2, font_size=font,
                               height=170 + 2 * font * H),
                key="lm_fig_newest",
                alt=f"Layer {layer}, the newest token's row in each of the {H} heads. "
                    + describe_matrix(rows, [kv_label(h) for h in range(H)], tokens,
                                      rows="head", cols="key"))
    strongest = np.argmax(rows, axis=1)
    st.markdown(sharing_text() + " Where each head of this layer looks most: " + ", ".join(
                    f"H{h + 1} → “{md_escape(tokens[j])}” ({rows[h, j]:.2f})"
                    for h, j in enumerate(strongest)) + ".")


def sharing_text() -> str:
    """How this model's query heads share keys and values."""
    if KV == H:
        return (f"Each of the {H} heads has its own keys and values (multi-head attention, "
                "as in lessons 4 and 9): no head shares them; lesson 11 shows what sharing "
                "saves in models that do.")
    if KV == 1:
        return (f"All {H} query heads share one key/value head (multi-query attention): "
                "each compares its own query with the *same* keys and averages the *same* "
                "values.")
    groups = "; ".join(f"KV head {g + 1} serves H{g * cfg.group + 1}–H{(g + 1) * cfg.group}"
                       for g in range(KV))
    return (f"{H} query heads share {KV} key/value heads ({groups}: "
            f"{term_link('gqa', 'grouped-query attention')}): heads of one group "
            "compare their own queries with the *same* keys and average the *same* values.")


newest_token(trace, presenter, font)
stats = statistics(m, m.sha256, text)


def even_share(T: int) -> float:
    """The mean weight on the first token if each query row 2 .. T spread its weight evenly
    over the tokens it sees (row i sees i tokens): the share no sink is needed for."""
    return float(np.mean(1 / np.arange(2, T + 1))) if T > 1 else 1.0


ONE_TOKEN = ("With a one-token prompt every head's only row attends to that token, its "
             "own, with weight 1: there is no earlier token to prefer and no sink to see. "
             "Type a longer prompt.")


def sink_text(first: np.ndarray, prev: np.ndarray, tokens: list[str]) -> str:
    """Whether the first token takes more than an even spread would give it."""
    if len(tokens) == 1:
        return ONE_TOKEN
    layer, even = int(np.argmax(first)), even_share(len(tokens))
    said = (f"The first token “{md_escape(tokens[0])}” takes up to {percent_text(first.max())} of "
            f"a layer's attention (layer {layer + 1}), against {percent_text(even)} if every query "
            "spread its weight evenly over the tokens it sees")
    times = "twice" if SINK_FACTOR == 2 else f"{SINK_FACTOR} times"
    if first.max() >= SINK_FACTOR * even:
        said += (f": at least {times} that, an {term_link('attention-sink', 'attention sink')}"
                 ", often read as a place where heads park weight they have no use for.")
    else:
        said += f": less than {times} that, too little to call it a sink here."
    return said + (f" Layer 1's heads put {percent_text(prev[0])} of theirs on the previous token "
                   f"(an even spread would give it {percent_text(even)} too).")


def sinks_notice(stats: dict[str, np.ndarray], tokens: list[str]) -> str:
    """How many heads give the first token more than half their weight, on this prompt."""
    if len(tokens) == 1:
        return ONE_TOKEN
    first = stats["mass on the first token"]
    n = int(np.count_nonzero(first > 0.5))
    return (f"On this prompt {n} of the {first.size} heads put more than half of their "
            f"weight on the first token “{md_escape(tokens[0])}” (an even spread would give "
            f"it {percent_text(even_share(len(tokens)))} on average). Lesson 9 measures the "
            "same for [CLS] and [SEP] in an encoder.")


def induction_notice(shown) -> str:
    """What section 4's test found, at the settings it ran with."""
    if shown is None:
        return ("Section 4's test finds the heads that copy a repeated sequence: press its "
                "button to run it at the settings chosen there.")
    test, seed, segment = shown
    layers = sorted({int(layer) + 1 for layer, _ in test.top_heads})
    saved = test.loss_first - test.loss_repeat  # what copying saves, nats a token
    if saved <= 0:
        return (f"In section 4's test (seed {seed}, {segment} random tokens written twice) "
                "the second copy costs no less than the first: the model did not copy.")
    lost = (test.loss_top_off - test.loss_repeat) / saved
    lost_random = (test.loss_random_off.max() - test.loss_repeat) / saved
    random_said = (f"take back at most {percent_text(lost_random)}" if lost_random > 0 else
                   "take back nothing (the second copy costs no more with them off)")
    where = ", ".join(map(str, layers[:-1])) + (" and " if len(layers) > 1 else "") + str(
        layers[-1])
    return (f"In section 4's test (seed {seed}, {segment} random tokens written twice) the "
            f"{len(test.top_heads)} strongest induction heads sit in layer"
            f"{'s' if len(layers) > 1 else ''} {where} of {L}. Switching them off takes back "
            f"{percent_text(lost)} of what copying saved on the second copy "
            f"({test.loss_top_off:.1f} nats a token instead of {test.loss_repeat:.1f}); as "
            f"many random heads of those layers {random_said}.")


def head_map_text(values: np.ndarray, stat: str) -> str:
    """The text alternative of an (L, H) map of one statistic per head."""
    (hl, hh), (ll, lh) = (np.unravel_index(f(values), values.shape)
                          for f in (np.argmax, np.argmin))
    return (f"{stat} of all {L * H} heads (rows: head, columns: layer): highest "
            f"{said_number(values[hl, hh])} at layer {hl + 1}, head {hh + 1}; lowest "
            f"{said_number(values[ll, lh])} at layer {ll + 1}, head {lh + 1}; mean "
            f"{said_number(values.mean())}.")


@st.fragment
def model_view(stats: dict[str, np.ndarray], presenter: bool, font: int) -> None:
    """One statistic of all L × H heads, heads down and layers across."""
    stat = st.selectbox("Statistic per head", list(stats), key="lm_stat", **URL)
    show_figure(matrix_heatmap(stats[stat].T, [f"H{c + 1}" for c in range(H)],
                               [str(r + 1) for r in range(L)],
                               title=f"All {L * H} heads: {stat}",
                               kind="weights" if "mass" in stat else "values",
                               decimals=1, x_title="layer", y_title="head",
                               font_size=font, height=200 + 2 * font * H),
                key="lm_fig_stats", alt=head_map_text(stats[stat], stat))
    st.caption(("Each head's statistic is averaged over the query rows 2 to T: row 1 can only "
                "attend to itself." if T > 1 else "One token: each head's only row, which can "
                "only attend to itself.") + " Hover for the numbers"
               + ("." if presenter else "; the CSV below has them all."))


model_view(stats, presenter, font)
left, right = st.columns([3, 2])
with left:
    first = stats["mass on the first token"].mean(axis=1)  # (L,)
    prev = stats["previous-token mass"].mean(axis=1)
    show_figure(line_chart(np.arange(1, L + 1), {
        "on the first token": first, "on the previous token": prev},
        title="Share of attention, averaged over heads", x_title="layer",
        y_title="mean weight", font_size=font), key="lm_fig_sink",
        alt=describe_lines(np.arange(1, L + 1), {"on the first token": first,
                                                 "on the previous token": prev},
                           x_title="layer", y_title="mean weight"))
with right:
    st.markdown(sink_text(first, prev, tokens))
if not presenter:
    # A file rather than a grid on the page: L × H rows (270) drawn again on every new prompt cost
    # the redraw more than the figures above it.
    st.download_button(
        f"Every head's statistics, {L * H} rows (CSV)",
        lambda: pd.DataFrame({
            "layer": np.repeat(np.arange(1, L + 1), H), "head": np.tile(np.arange(1, H + 1), L),
            "KV head": np.tile(trace.kv_head + 1, L),
            **{k: v.ravel() for k, v in stats.items()}}).to_csv(index=False,
                                                                float_format="%.17g"),
        file_name="lm_head_statistics.csv", mime="text/csv", key="lm_dl_stats",
        on_click="ignore")

st.header("3 · Causal, checked on the real model")
above = np.triu(np.ones((T, T), dtype=bool), k=1)
upper = trace.attentions[..., above]  # every weight above the diagonal, all L × H heads
nonzero = np.count_nonzero(upper)
st.markdown(f"**Above the diagonal.** The {L * H} maps hold {upper.size:,} weights above the "
            f"diagonal (a query looking at a later token, which the "
            f"{term_link('causal-mask', 'causal mask')} forbids): "
            + ("every one is exactly 0, as the mask sets their scores to −∞ and e^−∞ = 0."
               if nonzero == 0 else f"{nonzero:,} of them are not 0: the mask leaks."))


@st.fragment
def leakage(trace: lm.LMTrace, m: lm.SmolLM) -> None:
    """Change one later token and compare every earlier position's logits, bit for bit."""
    tokens, T = list(trace.tokens), len(trace.tokens)
    if T < 2:
        st.info("The prompt has one token: type a longer one to change a later token.")
        return
    c1, c2 = st.columns(2)
    with c1:
        position = bounded_slider(st, "Token to change (position)", 2, T, T, key="lm_change_pos")
    replacement = c2.text_input("Replace it with (its first token is used)", DEFAULT_CHANGE,
                                key="lm_change_to", max_chars=40, **URL)
    new_ids = lm.encode(m, replacement)
    if new_ids.size == 0:
        st.info("Type a word to put in its place.")
        return
    changed = np.array(trace.ids)
    changed[position - 1] = new_ids[0]
    if changed[position - 1] == trace.ids[position - 1]:
        st.info("That is the token already there: choose another word.")
        return
    other = lm.run(changed.tolist(), max_tokens=PAGE_MAX_TOKENS, m=m)
    p = position - 1
    before = np.array_equal(other.logits[:p], trace.logits[:p])
    gap_before = float(np.max(np.abs(other.logits[:p] - trace.logits[:p])))
    gap_after = float(np.max(np.abs(other.logits[p:] - trace.logits[p:])))
    st.markdown(
        f"Token {position} “{md_escape(tokens[p])}” becomes “{md_escape(other.tokens[p])}”. "
        f"The logits of positions 1 to {p} (all {p} × {cfg.vocab_size:,} of them) are "
        f"{'**identical, bit for bit**' if before else '**not identical**'} (largest "
        f"difference {difference_text(gap_before)}); from "
        f"position {position} on they change by up to {gap_after:.3g}.")
    if not before:
        st.error("An earlier position changed: the mask leaks. This is a bug; please "
                 "report it.")


leakage(trace, m)

st.header("4 · Induction heads in a real model")
st.markdown("Lesson 8 grew an induction head in a 2-layer toy: to continue a pattern "
            "seen before, it looks at the token *after* the earlier occurrence of the "
            f"current token. The same test on {name}: random tokens, written twice.")


# Heads switched off: 5, or fewer in a model so small that a layer would have no head left
# to draw at random beside them (at most a quarter of all heads).
N_TOP = min(IND_TOP, max(1, L * H // 4))


def induction(seed: int, segment: int) -> lm.InductionTest:
    """The repeated-tokens test (six passes through the model; attncore.lm keeps the last
    results)."""
    return lm.induction_test(seed=seed, segment=segment, sequences=IND_SEQUENCES,
                             n_top=N_TOP, draws=IND_DRAWS, m=m)


@st.fragment
def induction_section(presenter: bool, font: int) -> None:
    c1, c2 = st.columns(2)
    seed = seed_input(c1, "lm_ind_seed", label="Seed of the random tokens")
    with c2:  # both copies within the model's context
        segment = bounded_slider(st, "Tokens in each random segment", 5,
                                 min(lm_heads.MAX_SEGMENT, cfg.context_length // 2),
                                 DEFAULT_SEGMENT, key="lm_ind_len")
    # The test is six passes through the model (2 to 4 s here): it runs by itself at the
    # defaults, and on request at other settings, as no control may start seconds of work.
    with bad_input_stops_page():
        test = measured("induction", (m.sha256, seed, segment),
                        lambda: induction(seed, segment),
                        automatic=(seed, segment) == (0, DEFAULT_SEGMENT),
                        label="Run the test", key="lm_ind_run",
                        note="Six passes through the model over the repeated tokens (2 to "
                             "4 s for SmolLM2 here): press to run the test with this seed "
                             "and length.",
                        spinner="Running the model on the repeated tokens, then with heads "
                                "switched off…")
    if test is None:
        return None
    P = segment
    shown = lm.pieces(m, test.ids[0])
    st.markdown(f"{IND_SEQUENCES} sequences of {P} random tokens, each written twice "
                f"({2 * P} tokens). "
                "The first begins: " + " · ".join(md_escape(t) for t in shown[:8]) + " …")
    (bl, bh), best = test.top_heads[0], test.scores[test.top_heads[0]]
    show_figure(matrix_heatmap(test.scores.T, [f"H{c + 1}" for c in range(H)],
                               [str(r + 1) for r in range(L)],
                               title="Induction score of every head", decimals=1,
                               x_title="layer", y_title="head", font_size=font,
                               height=200 + 2 * font * H), key="lm_fig_ind_scores",
                alt=head_map_text(test.scores, "Induction score"))
    left, right = st.columns(2)
    with right:
        labels = [f"t{n + 1}" if n < P else f"t{n - P + 1}′" for n in range(2 * P)]
        show_figure(matrix_heatmap(test.best_attention, labels, labels,
                                   title=f"Layer {bl + 1}, head {bh + 1} on the first sequence",
                                   font_size=font, height=620), key="lm_fig_ind_map",
                    alt=f"Layer {bl + 1}, head {bh + 1} on the first sequence: on average "
                        f"{percent_text(best)} of a second-copy token's weight goes to the "
                        "token that followed its first occurrence. "
                        + describe_matrix(test.best_attention, labels, labels))
    with left:
        st.markdown(f"tₙ′ is the second copy of tₙ. An induction head's stripe runs {P - 1} "
                    "cells left of the diagonal, in the lower half: from each token of the "
                    "second copy to the token that followed it the first time (from t2′ to "
                    "t3).")
        st.markdown("The strongest: " + ", ".join(
        f"layer {l + 1} head {h + 1} ({test.scores[l, h]:.2f})" for l, h in test.top_heads)
        + f". The best puts {percent_text(best)} of its attention where an induction head should, "
        "on average over the second copies.")
    losses = {"copy 1": test.loss_first, "copy 2": test.loss_repeat,
              f"top {N_TOP} off": test.loss_top_off,
              "random off": float(test.loss_random_off.max())}
    left, right = st.columns(2)
    with left:
        show_figure(bar_chart(list(losses), list(losses.values()),
                              title="Loss on the random tokens (nats a token)",
                              x_title="tokens predicted", y_title="cross-entropy (nats)",
                              decimals=2, font_size=font), key="lm_fig_ind_loss",
                    alt=describe_bars(list(losses), list(losses.values()),
                                      what="Loss on the random tokens, nats a token"))
        st.caption(f"Copy 2 with the {N_TOP} best induction heads switched off, and with "
                   f"{N_TOP} random heads of the same layers off (the worst of {IND_DRAWS} "
                   "draws).")
    with right:
        positions = np.arange(2, 2 * P + 1)
        curves = {"all heads on": test.losses.mean(axis=0),
                  f"top {N_TOP} induction heads off": test.losses_top_off.mean(axis=0)}
        show_figure(line_chart(positions, curves,
                               title=f"Loss of each token, mean of the {IND_SEQUENCES} "
                                     "sequences",
                               x_title="position", y_title="nats", font_size=font),
                    key="lm_fig_ind_curve",
                    alt=describe_lines(positions, curves, x_title="position", y_title="nats"))
    guess = np.log(cfg.vocab_size)
    st.markdown(
        f"Random tokens cost {test.loss_first:.1f} nats each the first time (the "
        f"{term_link('cross-entropy', 'cross-entropy')}; an even guess among "
        f"{cfg.vocab_size:,} tokens would cost ln {cfg.vocab_size:,} = {guess:.1f}"
        + (": the model gives random tokens less probability than an even guess would, as "
           "it expects text, not noise" if test.loss_first > guess else "")
        + f"), {test.loss_repeat:.1f} the second time"
        + (", less than half: the model copies. " if test.loss_repeat < test.loss_first / 2
           else ", not less than half. ")
        + f"With the {N_TOP} best induction heads off the second copy costs "
        f"{test.loss_top_off:.1f}; with {N_TOP} random heads of the same layers off, "
        f"{test.loss_random_off.min():.1f} to {test.loss_random_off.max():.1f}.")
    return test, seed, segment


shown_test = induction_section(presenter, font)  # None until a test has run

st.header("5 · One decoder head by hand")


@st.fragment
def head_by_hand(trace: lm.LMTrace, m: lm.SmolLM, presenter: bool) -> None:
    """Query i's score and weight for key j, from the residual stream, with real numbers:
    the model's own norm, biases and positions (RoPE on pairs or halves, or learned)."""
    tokens, T = list(trace.tokens), len(trace.tokens)
    w = m.weights
    c1, c2, c3 = st.columns(3)
    with c1:
        layer = bounded_slider(st, "Layer of the head worked by hand", 1, L, DEFAULT_LAYER,
                               key="lm_hand_layer")
    head = c2.selectbox("Query head worked by hand", list(range(1, H + 1)),
                        index=min(DEFAULT_HEAD, H) - 1, key="lm_hand_head", **URL)
    pair = 0
    if cfg.uses_rope:
        with c3:
            pair = bounded_slider(st, "RoPE pair shown (i)", 0, d_k // 2 - 1, 0,
                                  key="lm_hand_pair")
    c1, c2 = st.columns(2)
    with c1:
        query = bounded_slider(st, "Query token (row)", 1, T, T, key="lm_hand_query")
    with c2:
        key = bounded_slider(st, "Key token (column)", 1, query, 1, key="lm_hand_key")
    l, h, i, j = layer - 1, head - 1, query - 1, key - 1
    g = int(trace.kv_head[h])
    gain = w.attn_norm[l].astype(np.float64)
    shift = None if w.attn_norm_bias is None else w.attn_norm_bias[l].astype(np.float64)

    def normed(x: np.ndarray) -> tuple[np.ndarray, float, float]:
        """The norm before attention, as the model computes it: (x̂, mean, root)."""
        mean = float(np.mean(x)) if cfg.norm == "layer" else 0.0
        root = float(np.sqrt(np.mean((x - mean) ** 2) + cfg.norm_eps))
        return (x - mean) / root * gain + (0.0 if shift is None else shift), mean, root

    x = trace.hidden_states[l, i].astype(np.float64)  # (d,) the stream entering layer l
    xn, mean, root = normed(x)
    stream = (f"The {term_link('residual-stream', 'stream')} of “{md_escape(tokens[i])}” "
              f"entering layer {layer} has {cfg.d_model} numbers")
    eps = significant_text(cfg.norm_eps, 3)
    if cfg.norm == "rms":
        st.markdown(f"**{term_link('layer-norm', 'RMSNorm')}.** {stream}; their "
                    f"root-mean-square (with ε = {eps} added under the root) is {root:.4f}. "
                    "Each is divided by it and multiplied by the layer's gain (no mean is "
                    "subtracted, no shift added, unlike LayerNorm).")
        st.latex(rf"\hat x = \frac{{x}}{{\sqrt{{\tfrac{{1}}{{{cfg.d_model}}}\sum_c x_c^2 + "
                 rf"\epsilon}}}} \odot g,\quad \sqrt{{\cdots}} = {root:.4f}")
    else:
        st.markdown(f"**{term_link('layer-norm', 'LayerNorm')}.** {stream}; their mean is "
                    f"μ = {num(mean, 4)} and their standard deviation (with ε = {eps} added "
                    f"to the variance) {root:.4f}. Each has μ subtracted, is divided by that, "
                    "multiplied by the layer's gain g and shifted by its bias b (unlike "
                    "RMSNorm, which only rescales).")
        st.latex(rf"\hat x = \frac{{x - \mu}}{{\sqrt{{\tfrac{{1}}{{{cfg.d_model}}}\sum_c "
                 rf"(x_c - \mu)^2 + \epsilon}}}} \odot g + b,\quad \mu = {num(mean, 4)},\ "
                 rf"\sqrt{{\cdots}} = {root:.4f}")
    cols = slice(h * d_k, (h + 1) * d_k)
    kcols = slice(H * d_k + g * d_k, H * d_k + (g + 1) * d_k)
    bias = w.attn_qkv_bias[l].astype(np.float64) if w.attn_qkv_bias is not None else None
    q_raw = xn @ w.attn_qkv[l][:, cols]  # (d_k,) before RoPE
    k_raw = normed(trace.hidden_states[l, j].astype(np.float64))[0] @ w.attn_qkv[l][:, kcols]
    if bias is not None:  # Qwen2, GPT-2
        q_raw, k_raw = q_raw + bias[cols], k_raw + bias[kcols]
    plus = (" + b_Q", " + b_K") if bias is not None else ("", "")
    whose = (f"KV head {g + 1} (which heads {g * cfg.group + 1}–{(g + 1) * cfg.group} all "
             "read)" if cfg.group > 1 else f"head {head} (every head has its own keys)")
    q = trace.q[l, h, i].astype(np.float64)  # the model's, after RoPE
    k = trace.k[l, g].astype(np.float64)  # (T, d_k) every key of KV head g
    if cfg.uses_rope:
        a_of, b_of = ((2 * pair, 2 * pair + 1) if cfg.positions == "rope_pairs"
                      else (pair, pair + d_k // 2))
        factor = 1.0 if w.rope_factors is None else float(w.rope_factors[pair])
        theta = cfg.rope_base ** (-2 * pair / d_k) / factor
        layout = ("(2i, 2i + 1) of q and of k (adjacent numbers, as the GGUF lays out W_Q "
                  "and W_K)" if cfg.positions == "rope_pairs" else
                  f"(i, i + {d_k // 2}) of q and of k (the two halves, as Hugging Face's "
                  "rotate_half pairs them)")
        scaled = ("" if w.rope_factors is None else
                  f" / fᵢ, fᵢ Llama 3's scaling of long wavelengths (f{pair} = {factor:.4g})")
        st.markdown(f"**q and k, then {term_link('rope', 'RoPE')}.** q = x̂ W_Q{plus[0]} for "
                    f"head {head}, k = x̂ W_K{plus[1]} for {whose}. RoPE turns each pair "
                    f"{layout} by the angle (position) × θᵢ, with θᵢ = "
                    f"{cfg.rope_base:g}^(−2i/{d_k}){scaled}; pair i = {pair}, numbers "
                    f"{a_of} and {b_of}, turns by θ = {theta:.4g} rad per position. "
                    "Positions count from 0.")

        def rotated(v: np.ndarray, position: int) -> tuple[float, float, float]:
            a = position * theta
            x0, x1 = v[a_of], v[b_of]
            return a, x0 * np.cos(a) - x1 * np.sin(a), x0 * np.sin(a) + x1 * np.cos(a)

        turns = []
        for what, v, pos in (("q", q_raw, i), ("k", k_raw, j)):
            a, r0, r1 = rotated(v, pos)
            turns.append(rf"{what}:\ ({num(v[a_of], 4)},\ {num(v[b_of], 4)})"
                         rf"\ \xrightarrow{{\ \phi = {pos} \times {theta:.4g} = {a:.4g}\ }}\ "
                         rf"({num(r0, 4)},\ {num(r1, 4)})")
        st.latex(r"\begin{gathered}" + r" \\ ".join(turns) + r"\end{gathered}")  # one block
        # both numbers of the pair, of q and of k, against the model's own rotated q and k
        check = max(abs(rotated(q_raw, i)[1] - q[a_of]), abs(rotated(q_raw, i)[2] - q[b_of]),
                    abs(rotated(k_raw, j)[1] - k[j, a_of]),
                    abs(rotated(k_raw, j)[2] - k[j, b_of]))
        checked = f"The rotated pair matches the model's q and k to {difference_text(check)}."
    else:
        st.markdown(f"**q and k.** q = x̂ W_Q{plus[0]} for head {head}, k = x̂ W_K{plus[1]} "
                    f"for {whose}. Nothing is turned: {name} learned one vector for each of "
                    f"its {cfg.context_length:,} positions and added it to each token's "
                    "embedding before layer 1 (learned absolute positions, as lesson 9's "
                    "encoder does), so the stream already carries where each token is.")
        check = max(float(np.max(np.abs(q_raw - q))), float(np.max(np.abs(k_raw - k[j]))))
        checked = (f"q and k computed here match the model's, all {d_k} numbers of each, to "
                   f"{difference_text(check)}.")
    scores = k[: i + 1] @ q / np.sqrt(d_k)  # the causal prefix: keys 1 .. query
    exps = np.exp(scores - scores.max())
    weight = exps[j] / exps.sum()
    st.markdown(f"**Score, √{d_k} and the softmax over the prefix.** Query {query} may look at "
                f"keys 1 to {query} only (the causal mask); m = {num(scores.max(), 4)} is the "
                "largest of their scores, subtracted before e^ so that nothing overflows.")
    st.latex(rf"s = \frac{{q \cdot k}}{{\sqrt{{{d_k}}}}} = \frac{{{num(q @ k[j], 4)}}}"
             rf"{{{np.sqrt(d_k):g}}} = {num(scores[j], 4)},\qquad w = "
             rf"\frac{{e^{{s - m}}}}{{\sum_{{j' \le {query}}} e^{{s_{{j'}} - m}}}} = "
             rf"\frac{{{num(exps[j], 4)}}}{{{num(exps.sum(), 4)}}} = {num(weight, 4)}")
    model_w = float(trace.attentions[l, h, i, j])
    st.markdown(
        f"The model's own weight: {number_text(model_w, 6)} (difference "
        f"{difference_text(weight - model_w)}: the model computes in float32, this page in "
        f"float64). {checked}")
    if not presenter:
        st.markdown(f"Every key of row {query}:")
        scrolled_table(pd.DataFrame({"j": np.arange(1, i + 2), "key": tokens[: i + 1],
                                     "s = q·k / √d_k": [number_text(s, 4) for s in scores],
                                     "weight": [number_text(e / exps.sum(), 4) for e in exps]}),
                       height=240)

head_by_hand(trace, m, presenter)

st.header("6 · Encoder against decoder")
# The decoder's column is its config's switches in words (LMConfig.describe): another model
# listed by the server shows its own.
switches = cfg.describe()
minilm_head = MINILM["hidden_size"] // MINILM["num_attention_heads"]
pieces_said = ("byte-level BPE" if byte_level_pieces(m) else "SentencePiece BPE (a byte "
               "as <0xNN> when no piece fits)")
norm_name = "RMS" if cfg.norm == "rms" else "Layer"
output = ("× the token embedding (tied)" if cfg.tied_output else "× its own output matrix")
rows = {
    "job": ("a vector for a whole sentence", "the next token, again and again"),
    "mask": ("none: every token sees every token", "causal: only earlier tokens and itself"),
    "positions": (f"learned absolute table ({MINILM['max_position_embeddings']} positions), "
                  "added to the input", switches["positions"]),
    "norm": ("LayerNorm *after* each residual add (post-LN)", switches["norm"]),
    "feed-forward": (f"GELU, {MINILM['intermediate_size']} hidden units",
                     switches["feed-forward"]),
    "heads": (f"{MINILM['num_attention_heads']} heads of {minilm_head}, each with its own K "
              "and V", switches["attention"]),
    "biases": ("on every linear map and norm", switches["biases"]),
    "layers, d_model": (f"{MINILM['num_hidden_layers']}, {MINILM['hidden_size']}",
                        f"{L}, {cfg.d_model}"),
    "tokenizer": (f"WordPiece, {MINILM['vocab_size']:,} pieces",
                  f"{pieces_said}, {cfg.vocab_size:,} pieces (never unknown); BOS token: "
                  f"{switches['BOS token']}"),
    "output": ("mean of the last layer's vectors over the tokens",
               f"logits = the last token's final state, {norm_name}Norm-normalised, {output}"),
}
st.markdown(f"| | MiniLM (lesson 9): an encoder | {name} (here): a decoder, "
            f"{md_escape(switches['family'])} family |\n|---|---|---|\n"
            + "\n".join(f"| {row} | {enc} | {dec} |" for row, (enc, dec) in rows.items()))

bullet_list("What to notice", [
    f"The model only ever predicts one token: here “{md_escape(top_tokens[0])}” with "
    f"{percent_text(probs[top[0]])}. Writing text is that prediction, repeated, each new token fed "
    "back in.",
    "Temperature reshapes the distribution; top-k and top-p cut its tail. At τ = 0 the "
    "text is always the same.",
    (f"Heads that share a KV head read the same keys and values but ask their own "
     f"questions: {KV} K/V heads take {Fraction(KV, H)} of the cache that {H} would "
     "(lesson 11)." if KV < H else
     f"Each of the {H} heads keeps its own keys and values: the cache holds all {H} of them, "
     "where grouped-query models keep a fraction (lesson 11)."),
    sinks_notice(stats, tokens),
    induction_notice(shown_test),
])
st.subheader("The formula")
NORM = r"\mathrm{RMSNorm}" if cfg.norm == "rms" else r"\mathrm{LayerNorm}"
FFN = (r"W_2\big(\mathrm{SiLU}(W_g \hat x) \odot W_u \hat x\big)" if cfg.mlp == "swiglu" else
       r"W_2\,\mathrm{GELU}(W_1 \hat x + b_1) + b_2")
formula = ([r"x_t = E[\text{token}_t] + P[t]"] if cfg.positions == "learned" else []) + [
    rf"x \leftarrow x + \mathrm{{Attn}}({NORM}(x)),\quad x \leftarrow x + {FFN}",
    rf"p(\text{{next}}) = \mathrm{{softmax}}\big({NORM}(x_T)\, "
    + (r"E^\top" if cfg.tied_output else r"W_U") + r" / \tau\big)"]
# SmolLM2's fits one line; a longer one (GELU's biases, learned positions) takes a line a part
st.latex(r",\quad ".join(formula) if cfg.mlp == "swiglu" and len(formula) == 2 else
         r"\begin{gathered}" + r" \\ ".join(formula) + r"\end{gathered}")
if not presenter:
    bullet_list("Try this", [
        "Set τ to 0 and write 20 tokens twice: the same text. Raise τ to 1.5 and write with "
        "a few seeds: how often does the text stay sensible?",
        "Turn on the chat switch: the prompt becomes the user's turn in a conversation. "
        "Does the model answer it, or continue your sentence?",
        "In section 3, change token 2 of a long prompt: the logits before it stay the same "
        "bit for bit; how far do the later ones move?",
        "Type a prompt that repeats a phrase, set section 2's Layer to the layer of the "
        "strongest induction head (section 4) and see where that head's newest token looks.",
    ], expanded=False)
    practice_questions("lm", [
        {"q": f"This model has {H} query heads and {KV} key/value heads. How many query "
              "heads read each key/value head?", "value": float(cfg.group), "tol": 0.01,
         "a": f"{H} / {KV} = {cfg.group}: "
              + (f"query heads 1–{cfg.group} read key/value head 1, the next {cfg.group} "
                 "head 2, and so on." if 1 < KV < H else
                 f"all {H} query heads read the one key/value head." if KV == 1 else
                 "each query head reads its own key/value head: nothing is shared.")},
        {"q": f"By what number does each head divide its scores (head size {d_k})?",
         "value": float(np.sqrt(d_k)), "tol": 1e-3,
         "a": f"√d_k = √{d_k} = {np.sqrt(d_k):g}. If q and k had {d_k} independent "
              f"components of mean 0 and variance 1, q·k would have variance {d_k} and "
              f"q·k / √{d_k} variance 1 (lesson 2)."},
        {"q": "Why can changing the last token of a prompt not change the logits at any "
              "earlier position?",
         "a": "Each position's query may only look at keys at or before it (causal mask), and "
              "everything else in a layer works position by position, so nothing flows "
              "from a later token to an earlier one."},
    ])
    st.subheader("Download")
    st.markdown(f"**CSV**: one layer's attention, its {H} maps stacked ({H * T} × {T}: a row "
                f"per head and query token, a column per key token). **Whole trace**: every "
                f"array of the forward pass (q, k, v, attentions, hidden states, logits) in "
                f"NumPy's .npz format (`np.load`).")

    def trace_npz() -> bytes:
        buffer = io.BytesIO()
        np.savez(buffer, tokens=np.array(tokens), **trace.arrays())
        return buffer.getvalue()

    c1, c2, c3 = st.columns([1, 1, 1])
    with c1:
        csv_layer = bounded_slider(st, "Layer for the CSV", 1, L, DEFAULT_LAYER,
                                   key="lm_dl_layer")

    def attention_csv() -> str:
        rows = [f"layer {csv_layer}, head {n + 1} | {t}" for n in range(H) for t in tokens]
        return to_csv(trace.attentions[csv_layer - 1].reshape(H * T, T), rows, tokens)

    c2.download_button("CSV", attention_csv,
                       file_name=f"lm_attention_layer{csv_layer}.csv", mime="text/csv",
                       key="lm_dl_csv", on_click="ignore")
    c3.download_button("Whole trace (.npz)", trace_npz, file_name="lm_trace.npz",
                       mime="application/octet-stream", key="lm_dl_npz", on_click="ignore")
model_caption(m, "run here in NumPy (float32)")
finish_page()
