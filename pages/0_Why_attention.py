"""Lesson 0: why attention exists — a fixed-size context against attention, trained live."""

from dataclasses import asdict

import numpy as np
import pandas as pd
import streamlit as st

from attncore import copying
from attncore.recurrence import compare_layers
from attncore.results_cache import kept
from attncore.train import bottleneck as bn
from pages.text.why_attention import (
    LETTERS,
    alignment_text,
    bahdanau_text,
    comparison_text,
    coverage_text,
    forced_text,
    introduction_text,
    layers_lead,
    layers_text,
    length_text,
    notice_items,
    position_text,
    predict_text,
    progress_text,
    step_text,
    symbol,
)
from pages.ui.controls import URL, bounded_slider, seed_input
from pages.ui.copying_view import (
    DECIMALS,
    WRONG,
    context_line,
    example_table,
    output_line,
    score_lines,
    softmax_line,
)
from pages.ui.figures import (
    bar_chart,
    describe_bars,
    describe_lines,
    describe_matrix,
    line_chart,
    matrix_heatmap,
)
from pages.ui.figures.models import bottleneck_models
from pages.ui.glossary import term_link
from pages.ui.layout import (
    bullet_list,
    practice_questions,
    show_diagram,
    show_figure,
    stop_page,
)
from pages.ui.live import offer_downloads
from pages.ui.page import Page, lesson_page
from pages.ui.shared import measured

DEFAULT = bn.BottleneckConfig()
WIDTHS = [8, 16, 24, 32, 48, 64]
DOWNLOADS = ["accuracy by length", "fixed model: accuracy by position",
             "fixed model: teacher-forced accuracy by position", "alignment of the example"]
STEP = 3  # the output step taken apart at first (or the last, in a shorter string)
BLANK_BELOW = 0.05  # the alignment's cells print their weight from this value on


def training_settings(page: Page) -> bn.BottleneckConfig:
    """The controls (in an expander on a projector), and the settings they give, with the
    steps capped to what trains within the time budget."""
    with st.expander("Training settings") if page.presenter else st.container():
        cols = st.columns(5)
        d_model = cols[0].select_slider("Width d", WIDTHS, value=DEFAULT.d_model,
                                        key="why_width", help="Numbers per state vector.",
                                        **URL)
        lo = cols[1].slider("Shortest training string", 1, bn.MAX_LENGTH, DEFAULT.min_length,
                            key="why_shortest", **URL)
        hi = bounded_slider(cols[2], "Longest training string", lo, bn.MAX_LENGTH,
                            DEFAULT.max_length, key="why_longest")
        steps = cols[3].select_slider("Training steps",
                                      [100, 200, 400, 600, 800, 1000, 1200, 1500],
                                      value=DEFAULT.steps, key="why_steps", **URL)
        seed = seed_input(cols[4], "why_seed")
    most = bn.max_steps(int(d_model), int(lo), int(hi))
    if steps > most:  # the caps keep any training under half a minute
        st.info(f"At width {d_model} with strings of up to {hi} letters, at most {most} steps "
                f"train within {bn.LIMIT_SECONDS:.0f} s on this machine's budget: the models "
                f"train for {most} steps, not {steps}.")
        steps = most
    return bn.BottleneckConfig(seed=seed, d_model=int(d_model), min_length=int(lo),
                               max_length=int(hi), steps=int(steps))


def train_both(config: bn.BottleneckConfig) -> bn.BottleneckResult:
    bar = st.progress(0.0, text="Training the two models")

    def progress(done: int, total: int) -> None:
        bar.progress(done / total, text=progress_text(done, total))

    result = bn.train_bottleneck(config, progress)
    bar.empty()
    return result


def train_or_read(config: bn.BottleneckConfig) -> bn.BottleneckResult:
    """The defaults are kept on disk, once per machine and version of the training code
    (every server process and restart reads them); other settings train on request."""
    if config != DEFAULT:
        return train_both(config)
    return kept("lesson0-bottleneck", asdict(config), bn, lambda: train_both(config))


def draw_models(slot, page: Page, source, step: int, weights) -> None:
    """The two models on the example string at output step ``step``, drawn into ``slot``
    at the top of the page; ``weights`` is None before the models are trained."""
    letters = [symbol(int(x)) for x in source]
    with slot:
        show_diagram(bottleneck_models(letters, step, weights, page.font),
                     key=page.key("diagram_models"))


def linked_step(T: int) -> int:
    """The step slider's value (this session's, else the link's) in 1..T, before the
    slider is drawn; STEP (or T) when it has none yet."""
    value = st.session_state.get("why_step", st.query_params.get("why_step"))
    try:
        return min(max(int(value), 1), T)
    except (TypeError, ValueError):
        return min(STEP, T)


def trained_models(page: Page, config: bn.BottleneckConfig, slot) -> bn.BottleneckResult:
    """Both models at these settings: at once for the defaults or settings trained before
    on this server, else after the button; until there is a result the page draws the
    models untrained in ``slot`` and stops."""
    settings = (config.seed, config.d_model, config.min_length, config.max_length,
                config.steps)
    holder = st.empty()  # the button and its note, cleared once the models are trained
    with holder.container():
        result = measured(
            "bottleneck", settings, lambda: train_or_read(config),
            automatic=config == DEFAULT,
            label="Train both models", key="why_train",
            note="These settings have not been trained on this server yet: press the button "
                 "to train both models (a progress bar shows how far; up to about half a "
                 "minute at the largest settings). A result is kept for every student of "
                 "this server.",
        )
    if result is None:
        source = bn.example_string(config.seed)
        draw_models(slot, page, source, linked_step(len(source)), None)
        stop_page()
    holder.empty()
    return result


def two_columns(page: Page):
    """A figure and its text side by side: the figure wider, except on a projector."""
    return st.columns([1, 1]) if page.presenter else st.columns([3, 2])


def accuracy_section(page: Page, config: bn.BottleneckConfig, result: bn.BottleneckResult,
                     results: dict) -> copying.LengthReading:
    st.header("1 · Accuracy against length")
    lengths, acc = result.lengths, result.accuracy
    reading = copying.length_reading(lengths, acc, config.min_length, config.max_length)
    run = result.config  # the steps trained, after any cap
    seen = copying.training_coverage(lengths, run.min_length, run.max_length, run.steps,
                                     run.batch, bn.SYMBOLS)
    st.markdown(comparison_text(run.n_test, int(lengths[0]), int(lengths[-1]), bn.SYMBOLS,
                                seen))
    left, right = two_columns(page)
    with left:
        chance = f"chance (1/{bn.SYMBOLS})"
        series = {"attention": acc["attention"], "fixed context": acc["fixed"],
                  chance: np.full(len(lengths), result.chance)}
        fig = line_chart(lengths, series, title="Token accuracy against string length",
                         x_title="string length", y_title="token accuracy (greedy)",
                         dashed=(chance,), font_size=page.font, height=400)
        fig.add_vrect(x0=config.min_length - 0.5, x1=config.max_length + 0.5, layer="below",
                      fillcolor="#888888", opacity=0.15, line_width=0)
        show_figure(fig, key="why_fig_accuracy",
                    alt=f"Lengths {config.min_length} to {config.max_length} were trained "
                        "(shaded). " + describe_lines(lengths, series, x_title="length",
                                                      y_title="Token accuracy"))
    with right:
        st.markdown(length_text(reading, result.chance))
        if not page.presenter:
            st.markdown(bahdanau_text())
    results[DOWNLOADS[0]] = (np.column_stack([acc["attention"], acc["fixed"]]),
                             [str(int(n)) for n in lengths], ["attention", "fixed"])
    return reading


def positions_section(page: Page, config: bn.BottleneckConfig, result: bn.BottleneckResult,
                      longest: int, results: dict) -> None:
    st.header("2 · What the fixed context forgets")
    greedy, forced = result.position_accuracy["fixed"], result.forced_position_accuracy["fixed"]
    reading = copying.position_reading(result.lengths, greedy, longest)
    shown, grid = reading.shown_lengths, reading.grid
    rows = [f"length {n}" for n in shown]
    positions = [str(p) for p in range(1, grid.shape[1] + 1)]
    st.markdown(predict_text(longest))
    left, right = two_columns(page)
    with left:
        show_figure(matrix_heatmap(grid, rows, positions,
                                   title="Fixed context: accuracy at each output position",
                                   decimals=1, x_title="output position",
                                   y_title="string length", font_size=page.font, height=520),
                    key="why_fig_positions",
                    alt="Fixed-context model, the fraction of right letters at each output "
                        "position, greedy decoding (blank past each length). "
                        + describe_matrix(grid, rows, positions, kind="values",
                                          rows="string length", cols="output position"))
    with right:
        st.markdown(position_text(reading, config.d_model))
    both = copying.forced_reading(result.lengths, greedy, forced, longest)
    left, right = two_columns(page)
    with left:
        at = np.arange(1, longest + 1)
        series = {"teacher forcing": both.forced, "greedy": both.greedy}
        show_figure(line_chart(at, series, title=f"Fixed context at length {longest}: "
                               "two ways to decode", x_title="output position",
                               y_title="token accuracy", font_size=page.font, height=380),
                    key="why_fig_forced",
                    alt=describe_lines(at, series, x_title="output position",
                                       y_title="Token accuracy"))
    with right:
        st.markdown(forced_text(both))
    results[DOWNLOADS[1]] = (grid, rows, positions)
    results[DOWNLOADS[2]] = (copying.position_reading(result.lengths, forced, longest).grid,
                             rows, positions)


def alignment_section(page: Page, config: bn.BottleneckConfig, result: bn.BottleneckResult,
                      results: dict) -> copying.AlignmentReading:
    st.header("3 · What attention does instead")
    example = result.example["attention"]
    source = [int(i) for i in example.source[0]]
    weights = example.weights[0]  # (T, T): output step t, source position j
    T = len(source)
    src_labels = [f"{s + 1}·{symbol(x)}" for s, x in enumerate(source)]
    out_labels = [f"t={t + 1}: {symbol(int(y))}" for t, y in enumerate(example.tokens[0])]
    reading = copying.alignment_reading(weights, result.offset_weights, bn.OFFSETS)
    left, right = two_columns(page)
    with left:
        show_figure(matrix_heatmap(weights, out_labels, src_labels, decimals=1,
                                   blank_below=BLANK_BELOW,
                                   title=f"Attention weights α_tj while copying {T} letters",
                                   x_title="source position j (letter)",
                                   y_title="output step t (letter written)",
                                   font_size=page.font, height=520),
                    key="why_fig_alignment",
                    alt=f"Alignment of the attention model on one string of {T} letters "
                        f"(rows: output step, columns: source position; weights of "
                        f"{BLANK_BELOW} or more printed to 1 decimal). "
                        + describe_matrix(weights, out_labels, src_labels, rows="output step",
                                          cols="source position"))
    with right:
        st.markdown(alignment_text(reading, result.earlier, result.config.n_test,
                                   config.max_length))
    written = {name: [symbol(int(y)) for y in result.example[model].tokens[0]]
               for name, model in (("fixed context", "fixed"), ("attention", "attention"))}
    st.markdown(f"This string as both models wrote it ({WRONG}: a wrong letter):")
    st.table(example_table([symbol(x) for x in source], written))
    results[DOWNLOADS[3]] = (weights, out_labels, src_labels)
    return reading


@st.fragment(key="why_one_step")
def one_step(page: Page, config: bn.BottleneckConfig, result: bn.BottleneckResult,
             slot) -> None:
    """One decoding step of the attention model, taken apart (reruns alone), and the
    models at the top of the page (in ``slot``) at the same step: a fragment's writes to a
    container outside it are redrawn in place when it reruns alone."""
    st.subheader("One decoding step by hand")
    example = result.example["attention"]
    source = [int(i) for i in example.source[0]]
    letters = [symbol(x) for x in source]
    src_labels = [f"{s + 1}·{letter}" for s, letter in enumerate(letters)]
    T = len(source)
    t = st.slider("Output step t", 1, T, min(STEP, T), key="why_step", **URL)
    draw_models(slot, page, source, t, example.weights[0][t - 1])  # the alignment's row t
    step = bn.trace_step(result.runs["attention"].params, example.source[0], t)
    check = copying.step_reading(step.weights, example.encoder_states[0], step.context,
                                 step.update, decimals=DECIMALS)
    by_hand = copying.step_arithmetic(step, example.encoder_states[0])
    st.latex(r"e_{tj} = v_a^\top \tanh(W_a s_{t-1} + U_a h_j),\quad "
             r"\alpha_{tj} = \frac{\exp(e_{tj})}{\sum_{j'} \exp(e_{tj'})},\quad "
             r"c_t = \sum_j \alpha_{tj} h_j")
    st.latex(r"s_t = \mathrm{GRU}\big([\,E_y y_{t-1};\ c_t\,],\ s_{t-1}\big),\quad "
             r"p(y_t) = \mathrm{softmax}\big(W_{\mathrm{out}} [\,s_t;\ c_t\,] "
             r"+ b_{\mathrm{out}}\big)")
    st.caption("E_y: the decoder's embedding table, a row per letter and one for the start "
               "mark; W_out and b_out: the output layer, which reads s_t and c_t.")
    st.markdown(f"**Scores** at step {t}, written out for position {by_hand.position} (the "
                "largest weight), then for every position with the softmax's terms:")
    for line in score_lines(by_hand, letters):
        st.latex(line)
    st.markdown("**Weights**: subtract the largest score e_(t,max) (the weights stay the "
                "same), exponentiate, divide by the sum Z:")
    st.latex(softmax_line(by_hand))
    st.markdown("**Context**: the encoder states weighted by α, the largest written out:")
    st.latex(context_line(by_hand))
    st.markdown("**Output**: W_out's columns that read s_t and those that read c_t, plus "
                "b_out, "
                f"give each letter's {term_link('logit', 'logit')}; the letter written and the "
                "runner-up:")
    st.latex(output_line(by_hand, LETTERS))
    left, right = st.columns(2)
    with left:
        show_figure(bar_chart(src_labels, step.weights, title=f"Weights α_t at step {t}",
                              x_title="source position (letter)", y_title="weight",
                              y_range=(0, 1), decimals=2, font_size=page.font),
                    key="why_fig_step_weights",
                    alt=describe_bars(src_labels, step.weights,
                                      what=f"Attention weights at output step {t}"))
    with right:
        show_figure(bar_chart(list(LETTERS), step.probabilities,
                              title=f"p(y_t) at step {t}: the letter to write",
                              x_title="letter", y_title="probability", y_range=(0, 1),
                              decimals=2, font_size=page.font),
                    key="why_fig_step_output",
                    alt=describe_bars(list(LETTERS), step.probabilities,
                                      what=f"Output probabilities at step {t}"))
    st.markdown(step_text(step, check, source, config.d_model))


def layers_section(config: bn.BottleneckConfig) -> None:
    st.header("4 · From recurrence to self-attention")
    compared = compare_layers(int(config.max_length), int(config.d_model))
    st.markdown(layers_lead(compared))
    st.table(pd.DataFrame({
        "recurrent layer (GRU)": [f"{compared.rnn_steps:,}", f"{compared.rnn_path:,}",
                                  f"{compared.gru_multiply_adds:,} (6·n·d², input width d)"],
        "self-attention layer": [f"{compared.attention_steps:,}", f"{compared.attention_path:,}",
                                 f"{compared.attention_multiply_adds:,} (2·n²·d) + "
                                 f"{compared.projection_multiply_adds:,} (4·n·d², projections)"],
    }, index=["sequential steps", "longest path between two tokens (steps)",
              "multiply-adds per layer"]))
    st.markdown(layers_text(compared))


def closing_notes(page: Page, config: bn.BottleneckConfig, result: bn.BottleneckResult,
                  lengths: copying.LengthReading, alignment: copying.AlignmentReading) -> None:
    """What to notice, the two models' formulas, things to try and questions."""
    bullet_list("What to notice", notice_items(lengths, alignment, result.parameters,
                                                  result.config.n_test))
    st.subheader("The two models")
    st.latex(r"h_j = \mathrm{GRU}(E_x x_j,\ h_{j-1}),\quad h_0 = 0 \qquad "
             r"s_t = \mathrm{GRU}([E_y y_{t-1};\ c_t],\ s_{t-1}),\quad s_0 = h_n")
    st.latex(r"\text{fixed: } c_t = h_n \qquad "
             r"\text{attention: } c_t = \sum_j \alpha_{tj} h_j,\ "
             r"\alpha_t = \mathrm{softmax}_j\big(v_a^\top \tanh(W_a s_{t-1} + U_a h_j)\big)")
    if not page.presenter:
        run = result.config  # the steps trained, after any cap
        seen = copying.training_coverage(result.lengths, run.min_length, run.max_length,
                                         run.steps, run.batch, bn.SYMBOLS)
        st.caption(
            "E_x and E_y are the encoder's and the decoder's own embedding tables (the "
            "decoder's has a start mark too). "
            "Both decoders start from the encoder's last state h_n and write one letter per "
            "source letter; the fixed one also reads h_n at every step, as Cho et al. (2014) "
            "did (Sutskever et al. 2014 only started the decoder from it). In training each "
            "step reads the correct previous letter (teacher forcing), in the test its own "
            "previous output (greedy decoding). Accuracy is the fraction of letters right "
            f"over {run.n_test} newly drawn strings per length, new to the test but not always "
            f"to the models. {coverage_text(seen, bn.SYMBOLS)} Bahdanau et al.'s encoder read "
            "in both directions; this one reads left to right."
        )
    bullet_list("Try this", [
        "Raise the width d to 64: does the fixed-context model copy longer strings with more "
        "numbers to hold them? Does it still fall as they grow?",
        "Train on lengths 1 to 4 at widths 8, 16 and 32: from which width, if any, does the "
        "fixed model copy strings of 2 to 4 letters well?",
        "Train on lengths 3 to 8 only: does the attention model keep copying past 8, and how "
        "far?",
        "Change the seed: which numbers on this page move, and which do not?",
    ])
    practice_questions("why", [
        {"q": f"How many numbers does the fixed-context decoder receive about a source string "
              f"of any length, at width d = {config.d_model}?",
         "a": f"{config.d_model}: the encoder's last state h_n, whatever the length.",
         "value": float(config.d_model), "tol": 0.5},
        {"q": "A recurrent encoder reads 100 tokens. How many steps must run one after the "
              "other? And for one self-attention layer?",
         "a": "100 for the recurrent layer (each state needs the previous one); 1 for "
              "self-attention, which computes every position at once."},
        {"q": f"A model that guesses letters at random: what token accuracy does it reach with "
              f"{bn.SYMBOLS} letters?",
         "a": f"1/{bn.SYMBOLS} ≈ {1 / bn.SYMBOLS:.4f}.", "value": 1 / bn.SYMBOLS, "tol": 5e-4},
    ])


def download_matrices(results: dict) -> dict:
    """The matrices the sections show: name -> (matrix, row labels, column labels)."""
    return {name: results[name] for name in DOWNLOADS}


def download_trace(results: dict) -> dict:
    """The figures of both trained models, as the command line prints them."""
    return results["result"].summary()


with lesson_page("why") as page:
    if not page.presenter:
        st.markdown(introduction_text(bn.SYMBOLS))
    models = st.container()  # the two models, drawn once a step is chosen (one_step)
    config = training_settings(page)
    result = trained_models(page, config, models)
    results = {"result": result}
    offer_downloads(results, None if page.presenter else DOWNLOADS)  # none on a projector
    if not page.presenter:
        st.caption(
            f"Both models: width d = {config.d_model}, trained for {config.steps} steps of "
            f"{DEFAULT.batch} strings of {config.min_length} to {config.max_length} letters "
            f"(seed {config.seed}); {result.parameters['fixed']:,} trained numbers in the "
            f"fixed model, {result.parameters['attention']:,} in the attention model (its "
            f"score's W_a, U_a and v_a add "
            f"{result.parameters['attention'] - result.parameters['fixed']:,}). Training both "
            "and testing "
            f"took {result.seconds:.1f} s when this machine first computed them (the result "
            "is kept and shared by every student).")
    lengths = accuracy_section(page, config, result, results)
    positions_section(page, config, result, lengths.last_tested, results)
    alignment = alignment_section(page, config, result, results)
    one_step(page, config, result, models)
    layers_section(config)
    closing_notes(page, config, result, lengths, alignment)
    page.downloads(results, download_matrices, download_trace)
