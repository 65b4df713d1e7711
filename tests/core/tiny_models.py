"""Tiny random models of each family, written by the tests themselves, and a plain-loop
reference of their equations that shares no code with attncore.lm.

The weights are drawn once in Hugging Face's names and layouts (``nn.Linear`` (out, in),
GPT-2's ``Conv1D`` (in, out), Q and K rows in the order ``rotate_half`` turns), then
written as a Hugging Face folder (``safetensors``, ``tokenizer.json``) or as a GGUF with
``gguf``'s own writer, laid out as llama.cpp's converter lays them out (Llama's Q and K
rows permuted for adjacent pairs, Conv1D transposed to (out, in)). The reference reads
the Hugging Face arrays, position by position and head by head, in float64.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import numpy as np

#: The tokenizer: the 256 byte symbols of GPT-2's table, three merges, one control token.
MERGES = [("Ġ", "t"), ("h", "e"), ("Ġt", "he")]
EOS = "<|endoftext|>"
BOS = "<s>"
SIZES = {"d": 32, "H": 4, "KV": 2, "d_ff": 64, "L": 2, "ctx": 64}


def byte_symbols() -> list[str]:
    """GPT-2's printable stand-in for each byte, in byte order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    chars = {b: chr(b) for b in printable}
    moved = [b for b in range(256) if b not in chars]
    chars.update({b: chr(256 + n) for n, b in enumerate(moved)})
    return [chars[b] for b in range(256)]


def vocabulary() -> list[str]:
    return [*byte_symbols(), *("".join(m) for m in MERGES), EOS, BOS]


def draw(family: str, seed: int = 0, tied: bool = True, rounding=None) -> dict[str, np.ndarray]:
    """Random weights of a tiny model in Hugging Face's names and layouts, float32.

    ``family``: "llama" (GQA), "qwen2" (GQA, Q/K/V biases) or "gpt2". ``rounding`` maps
    each array to the values the file will hold (float16, bfloat16 or a quantisation),
    so the reference reads exactly what the model does.
    """
    rng = np.random.default_rng(seed)
    d, H, KV, d_ff, L = SIZES["d"], SIZES["H"], SIZES["KV"], SIZES["d_ff"], SIZES["L"]
    V, d_k = len(vocabulary()), SIZES["d"] // SIZES["H"]

    def r(*shape, scale=0.3):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    def gain(n):
        return (1 + 0.1 * rng.standard_normal(n)).astype(np.float32)

    a: dict[str, np.ndarray] = {}
    if family == "gpt2":
        a["wte.weight"], a["wpe.weight"] = r(V, d), r(SIZES["ctx"], d)
        for n in range(L):
            b = f"h.{n}."
            a |= {b + "ln_1.weight": gain(d), b + "ln_1.bias": r(d, scale=0.1),
                  b + "attn.c_attn.weight": r(d, 3 * d), b + "attn.c_attn.bias": r(3 * d),
                  b + "attn.c_proj.weight": r(d, d), b + "attn.c_proj.bias": r(d),
                  b + "ln_2.weight": gain(d), b + "ln_2.bias": r(d, scale=0.1),
                  b + "mlp.c_fc.weight": r(d, d_ff), b + "mlp.c_fc.bias": r(d_ff),
                  b + "mlp.c_proj.weight": r(d_ff, d), b + "mlp.c_proj.bias": r(d)}
        a["ln_f.weight"], a["ln_f.bias"] = gain(d), r(d, scale=0.1)
    else:
        a["model.embed_tokens.weight"] = r(V, d)
        for n in range(L):
            b = f"model.layers.{n}."
            a |= {b + "input_layernorm.weight": gain(d),
                  b + "self_attn.q_proj.weight": r(H * d_k, d),
                  b + "self_attn.k_proj.weight": r(KV * d_k, d),
                  b + "self_attn.v_proj.weight": r(KV * d_k, d),
                  b + "self_attn.o_proj.weight": r(d, H * d_k),
                  b + "post_attention_layernorm.weight": gain(d),
                  b + "mlp.gate_proj.weight": r(d_ff, d), b + "mlp.up_proj.weight": r(d_ff, d),
                  b + "mlp.down_proj.weight": r(d, d_ff)}
            if family == "qwen2":
                a |= {b + f"self_attn.{p}_proj.bias": r(n_ * d_k)
                      for p, n_ in (("q", H), ("k", KV), ("v", KV))}
        a["model.norm.weight"] = gain(d)
        if not tied:
            a["lm_head.weight"] = r(V, d)
    if rounding is not None:
        a = {k: rounding(k, v) for k, v in a.items()}
    return a


def hf_config(family: str, tied: bool = True, rope_style: str = "theta", **extra) -> dict:
    d, H, KV, d_ff, L = SIZES["d"], SIZES["H"], SIZES["KV"], SIZES["d_ff"], SIZES["L"]
    V = len(vocabulary())
    if family == "gpt2":
        return {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_layer": L,
                "n_embd": d, "n_head": H, "n_positions": SIZES["ctx"], "n_inner": d_ff,
                "vocab_size": V, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new",
                "eos_token_id": V - 2, **extra}
    arch = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM",
            "mistral": "MistralForCausalLM"}[family]
    c = {"architectures": [arch], "hidden_size": d, "intermediate_size": d_ff,
         "num_hidden_layers": L, "num_attention_heads": H, "num_key_value_heads": KV,
         "rms_norm_eps": 1e-6, "max_position_embeddings": SIZES["ctx"], "vocab_size": V,
         "hidden_act": "silu", "tie_word_embeddings": tied, "eos_token_id": V - 2}
    if rope_style == "theta":
        c["rope_theta"] = 10000.0
    else:  # transformers 5
        c["rope_parameters"] = {"rope_theta": 10000.0, "rope_type": "default"}
    return {**c, **extra}


def tokenizer(bos: bool = False):
    """A byte-level BPE over :func:`vocabulary`, with BOS added by its post-processor when
    ``bos`` (as Llama's tokenizer.json does)."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors

    vocab = {t: i for i, t in enumerate(vocabulary())}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=MERGES))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(EOS, special=True, normalized=False),
                            AddedToken(BOS, special=True, normalized=False)])
    if bos:
        tok.post_processor = processors.TemplateProcessing(
            single=f"{BOS} $A", special_tokens=[(BOS, vocab[BOS])])
    return tok


def write_safetensors_bf16(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """The safetensors format by hand (safetensors' NumPy API has no bfloat16): 8 bytes of
    header length, the JSON header, the data; each float32 cut to its top 16 bits (the
    arrays are already bfloat16 values, so nothing is lost)."""
    header, blobs, offset = {}, [], 0
    for name, a in arrays.items():
        raw = (np.ascontiguousarray(a, np.float32).view(np.uint32) >> 16).astype("<u2").tobytes()
        header[name] = {"dtype": "BF16", "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def write_hf(folder: Path, family: str, arrays: dict[str, np.ndarray], config: dict,
             dtype: str = "F32", shards: int = 1, bos: bool = False) -> Path:
    """A Hugging Face folder: config.json, tokenizer.json, the weights in ``shards`` files
    (with model.safetensors.index.json when more than one)."""
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    tokenizer(bos).save(str(folder / "tokenizer.json"))
    names = list(arrays)
    parts = [names[i::shards] for i in range(shards)]
    weight_map = {}
    for i, part in enumerate(parts):
        file = ("model.safetensors" if shards == 1
                else f"model-{i + 1:05d}-of-{shards:05d}.safetensors")
        chunk = {n: arrays[n] for n in part}
        if dtype == "BF16":
            write_safetensors_bf16(folder / file, chunk)
        else:
            save_file({n: a.astype(np.float16 if dtype == "F16" else np.float32)
                       for n, a in chunk.items()}, str(folder / file))
        weight_map |= {n: file for n in part}
    if shards > 1:
        (folder / "model.safetensors.index.json").write_text(
            json.dumps({"metadata": {}, "weight_map": weight_map}))
    return folder


def pairs_order(w: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's converter's permutation of W_Q or W_K rows (out, in): each head's
    halves (i, i + d_k/2) become adjacent pairs (2i, 2i + 1)."""
    d_k = w.shape[0] // heads
    return w.reshape(heads, 2, d_k // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def write_gguf(path: Path, family: str, arrays: dict[str, np.ndarray], tied: bool = True,
               tensor_type=None, arch: str | None = None, pre: str = "gpt-2",
               tokenizer_model: str = "gpt2", extra=None) -> Path:
    """The same weights as a GGUF, as llama.cpp's converter writes them. ``tensor_type``
    (a gguf.GGMLQuantizationType) stores the matrices in it; norms stay F32."""
    import gguf

    H, KV, d = SIZES["H"], SIZES["KV"], SIZES["d"]
    arch = arch or family
    w = gguf.GGUFWriter(str(path), arch)
    w.add_block_count(SIZES["L"])
    w.add_context_length(SIZES["ctx"])
    w.add_embedding_length(d)
    w.add_feed_forward_length(SIZES["d_ff"])
    w.add_head_count(H)
    if family == "gpt2":
        w.add_layer_norm_eps(1e-5)
    else:
        w.add_head_count_kv(KV)
        w.add_layer_norm_rms_eps(1e-6)
        w.add_rope_freq_base(10000.0)
        w.add_rope_dimension_count(d // H)
    w.add_tokenizer_model(tokenizer_model)
    w.add_tokenizer_pre(pre)
    vocab = vocabulary()
    w.add_token_list(vocab)
    w.add_token_types([1] * 256 + [1] * len(MERGES) + [3, 3])
    w.add_token_merges([" ".join(m) for m in MERGES])
    w.add_eos_token_id(vocab.index(EOS))
    w.add_bos_token_id(vocab.index(BOS))
    w.add_add_bos_token(False)
    for key, value in (extra or {}).items():
        w.add_uint32(key, value)

    def put(name: str, a: np.ndarray) -> None:
        if tensor_type is not None and a.ndim == 2:
            w.add_tensor(name, gguf.quants.quantize(a, tensor_type), raw_dtype=tensor_type)
        else:
            w.add_tensor(name, np.ascontiguousarray(a, np.float32))

    for name, a in gguf_tensors(family, arrays, tied).items():
        put(name, a)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def gguf_tensors(family: str, a: dict[str, np.ndarray], tied: bool = True) -> dict:
    """Hugging Face's arrays under llama.cpp's names and layouts."""
    H, KV, L = SIZES["H"], SIZES["KV"], SIZES["L"]
    t: dict[str, np.ndarray] = {}
    if family == "gpt2":
        t |= {"token_embd.weight": a["wte.weight"], "position_embd.weight": a["wpe.weight"],
              "output_norm.weight": a["ln_f.weight"], "output_norm.bias": a["ln_f.bias"]}
        for n in range(L):
            b, g = f"h.{n}.", f"blk.{n}."
            for ours, theirs in (("attn_norm", "ln_1"), ("ffn_norm", "ln_2")):
                t[g + ours + ".weight"] = a[b + theirs + ".weight"]
                t[g + ours + ".bias"] = a[b + theirs + ".bias"]
            for ours, theirs in (("attn_qkv", "attn.c_attn"), ("attn_output", "attn.c_proj"),
                                 ("ffn_up", "mlp.c_fc"), ("ffn_down", "mlp.c_proj")):
                t[g + ours + ".weight"] = a[b + theirs + ".weight"].T  # Conv1D -> (out, in)
                t[g + ours + ".bias"] = a[b + theirs + ".bias"]
        return t
    t["token_embd.weight"] = a["model.embed_tokens.weight"]
    t["output_norm.weight"] = a["model.norm.weight"]
    if not tied:
        t["output.weight"] = a["lm_head.weight"]
    permute = family == "llama"  # llama.cpp turns a Llama's pairs; Qwen2's halves stay
    for n in range(L):
        b, g = f"model.layers.{n}.", f"blk.{n}."
        q, k = a[b + "self_attn.q_proj.weight"], a[b + "self_attn.k_proj.weight"]
        t |= {g + "attn_norm.weight": a[b + "input_layernorm.weight"],
              g + "attn_q.weight": pairs_order(q, H) if permute else q,
              g + "attn_k.weight": pairs_order(k, KV) if permute else k,
              g + "attn_v.weight": a[b + "self_attn.v_proj.weight"],
              g + "attn_output.weight": a[b + "self_attn.o_proj.weight"],
              g + "ffn_norm.weight": a[b + "post_attention_layernorm.weight"],
              g + "ffn_gate.weight": a[b + "mlp.gate_proj.weight"],
              g + "ffn_up.weight": a[b + "mlp.up_proj.weight"],
              g + "ffn_down.weight": a[b + "mlp.down_proj.weight"]}
        if family == "qwen2":
            t |= {g + f"attn_{p}.bias": a[b + f"self_attn.{p}_proj.bias"] for p in "qkv"}
    return t


# ---- the reference: the equations, position by position, in float64 -----------------------

def reference(family: str, a: dict[str, np.ndarray], ids: list[int], tied: bool = True,
              eps: float | None = None, base: float = 10000.0):
    """Logits (T, V) and attention weights (L, H, T, T) of Hugging Face's equations, with
    loops over positions, heads and keys."""
    A = {k: v.astype(np.float64) for k, v in a.items()}
    d, H, L = SIZES["d"], SIZES["H"], SIZES["L"]
    KV = H if family == "gpt2" else SIZES["KV"]
    d_k, T = d // H, len(ids)
    gpt2 = family == "gpt2"
    eps = eps if eps is not None else (1e-5 if gpt2 else 1e-6)

    def rms(x, g):
        return x / math.sqrt(sum(v * v for v in x) / len(x) + eps) * g

    def layer(x, g, b):
        mu = sum(x) / len(x)
        var = sum((v - mu) ** 2 for v in x) / len(x)
        return (x - mu) / math.sqrt(var + eps) * g + b

    def rotate(u, t):  # rotate_half: pair i with i + d_k/2
        out = u.copy()
        for i in range(d_k // 2):
            angle = t * base ** (-2 * i / d_k)
            c, s = math.cos(angle), math.sin(angle)
            out[i] = u[i] * c - u[i + d_k // 2] * s
            out[i + d_k // 2] = u[i + d_k // 2] * c + u[i] * s
        return out

    def gelu(z):
        return 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3)))

    if gpt2:
        xs = [A["wte.weight"][i] + A["wpe.weight"][t] for t, i in enumerate(ids)]
    else:
        xs = [A["model.embed_tokens.weight"][i].copy() for i in ids]
    att = np.zeros((L, H, T, T))
    for n in range(L):
        if gpt2:
            b = f"h.{n}."
            hs = [layer(x, A[b + "ln_1.weight"], A[b + "ln_1.bias"]) for x in xs]
            qkv = [h @ A[b + "attn.c_attn.weight"] + A[b + "attn.c_attn.bias"] for h in hs]
            qs = [v[:d] for v in qkv]
            ks = [v[d:2 * d] for v in qkv]
            vs = [v[2 * d:] for v in qkv]
        else:
            b = f"model.layers.{n}."
            hs = [rms(x, A[b + "input_layernorm.weight"]) for x in xs]

            def proj(p, h, b=b):
                y = A[b + f"self_attn.{p}_proj.weight"] @ h
                return y + A[b + f"self_attn.{p}_proj.bias"] if family == "qwen2" else y

            qs = [proj("q", h) for h in hs]
            ks = [proj("k", h) for h in hs]
            vs = [proj("v", h) for h in hs]
        outs = []
        for t in range(T):
            heads = []
            for h in range(H):
                g = h // (H // KV)
                q = qs[t][h * d_k:(h + 1) * d_k]
                if not gpt2:
                    q = rotate(q, t)
                scores = []
                for j in range(t + 1):
                    k = ks[j][g * d_k:(g + 1) * d_k]
                    if not gpt2:
                        k = rotate(k, j)
                    scores.append(float(q @ k) / math.sqrt(d_k))
                top = max(scores)
                e = [math.exp(s - top) for s in scores]
                p = [v / sum(e) for v in e]
                att[n, h, t, :t + 1] = p
                heads.append(sum(p[j] * vs[j][g * d_k:(g + 1) * d_k] for j in range(t + 1)))
            outs.append(np.concatenate(heads))
        if gpt2:
            xs = [x + o @ A[b + "attn.c_proj.weight"] + A[b + "attn.c_proj.bias"]
                  for x, o in zip(xs, outs, strict=True)]
            hs = [layer(x, A[b + "ln_2.weight"], A[b + "ln_2.bias"]) for x in xs]
            xs = [x + gelu(h @ A[b + "mlp.c_fc.weight"] + A[b + "mlp.c_fc.bias"])
                  @ A[b + "mlp.c_proj.weight"] + A[b + "mlp.c_proj.bias"]
                  for x, h in zip(xs, hs, strict=True)]
        else:
            xs = [x + A[b + "self_attn.o_proj.weight"] @ o for x, o in zip(xs, outs, strict=True)]
            hs = [rms(x, A[b + "post_attention_layernorm.weight"]) for x in xs]

            def swiglu(h, b=b):
                gate = A[b + "mlp.gate_proj.weight"] @ h
                return A[b + "mlp.down_proj.weight"] @ (gate / (1 + np.exp(-gate))
                                                         * (A[b + "mlp.up_proj.weight"] @ h))

            xs = [x + swiglu(h) for x, h in zip(xs, hs, strict=True)]
    if gpt2:
        finals = [layer(x, A["ln_f.weight"], A["ln_f.bias"]) for x in xs]
        unembed = A["wte.weight"]
    else:
        finals = [rms(x, A["model.norm.weight"]) for x in xs]
        unembed = A["model.embed_tokens.weight"] if tied else A["lm_head.weight"]
    return np.array([unembed @ f for f in finals]), att
