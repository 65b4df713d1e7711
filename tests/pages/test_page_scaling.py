"""Interaction tests for lesson 2, why divide by √d_k (AppTest, no browser)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import chart_array, chart_spec, open_page
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "2_Scaling.py")


def run(**query) -> AppTest:
    return open_page(PAGE, **query)


def as_float(text: str) -> float:
    """A table's number as number_text writes it: 0.401, −0.027 or 1.835×10⁻⁴."""
    mantissa, _, power = text.replace("−", "-").partition("×10")
    exponent = power.translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789"))
    return float(mantissa) * 10.0 ** int(exponent or 0)


def moments(at: AppTest):
    """The moments table: rows qᵀk and qᵀk/√d_k."""
    return next(df for df in (t.value for t in at.table)
                if "empirical variance" in getattr(df, "columns", [])).map(as_float)


def summary(at: AppTest):
    return next(df for df in (t.value for t in at.table)
                if "max weight" in getattr(df, "index", []))


def test_defaults_show_variance_near_theory():
    at = run()
    m = moments(at)
    # d_k = 64, σ² = 1: theory 64 and 1; 1000 samples give a relative standard error of
    # sqrt(2/999 + 6/(64·1000)) = 0.047; allow five.
    assert m.loc["qᵀk", "theory variance"] == 64.0
    assert abs(m.loc["qᵀk", "empirical variance"] / 64 - 1) < 5 * 0.047
    assert abs(m.loc["qᵀk / √d_k", "empirical variance"] - 1) < 5 * 0.047


def test_sigma_changes_the_theory_to_d_k_sigma4():
    at = run()
    at.slider(key="sc_sigma2").set_value(2.0).run()
    assert moments(at).loc["qᵀk", "theory variance"] == 64 * 2.0**2


def weight(text: str) -> float:
    """A largest weight as the table writes it: 0.634, "1 − 9.6×10⁻⁹" (never a rounded
    "1.000"), "exactly 1" for a single key."""
    if text == "exactly 1" or text.startswith("1 (the other weights underflow"):
        return 1.0
    if text.startswith("1 − "):
        return 1.0 - as_float(text.removeprefix("1 − "))
    assert text != "1.000", "a rounded weight reads as a false 1"
    return as_float(text)


def test_large_d_k_without_scaling_saturates():
    at = run(sc_dk="1024", sc_nkeys="8")
    table = summary(at)
    shown = table.loc["max weight", "no scaling"]
    assert shown.startswith("1 − ") and weight(shown) > 0.99
    # 1/d_k: almost uniform over 8 keys, e^entropy close to 8.
    assert float(table.loc["effective keys e^entropy", "1/d_k"].split(" of ")[0]) > 7.5


def test_a_saturated_entropy_is_not_shown_as_zero():
    # d_k = 1024, σ² = 4, seed 0: the unscaled softmax of the query shown puts all but
    # about 1e-25 of the weight on one key, so its entropy is tiny but not 0 (2.6e-24
    # computed in float64), and its largest weight, 1.0 in float64, is not exactly 1.
    at = run(sc_dk="1024", sc_sigma2="4.0")
    entropy = summary(at).loc["entropy (of ln T_k)", "no scaling"].split(" of ")[0]
    assert "×10⁻" in entropy, entropy
    assert summary(at).loc["max weight", "no scaling"].startswith("1 − ")


@pytest.mark.parametrize("query", [
    {"sc_dk": "1024", "sc_samples": "10000", "sc_trials": "200", "sc_nkeys": "64",
     "sc_sigma2": "4.0"},
    {"sc_temp": "0.05", "sc_nkeys": "1"},
    {"sc_temp": "20.0", "sc_dk": "1"},
])
def test_extreme_settings_give_numbers_not_nan(query):
    at = run(**query)
    text = " ".join(m.value for m in at.markdown) + summary(at).to_string()
    assert "nan" not in text.lower() and "inf" not in text.lower()


def test_temperature_slider_moves_between_sharp_and_uniform():
    at = run()
    assert [h.value for h in at.header][-1] == "4 · Temperature τ: from sharp to uniform attention"
    at.select_slider(key="sc_temp").set_value(20.0).run()
    assert not at.exception
    # At T = 20 the 1/√d_k scores of 8 keys (|s| of order 1, below 3 with σ² = 1) are
    # divided by 20: every weight lies within a factor e^{±2·3/20} of 1/8.
    weights = chart_array(at, "sc_fig_temperature_weights", "y")
    assert weights.size == 8 and weights.sum() == pytest.approx(1.0)
    assert weights.max() < math.exp(6 / 20) / 8


def test_section_4_does_not_follow_d_k_n_or_sigma():
    # Its own example: moving the controls of sections 1 to 3 leaves its figures as
    # they were, so the browser does not draw them again.
    at = run()
    keys = ("sc_fig_temperature_weights", "sc_fig_temperature")
    before = [chart_spec(at, key) for key in keys]
    at.select_slider(key="sc_dk").set_value(512)
    at.slider(key="sc_sigma2").set_value(2.0)
    at.slider(key="sc_nkeys").set_value(30).run()
    assert [chart_spec(at, key) for key in keys] == before


def test_practice_question_checks_the_answer():
    at = run()
    at.number_input(key="sc_pq2").set_value(64.0).run()
    assert any("Right" in s.value for s in at.success)
    at.number_input(key="sc_pq2").set_value(8.0).run()  # the standard deviation, not variance
    assert any("Not quite" in w.value for w in at.warning)


def test_link_holds_settings_and_nonsense_falls_back():
    at = run(sc_dk="256", sc_samples="300")
    assert at.select_slider(key="sc_dk").value == 256
    assert moments(at).loc["qᵀk", "theory variance"] == 256.0
    at = run(sc_dk="1000", sc_samples="lots", sc_sigma2="-3")
    assert at.select_slider(key="sc_dk").value == 64
    assert math.isclose(moments(at).loc["qᵀk", "theory variance"], 64.0)


def test_temperature_is_tau():
    at = run()
    assert at.select_slider(key="sc_temp").label == "Softmax temperature τ"
    titles = [chart_spec(at, key)["layout"]["title"]["text"]
              for key in ("sc_fig_temperature_weights",)]
    assert titles == ["softmax(s / τ) at τ = 1"]


def test_presenter_mode_leaves_out_the_long_captions():
    at = run(presenter="true")
    main_captions = [c.value for c in at.main.caption]
    assert not any(c.startswith("Theory:") for c in main_captions)
    # every figure still drawn: histograms, variance, saturation, curves, temperature (2)
    assert len(at.get("plotly_chart")) == 6


def markdown_with(at: AppTest, start: str) -> str:
    """The page's markdown that starts with ``start``, links reduced to their text."""
    texts = (re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.value) for m in at.markdown)
    return next(t for t in texts if t.startswith(start))


def theory_caption(at: AppTest) -> str:
    """The captions under the moments table: the theory, then the spread of new samples."""
    captions = [c.value for c in at.caption]
    first = next(i for i, c in enumerate(captions) if c.startswith("Theory:"))
    return " ".join(captions[first:first + 2])


@pytest.mark.parametrize("query, variance_spread, normal_spread", [
    # sqrt(2/999 + 6/(64·1000)) = sqrt(0.0020020 + 0.0000938) = 0.04578; sqrt(2/999) = 0.04474
    ({}, "±4.6%", "4.5%"),
    # sqrt(2/999 + 6/1000) = sqrt(0.0080020) = 0.08945: twice the normal-only 4.5%
    ({"sc_dk": "1"}, "±8.9%", "4.5%"),
    # sqrt(2/99 + 6/100) = sqrt(0.080202) = 0.2832; sqrt(2/99) = 0.1421
    ({"sc_dk": "1", "sc_samples": "100", "sc_sigma2": "4.0"}, "±28%", "14%"),
    # Seed 12 lands its means 0.006 standard deviations from 0: said as a bound, not "0.0".
    ({"sc_seed": "12"}, "±4.6%", "4.5%"),
])
def test_theory_caption_states_the_spread_for_this_d_k_and_n(query, variance_spread,
                                                             normal_spread):
    at = run(**query)
    caption = theory_caption(at)
    assert f"{variance_spread} for either variance" in caption
    assert f"√(2/(N−1)) would be {normal_spread}" in caption
    assert "wobble" not in caption and "±4% at" not in caption
    # How far this seed landed, in those standard deviations, from the table's own numbers.
    m = moments(at)
    d_k, n = int(query.get("sc_dk", 64)), int(query.get("sc_samples", 1000))
    sigma2 = float(query.get("sc_sigma2", 1.0))
    rel_sd = math.sqrt(2 / (n - 1) + 6 / (d_k * n))
    z_var = (m.loc["qᵀk / √d_k", "empirical variance"] / sigma2**2 - 1) / rel_sd
    z_mean = m.loc["qᵀk / √d_k", "empirical mean"] / (sigma2 / math.sqrt(n))
    away = r"(within 0\.05 standard deviations of|(\d+\.\d) standard deviations (above|below))"
    said = re.search(rf"Here the means are {away} 0 and the variances {away} the theory",
                     caption)
    for z, (phrase, size, side) in ((z_mean, said.group(1, 2, 3)),
                                    (z_var, said.group(4, 5, 6))):
        if abs(z) < 0.05:  # would round to "0.0 standard deviations"
            assert phrase.startswith("within 0.05"), phrase
        else:
            assert float(size) == pytest.approx(abs(z), abs=0.06)
            assert side == ("above" if z > 0 else "below")
    assert "0.0 standard deviations" not in caption
    if query.get("sc_seed") == "12":  # z_mean = 0.0058 at this seed
        assert "the means are within 0.05 standard deviations of 0" in caption
    kurtosis = "6/d_k = 6 " if d_k == 1 else "6/d_k = 0.0938"  # 6/64 = 0.09375
    assert kurtosis in caption


def test_entropy_is_a_word_with_its_formula_before_the_table():
    at = run()
    latex = " ".join(e.value for e in at.latex)
    assert r"\text{entropy} = -\sum_j w_j \ln w_j" in latex
    assert list(summary(at).index) == ["max weight", "entropy (of ln T_k)",
                                       "effective keys e^entropy", "‖softmax Jacobian‖"]
    text = " ".join(m.value for m in at.markdown)
    for key in ("t", "entropy", "effective-keys", "jacobian", "saturation", "sharp", "hard"):
        assert f"#glossary-{key})" in text, key
    assert " H " not in text and "e^H" not in text  # H is the number of heads


def curve(at: AppTest, index: int):
    return chart_array(at, "sc_fig_curves", "y", index)


@pytest.mark.parametrize("query", [{}, {"sc_sigma2": "0.25", "sc_nkeys": "2"},
                                   {"sc_sigma2": "4.0", "sc_nkeys": "64"}])
def test_curves_sentence_follows_the_curves(query):
    at = run(**query)
    text = markdown_with(at, "At d_k = 1 the three scalings are the same")
    # Traces of the first and third panels: 0-2 max weight, 7-9 Jacobian norm.
    none_w, sqrt_w, dk_w, none_j = curve(at, 0), curve(at, 1), curve(at, 2), curve(at, 7)
    verb = lambda a, b: "rises" if b > a else "falls"  # noqa: E731
    assert (f"mean max weight {verb(none_w[0], none_w[-1])} from {none_w[0]:.3f} at d_k = 1 "
            f"to {none_w[-1]:.3f} at d_k = 1,024") in text
    assert (f"Jacobian norm {verb(none_j[0], none_j[-1])} from {none_j[0]:.3g} at d_k = 1 to "
            f"{none_j[-1]:.3g}") in text
    peak = none_j.argmax()
    if 0 < peak < none_j.size - 1:  # a rise before the fall is said
        assert f"after a peak of {none_j[peak]:.3g} at d_k = {2 ** peak:,}" in text
    else:
        assert "after a peak" not in text
    assert f"With 1/d_k the mean max weight {verb(dk_w[0], dk_w[-1])} from" in text
    assert f"stays between {sqrt_w.min():.3f} and {sqrt_w.max():.3f}" in text


def test_curves_sentence_with_one_key():
    at = run(sc_nkeys="1")
    assert any(m.value.startswith("With a single key every weight is 1") for m in at.markdown)
    assert not any("rises from" in m.value for m in at.markdown)
    assert any("With a single key there is no difference to see" in m.value
               for m in at.markdown)
    assert not any("the more they differ" in m.value for m in at.markdown)


def test_temperature_ends_are_said_from_the_weights_at_both_ends():
    at = run()
    text = markdown_with(at, "A low τ makes the softmax sharp")
    for tau in (0.05, 20.0):
        at.select_slider(key="sc_temp").set_value(tau).run()
        w = chart_array(at, "sc_fig_temperature_weights", "y")
        if tau == 0.05:
            assert f"the largest weight is {w.max():.3f}, on k{w.argmax() + 1}" in text
            assert ("nearly one-hot" in text) == (w.max() > 0.99)
            # The limit τ → 0 is one-hot because no other key ties for the largest score.
            assert f"all the weight on k{w.argmax() + 1}, the one key with the largest" in text
        else:
            assert f"they lie between {w.min():.3f} and {w.max():.3f}, around 1/8 = 0.125" in text
    # A low τ is sharp; hard attention is the other thing, choosing one position.
    assert "hard attention" not in text.lower().replace("hard attention (lesson 6) chooses", "")


@pytest.mark.parametrize("presenter", ["false", "true"])
def test_one_symbol_for_keys_and_one_for_samples(presenter):
    # The number of keys is T_k (as in the glossary and lesson 1), the number of samples N:
    # no bare "n" stands for either in any text, label, table or figure of the page.
    at = run(presenter=presenter)
    texts = [m.value for m in (*at.markdown, *at.caption, *at.latex)]
    texts += [w.label for w in (*at.slider, *at.select_slider)]
    texts += [str(i) for i in summary(at).index]
    for chart in at.get("plotly_chart"):  # every figure's series names
        texts += [t.get("name") or "" for t in json.loads(chart.proto.spec)["data"]]
    bare_n = [t for t in texts if re.search(r"(?<![\\\w])n(?![\w])", t)]
    assert not bare_n, bare_n
    labels = {w.key: w.label for w in (*at.slider, *at.select_slider)}
    assert labels["sc_nkeys"] == "Keys T_k" and labels["sc_samples"] == "Samples N"
    text = " ".join(texts)
    assert "ln T_k (uniform)" in text and "effective keys / T_k" in text
    if presenter == "false":
        assert "at N = 1,000 samples" in text and "ln T_k when it is spread evenly" in text


def saturation_panels(at: AppTest) -> dict[str, np.ndarray]:
    """Section 2's three rows of weights, as its figure draws them."""
    return {name: chart_array(at, "sc_fig_saturation", "y", i)
            for i, name in enumerate(("none", "sqrt_dk", "dk"))}


def jacobian(w: np.ndarray) -> float:
    """‖diag(w) − w wᵀ‖_F, from the weights the figure draws (a second way to the table's)."""
    return float(np.linalg.norm(np.diag(w) - np.outer(w, w)))


@pytest.mark.parametrize("query", [
    {},  # the defaults: d_k = 64, 16 keys, σ² = 1, seed 0
    {"sc_dk": "1024", "sc_nkeys": "64", "sc_sigma2": "4.0"},  # the widest scores
    {"sc_dk": "2", "sc_sigma2": "0.25"},  # the narrowest that still differ
    {"sc_dk": "1"},  # the three scalings the same
])
def test_section_2_says_what_its_query_shows_and_that_it_is_typical(query):
    """The heading says widely spread scores saturate the softmax: the sentence under the
    table says, from the two rows drawn, whether this query's do, and how it was chosen."""
    at = run(**query)
    rows = saturation_panels(at)
    said = markdown_with(at, "At d_k = 1 the three" if query.get("sc_dk") == "1"
                         else "Without scaling the scores are")
    none, scaled = rows["none"], rows["sqrt_dk"]
    if query.get("sc_dk") == "1":
        np.testing.assert_allclose(none, scaled)
        assert "the three scalings are the same" in said
    elif none.max() > 0.99:
        assert "The unscaled row is nearly one-hot: the softmax is saturated" in said
    elif jacobian(none) < jacobian(scaled):
        assert "less gradient to pass to the scores: it is on its way to saturation" in said
    else:
        assert "not yet spread widely enough to saturate the softmax" in said
    percentiles = re.search(r"each between percentile (\d+) and (\d+) of the 101", said)
    assert percentiles or "the median of every one" in said, said
    if percentiles:
        assert 30 <= int(percentiles[1]) <= 50 <= int(percentiles[2]) <= 70
    assert "section 3 averages many at every d_k" in said


def test_at_the_defaults_the_query_shown_saturates_as_the_averages_do():
    # Seed 0's first query gave the unscaled softmax a largest weight of 0.634 and the
    # largest Jacobian norm of the three, as about 3 draws in 10 do; the typical query
    # shown passes less gradient unscaled than with 1/√d_k, as section 3's means at
    # d_k = 64 do.
    at = run()
    rows = saturation_panels(at)
    assert jacobian(rows["none"]) < jacobian(rows["sqrt_dk"])
    assert rows["none"].max() > 0.634
    # the curves' traces: 0-2 max weight, 3-6 entropy, 7-9 Jacobian norm
    means = {name: curve(at, 7 + i) for i, name in enumerate(("none", "sqrt_dk", "dk"))}
    d_k_64 = 6  # the 7th stop: 1, 2, 4, ..., 64
    assert means["none"][d_k_64] < means["sqrt_dk"][d_k_64]
