"""Lesson 6: scoring functions and encoder-decoder attention (Bahdanau, Luong, local, hard)."""

import numpy as np
import pandas as pd
import streamlit as st

from attncore import seq2seq as s2s
from attncore.results_cache import kept
from attncore.scores import SCORE_LABELS, SCORE_NAMES, score_parameter_count
from attncore.softmax import softmax
from attncore.text import SENTENCES
from pages.text.scoring_and_seq2seq import (
    DECODER_STATE_NOTE,
    NOTICE_ITEMS,
    TRAINED_NAMES,
    alignment_text,
    bahdanau_text,
    gate_text,
    hard_gradient_text,
    illustrative_items,
    local_formula,
    local_text,
    luong_halves_text,
    luong_text,
    model_text,
    next_word_intro,
    next_word_text,
    query_text,
    soft_and_hard_text,
    trained_text,
    vocabulary_text,
    window_note,
)
from pages.ui.controls import URL, bounded_slider, capped_tokens, seed_input
from pages.ui.figures import (
    SERIES_COLOURS,
    bar_chart,
    describe_bars,
    describe_matrix,
    matrix_heatmap,
    spoken_token,
)
from pages.ui.figures.models import decoding_step
from pages.ui.glossary import term_link
from pages.ui.labels import plotly_safe
from pages.ui.layout import (
    bad_input_stops_page,
    bullet_list,
    practice_questions,
    show_diagram,
    show_figure,
    stop_page,
)
from pages.ui.live import keep, offer_downloads
from pages.ui.numbers import significant_text
from pages.ui.numbers import subscript as sub
from pages.ui.page import Page, lesson_page

MAX_TOKENS = 20
D = 16  # size of the toy encoder and decoder states
FORMULAS = {"dot": "qᵀk", "scaled_dot": "qᵀk / √d", "general": "qᵀW k",
            "additive": "vᵀ tanh(W_q q + W_k k)"}
WINDOW_SCORE = "dot"  # sections 4 and 5 score with Luong's dot, whatever the Model picked
# Each score written with the query q (s_{t-1} or s_t) and the encoder state h_j.
SCORE_TEX = {"dot": r"{q}^\top h_j", "general": r"{q}^\top W h_j",
             "additive": r"v^\top \tanh(W_q {q} + W_k h_j)"}
TRAINED_STEPS = 100  # accuracy 1.0 by step ~40
LOCAL = (2, 2, "monotonic")  # section 4's first step t, half-width D and window centre
DOWNLOADS = ["Alignment (target × source)", "Scores", "Context vectors", "Encoder states",
             "Decoder states"]


def sentences() -> tuple[list[str], list[str], int]:
    """The source and target tokens and the seed; the page stops until both sentences
    have a word."""
    c1, c2, c3 = st.columns([2, 2, 1])
    source = c1.text_input("Source sentence (encoder)", SENTENCES["translation_source"],
                           key="s2s_source", max_chars=400, **URL)
    target = c2.text_input("Target sentence (decoder)", SENTENCES["translation_target"],
                           key="s2s_target", max_chars=400, **URL)
    seed = seed_input(c3, "s2s_seed")
    src = capped_tokens(source, "source", MAX_TOKENS)
    tgt = capped_tokens(target, "target", MAX_TOKENS)
    if not src or not tgt:
        st.info("Type both a source and a target sentence (at least one word each).")
        stop_page()
    return src, tgt, seed


# Each section below is a fragment with its own decoding step: moving a control redraws
# only its own section's figures (st.fragment), never the whole page. What a section
# computes is kept in `results` for the downloads at the end (see pages.ui.live.keep).

@st.fragment
def scores_section(page: Page, h: np.ndarray, s: np.ndarray, params: s2s.Seq2SeqParams,
                   src: list[str], tgt: list[str], results: dict) -> None:
    """The four scores of one decoder state against every encoder state, as one figure."""
    st.header("1 · Four ways to score a query against keys")
    t = bounded_slider(st, "Decoding step t (the query is the toy decoder state of target token t)",
                       1, len(tgt), 2, key="s2s_step") - 1
    weights = s2s.score_weights(s[t], h, params)
    counts = params.parameter_counts()
    left, right = st.columns([3, 2])
    by_score = np.stack(list(weights.values()))
    score_labels = [SCORE_LABELS[n] for n in weights]
    with left:
        show_figure(matrix_heatmap(by_score, score_labels, src,
                                   title=f"Weights of “{plotly_safe(tgt[t])}” over the source",
                                   decimals=2, x_title="source token (key)",
                                   y_title="score", font_size=page.font),
                    key="s2s_fig_scores",
                    alt=f"Weights of {spoken_token(tgt[t])} over the source, one row per "
                        "scoring function. " + describe_matrix(by_score, score_labels, src,
                                                              rows="score", cols="source"))
    with right:
        st.markdown("| score | formula | parameters |\n|---|---|---|\n" + "\n".join(
            f"| {SCORE_LABELS[n]} | {FORMULAS[n]} | {counts[n]:,} |" for n in SCORE_NAMES))
    st.markdown(query_text(src, tgt, t, D, params.v.shape[0], weights["dot"]))
    keep(results, "step", t + 1)
    keep(results, "weights_by_score", weights)


@st.fragment
def alignment_section(page: Page, h: np.ndarray, s: np.ndarray, params: s2s.Seq2SeqParams,
                      src: list[str], tgt: list[str], results: dict) -> None:
    """Bahdanau or Luong attention at every step, the alignment filled up to step t."""
    T = len(s)
    st.header("2 · Encoder-decoder attention, step by step")
    c1, c2, c3 = st.columns([2, 2, 3])
    model = c1.radio("Model", ["Bahdanau", "Luong"], horizontal=True, key="s2s_model", **URL)
    luong_score = c2.selectbox("Luong's score", list(s2s.LUONG_SCORES), key="s2s_luong_score",
                               disabled=model != "Luong", **URL)
    with c3:
        t = bounded_slider(st, "Decoding step t (fills the alignment row by row)", 1, T, 2,
                           key="s2s_align_step") - 1
    if model == "Bahdanau":
        align, score_used, query = s2s.bahdanau(h, s, params), "additive", r"s_{t-1}"
    else:
        align, score_used, query = s2s.luong(h, s, params, luong_score), luong_score, "s_t"
    step_diagram(page, h, s, params, src, align.weights[t], t + 1, model, score_used)
    st.markdown(model_text(model, luong_score))
    filled = np.where(np.arange(T)[:, None] <= t, align.weights, np.nan)  # rows up to t
    left, right = st.columns(2)
    with left:
        show_figure(bar_chart(src, align.weights[t], title=f"α_{t + 1} over the source",
                              x_title="source token", y_title="weight", y_range=(0, 1.1),
                              colour=SERIES_COLOURS[0], decimals=2, font_size=page.font),
                    key="s2s_fig_alpha",
                    alt=describe_bars(src, align.weights[t],
                                      what=f"Weights α_{t + 1} over the source tokens"))
        show_figure(bar_chart([f"{i + 1}" for i in range(D)], align.contexts[t],
                              title=f"Context vector c_{t + 1} = Σ α h_j", x_title="dimension",
                              y_title="value", colour=SERIES_COLOURS[1], decimals=2,
                              font_size=page.font), key="s2s_fig_context",
                    alt=describe_bars([f"dimension {i + 1}" for i in range(D)],
                                      align.contexts[t],
                                      what=f"Context vector c_{t + 1}, {D} dimensions"))
    with right:
        show_figure(matrix_heatmap(filled, tgt, src, title=f"Alignment after step {t + 1}",
                                   decimals=2, x_title="source", y_title="target",
                                   font_size=page.font), key="s2s_fig_alignment",
                    alt=f"Alignment filled up to step {t + 1}, target rows and source columns."
                        " " + describe_matrix(align.weights[:t + 1], tgt[:t + 1], src,
                                              rows="target", cols="source"))
    found = s2s.lexicon_alignment(src, tgt, align.weights)
    st.markdown(f"α_{t + 1} sums to {align.weights[t].sum():.6f}, and the context vector "
                f"c_{t + 1} is the average of the encoder states weighted by it. Move the step "
                "slider to fill the alignment matrix row by row. "
                + alignment_text(found, score_used))
    if not page.presenter:
        st.caption(DECODER_STATE_NOTE)
    st.latex(rf"\alpha_{{tj}} = \frac{{\exp \mathrm{{score}}({query}, h_j)}}{{\sum_{{j'}} "
             rf"\exp \mathrm{{score}}({query}, h_{{j'}})}},\quad \mathrm{{score}}({query}, h_j) "
             rf"= {SCORE_TEX[score_used].format(q=query)},\quad c_t = \sum_j \alpha_{{tj}}\, "
             "h_j")
    for name, value in (("model", model), ("luong_score", luong_score),
                        ("alignment", align.weights), ("scores", align.scores),
                        ("contexts", align.contexts)):
        keep(results, name, value)


def local_window(h: np.ndarray, s: np.ndarray, params: s2s.Seq2SeqParams, t: int, half: int,
                 mode: str) -> tuple[np.ndarray, s2s.LocalAttention]:
    """The WINDOW_SCORE scores of step t (from 0) and Luong's local attention over them, in a
    window of half-width ``half`` round p_t: t (monotonic) or learned from sₜ (predictive)."""
    dot_scores = s2s.score(WINDOW_SCORE, s[t:t + 1], h, params)[0]  # (S,)
    p_t = (s2s.monotonic_position(t, len(h)) if mode == "monotonic"
           else s2s.predictive_position(s[t], params, len(h)))
    return dot_scores, s2s.local_attention(dot_scores, h, p_t, half, mode=mode)


def step_diagram(page: Page, h: np.ndarray, s: np.ndarray, params: s2s.Seq2SeqParams,
                 src: list[str], weights: np.ndarray, step: int, model: str,
                 score: str) -> None:
    """Section 2's decoding step, drawn with the local window section 4 shows now (its
    first settings until it has run): section 4 reruns the page when they differ."""
    t4, half, mode = st.session_state.get("s2s_window_shown", (LOCAL[0] - 1, *LOCAL[1:]))
    t4 = min(t4, len(s) - 1)
    st.session_state["s2s_window_drawn"] = (t4, half, mode)
    local = local_window(h, s, params, t4, half, mode)[1]
    show_diagram(decoding_step(src, weights, step, model, score, D, page.font,
                               window=local.window, centre=local.p_t + 1, half=half,
                               window_step=t4 + 1), key=page.key("diagram_step"))


@st.cache_data(show_spinner="Training both scores on lesson 8's toy translation task (once "
                            "on this machine)…")
def trained_alignments() -> dict:
    """Lesson 8's encoder-decoder trained with each score for 100 steps: the trained
    alignment of its first example sentence, its labels and its held-out figures. Computed
    once per machine and kept on disk (attncore.results_cache), keyed by the training
    code's version: a fresh server reads it."""
    return kept("lesson6-trained-alignments", {"steps": TRAINED_STEPS},
                "attncore.train.alignment", _train_alignments)


def _train_alignments() -> dict:
    from attncore.train.alignment import trained_alignment  # only this section needs it
    return {kind: trained_alignment(kind, TRAINED_STEPS) for kind in TRAINED_NAMES}


def trained_section(page: Page) -> None:
    """The alignments of the same toy task trained with each score."""
    st.subheader("Bahdanau and Luong scores after training")
    trained = trained_alignments()
    for col, (kind, res) in zip(st.columns(2), trained.items(), strict=True):
        french, english = list(res.french), list(res.english)
        with col:
            show_figure(matrix_heatmap(res.weights, french, english,
                                       title=f"{TRAINED_NAMES[kind]}, trained", decimals=2,
                                       x_title="English", y_title="French",
                                       font_size=page.font - 2),
                        key=f"s2s_fig_trained_{kind}",
                        alt=f"{TRAINED_NAMES[kind]}, trained: French rows, English columns. "
                            + describe_matrix(res.weights, french, english, rows="French",
                                              cols="English"))
            st.caption(f"On held-out sentences: token accuracy {res.accuracy:.3f}; alignment "
                       f"score {res.score:.3f} (the share of target words whose largest weight "
                       "is on their source word).")
    st.markdown(trained_text(trained))


@st.fragment
def next_word_section(page: Page, h: np.ndarray, s: np.ndarray, params: s2s.Seq2SeqParams,
                      seed: int, src: list[str], tgt: list[str], results: dict) -> None:
    """One decoding step after attention: Bahdanau's GRU update and output from c_t,
    Luong's attentional state and output, with random (untrained) weights."""
    st.header("3 · What the decoder does with cₜ")
    t = bounded_slider(st, "Decoding step t (the target word to predict)", 1, len(tgt), 2,
                       key="s2s_next_step") - 1
    n, vocab = t + 1, s2s.target_vocabulary(tgt)
    dec = s2s.init_decoder(D, len(vocab), np.random.default_rng([seed, 1]))
    bah, lu = s2s.next_word_steps(h, s, tgt, t, params, dec)
    st.markdown(next_word_intro(tgt, n))
    left, right = st.columns(2)
    with left:
        st.subheader("Bahdanau: cₜ goes into the state")
        st.markdown(bahdanau_text(tgt, n))
        rows = [f"s{sub(n - 1)}", f"c{sub(n)}", f"z{sub(n)}", f"r{sub(n)}", f"s̃{sub(n)}",
                f"s{sub(n)}"]
        vectors = np.stack([bah.s_prev, bah.context, bah.z, bah.r, bah.candidate, bah.state])
        show_vectors(vectors, rows, f"Bahdanau's step {n}", "s2s_fig_bahdanau_step", page.font)
        st.markdown(gate_text(bah.z, n))
        show_output(bah.probs, vocab, f"Bahdanau: p(y{sub(n)}) from y{sub(n - 1)}, s{sub(n)} "
                    f"and c{sub(n)}", "s2s_fig_bahdanau_output", SERIES_COLOURS[0], page.font)
        st.markdown(next_word_text("Bahdanau", bah.probs, vocab, tgt[t], n))
        st.latex(r"\begin{aligned}"
                 r"z_t &= \mathrm{sigmoid}(W_z E y_{t-1} + U_z s_{t-1} + C_z c_t)\\"
                 r"r_t &= \mathrm{sigmoid}(W_r E y_{t-1} + U_r s_{t-1} + C_r c_t)\\"
                 r"\tilde s_t &= \tanh\big(W_{\tilde s} E y_{t-1} + U_{\tilde s}(r_t \circ "
                 r"s_{t-1}) \\ &\qquad + C_{\tilde s} c_t\big)\\"
                 r"s_t &= (1 - z_t) \circ s_{t-1} + z_t \circ \tilde s_t\\"
                 r"p(y_t) &= \mathrm{softmax}\big(W_o\, \mathrm{maxout}(U_o s_t + V_o E y_{t-1}"
                 r" \\ &\qquad + C_o c_t)\big)"
                 r"\end{aligned}")
    with right:
        st.subheader("Luong: cₜ is combined with the state")
        st.markdown(luong_text(n))
        vectors = np.stack([lu.state, lu.context, lu.attentional])
        show_vectors(vectors, [f"s{sub(n)}", f"c{sub(n)}", f"h̃{sub(n)}"],
                     f"Luong's step {n}", "s2s_fig_luong_step", page.font)
        st.markdown(luong_halves_text(lu, n))
        show_output(lu.probs, vocab, f"Luong: p(y{sub(n)}) = softmax(W_o h̃{sub(n)})",
                    "s2s_fig_luong_output", SERIES_COLOURS[2], page.font)
        st.markdown(next_word_text("Luong", lu.probs, vocab, tgt[t], n))
        st.latex(r"\begin{aligned}\tilde h_t &= \tanh(W_c [c_t; s_t])\\"
                 r"p(y_t) &= \mathrm{softmax}(W_o\, \tilde h_t)\end{aligned}")
    st.markdown(vocabulary_text(vocab))
    if not page.presenter:
        bullet_list("What is illustrative here, and how it differs from the papers",
                    illustrative_items(len(bah.maxout), D), expanded=False)
    keep(results, "next_word", {
        "step": n, "vocabulary": vocab,
        "bahdanau": {"s_prev": bah.s_prev, "Ey_prev": bah.ey_prev, "context": bah.context,
                     "z": bah.z, "r": bah.r, "candidate": bah.candidate, "state": bah.state,
                     "probs": bah.probs},
        "luong": {"state": lu.state, "context": lu.context, "attentional": lu.attentional,
                  "probs": lu.probs}})


def show_vectors(vectors: np.ndarray, rows: list[str], title: str, key: str,
                 font: int) -> None:
    """A stack of d-wide vectors as a heatmap, one row per vector."""
    dims = [f"{i + 1}" for i in range(vectors.shape[1])]
    show_figure(matrix_heatmap(vectors, rows, dims, title=title, kind="values", decimals=2,
                               x_title="dimension", y_title="vector", font_size=font),
                key=key, alt=f"{title}: " + describe_matrix(vectors, rows, dims, kind="values",
                                                           rows="vector", cols="dimension"))


def show_output(probs: np.ndarray, vocab: list[str], title: str, key: str, colour: str,
                font: int) -> None:
    """The output distribution over the vocabulary, as bars."""
    show_figure(bar_chart(vocab, probs, title=title, x_title="word", y_title="probability",
                          y_range=(0, 1.1), colour=colour, decimals=2, font_size=font),
                key=key, alt=describe_bars(vocab, probs, what=f"{title}, random parameters"))


@st.fragment(key="s2s_local")
def local_and_hard_sections(page: Page, h: np.ndarray, s: np.ndarray,
                            params: s2s.Seq2SeqParams, src: list[str], tgt: list[str],
                            results: dict) -> None:
    """Global against Luong's local attention in a window around p_t, then soft against
    hard attention, for the WINDOW_SCORE scores of one decoding step."""
    S = len(h)
    st.header("4 · Global against local attention")
    c1, c2, c3 = st.columns([3, 2, 2])
    with c1:
        t = bounded_slider(st, "Decoding step t (the query of sections 4 and 5)", 1, len(s),
                           LOCAL[0], key="s2s_local_step") - 1
    half = c2.slider("Window half-width D", 1, MAX_TOKENS, LOCAL[1], key="s2s_window", **URL)
    mode = c3.radio("Window centre p_t", ["monotonic", "predictive"], horizontal=True,
                    key="s2s_local_mode", **URL)
    st.session_state["s2s_window_shown"] = (t, half, mode)
    if st.session_state.get("s2s_window_drawn") != (t, half, mode):
        st.rerun()  # section 2's diagram draws this window: it runs again with it
    dot_scores, local = local_window(h, s, params, t, half, mode)
    centre = local.p_t + 1  # the core counts source positions from 0, the page from 1
    if note := window_note(local, half, S):
        st.info(note)
    left, right = st.columns(2)
    with left:
        show_figure(bar_chart(src, softmax(dot_scores),
                              title=f"Global (dot score), step {t + 1}",
                              x_title="source token", y_title="weight", y_range=(0, 1.1),
                              colour=SERIES_COLOURS[0], decimals=2, font_size=page.font),
                    key="s2s_fig_global",
                    alt=describe_bars(src, softmax(dot_scores),
                                      what=f"Global weights at step {t + 1}"))
    with right:
        show_figure(bar_chart(src, local.weights,
                              title=f"Local, p_t = {centre:.2f}, D = {half}",
                              x_title="source token", y_title="weight", y_range=(0, 1.1),
                              colour=SERIES_COLOURS[2], decimals=2, font_size=page.font),
                    key="s2s_fig_local",
                    alt=describe_bars(src, local.weights,
                                      what=f"Local weights around p_t = {centre:.2f}, D = "
                                           f"{half}"))
    st.markdown(local_text(local, mode, tgt[t], t + 1, half))
    st.latex(local_formula(mode))
    keep(results, "local", {"step": t + 1, "p_t_from_1": centre, "D": half,
                            "weights": local.weights})

    st.header("5 · Soft against hard attention")
    chosen, hard_context = s2s.hard_attention(dot_scores, h)
    soft_grad, hard_grad = s2s.context_gradient(dot_scores, h)
    left, right = st.columns(2)
    with left:
        st.markdown(soft_and_hard_text(src, t + 1, chosen, hard_context, h, WINDOW_SCORE,
                                       FORMULAS[WINDOW_SCORE]))
        grads = pd.DataFrame({"soft ‖dc/de_j‖": soft_grad, "hard ‖dc/de_j‖": hard_grad},
                             index=[f"{j + 1}: {w}" for j, w in enumerate(src)])
        # a static table: a data grid, drawn on a canvas, would redraw at each window control
        st.table(grads.map(lambda x: significant_text(x, 3)))  # 3.39×10⁻⁶, not 3.39e-06
    with right:
        st.markdown(hard_gradient_text(src, hard_grad))
        if not page.presenter:
            st.markdown(f"A low temperature τ (lessons 1 and 2) does not make soft "
                        f"attention hard: it makes it {term_link('sharp', 'sharp')}, its "
                        "weight concentrated on the largest scores but still smooth, with a "
                        "gradient everywhere, though a very sharp one saturates and that "
                        "gradient all but vanishes (lesson 2). Only its limit is the argmax.")
    keep(results, "hard", {"step": t + 1, "chosen_from_1": chosen + 1,
                           "soft_gradient": soft_grad, "hard_gradient": hard_grad})


def closing_notes(page: Page) -> None:
    """What to notice and, off the projector, things to try and questions."""
    bullet_list("What to notice", NOTICE_ITEMS)
    if page.presenter:
        return
    bullet_list("Try this", [
        "Type “Le chat noir” as the target and “the black cat” as the source with Luong dot.",
        "Set D = 1 with a monotonic window and step through the sentence.",
        "Make the source much longer than the target, then try the predictive window.",
        "Switch Bahdanau and Luong and compare the alignment matrices.",
    ], expanded=False)
    practice_questions("s2s", [
        {"q": f"How many parameters has Luong's general score when d = {D}?",
         "value": float(score_parameter_count("general", D, D)), "tol": 0.5,
         "a": f"W is d × d = {D} × {D} = {score_parameter_count('general', D, D)}."},
        {"q": "Why can't hard attention be trained by plain backpropagation?",
         "a": "Its output is one chosen state; a small change of the scores does not change "
              "the choice, so the derivative is 0 (and undefined where the choice flips)."},
        {"q": "Which decoder state does Bahdanau attention use at step t, and which does "
              "Luong's?",
         "a": "Bahdanau: the previous state sₜ₋₁ (attention feeds the new state). Luong: "
              "the current state sₜ (attention is computed after the state)."},
        {"q": f"How many entries has Luong's W_c when d = {D}?",
         "value": float(D * 2 * D), "tol": 0.5,
         "a": f"W_c maps [cₜ; sₜ], {2 * D} numbers, to h̃ₜ, {D}: it is d × 2d = {D} × "
              f"{2 * D} = {D * 2 * D}."},
    ])


def download_matrices(results: dict, h: np.ndarray, s: np.ndarray) -> dict:
    """The matrices the sections show now, and the encoder and decoder states: name ->
    (matrix, row labels, column labels)."""
    src, tgt = results["source"], results["target"]
    dims = [f"{i + 1}" for i in range(D)]
    return dict(zip(DOWNLOADS, [(results["alignment"], tgt, src), (results["scores"], tgt, src),
                                (results["contexts"], tgt, dims), (h, src, dims),
                                (s, tgt, dims)], strict=True))


def download_trace(results: dict) -> dict:
    """Everything the sections show now, for the JSON download."""
    return results


with lesson_page("s2s") as page:
    src, tgt, seed = sentences()
    params = s2s.init_seq2seq(D, np.random.default_rng(seed))
    with bad_input_stops_page():
        h = s2s.encode(src, params)
        s = s2s.decoder_states(tgt, params)
    results = {"source": src, "target": tgt}
    offer_downloads(results, None if page.presenter else DOWNLOADS)  # none on a projector
    scores_section(page, h, s, params, src, tgt, results)
    alignment_section(page, h, s, params, src, tgt, results)
    trained_section(page)
    next_word_section(page, h, s, params, seed, src, tgt, results)
    local_and_hard_sections(page, h, s, params, src, tgt, results)
    closing_notes(page)
    page.downloads(results, lambda kept_now: download_matrices(kept_now, h, s), download_trace)
