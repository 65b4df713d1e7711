"""Lesson 11: the sliding window with sinks against a loop, the online softmax against plain
attention, the cache formula, merged KV heads and perplexity, checked by hand, by a second
method or by an identity."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attncore import cost, lm, scaled_dot_product_attention
from attncore.lm import files, heads
from attncore.lm import inference as inf
from attncore.masks import causal_mask, sliding_window_mask
from tests.model_marks import needs_smollm

# ---- the sliding window with sinks ----------------------------------------------------------

@given(t_q=st.integers(1, 12), extra=st.integers(0, 6), window=st.integers(1, 20),
       sinks=st.integers(0, 8))
def test_the_window_with_sinks_against_a_loop(t_q, extra, window, sinks):
    t_k = t_q + extra
    mask = sliding_window_mask(t_q, window, t_k, sinks=sinks)
    for i in range(t_q):
        p = i + t_k - t_q  # bottom-right aligned: the queries are the last Tq positions
        for j in range(t_k):
            expected = j <= p and (p - j < window or j < sinks)
            assert mask[i, j] == expected, (i, j)


def test_the_window_by_hand():
    # 5 tokens, W = 2, S = 1: token 4 (position 3) sees 3 and 4, and the sink 1
    mask = sliding_window_mask(5, 2, sinks=1)
    assert mask[3].tolist() == [True, False, True, True, False]
    # a window as long as the text is the causal mask, whatever the sinks
    assert np.array_equal(sliding_window_mask(6, 6, sinks=3), causal_mask(6))


@pytest.mark.parametrize("bad", [{"window": 0}, {"window": 2.5}, {"sinks": -1}])
def test_bad_windows_are_refused(bad):
    with pytest.raises(ValueError):
        sliding_window_mask(4, **{"window": 2, **bad})


# ---- FlashAttention's online softmax --------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(t_q=st.integers(1, 9), t_k=st.integers(1, 9), d=st.integers(1, 5),
       block_k=st.integers(1, 9), block_q=st.integers(1, 9), seed=st.integers(0, 999),
       masked=st.booleans())
def test_the_online_softmax_equals_plain_attention(t_q, t_k, d, block_k, block_q, seed, masked):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(t_q, d)) * 3, rng.normal(size=(t_k, d)), rng.normal(size=(t_k, d))
    mask = rng.random((t_q, t_k)) < 0.6 if masked else None
    tiled = cost.online_softmax_attention(q, k, v, min(block_k, t_k), min(block_q, t_q), mask)
    plain = scaled_dot_product_attention(q, k, v, mask=mask).output
    # the same sums in another order; fully masked rows are 0 in both (the softmax policy)
    assert np.max(np.abs(tiled.output - plain)) < 1e-12


def test_the_running_states_end_at_the_row_max_and_sum():
    rng = np.random.default_rng(3)
    q, k, v = (rng.normal(size=(6, 4)) for _ in range(3))
    mask = causal_mask(6)
    t = cost.online_softmax_attention(q, k, v, block_k=2, mask=mask)
    s = np.where(mask, q @ k.T / 2, -np.inf)  # / √4
    assert np.allclose(t.running_max[-1], s.max(axis=1))
    assert np.allclose(t.denominator[-1], np.exp(s - s.max(axis=1, keepdims=True)).sum(axis=1))
    # row 1 sees key 1 only: after the first block its state is final
    assert t.running_max[0, 0] == pytest.approx(s[0, 0])
    assert np.allclose(t.partial_output[0, 0], v[0])
    # keys 3-4 are after row 1: that block changes nothing for it
    assert t.denominator[1, 0] == t.denominator[0, 0]
    assert t.largest_tile == 6 * 2


def test_the_paper_s_counts_by_hand():
    # n = 2, d = 1: standard reads and writes 4·2·1 + 4·2² = 24 numbers
    assert cost.hbm_accesses_standard(2, 1) == 24
    # M = 8 numbers, d = 1: B_c = ceil(8 / 4) = 2, T_c = ceil(4 / 2) = 2 for n = 4;
    # 2·4·1 + 2·(4·1 + 2·(4·1 + 2·4)) = 8 + 2·(4 + 24) = 64
    assert cost.hbm_accesses_flash(4, 1, 8) == 64
    # for long sequences the flash count grows as n², with a d²/M factor far below 1
    ratio = cost.hbm_accesses_flash(1 << 16, 64, 50_000) / cost.hbm_accesses_standard(1 << 16, 64)
    assert ratio < 0.5


def test_tiled_memory_holds_no_n_by_n_matrix():
    r = cost.tiled_memory([256, 1024], 16, 64, np.random.default_rng(0))
    assert r.max_difference < 1e-12
    # plain keeps n² float64 numbers at least (8 MiB at n = 1024); tiled far less
    assert r.plain_peak[-1] >= 8 * 1024 * 1024
    assert r.tiled_peak[-1] < r.plain_peak[-1] / 10


# ---- the cache, merged heads and perplexity -------------------------------------------------

def test_the_cache_formula_by_hand():
    cfg = files.LMConfig(n_layers=30, n_heads=9, n_kv_heads=3, d_model=576, d_ff=1536,
                         vocab_size=49152, context_length=8192, norm_eps=1e-5, rope_base=1e5)
    # 2 · 30 · 3 · 64 · 100 tokens · 1 · 4 bytes = 4,608,000
    assert inf.cache_bytes(cfg, 100) == 4_608_000
    assert inf.cache_bytes(cfg, 100, batch=2, kv_heads=9, bytes_per_number=2) == 4_608_000 * 3
    llama2_70b = next(c for c in inf.PUBLISHED if c.name == "Llama 2 70B")
    # 2 · 80 · 8 · 128 · 2 bytes = 327,680 bytes a token
    assert llama2_70b.cache_bytes(1) == 327_680
    assert llama2_70b.kind == "grouped-query"
    # Mistral 7B's rolling cache holds its last 4,096 tokens: at 131,072 tokens it is
    # 2 · 32 · 8 · 128 · 4096 · 2 bytes = 536,870,912 (512 MiB), as at 4,096 itself
    mistral = next(c for c in inf.PUBLISHED if c.name == "Mistral 7B v0.1")
    assert mistral.cache_bytes(131_072) == mistral.cache_bytes(4096) == 536_870_912
    assert mistral.cache_bytes(1000) == 2 * 32 * 8 * 128 * 1000 * 2
    assert all(c.window is None for c in inf.PUBLISHED if c is not mistral)


@needs_smollm
def test_the_cache_outweighs_the_weights_past_a_context():
    # one step reads every weight but the embedding table: 538 MB of float32 (the
    # LMWeights docstring); the cache 2 · 30 · 3 · 64 · 4 = 46,080 bytes a token of context
    m = lm.model()
    at = inf.cache_outweighs_weights_at(m)
    assert (at - 1) * 46_080 < m.weights.bytes_per_token <= at * 46_080
    assert 11_000 < at < 12_500


def test_perplexity_of_a_uniform_guess_is_the_vocabulary():
    # every next token has probability 1/4: loss ln 4, perplexity 4
    logits = np.zeros((5, 4))
    losses = heads.token_losses(logits, np.array([0, 1, 2, 3, 0]))
    assert np.exp(losses.mean()) == pytest.approx(4.0)


def test_perplexity_of_a_tiny_case_by_hand():
    # Vocabulary of 2, text ids 1, 0, 1. Row 1 predicts token 2, row 2 token 3; row 3
    # predicts past the text and is never scored.
    #   row 1: logits (ln 3, 0) -> p = (3/4, 1/4); token 2 is id 0: loss ln(4/3)
    #   row 2: logits (0, 0)    -> p = (1/2, 1/2); token 3 is id 1: loss ln 2
    # mean loss (ln(4/3) + ln 2) / 2 = ln(8/3) / 2, so perplexity = sqrt(8/3) = 1.63299...
    logits = np.array([[np.log(3.0), 0.0], [0.0, 0.0], [0.0, 5.0]])
    losses = heads.token_losses(logits, np.array([1, 0, 1]))
    np.testing.assert_allclose(losses, [np.log(4 / 3), np.log(2)], rtol=1e-12)
    assert np.exp(losses.mean()) == pytest.approx(np.sqrt(8 / 3), rel=1e-12)


@needs_smollm
def test_merged_kv_heads_are_the_mean_of_the_three():
    m = lm.model()
    merged = inf.merge_kv_heads(m.weights, m.config)
    H, KV, d_k = 9, 3, 64
    k_cols = m.weights.attn_qkv[5][:, H * d_k:(H + KV) * d_k].reshape(576, KV, d_k)
    new = merged.attn_qkv[5][:, H * d_k:(H + KV) * d_k].reshape(576, KV, d_k)
    assert np.allclose(new[:, 0], k_cols.mean(axis=1), atol=1e-6)
    assert np.array_equal(new[:, 0], new[:, 2])
    # W_Q is untouched, and every other array is the same object
    assert np.array_equal(merged.attn_qkv[:, :, : H * d_k], m.weights.attn_qkv[:, :, : H * d_k])
    assert merged.ffn_down is m.weights.ffn_down


@needs_smollm
def test_windows_that_hide_nothing_change_nothing():
    m = lm.model()
    ids = inf.text_ids(m, inf.default_text(), 40)
    dense = inf.perplexity(m, ids)
    # a window as long as the text, or sinks covering it, is the causal mask
    assert inf.perplexity(m, ids, sliding_window_mask(40, 40)) == dense
    assert inf.perplexity(m, ids, sliding_window_mask(40, 3, sinks=40)) == dense
    result = inf.window_perplexities(inf.default_text(), 8, 4, 64, shift=True)
    assert result.window > result.window_sinks > 0
    assert result.shift.rows == 64 - (8 + 4 - 1)


@needs_smollm
def test_the_cache_comparison():
    heard = []
    result = inf.cache_comparison("The capital of France is", 4,
                                  progress=lambda f, what: heard.append((f, what)))
    # 4 tokens with the cache, then 4 without: 8 reports, an eighth of the way each
    assert heard == [(n / 8, f"token {(n - 1) % 4 + 1} of 4, "
                             f"{'with' if n <= 4 else 'without'} the cache")
                     for n in range(1, 9)]
    assert result.same_tokens
    assert result.cache_bytes == result.cache_bytes_formula
    # 5 prompt tokens, then 1 more each step: the last pass read 5 + 3 = 8 tokens
    assert result.contexts.tolist() == [5, 6, 7, 8]
    assert result.cache_bytes == 2 * 30 * 3 * 64 * 8 * 4


@needs_smollm
@pytest.mark.parametrize("argv, keys", [
    (["window", "--window", "16", "--sinks", "2", "--tokens", "64"],
     {"tokens", "ppl_dense", "ppl_window", "ppl_window_sinks", "seconds"}),
    (["mqa", "--tokens", "48"], {"ppl_gqa", "ppl_mqa_merged"}),
    (["cache", "--prompt", "Hello", "--steps", "3"],
     {"same_tokens", "max_logit_diff", "seconds_cached", "seconds_uncached", "cache_bytes",
      "cache_bytes_formula"}),
])
def test_the_command_line_tasks(argv, keys, capsys, tmp_path):
    from attncore.lm.__main__ import main

    main(argv)
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert keys <= set(last)
    if argv[0] == "window":
        assert last["tokens"] == 64
        assert math.isfinite(last["ppl_window"])


@needs_smollm
def test_the_command_line_reads_a_text_file(capsys, tmp_path):
    from attncore.lm.__main__ import main

    text = tmp_path / "t.txt"
    text.write_text("One two three four five six seven eight nine ten. " * 8, encoding="utf-8")
    main(["window", "--window", "4", "--sinks", "1", "--text-file", str(text), "--tokens", "40"])
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert last["tokens"] == 40
    with pytest.raises(SystemExit):
        main(["window", "--window", "4", "--sinks", "1", "--text-file", str(tmp_path / "none")])
