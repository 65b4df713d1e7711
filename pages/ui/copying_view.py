"""Lesson 0's by-hand layouts: one decoding step of the attention model written out as
LaTeX, and the example string as both models wrote it.

Pure functions of the core's results (:class:`attncore.copying.StepArithmetic`, the
decodings' tokens); the page shows the lines with ``st.latex`` and the table with
``st.table``. Letters are the symbols A to L, safe inside LaTeX's ``\\text``, and
written in quotes there, as tokens of the string.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from attncore.copying import StepArithmetic

from .arithmetic import num, shown, wrapped_sum
from .numbers import cell_number

WRONG = "✗"  # marks a wrong letter: a symbol, not a colour
DECIMALS = 2
COMPONENTS = 4  # numbers of each vector of d written out in the context's sum


def _vector(x, decimals: int = DECIMALS, components: int = COMPONENTS) -> str:
    """The first ``components`` numbers of a vector as a row, with ⋯ when there are more."""
    x = np.asarray(x)
    cells = [num(v, decimals) for v in x[:components]]
    if x.size > components:
        cells.append(r"\cdots")
    return r"\begin{bmatrix}" + " & ".join(cells) + r"\end{bmatrix}"


def _cell(x: float) -> str:
    """A number of the array of scores and weights: a bound such as <0.01 where DECIMALS
    would show no digit, as a heatmap's cell writes it."""
    text = cell_number(x, DECIMALS)
    return "{" + text[0] + "}" + text[1:] if text[0] in "<>" else num(x, DECIMALS)


def _letter(letter: str) -> str:
    """A letter of the string, in quotes: a token, not a symbol (K is no key here)."""
    return rf"\text{{“{letter}”}}"


def _adding(parts, total: float, extra: int = 0, most: int = 1) -> tuple[int, str]:
    """The decimals, DECIMALS or up to ``most`` more, at which the written ``parts`` add up
    to the written ``total`` (4.60 + 4.75 + 0.02 is 9.37, not 9.38, but 4.605 + 4.753 +
    0.022 is 9.380), and the sign before the total: "=" then; else DECIMALS and
    "\\approx". The last part is written with ``extra`` decimals more."""
    for places in range(DECIMALS, DECIMALS + most + 1):
        written = shown(np.asarray(parts[:-1]), places).sum() + shown(parts[-1], places + extra)
        if abs(written - shown(total, places + extra)) < 0.5 * 10.0 ** -(places + extra + 2):
            return places, "="  # equal up to the float sum's own rounding
    return DECIMALS, r"\approx"


def _factor(x: float, decimals: int = DECIMALS) -> str:
    s = num(x, decimals)
    return f"({s})" if s.startswith("-") else s


#: Positions in one block of the by-hand table (more would run past a projector's width).
COLUMNS = 8


def score_lines(a: StepArithmetic, letters: list[str]) -> list[str]:
    """The score of the position with the largest weight, written out, then every
    position's score, exp(e − e_max) and weight in one array. The score's parameters are
    written v_a, W_a and U_a, as Bahdanau et al. write them (v is a value vector and W the
    matrix of weights in the other lessons), and their components are counted by i."""
    t, b, A = a.t, a.position, a.v.size
    term = lambda k: (rf"{_factor(a.v[k])}\tanh({num(a.q[k], DECIMALS)} "  # noqa: E731
                      rf"{'-' if a.u[k] < 0 else '+'} {num(abs(a.u[k]), DECIMALS)})")
    shown = [term(0), term(1), r"\cdots", term(A - 1)] if A > 3 else [term(k) for k in range(A)]
    # the first line's sum says how many terms there are: the numbers show three of them
    one = (rf"\begin{{aligned}} e_{{{t},{b}}} &= v_a^\top \tanh(W_a s_{{{t - 1}}} + "
           rf"U_a h_{{{b}}}) = \sum_{{i=1}}^{{{A}}} (v_a)_i \tanh\big((W_a s_{{{t - 1}}})_i + "
           rf"(U_a h_{{{b}}})_i\big)"
           rf" \\ &\approx {' + '.join(shown)} \\ "
           rf"&\approx {num(a.scores[b - 1], DECIMALS)} \end{{aligned}}")
    rows = [(rf"e_{{{t},j}}", a.scores), (rf"\exp(e_{{{t},j}} - e_{{{t},\max}})", a.exps),
            (rf"\alpha_{{{t},j}}", a.weights)]
    blocks = []  # at most COLUMNS positions a block, so that a projector's width holds it
    for start in range(0, len(letters), COLUMNS):
        cols = range(start, min(start + COLUMNS, len(letters)))
        head = " & ".join(str(j + 1) for j in cols)
        written = " & ".join(_letter(letters[j]) for j in cols)
        body = r" \\ ".join(name + " & " + " & ".join(_cell(values[j]) for j in cols)
                            for name, values in rows)
        blocks.append(rf"\begin{{array}}{{r|{'c' * len(cols)}}} j & {head} \\ x_j & "
                      rf"{written} \\ \hline {body} \end{{array}}")
    return [one, r"\begin{gathered}" + r" \\[6pt] ".join(blocks) + r"\end{gathered}"]


def softmax_line(a: StepArithmetic) -> str:
    """The largest score e_max, the sum Z (the terms too small for DECIMALS summed
    together) and the largest weight: α = exp(e − e_max) / Z. The terms and Z are written
    with the decimals at which the terms add up to Z as printed; where no such decimals are
    found, Z is said to come from the unrounded terms."""
    t, b = a.t, a.position
    large = a.exps >= 0.5 * 10.0 ** -DECIMALS
    parts = list(a.exps[large]) + ([a.exps[~large].sum()] if (~large).any() else [])
    extra = 1 if (~large).any() else 0  # the small terms together, a digit more
    places, equals = _adding(parts, a.total, extra)
    z = num(a.total, places + extra if equals == "=" else places)
    z_said = z if equals == "=" else rf"{z}\ (\text{{from the unrounded terms}})"
    exps = [num(x, places) for x in a.exps[large]]
    if (~large).any():
        exps.append(rf"{num(a.exps[~large].sum(), places + extra)}\ "
                    rf"(\text{{the other {int((~large).sum())} together}})")
    top = rf"e_{{{t},\max}}"
    return (rf"\begin{{aligned}} {top} &= \max_j e_{{{t},j}} = e_{{{t},{b}}} \approx "
            rf"{num(a.shift, DECIMALS)}, \qquad Z = \sum_j \exp(e_{{{t},j}} - {top}) \\ "
            rf"&\approx {wrapped_sum(exps, per_line=6)} {equals} "
            rf"{z_said} \\ "
            rf"\alpha_{{{t},{b}}} &= \frac{{\exp(e_{{{t},{b}}} - {top})}}{{Z}} = "
            rf"\frac{{1}}{{{z}}} \approx "
            rf"{num(a.weights[b - 1], DECIMALS)} \end{{aligned}}")


def context_line(a: StepArithmetic) -> str:
    """c_t as the weighted sum of the states, the largest weights written out, the others
    summed; each vector by its first COMPONENTS numbers."""
    t, d = a.t, a.context.size
    others = len(a.weights) - len(a.top)
    symbols = [rf"\alpha_{{{t},{s}}} h_{{{s}}}" for s in a.top]
    numbers = [rf"{num(a.weights[s - 1], DECIMALS)} {_vector(h)}"
               for s, h in zip(a.top, a.top_states, strict=True)]
    if others:
        symbols.append(rf"\textstyle\sum_{{\text{{{others} others}}}} \alpha_{{{t},j}} h_j")
        numbers.append(_vector(a.rest))
    return (rf"\begin{{aligned}} c_{{{t}}} &= \textstyle\sum_j \alpha_{{{t},j}} h_j = "
            rf"{' + '.join(symbols)} \\ &\approx {wrapped_sum(numbers, per_line=2)} \\ "
            rf"&\approx {_vector(a.context)} \quad \text{{(the first {min(COMPONENTS, d)} of "
            rf"{d} numbers)}} \end{{aligned}}")


def output_line(a: StepArithmetic, alphabet: str) -> str:
    """The logits of the letter written and the runner-up, each as its three parts (with
    the decimals at which the parts add up to the logit as printed), and the letter's
    probability."""
    t = a.t

    def logit(k: int) -> str:
        places, equals = _adding([a.from_state[k], a.from_context[k], a.bias[k]], a.logits[k])
        return (rf"\mathrm{{logit}}_{{{_letter(alphabet[k])}}} &\approx "
                rf"{num(a.from_state[k], places)} + {_factor(a.from_context[k], places)} + "
                rf"{_factor(a.bias[k], places)} {equals} {num(a.logits[k], places)}")

    won = alphabet[a.token]
    top = r"\max \mathrm{logit}"
    out = r"\mathrm{out}"  # the decoder's output layer: not self-attention's W_O
    return (rf"\begin{{aligned}} \mathrm{{logit}} &= W_{{{out}}} [s_{{{t}}}; c_{{{t}}}] + "
            rf"b_{{{out}}} = W_{{{out}}}^{{(s)}} s_{{{t}}} + W_{{{out}}}^{{(c)}} c_{{{t}}} + "
            rf"b_{{{out}}} \\ "
            rf"{logit(a.token)} \\ {logit(a.runner_up)} \\ "
            rf"p(y_{{{t}}} = {_letter(won)}) &= \frac{{\exp(\mathrm{{logit}}_{{{_letter(won)}}}"
            rf" - {top})}}{{\sum_y \exp(\mathrm{{logit}}_y - {top})}} = "
            rf"\frac{{1}}{{{num(a.out_total, 4)}}} \approx "
            rf"{num(a.probabilities[a.token], 4)} \end{{aligned}}")


def example_table(source: list[str], outputs: dict[str, list[str]]) -> pd.DataFrame:
    """The example string and each model's output, position by position; a wrong letter
    is followed by WRONG, and the last column counts the letters right."""
    n = len(source)
    rows = {"source": source + [""]}
    for name, written in outputs.items():
        right = sum(w == s for w, s in zip(written, source, strict=True))
        rows[name] = ([w if w == s else f"{w} {WRONG}"
                       for w, s in zip(written, source, strict=True)] + [f"{right} of {n}"])
    columns = [str(p) for p in range(1, n + 1)] + ["right"]
    return pd.DataFrame.from_dict(rows, orient="index", columns=columns)
