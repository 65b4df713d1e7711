"""Released decoders' configs as their files give them (SmolLM2's ε is a float32 in its
GGUF), for drawing their blocks and caches without loading them."""

from __future__ import annotations

from attncore.lm.config import LMConfig

SMOLLM2 = LMConfig(n_layers=30, n_heads=9, n_kv_heads=3, d_model=576, d_ff=1536,
                   vocab_size=49152, context_length=8192, norm_eps=9.999999747378752e-06,
                   rope_base=100000.0)
GPT2 = LMConfig(n_layers=12, n_heads=12, n_kv_heads=12, d_model=768, d_ff=3072,
                vocab_size=50257, context_length=1024, norm_eps=1e-5, rope_base=10000.0,
                family="gpt2", norm="layer", positions="learned", mlp="gelu", qkv_bias=True,
                biases=True)
QWEN2 = LMConfig(n_layers=24, n_heads=14, n_kv_heads=2, d_model=896, d_ff=4864,
                 vocab_size=151936, context_length=32768, norm_eps=1e-6, rope_base=1e6,
                 family="qwen2", positions="rope_halves", qkv_bias=True)
LLAMA32 = LMConfig(n_layers=16, n_heads=32, n_kv_heads=8, d_model=2048, d_ff=8192,
                   vocab_size=128256, context_length=131072, norm_eps=1e-5, rope_base=5e5,
                   head_dim=64, rope_scaling="llama3")  # the most heads: 32 sharing 8
RELEASED = {"SmolLM2": SMOLLM2, "GPT-2": GPT2, "Qwen2": QWEN2, "Llama 3.2": LLAMA32}
