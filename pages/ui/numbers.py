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
from decimal import ROUND_HALF_UP, Decimal

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


def percent_text(x: float, decimals: int = 0) -> str:
    """A share as a whole percentage (or with at least ``decimals`` decimals, for a ratio of
    two shares that must be checkable from the text); one that would read 100% or 0% without
    being so gets the decimals it needs (a share of 0.996 is not all of it): 0.86 -> "86%",
    0.996 -> "99.6%", 0.99999994 (1 to float32 rounding) -> "100%".

    >>> percent_text(0.86), percent_text(0.996), percent_text(0.0004), percent_text(1.0)
    ('86%', '99.6%', '0.04%', '100%')
    >>> percent_text(0.945), percent_text(0.135)  # one rule for a half: up
    ('95%', '14%')
    >>> percent_text(0.1363, 1), percent_text(0.99996, 1), percent_text(1.0, 1)
    ('13.6%', '99.996%', '100.0%')
    """
    exact = min(abs(x), abs(1 - x)) < 1e-6  # 0 or 1 up to float32 rounding
    for places in range(decimals, max(decimals, 3) + 1):
        text = _percent(x, places)
        if float(text[:-1]) not in (0.0, 100.0) or exact:
            break
    return text


def _percent(x: float, decimals: int) -> str:
    """``x`` in percent with ``decimals`` decimals, a half rounded up as the decimal ``x`` is
    written (0.945 -> 95%, 0.135 -> 14%), not as its nearest binary number happens to fall
    (which would give 94% and 14%)."""
    x = float(x) + 0.0  # −0.0 becomes 0.0
    if not math.isfinite(x):
        return f"{x:.{decimals}%}"
    share = (Decimal(repr(x)) * 100).quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP)
    return f"{share}%"


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
    text = _significant(x, digits)
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    return _times_power(mantissa, int(exponent))


def _significant(x: float, digits: int) -> str:
    """``x`` in Python's ``g`` format to ``digits`` significant digits, or more while that
    would read 0, 1 or −1 for a number that is not."""
    text = f"{x:.{digits}g}"
    while float(text) in (0.0, 1.0, -1.0) and float(text) != x and digits < 17:
        digits += 1  # 0.999996 is not 1: as many digits as it takes to say so
        text = f"{x:.{digits}g}"
    return text


def exact_text(x: float, digits: int = 4) -> str:
    """``x`` in full when a short decimal holds it exactly (a whole number of halves,
    quarters, … up to 2⁻²⁰: 2⁻⁶ is 0.015625, never cut to 0.01562), otherwise to
    ``digits`` significant digits as :func:`significant_text` writes it.

    >>> exact_text(2 ** -6), exact_text(2 ** -8), exact_text(10 * 2 ** -6), exact_text(0.5 ** 0.5)
    ('0.015625', '0.00390625', '0.15625', '0.7071')
    """
    x = float(x)
    if math.isfinite(x) and abs(x) < LARGEST_FIXED:
        for k in range(21):
            if x * 2 ** k == round(x * 2 ** k):
                return f"{x + 0.0:.{k}f}"  # + 0.0: never a "-0"
    return significant_text(x, digits)


def significant_latex(x: float, digits: int) -> str:
    """:func:`significant_text` for LaTeX: ``131.849``, ``3.2 \\times 10^{-5}``.

    >>> print(significant_latex(3.2e-05, 6), significant_latex(131.84912, 6))
    3.2 \\times 10^{-5} 131.849
    """
    x = float(x)
    if math.isinf(x):
        return number_latex(x, digits)
    text = _significant(x, digits)
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    return rf"{mantissa} \times 10^{{{int(exponent)}}}"


def significant_sign(*xs: float, digits: int) -> str:
    """The sign before numbers written by :func:`significant_latex`: ``=`` when each is
    written exactly, ``\\approx`` when one of them is rounded.

    >>> print(significant_sign(0.5, 2.0, digits=6), significant_sign(1 / 3, digits=6))
    = \\approx
    """
    exact = all(float(_significant(float(x), digits)) == float(x) for x in xs)
    return "=" if exact else r"\approx"


def ratio_text(x: float, decimals: int = 1) -> str:
    """How many times (a ratio of paces, of sizes) with ``decimals`` decimals, or up to two
    more while it would read 1.0 for a ratio that is not 1: "1.04 times as fast" never
    reads "1.0 times".

    >>> ratio_text(2.46), ratio_text(1.04), ratio_text(1.0004), ratio_text(1.0)
    ('2.5', '1.04', '1.000', '1.0')
    """
    for places in range(decimals, decimals + 3):
        text = f"{x:.{places}f}"
        if float(text) != 1.0 or x == 1.0:
            break
    return text


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


def probability_text(x: float, decimals: int = 3) -> str:
    """A number of about 1 at most (a probability, a sum of weights, a gate) with
    ``decimals`` decimals, unless they would round it to 1: "exactly 1" when it is 1, and
    0.9999994 is "1 − 6.0×10⁻⁷", never a false "1.000".

    >>> probability_text(0.5), probability_text(1.0), probability_text(0.9999994)
    ('0.500', 'exactly 1', '1 − 6.0×10⁻⁷')
    """
    x = float(x)
    if x == 1.0:
        return "exactly 1"
    mantissa, exponent = number_parts(x, decimals)
    if exponent is None and float(mantissa) == 1.0:
        return f"1 − {difference_text(1.0 - x)}" if x < 1 else f"1 + {difference_text(x - 1.0)}"
    return number_text(x, decimals)


def apart_text(x: float, mark: float, decimals: int = 2) -> str:
    """``x`` with ``decimals`` decimals, or as many more as it takes not to read as
    ``mark``, a value it is compared with (every key of T_k, a threshold of 0.5): 7.9951
    effective keys of 8 is "7.995", never a false "8.00"; "exactly 8" only when it is 8.

    >>> apart_text(3.2, 8), apart_text(7.9951, 8), apart_text(8.0, 8)
    ('3.20', '7.995', 'exactly 8')
    >>> apart_text(0.50020, 0.5, 3)
    '0.5002'
    """
    x, mark = float(x), float(mark)
    if x == mark:
        return f"exactly {mark:g}"
    for more in range(decimals, 16):
        said = number_text(x, more)
        if float(said) != mark:
            return said
    return f"{mark:g} {'−' if x < mark else '+'} {difference_text(abs(mark - x))}"


_SUBSCRIPT = str.maketrans("-0123456789", "₋₀₁₂₃₄₅₆₇₈₉")


def subscript(n: int) -> str:
    """A whole number as a subscript, as a step is written in sₜ: 12 -> "₁₂", -1 -> "₋₁"."""
    return str(int(n)).translate(_SUBSCRIPT)


def superscript(n: int) -> str:
    """A whole number as an exponent, as a count of strings is written in 12³: 3 -> "³",
    16 -> "¹⁶", -2 -> "⁻²"."""
    return str(int(n)).translate(_SUPERSCRIPT)


def whole_text(x: float) -> str:
    """A whole number with its thousands separated and a real minus sign (65,504,
    −1,024), ``−∞``, or from a million on in scientific notation (−1.000×10⁹).

    >>> whole_text(65504.0), whole_text(-1e9), whole_text(float("-inf"))
    ('65,504', '−1.000×10⁹', '−∞')
    """
    x = float(x)
    if math.isinf(x) or abs(x) >= LARGEST_FIXED:
        return number_text(x, 3).replace("-", "−")
    return f"{x:,.0f}".replace("-", "−")


def values_text(values, decimals: int = 4) -> str:
    """Several numbers said as one, with a real minus sign: "NaN" when all are NaN,
    "exactly 0" when all are 0, the value when all are equal, otherwise their range
    (of the numbers that are not NaN).

    >>> values_text([0.0, 0.0]), values_text([0.25, 0.25]), values_text([-1e9, 2.0], 0)
    ('exactly 0', '0.2500', 'from −1×10⁹ to 2')
    """
    values = [float(v) for v in _flat(values)]
    if all(math.isnan(v) for v in values):
        return "NaN"
    if all(v == 0 for v in values):
        return "exactly 0"
    if all(v == values[0] for v in values):
        return number_text(values[0], decimals).replace("-", "−")
    finite = [v for v in values if not math.isnan(v)]
    low, high = (number_text(v, decimals).replace("-", "−") for v in (min(finite), max(finite)))
    return f"from {low} to {high}"


def _flat(values) -> list:
    """The numbers of a number, a list or an array of any shape, in order."""
    if hasattr(values, "ravel"):
        return values.ravel().tolist()
    if isinstance(values, (list, tuple)):
        return [v for item in values for v in _flat(item)]
    return [values]


def bytes_text(n_bytes: float) -> str:
    """A size in MB (10⁶ bytes) to 3 significant digits (:func:`significant_text`), or in
    GB (10⁹) where the MB would round to 1000, in whole GB grouped by thousands where the GB
    would: never "1e+03 MB" nor "4.4e+03 GB".

    >>> bytes_text(47_185_920), bytes_text(999_600_000), bytes_text(4.398e12)
    ('47.2 MB', '0.9996 GB', '4,398 GB')
    """
    for unit, size in (("MB", 1e6), ("GB", 1e9)):
        amount = n_bytes / size
        if float(f"{amount:.3g}") < 1000:
            return f"{significant_text(amount, 3)} {unit}"
    return f"{amount:,.0f} GB"


def said_number(x: float) -> str:
    """A number in a text alternative: 3 significant digits (whole numbers from 100 on,
    with thousands separated: 1,024), a real minus sign, and scientific notation below
    0.001 and from a million on (never a false 0). A rounded number keeps its trailing
    zeros, so that a weight of 0.99996 is said "1.00", not an exact-sounding "1"."""
    x = float(x) + 0.0  # −0.0 becomes 0.0: zero is never said with a sign
    if not math.isfinite(x):
        return number_text(x, 0)
    if 100 <= abs(x) < 1e6:
        return f"{x:,.0f}".replace("-", "−")
    if x == 0 or 1e-3 <= abs(x) < 100:
        short = f"{x:.3g}"
        exact = abs(float(short) - x) <= 1e-12 * abs(x)  # 6.8 / 8 is 0.85 to the last bits
        said = short if exact else f"{x:#.3g}".rstrip(".")  # 99.999: "100"
        return said.replace("-", "−")
    return number_text(x, 2).replace("-", "−")
