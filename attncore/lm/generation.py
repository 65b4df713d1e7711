r"""Writing text one token at a time: sampling settings, the KV cache, generation.

Each new token is drawn from the model's next-token distribution after three optional
changes, in this order (as Hugging Face's and llama.cpp's samplers apply them):

* **temperature** τ: softmax(z / τ); τ = 0 means greedy, always the most likely token;
* **top-k**: keep the k most likely tokens only;
* **top-p** (nucleus): keep the smallest set of tokens whose probabilities add up to at
  least p: the most likely first, up to and including the one whose cumulative sum
  reaches p. After top-k it reads the probabilities of the tokens top-k kept,
  renormalised to sum to 1, as both samplers do;

then the kept probabilities are renormalised to sum to 1 and one token is drawn with the
seeded generator. With the KV cache each step runs the model on the one new token and
reads the keys and values of every earlier token from the cache; without it each step
runs the model on the whole text again. Both give the same tokens.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from .._checks import whole_number
from .decoder import KVCache, forward
from .files import LanguageModel
from .models import model
from .tokens import decode, pieces
from .trace import as_ids

#: New tokens one call may write (each is a pass through the model, 30-60 ms here).
MAX_NEW_TOKENS = 256
#: Prompt and new tokens together, for one generation.
MAX_CONTEXT = 1024
RUNNER_UPS = 5


@dataclass(frozen=True)
class Sampling:
    """How the next token is chosen. ``temperature`` 0 is greedy; ``top_k`` 0 and
    ``top_p`` 1 switch those filters off; ``seed`` makes the draws repeatable."""

    temperature: float = 0.0
    top_k: int = 0
    top_p: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        t = self.temperature
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not np.isfinite(t) or t < 0:
            raise ValueError(f"temperature must be a finite number >= 0 (0 = greedy); "
                             f"got {t!r}")
        whole_number(self.top_k, "top_k", 0)
        p = self.top_p
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p <= 1:
            raise ValueError(f"top_p must lie in (0, 1] (1 = off); got {p!r}")
        whole_number(self.seed, "seed", 0)

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


def sampling_distribution(logits: np.ndarray, sampling: Sampling) -> np.ndarray:
    """The distribution a token is drawn from: (V,) float64, sums to 1, 0 for every token
    the filters removed. Greedy puts all of it on the most likely token (the first of
    equal ones)."""
    z = np.asarray(logits, dtype=np.float64)
    if sampling.greedy:
        p = np.zeros_like(z)
        p[int(np.argmax(z))] = 1.0
        return p
    z = z / sampling.temperature
    p = np.exp(z - z.max())
    p /= p.sum()
    order = np.argsort(-p, kind="stable")  # most likely first
    keep = np.ones(p.size, dtype=bool)
    if sampling.top_k:
        keep[order[sampling.top_k:]] = False
    if sampling.top_p < 1:
        kept = np.where(keep[order], p[order], 0.0)  # most likely first, top-k's cut out
        cumulative = np.cumsum(kept) / kept.sum()
        # the fewest tokens whose sum reaches top_p: all before the crossing, and it
        n_keep = int(np.searchsorted(cumulative, sampling.top_p, side="left")) + 1
        keep[order[n_keep:]] = False
    p = np.where(keep, p, 0.0)
    return p / p.sum()


def model_probs(logits: np.ndarray) -> np.ndarray:
    """The model's own next-token distribution, softmax of the logits at temperature 1:
    (V,) float64."""
    z = np.asarray(logits, dtype=np.float64)
    p = np.exp(z - z.max())
    return p / p.sum()


@dataclass(frozen=True)
class Step:
    """One generated token.

    ``probability`` is its probability in the distribution it was drawn from (1 when
    greedy); ``model_probability`` the model's own, at temperature 1. ``runner_ups`` are
    the model's most likely tokens at this step (ids and probabilities, temperature 1),
    ``context`` the number of tokens the model read, ``seconds`` the pass's time.
    """

    id: int
    token: str
    probability: float
    model_probability: float
    runner_up_ids: tuple[int, ...]
    runner_up_tokens: tuple[str, ...]
    runner_up_probs: tuple[float, ...]
    context: int
    seconds: float
    cache_bytes: int  # held by the KV cache after this pass (0 without the cache)
    logits: np.ndarray = field(repr=False)  # (V,) float32, this step's last-position logits


def _check_lengths(n_prompt: int, max_new_tokens: int) -> int:
    max_new_tokens = whole_number(max_new_tokens, "max_new_tokens", 1, MAX_NEW_TOKENS)
    if n_prompt + max_new_tokens > MAX_CONTEXT:
        raise ValueError(f"prompt ({n_prompt} tokens) plus max_new_tokens ({max_new_tokens}) "
                         f"must be at most {MAX_CONTEXT} tokens")
    return max_new_tokens


def stop_ids(m: LanguageModel) -> frozenset[int]:
    """Tokens that end a text: the GGUF's end-of-sequence token (<|im_end|>) and
    <|endoftext|>."""
    end = m.tokenizer.token_to_id("<|endoftext|>")
    return frozenset({m.eos_id} | ({end} if end is not None else set()))


def generate_steps(text_or_ids, max_new_tokens: int = 20, sampling: Sampling | None = None,
                   *, use_cache: bool = True, stop_at_end: bool = True,
                   m: LanguageModel | None = None) -> Iterator[Step]:
    """Write up to ``max_new_tokens`` tokens after the prompt, yielding each as it comes.

    With ``use_cache`` the prompt is read once and each later pass reads one token plus
    the KV cache; without, each pass reads the whole text so far. Stops early at an
    end token when ``stop_at_end``.
    """
    m = m or model()
    sampling = sampling or Sampling()
    _, ids = as_ids(m, text_or_ids)
    max_new_tokens = _check_lengths(ids.size, max_new_tokens)
    rng = np.random.default_rng(sampling.seed)
    ends = stop_ids(m)
    context = list(ids.tolist())
    cache: KVCache | None = None
    for _ in range(max_new_tokens):
        start = time.perf_counter()
        if use_cache:
            new = np.array(context if cache is None else context[-1:], dtype=np.int64)
            p = forward(m, new, cache=cache, last_only=True)
            cache = p.cache
        else:
            p = forward(m, np.array(context, dtype=np.int64), last_only=True,
                        keep_cache=False)
        seconds = time.perf_counter() - start
        dist = sampling_distribution(p.logits, sampling)
        chosen = int(np.argmax(dist)) if sampling.greedy else int(rng.choice(dist.size, p=dist))
        own = model_probs(p.logits)
        top = np.argsort(-own, kind="stable")[:RUNNER_UPS]
        yield Step(id=chosen, token=pieces(m, [chosen])[0], probability=float(dist[chosen]),
                   model_probability=float(own[chosen]),
                   runner_up_ids=tuple(int(i) for i in top),
                   runner_up_tokens=tuple(pieces(m, top)),
                   runner_up_probs=tuple(float(own[i]) for i in top),
                   context=len(context), seconds=seconds,
                   cache_bytes=cache.nbytes if cache is not None else 0, logits=p.logits)
        context.append(chosen)
        if stop_at_end and chosen in ends:
            return


@dataclass(frozen=True)
class Generation:
    """A finished generation: the prompt's ids, every step, and the new text."""

    prompt_ids: np.ndarray
    steps: tuple[Step, ...]
    text: str  # the new tokens, decoded

    @property
    def ids(self) -> list[int]:
        return [s.id for s in self.steps]


def generate(text_or_ids, max_new_tokens: int = 20, sampling: Sampling | None = None, *,
             use_cache: bool = True, stop_at_end: bool = True,
             m: LanguageModel | None = None) -> Generation:
    """All of :func:`generate_steps` at once."""
    m = m or model()
    _, ids = as_ids(m, text_or_ids)
    steps = tuple(generate_steps(ids, max_new_tokens, sampling, use_cache=use_cache,
                                 stop_at_end=stop_at_end, m=m))
    return Generation(prompt_ids=ids, steps=steps, text=decode(m, [s.id for s in steps]))
