r"""What a causal decoder is made of: its sizes and the switches that tell one family from another.

SmolLM2, Llama, Qwen2, Mistral and GPT-2 are one design, a stack of pre-norm blocks
(:math:`x \leftarrow x + \mathrm{Attn}(\mathrm{Norm}(x))`, then
:math:`x \leftarrow x + \mathrm{FFN}(\mathrm{Norm}(x))`), that differ in a few named
choices. :class:`LMConfig` holds the sizes and those choices; :mod:`attncore.lm.decoder`
runs every family with one ``forward`` that reads them, each choice in one line. This is
what TransformerLens's ``HookedTransformerConfig`` does for its many models, and what
lesson 10's encoder-against-decoder table shows:

=================  ======================  ======================  ======================
switch             Llama, SmolLM2,         Qwen2                   GPT-2
                   Mistral
=================  ======================  ======================  ======================
``norm``           ``"rms"`` (RMSNorm)     ``"rms"``               ``"layer"`` (LayerNorm,
                                                                   with a bias)
``positions``      ``"rope_pairs"`` (GGUF) ``"rope_halves"``       ``"learned"`` (a table
                   or ``"rope_halves"``                            added to the tokens)
                   (Hugging Face)
``mlp``            ``"swiglu"``            ``"swiglu"``            ``"gelu"`` (tanh form)
``qkv_bias``       no                      yes                     yes
``biases``         no                      no                      yes (every linear map
                                                                   and norm)
``n_kv_heads``     fewer than ``n_heads``  fewer                   as many (every head its
                   (grouped-query)                                 own keys and values)
``tied_output``    as the file says        as the file says        yes
``add_bos``        as the tokenizer says   no                      no
=================  ======================  ======================  ======================
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: The values each switch may take, with what a reader sees in a table.
NORMS = {"rms": "RMSNorm (no mean, no bias)", "layer": "LayerNorm (mean and bias)"}
POSITIONS = {
    "rope_pairs": "RoPE on adjacent pairs (x₂ᵢ, x₂ᵢ₊₁), as llama-family GGUF files (llama.cpp's "
                  "format) lay out Q and K",
    "rope_halves": "RoPE on halves (xᵢ, xᵢ₊d/2), Hugging Face's rotate_half",
    "learned": "learned absolute positions, added to the token embeddings",
}
MLPS = {"swiglu": "SwiGLU: W₂(SiLU(W_g h) ⊙ W_u h), SiLU(z) = z·σ(z)",
        "gelu": "GELU (tanh form): W₂ GELU(W₁ h + b₁) + b₂"}


ROPE_SCALINGS = {"none": "none", "llama3": "Llama 3's: long wavelengths slowed down"}


@dataclass(frozen=True)
class LMConfig:
    """The sizes of a decoder and the switches that describe its family.

    Every switch has the value of SmolLM2 (a Llama) by default, so a Llama's config needs
    only its sizes. ``norm_eps`` is the ε of the model's norm, RMSNorm's or LayerNorm's.
    """

    n_layers: int  # L
    n_heads: int  # H, query heads
    n_kv_heads: int  # key/value heads, each read by H / n_kv_heads query heads
    d_model: int
    d_ff: int
    vocab_size: int
    context_length: int
    norm_eps: float
    rope_base: float
    family: str = "llama"  # "llama", "qwen2" or "gpt2": the name a reader knows it by
    norm: str = "rms"
    positions: str = "rope_pairs"
    mlp: str = "swiglu"
    qkv_bias: bool = False  # biases on the Q, K and V maps only (Qwen2)
    biases: bool = False  # biases on every linear map and every norm (GPT-2)
    tied_output: bool = True  # the output matrix is the token embedding's transpose
    add_bos: bool = False  # a prompt starts with the BOS token, as the tokenizer says
    bos_id: int = -1  # -1: none
    head_dim: int = 0  # d_k when the file gives it; 0: d_model / H
    rope_scaling: str = "none"

    def __post_init__(self) -> None:
        for name in ("n_layers", "n_heads", "n_kv_heads", "d_model", "d_ff", "vocab_size",
                     "context_length"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number >= 1; got {value!r}")
        for name, allowed in (("norm", NORMS), ("positions", POSITIONS), ("mlp", MLPS),
                              ("rope_scaling", ROPE_SCALINGS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {sorted(allowed)}; got "
                                 f"{getattr(self, name)!r}")
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_heads ({self.n_heads}) must be a multiple of n_kv_heads "
                             f"({self.n_kv_heads}): each KV head serves a whole group")
        if not self.head_dim and self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) is not a multiple of n_heads "
                             f"({self.n_heads}): give head_dim")
        if self.positions != "learned" and self.d_head % 2:
            raise ValueError(f"RoPE turns pairs of numbers: d_k must be even; got {self.d_head}")
        if self.add_bos and self.bos_id < 0:
            raise ValueError("add_bos needs bos_id, the BOS token's id")

    @property
    def d_head(self) -> int:
        """d_k = d_v: ``head_dim`` when the model states it, else d_model / H (64 for
        SmolLM2)."""
        return self.head_dim or self.d_model // self.n_heads

    @property
    def group(self) -> int:
        """Query heads per key/value head (3 for SmolLM2, 1 for GPT-2)."""
        return self.n_heads // self.n_kv_heads

    def kv_head_of(self, head: int) -> int:
        """The key/value head that query head ``head`` reads (both from 0): head // group,
        as llama.cpp and Hugging Face's ``repeat_kv`` order them."""
        return head // self.group

    @property
    def uses_rope(self) -> bool:
        return self.positions in ("rope_pairs", "rope_halves")

    @property
    def attention_kind(self) -> str:
        """"multi-head", "grouped-query" or "multi-query", from the number of KV heads."""
        if self.n_kv_heads == self.n_heads:
            return "multi-head"
        return "multi-query" if self.n_kv_heads == 1 else "grouped-query"

    def describe(self) -> dict[str, str]:
        """The switches in words, one line each: what lesson 10's encoder-against-decoder
        table shows for this model."""
        bias = ("on every linear map and norm" if self.biases else
                "on Q, K and V only" if self.qkv_bias else "none")
        return {
            "family": self.family,
            "norm": f"{NORMS[self.norm]}, before each block (pre-LN)",
            "positions": POSITIONS[self.positions] + (
                "" if not self.uses_rope else f", base {self.rope_base:g}"
                + ("" if self.rope_scaling == "none"
                   else f", scaling: {ROPE_SCALINGS[self.rope_scaling]}")),
            "attention": (f"causal, {self.attention_kind}: {self.n_heads} query heads, "
                          f"{self.n_kv_heads} key/value heads of d_k = {self.d_head}"),
            "feed-forward": f"{MLPS[self.mlp]}, d_ff = {self.d_ff}",
            "biases": bias,
            "output matrix": ("tied: the token embedding, transposed" if self.tied_output
                              else "its own matrix"),
            "BOS token": "added before every prompt" if self.add_bos else "not added",
        }


@dataclass(frozen=True, eq=False)
class LMWeights:
    """Every float32 weight, stacked over the L layers and stored (in, out), so that each
    product reads as ``x @ W``.

    Shapes (SmolLM2's numbers: L = 30, d = 576, H = 9 query heads and 3 KV heads of
    d_k = 64, d_ff = 1536):

    token_embd : (V, d), the token embedding: token i's vector is row i
    output : (d, V), the output matrix, kept transposed so that logits = x @ output reads
        it row by row (for one token that ran at about 19 GB/s here against 11 for
        x @ token_embdᵀ); when the model ties it, the same numbers as token_embd
    attn_norm, ffn_norm : (L, d) the norms' gains before attention and before the FFN
    attn_qkv : (L, d, (H + 2·KV)·d_k) = (L, d, 960): W_Q's columns, then W_K's, then W_V's
    attn_output : (L, H·d_k, d), W_O
    ffn_gate_up : (L, d, 2·d_ff) for SwiGLU (the gate's columns, then the up projection's);
        (L, d, d_ff) for GELU (its one input matrix)
    ffn_down : (L, d_ff, d)
    output_norm : (d,) the final norm's gain

    and, only in the families that have them (None otherwise):

    pos_embd : (context, d), learned absolute positions (GPT-2)
    attn_qkv_bias : (L, (H + 2·KV)·d_k) (Qwen2, GPT-2)
    attn_norm_bias, ffn_norm_bias : (L, d); output_norm_bias : (d,) (LayerNorm's shifts)
    attn_output_bias, ffn_down_bias : (L, d); ffn_gate_up_bias : (L, d_ff) (GPT-2)
    rope_factors : (d_k / 2,) each RoPE frequency is divided by (Llama 3's scaling)

    W_Q and W_K are laid out for the config's ``positions``: on adjacent pairs (2i, 2i + 1)
    of each head as llama.cpp rotates them (its converter permutes Hugging Face's rows to
    that order), or on halves (i, i + d_k/2) as Hugging Face's files hold them.
    """

    token_embd: np.ndarray
    output: np.ndarray
    attn_norm: np.ndarray
    attn_qkv: np.ndarray
    attn_output: np.ndarray
    ffn_norm: np.ndarray
    ffn_gate_up: np.ndarray
    ffn_down: np.ndarray
    output_norm: np.ndarray
    pos_embd: np.ndarray | None = None
    attn_qkv_bias: np.ndarray | None = None
    attn_norm_bias: np.ndarray | None = None
    attn_output_bias: np.ndarray | None = None
    ffn_norm_bias: np.ndarray | None = None
    ffn_gate_up_bias: np.ndarray | None = None
    ffn_down_bias: np.ndarray | None = None
    output_norm_bias: np.ndarray | None = None
    rope_factors: np.ndarray | None = None

    def arrays(self) -> dict[str, np.ndarray]:
        """Every array held, by name (the optional ones only when present)."""
        return {name: a for name, a in vars(self).items() if a is not None}

    @property
    def nbytes(self) -> int:
        """Bytes of every array held (a tied embedding counted twice, as it is kept twice)."""
        return sum(a.nbytes for a in self.arrays().values())

    @property
    def bytes_per_token(self) -> int:
        """Bytes one token's pass has to read from memory: every weight but the embedding
        tables, of which it reads one row (SmolLM2's 538 MB of float32 numbers)."""
        tables = self.token_embd.nbytes + (0 if self.pos_embd is None else self.pos_embd.nbytes)
        return self.nbytes - tables


def expected_shapes(cfg: LMConfig) -> dict[str, tuple[int, ...]]:
    """The shape of every array :class:`LMWeights` holds for ``cfg``, by name."""
    L, d, d_ff, d_k, V = cfg.n_layers, cfg.d_model, cfg.d_ff, cfg.d_head, cfg.vocab_size
    qkv = (cfg.n_heads + 2 * cfg.n_kv_heads) * d_k
    ffn_in = 2 * d_ff if cfg.mlp == "swiglu" else d_ff
    shapes = {"token_embd": (V, d), "output": (d, V), "attn_norm": (L, d),
              "attn_qkv": (L, d, qkv), "attn_output": (L, cfg.n_heads * d_k, d),
              "ffn_norm": (L, d), "ffn_gate_up": (L, d, ffn_in), "ffn_down": (L, d_ff, d),
              "output_norm": (d,)}
    if cfg.positions == "learned":
        shapes["pos_embd"] = (cfg.context_length, d)
    if cfg.qkv_bias or cfg.biases:
        shapes["attn_qkv_bias"] = (L, qkv)
    if cfg.biases:
        shapes.update(attn_norm_bias=(L, d), attn_output_bias=(L, d), ffn_norm_bias=(L, d),
                      ffn_gate_up_bias=(L, ffn_in), ffn_down_bias=(L, d),
                      output_norm_bias=(d,))
    if cfg.rope_scaling != "none":
        shapes["rope_factors"] = (d_k // 2,)
    return shapes


def parameter_count(cfg: LMConfig) -> int:
    """The model's parameters: every array's numbers, a tied output matrix counted once
    (it is the embedding) and RoPE's fixed factors not at all."""
    shapes = expected_shapes(cfg)
    shapes.pop("rope_factors", None)
    if cfg.tied_output:
        shapes.pop("output")
    return sum(math.prod(s) for s in shapes.values())
