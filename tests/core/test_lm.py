"""Lessons 10 and 11's language model: the loader's checks, the tokenizer on hand-checked
strings, one head recomputed with plain loops, the KV cache, the causal mask, sampling.

The references never use attncore.lm's own arithmetic: the raw tensors are read from
the GGUF with ``gguf`` in the file's own (out, in) layout, and one head is recomputed
token by token with math.sqrt, math.cos, math.exp and plain sums. Tests that need the
model package are skipped, saying so, only when it is not installed.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from test_weight_cache import maps_a_file

from attncore import _installed, lm
from attncore.lm import config, decoder, files, generation, heads, tokens
from attncore.lm.interventions import Interventions
from tests.model_marks import SMOLLM_GGUF as GGUF
from tests.model_marks import needs_smollm


@pytest.fixture(scope="module")
def m() -> lm.LanguageModel:
    return lm.model()


@pytest.fixture(scope="module")
def raw() -> dict[str, np.ndarray]:
    """The GGUF's tensors dequantised by gguf itself, as stored: matrices (out, in)."""
    from gguf import GGUFReader
    from gguf.quants import dequantize

    reader = GGUFReader(GGUF)
    wanted = {"token_embd.weight", "blk.2.attn_norm.weight", "blk.2.attn_q.weight",
              "blk.2.attn_k.weight"}
    return {t.name: dequantize(t.data, t.tensor_type) for t in reader.tensors
            if t.name in wanted}


# ---- the loader ---------------------------------------------------------------------------

def test_a_missing_package_names_the_install_command(monkeypatch):
    monkeypatch.setattr(_installed.importlib.util, "find_spec", lambda name: None)

    def no_distribution(name):
        raise _installed.importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(_installed.importlib.metadata, "distribution", no_distribution)
    with pytest.raises(files.ModelNotInstalledError, match="requirements-model.txt"):
        files.locate_gguf()


def test_a_file_with_another_hash_is_refused(tmp_path):
    fake = tmp_path / files.GGUF_NAME
    fake.write_bytes(b"GGUF not really")
    with pytest.raises(files.ModelFilesError, match="not the pinned model") as caught:
        files.check_gguf(fake)
    # the message gives the file's actual hash, computed here a second way
    import hashlib
    assert hashlib.sha256(b"GGUF not really").hexdigest() in str(caught.value)


@needs_smollm
def test_the_weights_are_memory_mapped_read_only_from_the_cache(m):
    for name, a in m.weights.arrays().items():
        assert maps_a_file(a), name
        assert not a.flags.writeable and not a.flags.owndata, name
        assert a.dtype == np.float32, name
    assert np.array_equal(m.weights.output, m.weights.token_embd.T)  # tied
    assert m.cache_dir.name.endswith(files.GGUF_SHA256[:16])
    # the sum of the shapes' products, times 4 bytes; a token reads all but the embedding
    sizes = [math.prod(s) for s in config.expected_shapes(m.config).values()]
    assert m.weights.nbytes == 4 * sum(sizes)
    assert m.weights.bytes_per_token == 4 * (sum(sizes) - 49152 * 576)


@needs_smollm
def test_a_restart_reads_the_cache_without_dequantising(m):
    told = []
    again = files.load_model(cache=m.cache_dir.parent, progress=lambda f, what: told.append(what))
    assert told == []  # a warm cache reports no work
    assert np.array_equal(again.weights.attn_norm, m.weights.attn_norm)


@needs_smollm
def test_a_cache_for_another_hash_or_missing_a_file_is_not_used(m, tmp_path):
    assert files._read_cache(m.cache_dir, "0" * 64) is None
    partial = tmp_path / "partial"
    partial.mkdir()
    (partial / "meta.json").write_text((m.cache_dir / "meta.json").read_text())
    assert files._read_cache(partial, m.sha256) is None


@needs_smollm
def test_the_dequantised_weights_are_the_gguf_s_transposed(m, raw):
    # the cache holds (in, out); gguf gives (out, in)
    d, H, KV, d_k = 576, 9, 3, 64
    w = m.weights.attn_qkv[2]  # (d, (H + 2 KV) d_k)
    assert np.array_equal(w[:, : H * d_k], raw["blk.2.attn_q.weight"].T)
    assert np.array_equal(w[:, H * d_k: (H + KV) * d_k], raw["blk.2.attn_k.weight"].T)
    assert np.array_equal(m.weights.token_embd, raw["token_embd.weight"])
    assert w.shape == (d, (H + 2 * KV) * d_k)


@needs_smollm
def test_the_config_is_the_gguf_s(m):
    c = m.config
    assert (c.n_layers, c.n_heads, c.n_kv_heads, c.d_model, c.d_ff) == (30, 9, 3, 576, 1536)
    assert c.d_head == 576 // 9 == 64
    assert [c.kv_head_of(h) for h in range(9)] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert c.rope_base == 1e5
    assert abs(c.norm_eps - 1e-5) < 1e-12


# ---- the tokenizer ------------------------------------------------------------------------

@needs_smollm
def test_the_tokenizer_on_hand_checked_strings(m):
    # ids from the issue, checked against the model's own tokenizer (tokenizer.json of
    # HuggingFaceTB/SmolLM2-135M-Instruct, run by transformers)
    assert lm.encode(m, "The cat sat on the").tolist() == [504, 2644, 2643, 335, 260]
    # digits one by one (Digits(individual_digits=True)): "2026" is 4 tokens
    assert lm.pieces(m, lm.encode(m, "2026")) == ["2", "0", "2", "6"]
    # control tokens are matched whole, ids from the GGUF's own list
    assert lm.encode(m, "<|im_start|>user<|im_end|>").tolist()[0] == 1
    assert lm.encode(m, "<|im_start|>user<|im_end|>").tolist()[-1] == 2
    assert lm.pieces(m, [1]) == ["<|im_start|>"]


@needs_smollm
@pytest.mark.parametrize("text", ["Ünïcødé 你好 🙂", "<script>alert(1)</script>", "a\n\tb  c",
                                  "1e300 nan -inf"])
def test_text_comes_back_from_its_ids(m, text):
    assert lm.decode(m, lm.encode(m, text)) == text


def test_readable_pieces():
    # GPT-2's table: byte 0x20 (space) is the 33rd byte that is moved, to chr(256 + 32) = "Ġ";
    # the newline 0x0A the 11th, to chr(256 + 10) = "Ċ"
    assert tokens.piece_bytes("Ġcat") == b" cat"
    assert tokens.piece_bytes("Ċ") == b"\n"
    assert tokens.readable("Ġcat") == "␣cat"
    assert tokens.readable("ĊĠ") == "↵␣"
    # 🙂 is F0 9F 99 82 in UTF-8; its first two bytes alone are not a character
    first_two = "".join(c for c, b in zip("ðŁ", b"\xf0\x9f", strict=True))
    assert tokens.piece_bytes(first_two) == b"\xf0\x9f"
    assert tokens.readable(first_two) == "\\xf0\\x9f"
    assert tokens.readable("<|im_end|>", special=True) == "<|im_end|>"


@needs_smollm
def test_the_chat_template_wraps_one_user_message(m):
    text = lm.chat_prompt(m, "Hi <b>")
    assert text.startswith("<|im_start|>system\n")
    assert text.endswith("<|im_start|>user\nHi <b><|im_end|>\n<|im_start|>assistant\n")


# ---- the decoder --------------------------------------------------------------------------

def test_rope_turns_each_adjacent_pair_and_scores_depend_on_the_offset():
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 8)).astype(np.float32)
    cos, sin = decoder.rope_angles(np.arange(12), 8, 1e4)
    x = np.tile(q, (12, 1))
    turned = decoder.rope(x, cos, sin)
    # a rotation keeps each pair's length
    pairs = lambda a: np.hypot(a[..., 0::2], a[..., 1::2])  # noqa: E731
    assert np.allclose(pairs(turned), pairs(x), atol=1e-6)
    # pair 0 turns by the position itself (theta_0 = base^0 = 1): at p = 1, by 1 radian
    c, s = math.cos(1.0), math.sin(1.0)
    assert np.allclose(turned[1, :2], [q[0] * c - q[1] * s, q[0] * s + q[1] * c], atol=1e-6)
    # q at p and k at p' score the same for every p with the same offset p - p'
    kk = decoder.rope(np.tile(k, (12, 1)), cos, sin)
    scores = [float(turned[p] @ kk[p - 3]) for p in range(3, 12)]
    assert np.allclose(scores, scores[0], atol=1e-5)


def test_rms_norm_by_hand():
    x = np.array([[3.0, 4.0]], dtype=np.float32)
    # mean of squares (9 + 16) / 2 = 12.5, root 3.5355...; with gain (1, 2)
    out = decoder.rms_norm(x, np.array([1.0, 2.0], np.float32), eps=0.0)
    assert np.allclose(out, [[3 / math.sqrt(12.5), 8 / math.sqrt(12.5)]], atol=1e-6)
    assert out.dtype == np.float32


def test_grouped_heads_read_their_kv_head_as_repeat_kv_says():
    """The attention stacks a group's query heads as rows of one product per KV head;
    the textbook form copies each KV head to its group (repeat_kv) and takes one product
    per query head: the same weights."""
    rng = np.random.default_rng(2)
    cfg = files.LMConfig(n_layers=1, n_heads=6, n_kv_heads=2, d_model=24, d_ff=8,
                         vocab_size=5, context_length=16, norm_eps=1e-5, rope_base=1e4)
    T, d = 5, 24
    w = files.LMWeights(token_embd=np.zeros((5, d), np.float32),
                        output=np.zeros((d, 5), np.float32),
                        attn_norm=np.ones((1, d), np.float32),
                        attn_qkv=rng.normal(size=(1, d, (6 + 4) * 4)).astype(np.float32),
                        attn_output=np.eye(d, dtype=np.float32)[None],
                        ffn_norm=np.ones((1, d), np.float32),
                        ffn_gate_up=np.zeros((1, d, 16), np.float32),
                        ffn_down=np.zeros((1, 8, d), np.float32),
                        output_norm=np.ones(d, np.float32))
    x = rng.normal(size=(T, d)).astype(np.float32)
    cos, sin = decoder.rope_angles(np.arange(T), 4, 1e4)
    a = decoder.attention(x, 0, w, cfg, cos, sin, decoder.causal_mask(T, T))
    textbook = decoder.masked_softmax(
        a["q"] @ decoder.repeat_kv(a["k"], 3).swapaxes(-1, -2) / np.float32(2),  # √4 = 2
        decoder.causal_mask(T, T))
    assert np.allclose(a["weights"], textbook, atol=1e-6)
    assert np.allclose(a["output"], (textbook @ decoder.repeat_kv(a["v"], 3)).swapaxes(0, 1)
                       .reshape(T, d), atol=1e-5)


def test_the_masked_softmax_matches_the_core_softmax():
    from attncore.softmax import softmax

    rng = np.random.default_rng(1)
    s = rng.standard_normal((3, 5, 5)).astype(np.float32)
    mask = decoder.causal_mask(5, 5)
    mine = decoder.masked_softmax(s, mask)
    assert np.allclose(mine, softmax(s.astype(np.float64), mask=mask), atol=1e-6)
    assert np.all(mine[:, ~mask] == 0)
    # the core's policy for a row with no allowed key: all zero, never NaN
    none = decoder.masked_softmax(s[0], np.zeros((5, 5), bool))
    assert np.array_equal(none, np.zeros((5, 5), np.float32))


@needs_smollm
def test_one_head_with_plain_loops(m, raw):
    """Layer 3, head 5 (KV head 2) of "The cat sat on the mat", from the raw GGUF tensors:
    RMSNorm, q and k, RoPE on adjacent pairs, q·k/8 and the causal softmax, by loops."""
    trace = lm.run("The cat sat on the mat")
    layer, head = 2, 4
    kv = head // 3
    x = trace.hidden_states[layer].astype(np.float64)  # (T, d), the stream entering layer 3
    gain = raw["blk.2.attn_norm.weight"].astype(np.float64)
    w_q = raw["blk.2.attn_q.weight"].astype(np.float64)[head * 64:(head + 1) * 64]  # (64, d)
    w_k = raw["blk.2.attn_k.weight"].astype(np.float64)[kv * 64:(kv + 1) * 64]
    T = len(trace.ids)

    def normed(row):
        rms = math.sqrt(sum(v * v for v in row) / len(row) + 1e-5)
        return [v / rms * g for v, g in zip(row, gain, strict=True)]

    def turned(vec, pos):
        out = list(vec)
        for i in range(32):
            a = pos * 1e5 ** (-2 * i / 64)
            out[2 * i] = vec[2 * i] * math.cos(a) - vec[2 * i + 1] * math.sin(a)
            out[2 * i + 1] = vec[2 * i] * math.sin(a) + vec[2 * i + 1] * math.cos(a)
        return out

    qs = [turned([sum(a * b for a, b in zip(r, normed(x[t]), strict=True)) for r in w_q], t)
          for t in range(T)]
    ks = [turned([sum(a * b for a, b in zip(r, normed(x[t]), strict=True)) for r in w_k], t)
          for t in range(T)]
    for i in range(T):
        s = [sum(a * b for a, b in zip(qs[i], ks[j], strict=True)) / 8 for j in range(i + 1)]
        top = max(s)
        e = [math.exp(v - top) for v in s]
        expected = [v / sum(e) for v in e] + [0.0] * (T - i - 1)
        assert np.allclose(trace.attentions[layer, head, i], expected, atol=2e-5), i


@needs_smollm
def test_the_residual_stream_stays_float32(m):
    """NumPy 2 turns float32 into float64 at a float64 scalar; one would cost every later
    product a conversion of a whole weight matrix."""
    trace = lm.run("The cat sat")
    for name in ("hidden_states", "q", "k", "v", "attentions", "logits", "ffn_output"):
        assert getattr(trace, name).dtype == np.float32, name
    p = decoder.forward(m, trace.ids[:2], last_only=True)
    step = decoder.forward(m, trace.ids[2:3], cache=p.cache, last_only=True)
    assert step.logits.dtype == np.float32
    assert all(k.dtype == np.float32 for k in step.cache.keys)


@needs_smollm
def test_the_capital_of_france(m):
    # The reference: Hugging Face transformers' Llama (eager attention, float32) on the same
    # GGUF, run on this machine: ' Paris' with probability 0.7725, logits within 1e-4 of ours
    trace = lm.run("The capital of France is")
    p = trace.next_token_probs()
    best = int(np.argmax(p))
    assert lm.decode(m, [best]) == " Paris"
    assert abs(p[best] - 0.7725) < 0.002


@needs_smollm
def test_the_causal_mask_leaks_nothing(m):
    trace = lm.run("The cat sat on the mat and looked out of the window")
    T = len(trace.ids)
    above = np.triu(np.ones((T, T), bool), k=1)
    assert np.count_nonzero(trace.attentions[..., above]) == 0
    changed = trace.ids.copy()
    changed[-1] = lm.encode(m, " door")[0]
    other = lm.run(changed.tolist())
    assert np.array_equal(other.logits[:-1], trace.logits[:-1])  # bit for bit
    assert not np.array_equal(other.logits[-1], trace.logits[-1])
    assert np.allclose(trace.attentions.sum(axis=-1), 1, atol=1e-5)


@needs_smollm
def test_switching_a_head_off(m):
    ids = lm.encode(m, "The cat sat on the mat")
    on = lm.run(ids.tolist())
    off_mask = heads.head_mask_for([(4, 2)], 30, 9)
    off = lm.run(ids.tolist(), head_mask=off_mask)
    # layers before the head are untouched, bit for bit; its own weights too (it is its
    # output that is dropped); the stream after it moves
    assert np.array_equal(off.hidden_states[:5], on.hidden_states[:5])
    assert np.array_equal(off.attentions[4], on.attentions[4])
    assert not np.allclose(off.hidden_states[5], on.hidden_states[5])
    # starting at layer 4 from the recorded stream gives the same logits as the whole pass
    part = decoder.forward(m, ids, keep_cache=False, interventions=Interventions(
        head_mask=off_mask, from_layer=4, stream=on.hidden_states[4]))
    assert np.allclose(part.logits, off.logits, atol=1e-4)


# ---- generation and the cache -------------------------------------------------------------

def test_the_sampling_distribution_by_hand():
    logits = np.log([0.5, 0.3, 0.2])
    keep_two = generation.sampling_distribution(logits, lm.Sampling(temperature=1, top_k=2))
    assert np.allclose(keep_two, [0.5 / 0.8, 0.3 / 0.8, 0])
    # top-p 0.6: 0.5 < 0.6 so the second is needed (0.8 >= 0.6); top-p 0.5: the first alone
    assert np.allclose(generation.sampling_distribution(logits, lm.Sampling(1, 0, 0.6)),
                       [0.625, 0.375, 0])
    assert np.allclose(generation.sampling_distribution(logits, lm.Sampling(1, 0, 0.5)), [1, 0, 0])
    # temperature 2 takes square roots: sqrt(.5), sqrt(.3), sqrt(.2), normalised
    roots = np.sqrt([0.5, 0.3, 0.2])
    hot = generation.sampling_distribution(logits, lm.Sampling(2))
    assert np.allclose(hot, roots / roots.sum())
    assert np.array_equal(generation.sampling_distribution(logits, lm.Sampling(0)), [1, 0, 0])


def test_top_p_keeps_the_smallest_set_reaching_p():
    # The definition, checked by brute force over every subset of 6 tokens: the kept set
    # reaches p, and no smaller set of tokens does.
    rng = np.random.default_rng(4)
    for _ in range(40):
        probs = rng.dirichlet(np.ones(6) * 0.7)
        top_p = float(rng.uniform(0.05, 0.99))
        drawn = generation.sampling_distribution(np.log(probs), lm.Sampling(1, 0, top_p))
        kept = np.flatnonzero(drawn)
        assert probs[kept].sum() >= top_p
        smallest = min(n for n in range(1, 7) for subset in itertools.combinations(range(6), n)
                       if probs[list(subset)].sum() >= top_p)
        assert kept.size == smallest
    # after top-k, top-p reads the kept tokens' renormalised probabilities: top-2 of
    # (0.5, 0.2, 0.2, 0.1) is (5/7, 2/7), and 5/7 = 0.714 alone reaches 0.65
    two = generation.sampling_distribution(np.log([0.5, 0.2, 0.2, 0.1]), lm.Sampling(1, 2, 0.65))
    assert np.array_equal(two, [1, 0, 0, 0])


@pytest.mark.parametrize("bad", [{"temperature": -1}, {"temperature": float("nan")},
                                 {"top_k": -1}, {"top_p": 0}, {"top_p": 1.5}, {"seed": -3},
                                 {"top_k": 2.5}])
def test_bad_sampling_settings_are_refused(bad):
    with pytest.raises(ValueError):
        lm.Sampling(**bad)


@needs_smollm
def test_cached_and_uncached_generation_agree(m):
    prompt = "Once upon a time"
    cached = lm.generate(prompt, 12)
    plain = lm.generate(prompt, 12, use_cache=False)
    assert cached.ids == plain.ids
    diff = max(float(np.abs(a.logits - b.logits).max())
               for a, b in zip(cached.steps, plain.steps, strict=True))
    assert diff < 1e-3  # float32 sums in another order; the logits are about 10 to 30
    # sampling is repeatable with its seed, and differs with another
    s = lm.Sampling(temperature=1.0, top_p=0.95, seed=7)
    assert lm.generate(prompt, 8, s).ids == lm.generate(prompt, 8, s, use_cache=False).ids


@needs_smollm
def test_the_cache_holds_what_the_formula_says(m):
    ids = lm.encode(m, "The cat sat on the mat")
    p = decoder.forward(m, ids)
    T = len(ids)
    # 2 (keys and values) · 30 layers · 3 KV heads · 64 numbers · T tokens · 4 bytes
    assert p.cache.nbytes == 2 * 30 * 3 * 64 * T * 4
    step = decoder.forward(m, lm.encode(m, " today"), cache=p.cache)
    assert step.cache.length == T + 1
    assert step.cache.nbytes == 2 * 30 * 3 * 64 * (T + 1) * 4


@needs_smollm
def test_generation_caps(m):
    with pytest.raises(ValueError, match="max_new_tokens"):
        lm.generate("Hi", 0)
    with pytest.raises(ValueError, match="no tokens"):
        lm.run("")
    with pytest.raises(ValueError, match="ids must lie"):
        lm.run([0, 10**6])


# ---- induction heads ----------------------------------------------------------------------

def test_the_induction_score_by_hand():
    # P = 2: the second copy is positions 2 and 3; their targets are keys 1 and 2
    a = np.zeros((1, 1, 4, 4))
    a[0, 0, 2, 1] = 0.5
    a[0, 0, 3, 2] = 0.9
    assert heads.induction_scores(a, 2)[0, 0] == pytest.approx((0.5 + 0.9) / 2)


def test_token_losses_by_hand():
    # two positions, vocabulary 2; position 0 predicts ids[1] = 1 with logits (0, ln 3):
    # p = 3/4, loss = -ln 0.75
    logits = np.array([[0.0, math.log(3.0)], [0.0, 0.0]])
    assert heads.token_losses(logits, np.array([0, 1]))[0] == pytest.approx(-math.log(0.75))


@needs_smollm
def test_switching_the_induction_heads_off_breaks_copying():
    test = lm.induction_test(seed=3, segment=12, sequences=2, draws=2)
    layer, head = test.top_heads[0]
    assert test.scores[layer, head] > 0.5
    assert test.loss_repeat < test.loss_first / 2  # the second copy is read off the first
    assert test.loss_top_off > test.loss_random_off.max()  # the copying goes through them
    for draw in test.random_draws:
        assert [l for l, _ in draw] == [l for l, _ in test.top_heads]
        assert not set(draw) & set(test.top_heads)


# ---- the command line ---------------------------------------------------------------------

@needs_smollm
def test_the_command_line_prints_one_json_line_last(capsys):
    from attncore.lm.__main__ import main

    main(["next", "--prompt", "The capital of France is"])
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert last["top"][0][1] == " Paris"
    assert len(last["top"]) == 10
    probs = [p for _, _, p in last["top"]]
    assert probs == sorted(probs, reverse=True)


def test_the_command_line_refuses_bad_input_without_a_traceback(capsys):
    from attncore.lm.__main__ import main

    with pytest.raises(SystemExit) as caught:
        main(["induction", "--segment", "1000"])
    assert caught.value.code == 2
    assert "segment" in capsys.readouterr().err
