"""Lesson 2's sentences that depend on its samples and curves, as plain functions of them.

Each says what these draws show (where they landed against the theory, which way a
curve went), never what the theory predicts in general as if it were this run.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

from attncore import scaling as ex
from attncore.analysis import NEARLY_ONE_HOT, effective_keys
from attncore.scaling import weight_focus
from pages.ui.glossary import term_link
from pages.ui.numbers import (
    apart_text,
    difference_text,
    exact_text,
    number_text,
    probability_text,
    said_number,
    significant_text,
)


def samples_text(d_k: int, sigma2: float, n_samples: int) -> str:
    """What section 1 draws, and what the theory says of it."""
    return (f"Draw q and k with {d_k} independent normal component{'s' if d_k > 1 else ''}, "
            f"each with mean 0 and variance σ² = {sigma2:g}, and compute qᵀk, "
            f"N = {n_samples:,} times. In theory its mean is 0 whatever d_k, and its standard "
            "deviation, σ²√d_k, grows like √d_k; dividing by √d_k brings it back to σ².")


def away(z: float) -> str:
    """A difference in standard deviations, in words: "0.4 standard deviations above"; one
    that rounds to 0.0 is said as a bound, never as a false "0.0 standard deviations"."""
    if z == 0:
        return "exactly on"
    if abs(z) < 0.05:
        return "within 0.05 standard deviations of"
    return f"{abs(z):.1f} standard deviations {'above' if z > 0 else 'below'}"


def moments_caption(stats: ex.DotProductStats) -> tuple[str, str]:
    """The theory under the moments table, and how far new samples move its empirical
    values (attncore.scaling.moments_check for these d_k, N and σ²)."""
    check = ex.moments_check(stats)
    spread, n_samples = check.spread, stats.raw.size
    products = "one product" if stats.d_k == 1 else f"a sum of {stats.d_k} products"
    return (
        "Theory: Var[qᵀk] = d_k·σ⁴ and Var[qᵀk/√d_k] = σ⁴; the dashed curves are normal "
        f"densities with those variances. But qᵀk is {products} q_i k_i, and its distribution "
        "has a sharper peak and heavier tails than a normal one: excess kurtosis "
        f"6/d_k = {said_number(spread.excess_kurtosis)} (0 for a normal distribution), the "
        "closer to 0 the more products.",
        "New samples (another seed) move the empirical values: "
        f"by about ±{said_number(spread.mean_sd)} for the mean of qᵀk (σ²√(d_k/N)), "
        f"±{said_number(spread.scaled_mean_sd)} for that of qᵀk/√d_k (σ²/√N), and "
        f"±{100 * spread.variance_rel_sd:.2g}% for either variance (√(2/(N−1) + 6/(d_k·N)); a "
        f"normal sample's √(2/(N−1)) would be {100 * spread.normal_variance_rel_sd:.2g}%), "
        f"one standard deviation each, at N = {n_samples:,} samples. Here the means are "
        f"{away(check.mean_z)} 0 and the variances {away(check.variance_z)} the theory."
    )


def saturation_text(d_k: int, n_keys: int) -> str:
    """What section 2 shows: one query against T_k keys under the three scalings."""
    differences = (
        "The softmax only sees differences between scores: the more they differ, the more of "
        f"the weight the largest takes, until the softmax {term_link('saturation', 'saturates')}."
        if n_keys > 1 else "With a single key there is no difference to see: its weight is 1.")
    return (f"One query against {term_link('T', 'T_k')} = {n_keys} "
            f"key{'s' if n_keys > 1 else ''} at d_k = {d_k:,}: the same dot products under "
            f"the three scalings. {differences}")


def max_weight_text(row: ex.Saturation) -> str:
    """A row's largest weight with three decimals, never a false 1: near 1 it is 1 minus
    the sum of the other weights, which float64 keeps even when 1 − w rounds to 0
    (1 − 2.6×10⁻²⁴); "exactly 1" only for a single key."""
    w = row.weights
    if w.size == 1:
        return "exactly 1"
    said = probability_text(row.max_weight)
    if not said.startswith(("1 ", "exactly")):
        return said
    others = float(np.sum(np.delete(w, np.argmax(w))))
    if others == 0:  # every other weight underflowed: 1 to float64's last digit
        return "1 (the other weights underflow to 0 in float64)"
    return f"1 − {difference_text(others)}"


def typical_text(typical: ex.TypicalQuery) -> str:
    """How the query of section 2 was chosen, and how central it is among those drawn."""
    n = typical.candidates
    low, high = round(typical.lowest), round(typical.highest)
    where = ("the median of every one" if low == high == 50 else
             f"each between percentile {low} and {high} of the {n}")
    return (f"The query shown is a typical one: of {n} queries drawn from the seed, each "
            "against its own keys, the one whose measures in the table (largest weight, "
            "entropy and Jacobian norm under each scaling) lie nearest the middle: "
            f"{where}. One query drawn at random can be far from typical; section 3 "
            "averages many at every d_k.")


def saturation_reading(rows: dict[str, ex.Saturation], d_k: int,
                       typical: ex.TypicalQuery | None = None) -> str:
    """What the unscaled row of section 2 shows against the 1/√d_k row, said from their
    largest weights and Jacobian norms, then, given ``typical``
    (attncore.scaling.typical_saturation), how the query was chosen ("" with a single
    key: nothing to compare)."""
    if rows["none"].weights.size == 1:
        return ""
    reading = _reading(rows, d_k)
    return reading if typical is None else f"{reading} {typical_text(typical)}"


def _reading(rows: dict[str, ex.Saturation], d_k: int) -> str:
    none, scaled = rows["none"], rows["sqrt_dk"]
    if d_k == 1:
        return (f"At d_k = 1 the three scalings are the same (1/d_k = 1/√d_k = 1): the "
                f"largest weight is {max_weight_text(none)} and the Jacobian "
                f"norm {significant_text(none.jacobian_norm, 3)} under each. Move d_k up to "
                "see them differ.")
    said = (f"Without scaling the scores are √{d_k:,} = {significant_text(np.sqrt(d_k), 3)} "
            "times as far apart as with 1/√d_k: the largest weight is "
            f"{max_weight_text(none)} against {max_weight_text(scaled)}, and the Jacobian "
            "norm "
            f"{significant_text(none.jacobian_norm, 3)} against "
            f"{significant_text(scaled.jacobian_norm, 3)}. ")
    if none.max_weight > NEARLY_ONE_HOT:
        return said + (f"The unscaled row is {term_link('one-hot', 'nearly one-hot')}: the "
                       "softmax is saturated, and little gradient gets through it.")
    if none.jacobian_norm < scaled.jacobian_norm:
        return said + ("The wider scores give the unscaled softmax less gradient to pass to "
                       "the scores: it is on its way to saturation (what reaches q and k is "
                       "that gradient times the scaling, 1 here against 1/√d_k).")
    return said + ("At this d_k the unscaled scores are not yet spread widely enough to "
                   "saturate the softmax: its Jacobian norm is no smaller than with 1/√d_k.")


def curves_sentence(cv: ex.ScalingCurves) -> str:
    """What section 3's curves show, said from their first and last points."""
    n_keys, d_ks = cv.n_keys, [int(d) for d in cv.d_ks]
    if n_keys == 1:
        return ("With a single key every weight is 1 and every Jacobian 0, whatever the scaling "
                "and d_k: choose 2 keys or more to compare the scalings.")
    first, last = f"d_k = {d_ks[0]:,}", f"d_k = {d_ks[-1]:,}"

    def moves(series, digits):
        a, b = series[0], series[-1]
        verb = "rises" if b > a else "falls" if b < a else "stays"
        said = (lambda x: number_text(x, 3)) if digits == "weight" else (
            lambda x: significant_text(x, 3))
        return f"{verb} from {said(a)} at {first} to {said(b)} at {last}"

    sqrt_w, none_j = cv.max_weight["sqrt_dk"], cv.jacobian_norm["none"]
    flat = exact_text(1 / n_keys, 3)  # 1/16 is 0.0625 in full; 1/3 ≈ 0.333
    uniform = f"{'=' if float(flat) == 1 / n_keys else '≈'} {flat}"
    # A softmax passes the most gradient at a moderate spread of scores: the unscaled
    # norm may first rise with d_k, then fall.
    peak = int(np.argmax(none_j))
    peak_said = ("" if peak in (0, len(d_ks) - 1) else
                 f", after a peak of {significant_text(none_j[peak], 3)} at d_k = {d_ks[peak]:,}")
    return (
        f"At {first} the three scalings are the same (1/d_k = 1/√d_k = 1). Without scaling "
        f"the mean max weight {moves(cv.max_weight['none'], 'weight')}, and the mean Jacobian norm "
        f"{moves(none_j, 'norm')}{peak_said}. With 1/d_k the mean max weight "
        f"{moves(cv.max_weight['dk'], 'weight')}, against 1/T_k {uniform} for "
        f"uniform weights. With 1/√d_k it stays between {number_text(sqrt_w.min(), 3)} and "
        f"{number_text(sqrt_w.max(), 3)} at every d_k shown. {noise_text(cv)}"
    )


def noise_text(cv: ex.ScalingCurves) -> str:
    """How far section 3's points may differ by sampling alone: the largest standard error
    of a point, and the difference that the largest of all the pairs' differences passes
    by chance at most 1 time in 20 (Bonferroni: each pair's two-sided level 0.05 divided
    by the number of pairs, with the largest standard error for every point)."""
    if cv.trials < 2:
        return "A single trial per point gives no measure of sampling noise."
    se = float(np.max(cv.max_weight_se["sqrt_dk"]))
    points = len(cv.d_ks)
    pairs = points * (points - 1) // 2
    z = NormalDist().inv_cdf(1 - 0.05 / (2 * pairs))
    noise = z * np.sqrt(2) * se
    scaled, unscaled = cv.max_weight["sqrt_dk"], cv.max_weight["none"]
    spread = float(scaled.max() - scaled.min())
    said = (f"Each point is a mean over {cv.trials} queries, with a standard error of up to "
            f"{significant_text(se, 2)} for the max weight with 1/√d_k: by sampling alone, "
            f"the largest of the {pairs} differences between its {points} points exceeds "
            f"about {significant_text(noise, 2)} at most 1 time in 20. Its highest and "
            f"lowest points differ by {significant_text(spread, 3)}, ")
    if spread > noise:
        said += ("more than that: d_k does move it, though by less than the "
                 f"{significant_text(float(unscaled.max() - unscaled.min()), 2)} it moves "
                 "without scaling."
                 if spread < unscaled.max() - unscaled.min() else "more than that: d_k does "
                 "move it.")
    else:
        said += "less than that: no evidence that d_k moves it."
    return said + " More trials per point narrow the noise."


def temperature_text(weights: np.ndarray, temperature: float, d_k: int) -> str:
    """What section 4 shows at the chosen τ: its largest weight and effective keys."""
    n_keys = weights.size
    return (f"One query against T_k = {n_keys} keys at d_k = {d_k} (σ² = 1), its scores "
            "scaled by 1/√d_k as in section 2, then divided by τ. At "
            f"τ = {temperature:g} the largest weight is {number_text(weights.max(), 3)} and "
            f"the weight is spread over {apart_text(effective_keys(weights), n_keys)} effective "
            f"keys of {n_keys}.")


def temperature_ends(scores: np.ndarray, sweep: np.ndarray, temperatures: list[float]) -> str:
    """What the lowest and the highest τ of section 4 do to its query, said from its weights
    (``sweep``: a row per τ of ``temperatures``).

    The lowest τ is sharp, not hard: the softmax stays smooth, and its limit τ → 0 is
    one-hot only when one key has the largest score (attncore.scaling.weight_focus).
    """
    n_keys = sweep.shape[1]
    keys = [f"k{j + 1}" for j in range(n_keys)]
    low, high = temperatures[0], temperatures[-1]
    focus, = weight_focus(scores, low)
    top = np.argmax(sweep[0])
    sharp = (f"A low τ makes the softmax {term_link('sharp', 'sharp')}: at τ = {low:g} the "
             f"largest weight is {number_text(sweep[0].max(), 3)}, on {keys[top]}"
             + (f", {term_link('one-hot', 'nearly one-hot')}" if focus.nearly_one_hot else "")
             + ". The softmax is still a smooth, differentiable function of the scores; only "
             "its limit τ → 0 is an argmax, ")
    if len(focus.tied) == 1:
        sharp += f"all the weight on {keys[focus.tied[0]]}, the one key with the largest score."
    else:
        sharp += ("equal weights on " + ", ".join(keys[j] for j in focus.tied)
                  + ", tied for the largest score.")
    hard = (f" {term_link('hard', 'Hard attention')} (lesson 6) chooses one position "
            "outright instead, and that choice has no gradient.")
    flat = (f" A high τ flattens the weights towards uniform: at τ = {high:g} they lie between "
            f"{number_text(sweep[-1].min(), 3)} and {number_text(sweep[-1].max(), 3)}, around "
            f"1/{n_keys} = {number_text(1 / n_keys, 3)}, spread over "
            f"{apart_text(effective_keys(sweep[-1]), n_keys)} effective keys of {n_keys}.")
    return sharp + hard + flat
