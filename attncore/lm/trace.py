"""``run``: one forward pass of SmolLM2 on a text or ids, returning every intermediate."""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import numpy as np

from .._checks import whole_number
from .._installed import read_only
from .decoder import forward
from .files import LanguageModel, LMConfig
from .interventions import Interventions
from .models import model
from .tokens import pieces, prompt_ids

#: Tokens one trace may hold. Every attention map of 256 tokens is 30 · 9 · 256² float32
#: numbers (71 MB), and the whole trace about 250 MB: a server keeps a few of them.
MAX_TOKENS = 256


@dataclass(frozen=True, eq=False)
class LMTrace:
    """Every intermediate of one forward pass. Arrays are read-only.

    Shapes: L = 30 layers, H = 9 query heads, KV = 3 key/value heads, T tokens,
    d = d_model = 576, d_k = 64, V = 49,152.

    Attributes
    ----------
    ids : (T,) token ids; tokens : their readable pieces (see ``tokens.readable``)
    truncated : True when the text had more than ``max_tokens`` tokens (``n_tokens``);
        the trace then holds the first ``max_tokens``
    hidden_states : (L + 1, T, d) the residual stream: the token embeddings, then each
        layer's output (before the final RMSNorm)
    attn_norm_output : (L, T, d) each layer's RMSNorm of the stream, the input of attention
    q, k, v : (L, H, T, d_k), (L, KV, T, d_k), (L, KV, T, d_k); q and k after RoPE
    attentions : (L, H, T, T) each query head's weights; exactly 0 above the diagonal
    attention_output : (L, T, d) the heads' outputs concatenated, times W_O
    ffn_output : (L, T, d) the SwiGLU feed-forward network's output
    final_norm_output : (T, d); logits : (T, V) its product with the token embedding
    kv_head : (H,) the KV head each query head reads
    seconds : the wall time of this pass (recording every intermediate), on this machine
    """

    text: str | None
    ids: np.ndarray
    tokens: list[str]
    truncated: bool
    n_tokens: int
    max_tokens: int
    config: LMConfig
    hidden_states: np.ndarray
    attn_norm_output: np.ndarray
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    attentions: np.ndarray
    attention_output: np.ndarray
    ffn_output: np.ndarray
    final_norm_output: np.ndarray
    logits: np.ndarray
    kv_head: np.ndarray
    seconds: float = 0.0

    @property
    def scale(self) -> float:
        """The score scale 1/√d_k (1/8 for this model)."""
        return 1.0 / np.sqrt(self.config.d_head)

    def next_token_probs(self, position: int = -1) -> np.ndarray:
        """The model's distribution over the next token after ``position`` (the last by
        default): softmax of that row of logits, (V,) float64, sums to 1."""
        z = self.logits[position].astype(np.float64)
        p = np.exp(z - z.max())
        return p / p.sum()

    def arrays(self) -> dict[str, np.ndarray]:
        """Every array of the trace by name, for saving (``np.savez``)."""
        return {name: value for name, value in vars(self).items()
                if isinstance(value, np.ndarray)}


def as_ids(m: LanguageModel, text_or_ids) -> tuple[str | None, np.ndarray]:
    """The text (None when ids were given) and its token ids, checked."""
    if isinstance(text_or_ids, str):
        ids = prompt_ids(m, text_or_ids)
        if ids.size == 0:
            raise ValueError("the text has no tokens: type at least one character")
        return text_or_ids, ids
    try:
        ids = np.asarray(text_or_ids)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"ids must be whole numbers; got {text_or_ids!r:.60}") from exc
    if ids.ndim != 1 or ids.size == 0 or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"ids must be a non-empty 1-D sequence of whole numbers; got shape "
                         f"{ids.shape} of {ids.dtype}")
    V = m.config.vocab_size
    if ids.min() < 0 or ids.max() >= V:
        raise ValueError(f"ids must lie in 0..{V - 1}; got {ids.min()}..{ids.max()}")
    return None, ids.astype(np.int64)


def run(text_or_ids, max_tokens: int = MAX_TOKENS, head_mask=None, *,
        m: LanguageModel | None = None) -> LMTrace:
    """Run the model (``m``, SmolLM2 by default) on a text or a sequence of ids and return
    every intermediate. A text starts with the BOS token when the model adds one.

    Parameters
    ----------
    text_or_ids : str or sequence of int
        Any Unicode text with at least one token, or token ids (0 .. V − 1).
    max_tokens : int
        Cap on tokens (1 .. 256); a longer input is cut to its first ``max_tokens``.
    head_mask : (L, H) of 0/1, optional
        Heads to switch off (0): their outputs count for nothing.

    Returns
    -------
    LMTrace
        Attention rows sum to 1 and are exactly 0 above the diagonal (causal).

    Raises
    ------
    ValueError
        For an empty text, bad ids or a bad cap; ModelFilesError (a ValueError) when the
        GGUF fails its checks.
    ModelNotInstalledError
        When the model package is missing (the message names the install command).
    """
    max_tokens = whole_number(max_tokens, "max_tokens", 1, MAX_TOKENS)
    m = m or model()
    text, ids = as_ids(m, text_or_ids)
    mask_key = None
    if head_mask is not None:
        head_mask = np.asarray(head_mask, dtype=np.float32)
        shape = (m.config.n_layers, m.config.n_heads)
        if head_mask.shape != shape:
            raise ValueError(f"head_mask must have shape {shape}; got {head_mask.shape}")
        mask_key = head_mask.tobytes()
    return _run(m, text, tuple(ids.tolist()), max_tokens, mask_key)


@functools.lru_cache(maxsize=4)
def _run(m: LanguageModel, text: str | None, ids: tuple[int, ...], max_tokens: int,
         mask_key: bytes | None) -> LMTrace:
    cfg = m.config
    n_tokens = len(ids)
    kept = np.array(ids[:max_tokens], dtype=np.int64)
    head_mask = (None if mask_key is None else
                 np.frombuffer(mask_key, dtype=np.float32).reshape(cfg.n_layers, cfg.n_heads))
    start = time.perf_counter()
    p = forward(m, kept, interventions=Interventions(head_mask=head_mask), record=True,
                keep_cache=False)
    seconds = time.perf_counter() - start
    r = p.record
    arrays = {
        "ids": kept, "hidden_states": r["hidden_states"],
        "attn_norm_output": r["attn_norm_output"], "q": r["q"], "k": r["k"], "v": r["v"],
        "attentions": r["weights"], "attention_output": r["output"],
        "ffn_output": r["ffn_output"], "final_norm_output": r["final_norm_output"],
        "logits": p.logits, "kv_head": np.arange(cfg.n_heads) // cfg.group,
    }
    return LMTrace(text=text, tokens=pieces(m, kept), truncated=n_tokens > max_tokens,
                   n_tokens=n_tokens, max_tokens=max_tokens, config=cfg, seconds=seconds,
                   **{name: read_only(a) for name, a in arrays.items()})
