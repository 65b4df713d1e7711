"""Lesson 11's sentences (pages/text/inference.py) as plain functions of results made up
here, each chosen so that one branch of a sentence must be taken; the expected words and
numbers are worked out by hand in the comments."""

from __future__ import annotations

import numpy as np
import pytest

from attncore import cost
from attncore.lm import LMConfig
from attncore.lm import inference as inf
from pages.text import inference as text

SMOLLM2 = LMConfig(n_layers=30, n_heads=9, n_kv_heads=3, d_model=576, d_ff=1536,
                   vocab_size=49152, context_length=8192, norm_eps=1e-5, rope_base=1e5)
MHA = LMConfig(n_layers=12, n_heads=12, n_kv_heads=12, d_model=768, d_ff=3072,
               vocab_size=50257, context_length=1024, norm_eps=1e-5, rope_base=1e4,
               family="gpt2", norm="layer", positions="learned", mlp="gelu", biases=True)
MQA = LMConfig(n_layers=4, n_heads=4, n_kv_heads=1, d_model=64, d_ff=128, vocab_size=300,
               context_length=64, norm_eps=1e-6, rope_base=1e4)


def comparison(uncached: list[int], diff: float, held: int = 322_560) -> inf.CacheComparison:
    """Three greedy steps after a 5-token prompt: contexts 5, 6, 7 (the pass without the
    cache reads the whole text again)."""
    return inf.CacheComparison(
        prompt_tokens=5, ids_cached=[10, 11, 12], ids_uncached=uncached, max_logit_diff=diff,
        contexts=np.array([5, 6, 7]), seconds_cached_each=np.array([0.1, 0.04, 0.04]),
        seconds_uncached_each=np.array([0.1, 0.12, 0.13]), cache_bytes=held,
        cache_bytes_formula=322_560, text="")


def test_the_two_generations_are_compared_token_by_token():
    same = text.written_text(comparison([10, 11, 12], 2e-6), "␣Paris<b>")  # shown as typed
    assert same.startswith("Written with the cache: **␣Paris\\<b\\>**. Without it: **the same "
                           "tokens** (the largest difference of any logit over the 3 steps: "
                           "2.0×10⁻⁶; the two runs add the same float32 numbers")
    assert text.written_text(comparison([10, 11, 12], 0.0), "x").endswith("exactly 0).")
    apart = text.written_text(comparison([10, 99, 12], 0.5), "x")
    assert "**other tokens from step 2 on**" in apart and apart.endswith("5.0×10⁻¹).")


def test_the_bytes_held_are_checked_against_the_formula():
    # 7 tokens of 2 · 30 · 3 · 64 · 4 = 46,080 bytes: 322,560
    assert text.per_token_bytes(SMOLLM2) == 46_080
    assert "**322,560 bytes** measured on the arrays themselves, equal to the formula. " \
           "That is 46,080 bytes per token" in text.held_text(comparison([10, 11, 12], 0), SMOLLM2)
    assert "against 322,560 from the formula." in \
        text.held_text(comparison([10, 11, 12], 0, held=322_561), SMOLLM2)
    assert text.cache_latex(SMOLLM2, 7, 322_560).endswith(
        r"= 2 \cdot 30 \cdot 3 \cdot 64 \cdot 7 \cdot 4 = 322,560\ \text{bytes}")
    # 0.1 + 0.04 + 0.04 = 0.18 s with the cache, 0.35 s without
    assert text.cache_caption("Measured now", comparison([10, 11, 12], 0)).startswith(
        "Measured now, 3 steps: 0.18 s with the cache, 0.35 s without")
    rows = text.held_rows(comparison([10, 11, 12], 0), SMOLLM2, list("abcdefg"))
    assert rows["from"] == ["prompt"] * 5 + ["step 1", "step 2"]
    assert rows["bytes held up to here"][-1] == "322,560"
    # 5 prompt tokens, 3 steps, 7 held: row 7 came from step 2 and entered at step 3, when
    # it was fed back in; step 3's token was never fed back
    assert text.held_intro(comparison([10, 11, 12], 0), SMOLLM2, "g") == (
        "A token written at step t enters the cache when it is fed back in, at step t + 1: "
        "row 7 “g”, from step 2, was appended at step 3, the newest row of the diagram above; "
        "the token written at step 3 is not in it yet. The 7 tokens whose keys and values "
        "the cache holds, 46,080 bytes each:")


def times(cached_k: list[float], uncached_k: list[float]) -> inf.TokenTimes:
    contexts = np.array([16, 32, 64, 128, 256])
    return inf.TokenTimes(contexts, np.ones((2, 5)), np.ones((2, 5)),
                          np.array(cached_k), np.array(uncached_k))


def test_the_timing_sentence_follows_every_round_s_fit():
    # 256 tokens of 46,080 bytes = 11,796,480 bytes, 2.2% of 538 MB of weights; 538e6 / 46,080
    # = 11,675.3: the cache outweighs them from 11,676 tokens, past 8,192; 8 caches from
    # ceil(11,676 / 8) = 1,460
    flat = text.timing_text(times([0.05, 0.1], [0.8, 0.9]), SMOLLM2, 538_000_000, 11_676, 8)
    assert "with the cache k = 0.05 to 0.10 (nearly flat here: every k below 0.2)" in flat
    assert "A k below 1 without the cache comes from the fixed part" in flat
    assert "At 256 tokens that is 2.2% of the 538 MB of weights" in flat
    assert "the caches outweigh the weights from 1,460 tokens on" in flat
    steep = text.timing_text(times([0.1, 0.3], [1.2, 1.9]), SMOLLM2, 538_000_000, 5_000, 8)
    assert "nearly flat" not in steep and "A k below 1" not in steep
    assert "conversations at once" not in steep  # 5,000 tokens are within 8,192


def test_the_sharing_sentence_and_table_follow_the_kv_heads():
    # 1,024 tokens, batch 2, fp16: 2 · 30 · 3 · 64 · 1024 · 2 · 2 = 47.2 MB; 9 heads: 142 MB
    gqa = text.sharing_text(SMOLLM2, 1024, 2)
    assert gqa.startswith("At 1,024 tokens and a batch of 2, this model's cache takes 47.2 MB "
                          "in fp16 with its 3 KV heads, against 142 MB if each of its 9 query "
                          "heads had its own (3× more:")
    assert "nothing shared" in text.sharing_text(MHA, 1024, 2) and "12× less" in \
        text.sharing_text(MHA, 1024, 2)
    assert "which all 4 query heads read" in text.sharing_text(MQA, 1024, 2)
    # whichever branch, the sentence before the table links the entry its rows name
    assert all("#glossary-gqa)" in text.sharing_text(c, 1024, 2) for c in (SMOLLM2, MHA, MQA))
    rows = text.cache_rows(SMOLLM2, "SmolLM2", 8192, 8)
    assert [r["KV heads"] for r in rows[:3]] == [9, 3, 1]
    assert rows[1]["model"] == "SmolLM2, grouped-query (GQA), as trained"
    mistral = next(r for r in rows if r["model"].startswith("Mistral"))
    assert mistral["cache (fp16)"].endswith("✱")  # its window of 4,096 < 8,192
    note = text.published_note(SMOLLM2, 8192)
    assert "its rolling cache keeps only the last 4,096" in note and "†" in note  # Llama 2
    assert note.startswith("The published rows") and "#glossary-sliding-window)" in note
    assert "✱" not in text.published_note(SMOLLM2, 1024)
    assert "†" not in text.published_note(SMOLLM2, 1024)  # every model trained on ≥ 2,048


def test_the_kv_notice_and_practice_follow_the_heads():
    assert "3 key/value heads for 9 query heads: 1/3 of the cache" in text.kv_notice(SMOLLM2)
    assert "section 2 measures what it costs" in text.kv_notice(SMOLLM2)
    assert text.kv_notice(MQA).endswith("It was trained that way: sharing has to be learnt.")
    assert "each of its 12 heads (multi-head attention)" in text.kv_notice(MHA)
    per_token, larger, _ = text.practice(SMOLLM2)
    assert per_token["value"] == 46_080.0 and larger["value"] == 3.0
    assert text.practice(MHA)[1]["value"] == 12.0  # one KV head for all: 12 times smaller


def test_the_merge_sentence_calls_a_tenfold_rise_falling_apart():
    # 12.0 -> 6,000: 500 times as high
    apart = text.merge_text(inf.MergedResult(256, 12.0, 6000.0), SMOLLM2)
    assert "from 12.0 to 6,000.0, 500 times as high: the model falls apart" in apart
    mild = text.merge_text(inf.MergedResult(256, 12.0, 18.0), SMOLLM2)
    assert "1.5 times as high. The heads learnt different keys, and averaging" in mild


def shifted(first: float, oldest_full: float, oldest_window: float, on_sinks: float,
            sinks: int = 4) -> inf.WindowResult:
    """A window of 2 over 6 tokens, one layer; the last 2 queries (rows 4 and 5) lost token
    1. In the full-attention map rows 4 and 5 put 0.2 on themselves and 0.1 on the token
    before: the window's share is 0.3."""
    maps = np.zeros((3, 1, 6, 6))
    for row in (4, 5):
        maps[0, 0, row, row], maps[0, 0, row, row - 1] = 0.2, 0.1
    shift = inf.SinkShift(rows=2, dense_first=np.array([first]),
                          dense_oldest=np.array([oldest_full]),
                          window_oldest=np.array([oldest_window]),
                          sinks_on_sinks=np.array([on_sinks]), maps=maps)
    return inf.WindowResult(tokens=6, window_size=2, sinks=sinks, dense=10.0, window=14.0,
                            window_sinks=11.0, shift=shift)


def test_the_shift_sentence_says_where_token_1_s_weight_goes():
    # 0.6 on token 1; the oldest kept token gains 0.1: 10 points, 0.1 / 0.6 = 17% of it
    spread = text.shift_text(shifted(0.6, 0.1, 0.2, 0.5))
    assert "layer 1 puts 60% of its weight on token 1" in spread
    assert "Masked out, only 10.0 percentage points (17% of that weight) move to the oldest " \
           "token the window keeps (from 10.0% to 20.0%): the rest spreads over the window, " \
           "onto tokens that held 30% of the query's" in spread
    # the defaults' layer: 0.675 on token 1, the oldest kept token 0.2% -> 1.6%: 1.4 points,
    # 0.014 / 0.675 = 2.07% of what moved, far from half
    assert "only 1.4 percentage points (2% of that weight) move to the oldest token the " \
           "window keeps (from 0.2% to 1.6%)" in text.shift_text(
               shifted(0.675, 0.002, 0.016, 0.802))
    # nothing gained: none of it, all spread
    assert "none of it moves to the oldest token the window keeps (from 10.0% to 10.0%): it " \
           "all spreads over the window" in text.shift_text(shifted(0.6, 0.1, 0.1, 0.5))
    # 0.5 against 0.6: less than token 1 held (by 0.1, more than a tenth of 0.6), not half
    assert "they take 50% of the weight, less than the 60% token 1 held but more than half " \
           "of it: they take its place" in spread
    # 0.802 against 0.675 (the defaults' layer): more; 0.62 against 0.6 (within 0.06): about
    assert "they take 80% of the weight, more than the 68% token 1 held: they take its " \
           "place" in text.shift_text(shifted(0.675, 0.1, 0.2, 0.802))
    assert "they take 62% of the weight, about as much as the 60% token 1 held: they" in \
        text.shift_text(shifted(0.6, 0.1, 0.2, 0.62))
    moved = text.shift_text(shifted(0.6, 0.1, 0.5, 0.2))  # gains 0.4 >= 0.3: 0.4 / 0.6 = 67%
    assert "Masked out, most of it, 40.0 percentage points (67% of that weight), moves to the " \
           "oldest token the window keeps (from 10.0% to 50.0%): it takes token 1's place" in moved
    assert moved.endswith("less than half of the 60% token 1 held.")  # 0.2 < 0.3
    assert text.shift_text(shifted(0.6, 0.1, 0.5, 0.0, sinks=0)).endswith(
        "Set S above 0 to give the first tokens back.")


def test_the_window_sentences_say_how_much_the_sinks_give_back():
    result = shifted(0.6, 0.1, 0.2, 0.5)  # 10 -> 14 with the window, 11 with sinks
    # (14 − 11) / (14 − 10) = 75% in perplexity; in the loss, (ln 14 − ln 11) / (ln 14 − ln 10)
    # = 0.2412 / 0.3365 = 72%
    assert text.way_back(result) == (", 75% of the way back in perplexity (72% in the loss, "
                                     "its logarithm).")
    assert "the 1 before it: 14.0" in text.window_text(result, SMOLLM2)
    assert "RoPE still sees" in text.window_text(result, SMOLLM2)
    assert "learned position" in text.window_text(result, MHA)
    better = inf.WindowResult(6, 2, 4, 10.0, 14.0, 9.5, None)
    assert text.way_back(better) == ", as good as full attention or better."
    free = inf.WindowResult(6, 2, 4, 10.0, 9.0, 10.5, None)
    assert text.way_back(free) == ": the window alone costs nothing on this text."
    assert "section 3 measures what a sliding window costs" in text.window_notice(None)
    assert text.window_notice(result).endswith(
        "brings it to 11.0, 75% of the way back in perplexity (72% in the loss, its logarithm).")
    assert "with S = 0 no sink is kept" in text.window_notice(
        inf.WindowResult(6, 2, 0, 10.0, 14.0, 14.0, None))
    # 0.3 to 0.9: 60 percentage points, 3 times as much
    assert "get 30.0% of a query's weight with full attention and 90.0% under the window: " \
           "60.0 percentage points more, 3 times as much" in text.distance_text(4, 2, 0.3, 0.9)
    # the defaults' layer: 0.1363 to 1: 13.6% (not 14%, whose 100 / 14 = 7.14 would not
    # check), 86.4 points, 1 / 0.1363 = 7.34 times
    assert "get 13.6% of a query's weight with full attention and 100.0% under the window: " \
           "86.4 percentage points more, 7.34 times as much" in text.distance_text(
               24, 32, 0.1363, 1.0)


def test_the_memory_slider_says_m_counts_2_byte_numbers():
    # 1024 / 2 = 512 fp16 numbers in 1 KB; 1024 / 4 = 256 float32 numbers
    assert "KB of 2-byte fp16 numbers" in text.sram_label(2)
    assert "1 KB of on-chip memory holds 512 numbers of 2 bytes" in text.sram_help(2)
    assert "float32 (4 bytes a number), which would fit 256 in 1 KB" in text.sram_help(2)


def test_the_tiling_sentences_count_blocks_and_tiles():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((11, 4)) for _ in range(3))
    mask = np.tril(np.ones((11, 11), dtype=bool))
    tiled = cost.online_softmax_attention(q, k, v, 5, 3, mask=mask)
    # 11 = 2 · 5 + 1: three blocks, the last of 1; a tile at most 3 × 5 = 15 scores
    said = text.tiling_text(20, 7, 3, 11, tiled, 5, 3)
    assert "The keys arrive in 3 blocks of 5 (the last of 1); each tile holds at most " \
           "3 × 5 = 15 scores, never the whole 11 × 11 matrix (121 scores)." in said
    whole = cost.online_softmax_attention(q, k, v, 11, 11, mask=mask)
    assert "one tile is the whole 11 × 11 matrix, and nothing is saved" in \
        text.tiling_text(20, 7, 3, 11, whole, 11, 11)
    # row 0 sees key 0 only: blocks 2 and 3 are masked for it and change nothing
    rows = text.block_rows(tiled, 0)
    assert rows["keys"] == ["1–5", "6–10", "11–11"]
    assert rows["e^(m_old − m)"][0] == "—" and rows["e^(m_old − m)"][1] == "1.0000"
    assert text.rescale_step(tiled, 0) is None  # its maximum never rises after block 1


def test_a_rise_of_the_maximum_is_written_out():
    q = np.array([[1.0, 0.0]])
    k = np.array([[0.0, 0.0], [2.0, 0.0]])  # scores 0 then 2 / √2 = 1.4142
    tiled = cost.online_softmax_attention(q, k, np.eye(2), 1)
    formula, caption = text.rescale_step(tiled, 0)
    # block 2 raises m from 0 to 1.4142; ℓ' = e^(0 − 1.4142) · 1 + e^0 = 1.2431
    assert formula.startswith(r"m' = \max(0.0000,\ \max_j s_j) = 1.4142")
    assert formula.endswith("= 1.2431")
    assert caption.startswith("Block 2 raised the maximum")


def test_the_memory_sentence_reads_the_measurement():
    memory = cost.TiledMemory(ns=np.array([256, 2048]), d=64, block=128,
                              plain_peak=np.array([1.0, 34.0]) * 2**20,
                              tiled_peak=np.array([0.5, 0.75]) * 2**20,
                              plain_seconds=np.array([1.0, 2.0]),
                              tiled_seconds=np.array([3.0, 5.0]), max_difference=0.0)
    assert text.memory_text(memory, 2**20) == (
        "At n = 2,048: plain 34.0 MiB, tiled 0.75 MiB; largest difference of the outputs "
        "exactly 0. Time, tiled / plain, this run: n = 256: 3.00, n = 2048: 2.50.")
    assert text.flash_text(0.0, 3e-7, 48, 64).endswith("float32 weights times v: 3.0×10⁻⁷.")


@pytest.mark.parametrize("most, said", [
    (256, "to keep a shared server free (the command line reads up to"),
    (64, "the context GPT-2 was trained on (its learned positions stop there)."),
])
def test_the_perplexity_caption_says_why_the_text_is_cut(most, said):
    assert said in text.perplexity_caption(64, most, 256, "GPT-2", MHA)
