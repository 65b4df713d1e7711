"""A Hugging Face model folder read into :class:`~attncore.lm.config.LMConfig` and our weight
layout: ``config.json``, ``*.safetensors`` (one file or shards with their index) and
``tokenizer.json``, for ``LlamaForCausalLM``, ``Qwen2ForCausalLM``,
``MistralForCausalLM`` (without a sliding window) and ``GPT2LMHeadModel``.

The weights are read with ``safetensors``' NumPy API; NumPy has no bfloat16, so a BF16
tensor's bytes are read where the file's header puts them (8 bytes of header length, the
JSON header, then the data: the format's specification) and widened to float32 exactly (a
bfloat16 is the top half of a float32). The tokenizer is the folder's own
``tokenizer.json``, read by ``tokenizers``.

What differs from a GGUF of the same model: Hugging Face keeps W_Q and W_K in the order
its ``rotate_half`` turns (RoPE on halves), where llama.cpp's converter permutes the rows
for adjacent pairs; ``nn.Linear`` weights are (out, in), but GPT-2's ``Conv1D`` weights
are stored (in, out) already, with Q, K and V side by side in one ``c_attn``.
``config.json`` gives RoPE's base as a top-level ``rope_theta`` (as the Hub serves most
files) or inside ``rope_parameters`` (as transformers 5 writes them).
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import replace
from pathlib import Path

import numpy as np

from .._installed import ModelFilesError
from .config import LMConfig, parameter_count

LLAMA_LIKE = {"LlamaForCausalLM": "llama", "MistralForCausalLM": "llama",
              "Qwen2ForCausalLM": "qwen2"}
ARCHITECTURES = (*LLAMA_LIKE, "GPT2LMHeadModel")


def read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelFilesError(f"cannot read {path}: {exc}") from exc


def rope_settings(c: dict) -> tuple[float, dict]:
    """RoPE's base and scaling from a config.json: a top-level ``rope_theta`` and
    ``rope_scaling`` (transformers 4), or ``rope_parameters`` (transformers 5)."""
    params = c.get("rope_parameters") or {}
    if "full_attention" in params:  # transformers 5 keys them by layer type when they differ
        params = params["full_attention"]
    base = params.get("rope_theta", c.get("rope_theta", 10000.0))
    scaling = dict(c.get("rope_scaling") or {})
    kind = params.get("rope_type") or scaling.get("rope_type") or scaling.get("type") or "default"
    return float(base), {**scaling, **params, "rope_type": kind}


def llama3_factors(scaling: dict, d_k: int, base: float) -> np.ndarray:
    """What Llama 3's RoPE scaling divides each frequency θ_i by: 1 for short wavelengths
    (under original context / high_freq_factor), ``factor`` for long ones (over original
    context / low_freq_factor), and a smooth blend between (as transformers' and llama.cpp's
    converters compute it)."""
    factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
    old = scaling["original_max_position_embeddings"]
    out = []
    for i in range(0, d_k, 2):
        wavelength = 2 * math.pi * base ** (i / d_k)
        if wavelength < old / high:
            out.append(1.0)
        elif wavelength > old / low:
            out.append(float(factor))
        else:
            smooth = (old / wavelength - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


def read_config(folder: Path) -> tuple[LMConfig, dict]:
    """The config of a supported folder, and the RoPE scaling's settings; ModelFilesError
    naming what is not supported."""
    c = read_json(folder / "config.json")
    found = c.get("architectures") or [c.get("model_type", "none given")]
    arch = found[0]
    if arch not in ARCHITECTURES:
        raise ModelFilesError(f"config.json's architecture is {arch!r}; supported: "
                              f"{', '.join(ARCHITECTURES)}")
    if arch == "GPT2LMHeadModel":
        if c.get("activation_function", "gelu_new") not in ("gelu_new", "gelu_pytorch_tanh"):
            raise ModelFilesError(f"this GPT-2's activation is {c['activation_function']!r}; "
                                  "supported: gelu_new (GELU, tanh form)")
        if c.get("scale_attn_by_inverse_layer_idx") or not c.get("scale_attn_weights", True):
            raise ModelFilesError("this GPT-2 scales its scores otherwise than by 1/√d_k; "
                                  "only the standard scale is supported")
        d, H = c["n_embd"], c["n_head"]
        return LMConfig(n_layers=c["n_layer"], n_heads=H, n_kv_heads=H, d_model=d,
                        d_ff=c.get("n_inner") or 4 * d, vocab_size=c["vocab_size"],
                        context_length=c.get("n_positions", c.get("n_ctx", 1024)),
                        norm_eps=float(c.get("layer_norm_epsilon", 1e-5)), rope_base=10000.0,
                        family="gpt2", norm="layer", positions="learned", mlp="gelu",
                        qkv_bias=True, biases=True,
                        tied_output=c.get("tie_word_embeddings", True)), {}
    family = LLAMA_LIKE[arch]
    if c.get("sliding_window") is not None and (family == "llama" or c.get("use_sliding_window")):
        raise ModelFilesError(f"this {arch} uses a sliding window of {c['sliding_window']} "
                              "tokens; only models without one are supported")
    if c.get("hidden_act", "silu") != "silu":
        raise ModelFilesError(f"the feed-forward's activation is {c['hidden_act']!r}; "
                              "supported: silu (SwiGLU)")
    if c.get("attention_bias") or c.get("mlp_bias"):
        raise ModelFilesError("this Llama has biases on its attention or MLP maps "
                              "(attention_bias / mlp_bias); supported: none")
    base, scaling = rope_settings(c)
    if scaling["rope_type"] not in ("default", "llama3"):
        raise ModelFilesError(f"the RoPE scaling is {scaling['rope_type']!r}; supported: "
                              "none (default) and llama3")
    d, H = c["hidden_size"], c["num_attention_heads"]
    d_k = c.get("head_dim") or d // H
    return LMConfig(
        n_layers=c["num_hidden_layers"], n_heads=H,
        n_kv_heads=c.get("num_key_value_heads") or H, d_model=d, d_ff=c["intermediate_size"],
        vocab_size=c["vocab_size"], context_length=c.get("max_position_embeddings", 2048),
        norm_eps=float(c.get("rms_norm_eps", 1e-6)), rope_base=base, family=family,
        positions="rope_halves", qkv_bias=family == "qwen2",
        tied_output=bool(c.get("tie_word_embeddings", False)),
        head_dim=d_k if d_k != d // H else 0,
        rope_scaling="llama3" if scaling["rope_type"] == "llama3" else "none"), scaling


def safetensors_files(folder: Path) -> dict[str, Path]:
    """Each tensor's name -> the file that holds it (one file, or the shards an index
    lists)."""
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        return {name: folder / file for name, file in read_json(index)["weight_map"].items()}
    shards = sorted(folder.glob("*.safetensors"))
    if not shards:
        raise ModelFilesError(
            f"{folder} has no *.safetensors file (a pytorch_model.bin needs PyTorch to "
            "read: save the model with safe_serialization, the default since transformers 4.35)")
    return {name: path for path in shards for name in header(path)[0] if name != "__metadata__"}


def header(path: Path) -> tuple[dict, int]:
    """A safetensors file's JSON header and where its data starts."""
    with open(path, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(size)), 8 + size


def read_tensor(path: Path, name: str) -> np.ndarray:
    """One tensor, float32, in the file's own layout."""
    from safetensors import safe_open

    with safe_open(path, framework="numpy") as f:
        if f.get_slice(name).get_dtype() != "BF16":
            return np.asarray(f.get_tensor(name), dtype=np.float32)
    meta, start = header(path)
    begin, end = meta[name]["data_offsets"]
    raw = np.fromfile(path, dtype="<u2", count=(end - begin) // 2, offset=start + begin)
    return (raw.astype(np.uint32) << 16).view(np.float32).reshape(meta[name]["shape"])


class HFSource:
    """A Hugging Face folder's tensors in our layout, read one at a time."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.config, self.scaling = read_config(folder)
        if not (folder / "tokenizer.json").is_file():
            raise ModelFilesError(f"{folder} has no tokenizer.json (the fast tokenizer's "
                                  "file, which tokenizers reads)")
        self.files = safetensors_files(folder)
        self.n_params = parameter_count(self.config)
        bos = self.bos(self.tokenizer()[0])
        self.config = replace(self.config, add_bos=bos >= 0, bos_id=bos)
        # GPT-2's own files name tensors "h.0.attn..."; a fine-tuned save "transformer.h.0..."
        self.prefix = ("transformer." if any(n.startswith("transformer.") for n in self.files)
                       else "")

    def raw(self, name: str) -> np.ndarray:
        name = (self.prefix + name) if self.config.family == "gpt2" and name != "lm_head.weight" \
            else name
        if name not in self.files:
            raise ModelFilesError(f"the model's safetensors have no tensor {name!r}, which a "
                                  f"{self.config.family} model needs")
        return read_tensor(self.files[name], name)

    def array(self, name: str, n: int | None = None) -> np.ndarray:
        """Our array ``name`` (see :class:`~attncore.lm.config.LMWeights`), of layer ``n``."""
        if self.config.family == "gpt2":
            return self._gpt2(name, n)
        cfg, blk = self.config, f"model.layers.{n}."
        match name:
            case "token_embd":
                return self.raw("model.embed_tokens.weight")
            case "output":
                return self.raw("model.embed_tokens.weight" if cfg.tied_output
                                else "lm_head.weight").T
            case "output_norm":
                return self.raw("model.norm.weight")
            case "rope_factors":
                return llama3_factors(self.scaling, cfg.d_head, cfg.rope_base)
            case "attn_norm":
                return self.raw(blk + "input_layernorm.weight")
            case "ffn_norm":
                return self.raw(blk + "post_attention_layernorm.weight")
            case "attn_qkv":
                return np.concatenate([self.raw(blk + f"self_attn.{p}_proj.weight").T
                                       for p in "qkv"], axis=1)
            case "attn_qkv_bias":
                return np.concatenate([self.raw(blk + f"self_attn.{p}_proj.bias") for p in "qkv"])
            case "attn_output":
                return self.raw(blk + "self_attn.o_proj.weight").T
            case "ffn_gate_up":
                return np.concatenate([self.raw(blk + "mlp.gate_proj.weight").T,
                                       self.raw(blk + "mlp.up_proj.weight").T], axis=1)
            case "ffn_down":
                return self.raw(blk + "mlp.down_proj.weight").T
        raise KeyError(name)

    def _gpt2(self, name: str, n: int | None) -> np.ndarray:
        """GPT-2's Conv1D weights are (in, out) already: no transpose."""
        blk = f"h.{n}."
        what = {"token_embd": "wte.weight", "pos_embd": "wpe.weight",
                "output_norm": "ln_f.weight", "output_norm_bias": "ln_f.bias",
                "attn_norm": blk + "ln_1.weight", "attn_norm_bias": blk + "ln_1.bias",
                "attn_qkv": blk + "attn.c_attn.weight", "attn_qkv_bias": blk + "attn.c_attn.bias",
                "attn_output": blk + "attn.c_proj.weight",
                "attn_output_bias": blk + "attn.c_proj.bias",
                "ffn_norm": blk + "ln_2.weight", "ffn_norm_bias": blk + "ln_2.bias",
                "ffn_gate_up": blk + "mlp.c_fc.weight", "ffn_gate_up_bias": blk + "mlp.c_fc.bias",
                "ffn_down": blk + "mlp.c_proj.weight", "ffn_down_bias": blk + "mlp.c_proj.bias"}
        if name == "output":
            return (self.raw("wte.weight") if self.config.tied_output
                    else self.raw("lm_head.weight")).T
        return self.raw(what[name])

    def tokenizer(self):
        """The folder's tokenizer.json and its special tokens."""
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.no_truncation()
        special = [t.content for t in tokenizer.get_added_tokens_decoder().values() if t.special]
        return tokenizer, special

    def bos(self, tokenizer) -> int:
        """The BOS id the tokenizer's post-processor puts before a text, or -1 (its own
        metadata: Llama's adds one, Qwen2's and GPT-2's do not)."""
        plain = tokenizer.encode("a", add_special_tokens=False).ids
        full = tokenizer.encode("a", add_special_tokens=True).ids
        return full[0] if len(full) > len(plain) and full[1:1 + len(plain)] == plain else -1

    def about(self) -> dict:
        c = read_json(self.folder / "config.json")
        settings = (read_json(self.folder / "tokenizer_config.json")
                    if (self.folder / "tokenizer_config.json").is_file() else {})
        template = settings.get("chat_template") or ""
        if isinstance(template, list):  # [{"name": "default", "template": ...}, ...]
            template = next((t["template"] for t in template if t.get("name") == "default"), "")
        jinja = self.folder / "chat_template.jinja"  # transformers 5 writes it apart
        if not template and jinja.is_file():
            template = jinja.read_text(encoding="utf-8")
        eos = c.get("eos_token_id", -1)
        return {"eos_id": int(eos[0] if isinstance(eos, list) else eos if eos is not None else -1),
                "chat_template": template, "name": c.get("_name_or_path") or self.folder.name,
                "license": ""}
