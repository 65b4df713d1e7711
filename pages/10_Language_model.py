"""Lesson 10: a real language model writes (SmolLM2-135M-Instruct by default, or a model the
server's operator lists; run by our own NumPy code)."""

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from attncore import lm
from attncore.encoder import EXPECTED_CONFIG as MINILM
from attncore.lm import heads as lm_heads
from attncore.lm.tokens import byte_level_pieces
from attncore.lm.worked import worked_head
from pages.text import language_model as say
from pages.ui import figures as fig
from pages.ui import lm as lm_ui
from pages.ui.controls import URL, bounded_slider, seed_input
from pages.ui.figures.models import decoder_block
from pages.ui.labels import md_escape, plotly_safe
from pages.ui.layout import (
    bad_input_stops_page,
    bullet_list,
    practice_questions,
    show_diagram,
    show_figure,
    stop_page,
)
from pages.ui.lm_view import trace_downloads
from pages.ui.numbers import number_text
from pages.ui.page import Page, lesson_page, write_header
from pages.ui.shared import measured
from pages.ui.tables import scrolled_table

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
CHAT = "Chat: wrap the prompt in the model's own chat template"


def max_tokens(cfg: lm.LMConfig) -> int:
    """Prompt tokens read here: learned positions stop at the model's context."""
    return min(MAX_PROMPT_TOKENS, cfg.context_length)


def default_layer(cfg: lm.LMConfig) -> int:
    return max(1, round(DEFAULT_DEPTH * cfg.n_layers))


def n_top(cfg: lm.LMConfig) -> int:
    """Heads switched off: 5, or fewer in a model so small that a layer would have no head
    left to draw at random beside them (at most a quarter of all heads)."""
    return min(IND_TOP, max(1, cfg.n_layers * cfg.n_heads // 4))


def prompt_section(page: Page, m: lm.LanguageModel) -> tuple[lm.LMTrace, str]:
    """The prompt, the chat switch and the pass over them (the page stops without a prompt)."""
    st.header("1 · Predict the next token")
    # On a projector the prompt and the chat switch share a row, and the token strip follows
    # the first figure (below), so that the whole figure reaches the first screen at 1280 × 720.
    prompt_box, chat_box = (st.columns([3, 1], vertical_alignment="bottom") if page.presenter
                            else (st.container(), st.container()))
    prompt = prompt_box.text_area(
        "Your prompt (any language, symbols, HTML: all shown as text)", DEFAULT_PROMPT,
        key="lm_prompt", max_chars=MAX_CHARS, height=68 if page.presenter else 80,
        label_visibility="collapsed" if page.presenter else "visible", **URL)
    has_template = bool(m.chat_template)
    no_template = say.no_template_text(md_escape(lm_ui.model_name(m)))
    # A kept "on" from another model is not used: a model without a template is never wrapped.
    chat = chat_box.toggle("Chat template" if page.presenter else CHAT, value=False,
                           key="lm_chat", **URL, disabled=not has_template,
                           help=(f"{CHAT}. " if page.presenter else "")
                           + (say.TEMPLATE_HELP if has_template else no_template)
                           ) and has_template
    if not has_template and not page.presenter:
        st.caption(no_template)
    if not prompt.strip():
        st.info("Type a prompt to run the model on it.")
        stop_page()
    text = lm.chat_prompt(m, prompt) if chat else prompt
    with bad_input_stops_page():
        # run() caches its traces per text, so moving any other control reuses this one.
        trace = lm.run(text, max_tokens=max_tokens(m.config), m=m)
    if trace.truncated:
        st.warning(f"The prompt has {trace.n_tokens} tokens; this page reads its first "
                   f"{max_tokens(m.config)} and predicts what follows them.")
    return trace, text


def prompt_tokens(m: lm.LanguageModel, trace: lm.LMTrace) -> None:
    """The prompt's tokens, and what the forward pass over them cost here."""
    lm_ui.token_strip(list(trace.tokens), trace.ids)
    st.caption(say.pass_caption(md_escape(lm_ui.model_name(m)), len(trace.ids), trace.seconds))


@st.fragment
def sampling_section(page: Page, m: lm.LanguageModel, probs: np.ndarray, top: np.ndarray,
                     top_tokens: list[str], text: str) -> None:
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
    with left:
        show_figure(fig.bar_chart(top_tokens, probs[top],
                                  title=f"The {TOP_SHOWN} most likely next tokens",
                                  x_title="next token", y_title="probability",
                                  y_range=(0, 1.05), decimals=2, font_size=page.font),
                    key="lm_fig_top",
                    alt=fig.describe_bars(top_tokens, probs[top], what=f"The model's "
                                          f"probability of each of the {TOP_SHOWN} most "
                                          "likely next tokens"))
    if not page.presenter:
        st.markdown(say.SAMPLING)
    st.markdown(say.next_token_text(top_tokens[0], int(top[0]), probs, drawn, sampling))
    if not page.presenter:
        st.table(pd.DataFrame(say.top_rows(top_tokens, top, probs, drawn)).set_index("rank"))
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
        steps = done[1]
        written = lm.decode(m, [s.id for s in steps]).replace("\n", " ↵ ")
        st.markdown("**Written:** " + md_escape(written))
        if steps and steps[-1].id in lm.generation.stop_ids(m):
            st.caption(f"Stopped at {steps[-1].token}, the model's end-of-text token.")
        st.table(pd.DataFrame(say.generation_rows(steps, not page.presenter)).set_index("step"))
        st.caption(say.generation_caption(np.array([s.seconds for s in steps])))
    elif done:
        st.caption("The settings changed since the last text was written: press the button "
                   "to write again.")


@st.cache_data(max_entries=16, show_spinner=False)
def statistics(_m: lm.LanguageModel, sha256: str, text: str, tokens: int
               ) -> dict[str, np.ndarray]:
    """Per-head statistics of the prompt's first ``tokens`` on the model of that sha256,
    averaged over the rows after the first (cached: about 0.1 s for 96 tokens of SmolLM2)."""
    return lm.head_statistics(lm.run(text, max_tokens=tokens, m=_m).attentions)


@st.fragment
def newest_token(page: Page, trace: lm.LMTrace) -> None:
    """The last row of every head of one layer, grouped by the KV head they share."""
    cfg, tokens, H = trace.config, list(trace.tokens), trace.config.n_heads
    layer = bounded_slider(st, "Layer", 1, cfg.n_layers, default_layer(cfg), key="lm_layer")
    rows = trace.attentions[layer - 1, :, -1, :]  # (H, T): the newest token's row
    # A head's row label says the KV head it reads, when heads share them.
    labels = [f"H{h + 1} · KV{trace.kv_head[h] + 1}" if cfg.group > 1 else f"H{h + 1}"
              for h in range(H)]
    show_figure(fig.matrix_heatmap(rows, labels, tokens,
                                   title=f"Layer {layer}: where “{plotly_safe(tokens[-1])}” "
                                         "looks, head by head",
                                   x_title="key (earlier token)",
                                   y_title="query head · the KV head it reads"
                                   if cfg.group > 1 else "head",
                                   decimals=1 if page.presenter else 2, font_size=page.font,
                                   height=170 + 2 * page.font * H),
                key="lm_fig_newest",
                alt=f"Layer {layer}, the newest token's row in each of the {H} heads. "
                    + fig.describe_matrix(rows, labels, tokens, rows="head", cols="key"))
    st.markdown(say.newest_text(cfg, rows, tokens))


def show_head_map(page: Page, values: np.ndarray, title: str, stat: str, key: str,
                  kind: str = "weights") -> None:
    """One number per head (an (L, H) array), heads down and layers across."""
    L, H = values.shape
    show_figure(fig.matrix_heatmap(values.T, [f"H{c + 1}" for c in range(H)],
                                   [str(r + 1) for r in range(L)], title=title, kind=kind,
                                   decimals=1, x_title="layer", y_title="head",
                                   font_size=page.font, height=200 + 2 * page.font * H),
                key=key, alt=say.head_map_text(values, stat))


@st.fragment
def model_view(page: Page, stats: dict[str, np.ndarray], n_tokens: int) -> None:
    """One statistic of all L × H heads."""
    stat = st.selectbox("Statistic per head", list(stats), key="lm_stat", **URL)
    show_head_map(page, stats[stat], f"All {stats[stat].size} heads: {stat}", stat,
                  "lm_fig_stats", kind="weights" if "mass" in stat else "values")
    st.caption(("Each head's statistic is averaged over the query rows 2 to T: row 1 can only "
                "attend to itself." if n_tokens > 1 else "One token: each head's only row, "
                "which can only attend to itself.") + " Hover for the numbers"
               + ("." if page.presenter else "; the CSV below has them all."))


def sink_section(page: Page, trace: lm.LMTrace, stats: dict[str, np.ndarray]) -> None:
    """Attention on the first and on the previous token, layer by layer, and every head's
    statistics as a file."""
    L, H = stats["mass on the first token"].shape
    left, right = st.columns([3, 2])
    first = stats["mass on the first token"].mean(axis=1)  # (L,)
    prev = stats["previous-token mass"].mean(axis=1)
    shares = {"on the first token": first, "on the previous token": prev}
    with left:
        show_figure(fig.line_chart(np.arange(1, L + 1), shares,
                                   title="Share of attention, averaged over heads",
                                   x_title="layer", y_title="mean weight", font_size=page.font),
                    key="lm_fig_sink", alt=fig.describe_lines(
                        np.arange(1, L + 1), shares, x_title="layer", y_title="mean weight"))
    with right:
        st.markdown(say.sink_text(first, prev, list(trace.tokens)))
    if not page.presenter:
        # A file rather than a grid on the page: L × H rows (270) drawn again on every new
        # prompt cost the redraw more than the figures above it.
        frame = pd.DataFrame({"layer": np.repeat(np.arange(1, L + 1), H),
                              "head": np.tile(np.arange(1, H + 1), L),
                              "KV head": np.tile(trace.kv_head + 1, L),
                              **{k: v.ravel() for k, v in stats.items()}})
        st.download_button(f"Every head's statistics, {L * H} rows (CSV)",
                           lambda: frame.to_csv(index=False, float_format="%.17g"),
                           file_name="lm_head_statistics.csv", mime="text/csv",
                           key="lm_dl_stats", on_click="ignore")


@st.fragment
def leakage(trace: lm.LMTrace, m: lm.LanguageModel) -> None:
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
    other = lm.run(changed.tolist(), max_tokens=max_tokens(m.config), m=m)
    p = position - 1
    st.markdown(say.leakage_text(position, tokens[p], other.tokens[p], trace.logits,
                                 other.logits))
    if not np.array_equal(other.logits[:p], trace.logits[:p]):
        st.error("An earlier position changed: the mask leaks. This is a bug; please "
                 "report it.")


@st.fragment
def induction_section(page: Page, m: lm.LanguageModel) -> lm.InductionTest | None:
    """The repeated-tokens test: the heads that copy, and what switching them off costs."""
    cfg, top = m.config, n_top(m.config)
    c1, c2 = st.columns(2)
    seed = seed_input(c1, "lm_ind_seed", label="Seed of the random tokens")
    with c2:  # both copies within the model's context
        P = bounded_slider(st, "Tokens in each random segment", 5,
                           min(lm_heads.MAX_SEGMENT, cfg.context_length // 2),
                           DEFAULT_SEGMENT, key="lm_ind_len")
    # The test is six passes through the model (2 to 4 s here): it runs by itself at the
    # defaults, and on request at other settings, as no control may start seconds of work.
    with bad_input_stops_page():
        test = measured("induction", (m.sha256, seed, P),
                        lambda: lm.induction_test(seed=seed, segment=P, sequences=IND_SEQUENCES,
                                                  n_top=top, draws=IND_DRAWS, m=m),
                        automatic=(seed, P) == (0, DEFAULT_SEGMENT),
                        label="Run the test", key="lm_ind_run",
                        note="Six passes through the model over the repeated tokens (2 to "
                             "4 s for SmolLM2 here): press to run the test with this seed "
                             "and length.",
                        spinner="Running the model on the repeated tokens, then with heads "
                                "switched off…")
    if test is None:
        return None
    st.markdown(say.sequences_text(P, IND_SEQUENCES, lm.pieces(m, test.ids[0])))
    bl, bh = test.top_heads[0]
    show_head_map(page, test.scores, "Induction score of every head", "Induction score",
                  "lm_fig_ind_scores")
    left, right = st.columns(2)
    with right:
        labels = [f"t{n + 1}" if n < P else f"t{n - P + 1}′" for n in range(2 * P)]
        show_figure(fig.matrix_heatmap(test.best_attention, labels, labels,
                                       title=f"Layer {bl + 1}, head {bh + 1} on the first "
                                             "sequence", font_size=page.font, height=620),
                    key="lm_fig_ind_map",
                    alt=say.induction_map_text(test)
                        + fig.describe_matrix(test.best_attention, labels, labels))
    with left:
        st.markdown(say.stripe_text(P))
        st.markdown(say.strongest_text(test))
    losses = {"copy 1": test.loss_first, "copy 2": test.loss_repeat,
              f"top {top} off": test.loss_top_off,
              "random off": float(test.loss_random_off.max())}
    left, right = st.columns(2)
    with left:
        show_figure(fig.bar_chart(list(losses), list(losses.values()),
                                  title="Loss on the random tokens (nats a token)",
                                  x_title="tokens predicted", y_title="cross-entropy (nats)",
                                  decimals=2, font_size=page.font), key="lm_fig_ind_loss",
                    alt=fig.describe_bars(list(losses), list(losses.values()),
                                          what="Loss on the random tokens, nats a token"))
        st.caption(f"Copy 2 with the {top} best induction heads switched off, and with "
                   f"{top} random heads of the same layers off (the worst of {IND_DRAWS} "
                   "draws).")
    with right:
        positions = np.arange(2, 2 * P + 1)
        curves = {"all heads on": test.losses.mean(axis=0),
                  f"top {top} induction heads off": test.losses_top_off.mean(axis=0)}
        show_figure(fig.line_chart(positions, curves, title="Loss of each token, mean of the "
                                   f"{IND_SEQUENCES} sequences", x_title="position",
                                   y_title="nats", font_size=page.font),
                    key="lm_fig_ind_curve", alt=fig.describe_lines(
                        positions, curves, x_title="position", y_title="nats"))
    st.markdown(say.induction_loss_text(test, cfg.vocab_size, top))
    return test


@st.fragment
def head_by_hand(page: Page, trace: lm.LMTrace, m: lm.LanguageModel, top: DeltaGenerator
                 ) -> None:
    """Query i's score and weight for key j, from the residual stream, with real numbers:
    the model's own norm, biases and positions (attncore.lm.worked computes them); and in
    ``top``, near the top of the page, the decoder block with this layer and head."""
    cfg, tokens, T = m.config, list(trace.tokens), len(trace.tokens)
    c1, c2, c3 = st.columns(3)
    with c1:
        layer = bounded_slider(st, "Layer of the head worked by hand", 1, cfg.n_layers,
                               default_layer(cfg), key="lm_hand_layer")
    head = c2.selectbox("Query head worked by hand", list(range(1, cfg.n_heads + 1)),
                        index=min(DEFAULT_HEAD, cfg.n_heads) - 1, key="lm_hand_head", **URL)
    pair = 0
    if cfg.uses_rope:
        with c3:
            pair = bounded_slider(st, "RoPE pair shown (i)", 0, cfg.d_head // 2 - 1, 0,
                                  key="lm_hand_pair")
    c1, c2 = st.columns(2)
    with c1:
        query = bounded_slider(st, "Query token (row)", 1, T, T, key="lm_hand_query")
    with c2:
        key = bounded_slider(st, "Key token (column)", 1, query, 1, key="lm_hand_key")
    with top:  # the model this lesson runs, from its config, on the prompt's T tokens
        diagram = decoder_block(cfg, T, layer, head, page.font)
        show_diagram(diagram, key=page.key("diagram_block"), alt=f"Layer {layer} and head "
                     f"{head} are those worked by hand in section 5. " + diagram.describe())
    w = worked_head(trace, m.weights, layer - 1, head - 1, query - 1, key - 1, pair)
    for said, formula in say.worked_steps(w, cfg, tokens[w.query],
                                          md_escape(lm_ui.model_name(m))):
        st.markdown(said)
        if formula is not None:
            st.latex(formula)  # RoPE's turns of q and of k in one block
    if not page.presenter:
        st.markdown(f"Every key of row {query}:")
        scrolled_table(pd.DataFrame({
            "j": np.arange(1, query + 1), "key": tokens[:query],
            "s = q·k / √d_k": [number_text(s, 4) for s in w.scores],
            "weight": [number_text(x, 4) for x in w.weights]}), height=240)


with lesson_page("lm", header=False) as page:
    header = st.container()  # the title first, then the model picker (when there is a choice)
    choice = lm_ui.choose_model()
    with header:
        write_header(page, model=md_escape(choice))
    m = lm_ui.load_language_model(choice)
    if m is None:
        stop_page()
    lm_ui.model_note(m, page.presenter)
    name = md_escape(lm_ui.model_name(m))
    trace, text = prompt_section(page, m)
    if not page.presenter:
        prompt_tokens(m, trace)
    probs = trace.next_token_probs()  # temperature 1: the model's own distribution
    top = np.argsort(-probs, kind="stable")[:TOP_SHOWN]
    top_tokens = lm.pieces(m, top)
    block = st.container()  # the decoder block, drawn by head_by_hand with its layer and head
    sampling_section(page, m, probs, top, top_tokens, text)
    if page.presenter:
        prompt_tokens(m, trace)

    st.header("2 · Where the newest token looks")
    newest_token(page, trace)
    stats = statistics(m, m.sha256, text, max_tokens(m.config))
    model_view(page, stats, len(trace.ids))
    sink_section(page, trace, stats)

    st.header("3 · Causal, checked on the real model")
    st.markdown(say.upper_text(trace.attentions))
    leakage(trace, m)

    st.header("4 · Induction heads in a real model")
    st.markdown(say.induction_intro(name))
    test = induction_section(page, m)  # None until a test has run

    st.header("5 · One decoder head by hand")
    head_by_hand(page, trace, m, block)

    st.header("6 · Encoder against decoder")
    # The decoder's column is its config's switches in words (LMConfig.describe): another
    # model listed by the server shows its own.
    st.markdown(say.encoder_decoder_table(m.config, name, byte_level_pieces(m), MINILM))
    bullet_list("What to notice", say.notices(m.config, top_tokens[0], probs[top[0]],
                                              stats["mass on the first token"],
                                              list(trace.tokens), test))
    st.subheader("The formula")
    st.latex(say.decoder_formula(m.config))
    st.caption(say.formula_note(m.config))
    if not page.presenter:
        bullet_list("Try this", say.TRY_THIS, expanded=False)
        practice_questions("lm", say.practice(m.config))
        trace_downloads(trace, default_layer(m.config),
                        say.download_text(m.config.n_heads, len(trace.tokens)))
    lm_ui.model_caption(m, "run here in NumPy (float32)")
