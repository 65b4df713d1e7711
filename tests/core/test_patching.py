"""Lesson 12's core: the pair's checks, the logit lens, direct attribution, patching and
knockout on SmolLM2.

The reference is a plain pass written here: one prompt at a time over every position, one
head at a time, no batch, no prefix cache, no starting layer, with the patch or the cut
edge applied by hand. The batched code must give the same recoveries and probabilities.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from attncore import lm
from attncore.lm import __main__ as cli
from attncore.lm import answer, pair, patching
from tests.model_marks import needs_smollm

pytestmark = needs_smollm
CAPITAL = answer.PRESETS["A capital city"]  # France/Italy, one token changed (position 4)


@pytest.fixture(scope="module")
def m() -> lm.LanguageModel:
    return lm.model()


@pytest.fixture(scope="module")
def study(m) -> answer.AnswerStudy:
    return answer.study_texts(m, *CAPITAL)


def reference(m, ids, *, head_patch=None, stream_patch=None, blocked=None):
    """Logits at the last position (V,), the stream entering each layer (L + 1, T, d), each
    head's output before W_O (L, H, T, d_k), and each layer's attention and FFN outputs at
    the last position (L, d) each.

    head_patch = (layer, head, values (T, d_k)); stream_patch = (layer, position, vector);
    blocked = (layers, query, keys): in those layers the query may not read those keys.
    """
    cfg, w = m.config, m.weights
    L, H, KV, dk = cfg.n_layers, cfg.n_heads, cfg.n_kv_heads, cfg.d_head
    T = len(ids)
    eps = np.float32(cfg.norm_eps)

    def norm(x, gain):
        return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * gain

    theta = float(cfg.rope_base) ** (-np.arange(0, dk, 2) / dk)
    angle = np.arange(T)[:, None] * theta[None, :]
    cos, sin = np.cos(angle).astype(np.float32), np.sin(angle).astype(np.float32)

    def turn(x):  # (T, dk): each adjacent pair rotated by its position's angle
        out = np.empty_like(x)
        out[:, 0::2] = x[:, 0::2] * cos - x[:, 1::2] * sin
        out[:, 1::2] = x[:, 0::2] * sin + x[:, 1::2] * cos
        return out

    x = w.token_embd[ids].astype(np.float32)
    states, head_outs, attn_last, ffn_last = [], [], [], []
    for n in range(L):
        if stream_patch is not None and stream_patch[0] == n:
            x = x.copy()
            x[stream_patch[1]] = stream_patch[2]
        states.append(x)
        qkv = norm(x, w.attn_norm[n]) @ w.attn_qkv[n]
        q = qkv[:, :H * dk].reshape(T, H, dk)
        k = qkv[:, H * dk:(H + KV) * dk].reshape(T, KV, dk)
        v = qkv[:, (H + KV) * dk:].reshape(T, KV, dk)
        outs = []
        for h in range(H):
            kv = h // (H // KV)
            scores = turn(q[:, h]) @ turn(k[:, kv]).T / np.float32(np.sqrt(dk))
            allowed = np.tril(np.ones((T, T), dtype=bool))
            if blocked is not None and n in blocked[0]:
                allowed[blocked[1], blocked[2]] = False
            scores = np.where(allowed, scores, -np.inf)
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            o = (e / e.sum(axis=-1, keepdims=True)) @ v[:, kv]
            if head_patch is not None and head_patch[:2] == (n, h):
                o = head_patch[2]
            outs.append(o)
        head_outs.append(np.stack(outs))
        a = np.concatenate(outs, axis=-1) @ w.attn_output[n]
        x = x + a
        gu = norm(x, w.ffn_norm[n]) @ w.ffn_gate_up[n]
        gate, up = gu[:, :cfg.d_ff], gu[:, cfg.d_ff:]
        f = (gate / (1 + np.exp(-gate)) * up) @ w.ffn_down[n]
        x = x + f
        attn_last.append(a[-1])
        ffn_last.append(f[-1])
    states.append(x)
    logits = norm(x[-1], w.output_norm) @ w.output
    return (logits.astype(np.float64), np.stack(states), np.stack(head_outs),
            np.stack(attn_last), np.stack(ffn_last))


def ld_of(logits, p: pair.Pair) -> float:
    return float(logits[p.answer] - logits[p.wrong])


def test_a_pair_is_checked_and_each_refusal_names_the_problem(m):
    with pytest.raises(ValueError, match="has 5 tokens and the corrupted one 6") as caught:
        pair.make_pair(m, "The capital of France is", "The capital of Italy is now", " Paris",
                       " Rome")
    assert "'␣now'" in str(caught.value)  # both splits are shown
    with pytest.raises(ValueError, match=r"answer ' Parisian' is 2 tokens \('␣Paris' \| 'ian'\)"):
        pair.make_pair(m, *CAPITAL[:2], " Parisian", " Rome")
    with pytest.raises(ValueError, match="the same tokens"):
        pair.make_pair(m, CAPITAL[0], CAPITAL[0], " Paris", " Rome")
    with pytest.raises(ValueError, match="the same token"):
        pair.make_pair(m, *CAPITAL[:2], " Paris", " Paris")
    with pytest.raises(ValueError, match="clean prompt is empty"):
        pair.make_pair(m, "  ", CAPITAL[1], " Paris", " Rome")
    with pytest.raises(ValueError, match="wrong answer is empty"):
        pair.make_pair(m, *CAPITAL[:2], " Paris", "")
    long = ("one two " * 20).strip()  # 40 words, each one token ("one", then "␣two", ...)
    with pytest.raises(ValueError, match="has 40 tokens; at most 32"):
        pair.make_pair(m, long, long.replace("one", "six", 1), " one", " two")


def test_the_logit_differences_match_a_plain_pass(m, study):
    p = study.pair
    assert list(p.changed) == [3]
    clean, corrupt = reference(m, p.clean)[0], reference(m, p.corrupt)[0]
    assert study.ld_clean == pytest.approx(ld_of(clean, p), abs=1e-4)
    assert study.ld_corrupt == pytest.approx(ld_of(corrupt, p), abs=1e-4)
    probs = np.exp(clean - clean.max()) / np.exp(clean - clean.max()).sum()
    assert study.p_clean == pytest.approx(probs[p.answer], abs=1e-5)


def test_patching_the_clean_run_back_recovers_one_and_a_no_op_zero(study):
    p = study.pair
    # The embedding of the one changed token put back: the corrupted run becomes the clean
    # run, so LD_patched = LD_clean and recovery is 1. Not to the bit: the patched copies
    # run as a batch, and BLAS rounds a row differently with the batch's size (measured:
    # 0.9999998), so to float32 rounding.
    assert study.residual[0, 3] == pytest.approx(1.0, abs=1e-5)
    # " is" has the same embedding in both prompts: a patch of nothing, 0 to rounding.
    assert study.residual[0, 4] == pytest.approx(0.0, abs=1e-5)
    # Before the changed token the streams are the same at every layer (causal): those
    # patches are not run, and the page says they are exactly 0.
    assert not study.residual[:, :3].any()
    assert p.n_tokens == 5


@pytest.mark.parametrize("layer, head", [(23, 4), (29, 1), (0, 0), (12, 7)])
def test_a_patched_head_matches_a_plain_pass(m, study, layer, head):
    p = study.pair
    clean_heads = reference(m, p.clean)[2]
    patched = reference(m, p.corrupt, head_patch=(layer, head, clean_heads[layer, head]))[0]
    expected = (ld_of(patched, p) - study.ld_corrupt) / (study.ld_clean - study.ld_corrupt)
    assert study.heads[layer, head] == pytest.approx(expected, abs=2e-4)


@pytest.mark.parametrize("layer, position", [(10, 3), (24, 4), (27, 3)])
def test_a_patched_stream_matches_a_plain_pass(m, study, layer, position):
    p = study.pair
    clean_states = reference(m, p.clean)[1]
    patched = reference(m, p.corrupt,
                        stream_patch=(layer, position, clean_states[layer, position]))[0]
    expected = (ld_of(patched, p) - study.ld_corrupt) / (study.ld_clean - study.ld_corrupt)
    assert study.residual[layer, position] == pytest.approx(expected, abs=2e-4)


def test_knockout_matches_a_plain_pass_with_the_edge_cut(m, study):
    p = study.pair
    windows, probs, p_none = patching.knockout(m, study.runs, 9)
    assert len(windows) == 30 - 9 + 1 and windows[0] == (0, 8) and windows[-1] == (21, 29)
    assert p_none == pytest.approx(study.p_clean, abs=1e-5)
    for n in (0, 15, 21):
        first, last = windows[n]
        logits = reference(m, p.clean, blocked=(set(range(first, last + 1)), 4, [3]))[0]
        expected = np.exp(logits - logits.max())
        expected /= expected.sum()
        assert probs[n] == pytest.approx(expected[p.answer], abs=2e-5)
    with pytest.raises(ValueError, match="1 to 30 layers"):
        patching.knockout(m, study.runs, 31)


def test_the_attribution_adds_up_to_ld_and_each_layer_to_its_outputs(m, study):
    p, dla, w = study.pair, study.attribution, m.weights
    # The parts add up to LD: an identity of the split, to float32 rounding of the adds.
    assert dla.total == pytest.approx(study.ld_clean, abs=1e-4)
    # Independently: each layer's heads together wrote its attention output, and each FFN
    # its FFN output, as a plain pass computes them.
    _, states, _, attn_last, ffn_last = reference(m, p.clean)
    final = states[-1, -1].astype(np.float64)
    rms = np.sqrt(np.mean(final ** 2) + m.config.norm_eps)
    direction = (w.output_norm / rms * (w.output[:, p.answer].astype(np.float64)
                                        - w.output[:, p.wrong]))
    np.testing.assert_allclose(dla.heads.sum(axis=1), attn_last.astype(np.float64) @ direction,
                               atol=2e-4)
    np.testing.assert_allclose(dla.ffn, ffn_last.astype(np.float64) @ direction, atol=2e-4)
    assert dla.embed == pytest.approx(float(w.token_embd[p.clean[-1]] @ direction), abs=1e-6)


def test_the_lens_after_the_last_layer_is_the_model_itself(m, study):
    p = study.pair
    logits = reference(m, p.clean)[0]
    assert study.lens.rank[-1] == 1 + int((logits > logits[p.answer]).sum())
    assert study.lens.top[-1] == int(np.argmax(logits))
    assert study.lens.p_answer[-1] == pytest.approx(study.p_clean, abs=1e-5)
    assert study.lens.rank.shape == (m.config.n_layers + 1,)


def test_looks_are_the_last_tokens_weights_on_the_changed_token(m, study):
    weights = lm.run(CAPITAL[0]).attentions  # (L, H, T, T), an unbatched recorded pass
    np.testing.assert_allclose(study.looks, weights[:, :, -1, 3], atol=1e-5)


def test_the_command_prints_the_issues_json(capsys):
    cli.main(["patch", "--clean", CAPITAL[0], "--corrupt", CAPITAL[1], "--answer", CAPITAL[2],
              "--wrong", CAPITAL[3], "--window", "9"])
    out = json.loads(capsys.readouterr().out.splitlines()[-1])
    L, H, T = 30, 9, 5
    assert np.shape(out["head_recovery"]) == (L, H) and np.shape(out["dla_heads"]) == (L, H)
    assert np.shape(out["residual_recovery"]) == (L, T) and len(out["dla_ffn"]) == L
    assert len(out["knockout"]) == L - 9 + 1 and out["knockout"][0][:2] == [1, 9]
    heads = np.array(out["head_recovery"])
    best = np.unravel_index(np.argmax(heads), heads.shape)
    assert out["top_heads"][0] == [best[0] + 1, best[1] + 1, heads[best]]  # counted from 1
    parts = out["dla_embed"] + np.sum(out["dla_heads"]) + np.sum(out["dla_ffn"])
    assert parts == pytest.approx(out["logit_diff_clean"], abs=1e-4)
    assert {"logit_diff_corrupt", "seconds"} <= out.keys()


def test_the_command_refuses_a_bad_pair_plainly(capsys):
    with pytest.raises(SystemExit) as caught:
        cli.main(["patch", "--clean", "a b", "--corrupt", "a b c", "--answer", " x",
                  "--wrong", " y"])
    assert caught.value.code == 2
    assert "error: the clean prompt has 2 tokens and the corrupted one 3" in (
        capsys.readouterr().err)
