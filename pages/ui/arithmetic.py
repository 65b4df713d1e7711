"""The arithmetic of one attention cell and one output row, written out as LaTeX.

Pure functions of a trace: the page shows the lines with ``st.latex``. Indices
(q_1, k_3) stand for tokens here; token names, which are user text, are shown by
the page as plain text, never inside LaTeX.
"""

from __future__ import annotations

import numpy as np

from attncore.attention import AttentionTrace
from attncore.softmax import SoftmaxSteps

from .numbers import number_latex

#: Terms per line of a written-out sum: d_k = 4 products at 6 decimals, or 6 row-sum
#: terms, ran off the page on one line.
TERMS_PER_LINE = 2


def num(x: float, decimals: int) -> str:
    """A number for LaTeX, rounded (scientific when it doesn't fit); whole numbers exact."""
    if float(x).is_integer() and abs(x) < 1e15:
        return f"{int(x)}"  # inputs such as 1, 0 and 99999999999 read as typed
    return number_latex(x, decimals)


def wrapped_sum(terms: list[str], per_line: int = TERMS_PER_LINE) -> str:
    """``a + b \\ + c + d``: a sum for an ``aligned`` block, ``per_line`` terms a line."""
    lines = [" + ".join(terms[n:n + per_line]) for n in range(0, len(terms), per_line)]
    return r" \\ &\quad + ".join(lines)


def _factor(x: float, decimals: int) -> str:
    s = num(x, decimals)
    return f"({s})" if s.startswith("-") else s


def scale_text(trace: AttentionTrace) -> str:
    """How the scale reads in a formula: ``\\sqrt{2}`` for 1/√2, ``2`` for 1/d_k."""
    d_k = trace.d_k
    if np.isclose(trace.scale, 1 / np.sqrt(d_k)):
        return rf"\sqrt{{{d_k}}}"
    if np.isclose(trace.scale, 1.0):
        return "1"
    if np.isclose(trace.scale, 1 / d_k):
        return f"{d_k}"
    return f"{1 / trace.scale:.6g}"


def cell_lines(
    trace: AttentionTrace, steps: SoftmaxSteps, i: int, j: int, decimals: int
) -> list[str]:
    """LaTeX lines computing weight w_ij of an unbatched trace, from q_i and k_j."""
    q, k = trace.q[i], trace.k[j]
    a, b = i + 1, j + 1
    terms = [f"{_factor(x, decimals)}\\times{_factor(y, decimals)}"
             for x, y in zip(q, k, strict=True)]
    s = trace.raw_scores[i, j]
    lines = [rf"\begin{{aligned}} s_{{{a}{b}}} = q_{{{a}}}\cdot k_{{{b}}} &= "
             rf"{wrapped_sum(terms)} \\ &= {num(s, decimals)} \end{{aligned}}"]
    scaled = trace.scaled_scores[i, j]
    div = scale_text(trace)
    if div == "1":
        lines.append(rf"\text{{no scaling: }} \tilde s_{{{a}{b}}} = s_{{{a}{b}}} = "
                     rf"{num(scaled, decimals)}")
    else:
        lines.append(rf"\tilde s_{{{a}{b}}} = \frac{{s_{{{a}{b}}}}}{{{div}}} = "
                     rf"\frac{{{num(s, decimals)}}}{{{div}}} = {num(scaled, decimals)}")
    if trace.mask is not None and not np.broadcast_to(trace.mask, trace.weights.shape)[i, j]:
        lines.append(rf"\text{{key {b} is masked for query {a}: }} \tilde s_{{{a}{b}}} = "
                     rf"-\infty,\; e^{{-\infty}} = 0,\; w_{{{a}{b}}} = 0")
        return lines
    logit = steps.logits[i, j]
    shift = steps.shift[i, 0]
    arg = rf"\tilde s_{{{a}{b}}}"
    if trace.temperature != 1.0:
        arg += r"/\tau"
        lines.append(rf"\tilde s_{{{a}{b}}} / \tau = {num(scaled, decimals)} / "
                     rf"{num(trace.temperature, decimals)} = {num(logit, decimals)}")
    if shift != 0.0:
        lines.append(rf"e^{{{arg} - m_{{{a}}}}} = e^{{{num(logit, decimals)} - "
                     rf"{_factor(shift, decimals)}}} = {num(steps.exps[i, j], decimals)}"
                     rf"\quad (m_{{{a}}} = \text{{row max, subtracted for stability}})")
    else:
        lines.append(rf"e^{{{arg}}} = e^{{{num(logit, decimals)}}} = "
                     rf"{num(steps.exps[i, j], decimals)}")
    e_ij, total = num(steps.exps[i, j], decimals), num(steps.row_sums[i, 0], decimals)
    shown = wrapped_sum([num(x, decimals) for x in steps.exps[i]], per_line=3)
    lines.append(rf"\begin{{aligned}} \text{{row sum }} Z_{{{a}}} &= {shown} \\ "
                 rf"&= {total} \end{{aligned}}")
    lines.append(rf"w_{{{a}{b}}} = \frac{{{e_ij}}}{{Z_{{{a}}}}} = \frac{{{e_ij}}}{{{total}}} = "
                 rf"{num(trace.weights[i, j], decimals)}")
    return lines


def matrix_latex(m, decimals: int) -> str:
    """A matrix as a LaTeX ``bmatrix``, each number by :func:`num`."""
    rows = [" & ".join(num(x, decimals) for x in row) for row in np.atleast_2d(m)]
    return r"\begin{bmatrix}" + r" \\ ".join(rows) + r"\end{bmatrix}"


def output_row_lines(trace: AttentionTrace, i: int, decimals: int) -> list[str]:
    """LaTeX lines computing output row o_i = Σ_j w_ij v_j of an unbatched trace."""
    a = i + 1
    w = trace.weights[i]

    def vec(row) -> str:
        return matrix_latex(row, decimals)

    symbols = " + ".join(rf"w_{{{a}{j + 1}}} v_{{{j + 1}}}" for j in range(len(w)))
    products = [rf"{num(w[j], decimals)} {vec(trace.v[j])}" for j in range(len(w))]
    return [
        rf"\begin{{aligned}} o_{{{a}}} &= \textstyle\sum_j w_{{{a}j}}\, v_j = {symbols} \\ "
        rf"&= {wrapped_sum(products, per_line=1)} \\ &= {vec(trace.output[i])} \end{{aligned}}",
    ]
