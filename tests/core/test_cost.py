"""Lesson 7's core: the memory-lean attention, chunking, the loop over heads, and the
measurements (their structure and caps; their timings are printed by benchmarks, not
asserted)."""

import dataclasses

import numpy as np
import pytest

from attncore import cost, measure
from attncore import scaled_dot_product_attention as plain


@pytest.mark.parametrize("shape, spread", [((7, 3), 1.0), ((2, 3, 40, 8), 1.0),
                                           ((4, 64, 16), 30.0)])
def test_lean_attention_equals_the_plain_one(shape, spread):
    """Same weights and output to 1e-12; spread 30 makes scores past the ±30 bound, so the
    lean form takes its shifted branch too."""
    rng = np.random.default_rng(len(shape))
    q, k, v = (rng.standard_normal(shape) * spread for _ in range(3))
    weights, output = cost.lean_attention(q, k, v)
    trace = plain(q, k, v)
    np.testing.assert_allclose(weights, trace.weights, rtol=0, atol=1e-12)
    np.testing.assert_allclose(output, trace.output, rtol=0, atol=1e-12 * spread)


def test_lean_attention_holds_little_more_than_the_weights_at_1024_tokens():
    H, T, d_k = 4, 1024, 64
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((H, T, d_k)) for _ in range(3))
    [((weights, _), peak), (_, plain_peak)] = measure.peak_memories(
        [(cost.lean_attention, (q, k, v)), (plain, (q, k, v))])
    assert weights.nbytes == H * T * T * 8  # 32 MiB
    assert weights.nbytes <= peak <= 1.3 * weights.nbytes
    assert plain_peak > 2 * weights.nbytes  # the readable form keeps its intermediates


@pytest.mark.parametrize("chunk", [1, 7, 64, 100, 1000])
def test_chunked_output_equals_the_full_output(chunk):
    rng = np.random.default_rng(chunk)
    q, k, v = (rng.standard_normal((3, 100, 16)) for _ in range(3))
    full = plain(q, k, v).output
    np.testing.assert_allclose(cost.chunked_attention(q, k, v, chunk), full, rtol=0, atol=1e-12)


def test_chunk_experiment_same_output_a_fraction_of_the_memory():
    H, n, d, chunk = 4, 512, 16, 32
    result = cost.chunk_experiment(n, H, d, chunk, np.random.default_rng(0))
    weights = H * n * n * 8  # 8 MiB of float64 weights
    assert result.max_difference <= 1e-12
    # The full call holds all the weights, and little more (the lean form).
    assert weights <= result.full_peak_bytes <= 1.3 * weights
    # A chunk holds H·chunk·n weights (0.5 MiB) plus the output (H·n·d·8 = 0.25 MiB) and
    # its pieces; allow four times the chunk's weights plus twice the output.
    assert result.chunk_peak_bytes <= 4 * H * chunk * n * 8 + 2 * H * n * d * 8
    assert result.chunk_peak_bytes < result.full_peak_bytes / 4


def test_peak_memory_sees_numpy_allocations():
    [(result, peak)] = measure.peak_memories([(np.ones, (1_000_000,))])  # 8,000,000 bytes
    assert result.shape == (1_000_000,) and 8_000_000 <= peak < 8_100_000


def test_textbook_loop_matches_attncore():
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((3, 20, 8)) for _ in range(3))
    w, out = cost.textbook_attention(q, k, v)
    trace = plain(q, k, v)
    np.testing.assert_allclose(w, trace.weights, atol=1e-15)
    np.testing.assert_allclose(out, trace.output, atol=1e-14)


def test_growth_exponent_of_exact_powers():
    ns = np.array([64, 128, 256, 512])
    assert cost.growth_exponent(ns, 3e-9 * ns**2.0) == pytest.approx(2.0, abs=1e-12)
    assert cost.growth_exponent(ns, 5e-7 * ns) == pytest.approx(1.0, abs=1e-12)


def test_measure_growth_records_every_round_and_the_memory():
    g = cost.measure_growth([128, 32, 64], heads=2, d_k=8, rounds=3,
                            rng=np.random.default_rng(0), fit_from=64, min_round=0.0)
    assert g.ns.tolist() == [32, 64, 128]
    assert g.round_seconds.shape == (3, 3) and np.all(g.round_seconds > 0)
    np.testing.assert_array_equal(g.seconds, g.round_seconds.min(axis=0))
    assert g.weights_bytes.tolist() == [2 * n * n * 8 for n in (32, 64, 128)]
    assert np.all(g.peak_bytes >= g.weights_bytes)
    assert g.fit_ns.tolist() == [64, 128]
    # Each round's slope lies between the extremes, and the minima's slope is reported.
    assert g.exponent_low <= g.exponent_high
    assert g.exponent == pytest.approx(cost.growth_exponent(g.fit_ns, g.seconds[1:]))


def test_conclusive_only_when_the_rounds_agree():
    g = cost.measure_growth([32, 64], heads=1, d_k=4, rounds=2,
                            rng=np.random.default_rng(0), min_round=0.0)
    agree = dataclasses.replace(g, exponent_low=1.9, exponent_high=1.9 + cost.EXPONENT_SPREAD_LIMIT)
    differ = dataclasses.replace(g, exponent_low=1.2, exponent_high=2.6)
    assert agree.conclusive and not differ.conclusive


def test_measurements_refuse_work_over_the_cap():
    with pytest.raises(ValueError, match="exceeds the cap"):
        cost.measure_growth([64, 2048], 2, 8, 2, np.random.default_rng(0))  # 2·2048² > 4·1024²
    with pytest.raises(ValueError, match="at least two lengths"):
        cost.measure_growth([64, 64], 2, 8, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="heads must lie in"):
        cost.loop_experiment(64, 0, 8, 2, np.random.default_rng(0))


def test_loop_experiment_compares_equal_outputs():
    lx = cost.loop_experiment(32, 16, 4, 3, np.random.default_rng(0), min_round=0.0)
    assert lx.max_difference <= 1e-14
    assert lx.ratios.shape == (3,) and np.all(lx.ratios > 0)
    assert lx.speedup == lx.loop_seconds / lx.vectorised_seconds


@pytest.mark.parametrize("ratios, conclusive", [
    ([1.2, 1.5, 1.1], True),   # the vectorised call faster in every round
    ([0.8, 0.95], True),       # the loop faster in every round
    ([0.9, 1.4, 1.1], False),  # the rounds disagree: not passed on to the next visitor
    ([1.0, 1.3], False),       # a tie in one round is no winner
])
def test_a_loop_experiment_is_conclusive_when_every_round_has_one_winner(ratios, conclusive):
    lx = cost.LoopExperiment(64, 4, 8, len(ratios), 1e-3, 1e-3 * ratios[0],
                             np.array(ratios), 0.0)
    assert lx.conclusive is conclusive


def test_best_time_calls_at_least_repeats_and_keeps_going_for_min_total():
    calls = []
    measure.best_time(lambda: calls.append(1), 3)
    assert len(calls) == 3
    calls.clear()
    measure.best_time(lambda: calls.append(1), 1, min_total=0.01, max_calls=50)
    assert len(calls) == 50  # each call takes far less than 0.01/50 s


def test_one_blas_thread_limits_blas_inside_only():
    from threadpoolctl import threadpool_info

    def blas_threads():
        return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]

    with measure.one_blas_thread():
        assert set(blas_threads()) <= {1}


def test_a_pinned_process_never_sets_the_blas_thread_count_again(monkeypatch):
    """Once a server pins BLAS to one thread, the lessons' contexts call nothing: setting
    the count while another session's product runs crashed a server (segmentation
    fault)."""
    def refuse():
        raise AssertionError("the thread count was set again")

    monkeypatch.setattr(measure, "_pinned", True)
    monkeypatch.setattr(measure, "_blas", refuse)
    with measure.one_blas_thread():
        assert float(np.ones((2, 2)) @ np.ones(2) @ np.ones(2)) == 4.0  # (2, 2)·1 = 2 each


def test_multiply_adds_counted_from_the_shapes_of_the_products():
    # A second count: an (a × b)(b × c) product takes a·b·c multiply-adds; per head Q Kᵀ is
    # (n × d_k)(d_k × n) and W V is (n × n)(n × d_k).
    def product(a, b, c):
        return a * b * c

    for n, H, d_k in [(1, 1, 1), (512, 4, 64), (2048, 1, 16), (64, 64, 8)]:
        by_shapes = H * (product(n, d_k, n) + product(n, n, d_k))
        assert cost.attention_multiply_adds(n, H, d_k) == by_shapes
        d_model = H * d_k
        assert cost.projection_multiply_adds(n, d_model) == 4 * product(n, d_model, d_model)


def test_projections_cost_more_exactly_while_n_is_below_twice_d_model():
    # 2·n²·d_model against 4·n·d_model²: equal at n = 2·d_model.
    H, d_k = 4, 64
    d_model = H * d_k
    for n in (64, 256, 511, 512, 513, 2048):
        attention = cost.attention_multiply_adds(n, H, d_k)
        projections = cost.projection_multiply_adds(n, d_model)
        assert (projections > attention) == (n < 2 * d_model)
        assert (projections == attention) == (n == 2 * d_model)


def test_local_exponents_and_the_words_for_them():
    ns = np.array([64, 128, 256, 512])
    seconds = np.array([1.0, 2.0, 8.0, 64.0])  # ×2, ×4, ×8 per doubling
    np.testing.assert_allclose(cost.local_exponents(ns, seconds), [1.0, 2.0, 3.0], atol=1e-12)
    assert [cost.against_square(e) for e in (1.84, 1.86, 2.0, 2.14, 2.16)] == [
        "slower", "like n²", "like n²", "like n²", "faster"]


def test_a_verdict_is_shared_only_when_every_exponent_gets_it():
    # 2 ± 0.15 is "like n²": 1.86 and 2.14 are inside, 1.84 below
    assert cost.shared_verdict([2.0, 1.86, 2.14]) == "like n²"
    assert cost.shared_verdict([1.5, 1.2, 1.84]) == "slower"
    assert cost.shared_verdict([1.9, 1.84, 1.95]) is None  # the rounds reach "slower"
    assert cost.shared_verdict([2.1, 1.99, 2.2]) is None  # and "faster"


def test_the_head_loop_does_the_vectorised_call_s_arithmetic():
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((5, 30, 8)) for _ in range(3))
    np.testing.assert_array_equal(cost.head_loop_attention(q, k, v),
                                  cost.lean_attention(q, k, v)[1])


@pytest.mark.parametrize("heads", [1, 4, 8])
@pytest.mark.parametrize("d_k", [16, 32, 64])
def test_every_chunk_on_the_page_gives_the_output_to_rounding(heads, d_k):
    # Lesson 7's "Try this": every chunk the page offers leaves the output at rounding level.
    for chunk in (16, 64, 256, 512):
        result = cost.chunk_experiment(512, heads, d_k, chunk, np.random.default_rng(0))
        assert result.max_difference <= 1e-14


def test_peak_memory_is_the_calls_own_while_other_threads_allocate():
    # A server's other sessions allocate while a lesson measures: 40 MB arrays made and
    # dropped in a loop by another thread must not enter the 8,000,000 bytes of np.ones.
    import threading

    stop = threading.Event()

    def allocate() -> None:
        while not stop.is_set():
            np.ones(5_000_000).sum()  # 40,000,000 bytes each time

    other = threading.Thread(target=allocate)
    other.start()
    try:
        results = measure.peak_memories([(np.ones, (1_000_000,))] * 3, keep_results=False)
    finally:
        stop.set()
        other.join()
    assert [result for result, _ in results] == [None] * 3
    assert all(8_000_000 <= peak < 8_100_000 for _, peak in results)
