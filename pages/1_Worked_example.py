"""Lesson 1: attention computed by hand for a few tokens, one step at a time."""

import numpy as np
import pandas as pd
import streamlit as st

from attncore import causal_mask, scaled_dot_product_attention
from attncore.exercise import STEPS, check_work
from attncore.text import PRESETS, check_matrix, worked_example
from pages.text.worked_example import (
    CAUSAL_TEXT,
    INPUTS_TEXT,
    NOTICE,
    PRACTICE,
    SOFTMAX_TEXT,
    TAU_HELP,
    TAU_HIGH,
    TAU_LOW,
    UNIFORM_ITEM,
    check_intro,
    given_text,
    longer_key_item,
    low_tau_item,
    marked_text,
    output_shape_text,
    row_sums_text,
    scaling_item,
    scaling_text,
    scores_shape_text,
    shift_text,
    token_names,
)
from pages.ui.arithmetic import cell_lines, matrix_latex, output_row_lines
from pages.ui.choices import offered_value
from pages.ui.controls import URL, seed_input
from pages.ui.figures import describe_matrix, matrix_heatmap
from pages.ui.figures.models import attention_flow, attention_steps
from pages.ui.labels import md_escape
from pages.ui.layout import bullet_list, practice_questions, show_diagram, show_error, show_figure
from pages.ui.live import keep, offer_downloads
from pages.ui.page import Page, lesson_page
from pages.ui.tables import editor_key, linked_editor, show_matrix, typed_answers, typed_text

# Numbers printed in the figures' cells (and on hover), and in the inputs' story above
# step 3. Fixed, not the "Decimals" control: that control (in step 3) sets the tables, the
# arithmetic and the checking from step 3 on; were the figures to follow it, moving it
# would redraw every figure of the page.
FIXED_DECIMALS = 3
# In presenter mode the inputs sit beside the first figure while the token column and
# Q, K and V have at most this many columns (of 73 px, zoomed, in 3/5 of the width).
PRESENTER_SIDE_COLUMNS = 9
# Short labels: a bound select box stores its label in the link.
LABELS = {"textbook": "Textbook", "cat": "The cat sat", "uniform": "Uniform", "random": "Random"}


def example_controls() -> tuple:
    """The controls above the inputs: the preset, its seed, the example they give, and
    whether the scores are scaled and masked."""
    c_preset, c_n, c_dk, c_dv, c_seed = st.columns([3, 1, 1, 1, 1])
    preset = c_preset.selectbox("Example", list(PRESETS), format_func=LABELS.get,
                                key="we_preset", help="\n\n".join(PRESETS.values()), **URL)
    fixed = preset == "textbook"  # the textbook example has its own sizes
    n_tokens = c_n.slider("Tokens", 2, 6, 3, key="we_tokens", disabled=fixed, **URL)
    chosen_dk = c_dk.slider("d_k", 1, 4, 2, key="we_dk", disabled=fixed, **URL)
    chosen_dv = c_dv.slider("d_v", 1, 4, 3, key="we_dv", disabled=fixed, **URL)
    seed = seed_input(c_seed, "we_seed", disabled=fixed)
    c_scale, c_causal, _ = st.columns(3)
    scaled = c_scale.toggle("Divide by √d_k", value=True, key="we_scale", **URL)
    causal = c_causal.toggle("Causal mask", value=False, key="we_causal", **URL)
    return (preset, seed, worked_example(preset, n_tokens, chosen_dk, chosen_dv, seed), scaled,
            causal)


def input_places(page: Page, preset: str, side_by_side: bool) -> tuple:
    """Where the inputs and the first figure (S) go: side by side on a projector when the
    inputs fit beside it; one after the other, with the inputs' story, off it."""
    if page.presenter and side_by_side:
        return st.columns([3, 2])  # a figure on the projector's first screen
    if page.presenter:  # too many columns to sit beside S: the inputs get the whole width
        return st.container(), st.columns([3, 2])[0]
    st.caption(PRESETS[preset])
    st.header("The inputs: one query, key and value per token")
    st.markdown(INPUTS_TEXT)
    inputs_place = st.container()
    return inputs_place, inputs_place


def read_inputs(page: Page, example, signature: list) -> tuple[list[str], dict, dict]:
    """The inputs' editor, and what it holds: the token names, the matrices that can be
    used (name -> array) and those that cannot (name -> why, shown as an error)."""
    d_k, d_v = example.q.shape[1], example.v.shape[1]
    cols = {"Q": [f"q{c + 1}" for c in range(d_k)], "K": [f"k{c + 1}" for c in range(d_k)],
            "V": [f"v{c + 1}" for c in range(d_v)]}
    # The numbers are text cells read by our own strict parser: the editor's number cells
    # dropped the "e" of "1e300" (1300) and rounded what they showed.
    base = pd.DataFrame(typed_text(np.hstack([example.q, example.k, example.v])),
                        columns=[c for name in "QKV" for c in cols[name]])
    base.insert(0, "token", list(example.tokens))
    table = linked_editor(
        base, "we_table", signature, link="we_data",
        # On a projector the table is zoomed 1.3× (layout.py): stretched, its columns were
        # sized for the unzoomed width and V's ran off the edge. Columns of 56 px (73 px
        # zoomed), as wide as they are: up to PRESENTER_SIDE_COLUMNS fit in 3/5 of the
        # width beside S, and 1 + 4 + 4 + 4 in the whole width.
        column_config={c: st.column_config.TextColumn(c, max_chars=24 if c == "token" else 40,
                                                      width=56 if page.presenter else None)
                       for c in base.columns},
        width="content" if page.presenter else "stretch",
    )
    tokens = [str(t).strip() if isinstance(t, str) and t.strip() else f"x{i + 1}"
              for i, t in enumerate(table["token"].tolist())]
    inputs, problems = {}, {}  # matrix name -> array; what can't be used -> why
    for name, names in cols.items():
        try:
            inputs[name] = check_matrix(table[names].to_numpy(dtype=object), name,
                                        (len(tokens), len(names)))
        except ValueError as exc:
            problems[name] = str(exc)
            show_error(exc)
    return tokens, inputs, problems


def attend(inputs: dict, problems: dict, temperature: float, *, scaled: bool, causal: bool,
           d_v: int, show: bool = True):
    """The trace and softmax steps at this τ, or (None, None) and the reason in ``problems``
    (``show``: also as an error, once, beside the inputs). Without a usable V, a zero V
    stands in: steps 1 to 3 don't use it, and what does waits for V."""
    if "Q" not in inputs or "K" not in inputs:
        return None, None
    T = inputs["Q"].shape[0]
    try:
        trace = scaled_dot_product_attention(
            inputs["Q"], inputs["K"], inputs.get("V", np.zeros((T, d_v))),
            scale="sqrt_dk" if scaled else "none", temperature=temperature,
            mask=causal_mask(T) if causal else None)
        # Textbook exp(s) for hand arithmetic; the stable exp(s - max) only when needed.
        return trace, trace.softmax_steps(subtract_max="if_needed")
    except ValueError as exc:
        problems["scores"] = str(exc)
        if show:
            show_error(exc)
        return None, None


def waits_for(problems: dict, needs: str, what: str) -> bool:
    """True (and says which cell to fix) when ``what`` needs a matrix that can't be used."""
    for name in (*needs, "scores"):
        if name in problems:
            fix = f"fill every cell of {name}" if name in "QKV" else "change the inputs"
            st.info(f"To compute {what}, {fix}: {problems[name]}.", icon="✏️")
            return True
    return False


def model_diagram(page: Page, example, tokens: list[str], flow: dict) -> tuple:
    """The flow of attention with this example's shapes, the cell written out in full
    below marked (as its pickers will show it); returns that cell (query, key)."""
    T, label = len(tokens), lambda i: f"{i + 1}: {tokens[i]}"  # the pickers' labels
    cell = (offered_value("we_query", range(T), 0, label),
            offered_value("we_key", range(T), T - 1, label))
    show_diagram(attention_flow(T, flow["d_k"], flow["d_v"], page.font, scaled=flow["scaled"],
                                d_model=None if example.x is None else example.x.shape[1],
                                mask=causal_mask(T) if flow["masked"] else None, cell_at=cell,
                                cell=(tokens[cell[0]], tokens[cell[1]])),
                 key=page.key("diagram_flow"))
    return cell


def step_diagram(page: Page, step: int, flow: dict) -> None:
    """Where this step sits in the flow (it is highlighted), with the shapes."""
    show_diagram(attention_steps(step=step, font=page.font, **flow),
                 key=page.key(f"diagram_step{step}"), download=False)


def scores_figure(page: Page, trace, tokens: list[str], problems: dict) -> None:
    if not waits_for(problems, "QK", "the scores"):
        show_figure(matrix_heatmap(trace.raw_scores, tokens, tokens,
                                   title="Scores S = Q Kᵀ", kind="scores",
                                   decimals=FIXED_DECIMALS, font_size=page.font),
                    key="we_fig_scores",
                    alt="Scores S = QKᵀ. " + describe_matrix(trace.raw_scores, tokens, tokens,
                                                             kind="scores"))


def given_matrices(page: Page, example) -> None:
    """The preset's X and W matrices, from which its Q, K and V come."""
    with st.expander("Where Q, K and V come from: Q = X W_Q, K = X W_K, V = X W_V",
                     expanded=not page.presenter):
        st.markdown(given_text(example.tokens))
        # One LaTeX block, not four tables: a new example redraws it with the page. The
        # numbers are short decimals (0.8, -1.6): written with as many decimals as they have.
        given = [("X", example.x), ("W_Q", example.w_q), ("W_K", example.w_k),
                 ("W_V", example.w_v)]
        decimals = next((d for d in range(FIXED_DECIMALS + 1)
                         if all(np.array_equal(np.round(m, d), m) for _, m in given)),
                        FIXED_DECIMALS)
        terms = [rf"\underset{{{m.shape[0]} \times {m.shape[1]}}}{{{name}}} = "
                 + matrix_latex(m, decimals) for name, m in given]
        st.latex(r"\begin{gathered}" + r"\qquad ".join(terms[:2]) + r" \\[16pt] "
                 + r"\qquad ".join(terms[2:]) + r"\end{gathered}")


def steps_1_and_2(page: Page, trace, tokens: list[str], problems: dict, *, flow: dict,
                  side_by_side: bool) -> None:
    """The scores and the scaled (masked) scores: they don't depend on τ."""
    d_k, scaled, causal = flow["d_k"], flow["scaled"], flow["masked"]
    st.header("Step 1 · Scores: how well each query matches each key")
    step_diagram(page, 1, flow)
    left, right = st.columns([2, 3])
    with left:
        st.latex(r"S = Q K^\top, \qquad s_{ij} = q_i \cdot k_j")
        st.markdown(scores_shape_text(len(tokens), d_k))
    with right:
        if page.presenter:
            st.markdown("S is drawn at the top, "
                        + ("beside the inputs." if side_by_side else "under the inputs."))
        else:
            scores_figure(page, trace, tokens, problems)

    st.header("Step 2 · Scale the scores")
    step_diagram(page, 2, flow)
    left, right = st.columns([2, 3])
    with left:
        if scaled:
            st.latex(rf"\tilde S = \frac{{S}}{{\sqrt{{d_k}}}} = \frac{{S}}{{\sqrt{{{d_k}}}}}")
            st.markdown(scaling_text(d_k))
        else:
            st.latex(r"\tilde S = S \quad\text{(scaling switched off)}")
            st.markdown("Scaling is off: the softmax sees the raw scores.")
        if causal:
            st.markdown(CAUSAL_TEXT)
    with right:
        if not waits_for(problems, "QK", "the scaled scores"):
            show_figure(matrix_heatmap(trace.masked_scores, tokens, tokens,
                                       title="Scaled scores" + (" (masked)" if causal else ""),
                                       kind="scores", decimals=FIXED_DECIMALS,
                                       font_size=page.font),
                        key="we_fig_scaled",
                        alt="Scaled scores. " + describe_matrix(trace.masked_scores, tokens,
                                                                tokens, kind="scores"))


@st.fragment
def written_out(trace, steps, tokens: list[str], problems: dict, decimals: int,
                drawn: tuple) -> None:
    """One weight and one output row with every number of the arithmetic; a new cell reruns
    the page, whose diagram at the top marks it (``drawn``: the cell it marks)."""
    T = len(tokens)
    c_i, c_j = st.columns(2)
    label = lambda i: f"{i + 1}: {tokens[i]}"  # noqa: E731
    i = c_i.selectbox("Query (row)", range(T), index=0, format_func=label, key="we_query",
                      **URL)
    j = c_j.selectbox("Key (column)", range(T), index=T - 1, format_func=label, key="we_key",
                      **URL)
    if (i, j) != drawn:
        st.rerun()
    st.markdown(f"Query {i + 1} is “{md_escape(tokens[i])}”, key {j + 1} is "
                f"“{md_escape(tokens[j])}”.")
    for line in cell_lines(trace, steps, i, j, decimals):
        st.latex(line)
    if waits_for(problems, "QKV", "the output row"):
        return
    st.markdown(f"And output row {i + 1}, the weighted sum of the value rows:")
    for line in output_row_lines(trace, i, decimals):
        st.latex(line)


@st.fragment
def check_your_work(trace, decimals: int, signature: list) -> None:
    """Editors for the student's hand-computed steps, marked cell by cell."""
    st.markdown(check_intro(decimals, trace.mask is not None))
    T, d_v = trace.weights.shape[0], trace.v.shape[1]
    shapes = {"scores": (T, T), "scaled": (T, T), "weights": (T, T), "output": (T, d_v)}
    answers, unread = {}, []
    tabs = st.tabs([title for _, title in STEPS])
    for tab, (step, title) in zip(tabs, STEPS, strict=True):
        n_rows, n_cols = shapes[step]
        with tab:
            frame = pd.DataFrame("", columns=[f"{n + 1}" for n in range(n_cols)],
                                 index=[f"{n + 1}" for n in range(n_rows)])
            # Text cells read by our strict parser, as for the inputs: typed 1e-3 stays 1e-3.
            given = st.data_editor(frame, key=editor_key(f"we_check_{step}", *signature),
                                   num_rows="fixed", placeholder="",
                                   column_config={c: st.column_config.TextColumn(c)
                                                  for c in frame.columns})
            answers[step], problems_here = typed_answers(given, title)
            unread += problems_here
    for problem in unread:
        st.warning(f"{problem}; that cell is not marked.", icon="✏️")
    work = check_work(trace, answers, decimals)
    if work.n_attempted == 0:
        st.info("Fill in some cells above and they are marked here.")
        return
    for marked in work.steps:
        if marked.n_attempted:
            st.markdown(marked_text(marked))
            marks = np.where(~marked.attempted, "", np.where(marked.correct, "✓", "✗"))
            st.dataframe(pd.DataFrame(marks, index=[f"{n + 1}" for n in range(marks.shape[0])],
                                      columns=[f"{n + 1}" for n in range(marks.shape[1])]),
                         width="content")
    if work.first_wrong is None:
        st.success("Every number you typed is right.")
    else:
        st.error(work.explanation)


# The matrices offered for download: name shown -> their name in ``results``.
DOWNLOADS = {"Q": "Q", "K": "K", "V": "V", "Scores S = QKᵀ": "scores",
             "Scaled (masked) scores": "masked_scores", "Exponentials": "exps",
             "Weights W": "weights", "Output O": "output"}


@st.fragment
def softmax_onwards(page: Page, inputs: dict, problems: dict, tokens: list[str], v_cols: list,
                    preset: str, flow: dict, cell: tuple, signature: list,
                    results: dict) -> None:
    """Steps 3 and 4, the cell written out and the checking: all that depends on τ and on
    the decimals shown.

    A fragment, so that moving τ or the decimals redraws these sections and not the inputs
    or S. What it computes is kept in ``results`` for the downloads at the end of the page.
    """
    problems.pop("scores", None)  # a τ that overflowed may have been moved since
    T, d_v, scaled, causal = len(tokens), len(v_cols), flow["scaled"], flow["masked"]
    st.header("Step 3 · Softmax along each row")
    step_diagram(page, 3, flow)
    left, right = st.columns([2, 3])
    with left:
        st.latex(r"w_{ij} = \frac{e^{\tilde s_{ij}/\tau}}{\sum_{j'} e^{\tilde s_{ij'}/\tau}}")
        if not page.presenter:
            st.markdown(SOFTMAX_TEXT)
        temperature = st.slider("Softmax temperature τ", TAU_LOW, TAU_HIGH, 1.0, 0.05,
                                key="we_temp",
                                help=TAU_HELP,
                                **URL)
        decimals = st.slider("Decimals shown (and checked)", 2, 6, 3, key="we_decimals",
                             help="Of the tables, the arithmetic and the checking below.",
                             **URL)
        trace, steps = attend(inputs, problems, temperature, scaled=scaled, causal=causal,
                              d_v=d_v, show=False)
    # Every matrix is offered once all of them can be computed (not on a projector).
    offer_downloads(results, None if page.presenter or trace is None or problems
                    else list(DOWNLOADS))
    with right:
        if not waits_for(problems, "QK", "the weights"):
            show_figure(matrix_heatmap(trace.weights, tokens, tokens,
                                       title="Attention weights W (rows sum to 1)",
                                       kind="weights", decimals=FIXED_DECIMALS,
                                       font_size=page.font), key="we_fig_weights",
                        alt="Attention weights W, each row summing to 1. "
                            + describe_matrix(trace.weights, tokens, tokens))
    if trace is not None:
        # Full width: in the narrow column a 6-token table lost its last columns.
        st.markdown("Exponentials and row sums:")
        show_matrix(np.hstack([steps.exps, steps.row_sums]), tokens,
                    [*tokens, "row sum"], decimals)
        if (shifted := shift_text(steps)) is not None:
            st.caption(shifted)
        st.markdown(row_sums_text(trace.weights))

    st.header("Step 4 · Weighted sum of the values")
    step_diagram(page, 4, flow)
    left, right = st.columns([2, 3])
    with left:
        st.latex(r"O = W V, \qquad o_i = \sum_j w_{ij}\, v_j")
        st.markdown(output_shape_text(T, d_v))
    with right:
        # A table, not a second heatmap: the numbers are what a student checks, and a
        # second figure changing with τ would double the browser's redraw of this section.
        if not waits_for(problems, "QKV", "the output"):
            st.markdown("**Output O = W V** (rows are queries, columns are dimensions):")
            show_matrix(trace.output, tokens, v_cols, decimals)

    st.header("One cell, written out in full")
    if not waits_for(problems, "QK", "a weight by hand"):
        written_out(trace, steps, tokens, problems, decimals, cell)

    st.header("Check your work")
    if not waits_for(problems, "QKV", "and mark your steps"):
        check_your_work(trace, decimals, signature)

    if trace is not None:
        keep(results, "settings", {"preset": preset, "scale": trace.scale,
                                   "temperature": temperature, "causal": causal})
        for name, value in (("Q", trace.q), ("K", trace.k), ("V", trace.v),
                            ("scores", trace.raw_scores), ("scaled_scores", trace.scaled_scores),
                            ("masked_scores", trace.masked_scores), ("exps", steps.exps),
                            ("row_sums", steps.row_sums[:, 0]), ("weights", trace.weights),
                            ("output", trace.output)):
            keep(results, name, value)


def closing_notes(page: Page, trace, tokens: list[str], d_k: int, scaled: bool) -> None:
    """What to notice, the formula and, off the projector, things to try (said for the
    scores of ``trace``, None while the inputs can't be used; none depends on τ, as the
    notes are not redrawn when τ moves) and questions."""
    bullet_list("What to notice", NOTICE)
    st.subheader("The formula")
    st.latex(r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}"
             r"{\sqrt{d_k}}\right) V")
    if page.presenter:
        return
    names = token_names(tokens)
    bullet_list("Try this", [
        low_tau_item(trace, names),
        scaling_item(d_k, scaled),
        UNIFORM_ITEM,
        longer_key_item(trace, names),
    ], expanded=False)
    practice_questions("we", PRACTICE)


def download_matrices(results: dict) -> dict:
    """Every matrix of the page as it shows them now: name -> (matrix, rows, columns)."""
    tokens = results["tokens"]
    cols = {name: [f"{name.lower()}{c + 1}" for c in range(results[name].shape[1])]
            for name in "QKV"}
    cols["output"] = cols["V"]  # the rest are tokens × tokens
    return {shown: (results[name], tokens, cols.get(name, tokens))
            for shown, name in DOWNLOADS.items()}


with lesson_page("we") as page:
    preset, seed, example, scaled, causal = example_controls()
    T, d_k, d_v = example.q.shape[0], example.q.shape[1], example.v.shape[1]
    side_by_side = 1 + 2 * d_k + d_v <= PRESENTER_SIDE_COLUMNS
    flow = {"T": T, "d_k": d_k, "d_v": d_v, "scaled": scaled, "masked": causal}
    # The model's diagram: on a projector in the place of the inputs' story, above them.
    flow_place = st.container() if page.presenter else None
    inputs_place, first_figure = input_places(page, preset, side_by_side)
    signature = [preset, T, d_k, d_v, seed]
    with inputs_place:
        tokens, inputs, problems = read_inputs(page, example, signature)
        # S and S̃, steps 1 and 2, don't depend on τ.
        trace, _ = attend(inputs, problems, 1.0, scaled=scaled, causal=causal, d_v=d_v)
    with flow_place or st.container():
        cell = model_diagram(page, example, tokens, flow)
    if page.presenter:
        with first_figure:
            scores_figure(page, trace, tokens, problems)
    if example.x is not None:
        given_matrices(page, example)
    steps_1_and_2(page, trace, tokens, problems, flow=flow, side_by_side=side_by_side)
    # The sections from the softmax on rerun alone when τ moves (st.fragment); what they
    # compute is kept in `results` for the downloads at the end (see pages.ui.live.keep).
    results = {"tokens": tokens}
    softmax_onwards(page, inputs, problems, tokens, [f"v{c + 1}" for c in range(d_v)], preset,
                    flow, cell, signature, results)
    closing_notes(page, trace, tokens, d_k, scaled)
    page.downloads(results, download_matrices, dict)  # the JSON: all that `results` keeps
