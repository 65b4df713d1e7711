"""Lesson 13: attention with a fixed-size memory (linear attention, the delta rule, Gated
DeltaNet), against softmax attention's growing cache, and why hybrids keep both."""

from dataclasses import asdict

import numpy as np
import pandas as pd
import streamlit as st

from attncore import memory
from attncore.memory import by_hand, hybrid, leak
from attncore.results_cache import kept
from attncore.train import recall as rc
from pages.text import fixed_size_memory as say
from pages.ui import figures as fig
from pages.ui import lm as lm_ui
from pages.ui.controls import URL, seed_input
from pages.ui.figures.models import fixed_state
from pages.ui.glossary import term_link
from pages.ui.layout import (
    bad_input_stops_page,
    bullet_list,
    practice_questions,
    show_diagram,
    show_figure,
)
from pages.ui.live import keep, offer_downloads
from pages.ui.numbers import bytes_text
from pages.ui.page import Page, lesson_page
from pages.ui.shared import measured

PAIRS = (1, 2, 4, 8, 16, 32, 64, 128, 256)  # numbers of stored pairs in section 3
WIDTHS = [4, 8, 16, 32, 64]  # d_k in section 3
HYBRID_TOKENS = (32768, hybrid.QWEN3_NEXT.max_position_embeddings)
DEFAULT = rc.RecallConfig()
QUERIES = ["k₁", "k₂", "k₃"]  # section 2 reads one of its three stored keys
DOWNLOADS = ["state after three writes", "recall by rule", "trained recall"]
RMS_LINE = "√((n − 1)/d_k), root mean square"  # the leak's typical length
RULE_LABELS = {"softmax": "softmax (keeps every pair)", "linear": "linear attention",
               "delta": "delta rule", "gated_delta": "gated delta"}


def introduction() -> None:
    st.markdown(
        "Lesson 0's recurrent encoder squeezed a string into one vector of fixed size and "
        "forgot; attention fixed it by keeping every state. Lesson 11 showed the price: a "
        f"{term_link('kv-cache', 'KV cache')} that grows with every token. "
        f"{term_link('linear-attention', 'Linear attention')} (Katharopoulos et al. 2020) "
        "drops the softmax and keeps one d_v × d_k matrix S instead: an RNN again. This "
        "lesson uses its bare form: the weights are the dot products k · q themselves, with "
        "no feature map and no normaliser. Published models transform q and k first: "
        "Katharopoulos et al. map them by φ(x) = elu(x) + 1 and divide the read by "
        "φ(q) · Σ φ(k); Schlag et al. 2021 use a feature map of their own, normalised to sum "
        "to 1; Yang et al. 2024's DeltaNet passes them through SiLU and scales them to unit "
        "length, and divides the read by nothing. The "
        f"{term_link('delta-rule', 'delta rule')} (DeltaNet: Schlag et al. 2021; Yang et al. "
        "2024) writes by correcting what S already says about a key; "
        f"{term_link('gated-deltanet', 'Gated DeltaNet')} (Yang, Kautz and Hatamizadeh 2025) "
        "also forgets. Large released models such as Qwen3-Next and Kimi Linear mix these "
        "layers with full attention (purely recurrent ones exist too, RWKV-7 among them): why "
        "not linear everywhere? Because a "
        f"{term_link('recurrent-state', 'state of fixed size')} cannot recall what it had no "
        "room to keep "
        f"({term_link('associative-recall', 'associative recall')}: Arora et al. 2023, "
        "Zoology; Jelassi et al. 2024, “Repeat after me”): lesson 0's bottleneck again.")


@st.cache_data(max_entries=16, show_spinner=False)
def recall_curves(d_k: int, beta: float, alpha: float) -> dict:
    return {rule: memory.recall_curve(d_k, PAIRS, rule=rule, beta=beta, alpha=alpha)
            for rule in memory.RULES}


@st.cache_data(max_entries=16, show_spinner=False)
def leak_of(d_k: int, n: int) -> tuple:
    return leak.leak_curve(d_k, PAIRS), leak.first_read(d_k, n)


def memory_section(page: Page, results: dict) -> None:
    st.header("1 · Memory that grows against memory that doesn't")
    m = lm_ui.load_language_model()  # None, with the install note, when it is missing
    if m is not None:
        cfg = m.config
        tokens = 2 ** np.arange(4, int(np.log2(cfg.context_length)) + 1)
        with bad_input_stops_page():
            r = hybrid.cache_against_state(cfg, tokens)
        lines = {"KV cache (grows)": r.cache_bytes / 1e6,
                 "linear-attention state (fixed)": np.full(tokens.size, r.state_bytes / 1e6)}
        show_figure(fig.line_chart(tokens, lines, title=f"{lm_ui.model_name(m)}: memory "
                                   "against context", x_title="tokens", y_title="MB",
                                   log_x=True, log_y=True, font_size=page.font, height=320),
                    key=page.key("fig_cache"), alt=fig.describe_lines(
                        tokens, lines, x_title="tokens", y_title="MB kept"))
        st.markdown(say.state_cache_text(r, lm_ui.model_name(m), cfg.context_length))
    c = hybrid.QWEN3_NEXT
    st.subheader(f"A released {term_link('hybrid', 'hybrid')}: {c.name}")
    mem = hybrid.hybrid_memory(c, HYBRID_TOKENS)
    left, right = st.columns([2, 3])
    if not page.presenter:
        left.caption(f"The fields that set its memory, from {hybrid.QWEN3_NEXT_SOURCE}.")
    left.table(pd.DataFrame({"field": list(c.fields), "value": [
        f"{v:,}" if isinstance(v, int) else v for v in c.fields.values()]})
        .set_index("field"))
    with right:
        st.markdown(say.layout_text(c))
        st.table(pd.DataFrame({
            "tokens": [f"{t:,}" for t in mem.tokens],
            f"KV cache, {c.full_layers} full layers": [bytes_text(b) for b in mem.cache_bytes],
            f"states, {c.linear_layers} Gated DeltaNet": [bytes_text(mem.state_bytes)]
            * len(mem.tokens),
            "hybrid in all": [bytes_text(b) for b in mem.total_bytes],
            f"full attention, all {c.num_hidden_layers}": [bytes_text(b)
                                                            for b in mem.everywhere_bytes],
        }).set_index("tokens"))
        st.markdown(say.hybrid_text(mem))
        if not page.presenter:
            st.caption(say.left_out_text(mem))
    keep(results, "hybrid", {"config": c.fields, "tokens": mem.tokens,
                             "kv_cache_bytes": mem.cache_bytes, "state_bytes": mem.state_bytes,
                             "conv_bytes": mem.conv_bytes,
                             "everywhere_bytes": mem.everywhere_bytes})


def by_hand_section(page: Page, results: dict) -> None:
    st.header("2 · Write and read, by hand")
    c1, c2 = st.columns(2)
    query = c1.radio("Read with the query q =", QUERIES, horizontal=True, key=page.key("query"),
                     **URL)
    scale = c2.select_slider("Softmax sharpness c (multiplies every score)", by_hand.SCALES,
                             value=4.0, format_func=lambda c: f"{c:g}", key=page.key("scale"),
                             **URL)
    j = QUERIES.index(query)
    with bad_input_stops_page():
        w = by_hand.worked_memory(j, float(scale))
    if not page.presenter:
        (n, d_k), d_v = w.keys.shape, w.values.shape[1]
        st.markdown(f"{n} pairs, keys of d_k = {d_k} numbers and values of d_v = {d_v}: each "
                    f"write adds the outer product v kᵀ, a {d_v} × {d_k} matrix, to the state "
                    "S (S₀ = 0).")
    for t in range(len(w.keys)):
        st.latex(say.write_latex(w, t))
    st.markdown("**Linear attention** reads S q: each value weighted by its key's dot product "
                "with q, as it is.")
    for line in say.linear_read_latex(w):
        st.latex(line)
    st.markdown("**Softmax attention** keeps the three pairs and weighs them by "
                "softmax(c k · q): weights that sum to 1.")
    for line in say.softmax_read_latex(w):
        st.latex(line)
    st.markdown(say.by_hand_text(w))
    results[DOWNLOADS[0]] = (w.states[-1], ["row 1", "row 2"], ["col 1", "col 2", "col 3"])
    keep(results, "by_hand", {"query": query, "scale": w.scale,
                              "linear_read": w.linear_read, "softmax_read": w.softmax_read,
                              "softmax_weights": w.weights})


def capacity_section(page: Page, slot, results: dict) -> None:
    st.header("3 · How much a fixed state can hold")
    cols = st.columns(4)
    d_k = cols[0].select_slider("Key width d_k (= d_v)", WIDTHS, value=16, key=page.key("dk"),
                                **URL)
    n = cols[1].select_slider("Pairs stored n (the diagram)", PAIRS, value=64,
                              key=page.key("pairs"), **URL)
    beta = cols[2].slider("Write strength β (delta rules)", 0.0, 1.0, 1.0, 0.05,
                          key=page.key("beta"), **URL)
    alpha = cols[3].slider("Decay α (gated delta)", 0.0, 1.0, 0.9, 0.05,
                           key=page.key("alpha"), **URL)
    with bad_input_stops_page():
        curves = recall_curves(int(d_k), float(beta), float(alpha))
        leaks, first = leak_of(int(d_k), int(n))
    with slot:
        show_diagram(fixed_state(d_k, d_k, n, first.similarities, first.leak_ratio, page.font),
                     key=page.key("diagram_state"))
    left, right = st.columns(2)
    lines = {RULE_LABELS[r]: c.mean_recall for r, c in curves.items()}
    with left:
        show_figure(fig.line_chart(PAIRS, lines, title=f"Recall against pairs stored, d_k = {d_k}",
                                   x_title="pairs stored n", y_title="share recalled",
                                   log_x=True, font_size=page.font, height=360),
                    key=page.key("fig_recall"), alt=fig.describe_lines(
                        PAIRS, lines, x_title="pairs", y_title="Share of keys recalled"))
    ratio = {"leak ÷ value, measured": leaks.mean_ratio,
             RMS_LINE: leaks.expected}
    with right:
        show_figure(fig.line_chart(PAIRS, ratio, title="Linear attention: the leak of a read",
                                   x_title="pairs stored n", y_title="‖leak‖ / ‖value‖",
                                   log_x=True, dashed=(RMS_LINE,),
                                   font_size=page.font, height=360),
                    key=page.key("fig_leak"), alt=fig.describe_lines(
                        PAIRS, ratio, x_title="pairs", y_title="Length of the leak over the "
                                                              "value's"))
    st.markdown(say.recall_text(curves))
    st.markdown(say.leak_text(leaks, first, n))
    if not page.presenter:
        st.caption(f"Each count: n random unit keys and values (d_v = d_k), {len(memory.SEEDS)} "
                   "draws; every stored key is read back, and a read counts as recalled when "
                   "the right value is the nearest (cosine) of the n. Softmax scale "
                   f"{memory.SOFTMAX_SCALE:g}; β (both delta rules) and α (gated delta only: "
                   "the delta rule keeps its state whole) the same at every write.")
    results[DOWNLOADS[1]] = (np.array([c.mean_recall for c in curves.values()]),
                             list(RULE_LABELS.values()), [f"n={p}" for p in PAIRS])
    keep(results, "capacity", {"d_k": d_k, "pairs_in_diagram": n, "beta": beta, "alpha": alpha,
                               "leak_ratio_first_read": first.leak_ratio})


def twice_section(page: Page, results: dict) -> None:
    st.header("4 · Replace, don't add")
    alpha = st.slider("Decay α of gated delta (β = 1 for both delta rules)", 0.0, 1.0, 0.8,
                      0.05, key=page.key("twice_alpha"), **URL)
    with bad_input_stops_page():
        w = {rule: memory.write_twice(rule, alpha=float(alpha)) for rule in memory.RULES}
    if not page.presenter:
        st.markdown("Three writes with orthonormal keys: (k_other, v_other), then (k, v_old), "
                    "then the same key again, (k, v_new). Each read written as a mix of the "
                    "three values:")
    st.table(pd.DataFrame(
        [[say.mix(x) for x in (*r.at_twice[1:], r.at_other[0])] for r in w.values()],
        index=[RULE_LABELS[r] + (f" (scale {memory.SOFTMAX_SCALE:g})" if r == "softmax"
                                 else "") for r in w],
        columns=["read at k: v_old", "read at k: v_new", "read at k_other: v_other"]))
    st.markdown(say.twice_text(w, float(alpha)))
    keep(results, "write_twice", {"alpha": alpha, **{r: x.coefficients for r, x in w.items()}})


def train_both(config: rc.RecallConfig) -> rc.RecallResult:
    bar = st.progress(0.0, text="Training the two models")

    def progress(done: int, total: int) -> None:
        model = "softmax" if done <= total // 2 else "linear"
        bar.progress(done / total, text=f"Training the {model} model: step {done} of {total}")

    result = rc.train_recall(config, progress)
    bar.empty()
    return result


def trained_result(page: Page) -> rc.RecallResult | None:
    """Both models: kept on disk at the defaults, trained on request otherwise."""
    with st.expander("Training settings") if page.presenter else st.container():
        cols = st.columns(3)
        steps = cols[0].select_slider("Training steps", [250, 500, 1000, 1500],
                                      value=DEFAULT.steps, key=page.key("steps"), **URL)
        d_k = cols[1].select_slider("d_k of q and k (state: 64 · d_k)", [2, 4, 8, 16],
                                    value=DEFAULT.d_k, key=page.key("train_dk"), **URL)
        seed = seed_input(cols[2], page.key("seed"))
    config = rc.RecallConfig(seed=seed, steps=int(steps), d_k=int(d_k))

    def compute():
        if config != DEFAULT:
            return train_both(config)
        return kept("lesson13-recall", asdict(config), "attncore.train.recall",
                    lambda: train_both(config))

    return measured("recall", (seed, int(steps), int(d_k)), compute,
                    automatic=config == DEFAULT, label="Train both models",
                    key=page.key("train"),
                    note="These settings have not been trained on this server yet: press the "
                         "button to train both models (a progress bar shows how far; up to "
                         "about 20 s). A result is kept for every student of this server.")


def trained_section(page: Page, results: dict) -> rc.RecallResult | None:
    st.header("5 · Trained: recall needs room")
    if not page.presenter:
        st.markdown(
            f"One attention layer and a read-out, trained on recall: a sequence of "
            f"{DEFAULT.min_pairs} to {DEFAULT.max_pairs} pairs (key symbol, value symbol; "
            f"{rc.SYMBOLS} of each), then a query naming one key: answer its value. The two "
            "models start from the same weights and see the same batches; only the read "
            "differs, softmax over the pairs or S q, and with it the room each has: a cache "
            "that grows with the pairs against a state of d_model · d_k numbers.")
    result = trained_result(page)
    if result is None:  # the button and its note are shown; the closing notes still follow
        return None
    pairs = result.pairs
    left, right = st.columns(2)
    acc = {"softmax": result.accuracy["softmax"], "linear": result.accuracy["linear"],
           "chance (1/128)": np.full(pairs.size, rc.CHANCE)}
    kept_numbers = {"softmax: cache n (d_k + d_model)": result.state_numbers["softmax"],
                    "linear: state d_model · d_k": result.state_numbers["linear"]}
    with left:
        show_figure(fig.line_chart(pairs, acc, title="Held-out recall against pairs",
                                   x_title="pairs in the sequence", y_title="accuracy",
                                   log_x=True, dashed=("chance (1/128)",), font_size=page.font,
                                   height=340),
                    key=page.key("fig_trained"), alt=fig.describe_lines(
                        pairs, acc, x_title="pairs", y_title="Accuracy"))
    with right:
        show_figure(fig.line_chart(pairs, kept_numbers, title="Numbers the read keeps",
                                   x_title="pairs in the sequence", y_title="numbers",
                                   log_x=True, log_y=True, font_size=page.font, height=340),
                    key=page.key("fig_numbers"), alt=fig.describe_lines(
                        pairs, kept_numbers, x_title="pairs", y_title="Numbers kept"))
    st.markdown(say.trained_text(result))
    if not page.presenter:
        st.caption(f"Trained {result.config.steps} steps of {result.config.batch} sequences "
                   f"(seed {result.config.seed}); tested on {result.config.n_test} fresh "
                   "sequences per number of pairs. Training both and testing took "
                   f"{result.seconds:.1f} s when this server first computed them.")
    results[DOWNLOADS[2]] = (np.array([result.accuracy["softmax"], result.accuracy["linear"]]),
                             ["softmax", "linear"], [f"pairs={p}" for p in pairs])
    keep(results, "trained", result.summary())
    return result


def closing_notes(page: Page, result: rc.RecallResult | None) -> None:
    st.markdown(say.conclusion(hybrid.QWEN3_NEXT))
    bullet_list("What to notice", [*say.NOTICE, *filter(None, [say.trained_notice(result)])])
    st.subheader("The rules")
    st.latex(r"\text{linear: } S_t = S_{t-1} + v_t k_t^\top \qquad "
             r"\text{delta: } S_t = S_{t-1} + \beta_t\,(v_t - S_{t-1} k_t)\, k_t^\top")
    st.latex(r"\text{gated delta: } S_t = \alpha_t S_{t-1} + \beta_t\,(v_t - \alpha_t S_{t-1} "
             r"k_t)\, k_t^\top \qquad \text{read: } o = S_t\, q")
    if not page.presenter:
        bullet_list("Try this", say.TRY_THIS, expanded=False)
        practice_questions(page.lesson.prefix, say.practice(hybrid.QWEN3_NEXT))


def download_matrices(results: dict) -> dict:
    return {name: results[name] for name in DOWNLOADS if name in results}


def download_trace(results: dict) -> dict:
    return {k: v for k, v in results.items() if k not in DOWNLOADS}


with lesson_page("mem") as page:
    if not page.presenter:
        introduction()
    diagram = st.container()  # lesson 13's memory, drawn by section 3 from its settings
    results = {}
    memory_section(page, results)
    by_hand_section(page, results)
    capacity_section(page, diagram, results)
    twice_section(page, results)
    result = trained_section(page, results)
    closing_notes(page, result)
    # No section reruns alone: the matrices shown are known once the body has run.
    offer_downloads(results, None if page.presenter else [n for n in DOWNLOADS if n in results])
    page.downloads(results, download_matrices, download_trace)
