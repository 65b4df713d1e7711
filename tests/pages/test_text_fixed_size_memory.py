"""Lesson 13's sentences (pages/text/fixed_size_memory.py), each chosen by its numbers: given
results on either side of every threshold, as plain functions."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

from attncore import memory
from attncore.lm import LMConfig
from attncore.memory import by_hand, hybrid, leak
from pages.text import fixed_size_memory as say

SMOLLM2 = LMConfig(30, 9, 3, 576, 1536, 49152, 8192, 1e-5, 1e5)


def curve(recall, d_k=16, rule="linear") -> memory.RecallCurve:
    """A recall curve with these mean recalls (one seed) over 1, 2, 4, ... pairs."""
    recall = np.asarray(recall, dtype=float)
    counts = 2 ** np.arange(recall.size)
    return memory.RecallCurve(rule, d_k, d_k, 1.0, 1.0, 8.0, counts, np.array([0]),
                              recall[None, :], recall[None, :], np.full(recall.size, d_k * d_k))


def trained(soft, lin, pairs=(2, 4, 8)) -> SimpleNamespace:
    """What trained_text reads of a RecallResult."""
    pairs = np.array(pairs)
    return SimpleNamespace(pairs=pairs, accuracy={"softmax": np.array(soft),
                                                  "linear": np.array(lin)},
                           state_numbers={"linear": np.full(pairs.size, 512),
                                          "softmax": pairs * 72})


# --- 1 ------------------------------------------------------------------------------------

def test_the_cache_and_the_state_of_smollm2():
    r = hybrid.cache_against_state(SMOLLM2, [16, 8192])
    text = say.state_cache_text(r, "SmolLM2", 8192)
    # 2·30·3·64·4 = 46,080 bytes a token; one state per KV head: 30·3·64·64 = 368,640
    # numbers = 1,474,560 bytes = 1.47 MB
    assert "= 46,080 bytes a token" in text and "= 368,640 numbers, 1.47 MB" in text
    assert "one 64 × 64 state per KV head" in text and "share 3 states a layer" in text
    # 46,080 · 8,192 = 377,487,360 bytes = 377 MB, 256 times 1,474,560; 1,474,560 / 46,080 = 32
    assert "From 32 tokens on" in text and "it holds 377 MB, 256.0 times the states" in text
    alone = LMConfig(2, 4, 4, 32, 16, 100, 64, 1e-5, 1e5)  # each query head its own KV head
    text = say.state_cache_text(hybrid.cache_against_state(alone, [8]), "tiny", 64)
    assert "each of the 4 query heads has its own keys and values" in text


def test_the_layout_is_read_from_the_config():
    assert "12 × (3 × Gated DeltaNet + 1 full attention)" in say.layout_text(hybrid.QWEN3_NEXT)
    assert "layers 4, 8, 12, …, 48" in say.layout_text(hybrid.QWEN3_NEXT)
    odd = hybrid.HybridConfig(num_hidden_layers=10)  # full at 4 and 8, then 2 more
    assert "2 × (3 × Gated DeltaNet + 1 full attention) + 2 × Gated DeltaNet" in \
        say.layout_text(odd)


def test_the_hybrids_memory_and_what_is_left_out():
    m = hybrid.hybrid_memory(hybrid.QWEN3_NEXT, [32768, 262144])
    text = say.hybrid_text(m)
    # 2·12·2·256·2 = 24,576 bytes a token; 805,306,368 + 37,748,736 + 1,769,472 = 845 MB
    assert "= 24,576 bytes a token" in text and "= 18,874,368 numbers, take 37.7 MB" in text
    assert "at 32,768 tokens it keeps 845 MB against 3.22 GB" in text
    # 25,769,803,776 / 6,481,969,152 = 3.98
    assert "it keeps 6.48 GB against 25.8 GB with full attention in all 48 layers (4.0 times" \
        in text
    # 36 · 8,192 · 3 · 2 = 1,769,472 bytes; twice the states 75.5 MB
    assert "1.77 MB in all" in say.left_out_text(m) and "75.5 MB" in say.left_out_text(m)


# --- 2 ------------------------------------------------------------------------------------

def questions_text(questions) -> str:
    return " ".join(q["q"] + " " + q["a"] for q in questions)


def test_only_the_bare_linear_read_is_said_unsharpenable():
    text = say.by_hand_text(by_hand.worked_memory(1, 4.0))
    assert "nothing sharpens this bare linear read (no feature map, no normaliser)" in text
    notice = " ".join(say.NOTICE)
    assert "In the bare form this lesson uses" in notice and "feature map φ" in notice
    assert "nothing can sharpen" not in notice


def test_an_orthogonal_key_is_read_exactly():
    text = say.by_hand_text(by_hand.worked_memory(1, 4.0))
    assert "Linear attention reads v₂ = (0, 2) exactly" in text
    assert "Here linear attention is nearer" in text  # exact against a softmax's blur


def test_a_sharp_softmax_is_nearer_than_the_leak():
    text = say.by_hand_text(by_hand.worked_memory(0, 4.0))
    # leak 0.6 (1, 1): length 0.6·√2 = 0.849
    assert "plus a leak of 0.6 v₃, of length 0.849" in text
    assert "its weight on k₁ is 0.82" in text and "Here the softmax is nearer" in text


def test_a_blunt_softmax_is_farther_and_equal_reads_are_said_so():
    assert "Here linear attention is nearer" in say.by_hand_text(by_hand.worked_memory(0, 1.0))
    w = by_hand.worked_memory(0, 4.0)
    same = dataclasses.replace(w, softmax_read=w.linear_read)
    assert "Here the two are as near." in say.by_hand_text(same)


def test_the_written_arithmetic_uses_equals_only_where_it_is_exact():
    w = by_hand.worked_memory(0, 4.0)
    assert r"\begin{bmatrix}2.6 & 0 & 0.8 \\ 0.6 & 2 & 0.8\end{bmatrix}" in say.write_latex(w, 2)
    assert r"= \begin{bmatrix}2.6 \\ 0.6\end{bmatrix}" in say.linear_read_latex(w)[1]
    lines = say.softmax_read_latex(w)
    # e^4 = 54.598150...: rounded, so ≈
    assert r"e^{c\,k_t \cdot q} \approx (54.598, 1, 11.023)" in lines[1]


# --- 3 ------------------------------------------------------------------------------------

def test_holding_the_pairs_is_said_from_the_first_count_below_the_threshold():
    assert say.holds_up_to(curve([1, 1, 0.95, 0.5])) == 4
    assert say.holds_up_to(curve([1, 1, 1, 0.9])) == 8  # 90% counts as holding
    assert say.holds_up_to(curve([0.5, 1, 1, 1])) is None
    text = say.recall_text({"softmax": curve([1, 1, 1, 1], rule="softmax"),
                            "linear": curve([1, 1, 0.95, 0.5]),
                            "delta": curve([0.0, 0, 0, 0], rule="delta")})
    assert "softmax attention recalls at least 90% at every count up to 8 (100% at 8)" in text
    assert "linear attention recalls at least 90% up to 4 pairs and 50% at 8" in text
    assert "the delta rule recalls under 90% from 1 pair on (0% at 8)" in text
    assert "n (16 + 16) numbers, 256 at 8 pairs" in text


def test_the_delta_rule_against_linear_attention_at_d_k_pairs():
    def with_beta(recall, beta):
        return dataclasses.replace(curve(recall, d_k=4, rule="delta"), beta=beta)

    linear = curve([1, 1, 1, 0.8], d_k=4)  # counts 1, 2, 4, 8: d_k = 4 is the third
    less = say.recall_text({"linear": linear, "delta": with_beta([1, 1, 0.6, 0.2], 1.0)})
    assert "At n = d_k = 4 pairs the delta rule (β = 1) recalls 60% against linear " \
           "attention's 100%: each of its writes first clears" in less
    assert "writes nothing at all" in say.recall_text(
        {"linear": linear, "delta": with_beta([0, 0, 0, 0], 0.0)})
    same = say.recall_text({"linear": linear, "delta": with_beta([1, 1, 1, 1], 0.5)})
    assert "recalls 100% against linear attention's 100%." in same
    assert "clears" not in same
    assert "At n = d_k" not in say.recall_text({"linear": curve([1, 1, 1], d_k=16),
                                                "delta": curve([1, 1, 1], d_k=16)})


def test_the_leak_of_one_read_and_of_all_reads():
    text = say.leak_text(leak.leak_curve(16, [1, 2, 4, 8, 16, 32]), leak.first_read(16, 32), 32)
    assert "Reading k₁ after n = 32 pairs, the other 31 keys' overlaps" in text
    assert "its root-mean-square size √((n − 1)/d_k) reaches 1 at n = d_k + 1 = 17" in text
    assert "expected" not in text
    lone = say.leak_text(leak.leak_curve(64, [1, 2]), leak.first_read(64, 1), 1)
    assert "gives v₁ exactly" in lone
    assert "stays shorter than the value at every count measured, up to 2" in lone


# --- 4 ------------------------------------------------------------------------------------

@pytest.mark.parametrize("alpha, words", [
    (1.0, "With α = 1 gated delta is the delta rule"),
    (0.5, "is kept at 0.25 = α² of it"),  # 0.5² = 0.25
    (0.0, "is forgotten altogether"),
])
def test_the_key_written_twice(alpha, words):
    w = {rule: memory.write_twice(rule, alpha=alpha) for rule in memory.RULES}
    text = say.twice_text(w, alpha)
    assert "linear attention reads 1.00 v_old + 1.00 v_new" in text
    assert "reads 0.00 v_old + 1.00 v_new" in text  # the delta rule at β = 1
    # the scale is said, as the table's row says it: its read at k_other depends on it
    assert (f"Softmax attention (its scores times {memory.SOFTMAX_SCALE:g}, as in section 3) "
            "reads 0.50 v_old + 0.50 v_new") in text
    assert words in text


# --- 5 ------------------------------------------------------------------------------------

def test_the_trained_sentences_follow_the_test():
    text = say.trained_text(trained([1.0, 1.0, 0.99], [0.9, 0.6, 0.3]))
    assert "With 2 pairs the softmax model recalls 100% and the linear one 90%" in text
    assert "falls at every step up" in text and "ahead at every number of pairs" in text
    assert "keeps 512 numbers" in text and "keeps 576 at 8 pairs" in text  # 8 · 72
    # 576 / 512 = 1.125: the cache has more room, and the text says so
    assert "576 at 8 pairs, 1.1 times as many" in text and "recall needs room" in text
    small = say.trained_text(trained([1.0, 1.0, 0.99], [0.9, 0.6, 0.3], pairs=(2, 4, 7)))
    assert "keeps 504 at 7 pairs, no more than the state." in small  # 7 · 72 = 504 <= 512
    assert "recall needs room" not in small
    flat = say.trained_text(trained([0.5, 0.4, 0.6], [0.5, 0.6, 0.6]))
    assert "falls at every step" not in flat and "ahead at every" not in flat
    assert say.trained_notice(None) is None
    assert "the gap hybrids close" in say.trained_notice(trained([1, 1, 1], [1, 0.5, 0.2]))
    assert "not ahead; train longer" in say.trained_notice(trained([1, 1, 0.2], [1, 1, 0.3]))


def test_the_conclusion_and_the_practice_answers_use_the_config():
    text = say.conclusion(hybrid.QWEN3_NEXT)
    assert "12 of its 48 layers (25%" in text and "its 36 Gated DeltaNet layers" in text
    assert "Recall needs room" in text and "Arora et al. 2023, 2024" in text
    # softmax reads are not exact (a weight of 0.82 on k₁): the full layers keep every pair
    assert "those layers keep every pair" in text and "recall exactly" not in text
    assert "multi-head latent attention (MLA)" in text and "Kimi Delta Attention" in text
    assert "expected" not in questions_text(say.practice(hybrid.QWEN3_NEXT))
    assert "root-mean-square" in say.practice(hybrid.QWEN3_NEXT)[3]["q"]
    questions = say.practice(hybrid.QWEN3_NEXT)
    # 2 · 12 · 2 · 256 · 262,144 · 2 = 6,442,450,944 bytes
    assert questions[0]["value"] == pytest.approx(6.442450944)
    assert questions[1]["value"] == 128 * 128
    assert questions[3]["value"] == 17
