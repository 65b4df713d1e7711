"""One way to write a number for students: in tables, in prose and in LaTeX.

A number is written with a fixed number of decimals while it fits (|x| < 10⁶); larger
numbers, and nonzero numbers that would round to zero, switch to scientific notation
with as many decimals in the mantissa, so nothing is clipped or shown as a false 0.
Zero is never written with a minus sign. A difference, deviation or error that shows
that two computations agree is written by :func:`difference_text`: "exactly 0", or the
small number it is in scientific notation, never a rounded 0.
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
    return mantissa if exponent is None else _times_power(mantissa, exponent)


def _times_power(mantissa: str, exponent: int) -> str:
    return f"{mantissa}×10{str(exponent).translate(_SUPERSCRIPT)}"


def difference_text(x: float, digits: int = 2, *, rounding: bool = False) -> str:
    """A difference, deviation or error, as plain text: ``exactly 0`` when it is exactly
    zero, otherwise in scientific notation with ``digits`` significant digits, however
    small (``4.0×10⁻⁹``, never a rounded ``0``). With ``rounding=True`` a nonzero value
    is followed by " (rounding)", for a page that says why it is not 0.

    >>> difference_text(0.0), difference_text(-0.0)
    ('exactly 0', 'exactly 0')
    >>> difference_text(4e-9), difference_text(-1.386e-15, 3)
    ('4.0×10⁻⁹', '-1.39×10⁻¹⁵')
    >>> difference_text(2.2e-16, rounding=True)
    '2.2×10⁻¹⁶ (rounding)'
    """
    x = float(x)
    if x == 0:
        return "exactly 0"
    if not math.isfinite(x):
        return number_text(x, digits)
    mantissa, exponent = f"{x:.{max(digits, 1) - 1}e}".split("e")
    return _times_power(mantissa, int(exponent)) + (" (rounding)" if rounding else "")


def percent_text(x: float) -> str:
    """A share as a whole percentage; one that would read 100% or 0% without being so gets
    the decimals it needs (a share of 0.996 is not all of it): 0.86 -> "86%",
    0.996 -> "99.6%", 0.99999994 (1 to float32 rounding) -> "100%".

    >>> percent_text(0.86), percent_text(0.996), percent_text(0.0004), percent_text(1.0)
    ('86%', '99.6%', '0.04%', '100%')
    """
    exact = min(abs(x), abs(1 - x)) < 1e-6  # 0 or 1 up to float32 rounding
    for decimals in (0, 1, 2, 3):
        text = f"{x:.{decimals}%}"
        if float(text[:-1]) not in (0.0, 100.0) or exact:
            break
    return text


def significant_text(x: float, digits: int) -> str:
    """``x`` to ``digits`` significant digits, as Python's ``g`` format chooses, with a power
    of ten written ×10ⁿ, never ``e-05``.

    >>> significant_text(2.956e-05, 5), significant_text(0.1234567, 5), significant_text(3.0, 5)
    ('2.956×10⁻⁵', '0.12346', '3')
    >>> significant_text(0.999996, 5)
    '0.999996'
    """
    x = float(x)
    if math.isinf(x):
        return number_text(x, digits)
    text = f"{x:.{digits}g}"
    while float(text) in (0.0, 1.0, -1.0) and float(text) != x and digits < 17:
        digits += 1  # 0.999996 is not 1: as many digits as it takes to say so
        text = f"{x:.{digits}g}"
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    return _times_power(mantissa, int(exponent))


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
