r"""Lesson 11: what attention costs when a real model writes, and how real systems cope.

* **The KV cache.** A decoder writes one token at a time; each new token's query needs
  the keys and values of every earlier token, in every layer. Keeping them turns each
  step into a pass over one token instead of the whole text, at the price of memory:

  .. math:: \text{bytes} = 2 \cdot L \cdot n_{KV} \cdot d_k \cdot T \cdot B \cdot b

  (keys and values, layers, KV heads, head size, tokens, batch, bytes per number).
* **Grouped-query attention.** SmolLM2's 9 query heads share 3 KV heads, a third of the
  cache of multi-head attention (9 KV heads); multi-query attention shares 1.
  :func:`merge_kv_heads` averages the 3 KV heads into 1 without retraining, the GQA
  paper's starting point for converting a model (it then trains further).
* **Sliding windows and attention sinks** (StreamingLLM): each token sees only the last W
  tokens, plus the first S. The perplexity of a text under each mask says what the model
  loses.

Perplexity is e^(mean cross-entropy) of each next token, over the text's tokens 2 .. N.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from .._checks import whole_number
from ..masks import sliding_window_mask
from .decoder import forward
from .files import LMConfig, LMWeights, SmolLM, model
from .generation import Sampling, generate_steps
from .heads import token_losses
from .tokens import decode, encode
from .trace import as_ids

#: The project's own text for perplexity: original prose, 732 tokens.
TEXT_PATH = Path(__file__).with_name("data") / "prose.txt"
DEFAULT_TOKENS = 512
MAX_TOKENS = 1024  # a pass over 1024 tokens holds 200 MB of logits
BYTES_FLOAT32 = 4


def default_text() -> str:
    """The project's own prose (written for Attention Lab), shipped with the package."""
    return TEXT_PATH.read_text(encoding="utf-8")


def cache_bytes(cfg: LMConfig, tokens: int, batch: int = 1, kv_heads: int | None = None,
                bytes_per_number: int = BYTES_FLOAT32) -> int:
    """2 · layers · KV heads · head size · tokens · batch · bytes per number."""
    kv = cfg.n_kv_heads if kv_heads is None else kv_heads
    return 2 * cfg.n_layers * kv * cfg.d_head * tokens * batch * bytes_per_number


@dataclass(frozen=True)
class PublishedConfig:
    """The attention sizes of a published model, from its config.json."""

    name: str
    layers: int
    query_heads: int
    kv_heads: int
    head_size: int

    @property
    def kind(self) -> str:
        if self.kv_heads == self.query_heads:
            return "multi-head"
        return "multi-query" if self.kv_heads == 1 else "grouped-query"

    def cache_bytes(self, tokens: int, batch: int = 1, bytes_per_number: int = 2) -> int:
        return 2 * self.layers * self.kv_heads * self.head_size * tokens * batch * bytes_per_number


#: Larger models, as their config.json files on Hugging Face state them (num_hidden_layers,
#: num_attention_heads, num_key_value_heads, hidden_size / num_attention_heads).
PUBLISHED = (
    PublishedConfig("Llama 2 7B", 32, 32, 32, 128),
    PublishedConfig("Llama 2 70B", 80, 64, 8, 128),
    PublishedConfig("Llama 3 8B", 32, 32, 8, 128),
    PublishedConfig("Mistral 7B v0.1", 32, 32, 8, 128),
    PublishedConfig("Falcon 7B", 32, 71, 1, 64),
)


@dataclass(frozen=True)
class CacheComparison:
    """Greedy generation with and without the KV cache, step by step.

    ``contexts`` (steps,) is the number of tokens each pass read the model over (the
    context), ``seconds_*`` (steps,) each pass's time; ``max_logit_diff`` the largest
    difference of any logit between the two.
    """

    prompt_tokens: int
    ids_cached: list[int]
    ids_uncached: list[int]
    max_logit_diff: float
    contexts: np.ndarray
    seconds_cached_each: np.ndarray
    seconds_uncached_each: np.ndarray
    cache_bytes: int  # held by the cache after the last step
    cache_bytes_formula: int
    text: str

    @property
    def same_tokens(self) -> bool:
        return self.ids_cached == self.ids_uncached

    @property
    def seconds_cached(self) -> float:
        return float(self.seconds_cached_each.sum())

    @property
    def seconds_uncached(self) -> float:
        return float(self.seconds_uncached_each.sum())


MAX_COMPARISON_STEPS = 64


def cache_comparison(text_or_ids, steps: int) -> CacheComparison:
    """Write ``steps`` tokens greedily twice, with the KV cache and without (no early stop
    at an end token, so both runs have the same length)."""
    steps = whole_number(steps, "steps", 1, MAX_COMPARISON_STEPS)
    m = model()
    _, ids = as_ids(m, text_or_ids)
    greedy = Sampling()
    cached = list(generate_steps(ids, steps, greedy, use_cache=True, stop_at_end=False, m=m))
    plain = list(generate_steps(ids, steps, greedy, use_cache=False, stop_at_end=False, m=m))
    diff = max(float(np.max(np.abs(a.logits - b.logits))) for a, b in
               zip(cached, plain, strict=True))
    # after the last step the cache holds every token that pass read (its context); the
    # token it chose has not been read yet
    held = cache_bytes(m.config, cached[-1].context)
    return CacheComparison(
        prompt_tokens=int(ids.size), ids_cached=[s.id for s in cached],
        ids_uncached=[s.id for s in plain], max_logit_diff=diff,
        contexts=np.array([s.context for s in cached]),
        seconds_cached_each=np.array([s.seconds for s in cached]),
        seconds_uncached_each=np.array([s.seconds for s in plain]),
        cache_bytes=cached[-1].cache_bytes, cache_bytes_formula=held,
        text=decode(m, [s.id for s in cached]))


def merge_kv_heads(w: LMWeights, cfg: LMConfig) -> LMWeights:
    """The weights with every layer's KV heads replaced by their mean: W_K and W_V of the
    3 heads averaged into one, which all 9 query heads then read (multi-query attention,
    without retraining). Shares every other array with ``w``."""
    H, KV, d_k = cfg.n_heads, cfg.n_kv_heads, cfg.d_head
    qkv = np.array(w.attn_qkv)  # (L, d, (H + 2 KV) d_k), a private copy
    for start in (H * d_k, (H + KV) * d_k):  # W_K's columns, then W_V's
        block = qkv[:, :, start:start + KV * d_k]
        heads = block.reshape(*block.shape[:2], KV, d_k)  # (L, d, KV, d_k)
        block[...] = np.broadcast_to(heads.mean(axis=2, keepdims=True), heads.shape
                                     ).reshape(block.shape)
    return replace(w, attn_qkv=qkv)


def text_ids(m: SmolLM, text: str, tokens: int) -> np.ndarray:
    """The first ``tokens`` tokens of ``text`` (2 .. MAX_TOKENS); ValueError if it has fewer
    than 2."""
    tokens = whole_number(tokens, "tokens", 2, MAX_TOKENS)
    if not isinstance(text, str):
        raise ValueError(f"text must be a string; got {type(text).__name__}")
    ids = encode(m, text)[:tokens]
    if ids.size < 2:
        raise ValueError("the text needs at least 2 tokens to measure a perplexity")
    return ids


def perplexity(m: SmolLM, ids: np.ndarray, mask: np.ndarray | None = None,
               weights: LMWeights | None = None) -> float:
    """e^(mean cross-entropy in nats) of tokens 2 .. N, each predicted from those before
    it (under ``mask``, causal by default; with ``weights``, the model's by default)."""
    p = forward(m, ids, mask=mask, weights=weights, keep_cache=False)
    return float(np.exp(token_losses(p.logits, ids).mean()))


@dataclass(frozen=True)
class WindowResult:
    """Perplexity of the first ``tokens`` tokens of a text with full causal attention, with
    a sliding window of ``window`` tokens, and with the window plus ``sinks`` first tokens."""

    tokens: int
    window_size: int
    sinks: int
    dense: float
    window: float
    window_sinks: float


def window_perplexities(text: str, window: int, sinks: int, tokens: int = DEFAULT_TOKENS
                        ) -> WindowResult:
    m = model()
    ids = text_ids(m, text, tokens)
    window = whole_number(window, "window", 1, MAX_TOKENS)
    sinks = whole_number(sinks, "sinks", 0, MAX_TOKENS)
    T = ids.size
    return WindowResult(
        tokens=T, window_size=window, sinks=sinks, dense=perplexity(m, ids),
        window=perplexity(m, ids, sliding_window_mask(T, window)),
        window_sinks=perplexity(m, ids, sliding_window_mask(T, window, sinks=sinks)))


@dataclass(frozen=True)
class MergedResult:
    tokens: int
    gqa: float
    merged: float


def merged_kv_perplexity(text: str, tokens: int = DEFAULT_TOKENS) -> MergedResult:
    """Perplexity with the model's 3 KV heads, and with them averaged into one."""
    m = model()
    ids = text_ids(m, text, tokens)
    return MergedResult(tokens=int(ids.size), gqa=perplexity(m, ids),
                        merged=perplexity(m, ids, weights=merge_kv_heads(m.weights, m.config)))

