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

import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from .._checks import whole_number
from ..cost import growth_exponent
from ..masks import sliding_window_mask
from ..measure import best_time
from ..results_cache import kept
from .decoder import forward
from .files import LanguageModel, LMConfig, LMWeights
from .generation import Sampling, generate_steps
from .heads import token_losses
from .interventions import Interventions
from .models import model
from .tokens import decode, prompt_ids
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
    """The attention sizes of a published model, from its config.json: layers, query and
    key/value heads, head size; ``context`` the longest context it was trained for, and
    ``window`` its sliding window (None: full attention), whose rolling cache never holds
    more than ``window`` tokens."""

    name: str
    layers: int
    query_heads: int
    kv_heads: int
    head_size: int
    context: int
    window: int | None = None

    def tokens_held(self, tokens: int) -> int:
        """Tokens whose keys and values the cache holds after ``tokens`` tokens: all of
        them, or the last ``window`` with a rolling cache."""
        return tokens if self.window is None else min(tokens, self.window)

    @property
    def kind(self) -> str:
        if self.kv_heads == self.query_heads:
            return "multi-head"
        return "multi-query" if self.kv_heads == 1 else "grouped-query"

    def cache_bytes(self, tokens: int, batch: int = 1, bytes_per_number: int = 2) -> int:
        """Bytes of the cache after ``tokens`` tokens (a rolling cache stops growing at its
        window)."""
        return (2 * self.layers * self.kv_heads * self.head_size * self.tokens_held(tokens)
                * batch * bytes_per_number)


#: Larger models, as their config.json files on Hugging Face state them (num_hidden_layers,
#: num_attention_heads, num_key_value_heads, hidden_size / num_attention_heads,
#: sliding_window). The context is the length each was trained on: Llama's
#: max_position_embeddings (4,096 for Llama 2, 8,192 for Llama 3, as their papers say);
#: Mistral 7B's paper (Table 1: context_len 8,192), not its config's max_position_embeddings
#: of 32,768 (the positions its RoPE code is set up for, not a length it was trained on);
#: Falcon 7B's config.json gives no
#: context, its model card trained it on sequences of 2,048 tokens.
PUBLISHED = (
    PublishedConfig("Llama 2 7B", 32, 32, 32, 128, 4096),
    PublishedConfig("Llama 2 70B", 80, 64, 8, 128, 4096),
    PublishedConfig("Llama 3 8B", 32, 32, 8, 128, 8192),
    PublishedConfig("Mistral 7B v0.1", 32, 32, 8, 128, 8192, window=4096),
    PublishedConfig("Falcon 7B", 32, 71, 1, 64, 2048),
)


def cache_outweighs_weights_at(m: LanguageModel) -> int:
    """The context (tokens) from which one new token's step reads more bytes of KV cache
    (2 · L · n_KV · d_k · 4 a token of context) than of weights (every weight but the
    embedding table, of which it reads one row)."""
    per_token = cache_bytes(m.config, 1)
    return -(-m.weights.bytes_per_token // per_token)  # ceil


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


def cache_comparison(text_or_ids, steps: int, *, m: LanguageModel | None = None,
                     progress: Callable[[float, str], None] | None = None) -> CacheComparison:
    """Write ``steps`` tokens greedily twice, with the KV cache and without (no early stop
    at an end token, so both runs have the same length). ``progress(fraction, what)``, if
    given, hears after each token: "token 3 of 8, with the cache"."""
    steps = whole_number(steps, "steps", 1, MAX_COMPARISON_STEPS)
    m = m or model()
    _, ids = as_ids(m, text_or_ids)
    greedy = Sampling()
    forward(m, ids[:1], last_only=True, keep_cache=False)  # first touch of the weights: untimed
    runs = []
    for done, (use_cache, how) in enumerate(((True, "with"), (False, "without"))):
        run = []
        for step in generate_steps(ids, steps, greedy, use_cache=use_cache,
                                   stop_at_end=False, m=m):
            run.append(step)
            if progress:
                progress((done * steps + len(run)) / (2 * steps),
                         f"token {len(run)} of {steps}, {how} the cache")
        runs.append(run)
    cached, plain = runs
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


def text_ids(m: LanguageModel, text: str, tokens: int) -> np.ndarray:
    """The first ``tokens`` tokens of ``text`` (2 .. MAX_TOKENS); ValueError if it has fewer
    than 2."""
    tokens = whole_number(tokens, "tokens", 2, MAX_TOKENS)
    if not isinstance(text, str):
        raise ValueError(f"text must be a string; got {type(text).__name__}")
    ids = prompt_ids(m, text)[:tokens]
    if ids.size < 2:
        raise ValueError("the text needs at least 2 tokens to measure a perplexity")
    return ids


def perplexity(m: LanguageModel, ids: np.ndarray, mask: np.ndarray | None = None,
               weights: LMWeights | None = None) -> float:
    """e^(mean cross-entropy in nats) of tokens 2 .. N, each predicted from those before
    it (under ``mask``, causal by default; with ``weights``, the model's by default)."""
    p = forward(m, ids, interventions=Interventions(mask=mask, weights=weights),
                keep_cache=False)
    return float(np.exp(token_losses(p.logits, ids).mean()))


@dataclass(frozen=True)
class SinkShift:
    """Where attention goes, layer by layer, for the queries whose window no longer holds
    the first tokens (positions p with p − W + 1 >= max(S, 1)): each (L,) array is a mean
    over heads and those rows.

    ``dense_first``: weight on token 1 with full attention; ``dense_oldest``: on the
    oldest token the window keeps (position p − W + 1), with full attention;
    ``window_oldest``: on that same token under the window alone, where it is the first
    visible; ``sinks_on_sinks``: on the S sink tokens under window + sinks. ``maps`` is
    (3, L, T, T): each layer's attention averaged over its heads, with full attention, the
    window, and the window with sinks.
    """

    rows: int
    dense_first: np.ndarray
    dense_oldest: np.ndarray
    window_oldest: np.ndarray
    sinks_on_sinks: np.ndarray
    maps: np.ndarray


@dataclass(frozen=True)
class WindowResult:
    """Perplexity of the first ``tokens`` tokens of a text with full causal attention, with
    a sliding window of ``window_size`` tokens, and with the window plus ``sinks`` first
    tokens; ``shift`` says where the first token's attention goes (None when the text is
    too short for any query to lose it, or when not asked for)."""

    tokens: int
    window_size: int
    sinks: int
    dense: float
    window: float
    window_sinks: float
    shift: SinkShift | None


#: Tokens for which the attention of every layer may be kept to see where it goes:
#: 30 · 9 · 256² float32 weights is 71 MB per pass.
MAX_SHIFT_TOKENS = 256


def _pass(m: LanguageModel, ids: np.ndarray, mask: np.ndarray | None, keep_weights: bool
          ) -> tuple[float, np.ndarray | None]:
    p = forward(m, ids, interventions=Interventions(mask=mask), keep_cache=False,
                record=("weights",) if keep_weights else False)
    ppl = float(np.exp(token_losses(p.logits, ids).mean()))
    return ppl, p.record.get("weights")


def window_perplexities(text: str, window: int, sinks: int, tokens: int = DEFAULT_TOKENS,
                        *, shift: bool = False, m: LanguageModel | None = None,
                        keep: bool = False) -> WindowResult:
    """Perplexity with full attention, a sliding window, and the window with sinks (three
    passes over the first ``tokens`` tokens); with ``shift``, where the attention the
    window takes from the first tokens goes (at most MAX_SHIFT_TOKENS tokens).

    ``keep``: keep the result on disk for every later process of this machine (a page's
    defaults; with ``shift`` a result holds 3 · L · T² weights, 24 MB at 256 tokens, so
    not for every setting a slider reaches)."""
    m = m or model()
    ids = text_ids(m, text, tokens)
    window = whole_number(window, "window", 1, MAX_TOKENS)
    sinks = whole_number(sinks, "sinks", 0, MAX_TOKENS)
    if shift and ids.size > MAX_SHIFT_TOKENS:
        raise ValueError(f"where the first token's attention goes is measured on at most "
                         f"{MAX_SHIFT_TOKENS} tokens; got {ids.size}")
    if not keep:
        return _window_perplexities(m, tuple(ids.tolist()), window, sinks, bool(shift))
    settings = {"model": m.sha256, "ids": _digest(ids), "window": window, "sinks": sinks,
                "shift": bool(shift)}
    return kept("lm-window", settings, __name__, lambda: _window_perplexities(
        m, tuple(ids.tolist()), window, sinks, bool(shift)))


def _digest(ids: np.ndarray) -> str:
    """A short name for a sequence of token ids, for a kept result's settings."""
    return hashlib.sha256(np.ascontiguousarray(ids, dtype=np.int64).tobytes()).hexdigest()


# Three passes over up to 1024 tokens: a server keeps the last results (perplexities are
# the same every time); with ``shift`` each holds 3 · L · T² float32 weights (24 MB at 256).
@functools.lru_cache(maxsize=8)
def _window_perplexities(m: LanguageModel, token_ids: tuple[int, ...], window: int, sinks: int,
                         shift: bool) -> WindowResult:
    ids = np.array(token_ids, dtype=np.int64)
    T = ids.size
    dense, a_dense = _pass(m, ids, None, shift)
    plain, a_window = _pass(m, ids, sliding_window_mask(T, window), shift)
    kept, a_sinks = _pass(m, ids, sliding_window_mask(T, window, sinks=sinks), shift)
    rows = np.arange(window + max(sinks, 1) - 1, T)  # p − W + 1 >= max(S, 1)
    moved = None
    if shift and rows.size:
        oldest = rows - window + 1

        def mean(a: np.ndarray) -> np.ndarray:  # (L, H, rows) -> (L,)
            return a.mean(axis=(1, 2))

        moved = SinkShift(
            rows=int(rows.size), dense_first=mean(a_dense[:, :, rows, 0]),
            dense_oldest=mean(a_dense[:, :, rows, oldest]),
            window_oldest=mean(a_window[:, :, rows, oldest]),
            sinks_on_sinks=mean(a_sinks[:, :, rows, :sinks].sum(axis=-1)),
            maps=np.stack([a.mean(axis=1) for a in (a_dense, a_window, a_sinks)]))
    return WindowResult(tokens=T, window_size=window, sinks=sinks, dense=dense, window=plain,
                        window_sinks=kept, shift=moved)


@dataclass(frozen=True)
class WindowCurve:
    """Perplexity against the window size W, without and with S sinks."""

    tokens: int
    sinks: int
    windows: np.ndarray
    window: np.ndarray
    window_sinks: np.ndarray
    dense: float


def window_curve(text: str, windows, sinks: int, tokens: int = DEFAULT_TOKENS,
                 progress=None, *, m: LanguageModel | None = None) -> WindowCurve:
    """:func:`window_perplexities` for each W of ``windows`` (2 passes each, 1 for the
    dense reference); ``progress(fraction)`` hears after each pass."""
    m = m or model()
    ids = text_ids(m, text, tokens)
    sinks = whole_number(sinks, "sinks", 0, MAX_TOKENS)
    windows = np.array([whole_number(int(w), "window", 1, MAX_TOKENS) for w in windows])
    T, done, total = ids.size, 0, 2 * len(windows) + 1
    tell = progress or (lambda fraction: None)
    values = np.empty((2, len(windows)))
    for n, w in enumerate(windows):
        for k, s in enumerate((0, sinks)):
            values[k, n] = perplexity(m, ids, sliding_window_mask(T, int(w), sinks=s))
            done += 1
            tell(done / total)
    dense = perplexity(m, ids)
    tell(1.0)
    return WindowCurve(tokens=T, sinks=sinks, windows=windows, window=values[0],
                       window_sinks=values[1], dense=dense)


@dataclass(frozen=True)
class MergedResult:
    tokens: int
    gqa: float
    merged: float


def merged_kv_perplexity(text: str, tokens: int = DEFAULT_TOKENS, *,
                         m: LanguageModel | None = None) -> MergedResult:
    """Perplexity with the model's KV heads (SmolLM2's 3), and with them averaged into one."""
    m = m or model()
    ids = text_ids(m, text, tokens)
    # Two passes (seconds) for three numbers: kept on disk for every later process.
    return kept("lm-merged-kv", {"model": m.sha256, "ids": _digest(ids)}, __name__,
                lambda: _merged_kv_perplexity(m, tuple(ids.tolist())))


@functools.lru_cache(maxsize=8)
def _merged_kv_perplexity(m: LanguageModel, token_ids: tuple[int, ...]) -> MergedResult:
    ids = np.array(token_ids, dtype=np.int64)
    return MergedResult(tokens=int(ids.size), gqa=perplexity(m, ids),
                        merged=perplexity(m, ids, weights=merge_kv_heads(m.weights, m.config)))



@dataclass(frozen=True)
class TokenTimes:
    """The time of one new token against the context length, with the KV cache (a pass
    over the new token, reading the cache) and without (a pass over the whole context):
    ``cached`` and ``uncached`` are (rounds, contexts), the best of a few calls each, the
    rounds interleaved; ``*_exponents`` (rounds,) the growth exponent fitted in each round
    (time ∝ context^exponent): their spread says how sure the fit is."""

    contexts: np.ndarray
    cached: np.ndarray
    uncached: np.ndarray
    cached_exponents: np.ndarray
    uncached_exponents: np.ndarray


#: The timing curve's contexts: the last pass without the cache reads 256 tokens.
MAX_TIMING_CONTEXT = 256


def token_times(contexts, rounds: int = 3, progress=None, *,
                m: LanguageModel | None = None) -> TokenTimes:
    """Measure :class:`TokenTimes` on the project's text, one BLAS thread (as every pass)."""
    m = m or model()
    contexts = np.array(sorted({whole_number(int(c), "context", 2, MAX_TIMING_CONTEXT)
                                for c in contexts}))
    rounds = whole_number(rounds, "rounds", 1, 10)
    ids = text_ids(m, default_text(), int(contexts.max()))
    caches = {int(c): forward(m, ids[: c - 1]).cache for c in contexts}  # all but the last
    cached = np.empty((rounds, contexts.size))
    uncached = np.empty_like(cached)
    tell = progress or (lambda fraction: None)
    for r in range(rounds):
        order = range(contexts.size) if r % 2 == 0 else reversed(range(contexts.size))
        for i in order:
            c = int(contexts[i])
            cached[r, i] = best_time(lambda c=c: forward(
                m, ids[c - 1: c], cache=caches[c], last_only=True, keep_cache=False), 3)
            uncached[r, i] = best_time(lambda c=c: forward(
                m, ids[:c], last_only=True, keep_cache=False), 2)
        tell((r + 1) / rounds)
    return TokenTimes(contexts=contexts, cached=cached, uncached=uncached,
                      cached_exponents=np.array([growth_exponent(contexts, t) for t in cached]),
                      uncached_exponents=np.array([growth_exponent(contexts, t)
                                                   for t in uncached]))
