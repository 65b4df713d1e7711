"""The one number formatter of lessons 1 and 2 (pages/ui/numbers.py) and the LaTeX sums."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pages.ui.arithmetic import num, wrapped_sum
from pages.ui.numbers import number_latex, number_text, significant_text


@pytest.mark.parametrize("x, decimals, text", [
    (0.40111, 3, "0.401"),
    (2.0, 3, "2.000"),
    (-0.0, 3, "0.000"),            # never "−0.000"
    (-0.0004, 3, "-4.000×10⁻⁴"),   # would round to a false 0
    (-0.0004, 6, "-0.000400"),     # fits at 6 decimals
    (999999.4, 1, "999999.4"),     # the largest that stays fixed
    (1386281.6, 3, "1.386×10⁶"),   # e^14.1421 at τ = 0.1, lesson 1
    (1386281.6, 6, "1.386282×10⁶"),
    (1e300, 2, "1.00×10³⁰⁰"),
    (float("-inf"), 3, "−∞"),
])
def test_number_text(x, decimals, text):
    assert number_text(x, decimals) == text


@pytest.mark.parametrize("x, digits, text", [
    (2.956e-05, 5, "2.956×10⁻⁵"),   # lesson 9's hand tables showed "2.956e-05"
    (0.123456789, 5, "0.12346"),
    (-1234567.0, 3, "-1.23×10⁶"),
    (3.0, 5, "3"),
])
def test_significant_text_never_writes_e_notation(x, digits, text):
    assert significant_text(x, digits) == text


def test_number_latex_uses_a_power_of_ten():
    assert number_latex(1386281.6, 3) == r"1.386 \times 10^{6}"
    assert number_latex(-0.0, 2) == "0.00"
    assert number_latex(float("-inf"), 2) == r"-\infty"


def test_whole_numbers_in_the_arithmetic_read_as_typed():
    assert num(99999999999.0, 3) == "99999999999"
    assert num(1.0, 6) == "1"
    assert num(0.5, 3) == "0.500"


def test_wrapped_sum_breaks_every_few_terms():
    assert wrapped_sum(["a", "b", "c"], per_line=2) == r"a + b \\ &\quad + c"
    assert wrapped_sum(["a"]) == "a"


def test_typed_text_writes_inputs_as_a_student_would():
    from pages.ui.tables import typed_text
    assert typed_text([[-0.0, 0.23000000000000004, -1.5, 1e300]]).tolist() == [
        ["0", "0.23", "-1.5", "1e+300"]]


def test_heatmap_cells_never_show_a_false_zero():
    """A weight of 3e-5 at 2 decimals would print "0.00"; the cell says <0.01 instead,
    while 0.401 keeps its fixed form and an exact 0 stays 0.00."""
    from pages.ui.figures import matrix_heatmap

    fig = matrix_heatmap([[0.401, 3e-5], [0.0, 1.0]], ["a", "b"], ["a", "b"], title="w",
                         decimals=2)
    assert [list(row) for row in fig.data[0].text] == [["0.40", "<0.01"], ["0.00", "1.00"]]


@pytest.mark.parametrize("x, decimals, text", [
    (-0.004, 2, ">-0.01"),       # a small negative score
    (4e-9, 3, "<0.001"),
    (1386281.6, 2, "1.4×10⁶"),   # too wide for fixed notation
    (float("-inf"), 2, "−∞"),
])
def test_cell_numbers_bound_what_they_cannot_show(x, decimals, text):
    from pages.ui.numbers import cell_number

    assert cell_number(x, decimals) == text


@pytest.mark.parametrize("x, text", [
    (0.0, "exactly 0"),
    (-0.0, "exactly 0"),              # never "-0" nor "0.0e+00"
    (4e-9, "4.0×10⁻⁹"),               # tiny, never a rounded 0
    (-2.220446049250313e-16, "-2.2×10⁻¹⁶"),
    (5e-324, "4.9×10⁻³²⁴"),           # the smallest float64 above 0 is still not 0
    (0.35, "3.5×10⁻¹"),
])
def test_a_difference_is_exactly_zero_or_written_in_full(x, text):
    from pages.ui.numbers import difference_text

    assert difference_text(x) == text


def test_a_difference_names_rounding_only_when_it_is_not_zero():
    from pages.ui.numbers import difference_text

    assert difference_text(1.1102230246251565e-15, 3, rounding=True) == "1.11×10⁻¹⁵ (rounding)"
    assert difference_text(0.0, rounding=True) == "exactly 0"
    assert difference_text(float("nan")) == "nan"  # shown as it is, never as 0


@pytest.mark.parametrize("tokens, labels", [
    (["the", "cat", "sat", "on", "the", "mat"],
     ["the", "cat", "sat", "on", "the (2nd)", "mat"]),
    (["A", "dog", "<pad>", "<pad>", "<pad>", "<pad>"],
     ["A", "dog", "<pad>", "<pad> (2nd)", "<pad> (3rd)", "<pad> (4th)"]),
    (["7", "3", "7", "3", "7"], ["7", "3", "7 (2nd)", "3 (2nd)", "7 (3rd)"]),
])
def test_a_repeated_token_is_marked_by_its_occurrence_not_by_a_number(tokens, labels):
    """"the (2)" reads as position 2; "the (2nd)" says which "the" it is."""
    from pages.ui.labels import unique_labels

    assert unique_labels(tokens) == labels


def test_occurrence_marks_count_as_english_does_and_stay_distinct():
    from pages.ui.labels import ordinal, unique_labels

    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 112)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "101st",
        "111th", "112th"]
    many = unique_labels(["x"] * 30 + ["x (2nd)"])  # a token typed to look like a mark
    assert len(set(many)) == len(many) == 31


def test_written_arithmetic_says_approx_only_where_a_number_was_rounded():
    from pages.ui.arithmetic import equals, shown, sign

    assert equals(1 / math.sqrt(2), 3) == r"\approx"  # 0.70710678... written 0.707
    assert equals(0.5, 3) == "=" and equals(4.0, 3) == "="
    assert equals([0.5, 1 / 3], 3) == r"\approx"  # one rounded entry is enough
    assert shown(1386281.6, 3) == 1.386e6  # written 1.386×10⁶
    # 0.707 / 0.5 = 1.414 exactly as written, though 1/√2 / 0.5 = 1.41421...
    assert sign(shown(1 / math.sqrt(2), 3) / 0.5, shown(math.sqrt(2), 3)) == "="


@pytest.mark.parametrize("x, text", [
    (0.86, "86%"),
    (0.996, "99.6%"),  # never a false "100%"
    (0.0004, "0.04%"),  # never a false "0%"
    (0.99999994, "100%"),  # 1 to float32 rounding: all of it
    (0.0, "0%"),
    (0.945, "95%"),  # 189/200: a half, rounded up as written, not down as 0.9449999... is
    (0.135, "14%"),  # 27/200: the same rule, up
])
def test_percent_text_never_rounds_to_all_or_nothing(x, text):
    from pages.ui.numbers import percent_text

    assert percent_text(x) == text


def test_percent_text_keeps_the_decimals_asked_for():
    from pages.ui.numbers import percent_text

    # 0.1363 to one decimal: 13.63 -> 13.6; 0.99996 -> 99.996, never a false 100.0
    assert percent_text(0.1363, 1) == "13.6%" and percent_text(0.5, 1) == "50.0%"
    assert percent_text(0.99996, 1) == "99.996%" and percent_text(1.0, 1) == "100.0%"


def test_significant_latex_writes_what_significant_text_writes():
    """The same digits as the plain text, with LaTeX's power of ten: a weight of 3.2e-5
    stays visible, and 0.9999996 is not written as a false 1."""
    from pages.ui.numbers import significant_latex

    assert significant_latex(3.2e-05, 6) == r"3.2 \times 10^{-5}"
    assert significant_latex(131.849123, 6) == "131.849"
    assert significant_latex(0.9999996, 6) == "0.9999996"
    assert significant_latex(float("-inf"), 6) == r"-\infty"


def test_significant_sign_says_approx_only_for_a_rounded_number():
    from pages.ui.numbers import significant_sign

    assert significant_sign(0.5, 5.65625, digits=6) == "="  # both written in full
    assert significant_sign(0.5, math.sqrt(32), digits=6) == r"\approx"  # 5.65685...
    assert significant_sign(0.9999996, digits=6) == "="  # written with 7 digits, exact


@pytest.mark.parametrize("x, text", [
    (2.46, "2.5"),
    (1.04, "1.04"),     # never "1.0 times" for a ratio that is not 1
    (0.996, "0.996"),
    (1.0004, "1.000"),  # two more decimals at most
    (1.0, "1.0"),
])
def test_ratio_text_never_reads_1_for_a_ratio_that_is_not(x, text):
    from pages.ui.numbers import ratio_text

    assert ratio_text(x) == text


@pytest.mark.parametrize("x, text", [
    (0.5, "0.500"),
    (1.0, "exactly 1"),
    (0.9999994, "1 − 6.0×10⁻⁷"),     # 3 decimals would print a false 1.000
    (0.99996, "1 − 4.0×10⁻⁵"),
    (0.9994, "0.999"),                # rounds below 1: written as it is
    (1.0000000000000002, "1 + 2.2×10⁻¹⁶"),  # a sum of weights one rounding over 1
    (0.0001, "1.000×10⁻⁴"),           # never a false 0.000
])
def test_probability_text_never_reads_1_for_a_number_that_is_not(x, text):
    from pages.ui.numbers import probability_text

    assert probability_text(x) == text


def test_subscript_writes_steps_as_the_formulas_do():
    from pages.ui.numbers import subscript

    assert (subscript(1), subscript(12), subscript(-1)) == ("₁", "₁₂", "₋₁")


def test_superscript_writes_exponents_as_a_count_of_strings_is_written():
    from pages.ui.numbers import superscript

    assert (superscript(3), superscript(16), superscript(-2)) == ("³", "¹⁶", "⁻²")


@pytest.mark.parametrize("x, text", [
    (65504.0, "65,504"),           # float16's largest finite number
    (-1024.0, "−1,024"),           # a real minus sign
    (-1e9, "−1.000×10⁹"),          # from a million on: scientific
    (float("-inf"), "−∞"),
])
def test_whole_text_separates_thousands_and_switches_at_a_million(x, text):
    from pages.ui.numbers import whole_text

    assert whole_text(x) == text


@pytest.mark.parametrize("values, decimals, text", [
    ([float("nan")] * 3, 4, "NaN"),
    ([0.0, -0.0], 4, "exactly 0"),             # −0.0 is 0 as well
    ([1 / 6] * 6, 4, "0.1667"),                # all equal: the value once
    ([-1e9, -1e9], 0, "−1×10⁹"),
    ([float("-inf")] * 2, 4, "−∞"),
    ([0.25, float("nan"), -0.5], 4, "from −0.5000 to 0.2500"),  # NaN left out of a range
])
def test_values_text_says_several_numbers_as_one(values, decimals, text):
    from pages.ui.numbers import values_text

    assert values_text(values, decimals) == text
    assert values_text(np.array(values), decimals) == text  # an array says the same


@pytest.mark.parametrize("n_bytes, text", [
    (2 * 30 * 3 * 64 * 1024 * 2 * 2, "47.2 MB"),  # 47,185,920 bytes to 3 digits
    (11_520, "0.0115 MB"),  # small sizes stay in MB
    (999_400_000, "999 MB"),
    (999_600_000, "0.9996 GB"),  # "1e+03 MB" at 3 digits; "1 GB" would read exactly 1
    (1.51e9, "1.51 GB"),
    (999.6e9, "1,000 GB"),  # would round to 1000 GB: whole gigabytes, grouped
    (4.398e12, "4,398 GB"),  # not "4.4e+03 GB"
])
def test_bytes_text_switches_to_gb_where_mb_would_read_1000(n_bytes, text):
    from pages.ui.numbers import bytes_text

    assert bytes_text(n_bytes) == text


@pytest.mark.parametrize("x, text", [
    (2.0 ** -6, "0.015625"),  # 1/64: six decimals, all of them, never 0.01562
    (2.0 ** -8, "0.00390625"),  # 1/256
    (10 * 2.0 ** -6, "0.15625"),  # 10/64 = 5/32
    (0.5, "0.5"),
    (-0.0, "0"),  # never "-0"
    (2.0 ** -0.5, "0.7071"),  # 1/√2 has no finite decimal: 4 significant digits
    (2.0 ** -21, "4.768×10⁻⁷"),  # past 2⁻²⁰: significant digits
])
def test_exact_text_writes_a_short_exact_decimal_in_full(x, text):
    from pages.ui.numbers import exact_text

    assert exact_text(x) == text
