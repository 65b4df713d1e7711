"""Lesson 13's page-facing core: the KV cache against a fixed state (attncore.memory.hybrid),
the three pairs by hand (by_hand) and the leak of a linear read (leak), each against values
worked out by hand in the comments or a second, plainer computation."""

import numpy as np
import pytest

from attncore.lm import LMConfig
from attncore.memory import by_hand, hybrid, leak, linear_memory, random_pairs

SMOLLM2 = LMConfig(30, 9, 3, 576, 1536, 49152, 8192, 1e-5, 1e5)  # d_head = 576 / 9 = 64


# --- hybrid ------------------------------------------------------------------------------

def test_the_cache_against_a_state_of_the_same_width():
    r = hybrid.cache_against_state(SMOLLM2, [1, 32, 8192])
    # 2 · 30 layers · 3 KV heads · 64 · 4 bytes = 46,080 bytes a token
    assert r.per_token == 46_080
    assert r.cache_bytes.tolist() == [46_080, 46_080 * 32, 46_080 * 8192]
    # one state per KV head (the 9 query heads share 3 KV heads, so 3 states a layer):
    # 30 layers · 3 · 64 · 64 = 368,640 numbers, × 4 bytes = 1,474,560
    assert (r.state_numbers, r.state_bytes) == (368_640, 1_474_560)
    # 1,474,560 / 46,080 = 32 = d_head / 2 exactly: from 32 tokens on the cache is at least
    # the state
    assert r.crossover == 32 == SMOLLM2.d_head // 2
    assert r.cache_bytes[1] == r.state_bytes


def test_the_state_does_not_grow_with_query_heads_that_share_keys_and_values():
    more = LMConfig(30, 18, 3, 1152, 1536, 49152, 8192, 1e-5, 1e5)  # 18 query heads of 64
    assert hybrid.cache_against_state(more, [1]).state_numbers == \
        hybrid.cache_against_state(SMOLLM2, [1]).state_numbers
    alone = LMConfig(2, 4, 4, 32, 16, 100, 64, 1e-5, 1e5)  # every head its own: d_head 8
    r = hybrid.cache_against_state(alone, [1])
    assert r.state_numbers == 2 * 4 * 8 * 8 and r.crossover == 4  # 8 / 2


def test_the_crossover_rounds_up():
    r = hybrid.cache_against_state(SMOLLM2, [1], bytes_per_number=4)
    smaller = hybrid.CacheAgainstState(**{**r.__dict__, "state_bytes": r.state_bytes + 1})
    assert smaller.crossover == 33  # one byte more needs one token more


def test_qwen3_next_is_read_from_its_published_config():
    c = hybrid.QWEN3_NEXT
    assert c.fields["num_hidden_layers"] == 48 and c.fields["full_attention_interval"] == 4
    kinds = c.layer_types
    # layers 4, 8, ..., 48 counted from 1 are full: 12 of them; 36 Gated DeltaNet
    assert [i + 1 for i, k in enumerate(kinds) if k == "full_attention"] == list(range(4, 49, 4))
    assert (c.full_layers, c.linear_layers) == (12, 36)
    assert kinds[:4] == ("linear_attention",) * 3 + ("full_attention",)


def test_qwen3_next_memory_by_hand():
    m = hybrid.hybrid_memory(hybrid.QWEN3_NEXT, [32768, 262144])
    # KV: 2 · 12 · 2 · 256 · T · 2 = 24,576 T bytes
    assert m.cache_bytes.tolist() == [24_576 * 32768, 24_576 * 262144]
    # states: 36 · 32 · 128 · 128 = 18,874,368 numbers, 2 bytes each
    assert m.state_bytes == 37_748_736
    # convolution: 36 layers · (2·16·128 + 32·128 = 8,192 channels) · (4 − 1) · 2 bytes
    assert m.conv_bytes == 36 * 8192 * 3 * 2
    # full attention in all 48 layers: 4 times the 12 layers' cache
    assert (m.everywhere_bytes == 4 * m.cache_bytes).all()
    assert (m.total_bytes == m.cache_bytes + m.state_bytes + m.conv_bytes).all()
    assert m.saving[1] == pytest.approx(25_769_803_776 / (6_442_450_944 + 37_748_736 + 1_769_472))


def test_another_interval_and_bad_configs():
    c = hybrid.HybridConfig(num_hidden_layers=10, full_attention_interval=3)
    assert c.full_layers == 3 and c.linear_layers == 7  # layers 3, 6, 9 counted from 1
    with pytest.raises(ValueError, match="full_attention_interval"):
        hybrid.HybridConfig(full_attention_interval=0)
    with pytest.raises(ValueError, match="torch_dtype"):
        hybrid.HybridConfig(torch_dtype="int3")
    with pytest.raises(ValueError, match="token count"):
        hybrid.hybrid_memory(hybrid.QWEN3_NEXT, [1.5])
    with pytest.raises(ValueError, match="tokens"):
        hybrid.hybrid_memory(hybrid.QWEN3_NEXT, [])


# --- by hand ------------------------------------------------------------------------------

def test_the_three_writes_and_the_linear_read_by_hand():
    w = by_hand.worked_memory(0, 4.0)
    # v₃ k₃ᵀ = (1, 1)ᵀ (0.6, 0, 0.8) = rows (0.6, 0, 0.8) twice
    assert w.outer[2].tolist() == [[0.6, 0.0, 0.8], [0.6, 0.0, 0.8]]
    # S₃ = (2,0)ᵀ(1,0,0) + (0,2)ᵀ(0,1,0) + that
    assert w.states[-1].tolist() == [[2.6, 0.0, 0.8], [0.6, 2.0, 0.8]]
    # S₃ k₁ = 1·v₁ + 0·v₂ + 0.6·v₃ = (2.6, 0.6); the leak 0.6 (1, 1) has length 0.6 √2
    assert w.similarities.tolist() == [1.0, 0.0, 0.6]
    assert w.linear_read.tolist() == [2.6, 0.6]
    assert w.leak.tolist() == [0.6, 0.6]
    assert w.linear_error == pytest.approx(0.6 * np.sqrt(2))


def test_the_softmax_read_by_hand():
    w = by_hand.worked_memory(0, 4.0)
    # scores 4 · (1, 0, 0.6) = (4, 0, 2.4); weights e^s / (e^4 + 1 + e^2.4)
    z = np.exp(4) + 1 + np.exp(2.4)
    np.testing.assert_allclose(w.weights, [np.exp(4) / z, 1 / z, np.exp(2.4) / z])
    np.testing.assert_allclose(w.softmax_read, [2 * np.exp(4) / z + np.exp(2.4) / z,
                                                2 / z + np.exp(2.4) / z])
    assert w.softmax_error < w.linear_error


def test_an_orthogonal_key_is_read_exactly_and_a_blunt_softmax_is_worse():
    w = by_hand.worked_memory(1, 1.0)
    assert w.linear_read.tolist() == [0.0, 2.0] and w.linear_error == 0.0
    assert w.softmax_error > 0
    # reading k₁ with c = 1: weights (e, 1, e^0.6)/Z put a third on k₃, farther than linear
    assert by_hand.worked_memory(0, 1.0).softmax_error > by_hand.worked_memory(0, 1.0).linear_error


def test_the_by_hand_inputs_are_refused_when_bad():
    with pytest.raises(ValueError, match="query"):
        by_hand.worked_memory(3)
    with pytest.raises(ValueError, match="scale"):
        by_hand.worked_memory(0, 0.0)
    with pytest.raises(ValueError, match="at most"):
        by_hand.worked_memory(0, 1e6)


# --- the leak -------------------------------------------------------------------------------

def test_the_first_read_splits_into_its_own_value_and_the_leak():
    x = leak.first_read(8, 20)
    keys, values = random_pairs(0, 20, 8, 8)
    read = linear_memory(keys, values, keys[:1]).reads[0]
    # unit keys: the own term is v₁; the leak is the rest of the read
    np.testing.assert_allclose(x.signal, values[0])
    np.testing.assert_allclose(x.leak, read - values[0], atol=1e-12)
    assert x.leak_ratio == pytest.approx(np.linalg.norm(read - values[0]))


def test_the_leak_curve_against_a_loop_and_its_expected_size():
    curve = leak.leak_curve(4, [1, 3, 64], seeds=[0, 1])
    # a loop over the reads, one stored key at a time
    for c, n in enumerate([1, 3, 64]):
        for s, seed in enumerate([0, 1]):
            keys, values = random_pairs(seed, n, 4, 4)
            ratios = []
            for j in range(n):
                others = sum((keys[t] @ keys[j]) * values[t] for t in range(n) if t != j)
                ratios.append(np.linalg.norm(others) / np.linalg.norm(values[j]))
            assert curve.ratio[s, c] == pytest.approx(np.mean(ratios))
    assert curve.ratio[:, 0].tolist() == [0.0, 0.0]  # one pair: nothing to leak
    np.testing.assert_allclose(curve.expected, np.sqrt((np.array([1, 3, 64]) - 1) / 4))
    # 63 pairs over 4 directions: the leak is about √(63/4) ≈ 4 times the value
    assert curve.as_long_at == 64 and 2 < curve.mean_ratio[-1] < 6


def test_no_count_reaches_the_value_when_few_pairs_are_stored():
    assert leak.leak_curve(64, [1, 2, 4]).as_long_at is None
    with pytest.raises(ValueError, match="pair_counts"):
        leak.leak_curve(4, [])
    with pytest.raises(ValueError, match="d_k"):
        leak.first_read(0, 4)
