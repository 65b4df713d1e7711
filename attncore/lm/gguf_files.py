"""A GGUF file (llama.cpp's format) read into :class:`~attncore.lm.config.LMConfig` and our
weight layout: architectures ``llama`` (Llama 2 and 3, SmolLM, TinyLlama, Mistral-style),
``qwen2`` and ``gpt2``.

The file is read by ``gguf``, the format's own reader from the llama.cpp project: its
``GGUFReader`` for the metadata and tensors, ``gguf.quants.dequantize`` for F16, BF16 and
every quantisation it knows. GGUF stores matrices (out, in); we keep (in, out).

What differs between the architectures, as llama.cpp reads them:

* ``llama``: W_Q and W_K permuted by llama.cpp's converter so that RoPE turns adjacent
  pairs (llama.cpp's "normal" RoPE); no biases; ``rope_freqs`` holds Llama 3's scaling.
* ``qwen2``: rows as Hugging Face has them, RoPE on halves (llama.cpp's "NeoX" RoPE);
  biases on Q, K and V.
* ``gpt2``: learned positions (``position_embd``), LayerNorm with biases, one fused
  ``attn_qkv`` matrix with its bias, GELU, biases everywhere, every head its own keys and
  values (no ``head_count_kv``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .._installed import ModelFilesError
from .config import LMConfig, parameter_count

ARCHITECTURES = ("llama", "qwen2", "gpt2")
#: llama.cpp's names of the byte-level BPE pre-tokenizers we rebuild, with the regular
#: expression each splits text with before the bytes are merged (the ones in the models'
#: own tokenizer.json files; llama.cpp's llama-vocab.cpp lists the same).
GPT2_SPLIT = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
PRE_TOKENIZERS = {
    "gpt-2": GPT2_SPLIT,
    "smollm": GPT2_SPLIT,  # after each digit is split off
    "llama-bpe": (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?"
                  r"[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
    "qwen2": (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?"
              r"[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
}
PRE_TOKENIZERS["llama3"] = PRE_TOKENIZERS["llama-v3"] = PRE_TOKENIZERS["llama-bpe"]
CONTROL = 3  # llama.cpp's token type for control tokens


def field(reader, name: str, default=ModelFilesError):
    """A metadata field's value; ``default`` when missing (ModelFilesError if none given)."""
    found = reader.fields.get(name)
    if found is None:
        if default is ModelFilesError:
            raise ModelFilesError(f"the GGUF has no metadata field {name!r}")
        return default
    return found.contents()


def read_config(reader) -> LMConfig:
    """The config of a supported GGUF; ModelFilesError naming what is not supported."""
    arch = field(reader, "general.architecture")
    if arch not in ARCHITECTURES:
        raise ModelFilesError(f"the GGUF's architecture is {arch!r}; supported: "
                              f"{', '.join(ARCHITECTURES)}")
    a = f"{arch}."
    if field(reader, a + "expert_count", 0):
        raise ModelFilesError(f"the GGUF is a mixture of experts ({arch}.expert_count = "
                              f"{field(reader, a + 'expert_count')}); only dense models are "
                              "supported")
    scaling = field(reader, a + "rope.scaling.type", "none")
    if scaling not in ("none", ""):
        raise ModelFilesError(f"the GGUF's RoPE scaling is {scaling!r}; supported: none, and "
                              "Llama 3's (a rope_freqs tensor)")
    names = {t.name for t in reader.tensors}
    d = int(field(reader, a + "embedding_length"))
    H = int(field(reader, a + "attention.head_count"))
    d_k = int(field(reader, a + "attention.key_length", 0)) or d // H
    rope_dims = field(reader, a + "rope.dimension_count", d_k)
    if arch != "gpt2" and int(rope_dims) != d_k:
        raise ModelFilesError(f"the GGUF turns {rope_dims} of each head's {d_k} numbers by "
                              "RoPE; only RoPE on the whole head is supported")
    embd = next(t for t in reader.tensors if t.name == "token_embd.weight")
    gpt2 = arch == "gpt2"
    eps_key = "attention.layer_norm_epsilon" if gpt2 else "attention.layer_norm_rms_epsilon"
    add_bos = bool(field(reader, "tokenizer.ggml.add_bos_token", False))
    return LMConfig(
        n_layers=int(field(reader, a + "block_count")), n_heads=H,
        n_kv_heads=int(field(reader, a + "attention.head_count_kv", H)), d_model=d,
        d_ff=int(field(reader, a + "feed_forward_length")),
        vocab_size=int(embd.shape[-1]),  # ggml lists (d, V): the rows of the embedding
        context_length=int(field(reader, a + "context_length")),
        # float(np.float32(1e-5)) would keep the float32 rounding (9.9999997e-06)
        norm_eps=float(np.float32(field(reader, a + eps_key))),
        rope_base=float(field(reader, a + "rope.freq_base", 10000.0)),
        family=arch, norm="layer" if gpt2 else "rms",
        positions={"llama": "rope_pairs", "qwen2": "rope_halves", "gpt2": "learned"}[arch],
        mlp="gelu" if gpt2 else "swiglu", qkv_bias=arch == "qwen2", biases=gpt2,
        tied_output="output.weight" not in names, add_bos=add_bos,
        bos_id=int(field(reader, "tokenizer.ggml.bos_token_id", -1)) if add_bos else -1,
        head_dim=d_k if d_k != d // H else 0,
        rope_scaling="llama3" if "rope_freqs.weight" in names else "none")


class GGUFSource:
    """A GGUF's tensors in our layout, dequantised one at a time (a 1.5 B model holds 6 GB
    of float32 numbers: never all at once)."""

    def __init__(self, path: Path) -> None:
        from gguf import GGUFReader

        try:
            self.reader = GGUFReader(path)
        except (OSError, ValueError) as exc:
            raise ModelFilesError(f"{path} is not a GGUF file gguf can read: {exc}") from exc
        self.config = read_config(self.reader)
        self.tensors = {t.name: t for t in self.reader.tensors}
        self.n_params = parameter_count(self.config)

    def raw(self, name: str) -> np.ndarray:
        """The tensor as the file stores it ((out, in) for a matrix), in float32."""
        from gguf.quants import dequantize

        tensor = self.tensors.get(name)
        if tensor is None:
            raise ModelFilesError(f"the GGUF has no tensor {name!r}, which a "
                                  f"{self.config.family} model needs")
        return np.asarray(dequantize(tensor.data, tensor.tensor_type), dtype=np.float32)

    def array(self, name: str, n: int | None = None) -> np.ndarray:
        """Our array ``name`` (see :class:`~attncore.lm.config.LMWeights`), of layer ``n``
        for a stacked one."""
        cfg, blk = self.config, f"blk.{n}."
        gpt2 = cfg.family == "gpt2"
        match name:
            case "token_embd":
                return self.raw("token_embd.weight")
            case "output":
                return self.raw("token_embd.weight" if cfg.tied_output else "output.weight").T
            case "pos_embd":
                return self.raw("position_embd.weight")
            case "output_norm" | "output_norm_bias":
                return self.raw("output_norm." + ("bias" if name.endswith("bias") else "weight"))
            case "rope_factors":
                return self.raw("rope_freqs.weight")
            case "attn_norm" | "ffn_norm":
                return self.raw(blk + name + ".weight")
            case "attn_norm_bias" | "ffn_norm_bias":
                return self.raw(blk + name[:-5] + ".bias")
            case "attn_qkv":
                if gpt2:
                    return self.raw(blk + "attn_qkv.weight").T
                return np.concatenate([self.raw(blk + f"attn_{p}.weight").T for p in "qkv"], axis=1)
            case "attn_qkv_bias":
                if gpt2:
                    return self.raw(blk + "attn_qkv.bias")
                return np.concatenate([self.raw(blk + f"attn_{p}.bias") for p in "qkv"])
            case "attn_output" | "ffn_down":
                return self.raw(blk + name + ".weight").T
            case "attn_output_bias" | "ffn_down_bias":
                return self.raw(blk + name[:-5] + ".bias")
            case "ffn_gate_up":
                if gpt2:
                    return self.raw(blk + "ffn_up.weight").T
                return np.concatenate([self.raw(blk + "ffn_gate.weight").T,
                                       self.raw(blk + "ffn_up.weight").T], axis=1)
            case "ffn_gate_up_bias":
                return self.raw(blk + "ffn_up.bias")
        raise KeyError(name)

    def tokenizer(self):
        """The tokenizer, built with ``tokenizers`` from the GGUF's vocabulary, and its
        special (control) tokens."""
        return build_bpe_tokenizer(self.reader)

    def about(self) -> dict:
        """What the file says of itself, for the cache's meta.json."""
        r = self.reader
        return {"eos_id": int(field(r, "tokenizer.ggml.eos_token_id", -1)),
                "chat_template": field(r, "tokenizer.chat_template", ""),
                "name": field(r, "general.name", ""), "license": field(r, "general.license", "")}


def build_bpe_tokenizer(reader) -> tuple[object, list[str]]:
    """Byte-level BPE from the GGUF's vocabulary and merges, with the pre-tokenizer the file
    names (``tokenizer.ggml.pre``): GPT-2's split, SmolLM's (digits one by one, then GPT-2's),
    Llama 3's or Qwen2's. Control tokens (type 3) are special tokens, matched whole in any
    text."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

    kind = field(reader, "tokenizer.ggml.model")
    if kind != "gpt2":
        raise ModelFilesError(
            f"the GGUF's tokenizer is {kind!r} (llama: SentencePiece); supported: 'gpt2', the "
            "byte-level BPE of GPT-2, Llama 3, Qwen2 and SmolLM. For a SentencePiece model "
            "(Llama 2, TinyLlama, Mistral) list its Hugging Face folder instead")
    pre = field(reader, "tokenizer.ggml.pre", "gpt-2")
    if pre not in PRE_TOKENIZERS:
        raise ModelFilesError(f"the GGUF's pre-tokenizer is {pre!r}; supported: "
                              f"{', '.join(sorted(PRE_TOKENIZERS))}")
    tokens = list(field(reader, "tokenizer.ggml.tokens"))
    kinds = list(field(reader, "tokenizer.ggml.token_type", [1] * len(tokens)))
    merges = [tuple(m.split(" ", 1)) for m in field(reader, "tokenizer.ggml.merges")]
    tokenizer = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges))
    if PRE_TOKENIZERS[pre] == GPT2_SPLIT:  # ByteLevel's own split is GPT-2's
        steps = [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]
    else:
        steps = [pre_tokenizers.Split(Regex(PRE_TOKENIZERS[pre]), behavior="isolated"),
                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    if pre == "smollm":
        steps.insert(0, pre_tokenizers.Digits(individual_digits=True))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(steps)
    tokenizer.decoder = decoders.ByteLevel()
    special = [t for t, k in zip(tokens, kinds, strict=True) if k == CONTROL]
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in special])
    return tokenizer, special
