"""Lesson 12: what attention does for the answer — the logit lens, direct logit
attribution, activation patching and attention knockout on SmolLM2 (or a model the server's
operator lists)."""

import numpy as np
import pandas as pd
import streamlit as st

from attncore import lm
from attncore.lm import answer, pair, patching
from attncore.results_cache import is_kept, kept
from pages.text.attention_for_the_answer import (
    HALF,
    LENS_CAVEAT,
    WINDOW_REASON,
    agreement_text,
    attribution_intro,
    attribution_sum_text,
    carrier_lines,
    carrier_runs,
    changed_names,
    components,
    embedding_back_text,
    first_row_text,
    formula_terms,
    gap_warning,
    heads_text,
    knockout_alt,
    knockout_definition,
    knockout_text,
    labelled_heads,
    labelled_text,
    largest_part_caption,
    largest_parts_alt,
    largest_parts_title,
    ld_text,
    lens_alt,
    lens_text,
    looks_lines,
    move_layers,
    moved_into,
    moved_text,
    moving_text,
    pair_text,
    patching_note,
    position_labels,
    seconds_caption,
)
from pages.ui.answer_view import (
    carrier_cell,
    closing_notes,
    handoff_cell,
    looks_figure,
    practice,
    show_runs,
)
from pages.ui.controls import URL, bounded_slider
from pages.ui.figures import (
    bar_chart,
    describe_matrix,
    line_chart,
    matrix_heatmap,
    spoken_token,
)
from pages.ui.glossary import term_link
from pages.ui.labels import md_escape, token_code
from pages.ui.layout import show_error, show_figure, stop_page
from pages.ui.live import offer_downloads
from pages.ui.lm import load_language_model, model_name, model_note
from pages.ui.numbers import number_text, probability_text, significant_text
from pages.ui.page import Page, lesson_page
from pages.ui.shared import measured
from pages.ui.tables import scrolled_table

OWN = "Your own pair"
LARGEST = 12  # components shown in the attribution chart
STUDY = "lesson12-study"  # the kept presets' name beside the model's cache


def default_window(n_layers: int) -> int:
    """The knockout window's default, answer.KNOCKOUT_WINDOW layers (1: why is
    WINDOW_REASON), within the model's layers."""
    return min(answer.KNOCKOUT_WINDOW, n_layers)


def introduction() -> None:
    st.markdown(
        "Lessons 9 and 10 show where every head *looks*. Does that explain what the model "
        "*answers*? The test here is causal. Run a **clean** prompt (\"The capital of France "
        "is\") and a **corrupted** one that differs in one word (\"... Italy is\"). Measure "
        "how much the model prefers the clean answer by the "
        f"{term_link('logit-difference', 'logit difference')} "
        "LD = logit(answer) − logit(wrong answer) at the last position: the model's odds "
        "of the answer against the wrong one are $e^{LD}$ : 1 (below, for the pair chosen). "
        "Then run the corrupted prompt again with one piece of the clean run put back, and "
        "see how much of the clean LD returns.")


def choose_texts(page: Page) -> tuple[str, tuple[str, str, str, str]]:
    """The preset chosen, and its four texts (or the student's own)."""
    with st.expander("The prompts") if page.presenter else st.container():
        choice = st.selectbox("Pair of prompts", [*answer.PRESETS, OWN], key="ans_preset",
                              help="Presets are computed once on this machine and kept; your "
                                   "own pair runs on request.", **URL)
        texts = answer.PRESETS.get(choice, answer.PRESETS["A capital city"])
        if choice == OWN:
            c1, c2 = st.columns(2)
            clean = c1.text_input("Clean prompt", texts[0], key="ans_clean", max_chars=200,
                                  **URL)
            corrupt = c2.text_input("Corrupted prompt (as many tokens, a word changed)",
                                    texts[1], key="ans_corrupt", **URL, max_chars=200)
            c3, c4 = st.columns(2)
            answer_text = c3.text_input("Answer (one token; a leading space if it follows a "
                                        "word)", texts[2], key="ans_answer", **URL, max_chars=40)
            wrong = c4.text_input("Wrong answer (the corrupted prompt's answer)", texts[3],
                                  key="ans_wrong", max_chars=40, **URL)
            texts = (clean, corrupt, answer_text, wrong)
    return choice, texts


def checked_pair(m: lm.LanguageModel, choice: str, texts: tuple) -> pair.Pair:
    """The pair these texts make; the core's refusal, said kindly, stops the page (the
    controls above stay)."""
    try:
        return pair.make_pair(m, *texts)
    except ValueError as exc:
        show_error(exc)
        if choice != OWN:
            st.info(f"The presets are written for SmolLM2's tokenizer, and "
                    f"{md_escape(model_name(m))} splits this one otherwise. Choose “Your own "
                    "pair” and type a pair whose two prompts have as many tokens, and whose "
                    "answers are one token each, for this model.")
        stop_page()


def the_study(m: lm.LanguageModel, the_pair: pair.Pair, choice: str, texts: tuple
              ) -> answer.AnswerStudy:
    """The pair's study: a preset's kept on this machine for every student, the first
    preset's computed at once; a student's own pair on a click. Stops the page until
    there is one."""
    def compute(progress_text: str) -> answer.AnswerStudy:
        bar = st.progress(0.0, text=progress_text)
        result = answer.study(m, the_pair, lambda done, what: bar.progress(
            min(done, 1.0), text=f"{progress_text}: {what}"))
        bar.empty()
        return result

    settings = {"texts": list(texts), "model": m.sha256}

    def study_of_preset() -> answer.AnswerStudy:
        """Computed once per machine and version of the code, kept beside the model's
        cache (every server process and restart reads it)."""
        return kept(STUDY, settings, answer,
                    lambda: compute("Once on this machine: computing the preset"))

    is_preset = choice != OWN
    automatic = is_preset and (choice == next(iter(answer.PRESETS))
                               or is_kept(STUDY, settings, answer))
    study = measured(
        "answer", (m.sha256, *texts),
        study_of_preset if is_preset else (lambda: compute("Patching your pair")),
        automatic=automatic, label="Patch this pair", key="ans_run",
        note=patching_note(m.config.n_layers, m.config.n_heads, the_pair.n_tokens, is_preset))
    if study is None:
        stop_page()
    return study


def headline(page: Page, study: answer.AnswerStudy) -> None:
    """Both LDs and p(answer), and a warning when recovery would mislead."""
    ans, wrong = study.pair.answer_token, study.pair.wrong_token
    if not page.presenter:
        st.caption(seconds_caption(study.seconds))
    st.markdown(ld_text(study.ld_clean, study.ld_corrupt, ans, wrong))
    c1, c2, c3 = st.columns(3)
    c1.metric("LD, clean prompt", number_text(study.ld_clean, 2))
    c2.metric("LD, corrupted prompt", number_text(study.ld_corrupt, 2))
    c3.metric(f"p({token_code(ans)}): clean → corrupted",
              f"{number_text(study.p_clean, 3)} → {significant_text(study.p_corrupt, 2)}")
    warning = gap_warning(study.ld_clean, study.ld_corrupt, ans)
    if warning:
        st.warning(warning)


def lens_section(page: Page, m: lm.LanguageModel, study: answer.AnswerStudy) -> None:
    st.header("1 · The logit lens: each layer's guess")
    L, ans = m.config.n_layers, study.pair.answer_token
    layers_axis, rank = np.arange(L + 1), study.lens.rank
    if not page.presenter:
        final_norm = "RMSNorm" if m.config.norm == "rms" else "LayerNorm"
        st.markdown(
            f"The {term_link('logit-lens', 'logit lens')} puts the "
            f"{term_link('residual-stream', 'stream')} at the last position through the final "
            f"{final_norm} and the output matrix after every layer, as if the model stopped "
            f"there. Row 0 is the token's embedding; after layer {L} this is the model's own "
            "answer.")
    show_figure(line_chart(layers_axis, {f"rank of {ans}": rank}, title=f"Rank of {ans} "
                           "after each layer (1 = the top guess)", x_title="after layer",
                           y_title="rank", log_y=True, font_size=page.font),
                key="ans_fig_lens", alt=lens_alt(rank, spoken_token(ans)))
    st.markdown(lens_text(rank, ans) + ("" if page.presenter else " " + LENS_CAVEAT))
    if not page.presenter:
        shown = [probability_text(p, 3) for p in study.lens.p_top]
        scrolled_table(pd.DataFrame({
            "after layer": layers_axis, "top token": lm.pieces(m, study.lens.top),
            "p(top)": shown, f"rank of {ans}": rank,
            f"p({ans})": [probability_text(p, 3) for p in study.lens.p_answer]}), height=260)
        st.caption(first_row_text(answer.first_guess(m, study.runs), study.lens.p_top[0],
                                  m.config.positions == "learned"))


def attribution_section(page: Page, m: lm.LanguageModel, study: answer.AnswerStudy) -> None:
    st.header("2 · The answer, split exactly")
    cfg, dla = m.config, study.attribution
    has_biases = cfg.biases  # GPT-2: the attention layers' b_O and the final norm's bias
    names, parts = components(dla, has_biases)
    order = np.argsort(-np.abs(parts), kind="stable")[:LARGEST]
    if not page.presenter:
        st.markdown(attribution_intro(dla, cfg.positions == "learned", has_biases,
                                      cfg.norm == "rms"))
        u = r"\big(W_U[\text{answer}] - W_U[\text{wrong}]\big)"
        st.latex(rf"LD = \sum_c \frac{{c}}{{\mathrm{{rms}}}} \odot g \cdot {u}"
                 if cfg.norm == "rms" else
                 rf"LD = \sum_c \frac{{c - \bar c}}{{\sigma}} \odot g \cdot {u} + b \cdot {u}")
        st.markdown(formula_terms(cfg.norm == "rms"))
    show_runs(page, study, "attribution", "split", biases=has_biases)
    shown = [names[k] for k in order]
    show_figure(bar_chart(shown, parts[order],
                          title=largest_parts_title(LARGEST, study.ld_clean),
                          x_title="component", y_title="part of LD", decimals=2,
                          font_size=page.font),
                key="ans_fig_dla", alt=largest_parts_alt(shown, parts[order]))
    st.markdown(attribution_sum_text(dla, has_biases))
    if not page.presenter:
        st.caption(largest_part_caption(names, parts))


def residual_section(page: Page, study: answer.AnswerStudy) -> tuple[int, int] | None:
    """Section 3's residual grid and where the answer sits; the layers (first, last, from 1)
    inside which it moves to the last token, if it does."""
    st.header("3 · Activation patching: where the answer travels")
    if not page.presenter:
        st.markdown(
            "Run the corrupted prompt, but put back one activation from the clean run, and "
            "measure how much of the clean LD returns:")
        st.latex(r"\text{recovery} = \frac{LD_\text{patched} - LD_\text{corrupted}}"
                 r"{LD_\text{clean} - LD_\text{corrupted}}")
        st.markdown("0: the patch changes nothing; 1: the patched run prefers the answer as "
                    "much as the clean one (more than 1, or below 0, happen too).")
    the_pair, residual = study.pair, study.residual
    runs = carrier_runs(residual, the_pair)
    into = moved_into(runs)
    layer, position = carrier_cell(study, into)
    show_runs(page, study, "residual", "residual", layer=layer, position=position)
    tokens = position_labels(the_pair)
    layer_names = [str(n + 1) for n in range(residual.shape[0])]  # columns: layers
    lines = carrier_lines(runs, the_pair)
    # the grid is wide: the list goes below it
    show_figure(matrix_heatmap(residual.T, tokens, layer_names, kind="values", decimals=2,
                               title="Recovery: the clean stream at one position, entering "
                                     "one layer", x_title="stream entering layer",
                               y_title="position patched", font_size=page.font),
                key="ans_fig_residual",
                alt="Residual-stream patching. Which position carries the answer, "
                    f"{'; '.join(lines)}. " + describe_matrix(
                        residual.T, tokens, layer_names, kind="values", rows="position",
                        cols="stream entering layer"))
    st.markdown(f"**Where the answer's information sits** (the position whose patch "
                f"restores at least {HALF:g} of it):")
    st.markdown("\n".join(f"- {line}" for line in lines))
    changed = the_pair.changed
    if changed[0] > 0 and not page.presenter:
        st.caption("Positions before the first changed token are exactly 0 and were not "
                   "run: a causal model's stream there is the same in both runs (lesson 10's "
                   "check), so putting it back changes nothing.")
    if len(changed) == 1 and not page.presenter:
        st.caption(embedding_back_text(residual[0, changed[0]]))
    if into is None:
        return None
    layers = move_layers(residual, the_pair, into)
    st.markdown(moved_text(the_pair, layers, residual[:, -1]))
    return layers


def heads_section(page: Page, study: answer.AnswerStudy, layers: tuple[int, int] | None
                  ) -> None:
    heads, (layer, head, _) = study.heads, study.top_heads(1)[0]
    show_runs(page, study, "head", "heads", layer=layer, head=head)
    rows = [f"H{h + 1}" for h in range(heads.shape[1])]
    cols = [str(n + 1) for n in range(len(heads))]
    show_figure(matrix_heatmap(heads.T, rows, cols, kind="values", decimals=2,
                               title="Recovery: one head's clean output (before W_O) at every "
                                     "position", x_title="layer", y_title="head patched",
                               font_size=page.font),
                key="ans_fig_heads", alt="Head patching. " + describe_matrix(
                    heads.T, rows, cols, kind="values", rows="head", cols="layer"))
    top = study.top_heads(5)
    st.markdown(heads_text(heads, top))
    agreement = agreement_text(top, layers)
    if agreement:
        st.success(agreement)


@st.fragment
def knockout_section(page: Page, m: lm.LanguageModel, study: answer.AnswerStudy,
                     texts: tuple) -> None:
    """Section 4: the window slider reruns this section only."""
    ans, cut = study.pair.answer_token, changed_names(study.pair)
    L = m.config.n_layers
    st.markdown(knockout_definition(cut, ans))  # on the projector too, beside its chart
    window = bounded_slider(st, "Layers in each window", 1, L, default_window(L),
                            key="ans_window")
    if not page.presenter:
        st.caption(WINDOW_REASON)
    windows, probs, p_none = measured(
        "knockout", (m.sha256, texts, int(window)),
        lambda: patching.knockout(m, study.runs, int(window)), automatic=True,
        label="Knock out", key="ans_knock", note="")
    worst = int(np.argmin(probs))
    show_runs(page, study, "knockout", "knockout", window=windows[worst],
              p_answer=(p_none, float(probs[worst])))
    firsts = np.arange(len(windows)) + 1
    show_figure(line_chart(firsts, {f"p({ans}), edge cut": probs,
                                    "nothing cut": np.full(len(windows), p_none)},
                           title=f"p({ans}) with the last token blind to {cut} in "
                                 f"{window} layer{'s' if window > 1 else ''}",
                           x_title="first layer of the window", y_title=f"p({ans})",
                           dashed=("nothing cut",), font_size=page.font),
                key="ans_fig_knockout",
                alt=knockout_alt(windows, probs, p_none, spoken_token(ans)))
    st.markdown(knockout_text(windows, probs, p_none, ans))


def looks_section(page: Page, study: answer.AnswerStudy) -> None:
    st.header("5 · Is attention an explanation?")
    looks, heads = study.looks, study.heads
    first_token = study.runs.clean["weights"][:, :, -1, 0].astype(np.float64)  # (L, H)
    top = study.top_heads(5)
    strong, idle = labelled_heads(looks, heads, top)
    looks_figure(page, study, top, strong + idle, changed_names(study.pair))
    st.caption(labelled_text(len(top), len(strong) > len(top), idle, study.pair))
    lines = looks_lines(looks, heads, first_token, top, study.pair)
    st.markdown("\n".join(f"- {line}" for line in lines))
    if not page.presenter:
        st.markdown(
            "It is often said that attention weights show how the model reaches its "
            "decision. This page tests that claim: a weight says where a "
            "head reads, not what it writes, nor whether later layers use it. Lesson 9 made "
            "the same point by switching heads off: a clear pattern does not say how much a "
            "head changes the result. Attention is evidence about the answer; patching is "
            "the test.")


def download_matrices(results: dict) -> dict:
    """The grids the page shows, layer by row: name -> (matrix, rows, columns)."""
    study = results["study"]
    L, H = study.heads.shape
    rows, head_names = [f"layer {n + 1}" for n in range(L)], [f"H{h + 1}" for h in range(H)]
    return {
        "head recovery (layer × head)": (study.heads, rows, head_names),
        "residual recovery (layer × position)": (study.residual, rows,
                                                 position_labels(study.pair)),
        "direct attribution of each head": (study.attribution.heads, rows, head_names),
        "attention from the last token to the changed token": (study.looks, rows, head_names),
    }


def download_trace(results: dict) -> dict:
    """The command line's JSON for this pair (python -m attncore.lm patch), with the
    knockout at its default window."""
    m = results["model"]
    return answer.summary(m, results["study"], results["texts"],
                          default_window(m.config.n_layers))


with lesson_page("ans") as page:
    m = load_language_model()
    if m is None:
        stop_page()
    model_note(m, page.presenter)
    if not page.presenter:
        introduction()
    choice, texts = choose_texts(page)
    the_pair = checked_pair(m, choice, texts)
    if not page.presenter:
        st.markdown(pair_text(the_pair))
    if not texts[2].startswith(" ") and not texts[0].endswith(" "):
        st.caption(f"The answer {token_code(the_pair.answer_token)} has no leading space: the "
                   "model would write it glued to the last word. Most words after a word are "
                   "tokens that start with a space.")
    study = the_study(m, the_pair, choice, texts)
    top_layer, last = handoff_cell(study, moved_into(carrier_runs(study.residual, the_pair)))
    show_runs(page, study, "residual", "top", layer=top_layer, position=last, prompts=True)
    headline(page, study)
    lens_section(page, m, study)
    attribution_section(page, m, study)
    layers = residual_section(page, study)
    heads_section(page, study, layers)
    st.header("4 · Attention knockout: cut one edge in a window of layers")
    knockout_section(page, m, study, texts)
    looks_section(page, study)
    closing_notes(moving_text(study.heads))
    results = {"model": m, "study": study, "texts": texts}
    offer_downloads(results, None if page.presenter else list(download_matrices(results)))
    page.downloads(results, download_matrices, download_trace)
    practice(m.config.n_layers, m.config.n_heads)
