"""One way to write a number for students: in tables, in prose and in LaTeX.

A number is written with a fixed number of decimals while it fits (|x| < 10⁶); larger
numbers, and nonzero numbers that would round to zero, switch to scientific notation
with as many decimals in the mantissa, so nothing is clipped or shown as a false 0.
Zero is never written with a minus sign.
"""

from __future__ import annotations

import math

#: Fixed notation up to this magnitude; scientific from here on.
LARGEST_FIXED = 1e6

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def number_parts(x: float, decimals: int) -> tuple[str, int | None]:
    """The mantissa text and the power of ten (None in fixed notation) of ``x``.

    >>> number_parts(1386281.6, 3)
    ('1.386', 6)
    >>> number_parts(-0.0001, 3)
    ('-1.000', -4)
    >>> number_parts(-0.0, 3)
    ('0.000', None)
    """
    x = float(x)
    fixed = f"{x:.{decimals}f}"
    rounds_to_zero = float(fixed) == 0
    if math.isfinite(x) and (abs(x) >= LARGEST_FIXED or (rounds_to_zero and x != 0)):
        mantissa, exponent = f"{x:.{decimals}e}".split("e")
        return mantissa, int(exponent)
    return (fixed.lstrip("-") if rounds_to_zero else fixed), None


def number_text(x: float, decimals: int) -> str:
    """``x`` as plain text: ``0.401``, ``1.386×10⁶``, ``−∞`` for minus infinity."""
    if math.isinf(x):
        return "−∞" if x < 0 else "∞"
    mantissa, exponent = number_parts(x, decimals)
    return mantissa if exponent is None else f"{mantissa}×10{str(exponent).translate(_SUPERSCRIPT)}"


def number_latex(x: float, decimals: int) -> str:
    """``x`` for LaTeX: ``0.401``, ``1.386 \\times 10^{6}``, ``-\\infty``."""
    if math.isinf(x):
        return r"-\infty" if x < 0 else r"\infty"
    mantissa, exponent = number_parts(x, decimals)
    return mantissa if exponent is None else rf"{mantissa} \times 10^{{{exponent}}}"


def cell_number(x: float, decimals: int) -> str:
    """``x`` for a heatmap cell, where room is short: as :func:`number_text` while it shows
    in fixed notation; a nonzero number too small for ``decimals`` is written as a bound,
    ``<0.01`` (or ``>-0.01``), never as a false ``0.00``."""
    x = float(x)
    if math.isinf(x) or number_parts(x, decimals)[1] is None:
        return number_text(x, decimals)
    if abs(x) < 1:
        smallest = f"{10.0 ** -decimals:.{decimals}f}"  # 0.01 at 2 decimals
        return f"<{smallest}" if x > 0 else f">-{smallest}"
    return number_text(x, 1)
