"""Lesson 0's readings of its copying models (attncore.copying), on small made-up tests
whose answers are worked out by hand in the comments."""

import numpy as np
import pytest

from attncore import copying


def test_the_length_reading_takes_the_ends_of_the_trained_range():
    # Tested lengths 2..6, trained on 3..4. Trained and tested: 3 and 4, so the ends are
    # 3 and 4; past them 5 and 6, the longest 6. The attention model is not above the
    # fixed one at length 2 (0.9 against 0.9) and 6 (0.2 against 0.25).
    lengths = np.arange(2, 7)
    acc = {"fixed": np.array([0.9, 0.8, 0.5, 0.3, 0.25]),
           "attention": np.array([0.9, 1.0, 0.95, 0.6, 0.2])}
    r = copying.length_reading(lengths, acc, 3, 4)
    assert r.any_trained and (r.first_tested, r.last_tested) == (3, 4)
    # over lengths 3 and 4 (and 4 again, the last tested): 0.95 to 1.0
    assert (r.attention_low, r.attention_high, r.attention_last) == (0.95, 1.0, 0.95)
    assert (r.fixed_first, r.fixed_last, r.fixed_trend) == (0.8, 0.5, "falls")
    assert r.not_ahead == (2, 6)
    assert (r.far, r.attention_far, r.fixed_far) == (6, 0.2, 0.25)


def test_a_run_with_no_tested_length_trained_reads_the_first_tested_one():
    # Trained on 1-letter strings only; tests start at 2: both ends are length 2, and
    # past it lie 3 and 4.
    acc = {"fixed": np.array([0.5, 0.5, 0.6]), "attention": np.array([0.7, 0.6, 0.65])}
    r = copying.length_reading([2, 3, 4], acc, 1, 1)
    assert not r.any_trained and (r.first_tested, r.last_tested) == (2, 2)
    assert (r.attention_low, r.attention_high) == (0.7, 0.7)
    assert r.fixed_trend == "stays"  # the same length at both ends
    assert (r.far, r.attention_far) == (4, 0.65)


def test_nothing_past_the_trained_lengths_has_no_far_end():
    acc = {"fixed": np.array([0.4, 0.6]), "attention": np.array([1.0, 1.0])}
    r = copying.length_reading([2, 3], acc, 2, 3)
    assert r.far is None and np.isnan(r.attention_far) and np.isnan(r.fixed_far)
    assert r.fixed_trend == "rises" and r.not_ahead == ()


def test_a_length_reading_refuses_what_it_cannot_read():
    acc = {"fixed": np.array([0.4, 0.6]), "attention": np.array([1.0, 1.0])}
    with pytest.raises(ValueError, match="increase"):
        copying.length_reading([3, 2], acc, 2, 3)
    with pytest.raises(ValueError, match="one value per length"):
        copying.length_reading([2, 3, 4], acc, 2, 3)
    with pytest.raises(ValueError, match="models"):
        copying.length_reading([2, 3], {"fixed": acc["fixed"]}, 2, 3)


def test_the_position_reading_names_positions_from_1():
    # Lengths 1, 2, 3 tested; the grid shows 2 and 3 (a length-1 row has one position).
    # At length 3 the accuracies are 0.9, 0.4, 0.7: best position 1, worst 2.
    by_position = [[1.0, np.nan, np.nan], [1.0, 0.5, np.nan], [0.9, 0.4, 0.7]]
    r = copying.position_reading([1, 2, 3], by_position, 3)
    assert r.shown_lengths == (2, 3) and r.grid.shape == (2, 3)
    np.testing.assert_array_equal(r.accuracy, [0.9, 0.4, 0.7])
    assert (r.best, r.worst, r.length) == (1, 2, 3)
    with pytest.raises(ValueError, match="not tested"):
        copying.position_reading([1, 3], [[1.0, np.nan, np.nan], [0.9, 0.4, 0.7]], 2)


def test_the_alignment_reading_counts_rows_near_the_diagonal():
    # 4 output steps; their largest weights lie on positions 0, 2, 3, 0: offsets 0, +1,
    # +1 and -3. Three of the four rows are within one of the diagonal: 0.75.
    weights = np.eye(4)[[0, 2, 3, 0]]
    r = copying.alignment_reading(weights, [0.05, 0.1, 0.7, 0.1, 0.05], np.arange(-2, 3))
    assert (r.length, r.copied, r.before, r.after) == (4, 0.7, 0.1, 0.1)
    assert r.near == 0.75
    with pytest.raises(ValueError, match="square"):
        copying.alignment_reading(np.ones((2, 3)) / 3, [0.1, 0.8, 0.1], [-1, 0, 1])


def test_the_step_reading_rebuilds_the_context_from_the_weights():
    # α = (0.25, 0.75) over h_1 = (1, 0) and h_2 = (0, 2): c = (0.25, 1.5), by hand. A
    # context one rounding off is found to differ by that much, not 0.
    weights, states = np.array([0.25, 0.75]), np.array([[1.0, 0.0], [0.0, 2.0]])
    r = copying.step_reading(weights, states, [0.25, 1.5], [0.1, 0.3])
    np.testing.assert_array_equal(r.rebuilt, [0.25, 1.5])
    assert (r.difference, r.best) == (0.0, 2)
    assert r.mean_update == pytest.approx(0.2, abs=1e-15)
    # Printed to 1 decimal the weights read 0.2 and 0.8 (0.25 rounds to even, 0.75 up):
    # 0.2·h_1 + 0.8·h_2 = (0.2, 1.6), 0.1 from (0.25, 1.5) in the second number; sum 1.0.
    printed = copying.step_reading(weights, states, [0.25, 1.5], [0.1, 0.3], decimals=1)
    assert printed.rounded_difference == pytest.approx(0.1, abs=1e-12)
    assert printed.rounded_sum == pytest.approx(1.0, abs=1e-12)
    assert r.rounded_difference == 0.0 and r.decimals == 2  # 0.25, 0.75 hold at 2 decimals
    off = copying.step_reading(weights, states, [0.25, np.nextafter(1.5, 2)], [0.0, 0.0])
    assert off.difference == np.spacing(1.5)
    with pytest.raises(ValueError, match="must agree"):
        copying.step_reading(weights, states[:1], [0.0, 0.0], [0.0])


def test_the_forced_reading_compares_both_decodings_at_one_length():
    # Length 3: greedy 0.9, 0.4, 0.2; forced 0.9, 0.7, 0.6. The gap 0, 0.3, 0.4 is widest
    # at position 3, and forced is lowest at position 3 (0.6).
    greedy = [[1.0, 0.5, np.nan], [0.9, 0.4, 0.2]]
    forced = [[1.0, 0.6, np.nan], [0.9, 0.7, 0.6]]
    r = copying.forced_reading([2, 3], greedy, forced, 3)
    assert r.length == 3 and r.widest == 3 and r.lowest == 3
    assert r.gap == pytest.approx([0.0, 0.3, 0.4])
    assert r.forced.tolist() == [0.9, 0.7, 0.6] and r.greedy.tolist() == [0.9, 0.4, 0.2]
    with pytest.raises(ValueError, match="length 1 was not tested"):
        copying.forced_reading([2, 3], greedy, forced, 1)


def test_training_coverage_is_the_chance_that_a_test_string_was_drawn_in_training():
    # 800 steps of 64 strings over 14 lengths (3..16): 51,200 / 14 = 3,657.14 of each.
    # 12³ = 1,728 strings of 3 letters: 1 − (1 − 1/1728)^3657.14 = 1 − e^(−2.1174) = 0.880
    # (the exponent: 3657.14 · ln(1 − 1/1728) = −2.1171...); 12⁴ = 20,736:
    # 1 − e^(−0.17637) = 0.1617; length 2 was not trained: 0.
    c = copying.training_coverage([2, 3, 4, 20], 3, 16, 800, 64, 12)
    assert c.drawn == pytest.approx(51200 / 14) and c.trained == 14
    assert c.possible == (144, 1728, 20736, 12**20)
    assert c.share[0] == 0.0
    assert c.share[1] == pytest.approx(1 - (1 - 1 / 1728) ** (51200 / 14), rel=1e-12)
    assert c.share[1] == pytest.approx(0.880, abs=1e-3)
    assert c.share[2] == pytest.approx(0.1617, abs=1e-4)
    # 12^20 strings: the share is about drawn / 12^20, kept, not rounded to 0
    assert c.share[3] == pytest.approx(51200 / 14 / 12**20, rel=1e-9)


def test_training_coverage_agrees_with_drawing_the_strings():
    # A second method: draw the training strings of length 2 over 2 symbols (4 possible),
    # 3 of them per run, many runs; a uniform test string was drawn with probability
    # 1 − (3/4)^3 = 0.578.
    rng = np.random.default_rng(0)
    runs = 20000
    drawn = rng.integers(0, 4, (runs, 3))  # each string as a number 0..3
    test = rng.integers(0, 4, runs)
    seen = np.mean((drawn == test[:, None]).any(axis=1))
    c = copying.training_coverage([2], 2, 2, 3, 1, 2)
    assert c.share[0] == pytest.approx(1 - 0.75**3)
    assert seen == pytest.approx(c.share[0], abs=0.01)


def test_step_arithmetic_rebuilds_the_traced_step():
    from attncore.train import bottleneck as bn

    rng = np.random.default_rng(1)
    p = bn.init_params(8, rng, "attention", dtype=np.float64)
    source = np.array([3, 1, 4, 1, 5, 9, 2])
    run = bn.decode(p, source, "attention")
    for t in (1, 4, 7):
        step = bn.trace_step(p, source, t)
        a = copying.step_arithmetic(step, run.encoder_states[0], shown=3)
        # the same scores, weights, context and output as the model's own
        assert a.scores == pytest.approx(step.scores, abs=1e-12)
        assert a.weights == pytest.approx(step.weights, abs=1e-12)
        assert a.context == pytest.approx(step.context, abs=1e-12)
        assert a.logits == pytest.approx(step.logits, abs=1e-12)
        assert a.probabilities == pytest.approx(step.probabilities, abs=1e-12)
        # the pieces add up: the written-out score, Z, the context's parts
        assert a.score_terms.sum() == pytest.approx(a.scores[a.position - 1], abs=1e-12)
        assert a.total == pytest.approx(np.exp(step.scores - step.scores.max()).sum())
        top = np.array(a.top) - 1
        assert a.weights[top] @ a.top_states + a.rest == pytest.approx(a.context, abs=1e-12)
        assert list(a.weights[top]) == sorted(a.weights, reverse=True)[:3]
        assert a.position == a.top[0] == int(np.argmax(step.weights)) + 1
        assert a.token == step.token and a.runner_up != a.token
        assert a.logits[a.runner_up] == sorted(a.logits)[-2]
    # every position shown: nothing left over
    all_of_them = copying.step_arithmetic(step, run.encoder_states[0], shown=7)
    assert not all_of_them.rest.any()
    with pytest.raises(ValueError, match="one row per source position"):
        copying.step_arithmetic(step, run.encoder_states[0][:3])
