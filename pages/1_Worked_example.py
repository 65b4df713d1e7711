"""Lesson 1: attention computed by hand for a few tokens, one step at a time."""

import numpy as np
import pandas as pd
import streamlit as st

from attncore import causal_mask, scaled_dot_product_attention
from attncore.exercise import STEPS, check_work, stretch_key
from attncore.scaling import weight_focus
from attncore.softmax import HAND_EXP_LIMIT
from attncore.text import PRESETS, check_matrix, worked_example
from pages.ui.arithmetic import cell_lines, matrix_latex, output_row_lines
from pages.ui.controls import URL, seed_input
from pages.ui.figures import describe_matrix, matrix_heatmap
from pages.ui.glossary import term_link
from pages.ui.labels import md_escape
from pages.ui.layout import (
    bullet_list,
    figure_font,
    finish_page,
    lesson_header,
    practice_questions,
    setup_page,
    show_error,
    show_figure,
)
from pages.ui.live import keep
from pages.ui.numbers import difference_text, number_text
from pages.ui.tables import (
    downloads,
    editor_key,
    linked_editor,
    show_matrix,
    typed_answers,
    typed_text,
)

# Numbers printed in the figures' cells (and on hover), and in the inputs' story above
# step 3. Fixed, not the "Decimals" control: that control (in step 3) sets the tables, the
# arithmetic and the checking from step 3 on; were the figures to follow it, moving it
# would redraw every figure of the page.
FIXED_DECIMALS = 3
# The temperature slider's ends: "Try this" says what they do to the example on the page.
TAU_LOW, TAU_HIGH = 0.1, 5.0
# In presenter mode the inputs sit beside the first figure while the token column and
# Q, K and V have at most this many columns (of 73 px, zoomed, in 3/5 of the width).
PRESENTER_SIDE_COLUMNS = 9

presenter = setup_page("Worked example", "✏️")
lesson_header(
    "1 · Worked example: attention by hand",
    "compute softmax(QKᵀ/√d_k)·V for a few tokens, one step at a time, and check "
    "every number yourself.",
)

c_preset, c_n, c_dk, c_dv, c_seed = st.columns([3, 1, 1, 1, 1])
# Short labels: a bound select box stores its label in the link.
LABELS = {"textbook": "Textbook", "cat": "The cat sat", "uniform": "Uniform", "random": "Random"}
preset = c_preset.selectbox("Example", list(PRESETS), format_func=LABELS.get, key="we_preset",
                            help="\n\n".join(PRESETS.values()), **URL)
fixed = preset == "textbook"  # the textbook example has its own sizes
n_tokens = c_n.slider("Tokens", 2, 6, 3, key="we_tokens", disabled=fixed, **URL)
chosen_dk = c_dk.slider("d_k", 1, 4, 2, key="we_dk", disabled=fixed, **URL)
chosen_dv = c_dv.slider("d_v", 1, 4, 3, key="we_dv", disabled=fixed, **URL)
seed = seed_input(c_seed, "we_seed", disabled=preset == "textbook")

c_scale, c_causal, _ = st.columns(3)
scaled = c_scale.toggle("Divide by √d_k", value=True, key="we_scale", **URL)
causal = c_causal.toggle("Causal mask", value=False, key="we_causal", **URL)

example = worked_example(preset, n_tokens, chosen_dk, chosen_dv, seed)
T, d_k, d_v = example.q.shape[0], example.q.shape[1], example.v.shape[1]
font = figure_font(presenter)

side_by_side = 1 + 2 * d_k + d_v <= PRESENTER_SIDE_COLUMNS
if presenter and side_by_side:
    # A figure on the projector's first screen: the inputs and S side by side.
    inputs_place, first_figure = st.columns([3, 2])
elif presenter:  # too many columns to sit beside S: the inputs get the whole width
    inputs_place = st.container()
    first_figure, _ = st.columns([3, 2])
else:
    st.caption(PRESETS[preset])
    st.header("The inputs: one query, key and value per token")
    st.markdown(
        "Each row is a token. Its **query** q asks *what am I looking for?*, its **key** k "
        "says *what do I contain?*, its **value** v is *what I pass on*. Edit any cell or "
        "token name; everything below is recomputed."
    )
    inputs_place = first_figure = st.container()
q_cols = [f"q{c + 1}" for c in range(d_k)]
k_cols = [f"k{c + 1}" for c in range(d_k)]
v_cols = [f"v{c + 1}" for c in range(d_v)]
# The numbers are text cells read by our own strict parser: the editor's number cells
# dropped the "e" of "1e300" (1300) and rounded what they showed.
base = pd.DataFrame(
    typed_text(np.hstack([example.q, example.k, example.v])), columns=q_cols + k_cols + v_cols
)
base.insert(0, "token", list(example.tokens))
signature = [preset, T, d_k, d_v, seed]
with inputs_place:
    table = linked_editor(
        base, "we_table", signature, link="we_data",
        # On a projector the table is zoomed 1.3× (layout.py): stretched, its columns were
        # sized for the unzoomed width and V's ran off the edge. Columns of 56 px (73 px
        # zoomed), as wide as they are: up to PRESENTER_SIDE_COLUMNS fit in 3/5 of the
        # width beside S, and 1 + 4 + 4 + 4 in the whole width.
        column_config={c: st.column_config.TextColumn(c, max_chars=24 if c == "token" else 40,
                                                      width=56 if presenter else None)
                       for c in base.columns},
        width="content" if presenter else "stretch",
    )

tokens = [str(t).strip() if isinstance(t, str) and t.strip() else f"x{i + 1}"
          for i, t in enumerate(table["token"].tolist())]
inputs, problems = {}, {}  # matrix name -> array; what can't be used -> why
for name, cols in (("Q", q_cols), ("K", k_cols), ("V", v_cols)):
    try:
        inputs[name] = check_matrix(table[cols].to_numpy(dtype=object), name, (T, len(cols)))
    except ValueError as exc:
        problems[name] = str(exc)
        with inputs_place:
            show_error(exc)


def attend(inputs: dict, problems: dict, temperature: float, *, scaled: bool, causal: bool,
           d_v: int, show: bool = True):
    """The trace and softmax steps at this τ, or (None, None) and the reason in ``problems``.

    ``show``: also show the core's message as an error (once, beside the inputs).

    Without a usable V, a zero V stands in: steps 1 to 3 don't use it, and what does
    waits for V.
    """
    if "Q" not in inputs or "K" not in inputs:
        return None, None
    T = inputs["Q"].shape[0]
    try:
        trace = scaled_dot_product_attention(
            inputs["Q"], inputs["K"], inputs.get("V", np.zeros((T, d_v))),
            scale="sqrt_dk" if scaled else "none",
            temperature=temperature,
            mask=causal_mask(T) if causal else None,
        )
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


with inputs_place:
    # S and S̃, steps 1 and 2, don't depend on τ.
    trace, steps = attend(inputs, problems, 1.0, scaled=scaled, causal=causal, d_v=d_v)


def scores_figure() -> None:
    if not waits_for(problems, "QK", "the scores"):
        show_figure(matrix_heatmap(trace.raw_scores, tokens, tokens,
                                   title="Scores S = Q Kᵀ", kind="scores",
                                   decimals=FIXED_DECIMALS, font_size=font),
                    key="we_fig_scores",
                    alt="Scores S = QKᵀ. " + describe_matrix(trace.raw_scores, tokens, tokens,
                                                             kind="scores"))


if presenter:
    with first_figure:
        scores_figure()

if example.x is not None:
    with st.expander("Where Q, K and V come from: Q = X W_Q, K = X W_K, V = X W_V",
                     expanded=not presenter):
        st.markdown("X holds a toy embedding per word, a row per token ("
                    + ", ".join(md_escape(t) for t in example.tokens) + "): the same word, "
                    "whatever its case, always gets the same vector. The W matrices are seeded "
                    "projections.")
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

st.header("Step 1 · Scores: how well each query matches each key")
left, right = st.columns([2, 3])
with left:
    st.latex(r"S = Q K^\top, \qquad s_{ij} = q_i \cdot k_j")
    st.markdown(f"Shape: Q ({T} × {d_k}) · Kᵀ ({d_k} × {T}) → S ({T} × {T}). "
                f"Rows are queries, columns are keys: the {term_link('scores', 'scores')}.")
with right:
    if presenter:
        st.markdown("S is drawn at the top, "
                    + ("beside the inputs." if side_by_side else "under the inputs."))
    else:
        scores_figure()

st.header("Step 2 · Scale the scores")
left, right = st.columns([2, 3])
with left:
    if scaled:
        st.latex(rf"\tilde S = \frac{{S}}{{\sqrt{{d_k}}}} = \frac{{S}}{{\sqrt{{{d_k}}}}}")
        root = np.sqrt(d_k)
        said = (f"= {root:.0f}" if root == round(root)
                else f"≈ {root:.{FIXED_DECIMALS}f}")  # √2 is not 1.414
        st.markdown(f"Every score is divided by √d_k = √{d_k} {said}. When q and k have "
                    "independent components, this keeps the spread of the scores from growing "
                    "with d_k (lesson 2 shows why).")
    else:
        st.latex(r"\tilde S = S \quad\text{(scaling switched off)}")
        st.markdown("Scaling is off: the softmax sees the raw scores.")
    if causal:
        st.markdown(f"**{term_link('causal-mask', 'Causal mask')}:** query i may only look at "
                    "keys j ≤ i (itself and the tokens before it); the others become −∞ before "
                    "the softmax.")
with right:
    if not waits_for(problems, "QK", "the scaled scores"):
        show_figure(matrix_heatmap(trace.masked_scores, tokens, tokens,
                                   title="Scaled scores" + (" (masked)" if causal else ""),
                                   kind="scores", decimals=FIXED_DECIMALS, font_size=font),
                    key="we_fig_scaled",
                    alt="Scaled scores. " + describe_matrix(trace.masked_scores, tokens, tokens,
                                                            kind="scores"))


@st.fragment
def written_out(trace, steps, tokens: list[str], decimals: int) -> None:
    """One weight and one output row with every number of the arithmetic."""
    T = len(tokens)
    c_i, c_j = st.columns(2)
    label = lambda i: f"{i + 1}: {tokens[i]}"  # noqa: E731
    i = c_i.selectbox("Query (row)", range(T), index=0, format_func=label, key="we_query",
                      **URL)
    j = c_j.selectbox("Key (column)", range(T), index=T - 1, format_func=label, key="we_key",
                      **URL)
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
    st.markdown(
        f"Compute the steps by hand and type your numbers (leave a cell blank to skip it). "
        f"A cell is right within ±{10.0 ** -decimals:g}, one unit in the last of the "
        f"{decimals} decimals chosen above. Carry more decimals in your intermediate steps "
        "than you type: weights rounded to that many can move an output by more."
        + (" With the causal mask, step 2 asks for every scaled score, the hidden ones "
           "included, before they become −∞ (the figure of step 2 shows them masked); "
           "step 3's hidden weights are 0." if trace.mask is not None else "")
    )
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
            n_right = marked.n_attempted - marked.n_wrong
            st.markdown(f"**{marked.title}:** {n_right} of {marked.n_attempted} filled cells "
                        "right.")
            marks = np.where(~marked.attempted, "", np.where(marked.correct, "✓", "✗"))
            st.dataframe(pd.DataFrame(marks, index=[f"{n + 1}" for n in range(marks.shape[0])],
                                      columns=[f"{n + 1}" for n in range(marks.shape[1])]),
                         width="content")
    if work.first_wrong is None:
        st.success("Every number you typed is right.")
    else:
        st.error(work.explanation)



@st.fragment
def softmax_onwards(inputs: dict, problems: dict, tokens: list[str], v_cols: list[str],
                    scaled: bool, causal: bool, signature: list, results: dict) -> None:
    """Steps 3 and 4, the cell written out and the checking: all that depends on τ and on
    the decimals shown.

    A fragment, so that moving τ or the decimals redraws these sections and not the inputs
    or S. What it computes is kept in ``results`` for the downloads at the end of the page.
    """
    problems.pop("scores", None)  # a τ that overflowed may have been moved since
    T, d_v = len(tokens), len(v_cols)
    st.header("Step 3 · Softmax along each row")
    left, right = st.columns([2, 3])
    with left:
        st.latex(r"w_{ij} = \frac{e^{\tilde s_{ij}/\tau}}{\sum_{j'} e^{\tilde s_{ij'}/\tau}}")
        if not presenter:
            st.markdown(f"The {term_link('softmax', 'softmax')} of each row, with τ the "
                        f"{term_link('tau', 'temperature')} (τ = 1: the plain softmax).")
        temperature = st.slider("Softmax temperature τ", TAU_LOW, TAU_HIGH, 1.0, 0.05,
                                key="we_temp",
                                help="Below 1 it sharpens each row towards its largest "
                                     "scores, above 1 it flattens it towards uniform weights; "
                                     "a row whose keys all score the same stays as it is.",
                                **URL)
        decimals = st.slider("Decimals shown (and checked)", 2, 6, 3, key="we_decimals",
                             help="Of the tables, the arithmetic and the checking below.",
                             **URL)
        trace, steps = attend(inputs, problems, temperature, scaled=scaled, causal=causal,
                              d_v=d_v, show=False)
    with right:
        if not waits_for(problems, "QK", "the weights"):
            show_figure(matrix_heatmap(trace.weights, tokens, tokens,
                                       title="Attention weights W (rows sum to 1)",
                                       kind="weights", decimals=FIXED_DECIMALS,
                                       font_size=font), key="we_fig_weights",
                        alt="Attention weights W, each row summing to 1. "
                            + describe_matrix(trace.weights, tokens, tokens))
    if trace is not None:
        # Full width: in the narrow column a 6-token table lost its last columns.
        st.markdown("Exponentials and row sums:")
        show_matrix(np.hstack([steps.exps, steps.row_sums]), tokens,
                    [*tokens, "row sum"], decimals)
        if np.any(steps.shift != 0):
            largest = np.max(np.abs(steps.logits[np.isfinite(steps.logits)]))
            st.caption(f"Some logits x = s̃/τ here are larger than {HAND_EXP_LIMIT:g} in size "
                       f"(up to {largest:.4g}), so each row's maximum m was subtracted before "
                       "exp: every e^(x−m) then lies between 0 and 1 and cannot overflow, and "
                       "e^(x−m) / Σ e^(x−m) gives the same weights.")
        deviation = np.max(np.abs(trace.weights.sum(axis=1) - 1))
        st.markdown(f"Every row of weights sums to 1: the largest deviation is "
                    f"{difference_text(deviation, rounding=True)}.")

    st.header("Step 4 · Weighted sum of the values")
    left, right = st.columns([2, 3])
    with left:
        st.latex(r"O = W V, \qquad o_i = \sum_j w_{ij}\, v_j")
        st.markdown(f"Shape: W ({T} × {T}) · V ({T} × {d_v}) → O ({T} × {d_v}). Each output "
                    "row is a blend of the value rows, mixed by that query's weights.")
    with right:
        # A table, not a second heatmap: the numbers are what a student checks, and a
        # second figure changing with τ would double the browser's redraw of this section.
        if not waits_for(problems, "QKV", "the output"):
            st.markdown("**Output O = W V** (rows are queries, columns are dimensions):")
            show_matrix(trace.output, tokens, v_cols, decimals)

    st.header("One cell, written out in full")
    if not waits_for(problems, "QK", "a weight by hand"):
        written_out(trace, steps, tokens, decimals)

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


def said_list(words: list[str]) -> str:
    """"x1", "x1 and x3", "x1, x2 and x3"."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def token_names(tokens: list[str]) -> list[str]:
    """Each token's name for a sentence, quoted, with its position when a name repeats."""
    return [f"“{md_escape(t)}”" + ("" if tokens.count(t) == 1 else f" ({i + 1})")
            for i, t in enumerate(tokens)]


def low_tau_item(trace, names: list[str]) -> str:
    """Try this: what τ = TAU_LOW does to each row of the example on the page.

    A low τ sharpens a row towards its largest scores, never past them: keys tied for
    the largest share the weight however low τ goes (attncore.scaling.weight_focus).
    """
    rule = (f"Set the temperature τ to {TAU_LOW:g}: a low τ makes the softmax "
            f"{term_link('sharp', 'sharp')}, gathering each row's weight on its largest "
            "scores; keys tied for the largest score share it equally, however low τ goes. "
            "It stays smooth and differentiable; only in the limit τ → 0 does a row become an "
            "argmax: all its weight on the key with its largest score, or shared equally by "
            f"the keys tied for it. {term_link('hard', 'Hard attention')} (lesson 6) instead "
            "picks one key outright, and that choice has no gradient.")
    flat = (f" Set it to {TAU_HIGH:g}: every row flattens towards uniform weights over the "
            "keys it may see.")
    if trace is None:
        return rule + flat
    rows = weight_focus(trace.scaled_scores, TAU_LOW, trace.mask)
    groups = {}  # (what one row does, what several do) -> the rows that do it, in order
    for i, row in enumerate(rows):
        keys = said_list([names[j] for j in sorted(row.holders)])
        among = "between" if len(row.holders) == 2 else "among"
        if row.visible == 1:
            kind = ("sees only one key (weight 1)", "see only one key (weight 1)")
        elif row.nearly_one_hot:
            kind = (f"becomes {term_link('one-hot', 'nearly one-hot')}",
                    f"become {term_link('one-hot', 'nearly one-hot')}")
        elif set(row.holders) == set(row.tied):
            kind = (f"splits its weight equally {among} {keys}, tied for its largest score",
                    f"each split their weight equally {among} {keys}, tied for their largest "
                    "score")
        else:
            close = (f"weight over {keys} (scores within {number_text(row.gap, 3)} of each "
                     f"other): τ = {TAU_LOW:g} is not low enough to separate them")
            kind = (f"still spreads its {close}", f"each still spread their {close}")
        groups.setdefault(kind, []).append(names[i])
    said = [f"{said_list(which)} {one if len(which) == 1 else many}"
            for (one, many), which in groups.items()]
    return f"{rule} Here, at τ = {TAU_LOW:g}: {'; '.join(said)}.{flat}"


def scaling_item(d_k: int, scaled: bool) -> str:
    """Try this: what the scaling toggle does to the scores on the page."""
    if d_k == 1:
        return ("Switch the scaling off and on: with d_k = 1, √d_k = 1, so nothing changes. "
                "Pick d_k = 4 to see it matter.")
    root = np.sqrt(d_k)
    said = f"= {root:.0f}" if root == round(root) else f"≈ {root:.3f}"
    # Multiplying a row's scores by c > 1 raises its largest weight, 1 / Σ_j e^{c(s_j − max)},
    # unless the scores of the keys it may see are all equal (then it is 1/their number).
    unless = "unless the scores of the keys it may see are all equal"
    if scaled:
        return (f"Switch the scaling off: every score is then multiplied by √d_k = √{d_k} "
                f"{said}, so every row sharpens (its largest weight rises), {unless}.")
    return (f"Switch the scaling on: every score is divided by √d_k = √{d_k} {said}, so every "
            f"row flattens (its largest weight falls), {unless}.")


def longer_key_item(trace, names: list[str]) -> str:
    """Try this: who turns to the first key when it is made 10 times longer.

    Only the first key's column of scores changes, 10 times over: a query turns to it if
    their dot product is positive, away if negative, and not at all if it is 0
    (attncore.exercise.stretch_key). The first key, because the causal mask hides it
    from no query.
    """
    rule = ("Make one key much longer (multiply its row of K by 10): its scores are multiplied "
            "by 10 and no other score moves, so a query turns to it only if their dot product "
            "is positive; with a negative one the query turns away, and with q·k = 0 it keeps "
            "exactly the weights it has.")
    if trace is None:
        return rule
    stretch = stretch_key(trace, 0)
    groups = [
        (stretch.change > 0, "turn to it (q·k > 0)", "turns to it (q·k > 0)"),
        ((stretch.change == 0) & (stretch.dots == 0) & ~stretch.only_key,
         "keep their weights (q·k = 0)", "keeps its weights (q·k = 0)"),
        (stretch.change < 0, "turn away from it (q·k < 0)", "turns away from it (q·k < 0)"),
        (stretch.only_key, "see only this key and keep weight 1",
         "sees only this key and keeps weight 1"),
    ]
    said = []
    for rows, many, one in groups:
        which = [names[i] for i in np.flatnonzero(rows)]
        if which:
            said.append(f"{said_list(which)} {one if len(which) == 1 else many}")
    return f"{rule} Try it on the first key, {names[0]}: {'; '.join(said)}."


def closing_notes(trace, tokens: list[str], scaled: bool) -> None:
    """What to notice, the formula and, off the projector, things to try and questions.

    ``trace``: the page's trace (None while the inputs can't be used); the things to try
    are said for its scores, and none depends on τ (the notes are not redrawn when τ
    moves).
    """
    bullet_list("What to notice", [
        "The weights in each row are at least 0 and sum to 1 (a key the mask hides gets "
        "exactly 0): each output row is a weighted average of the value rows.",
        "In each row, the largest score among the keys the query may see gets the largest "
        "weight, and a dot product rewards length as well as direction "
        "(q·k = |q| |k| cos θ): in the textbook example q₁ = [1, 0] scores k₁ = [1, 0] (same "
        "direction) and k₃ = [1, 1] (45° away, but √2 times longer) equally, so without "
        "the causal mask x1 gives them the same weight.",
        "Adding the same number to every score of a row changes nothing: the softmax only "
        "sees differences.",
        "With the causal mask, token 1 can only see itself, so its output is exactly v₁.",
    ])
    st.subheader("The formula")
    st.latex(r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}"
             r"{\sqrt{d_k}}\right) V")
    if not presenter:
        names = token_names(tokens)
        bullet_list("Try this", [
            low_tau_item(trace, names),
            scaling_item(trace.d_k if trace is not None else d_k, scaled),
            "Pick the “Uniform” example: every query is 0, so every score is 0 and every "
            "weight is 1/T (T tokens), whatever K is; with the causal mask, row i's weights "
            "are 1/i on the keys it may see.",
            longer_key_item(trace, names),
        ], expanded=False)
        practice_questions("we", [
            {"q": "In the textbook example (scaling on, τ = 1), which key does query x3 "
                  "attend to most, and why?",
             "a": "x3 itself: q₃ = [1, 1] has the largest dot product with k₃ = [1, 1] "
                  "(1 + 1 = 2), against 1 for k₁ and k₂."},
            {"q": "Every score in a row of 3 keys is 0. What is each weight?",
             "value": 1 / 3, "tol": 1e-3,
             "a": "e⁰ / (e⁰ + e⁰ + e⁰) = 1/3 ≈ 0.3333 each."},
            {"q": "If you double every value vector v_j, what happens to the weights and to "
                  "the output?",
             "a": "The weights do not depend on V, so they stay the same; the output, a "
                  "weighted sum of the values, doubles."},
            {"q": "With the causal mask, what is the output of the first token?",
             "a": "Its own value v₁: it may only attend to key 1, so w₁₁ = 1."},
        ])


def download_section(results: dict) -> None:
    """Every matrix of the page as CSV, and the whole trace as JSON, as the page shows them
    (``results`` is updated in place when the τ section reruns alone)."""
    st.subheader("Download")
    matrices = {
        "Q": (results["Q"], tokens, q_cols), "K": (results["K"], tokens, k_cols),
        "V": (results["V"], tokens, v_cols),
        "Scores S = QKᵀ": (results["scores"], tokens, tokens),
        "Scaled (masked) scores": (results["masked_scores"], tokens, tokens),
        "Exponentials": (results["exps"], tokens, tokens),
        "Weights W": (results["weights"], tokens, tokens),
        "Output O": (results["output"], tokens, v_cols),
    }
    downloads("we", matrices, results)


# The sections from the softmax on rerun alone when τ moves (st.fragment); what they
# compute is kept in `results` for the downloads at the end (see pages.ui.live.keep).
results = {"tokens": tokens}
softmax_onwards(inputs, problems, tokens, v_cols, scaled, causal, signature, results)
closing_notes(trace, tokens, scaled)
if not presenter and "weights" in results and not problems:
    download_section(results)

finish_page()
