"""The arithmetic of one attention cell and one output row, written out as LaTeX.

Pure functions of a trace: the page shows the lines with ``st.latex``. Indices
(q_1, k_3) stand for tokens here; token names, which are user text, are shown by
the page as plain text, never inside LaTeX.
"""

from __future__ import annotations

import numpy as np

from attncore.attention import AttentionTrace
from attncore.softmax import SoftmaxSteps

from .numbers import number_latex, number_parts

#: Terms per line of a written-out sum: d_k = 4 products at 6 decimals, or 6 row-sum
#: terms, ran off the page on one line.
TERMS_PER_LINE = 2


def num(x: float, decimals: int) -> str:
    """A number for LaTeX, rounded (scientific when it doesn't fit); whole numbers exact."""
    if float(x).is_integer() and abs(x) < 1e15:
        return f"{int(x)}"  # inputs such as 1, 0 and 99999999999 read as typed
    return number_latex(x, decimals)


def shown(x, decimals: int) -> np.ndarray:
    """The numbers :func:`num` writes for ``x``, read back: what a student copies."""
    def read(v: float) -> float:
        if not np.isfinite(v) or (v.is_integer() and abs(v) < 1e15):
            return v
        mantissa, exponent = number_parts(v, decimals)
        return float(mantissa if exponent is None else f"{mantissa}e{exponent}")

    values = np.asarray(x, dtype=np.float64)
    return np.vectorize(read, otypes=[np.float64])(values) if values.size else values


def sign(left, right) -> str:
    """``=`` between two sides whose values are equal in every entry, ``\approx``
    otherwise: a chain of written-out arithmetic never says = where a number was rounded
    (1/√2 ≈ 0.707). "≈" is never false; "=" is used only when it is exactly true."""
    left, right = np.asarray(left, dtype=np.float64), np.asarray(right, dtype=np.float64)
    return "=" if np.array_equal(left, right) else r"\approx"


def equals(x, decimals: int) -> str:
    """The sign between ``x`` and its written form: ``=`` when :func:`num` shows it
    exactly, ``\approx`` when the digits shown are rounded."""
    return sign(x, shown(x, decimals))


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
    # Every "=" below is exactly true of the numbers on either side as written; a side
    # that was rounded is joined by "≈" (see sign).
    s = trace.raw_scores[i, j]
    s_sum = float(np.sum(shown(q, decimals) * shown(k, decimals)))
    lines = [rf"\begin{{aligned}} s_{{{a}{b}}} = q_{{{a}}}\cdot k_{{{b}}} "
             rf"&{sign(s, s_sum)} {wrapped_sum(terms)} \\ &{sign(s_sum, shown(s, decimals))} "
             rf"{num(s, decimals)} \end{{aligned}}"]
    scaled = trace.scaled_scores[i, j]
    div = scale_text(trace)
    if div == "1":
        lines.append(rf"\text{{no scaling: }} \tilde s_{{{a}{b}}} = s_{{{a}{b}}} "
                     rf"{equals(scaled, decimals)} {num(scaled, decimals)}")
    else:
        lines.append(rf"\tilde s_{{{a}{b}}} = \frac{{s_{{{a}{b}}}}}{{{div}}} "
                     rf"{equals(s, decimals)} \frac{{{num(s, decimals)}}}{{{div}}} "
                     rf"{sign(shown(s, decimals) * trace.scale, shown(scaled, decimals))} "
                     rf"{num(scaled, decimals)}")
    if trace.mask is not None and not np.broadcast_to(trace.mask, trace.weights.shape)[i, j]:
        lines.append(rf"\text{{key {b} is masked for query {a}: }} \tilde s_{{{a}{b}}} = "
                     rf"-\infty,\; e^{{-\infty}} = 0,\; w_{{{a}{b}}} = 0")
        return lines
    logit = steps.logits[i, j]
    shift = steps.shift[i, 0]
    arg = rf"\tilde s_{{{a}{b}}}"
    if trace.temperature != 1.0:
        arg += r"/\tau"
        tau = trace.temperature
        quotient = shown(scaled, decimals) / shown(tau, decimals)
        lines.append(rf"\tilde s_{{{a}{b}}} / \tau {equals([scaled, tau], decimals)} "
                     rf"{num(scaled, decimals)} / {num(tau, decimals)} "
                     rf"{sign(quotient, shown(logit, decimals))} {num(logit, decimals)}")
    e_ij = steps.exps[i, j]
    if shift != 0.0:
        written = np.exp(shown(logit, decimals) - shown(shift, decimals))
        exponent = rf"{arg} - m_{{{a}}}"
        lines.append(rf"e^{{{exponent}}} {equals([logit, shift], decimals)} "
                     rf"e^{{{num(logit, decimals)} - {_factor(shift, decimals)}}} "
                     rf"{sign(written, shown(e_ij, decimals))} {num(e_ij, decimals)}"
                     rf"\quad (m_{{{a}}} = \text{{row max, subtracted for stability}})")
    else:
        exponent = arg
        lines.append(rf"e^{{{arg}}} {equals(logit, decimals)} e^{{{num(logit, decimals)}}} "
                     rf"{sign(np.exp(shown(logit, decimals)), shown(e_ij, decimals))} "
                     rf"{num(e_ij, decimals)}")
    row_exps, total = steps.exps[i], steps.row_sums[i, 0]
    terms_sum = float(np.sum(shown(row_exps, decimals)))
    lines.append(rf"\begin{{aligned}} \text{{row sum }} Z_{{{a}}} "
                 rf"&{equals(row_exps, decimals)} "
                 rf"{wrapped_sum([num(x, decimals) for x in row_exps], per_line=3)} \\ "
                 rf"&{sign(terms_sum, shown(total, decimals))} {num(total, decimals)} "
                 r"\end{aligned}")
    w_ij = trace.weights[i, j]
    quotient = shown(e_ij, decimals) / shown(total, decimals)
    lines.append(rf"w_{{{a}{b}}} = \frac{{e^{{{exponent}}}}}{{Z_{{{a}}}}} "
                 rf"{equals([e_ij, total], decimals)} "
                 rf"\frac{{{num(e_ij, decimals)}}}{{{num(total, decimals)}}} "
                 rf"{sign(quotient, shown(w_ij, decimals))} {num(w_ij, decimals)}")
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
    written = shown(w, decimals) @ shown(trace.v, decimals)  # (d_v,): the sum as written
    return [
        rf"\begin{{aligned}} o_{{{a}}} &= \textstyle\sum_j w_{{{a}j}}\, v_j = {symbols} \\ "
        rf"&{equals(np.concatenate([w, trace.v.ravel()]), decimals)} "
        rf"{wrapped_sum(products, per_line=1)} \\ "
        rf"&{sign(written, shown(trace.output[i], decimals))} {vec(trace.output[i])} "
        r"\end{aligned}",
    ]
