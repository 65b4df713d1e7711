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

from .arithmetic import num, wrapped_sum
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


def _factor(x: float, decimals: int = DECIMALS) -> str:
    s = num(x, decimals)
    return f"({s})" if s.startswith("-") else s


def score_lines(a: StepArithmetic, letters: list[str]) -> list[str]:
    """The score of the position with the largest weight, written out, then every
    position's score, e^(e − m) and weight in one array."""
    t, b, A = a.t, a.position, a.v.size
    term = lambda k: (rf"{_factor(a.v[k])}\tanh({num(a.q[k], DECIMALS)} "  # noqa: E731
                      rf"{'-' if a.u[k] < 0 else '+'} {num(abs(a.u[k]), DECIMALS)})")
    shown = [term(0), term(1), r"\cdots", term(A - 1)] if A > 3 else [term(k) for k in range(A)]
    # the first line's sum says how many terms there are: the numbers show three of them
    one = (rf"\begin{{aligned}} e_{{{t},{b}}} &= v^\top \tanh(W s_{{{t - 1}}} + U h_{{{b}}}) "
           rf"= \sum_{{a=1}}^{{{A}}} v_a \tanh\big((W s_{{{t - 1}}})_a + (U h_{{{b}}})_a\big)"
           rf" \\ &\approx {' + '.join(shown)} \\ "
           rf"&\approx {num(a.scores[b - 1], DECIMALS)} \end{{aligned}}")
    head = " & ".join(str(s) for s in range(1, len(letters) + 1))
    written = " & ".join(_letter(letter) for letter in letters)
    rows = [(rf"e_{{{t},s}}", a.scores), (rf"e^{{e_{{{t},s}} - m}}", a.exps),
            (rf"\alpha_{{{t},s}}", a.weights)]
    body = r" \\ ".join(name + " & " + " & ".join(_cell(v) for v in values)
                        for name, values in rows)
    table = (rf"\begin{{array}}{{r|{'c' * len(letters)}}} s & {head} \\ x_s & {written} "
             rf"\\ \hline {body} \end{{array}}")
    return [one, table]


def softmax_line(a: StepArithmetic) -> str:
    """m, the sum Z (the terms too small for DECIMALS summed together) and the largest
    weight: α = e^(e − m) / Z."""
    t, b = a.t, a.position
    large = a.exps >= 0.5 * 10.0 ** -DECIMALS
    exps = [num(x, DECIMALS) for x in a.exps[large]]
    if (~large).any():
        exps.append(rf"{num(a.exps[~large].sum(), DECIMALS + 1)}\ "
                    rf"(\text{{the other {int((~large).sum())} together}})")
    return (rf"\begin{{aligned}} m &= \max_s e_{{{t},s}} = e_{{{t},{b}}} \approx "
            rf"{num(a.shift, DECIMALS)}, \qquad Z = \sum_s e^{{e_{{{t},s}} - m}} \\ "
            rf"&\approx {wrapped_sum(exps, per_line=6)} \approx {num(a.total, DECIMALS)} \\ "
            rf"\alpha_{{{t},{b}}} &= \frac{{e^{{e_{{{t},{b}}} - m}}}}{{Z}} = "
            rf"\frac{{1}}{{{num(a.total, DECIMALS)}}} \approx "
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
        symbols.append(rf"\textstyle\sum_{{\text{{{others} others}}}} \alpha_{{{t},s}} h_s")
        numbers.append(_vector(a.rest))
    return (rf"\begin{{aligned}} c_{{{t}}} &= \textstyle\sum_s \alpha_{{{t},s}} h_s = "
            rf"{' + '.join(symbols)} \\ &\approx {wrapped_sum(numbers, per_line=2)} \\ "
            rf"&\approx {_vector(a.context)} \quad \text{{(the first {min(COMPONENTS, d)} of "
            rf"{d} numbers)}} \end{{aligned}}")


def output_line(a: StepArithmetic, alphabet: str) -> str:
    """The logits of the letter written and the runner-up, each as its three parts, and
    the letter's probability."""
    t = a.t

    def logit(k: int) -> str:
        return (rf"z_{{{_letter(alphabet[k])}}} &\approx {num(a.from_state[k], DECIMALS)} + "
                rf"{_factor(a.from_context[k])} + {_factor(a.bias[k])} \approx "
                rf"{num(a.logits[k], DECIMALS)}")

    won = alphabet[a.token]
    return (rf"\begin{{aligned}} z &= W_o [s_{{{t}}}; c_{{{t}}}] + b_o = "
            rf"W_o^{{(s)}} s_{{{t}}} + W_o^{{(c)}} c_{{{t}}} + b_o \\ "
            rf"{logit(a.token)} \\ {logit(a.runner_up)} \\ "
            rf"p(y_{{{t}}} = {_letter(won)}) &= \frac{{e^{{z_{{{_letter(won)}}} - "
            rf"\max z}}}}{{\sum_y e^{{z_y - \max z}}}} = "
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
