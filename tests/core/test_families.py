"""One decoder, configured: tiny random Llama, Qwen2, Mistral and GPT-2 models, written by
these tests as GGUF files (``gguf``'s writer, llama.cpp's layouts) and as Hugging Face
folders (``safetensors``, ``tokenizer.json``), each run by attncore.lm and compared with
a plain-loop reference of the same equations (tests/core/tiny_models.py, which shares no
code with attncore.lm); SmolLM2's GGUF written out as a Hugging Face folder gives the
GGUF's logits; every refusal says what it found and what is supported.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import tiny_models as tiny

from attncore.lm import answer, decoder, files, lens, models, patching
from attncore.lm.config import LMConfig, parameter_count
from attncore.lm.pair import make_pair, run_pair
from attncore.lm.tokens import encode, prompt_ids
from tests.model_marks import SMOLLM_GGUF, needs_smollm

IDS = [256, 70, 258, 3, 257, 90, 11]  # "Ġt", "g", "Ġthe", ...: 7 positions


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    """A cache root of the test's own (the file-hash memo too)."""
    root = tmp_path / "cache"
    monkeypatch.setenv("ATTNLAB_CACHE_DIR", str(root))
    return root


def load(path, cache, **kwargs):
    return files.load_model(path, cache=cache, **kwargs)


def check_against_reference(m, family, arrays, tied=True, atol=2e-4):
    ref_logits, ref_att = tiny.reference(family, arrays, IDS, tied)
    p = decoder.forward(m, np.array(IDS), record=("weights", "hidden_states"), keep_cache=False)
    assert p.logits.dtype == np.float32 and p.record["hidden_states"].dtype == np.float32
    assert np.allclose(p.record["weights"], ref_att, atol=1e-5)
    assert np.allclose(p.logits, ref_logits, atol=atol), np.abs(p.logits - ref_logits).max()


# ---- every family and format against the reference -----------------------------------------

@pytest.mark.parametrize("family, tied", [("llama", True), ("llama", False), ("qwen2", True),
                                          ("qwen2", False), ("gpt2", True)])
def test_a_gguf_of_each_family_runs_the_reference_equations(family, tied, tmp_path, cache):
    arrays = tiny.draw(family, seed=1, tied=tied)
    m = load(tiny.write_gguf(tmp_path / "m.gguf", family, arrays, tied), cache)
    assert (m.config.family, m.config.tied_output, m.source_format) == (family, tied, "gguf")
    assert m.config.positions == {"llama": "rope_pairs", "qwen2": "rope_halves",
                                  "gpt2": "learned"}[family]
    check_against_reference(m, family, arrays, tied)


@pytest.mark.parametrize("family", ["llama", "qwen2", "mistral", "gpt2"])
def test_a_hugging_face_folder_of_each_family_runs_the_reference_equations(family, tmp_path,
                                                                          cache):
    tied = family != "llama"
    weights = "qwen2" if family == "qwen2" else "gpt2" if family == "gpt2" else "llama"
    arrays = tiny.draw(weights, seed=2, tied=tied)
    folder = tiny.write_hf(tmp_path / family, family, arrays, tiny.hf_config(family, tied))
    m = load(folder, cache)
    assert m.source_format == "hf"
    assert m.config.positions == ("learned" if family == "gpt2" else "rope_halves")
    check_against_reference(m, weights, arrays, tied)


def _quantised(tensor_type, family):
    """What a GGUF of ``tensor_type`` holds for each matrix: gguf's own round trip, in the
    orientation the file stores (GPT-2's Conv1D matrices transposed)."""
    from gguf.quants import dequantize, quantize

    def rounding(name, a):
        if a.ndim != 2:
            return a
        stored = a.T if family == "gpt2" and "embd" not in name and "wte" not in name \
            and "wpe" not in name else a
        back = dequantize(quantize(stored, tensor_type), tensor_type).astype(np.float32)
        return back.T if stored is not a else back
    return rounding


@pytest.mark.parametrize("kind", ["F16", "Q8_0", "Q4_0"])
@pytest.mark.parametrize("family", ["llama", "gpt2"])
def test_gguf_quantisations_are_dequantised_by_gguf(kind, family, tmp_path, cache):
    from gguf import GGMLQuantizationType

    tensor_type = GGMLQuantizationType[kind]
    arrays = tiny.draw(family, seed=3, rounding=_quantised(tensor_type, family))
    m = load(tiny.write_gguf(tmp_path / "q.gguf", family, arrays, tensor_type=tensor_type),
             cache)
    check_against_reference(m, family, arrays)


def _bf16(name, a):
    return (a.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)


def _f16(name, a):
    return a.astype(np.float16).astype(np.float32)


@pytest.mark.parametrize("dtype, rounding", [("F16", _f16), ("BF16", _bf16)])
def test_half_precision_and_sharded_safetensors(dtype, rounding, tmp_path, cache):
    arrays = tiny.draw("qwen2", seed=4, rounding=rounding)
    folder = tiny.write_hf(tmp_path / "q", "qwen2", arrays, tiny.hf_config("qwen2"),
                           dtype=dtype, shards=3)
    assert (folder / "model.safetensors.index.json").is_file()
    check_against_reference(load(folder, cache), "qwen2", arrays)


def test_transformers_5_rope_parameters_read_as_rope_theta(tmp_path, cache):
    arrays = tiny.draw("llama", seed=5, tied=False)
    old = tiny.write_hf(tmp_path / "a", "llama", arrays, tiny.hf_config("llama", False))
    new = tiny.write_hf(tmp_path / "b", "llama", arrays,
                        tiny.hf_config("llama", False, rope_style="parameters"))
    a, b = load(old, cache), load(new, cache)
    assert a.config == b.config and a.config.rope_base == 10000.0
    assert np.array_equal(decoder.forward(a, np.array(IDS)).logits,
                          decoder.forward(b, np.array(IDS)).logits)


def test_the_same_weights_give_the_same_logits_from_a_gguf_and_a_folder(tmp_path, cache):
    """Pairs (GGUF) and halves (Hugging Face) are one rotation of rows in another order."""
    arrays = tiny.draw("llama", seed=6)
    g = load(tiny.write_gguf(tmp_path / "m.gguf", "llama", arrays), cache)
    h = load(tiny.write_hf(tmp_path / "m", "llama", arrays, tiny.hf_config("llama")), cache)
    assert (g.config.positions, h.config.positions) == ("rope_pairs", "rope_halves")
    assert np.allclose(decoder.forward(g, np.array(IDS)).logits,
                       decoder.forward(h, np.array(IDS)).logits, atol=1e-5)


# ---- what every family must keep: the cache, positions, patching, the split answer --------

@pytest.fixture(params=["llama-gguf", "qwen2-hf", "gpt2-gguf", "gpt2-hf"])
def tiny_model(request, tmp_path, cache):
    family, fmt = request.param.split("-")
    arrays = tiny.draw(family, seed=7)
    if fmt == "gguf":
        return load(tiny.write_gguf(tmp_path / "m.gguf", family, arrays), cache)
    return load(tiny.write_hf(tmp_path / "m", family, arrays, tiny.hf_config(family)), cache)


def test_the_kv_cache_gives_the_whole_pass_s_logits(tiny_model):
    """GPT-2's learned positions continue after a cache as RoPE's angles do."""
    ids = np.array(IDS)
    whole = decoder.forward(tiny_model, ids, keep_cache=False).logits
    first = decoder.forward(tiny_model, ids[:4])
    rest = decoder.forward(tiny_model, ids[4:], cache=first.cache)
    assert np.allclose(rest.logits, whole[4:], atol=1e-5)


def test_patching_the_changed_token_s_embedding_restores_the_clean_answer(tiny_model):
    """Residual patching at layer 0 and the changed position puts back everything the clean
    prompt had (from_layer 0 with a prefix cache: GPT-2's positions come with the stream);
    every other position changes nothing; direct attribution sums to LD, biases and
    LayerNorm's centring included; the lens's last row is the model's own output."""
    m = tiny_model
    pair = make_pair(m, "the the he", "the t he", " t", "he")
    runs = run_pair(m, pair)
    grid = patching.residual_patching(m, runs)
    changed = int(pair.changed[0])
    assert grid[0, changed] == pytest.approx(1.0, abs=1e-4)
    assert np.all(grid[:, :changed] == 0)
    split = lens.direct_attribution(m, runs)
    assert split.total == pytest.approx(split.ld, abs=1e-4)
    assert (split.biases != 0) == (m.config.family == "gpt2")
    reading = lens.logit_lens(m, runs)
    p = decoder.forward(m, pair.clean, last_only=True, keep_cache=False).logits
    assert reading.top[-1] == int(np.argmax(p))
    heads = patching.head_patching(m, runs)
    assert heads.shape == (m.config.n_layers, m.config.n_heads)
    windows, probs, _ = patching.knockout(m, runs, 1)
    assert len(windows) == len(probs) == m.config.n_layers


def test_a_study_runs_on_a_tiny_gpt2(tmp_path, cache):
    arrays = tiny.draw("gpt2", seed=8)
    m = load(tiny.write_gguf(tmp_path / "g.gguf", "gpt2", arrays), cache)
    result = answer.study_texts(m, "the the he", "the t he", " t", "he")
    assert result.heads.shape == (2, 4) and result.residual.shape == (2, result.pair.n_tokens)


# ---- BOS, the cache on disk, the command line ----------------------------------------------

def test_bos_is_added_when_the_tokenizer_adds_it(tmp_path, cache):
    arrays = tiny.draw("llama", seed=9, tied=False)
    with_bos = load(tiny.write_hf(tmp_path / "b", "llama", arrays, tiny.hf_config("llama", False),
                                  bos=True), cache)
    without = load(tiny.write_hf(tmp_path / "n", "llama", arrays, tiny.hf_config("llama", False)),
                   cache)
    bos = tiny.vocabulary().index(tiny.BOS)
    assert with_bos.config.add_bos and with_bos.config.bos_id == bos
    assert not without.config.add_bos
    assert prompt_ids(with_bos, "the").tolist() == [bos, *encode(with_bos, "the").tolist()]
    assert prompt_ids(without, "the").tolist() == encode(without, "the").tolist()


def test_a_second_load_reads_the_cache_and_the_hash_is_remembered(tmp_path, cache):
    path = tiny.write_gguf(tmp_path / "m.gguf", "gpt2", tiny.draw("gpt2"))
    told = []
    first = load(path, cache, progress=lambda f, what: told.append(f))
    assert told[-1] == 1.0 and all(a <= b for a, b in zip(told, told[1:], strict=False))
    told.clear()
    again = load(path, cache, progress=lambda f, what: told.append(what))
    assert told == ["computing the files' sha256"]  # no conversion
    assert again.cache_dir == first.cache_dir and first.sha256 == files.file_sha256(path)
    memo = json.loads((cache / "file-hashes.json").read_text())
    assert memo[str(path.resolve())]["sha256"] == first.sha256
    for a in again.weights.arrays().values():
        assert not a.flags.writeable


def test_the_trace_task_writes_ids_logits_and_attentions(tmp_path, cache, capsys):
    from attncore.lm.__main__ import main

    arrays = tiny.draw("gpt2", seed=10)
    folder = tiny.write_hf(tmp_path / "g", "gpt2", arrays, tiny.hf_config("gpt2"))
    out = tmp_path / "t.npz"
    summary = main(["trace", "--model", str(folder), "--prompt", "the he t", "--out", str(out)])
    saved = np.load(out)
    T = len(saved["ids"])
    assert saved["logits"].shape == (T, len(tiny.vocabulary()))
    assert saved["logits"].dtype == np.float32
    assert saved["attentions"].shape == (2, 4, T, T) and saved["attentions"].dtype == np.float32
    ref_logits, ref_att = tiny.reference("gpt2", arrays, saved["ids"].tolist())
    assert np.allclose(saved["logits"], ref_logits, atol=2e-4)
    assert np.allclose(saved["attentions"], ref_att, atol=1e-5)
    assert summary["config"]["positions"].startswith("learned")
    main(["next", "--model", str(folder), "--prompt", "the"])
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["task"] == "next"


# ---- who chooses: the operator's list ------------------------------------------------------

def test_models_are_listed_by_the_operator_and_checked(tmp_path, cache, monkeypatch):
    good = tiny.write_gguf(tmp_path / "g.gguf", "gpt2", tiny.draw("gpt2"))
    bad = tmp_path / "notes.txt"
    bad.write_text("hello")
    monkeypatch.setenv("ATTNLAB_MODELS", f"Tiny GPT-2 = {good}; {bad}")
    monkeypatch.setattr(models, "MODELS_FILE", tmp_path / "absent.txt")
    monkeypatch.setattr(models, "_MODELS", {})  # this process's loaded models, SmolLM2's kept
    entries = {e.name: e for e in models.available_models()}
    assert list(entries)[0] == models.DEFAULT_NAME
    tiny_gpt2 = entries["Tiny GPT-2"]
    assert tiny_gpt2.usable and (tiny_gpt2.family, tiny_gpt2.source_format) == ("gpt2", "gguf")
    assert tiny_gpt2.n_params == parameter_count(load(good, cache).config)
    assert "neither a GGUF file" in entries["notes.txt"].problem
    m = models.model("Tiny GPT-2")
    assert models.model_is_loaded("Tiny GPT-2") and models.model("Tiny GPT-2") is m
    with pytest.raises(ValueError, match="no model named 'Other' is listed.*Tiny GPT-2"):
        models.model("Other")


def test_a_models_file_beside_the_app_reads_relative_paths(tmp_path, monkeypatch):
    listing = tmp_path / "models.txt"
    listing.write_text("# the course's models\nSmall = weights/small.gguf\n\n/abs/x  # bare\n")
    monkeypatch.setattr(models, "MODELS_FILE", listing)
    monkeypatch.delenv("ATTNLAB_MODELS", raising=False)
    from pathlib import Path
    assert models.listed_models() == [("Small", tmp_path / "weights/small.gguf"),
                                     ("x", Path("/abs/x"))]


@needs_smollm
def test_smollm2_s_parameter_count_is_the_listing_s():
    assert parameter_count(models.model().config) == 134_515_008


# ---- refusals: what was found, what is supported -------------------------------------------

def _write_llama_hf(tmp_path, **config):
    arrays = tiny.draw("llama", seed=11)
    return tiny.write_hf(tmp_path / "r", "llama", arrays, tiny.hf_config("llama", **config))


@pytest.mark.parametrize("config, message", [
    ({"architectures": ["GPTNeoXForCausalLM"]},
     "architecture is 'GPTNeoXForCausalLM'; supported: LlamaForCausalLM, MistralForCausalLM, "
     "Qwen2ForCausalLM, GPT2LMHeadModel"),
    ({"architectures": ["MistralForCausalLM"], "sliding_window": 4096},
     "uses a sliding window of 4096 tokens; only models without one"),
    ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0}},
     "RoPE scaling is 'yarn'; supported: none \\(default\\) and llama3"),
    ({"hidden_act": "gelu"}, "activation is 'gelu'; supported: silu"),
    ({"attention_bias": True}, "biases on its attention or MLP maps"),
])
def test_hugging_face_refusals(config, message, tmp_path, cache):
    with pytest.raises(files.ModelFilesError, match=message):
        load(_write_llama_hf(tmp_path, **config), cache)


def test_folder_refusals(tmp_path, cache):
    folder = _write_llama_hf(tmp_path)
    (folder / "tokenizer.json").unlink()
    with pytest.raises(files.ModelFilesError, match="has no tokenizer.json"):
        load(folder, cache)
    folder = _write_llama_hf(tmp_path / "2")
    (folder / "model.safetensors").unlink()
    with pytest.raises(files.ModelFilesError, match="no \\*.safetensors file \\(a "
                       "pytorch_model.bin needs PyTorch"):
        load(folder, cache)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(files.ModelFilesError, match="a folder without config.json"):
        load(empty, cache)
    text = tmp_path / "x.bin"
    text.write_bytes(b"PK\x03\x04zip")
    with pytest.raises(files.ModelFilesError, match="neither a GGUF file .*b'PK"):
        load(text, cache)


@pytest.mark.parametrize("kwargs, message", [
    ({"arch": "falcon"}, "architecture is 'falcon'; supported: llama, qwen2, gpt2"),
    ({"tokenizer_model": "llama"}, "tokenizer is 'llama' .*supported: 'gpt2'.*Hugging Face "
     "folder instead"),
    ({"pre": "deepseek-llm"}, "pre-tokenizer is 'deepseek-llm'; supported: gpt-2, llama-bpe"),
    ({"extra": {"llama.expert_count": 8}}, "mixture of experts .*only dense models"),
])
def test_gguf_refusals(kwargs, message, tmp_path, cache):
    path = tiny.write_gguf(tmp_path / "r.gguf", "llama", tiny.draw("llama"), **kwargs)
    with pytest.raises(files.ModelFilesError, match=message):
        load(path, cache)


def test_a_model_over_the_cap_is_refused_before_any_conversion(tmp_path, cache, monkeypatch):
    path = tiny.write_gguf(tmp_path / "m.gguf", "gpt2", tiny.draw("gpt2"))
    n = parameter_count(files.open_source(path).config)
    with pytest.raises(files.ModelFilesError, match="over this server's cap of 0.00 billion: "
                       "in float32 it needs .* ATTNLAB_MAX_PARAMS="):
        load(path, cache, cap=n - 1)
    assert not cache.exists() or not any(cache.glob("m-*"))
    monkeypatch.setenv("ATTNLAB_MAX_PARAMS", "1e3")
    assert files.max_params() == 1000
    with pytest.raises(files.ModelFilesError, match="over this server's cap"):
        load(path, cache)
    monkeypatch.setenv("ATTNLAB_MAX_PARAMS", "lots")
    with pytest.raises(files.ModelFilesError, match="must be a number of parameters"):
        files.max_params()


def test_a_config_that_contradicts_itself_is_refused():
    with pytest.raises(ValueError, match="n_heads \\(6\\) must be a multiple of n_kv_heads"):
        LMConfig(1, 6, 4, 24, 8, 5, 16, 1e-5, 1e4)
    with pytest.raises(ValueError, match="positions must be one of"):
        LMConfig(1, 2, 2, 8, 8, 5, 16, 1e-5, 1e4, positions="alibi")


# ---- SmolLM2 itself, written out as a Hugging Face folder ----------------------------------

@needs_smollm
def test_smollm2_as_a_hugging_face_folder_gives_the_gguf_s_logits(tmp_path, cache):
    """The GGUF's dequantised arrays under Hugging Face's names, Q and K rows permuted back
    from llama.cpp's adjacent pairs to rotate_half's halves, read as any teacher's folder:
    the same logits as the GGUF (up to float32 sums in another order). Its first 4 layers
    of 30, so that the test takes seconds: every layer runs the same code, and the GGUF
    model is run with 4 layers too."""
    from dataclasses import replace

    from gguf import GGUFReader
    from gguf.quants import dequantize
    from safetensors.numpy import save_file

    L = 4
    reader = GGUFReader(SMOLLM_GGUF)
    t = {x.name: np.asarray(dequantize(x.data, x.tensor_type), np.float32) for x in reader.tensors
         if not x.name.startswith("blk.") or int(x.name.split(".")[1]) < L}

    def halves(w, heads):  # the inverse of tiny.pairs_order
        return w.reshape(heads, w.shape[0] // heads // 2, 2, -1).swapaxes(1, 2).reshape(w.shape)

    hf = {"model.embed_tokens.weight": t["token_embd.weight"],
          "model.norm.weight": t["output_norm.weight"]}
    for n in range(L):
        b, g = f"model.layers.{n}.", f"blk.{n}."
        hf |= {b + "input_layernorm.weight": t[g + "attn_norm.weight"],
               b + "self_attn.q_proj.weight": halves(t[g + "attn_q.weight"], 9),
               b + "self_attn.k_proj.weight": halves(t[g + "attn_k.weight"], 3),
               b + "self_attn.v_proj.weight": t[g + "attn_v.weight"],
               b + "self_attn.o_proj.weight": t[g + "attn_output.weight"],
               b + "post_attention_layernorm.weight": t[g + "ffn_norm.weight"],
               b + "mlp.gate_proj.weight": t[g + "ffn_gate.weight"],
               b + "mlp.up_proj.weight": t[g + "ffn_up.weight"],
               b + "mlp.down_proj.weight": t[g + "ffn_down.weight"]}
    assert np.array_equal(tiny.pairs_order(hf["model.layers.0.self_attn.q_proj.weight"], 9),
                          t["blk.0.attn_q.weight"])
    folder = tmp_path / "smollm2"
    folder.mkdir()
    save_file(hf, str(folder / "model.safetensors"))
    smollm = models.model()
    smollm.tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "config.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "hidden_size": 576, "intermediate_size": 1536,
        "num_hidden_layers": L, "num_attention_heads": 9, "num_key_value_heads": 3,
        "rms_norm_eps": 1e-5, "rope_theta": 100000.0, "max_position_embeddings": 8192,
        "vocab_size": 49152, "tie_word_embeddings": True, "hidden_act": "silu"}))
    m = load(folder, cache)
    assert m.config.positions == "rope_halves" and smollm.config.positions == "rope_pairs"
    first_layers = replace(smollm, config=replace(smollm.config, n_layers=L))
    ids = encode(smollm, "The capital of France is")
    ours = decoder.forward(m, ids, record=("weights",), keep_cache=False)
    theirs = decoder.forward(first_layers, ids, record=("weights",), keep_cache=False)
    assert np.abs(ours.logits - theirs.logits).max() < 1e-3
    assert np.abs(ours.record["weights"] - theirs.record["weights"]).max() < 1e-5
    assert encode(m, "The capital of France is").tolist() == ids.tolist()


def test_sentencepiece_pieces_read_as_text(tmp_path, cache):
    """Llama 2's, TinyLlama's and Mistral's tokenizer.json are SentencePiece's: "▁" is a
    space and "<0x0A>" a byte; the byte-level models keep GPT-2's table."""
    from attncore.lm import tokens

    assert tokens.readable("▁the", byte_level=False) == "␣the"
    assert tokens.readable("<0x0A>", byte_level=False) == "↵"
    assert tokens.readable("é", byte_level=False) == "é"
    m = load(tiny.write_gguf(tmp_path / "m.gguf", "gpt2", tiny.draw("gpt2")), cache)
    assert tokens.byte_level_pieces(m) and tokens.pieces(m, [256]) == ["␣t"]


def test_a_model_without_a_chat_template_says_so(tmp_path, cache):
    from attncore.lm import tokens

    m = load(tiny.write_gguf(tmp_path / "m.gguf", "gpt2", tiny.draw("gpt2")), cache)
    with pytest.raises(ValueError, match="has no chat template .*plain text"):
        tokens.chat_prompt(m, "Hi")


def _llama3_inv_freq(base, d_k, factor, low, high, old):
    """transformers' _compute_llama3_parameters, written out: the frequencies themselves."""
    inv_freq = base ** (-np.arange(0, d_k, 2) / d_k)
    wavelen = 2 * np.pi / inv_freq
    scaled = np.where(wavelen > old / low, inv_freq / factor, inv_freq)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = (wavelen >= old / high) & (wavelen <= old / low)
    return np.where(medium, smoothed, scaled)


def test_llama_3_s_rope_scaling_from_a_folder_and_a_gguf(tmp_path, cache):
    """A Hugging Face config's rope_scaling "llama3" and a GGUF's rope_freqs tensor (what
    llama.cpp's converter writes: each frequency's divisor) give the reference's logits
    with the scaled frequencies. With d_k = 8 and an original context of 16 tokens the
    four wavelengths (6.3, 63, 628, 6283) fall in the blend, and beyond it."""
    scaling = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0, "original_max_position_embeddings": 16}
    inv_freq = _llama3_inv_freq(10000.0, 8, 8.0, 1.0, 4.0, 16)
    arrays = tiny.draw("llama", seed=12)
    ref_logits, _ = tiny.reference("llama", arrays, IDS, inv_freq=inv_freq)
    assert not np.allclose(ref_logits, tiny.reference("llama", arrays, IDS)[0], atol=1e-2)
    folder = tiny.write_hf(tmp_path / "l3", "llama", arrays,
                           tiny.hf_config("llama", rope_scaling=scaling))
    divisors = (10000.0 ** (-np.arange(0, 8, 2) / 8)) / inv_freq
    path = tiny.write_gguf(tmp_path / "l3.gguf", "llama", arrays,
                           extra={"rope_freqs.weight": divisors})
    for m in (load(folder, cache), load(path, cache)):
        assert m.config.rope_scaling == "llama3"
        assert np.allclose(decoder.forward(m, np.array(IDS)).logits, ref_logits, atol=2e-4)
