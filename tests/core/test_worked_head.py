"""Lesson 10's head worked by hand (attncore.lm.worked), against computations that share no
code with it: tiny random Llama (RoPE on adjacent pairs), Qwen2 (RoPE on halves, Q/K/V
biases) and GPT-2 (learned positions, LayerNorm) models written as GGUF files, whose
attention weights come from the plain-loop reference of tests/core/tiny_models.py and whose
q and k before positions are recomputed here with loops from the Hugging Face arrays.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import tiny_models as tiny

from attncore import lm
from attncore.lm import files
from attncore.lm.worked import worked_head
from tests.model_marks import needs_smollm

IDS = [256, 70, 258, 3, 257, 90, 11]  # 7 positions
D, H, KV = tiny.SIZES["d"], tiny.SIZES["H"], tiny.SIZES["KV"]
D_K = D // H


@pytest.fixture(params=["llama", "qwen2", "gpt2"])
def tiny_run(request, tmp_path, monkeypatch):
    """(family, its Hugging Face arrays, the model, its trace over IDS)."""
    monkeypatch.setenv("ATTNLAB_CACHE_DIR", str(tmp_path / "cache"))
    family = request.param
    arrays = tiny.draw(family, seed=3)
    m = files.load_model(tiny.write_gguf(tmp_path / "m.gguf", family, arrays),
                         cache=tmp_path / "cache")
    return family, arrays, m, lm.run(IDS, m=m)


def hf_q_and_k(family, arrays, stream_i, stream_j, layer, head):
    """q of ``stream_i`` for ``head`` and k of ``stream_j`` for its KV head, before
    positions, from the Hugging Face arrays with loops: the norm, then each output number
    as a sum of products (+ its bias). Returned in the GGUF's order of the numbers: a
    Llama's halves (i, i + d_k/2) as adjacent pairs (2i, 2i + 1)."""
    gpt2 = family == "gpt2"
    kv = head if gpt2 else head // (H // KV)

    def normed(x):
        x = [float(v) for v in x]
        if gpt2:
            b = f"h.{layer}.ln_1."
            mu = sum(x) / len(x)
            root = math.sqrt(sum((v - mu) ** 2 for v in x) / len(x) + 1e-5)
            return [(v - mu) / root * float(g) + float(s) for v, g, s in
                    zip(x, arrays[b + "weight"], arrays[b + "bias"], strict=True)]
        gain = arrays[f"model.layers.{layer}.input_layernorm.weight"]
        root = math.sqrt(sum(v * v for v in x) / len(x) + 1e-6)
        return [v / root * float(g) for v, g in zip(x, gain, strict=True)]

    def project(x, which, n):
        rows = range(n * D_K, (n + 1) * D_K)
        if gpt2:  # Conv1D (in, out): Q's columns, then K's
            w, b = arrays[f"h.{layer}.attn.c_attn.weight"], arrays[f"h.{layer}.attn.c_attn.bias"]
            offset = {"q": 0, "k": D}[which]
            return [sum(a * float(w[c, offset + r]) for c, a in enumerate(x))
                    + float(b[offset + r]) for r in rows]
        w = arrays[f"model.layers.{layer}.self_attn.{which}_proj.weight"]  # (out, in)
        out = [sum(a * float(w[r, c]) for c, a in enumerate(x)) for r in rows]
        if family == "qwen2":
            bias = arrays[f"model.layers.{layer}.self_attn.{which}_proj.bias"]
            out = [v + float(bias[r]) for v, r in zip(out, rows, strict=True)]
        return out

    q, k = project(normed(stream_i), "q", head), project(normed(stream_j), "k", kv)
    if family == "llama":  # llama.cpp's order: (i, i + d_k/2) -> (2i, 2i + 1)
        half = D_K // 2
        q, k = ([v[n // 2 + (n % 2) * half] for n in range(D_K)] for v in (q, k))
    return np.array(q), np.array(k)


@pytest.mark.parametrize("layer, head, query, key, pair",
                         [(0, 0, 0, 0, 0), (1, 3, 6, 2, 1), (1, 2, 4, 4, 3)])
def test_each_step_matches_an_independent_computation(tiny_run, layer, head, query, key,
                                                      pair):
    family, arrays, m, trace = tiny_run
    w = worked_head(trace, m.weights, layer, head, query, key, pair)
    assert (w.layer, w.head, w.query, w.key) == (layer, head, query, key)
    assert w.kv_head == (head if family == "gpt2" else head // 2)  # 4 heads over 2 KV heads
    # 1. the norm: μ and the root of the query's stream, with loops
    x = [float(v) for v in trace.hidden_states[layer, query]]
    if family == "gpt2":
        mu = sum(x) / len(x)
        assert w.norm == "layer" and w.mean == pytest.approx(mu, abs=1e-12)
        assert w.root == pytest.approx(math.sqrt(sum((v - mu) ** 2 for v in x) / len(x) + 1e-5))
    else:
        assert w.norm == "rms" and w.mean == 0.0
        assert w.root == pytest.approx(math.sqrt(sum(v * v for v in x) / len(x) + 1e-6))
    # 2. q and k before positions, from the Hugging Face arrays
    q, k = hf_q_and_k(family, arrays, trace.hidden_states[layer, query],
                      trace.hidden_states[layer, key], layer, head)
    np.testing.assert_allclose(w.q_raw, q, atol=1e-9)
    np.testing.assert_allclose(w.k_raw, k, atol=1e-9)
    assert w.qkv_bias == (family != "llama")
    # 3. positions: the pair turned by position × 10000^(−2p/d_k) is the model's own q and k
    if family == "gpt2":
        assert w.pair is None and w.q_turn is None and w.theta is None
        assert w.check == pytest.approx(max(np.abs(q - trace.q[layer, head, query]).max(),
                                            np.abs(k - trace.k[layer, head, key]).max()),
                                        abs=1e-9)
        assert w.check < 1e-5  # float32 rounding: the model's q and k are recomputed
    else:
        a, b = (2 * pair, 2 * pair + 1) if family == "llama" else (pair, pair + D_K // 2)
        assert w.pair == pair and w.pair_index == (a, b)
        assert w.theta == pytest.approx(10000.0 ** (-2 * pair / D_K))
        for turn, vec, position, model in ((w.q_turn, q, query, trace.q[layer, head, query]),
                                           (w.k_turn, k, key,
                                            trace.k[layer, w.kv_head, key])):
            angle = position * 10000.0 ** (-2 * pair / D_K)
            assert turn.position == position and turn.angle == pytest.approx(angle)
            assert turn.before == pytest.approx((vec[a], vec[b]), abs=1e-9)
            assert turn.after == pytest.approx((model[a], model[b]), abs=1e-5)
        assert 0 <= w.check < 1e-5
    # 4. scores over the causal prefix and their softmax: the reference's weights
    _, att = tiny.reference(family, arrays, IDS)
    assert w.scores.shape == (query + 1,)
    np.testing.assert_allclose(w.weights, att[layer, head, query, : query + 1], atol=1e-6)
    assert w.weight == pytest.approx(att[layer, head, query, key], abs=1e-6)
    assert w.model_weight == float(trace.attentions[layer, head, query, key])
    assert w.max_score == w.scores.max() and w.exps.max() == 1.0  # e^(m − m)
    assert w.dot / math.sqrt(D_K) == pytest.approx(w.scores[key])


def test_indices_out_of_range_are_refused(tiny_run):
    _, _, m, trace = tiny_run
    with pytest.raises(ValueError, match="key must lie in 0..2"):
        worked_head(trace, m.weights, 0, 0, 2, 3)  # a later key: the causal mask forbids it
    with pytest.raises(ValueError, match="layer must lie in 0..1"):
        worked_head(trace, m.weights, 2, 0, 0, 0)
    with pytest.raises(ValueError, match="head"):
        worked_head(trace, m.weights, 0, H, 0, 0)


@needs_smollm
def test_smollm2_s_head_by_hand_gives_the_model_s_weight():
    """Layer 2, head 4 (KV head 2: 9 heads over 3) of "The capital of France is", query 5,
    key 2, all counted from 1 as the page does: the recomputed weight is the model's float32
    weight to float32 rounding."""
    m = lm.model()
    trace = lm.run("The capital of France is", max_tokens=96, m=m)
    w = worked_head(trace, m.weights, 1, 3, 4, 1, pair=5)
    assert w.kv_head == 1 and w.pair_index == (10, 11)  # adjacent pairs (GGUF)
    assert w.theta == pytest.approx(1e5 ** (-10 / 64))  # SmolLM2's base 100,000
    assert abs(w.weight - float(trace.attentions[1, 3, 4, 1])) < 1e-5
    assert w.check < 1e-4
