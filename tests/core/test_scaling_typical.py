"""attncore.scaling.typical_saturation: lesson 2's query, a typical one of many drawn."""

from __future__ import annotations

import numpy as np
import pytest

from attncore import scaling as ex


def _percentiles(values: np.ndarray) -> np.ndarray:
    """Each value's percentile among ``values`` by average ranks (ties share the mean of
    their ranks, 0-based), 0 to 100: a second way to the core's count below + half equal."""
    order = np.argsort(values, kind="stable")
    ranks = np.empty(values.size)
    ranks[order] = np.arange(values.size)
    for v in np.unique(values):  # ties: the mean of their ranks
        tied = values == v
        ranks[tied] = ranks[tied].mean()
    return 100 * ranks / (values.size - 1)


@pytest.mark.parametrize("d_k, n_keys, sigma2", [(64, 16, 1.0), (1, 16, 1.0), (1024, 8, 4.0),
                                                 (2, 3, 0.25)])
def test_the_query_shown_is_the_most_central_of_those_drawn(d_k, n_keys, sigma2):
    candidates = 21
    typical = ex.typical_saturation(d_k, n_keys, np.random.default_rng(5), sigma2,
                                    candidates=candidates)
    # The same draws made one at a time by saturation(), from the same generator.
    rng = np.random.default_rng(5)
    drawn = [ex.saturation(d_k, n_keys, rng, sigma2) for _ in range(candidates)]
    chosen = drawn[typical.chosen]
    for name in ex.SCALINGS:
        np.testing.assert_array_equal(typical.rows[name].scores, chosen[name].scores)
        assert typical.rows[name].max_weight == chosen[name].max_weight
    # Its percentiles, counted here by ranks: the furthest from 50 is the nearest of all.
    measures = np.array([[getattr(d[name], m) for d in drawn] for name in ex.SCALINGS
                         for m in ("max_weight", "entropy", "jacobian_norm")])
    percentiles = np.array([_percentiles(row) for row in measures])
    worst = np.abs(percentiles - 50).max(axis=0)
    assert worst[typical.chosen] == worst.min()
    assert typical.chosen == int(np.argmin(worst))  # the first such
    assert typical.lowest == pytest.approx(percentiles[:, typical.chosen].min())
    assert typical.highest == pytest.approx(percentiles[:, typical.chosen].max())
    assert typical.candidates == candidates


def test_at_the_lessons_defaults_the_unscaled_softmax_of_the_query_shown_saturates():
    # d_k = 64, 16 keys, seed 0 (the page draws from seed + 1): the first query drawn has
    # an unscaled largest weight of 0.634 and the largest Jacobian norm of the three
    # scalings, as about 3 draws in 10 do; the typical one passes less gradient unscaled.
    first = ex.saturation(64, 16, np.random.default_rng(1))
    assert first["none"].jacobian_norm > first["sqrt_dk"].jacobian_norm
    typical = ex.typical_saturation(64, 16, np.random.default_rng(1))
    rows = typical.rows
    assert rows["none"].jacobian_norm < rows["sqrt_dk"].jacobian_norm
    assert rows["none"].max_weight > first["none"].max_weight
    assert 40 <= typical.lowest <= typical.highest <= 60


def test_one_key_gives_every_measure_one_value_and_the_first_query():
    typical = ex.typical_saturation(16, 1, np.random.default_rng(0), candidates=5)
    assert (typical.chosen, typical.lowest, typical.highest) == (0, 50.0, 50.0)
    assert typical.rows["none"].max_weight == 1.0


def test_too_many_draws_are_refused():
    with pytest.raises(ValueError, match="too large"):
        ex.typical_saturation(4096, 4096, np.random.default_rng(0), candidates=10)
    with pytest.raises(ValueError):
        ex.typical_saturation(64, 16, np.random.default_rng(0), candidates=0)
