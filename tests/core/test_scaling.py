"""The scaling experiments of lesson 2 and the row statistics of attncore.analysis."""

import itertools
import math

import numpy as np
import pytest

from attncore import analysis
from attncore import scaling as ex
from attncore.softmax import softmax, softmax_jacobian


def rel_tolerance(n: int, d_k: int) -> float:
    """Five standard errors of a sample variance, relative to the true variance.

    qᵀk is a sum of d_k products q_i k_i with variance σ⁴ and fourth moment
    E[q_i⁴] E[k_i⁴] = 3σ⁴ · 3σ⁴ = 9σ⁸, so its excess kurtosis is (9 - 3)/d_k = 6/d_k, and
    Var[s²]/σ_x⁴ ≈ 2/(n - 1) + (6/d_k)/n.
    """
    return 5 * math.sqrt(2 / (n - 1) + 6 / (d_k * n))


def test_theory_moments_match_an_exact_enumeration():
    # d_k = 2, components ±1 with equal probability (mean 0, variance σ² = 1): all 16
    # pairs q, k in {-1, 1}². qᵀk takes -2 (4 pairs), 0 (8 pairs), 2 (4 pairs):
    # mean 0, variance (4·4 + 8·0 + 4·4)/16 = 2 = d_k σ⁴.
    values = [q[0] * k[0] + q[1] * k[1]
              for q in itertools.product([-1, 1], repeat=2)
              for k in itertools.product([-1, 1], repeat=2)]
    mean = sum(values) / len(values)
    var = sum((v - mean) ** 2 for v in values) / len(values)
    assert (mean, var) == (0.0, 2.0)
    stats = ex.dot_product_stats(2, 10, np.random.default_rng(0))
    assert stats.theory_var == var and stats.theory_scaled_var == var / 2


@pytest.mark.parametrize("d_k", [1, 4, 64, 1024])
def test_variance_follows_d_k_and_scaling_restores_it(d_k):
    n = 3000
    stats = ex.dot_product_stats(d_k, n, np.random.default_rng(d_k))
    tol = rel_tolerance(n, d_k)
    assert abs(stats.var / d_k - 1) < tol  # Var[qᵀk] = d_k
    assert abs(stats.scaled_var - 1) < tol  # Var[qᵀk/√d_k] = 1
    # The mean is 0 with standard error sqrt(d_k / n); allow five of them.
    assert abs(stats.mean) < 5 * math.sqrt(d_k / n)
    np.testing.assert_allclose(stats.scaled, stats.raw / math.sqrt(d_k), rtol=1e-15)


@pytest.mark.parametrize("sigma2", [0.25, 4.0])
def test_variance_with_component_variance_follows_d_k_sigma4(sigma2):
    d_k, n = 32, 3000
    stats = ex.dot_product_stats(d_k, n, np.random.default_rng(1), sigma2=sigma2)
    assert stats.theory_var == d_k * sigma2**2
    assert abs(stats.var / (d_k * sigma2**2) - 1) < rel_tolerance(n, d_k)


def test_same_seed_same_samples_and_caps():
    a = ex.dot_product_stats(16, 100, np.random.default_rng(7))
    b = ex.dot_product_stats(16, 100, np.random.default_rng(7))
    assert np.array_equal(a.raw, b.raw)
    with pytest.raises(ValueError, match="cap"):
        ex.dot_product_stats(4096, 10_000, np.random.default_rng(0))
    with pytest.raises(ValueError, match="d_k"):
        ex.dot_product_stats(0, 10, np.random.default_rng(0))
    with pytest.raises(ValueError, match="sigma2"):
        ex.dot_product_stats(4, 10, np.random.default_rng(0), sigma2=-1)


def test_largest_setting_gives_finite_numbers():
    stats = ex.dot_product_stats(1024, 10_000, np.random.default_rng(0))
    assert np.all(np.isfinite(stats.raw)) and np.isfinite(stats.var)


def test_entropy_and_effective_keys_of_known_rows():
    # Uniform over 4: entropy -4 · (1/4) ln(1/4) = ln 4, e^entropy = 4. One-hot: 0 and 1.
    rows = np.array([[0.25] * 4, [1.0, 0.0, 0.0, 0.0]])
    np.testing.assert_allclose(analysis.entropy(rows), [math.log(4), 0.0], atol=1e-15)
    np.testing.assert_allclose(analysis.effective_keys(rows), [4.0, 1.0], rtol=1e-14)
    np.testing.assert_array_equal(analysis.max_weight(rows), [0.25, 1.0])
    # [0.5, 0.5, 0]: H = log 2 (the zero contributes nothing).
    assert analysis.entropy([0.5, 0.5, 0.0]) == pytest.approx(math.log(2), rel=1e-15)


def test_jacobian_norm_matches_the_full_matrix_and_finite_differences():
    s = np.array([0.3, -1.2, 2.0, 0.5])
    p = softmax(s)
    # Central differences of the softmax, column by column: J[:, j] = dp/ds_j.
    h = 1e-6
    fd = np.stack([(softmax(s + h * e) - softmax(s - h * e)) / (2 * h) for e in np.eye(4)],
                  axis=1)
    np.testing.assert_allclose(softmax_jacobian(p), fd, atol=1e-9)
    assert analysis.jacobian_norm(p) == pytest.approx(np.linalg.norm(fd), rel=1e-8)
    # Uniform over n: ‖J‖² = n·(1/n)² - 2n(1/n)³ + (n(1/n)²)² = (1 - 1/n)/n.
    assert analysis.jacobian_norm([0.25] * 4) == pytest.approx(math.sqrt(0.75 / 4), rel=1e-14)
    assert analysis.jacobian_norm([0.0, 1.0, 0.0]) == 0.0


def test_saturation_compares_the_three_scalings_on_the_same_scores():
    sat = ex.saturation(256, 10, np.random.default_rng(3))
    raw = sat["none"].scores
    np.testing.assert_allclose(sat["sqrt_dk"].scores, raw / 16, rtol=1e-15)  # √256 = 16
    np.testing.assert_allclose(sat["dk"].scores, raw / 256, rtol=1e-15)
    for s in sat.values():
        assert s.max_entropy == pytest.approx(math.log(10))
        assert s.weights.sum() == pytest.approx(1.0, abs=1e-12)
    # Larger multipliers sharpen the same scores: max weight falls as the scale falls.
    assert sat["none"].max_weight > sat["sqrt_dk"].max_weight > sat["dk"].max_weight


def test_one_key_gives_weight_one_and_no_gradient():
    sat = ex.saturation(1024, 1, np.random.default_rng(0))
    for s in sat.values():
        assert s.weights.tolist() == [1.0]
        assert (s.entropy, s.jacobian_norm, s.max_entropy) == (0.0, 0.0, 0.0)


def test_unscaled_softmax_saturates_and_its_gradient_vanishes_as_d_k_grows():
    d_ks = [1, 16, 256, 1024]
    cv = ex.scaling_curves(d_ks, 16, 200, np.random.default_rng(0))
    none, sqrt = cv.max_weight["none"], cv.max_weight["sqrt_dk"]
    assert np.all(np.diff(none) > 0) and none[-1] > 0.9
    assert np.all(np.diff(cv.jacobian_norm["none"][1:]) < 0)
    assert cv.jacobian_norm["none"][-1] < 0.25 * cv.jacobian_norm["sqrt_dk"][-1]
    # 1/d_k flattens towards uniform (max weight 1/16 = 0.0625); 1/√d_k stays put.
    assert cv.max_weight["dk"][-1] < 0.08
    assert abs(sqrt[-1] - sqrt[0]) < 0.1


def test_temperature_limits():
    s = np.array([0.2, 1.5, -0.3, 1.4])
    sweep = ex.temperature_sweep(s, [1e-3, 1.0, 1e6])
    # T → 0: all the weight on the argmax (index 1): the runner-up is e^{-0.1/0.001} = e^-100.
    assert sweep[0][1] == pytest.approx(1.0, abs=1e-40)
    # T → ∞: e^{s_j/T} = 1 + s_j/T + ..., so each weight is within max|s|/T of 1/4.
    np.testing.assert_allclose(sweep[2], 0.25, atol=2 * 1.5 / 1e6)
    np.testing.assert_allclose(sweep[1], softmax(s), rtol=1e-15)
    with pytest.raises(ValueError, match="temperatures"):
        ex.temperature_sweep(s, [0.0])


@pytest.mark.parametrize("gap", [0, 1, 5, 17, 20, 36, 50, 100, 300, 700])
def test_jacobian_norm_keeps_its_digits_on_saturated_rows(gap):
    """‖diag(w) − wwᵀ‖_F against the matrix formed directly in 800-digit decimal arithmetic
    from the scores [gap, 0, -1, 0.5]: softmax([20, 0]) has norm 4.1e-9, not 0.0, and at a
    gap of 700 the smallest weights are about 1e-304."""
    from decimal import Decimal, localcontext

    scores = [float(gap), 0.0, -1.0, 0.5]
    with localcontext() as ctx:
        ctx.prec = 800
        e = [Decimal(s).exp() for s in scores]
        p = [x / sum(e) for x in e]
        n = len(p)
        exact = sum(((p[i] if i == j else 0) - p[i] * p[j]) ** 2
                    for i in range(n) for j in range(n)).sqrt()
    ours = analysis.jacobian_norm(softmax(np.array(scores)))
    assert float(ours) == pytest.approx(float(exact), rel=1e-12)


def test_jacobian_norm_of_two_scores_twenty_apart_is_not_zero():
    # w = (1 - e, e) with e = 1/(1 + e^20): J = e(1 - e) [[1, -1], [-1, 1]], ‖J‖ = 2 e (1 - e).
    e = 1 / (1 + np.exp(20.0))
    assert analysis.jacobian_norm(softmax([20.0, 0.0])) == pytest.approx(2 * e * (1 - e),
                                                                         rel=1e-13)


@pytest.mark.parametrize("d_k, n, seeds", [(1, 1000, 2000), (1, 100, 2000), (64, 1000, 400)])
def test_sampling_spread_is_the_spread_measured_over_many_seeds(d_k, n, seeds):
    """The formula against the second method: draw the experiment with many seeds and
    measure how its empirical moments spread."""
    sigma2 = 2.0  # σ² cancels from the relative spread; the means scale with it
    runs = [ex.dot_product_stats(d_k, n, np.random.default_rng(seed), sigma2)
            for seed in range(seeds)]
    rel_var = np.array([r.var for r in runs]) / (d_k * sigma2**2) - 1  # (seeds,)
    means = np.array([r.scaled_mean for r in runs])  # (seeds,)
    spread = ex.sampling_spread(d_k, n, sigma2)

    def tolerance(x):
        # A standard deviation measured from m draws has a relative standard error of
        # about sqrt((κ - 1) / (4m)), κ the draws' own kurtosis (measured): allow four.
        z = (x - x.mean()) / x.std()
        return 4 * np.sqrt((np.mean(z**4) - 1) / (4 * x.size))

    assert rel_var.std(ddof=1) == pytest.approx(spread.variance_rel_sd, rel=tolerance(rel_var))
    assert means.std(ddof=1) == pytest.approx(spread.scaled_mean_sd, rel=tolerance(means))
    assert spread.mean_sd == pytest.approx(spread.scaled_mean_sd * math.sqrt(d_k), rel=1e-15)
    if d_k == 1:
        # The test can tell: the normal-only sqrt(2/(n - 1)) is half the measured spread.
        assert rel_var.std(ddof=1) > 1.5 * math.sqrt(2 / (n - 1))


def test_sampling_spread_by_hand():
    # d_k = 1, n = 1000: sqrt(2/999 + 6/1000) = sqrt(0.0020020 + 0.006) = 0.08945;
    # d_k = 64: sqrt(0.0020020 + 0.00009375) = 0.04578. Means: σ²/√n = 4/√100 = 0.4.
    assert ex.sampling_spread(1, 1000).variance_rel_sd == pytest.approx(0.08945, abs=1e-5)
    assert ex.sampling_spread(64, 1000).variance_rel_sd == pytest.approx(0.04578, abs=1e-5)
    assert ex.sampling_spread(64, 1000, 4.0).variance_rel_sd == \
        ex.sampling_spread(64, 1000).variance_rel_sd
    assert ex.sampling_spread(16, 100, 4.0).scaled_mean_sd == pytest.approx(0.4, rel=1e-15)
    assert ex.sampling_spread(16, 100, 4.0).mean_sd == pytest.approx(1.6, rel=1e-15)  # ×√16
    assert ex.sampling_spread(4, 10).excess_kurtosis == 1.5
    with pytest.raises(ValueError, match="n_samples"):
        ex.sampling_spread(4, 1)


def test_moments_check_by_hand():
    # N = 100, d_k = 4, σ² = 1: the mean's sd is σ²/√N = 0.1, so a mean of 0.05 is 0.5 sd
    # above 0; the variance's relative sd is sqrt(2/99 + 1.5/100) = sqrt(0.035202) =
    # 0.187622, so a variance 1.3 (30% over σ⁴ = 1) is 0.3/0.187622 = 1.59896 sd above.
    raw = np.zeros(100)  # only the count of samples matters here
    stats = ex.DotProductStats(d_k=4, sigma2=1.0, raw=raw, scaled=raw, mean=0.1, var=5.2,
                               scaled_mean=0.05, scaled_var=1.3, theory_var=4.0,
                               theory_scaled_var=1.0)
    check = ex.moments_check(stats)
    assert check.mean_z == pytest.approx(0.5, rel=1e-12)
    assert check.variance_z == pytest.approx(1.59896, abs=1e-5)
    assert check.spread.normal_variance_rel_sd == pytest.approx(math.sqrt(2 / 99), rel=1e-15)


def test_weight_focus_of_the_textbook_rows_at_tau_0_1():
    # Textbook S/√2 = [[a, 0, a], [0, a, a], [a, a, 2a]], a = 0.70711; at τ = 0.1 the
    # logits are 10× those, e^{7.0711} = 1177.4. Row 1: keys 1 and 3 tied, each
    # 1177.4/(2·1177.4 + 1) = 0.49979; key 2 gets 1/2355.8 = 0.00042. Row 3: key 3 alone
    # holds 1/(1 + 2/1177.4) = 0.99830 > 0.99: nearly one-hot.
    a = 1 / math.sqrt(2)
    rows = ex.weight_focus([[a, 0, a], [0, a, a], [a, a, 2 * a]], 0.1)
    assert [f.tied for f in rows] == [(0, 2), (1, 2), (2,)]
    assert [f.nearly_one_hot for f in rows] == [False, False, True]
    assert rows[0].max_weight == pytest.approx(0.49979, abs=1e-5)
    assert sorted(rows[0].holders) == [0, 2] and rows[0].gap == 0.0
    assert rows[2].holders == (2,) and rows[2].max_weight == pytest.approx(0.99830, abs=1e-5)


def test_weight_focus_close_scores_masks_and_uniform_rows():
    # [0.7, 0.65, -1] at τ = 0.1: logits [7, 6.5, -10]; key 1 gets 1/(1 + e^-0.5) = 0.622:
    # not tied, yet two keys hold the weight, 0.05 apart.
    close, = ex.weight_focus([0.7, 0.65, -1.0], 0.1)
    assert close.tied == (0,) and close.holders == (0, 1) and not close.nearly_one_hot
    assert close.gap == pytest.approx(0.05)
    # Every score 0: all keys tied, each 1/4.
    flat, = ex.weight_focus([0.0] * 4, 0.1)
    assert flat.tied == (0, 1, 2, 3) and flat.max_weight == 0.25 and len(flat.holders) == 4
    # A row that may see one key is one-hot whatever its scores; a fully masked row holds
    # nothing.
    one, none = ex.weight_focus([[5.0, 9.0], [1.0, 2.0]], 1.0,
                                mask=[[True, False], [False, False]])
    assert (one.visible, one.holders, one.max_weight, one.nearly_one_hot) == (1, (0,), 1.0, True)
    assert (none.visible, none.holders, none.tied, none.max_weight) == (0, (), (), 0.0)
