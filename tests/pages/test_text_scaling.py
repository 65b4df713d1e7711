"""Lesson 2's sentences (pages/text/scaling.py), as plain functions of its results."""

from __future__ import annotations

import re

import numpy as np
import pytest

from attncore import scaling as ex
from pages.text import scaling as text


def plain(markdown: str) -> str:
    """Links reduced to their text."""
    return re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", markdown)


@pytest.mark.parametrize("z, said", [
    (0.0, "exactly on"),
    (0.04, "within 0.05 standard deviations of"),  # "0.0 standard deviations" would be false
    (-1.26, "1.3 standard deviations below"),
    (2.0, "2.0 standard deviations above"),
])
def test_away_never_says_a_false_zero(z, said):
    assert text.away(z) == said


def stats(d_k: int, scaled_mean: float, scaled_var: float) -> ex.DotProductStats:
    """A draw of N = 100 samples at σ² = 1 with the given moments of qᵀk/√d_k."""
    raw = np.zeros(100)  # the captions read only how many samples there are
    return ex.DotProductStats(d_k=d_k, sigma2=1.0, raw=raw, scaled=raw, mean=0.0, var=0.0,
                              scaled_mean=scaled_mean, scaled_var=scaled_var,
                              theory_var=float(d_k), theory_scaled_var=1.0)


def test_the_moments_caption_by_hand():
    # N = 100, d_k = 4: the mean's sd is 1/√100 = 0.1, so 0.05 is 0.5 sd above 0; the
    # variance's relative sd is √(2/99 + 6/400) = √0.035202 = 18.76%, so 1.3 (30% over
    # σ⁴ = 1) is 0.3/0.18762 = 1.6 sd above; the normal-only √(2/99) is 14.2%.
    theory, spread = text.moments_caption(stats(4, 0.05, 1.3))
    assert "qᵀk is a sum of 4 products" in theory and "6/d_k = 1.5 " in theory
    assert "±19% for either variance" in spread and "would be 14%" in spread
    assert "at N = 100 samples" in spread
    assert ("Here the means are 0.5 standard deviations above 0 and the variances 1.6 "
            "standard deviations above the theory.") in spread
    theory, spread = text.moments_caption(stats(1, -0.001, 1.0))
    assert "qᵀk is one product" in theory
    # -0.001 / 0.1 = -0.01 sd: said as a bound; a variance of exactly σ⁴ is on the theory.
    assert "the means are within 0.05 standard deviations of 0 and the variances exactly on" \
        in spread


def test_the_saturation_sentence_with_one_key_and_with_many():
    one = plain(text.saturation_text(64, 1))
    assert "One query against T_k = 1 key at d_k = 64" in one
    assert "With a single key there is no difference to see" in one
    many = plain(text.saturation_text(64, 8))
    assert "T_k = 8 keys" in many and "until the softmax saturates" in many


def curves(n_keys: int, none_jacobian) -> ex.ScalingCurves:
    d_ks = np.array([1, 2, 4])
    return ex.ScalingCurves(
        d_ks=d_ks, n_keys=n_keys, trials=10,
        max_weight={"none": np.array([0.4, 0.6, 0.9]), "sqrt_dk": np.array([0.4, 0.45, 0.42]),
                    "dk": np.array([0.4, 0.35, 0.3])},
        entropy={name: np.zeros(3) for name in ex.SCALINGS},
        jacobian_norm={"none": np.array(none_jacobian), "sqrt_dk": np.zeros(3),
                       "dk": np.zeros(3)},
        max_entropy=float(np.log(n_keys)),
        max_weight_se={"none": np.zeros(3), "sqrt_dk": np.array([0.01, 0.02, 0.005]),
                       "dk": np.zeros(3)})


def test_the_curves_sentence_follows_the_first_and_last_points():
    said = text.curves_sentence(curves(4, [0.5, 0.7, 0.2]))
    assert "the mean max weight rises from 0.400 at d_k = 1 to 0.900 at d_k = 4" in said
    # The norm's largest value is in the middle: the rise before the fall is said.
    assert ("the mean Jacobian norm falls from 0.5 at d_k = 1 to 0.2 at d_k = 4, after a peak "
            "of 0.7 at d_k = 2") in said
    assert "With 1/d_k the mean max weight falls from 0.400" in said
    assert "against 1/T_k = 0.25 for" in said and "stays between 0.400 and 0.450" in said
    # 1/16 is 0.0625 exactly, written in full after "="; 1/3 is rounded, after "≈".
    assert "against 1/T_k = 0.0625 for" in text.curves_sentence(curves(16, [0.5, 0.7, 0.2]))
    assert "against 1/T_k ≈ 0.333 for" in text.curves_sentence(curves(3, [0.5, 0.7, 0.2]))
    assert "after a peak" not in text.curves_sentence(curves(4, [0.7, 0.5, 0.2]))
    assert text.curves_sentence(curves(1, [0.0, 0.0, 0.0])).startswith(
        "With a single key every weight is 1")


def test_the_curves_sentence_says_how_far_sampling_alone_moves_a_point():
    said = text.curves_sentence(curves(4, [0.5, 0.7, 0.2]))
    # 3 points, 3 pairs; the largest standard error 0.02. Two-sided 0.05 over 3 pairs:
    # z = Φ⁻¹(1 − 0.05/6) = 2.394 (tables: Φ(2.39) = 0.99158, Φ(2.40) = 0.99180), and a
    # difference of two points has standard error √2 · 0.02, so 2.394 · 1.4142 · 0.02 =
    # 0.0677.
    assert ("Each point is a mean over 10 queries, with a standard error of up to 0.02 for the "
            "max weight with 1/√d_k: by sampling alone, the largest of the 3 differences "
            "between its 3 points exceeds about 0.068 at most 1 time in 20") in said


def test_the_standard_errors_are_those_of_the_trials():
    # A second, simpler method: redraw the same numbers and take the standard deviation of
    # each trial's largest weight over √trials.
    curves_ = ex.scaling_curves([4], 8, 30, np.random.default_rng(3))
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((30, 1, 4)), rng.standard_normal((30, 8, 4))
    s = (q @ k.transpose(0, 2, 1))[:, 0, :] / 2  # 1/√d_k = 1/2
    w = np.exp(s - s.max(axis=1, keepdims=True))
    top = (w / w.sum(axis=1, keepdims=True)).max(axis=1)
    np.testing.assert_allclose(curves_.max_weight_se["sqrt_dk"][0],
                               top.std(ddof=1) / np.sqrt(30), rtol=1e-12)


def test_effective_keys_never_read_as_every_key():
    # Weights 0.13, then seven of 0.87/7 = 0.1243: e^entropy = 7.995, which two decimals
    # would round to 8.00, the count for exactly uniform weights.
    w = np.array([0.13] + [0.87 / 7] * 7)
    keys = np.exp(-(w * np.log(w)).sum())
    assert 7.99 < keys < 7.9995
    said = text.temperature_text(w, 20, 64)
    assert "8.00 effective" not in said and f"{keys:.3f} effective keys of 8" in said


def test_the_temperature_sentence_by_hand():
    # Weights (1/2, 1/4, 1/4): entropy = ½ ln 2 + ½ ln 4 = 1.5 ln 2, so e^entropy = 2^1.5
    # = 2.83 effective keys.
    said = text.temperature_text(np.array([0.5, 0.25, 0.25]), 0.5, 64)
    assert said.endswith("At τ = 0.5 the largest weight is 0.500 and the weight is spread over "
                         "2.83 effective keys of 3.")


@pytest.mark.parametrize("scores, limit", [
    ([2.0, 1.0, 0.0], "all the weight on k1, the one key with the largest score."),
    ([1.0, 1.0, 0.0], "equal weights on k1, k2, tied for the largest score."),
])
def test_the_temperature_ends_by_hand(scores, limit):
    temperatures = [0.05, 20.0]
    sweep = ex.temperature_sweep(np.array(scores), temperatures)
    said = plain(text.temperature_ends(np.array(scores), sweep, temperatures))
    assert limit in said
    # τ = 0.05: [2, 1, 0] gives logits [40, 20, 0], k1 takes 1/(1 + e⁻²⁰ + e⁻⁴⁰) > 0.99;
    # [1, 1, 0] splits between k1 and k2, 0.5 each: not one-hot.
    assert ("nearly one-hot" in said) == (scores[0] != scores[1])
    if scores == [2.0, 1.0, 0.0]:
        # τ = 20: e^0.1, e^0.05, 1 = 1.10517, 1.05127, 1 over 3.15644: 0.317 to 0.350.
        assert "at τ = 20 they lie between 0.317 and 0.350, around 1/3 = 0.333" in said


def row(scaling: str, weights) -> ex.Saturation:
    """A row of weights as section 2 holds it (only the fields the sentences read)."""
    w = np.asarray(weights, dtype=float)
    jacobian = float(np.linalg.norm(np.diag(w) - np.outer(w, w)))  # ‖diag(w) − wwᵀ‖_F
    return ex.Saturation(scaling=scaling, scores=np.zeros_like(w), weights=w,  # not read
                         max_weight=float(w.max()), entropy=0.0, effective_keys=1.0,
                         jacobian_norm=jacobian, max_entropy=float(np.log(w.size)))


@pytest.mark.parametrize("d_k, none, scaled, said", [
    # w = (0.5, 0.5): ‖J‖ = ‖[[.25, −.25], [−.25, .25]]‖ = 0.5, the largest a pair can have
    (1, [0.5, 0.5], [0.5, 0.5], "At d_k = 1 the three scalings are the same"),
    # (0.995, 0.005): nearly one-hot, above 0.99
    (64, [0.995, 0.005], [0.6, 0.4], "The unscaled row is nearly one-hot: the softmax is "
                                     "saturated"),
    # (0.9, 0.1): ‖J‖ = √2·0.09 + … = 0.18 < (0.6, 0.4)'s 0.34: less gradient unscaled
    (64, [0.9, 0.1], [0.6, 0.4], "The wider scores give the unscaled softmax less gradient"),
    # the same weights both ways: the unscaled norm is no smaller
    (4, [0.5, 0.5], [0.5, 0.5], "not yet spread widely enough to saturate the softmax"),
])
def test_the_reading_of_section_2_follows_its_two_rows(d_k, none, scaled, said):
    rows = {"none": row("none", none), "sqrt_dk": row("sqrt_dk", scaled),
            "dk": row("dk", scaled)}
    said_here = plain(text.saturation_reading(rows, d_k))
    assert said in said_here, said_here
    if d_k > 1:  # the unscaled scores are √d_k times as far apart
        assert f"√{d_k} = {np.sqrt(d_k):g} times as far apart" in said_here


def test_a_single_key_has_no_reading_and_no_typical_sentence():
    rows = {name: row(name, [1.0]) for name in ex.SCALINGS}
    assert text.saturation_reading(rows, 64) == ""
    typical = ex.TypicalQuery(rows=rows, chosen=0, candidates=101, lowest=50.0, highest=50.0)
    assert text.saturation_reading(rows, 64, typical) == ""


def test_the_typical_sentence_gives_the_percentiles_of_the_query_shown():
    rows = {name: row(name, [0.5, 0.5]) for name in ex.SCALINGS}
    middle = ex.TypicalQuery(rows=rows, chosen=7, candidates=101, lowest=50.0, highest=50.0)
    assert "the median of every one" in text.typical_text(middle)
    spread = ex.TypicalQuery(rows=rows, chosen=7, candidates=101, lowest=44.6, highest=55.4)
    assert "each between percentile 45 and 55 of the 101" in text.typical_text(spread)
    reading = text.saturation_reading(rows, 64, spread)
    assert reading.endswith("section 3 averages many at every d_k.")


@pytest.mark.parametrize("weights, said", [
    ([0.5, 0.5], "0.500"),
    ([0.9996, 4e-4], "1 − 4.0×10⁻⁴"),  # three decimals would say a false 1.000
    ([1.0, 1e-25], "1 − 1.0×10⁻²⁵"),  # 1 − 1e-25 is 1.0 in float64; the other weight is not 0
    ([1.0, 0.0], "1 (the other weights underflow to 0 in float64)"),
    ([1.0], "exactly 1"),  # a single key: exactly 1
])
def test_a_largest_weight_never_reads_a_false_one(weights, said):
    assert text.max_weight_text(row("none", weights)) == said


def test_the_curves_sentence_concludes_from_the_spread_against_the_noise():
    import dataclasses

    # Spread 0.45 − 0.40 = 0.05 is under the 0.0677 sampling alone can make (3 points,
    # largest standard error 0.02): no evidence.
    said = text.curves_sentence(curves(4, [0.5, 0.7, 0.2]))
    assert "Its highest and lowest points differ by 0.05, less than that: no evidence" in said
    # Spread 0.55 − 0.40 = 0.15 is over it, and under the unscaled 0.9 − 0.4 = 0.5.
    wider = curves(4, [0.5, 0.7, 0.2])
    wider = dataclasses.replace(wider, max_weight={
        **wider.max_weight, "sqrt_dk": np.array([0.40, 0.55, 0.50])})
    said = text.curves_sentence(wider)
    assert ("differ by 0.15, more than that: d_k does move it, though by less than the 0.5 "
            "it moves without scaling.") in said
