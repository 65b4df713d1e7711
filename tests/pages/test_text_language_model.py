"""Lesson 10's sentences (pages/text/language_model.py) as plain functions of results made
up here, each chosen so that one branch of a sentence must be taken; the expected words and
numbers are worked out by hand in the comments."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attncore.lm import InductionTest, LMConfig, Sampling
from attncore.lm.worked import Turn, WorkedHead
from pages.text import language_model as text

SMOLLM2 = LMConfig(n_layers=30, n_heads=9, n_kv_heads=3, d_model=576, d_ff=1536,
                   vocab_size=49152, context_length=8192, norm_eps=1e-5, rope_base=1e5)
GPT2 = LMConfig(n_layers=12, n_heads=12, n_kv_heads=12, d_model=768, d_ff=3072,
                vocab_size=50257, context_length=1024, norm_eps=1e-5, rope_base=1e4,
                family="gpt2", norm="layer", positions="learned", mlp="gelu", biases=True,
                qkv_bias=True)
ONE_KV = LMConfig(n_layers=4, n_heads=4, n_kv_heads=1, d_model=64, d_ff=128, vocab_size=300,
                  context_length=64, norm_eps=1e-6, rope_base=1e4)
TOKENS = ["The", "␣capital", "␣of", "␣France", "␣is"]


def test_heads_sharing_keys_are_described_for_each_kind_of_attention():
    # 9 query heads over 3 KV heads: groups of 3, H1–H3, H4–H6, H7–H9
    gqa = text.sharing_text(SMOLLM2)
    assert gqa.startswith("9 query heads share 3 key/value heads (KV head 1 serves H1–H3; "
                          "KV head 2 serves H4–H6; KV head 3 serves H7–H9:")
    assert "Each of the 12 heads has its own keys and values" in text.sharing_text(GPT2)
    assert text.sharing_text(ONE_KV).startswith("All 4 query heads share one key/value head")


def test_a_sink_is_named_only_at_twice_an_even_spread():
    # 5 tokens: rows 2..5 see 2..5 tokens, an even spread gives the first token
    # (1/2 + 1/3 + 1/4 + 1/5) / 4 = 1.2833 / 4 = 0.3208, "32%"
    assert text.even_share(5) == pytest.approx((1 / 2 + 1 / 3 + 1 / 4 + 1 / 5) / 4)
    prev = np.array([0.25, 0.1])
    sink = text.sink_text(np.array([0.3, 0.7]), prev, TOKENS)  # 0.7 >= 2 × 0.3208
    assert "takes up to 70% of a layer's attention (layer 2), against 32% if" in sink
    assert "at least twice that, an [attention sink]" in sink
    assert sink.endswith("Layer 1's heads put 25% of theirs on the previous token (an even "
                         "spread would give it 32% too).")
    weak = text.sink_text(np.array([0.6, 0.5]), prev, TOKENS)  # 0.6 < 0.6417
    assert "(layer 1)" in weak and "less than twice that, too little to call it a sink" in weak
    assert text.sink_text(np.array([1.0]), np.array([0.0]), ["Hello"]) == text.ONE_TOKEN


def test_the_heads_over_half_on_the_first_token_are_counted():
    first = np.array([[0.9, 0.2, 0.51], [0.5, 0.7, 0.1]])  # 0.9, 0.51, 0.7: 3 of 6 (0.5 is not)
    said = text.sinks_notice(first, TOKENS)
    assert said.startswith("On this prompt 3 of the 6 heads put more than half of their "
                           "weight on the first token “The” (an even spread would give it 32%")
    assert text.sinks_notice(first, ["Hello"]) == text.ONE_TOKEN


def test_the_cache_note_follows_the_number_of_kv_heads():
    assert "3 K/V heads take 1/3 of the cache that 9 would" in text.kv_notice(SMOLLM2)
    assert "Each of the 12 heads keeps its own keys and values" in text.kv_notice(GPT2)


def induction(first: float, repeat: float, top_off: float, random_off: list[float],
              top_heads=((17, 3), (18, 5), (18, 1))) -> InductionTest:
    """A test of segment 4 whose mean losses are the numbers given: each token of copy 1
    (columns 0..2) costs ``first``, of copy 2 (columns 4..6) ``repeat`` (column 3 is s₁
    again, which no test reads)."""
    def losses(second: float) -> np.ndarray:
        return np.array([[first] * 3 + [9.0] + [second] * 3])

    return InductionTest(
        seed=2, segment=4, ids=np.zeros((1, 8), dtype=int), scores=np.zeros((30, 9)),
        top_heads=list(top_heads), random_draws=[], losses=losses(repeat),
        losses_top_off=losses(top_off),
        losses_random_off=np.stack([losses(r) for r in random_off]),
        best_attention=np.zeros((8, 8)))


def test_the_induction_notice_says_what_the_test_found():
    assert "press its button" in text.induction_notice(None, 30)
    # copying saves 10 − 2 = 8 nats; the top heads off take back (6 − 2) / 8 = 50%, the worst
    # random draw (3 − 2) / 8 = 12.5%, written "13%" (a half is rounded up)
    said = text.induction_notice(induction(10.0, 2.0, 6.0, [2.5, 3.0]), 30)
    assert said.startswith("In section 4's test (seed 2, 4 random tokens written twice) the "
                           "3 strongest induction heads sit in layers 18 and 19 of 30.")
    assert "takes back 50% of what copying saved on the second copy (6.0 nats a token " \
           "instead of 2.0)" in said
    # two random draws were made (random_off has two entries)
    assert said.endswith("random heads of those layers, in 2 random draws, take back at "
                         "most 13%.")
    # random heads that cost nothing: the second copy is no dearer with them off
    nothing = text.induction_notice(induction(10.0, 2.0, 6.0, [1.5, 2.0]), 30)
    assert nothing.endswith("take back nothing (the second copy costs no more with them off).")
    one_layer = text.induction_notice(induction(10.0, 2.0, 6.0, [3.0], ((4, 0),)), 30)
    assert "sit in layer 5 of 30" in one_layer and "in 1 random draw, take" in one_layer
    # no saving at all: the model did not copy
    assert text.induction_notice(induction(5.0, 5.0, 6.0, [5.0]), 30).endswith(
        "the second copy costs no less than the first: the model did not copy.")


def test_the_map_caption_gives_the_share_of_the_map_drawn():
    # segment 4, two sequences; the map drawn (sequence 1) puts, from each second-copy
    # query t = 4..7, weight on key t − 3: 0.9, 0.7, 0.8, 0.6, mean 3.0 / 4 = 75%; the
    # ranking's score (over both sequences) is 0.5, "50%"
    a = np.zeros((8, 8))
    a[[4, 5, 6, 7], [1, 2, 3, 4]] = [0.9, 0.7, 0.8, 0.6]
    scores = np.zeros((30, 9))
    scores[17, 3] = 0.5
    test = dataclasses.replace(induction(10.0, 2.0, 6.0, [3.0]), ids=np.zeros((2, 8), int),
                               scores=scores, best_attention=a)
    assert test.best_map_score == pytest.approx(0.75)
    assert text.induction_map_text(test) == (
        "Layer 18, head 4 on the first sequence: on average 75% of a second-copy token's "
        "weight goes to the token that followed its first occurrence (50% over the 2 "
        "sequences). ")
    assert text.strongest_text(test).endswith(
        "The best puts 50% of its attention where an induction head should, on average over "
        "the second copies of the 2 sequences.")


def test_the_loss_sentence_compares_with_an_even_guess_and_with_half():
    # an even guess among 49,152 tokens costs ln 49,152 = 10.8 nats
    copies = text.induction_loss_text(induction(12.0, 2.0, 6.0, [2.5, 3.0]), 49152, 5)
    assert "would cost ln 49,152 = 10.8: the model gives random tokens less probability" in \
        copies
    assert "2.0 the second time, less than half: the model copies." in copies
    assert copies.endswith("with 5 random heads of the same layers off, 2.5 to 3.0.")
    weak = text.induction_loss_text(induction(10.0, 6.0, 7.0, [6.5]), 49152, 5)
    assert "= 10.8)" in weak and "not less than half" in weak


def test_the_next_token_sentence_counts_what_the_filters_leave():
    probs = np.array([0.5, 0.3, 0.15, 0.05])
    drawn = np.array([0.625, 0.375, 0.0, 0.0])  # top-k 2: 0.5 / 0.8 and 0.3 / 0.8
    said = text.next_token_text("␣Paris", 0, probs, drawn, Sampling(1.0, top_k=2, top_p=1.0))
    assert said == ("Most likely next token: **␣Paris** (id 0) with probability 0.500. With "
                    "τ = 1, top-k 2 and top-p 1, 2 of the 4 tokens can be drawn; the most "
                    "likely now has probability 0.625.")
    assert "top-k off" in text.next_token_text("a", 0, probs, probs, Sampling(0.8, 0, 0.95))


def test_the_causal_check_counts_the_weights_above_the_diagonal():
    maps = np.tile(np.tril(np.full((3, 3), 0.5)), (2, 2, 1, 1))  # 2 layers × 2 heads, T = 3
    # each map holds 3 weights above the diagonal: 4 maps, 12 weights
    assert "The 4 maps hold 12 weights above the diagonal" in text.upper_text(maps)
    assert "every one is exactly 0" in text.upper_text(maps)
    maps[1, 0, 0, 2] = 1e-9
    assert text.upper_text(maps).endswith("1 of them are not 0: the mask leaks.")


def test_a_changed_token_leaves_the_earlier_logits_bit_for_bit():
    logits = np.arange(12.0).reshape(3, 4)
    changed = logits.copy()
    changed[2] += [0.5, -2.0, 0.0, 1.0]  # position 3 changed: up to 2
    said = text.leakage_text(3, "␣of", "␣blue", logits, changed)
    assert said == ("Token 3 “␣of” becomes “␣blue”. The logits of positions 1 to 2 (all 2 × 4 "
                    "of them) are **identical, bit for bit** (largest difference exactly 0); "
                    "from position 3 on they change by up to 2.")
    changed[0, 0] += 1e-6
    assert "**not identical** (largest difference 1.0×10⁻⁶)" in \
        text.leakage_text(3, "␣of", "␣blue", logits, changed)


def worked(rope: bool, norm: str = "rms") -> WorkedHead:
    """Head 4 (KV head 2) of layer 2, query 5 on key 2, with d_k = 4, made up: q = (1, 0, 2, 0)
    and the keys give scores 1 and 0 against m = 1, so e^(s − m) = (e^0, e^−1) = (1, 0.36788),
    weight of key 2 = 0.36788 / 1.36788 = 0.268941 (written with 4 decimals, 0.3679 / 1.3679
    = 0.268952 would round to 0.2690, not to the weight's 0.2689)."""
    q = np.array([1.0, 0.0, 2.0, 0.0])
    keys = np.array([[2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])  # q·k = 2 and 0, / √4
    turn = Turn(position=4, angle=4 * 0.5, before=(1.0, 0.0), after=(np.cos(2.0), np.sin(2.0)))
    return WorkedHead(
        layer=1, head=3, kv_head=1, query=1, key=1, norm=norm, mean=0.0 if norm == "rms"
        else 0.25, root=1.5, q_raw=q, k_raw=keys[1], qkv_bias=not rope, q=q, keys=keys,
        pair=1 if rope else None, pair_index=(2, 3) if rope else None, rope_factor=1.0,
        theta=0.5 if rope else None, q_turn=turn if rope else None,
        k_turn=turn if rope else None, check=0.0 if rope else 2e-7,
        scores=np.array([1.0, 0.0]), exps=np.exp(np.array([1.0, 0.0]) - 1.0),
        model_weight=0.26894)


def test_the_head_by_hand_follows_the_model_s_norm_and_positions():
    rms, _ = text.norm_step(worked(True), SMOLLM2, "␣capital")
    assert "RMSNorm" in rms and "entering layer 2 has 576 numbers" in rms
    assert "(with ε = 1×10⁻⁵ added under the root) is 1.5000" in rms
    layer, formula = text.norm_step(worked(False, "layer"), GPT2, "␣capital")
    assert "μ = 0.2500" in layer and r"\odot g + b" in formula
    # RoPE on adjacent pairs: pair 1 turns numbers 2 and 3 by 0.5 rad a position; the key
    # at position 4 turns by 4 × 0.5 = 2 rad
    said, turns, checked = text.positions_step(worked(True), SMOLLM2, "SmolLM2")
    assert "pair i = 1, numbers 2 and 3, turns by θ = 0.5 rad per position" in said
    assert "KV head 2 (which heads 4–6 all read)" in said and "b_Q" not in said
    assert r"\phi = 4 \times 0.5 = 2" in turns
    assert checked == "The rotated pair matches the model's q and k to exactly 0."
    said, turns, checked = text.positions_step(worked(False), GPT2, "GPT-2")
    assert turns is None and "Nothing is turned: GPT-2 learned one vector for each of its " \
        "1,024 positions" in said and "x̂ W_Q + b_Q" in said
    assert checked == "q and k computed here match the model's, all 4 numbers of each, to " \
        "2.0×10⁻⁷."
    score, formula = text.score_step(worked(True))
    assert "Query 2 may look at keys 1 to 2 only" in score and "m = 1" in score
    assert r"\frac{0}{2} = 0" in formula  # q·k = 0, √4 = 2: exact, so "="
    # 4 decimals would not reproduce 0.2689 (see worked): 5 do, and the rounded sides are
    # joined by ≈
    assert r"\approx \frac{0.36788}{1.36788} \approx 0.2689" in formula
    alone = dataclasses.replace(worked(True), query=0, key=0, keys=np.array([[2.0, 0, 0, 0]]),
                                scores=np.array([1.0]), exps=np.array([1.0]))
    assert r"= \frac{1}{1} = 1" in text.score_step(alone)[1]  # one key: e^0 / e^0, exact
    # the model's 0.26894 against 0.268941...: a difference of about 1.4×10⁻⁶
    steps = text.worked_steps(worked(True), SMOLLM2, "␣capital", "SmolLM2")
    assert [formula is None for _, formula in steps] == [False, False, False, True]
    assert steps[-1][0].startswith("The model's own weight: 0.268940 (difference 1.4×10⁻⁶")


def test_the_decoder_formula_and_table_read_the_config():
    smol = text.decoder_formula(SMOLLM2)  # SwiGLU, RoPE: two parts, one a line
    assert smol.startswith(r"\begin{gathered}x \leftarrow x + \mathrm{Attn}(\mathrm{RMSNorm}(x))")
    assert smol.count(r" \\ ") == 1 and r"E^\top" in smol
    gpt2 = text.decoder_formula(GPT2)  # learned positions: three parts, one a line
    assert gpt2.startswith(r"\begin{gathered}x_t = E[\text{token}_t] + P[t] \\")
    minilm = {"hidden_size": 384, "num_attention_heads": 12, "max_position_embeddings": 512,
              "intermediate_size": 1536, "num_hidden_layers": 6, "vocab_size": 30522}
    table = text.encoder_decoder_table(SMOLLM2, "SmolLM2", True, minilm)
    assert "| heads | 12 heads of 32, each with its own K and V |" in table  # 384 / 12
    assert "| layers, d_model | 6, 384 | 30, 576 |" in table
    assert "byte-level BPE, 49,152 pieces" in table
    assert "SentencePiece BPE" in text.encoder_decoder_table(SMOLLM2, "X", False, minilm)


def test_the_practice_answers_follow_the_heads():
    group, scale, _ = text.practice(SMOLLM2)
    assert group["value"] == 3.0 and group["a"].startswith("9 / 3 = 3: query heads 1–3 read")
    assert scale["value"] == 8.0 and "q·k / √64 variance 1" in scale["a"]
    assert "all 4 query heads read the one" in text.practice(ONE_KV)[0]["a"]
    assert "nothing is shared" in text.practice(GPT2)[0]["a"]


def test_the_head_map_s_text_names_the_highest_and_lowest_head():
    values = np.array([[0.1, 0.9], [0.05, 0.45]])  # (layers, heads); mean 1.5 / 4 = 0.375
    said = text.head_map_text(values, "Induction score")
    assert said == ("Induction score of all 4 heads (rows: head, columns: layer): highest "
                    "0.9 at layer 1, head 2; lowest 0.05 at layer 2, head 1; mean 0.375.")


def test_the_activation_under_the_formula_is_the_models_own():
    # SmolLM2's SwiGLU uses SiLU; GPT-2's GELU is its tanh approximation
    # (attncore.lm.decoder), and the note must give that form, not only z·Φ(z).
    smol = text.formula_note(SMOLLM2)
    assert smol.startswith("x̂ is the stream entering the feed-forward half, normalised by "
                           "that half's own RMSNorm")
    assert "SiLU(z) = z·σ(z) = z / (1 + e^(−z))" in smol
    gelu = text.formula_note(GPT2)
    assert "own LayerNorm" in gelu and "GELU(z) = z·Φ(z)" in gelu and "0.044715z³" in gelu
