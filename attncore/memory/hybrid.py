r"""Memory that grows against memory that does not: a KV cache against a fixed-size state.

A layer of full attention keeps the keys and values of every token (lesson 11's KV cache,
:func:`attncore.lm.inference.cache_bytes`):

.. math:: \text{bytes} = 2 \cdot L \cdot n_{KV} \cdot d_k \cdot T \cdot b

A layer of linear attention, of the delta rule or of Gated DeltaNet keeps one matrix
:math:`S` (d_v, d_k) per head instead, whatever T is: :math:`L \cdot H \cdot d_k \cdot
d_v \cdot b` bytes. :func:`cache_against_state` sets the two side by side for a model of
lesson 10 (one d_k × d_k state per key/value head: a state is made of keys and values only,
so query heads that share them share it); :data:`QWEN3_NEXT` is a released
hybrid, mostly Gated DeltaNet layers with one full-attention layer in four, whose memory
:func:`hybrid_memory` counts from its published config.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import whole_number
from ..lm.config import LMConfig
from ..lm.inference import cache_bytes

LINEAR_LAYER = "linear_attention"  # the names config.json's layer_types gives the layers
FULL_LAYER = "full_attention"
MAX_TOKENS = 2**40
BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}  # a torch_dtype's bytes a number


def _tokens(tokens) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(tokens))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"tokens must be one number or a list of them; got {tokens!r}")
    return np.array([whole_number(t, "each token count", 0, MAX_TOKENS) for t in arr.tolist()],
                    dtype=np.int64)


# --- A model of lesson 10 against a fixed-size state of the same width ------------------------

@dataclass(frozen=True)
class CacheAgainstState:
    """A model's KV cache against the state of linear-attention layers of the same width.

    tokens (c,) the context lengths T; cache_bytes (c,) the KV cache after T tokens
    (:func:`attncore.lm.inference.cache_bytes`); per_token the cache's bytes per token;
    state_numbers the numbers of a state with one d_k × d_k matrix per key/value head in
    every layer, L · n_KV · d_k · d_k (S is built from keys and values only, so the H / n_KV
    query heads that share a key/value head share its state), and state_bytes those numbers
    at the cache's bytes per number.
    """

    layers: int
    heads: int
    kv_heads: int
    d_head: int
    bytes_per_number: int
    tokens: np.ndarray
    cache_bytes: np.ndarray
    per_token: int
    state_numbers: int
    state_bytes: int

    @property
    def crossover(self) -> int:
        """The fewest tokens whose cache holds at least as many bytes as the state:
        ⌈state / bytes per token⌉, that is ⌈d_k / 2⌉ (a token adds 2 d_k numbers per
        key/value head, a state holds d_k · d_k)."""
        return -(-self.state_bytes // self.per_token)


def cache_against_state(cfg: LMConfig, tokens, bytes_per_number: int = 4) -> CacheAgainstState:
    """The KV cache of the model ``cfg`` after each of ``tokens`` tokens, and the state of
    linear-attention layers with the same heads (L layers of n_KV key/value heads, each a
    d_k × d_k matrix), both at ``bytes_per_number`` (4: float32, as lesson 10 runs it).

    >>> from attncore.lm.config import LMConfig
    >>> cfg = LMConfig(30, 9, 3, 576, 1536, 49152, 8192, 1e-5, 1e5)
    >>> r = cache_against_state(cfg, [96])
    >>> r.per_token, r.state_bytes, r.crossover
    (46080, 1474560, 32)
    """
    b = whole_number(bytes_per_number, "bytes_per_number", 1, 16)
    t = _tokens(tokens)
    cache = np.array([cache_bytes(cfg, int(n), bytes_per_number=b) for n in t], dtype=np.int64)
    numbers = cfg.n_layers * cfg.n_kv_heads * cfg.d_head * cfg.d_head
    return CacheAgainstState(cfg.n_layers, cfg.n_heads, cfg.n_kv_heads, cfg.d_head, b, t,
                             cache, cache_bytes(cfg, 1, bytes_per_number=b), numbers,
                             numbers * b)


# --- A released hybrid ---------------------------------------------------------------------------

@dataclass(frozen=True)
class HybridConfig:
    """The memory-related fields of a hybrid model's config.json, under their own names.

    The default is Qwen3-Next-80B-A3B, as its model card and config.json on Hugging Face
    (Qwen/Qwen3-Next-80B-A3B-Instruct) state them: 48 layers, hidden size 2048, one
    full-attention layer in ``full_attention_interval`` = 4 (layer i, from 0, is full
    when (i + 1) % 4 == 0: 12 × (3 × Gated DeltaNet + 1 Gated Attention)); full attention
    with 16 query heads sharing 2 key/value heads of 256; Gated DeltaNet with 16 key heads
    and 32 value heads of 128, and a short convolution of kernel 4; 262,144 positions;
    weights in bfloat16 (``torch_dtype``, 2 bytes a number).
    """

    name: str = "Qwen3-Next-80B-A3B"
    num_hidden_layers: int = 48
    hidden_size: int = 2048
    full_attention_interval: int = 4
    num_attention_heads: int = 16
    num_key_value_heads: int = 2
    head_dim: int = 256
    linear_num_key_heads: int = 16
    linear_num_value_heads: int = 32
    linear_key_head_dim: int = 128
    linear_value_head_dim: int = 128
    linear_conv_kernel_dim: int = 4
    max_position_embeddings: int = 262144
    torch_dtype: str = "bfloat16"

    def __post_init__(self) -> None:
        for name in ("num_hidden_layers", "hidden_size", "full_attention_interval",
                     "num_attention_heads", "num_key_value_heads", "head_dim",
                     "linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim",
                     "linear_value_head_dim", "linear_conv_kernel_dim",
                     "max_position_embeddings"):
            whole_number(getattr(self, name), name, 1, MAX_TOKENS)
        if self.torch_dtype not in BYTES:
            raise ValueError(f"torch_dtype must be one of {sorted(BYTES)}; got "
                             f"{self.torch_dtype!r}")

    @property
    def fields(self) -> dict:
        """The config.json fields, by name, in the file's spelling."""
        return {k: v for k, v in self.__dict__.items() if k != "name"}

    @property
    def layer_types(self) -> tuple[str, ...]:
        """Each layer's kind, as config.json's ``layer_types`` names them: full attention
        where (i + 1) % full_attention_interval == 0, linear attention elsewhere."""
        return tuple(FULL_LAYER if (i + 1) % self.full_attention_interval == 0 else LINEAR_LAYER
                     for i in range(self.num_hidden_layers))

    @property
    def full_layers(self) -> int:
        return self.layer_types.count(FULL_LAYER)

    @property
    def linear_layers(self) -> int:
        return self.layer_types.count(LINEAR_LAYER)

    @property
    def bytes_per_number(self) -> int:
        return BYTES[self.torch_dtype]

    @property
    def kv_numbers_per_token(self) -> int:
        """Keys and values of one token in every full-attention layer: 2 · layers · n_KV ·
        head_dim."""
        return 2 * self.full_layers * self.num_key_value_heads * self.head_dim

    @property
    def state_numbers(self) -> int:
        """The Gated DeltaNet layers' states: one d_k × d_v matrix per value head, layers ·
        value heads · d_k · d_v (each key head serves value heads / key heads of them)."""
        return (self.linear_layers * self.linear_num_value_heads * self.linear_key_head_dim
                * self.linear_value_head_dim)

    @property
    def conv_channels(self) -> int:
        """The short convolution's channels in a Gated DeltaNet layer: its queries, keys and
        values, 2 · key heads · d_k + value heads · d_v."""
        return (2 * self.linear_num_key_heads * self.linear_key_head_dim
                + self.linear_num_value_heads * self.linear_value_head_dim)

    @property
    def conv_numbers(self) -> int:
        """The convolutions' state: the last kernel − 1 inputs of every channel, in every
        Gated DeltaNet layer."""
        return self.linear_layers * self.conv_channels * (self.linear_conv_kernel_dim - 1)


QWEN3_NEXT = HybridConfig()
#: Where :data:`QWEN3_NEXT`'s numbers come from.
QWEN3_NEXT_SOURCE = ("the model card and config.json of Qwen/Qwen3-Next-80B-A3B-Instruct on "
                     "Hugging Face")


@dataclass(frozen=True)
class HybridMemory:
    """What a hybrid keeps after T tokens, in bytes, against full attention in every layer.

    tokens (c,); cache_bytes (c,) the KV cache of its full-attention layers; state_bytes
    the Gated DeltaNet layers' states and conv_bytes their convolutions' (both the same at
    every T); total_bytes (c,) the three together; everywhere_bytes (c,) the KV cache if
    every layer were full attention (same heads). Every number at the config's bytes per
    number.
    """

    config: HybridConfig
    tokens: np.ndarray
    cache_bytes: np.ndarray
    state_bytes: int
    conv_bytes: int
    total_bytes: np.ndarray
    everywhere_bytes: np.ndarray

    @property
    def saving(self) -> np.ndarray:
        """(c,) full attention everywhere ÷ the hybrid's total."""
        return self.everywhere_bytes / self.total_bytes


def hybrid_memory(config: HybridConfig, tokens) -> HybridMemory:
    """The memory of ``config`` after each of ``tokens`` tokens (batch 1).

    >>> m = hybrid_memory(QWEN3_NEXT, [32768])
    >>> int(m.cache_bytes[0]), m.state_bytes, int(m.everywhere_bytes[0])
    (805306368, 37748736, 3221225472)
    """
    t = _tokens(tokens)
    b = config.bytes_per_number
    cache = t * config.kv_numbers_per_token * b
    everywhere = (t * 2 * config.num_hidden_layers * config.num_key_value_heads
                  * config.head_dim * b)
    state, conv = config.state_numbers * b, config.conv_numbers * b
    return HybridMemory(config, t, cache, state, conv, cache + state + conv, everywhere)
