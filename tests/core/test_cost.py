"""The cost experiments: chunked attention, peak memory, measurements and caps."""

import numpy as np
import pytest

from attncore import experiments as ex
from attncore import scaled_dot_product_attention


@pytest.mark.parametrize("chunk", [1, 7, 64, 100, 1000])
def test_chunked_output_equals_the_full_output(chunk):
    rng = np.random.default_rng(chunk)
    q, k, v = (rng.standard_normal((3, 100, 16)) for _ in range(3))
    full = scaled_dot_product_attention(q, k, v).output
    np.testing.assert_allclose(ex.chunked_attention(q, k, v, chunk), full, rtol=0, atol=1e-12)


def test_chunked_peak_memory_is_about_chunk_times_n():
    rng = np.random.default_rng(0)
    H, n, d, chunk = 4, 512, 16, 32
    q, k, v = (rng.standard_normal((H, n, d)) for _ in range(3))
    _, full_peak = ex.peak_memory(lambda: scaled_dot_product_attention(q, k, v).output)
    _, chunk_peak = ex.peak_memory(lambda: ex.chunked_attention(q, k, v, chunk))
    weights = H * n * n * 8  # 8 MiB of float64 weights
    # The full call must hold all the weights (and at most ~1.5 times that in all).
    assert weights <= full_peak <= 1.5 * weights
    # A chunk holds H·chunk·n weights (0.5 MiB) plus the output (H·n·d·8 = 0.25 MiB) and
    # its pieces; allow four times the chunk's weights plus twice the output.
    assert chunk_peak <= 4 * H * chunk * n * 8 + 2 * H * n * d * 8
    assert chunk_peak < full_peak / 4


def test_peak_memory_sees_numpy_allocations():
    result, peak = ex.peak_memory(lambda: np.ones(1_000_000))  # 8,000,000 bytes
    assert result.shape == (1_000_000,) and 8_000_000 <= peak < 8_100_000


def test_cost_point_weights_bytes_and_cap():
    point = ex.cost_point(64, 2, 8, 1, np.random.default_rng(0))
    assert point.weights_bytes == 2 * 64 * 64 * 8  # H·n²·8 = 65,536
    assert point.seconds > 0 and point.peak_bytes >= point.weights_bytes
    with pytest.raises(ValueError, match="exceeds the cap"):
        ex.cost_point(2048, 2, 8, 1, np.random.default_rng(0))  # 2·2048² > 4·1024²


def test_textbook_loop_matches_attncore():
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((3, 20, 8)) for _ in range(3))
    w, out = ex.textbook_attention(q, k, v)
    trace = scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(w, trace.weights, atol=1e-15)
    np.testing.assert_allclose(out, trace.output, atol=1e-14)


def test_best_time_calls_at_least_repeats_and_keeps_going_for_min_total():
    calls = []
    ex.best_time(lambda: calls.append(1), 3)
    assert len(calls) == 3
    calls.clear()
    ex.best_time(lambda: calls.append(1), 1, min_total=0.01, max_calls=50)
    assert len(calls) == 50  # each call takes far less than 0.01/50 s
