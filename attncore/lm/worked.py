"""One decoder head worked by hand: the score and weight a query gives one key, recomputed in
float64 from the residual stream with the model's own norm, biases and positions.

Lesson 10 lays the steps out. Every intermediate it shows is here, in :class:`WorkedHead`,
with the model's own numbers beside the recomputed ones (they differ by rounding only: the
model computes in float32).

The steps, for layer ℓ, query head h (which reads key/value head g), query token i, key
token j:

1. the norm before attention, of the stream entering layer ℓ: RMSNorm divides by
   √(mean x² + ε); LayerNorm subtracts the mean μ first, divides by √(variance + ε) and adds
   a bias; both multiply by the layer's gain;
2. q = x̂ᵢ W_Q (+ b_Q) for head h, k = x̂ⱼ W_K (+ b_K) for KV head g;
3. positions: RoPE turns each pair of numbers of q and of k by (position) × θ, pairs
   (2p, 2p + 1) as GGUF files lay W_Q and W_K out, or (p, p + d_k/2) as Hugging Face's
   ``rotate_half`` does; a model with learned positions turns nothing (they were added to
   the token embeddings before layer 1);
4. the scores q·k / √d_k over the causal prefix (keys 1 to i) and their softmax.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .._checks import whole_number
from .config import LMWeights

if TYPE_CHECKING:
    from .trace import LMTrace


@dataclass(frozen=True)
class Turn:
    """One RoPE pair of q or of k turned by the angle ``position`` × θ: the pair before and
    after."""

    position: int
    angle: float
    before: tuple[float, float]
    after: tuple[float, float]


@dataclass(frozen=True, eq=False)
class WorkedHead:
    """Every number of one head worked by hand. Indices count from 0.

    Attributes
    ----------
    layer, head, kv_head, query, key : int
        The layer, the query head, the key/value head it reads, the query token and the
        key token (``key`` ≤ ``query``).
    norm : str
        "rms" (RMSNorm) or "layer" (LayerNorm).
    mean : float
        μ of the query token's stream, which LayerNorm subtracts (0.0 for RMSNorm, which
        subtracts nothing).
    root : float
        What the norm divides by: √(mean x² + ε) for RMSNorm, √(variance + ε) for LayerNorm.
    q_raw, k_raw : (d_k,) ndarray
        q of the query token for ``head`` and k of the key token for ``kv_head``, before
        positions, recomputed here.
    qkv_bias : bool
        Whether the model adds a bias to q, k and v (Qwen2, GPT-2).
    q : (d_k,) ndarray
        The model's own q of the query token (after RoPE), in float64.
    keys : (query + 1, d_k) ndarray
        The model's own keys of the causal prefix (keys 0 to ``query``), after RoPE.
    pair : int or None
        The RoPE pair shown (None: the model has learned positions, nothing is turned).
    pair_index : (int, int) or None
        The two numbers of q and of k that pair turns.
    rope_factor : float
        What the pair's frequency is divided by (Llama 3's scaling of long wavelengths;
        1.0 without it).
    theta : float or None
        The pair's angle per position, in radians.
    q_turn, k_turn : Turn or None
        The pair of ``q_raw`` turned at the query's position, of ``k_raw`` at the key's.
    check : float
        The largest difference between what is recomputed here and the model's own q and k:
        the turned pair's two numbers of q and of k with RoPE, every number of q and of k
        with learned positions.
    scores : (query + 1,) ndarray
        q·k / √d_k for each key of the prefix, from the model's q and keys.
    exps : (query + 1,) ndarray
        e^(s − m), m the largest score.
    model_weight : float
        The model's own weight of this query on this key.
    """

    layer: int
    head: int
    kv_head: int
    query: int
    key: int
    norm: str
    mean: float
    root: float
    q_raw: np.ndarray
    k_raw: np.ndarray
    qkv_bias: bool
    q: np.ndarray
    keys: np.ndarray
    pair: int | None
    pair_index: tuple[int, int] | None
    rope_factor: float
    theta: float | None
    q_turn: Turn | None
    k_turn: Turn | None
    check: float
    scores: np.ndarray
    exps: np.ndarray
    model_weight: float

    @property
    def d_k(self) -> int:
        return int(self.q.size)

    @property
    def dot(self) -> float:
        """q·k for the key worked, before the division by √d_k."""
        return float(self.q @ self.keys[self.key])

    @property
    def max_score(self) -> float:
        """m, the largest score of the prefix, subtracted before e^."""
        return float(self.scores.max())

    @property
    def weights(self) -> np.ndarray:
        """The softmax of the prefix's scores: this query's weight on each key."""
        return self.exps / self.exps.sum()

    @property
    def weight(self) -> float:
        """The weight of the key worked, recomputed here."""
        return float(self.exps[self.key] / self.exps.sum())


def worked_head(trace: LMTrace, weights: LMWeights, layer: int, head: int, query: int,
                key: int, pair: int = 0) -> WorkedHead:
    """Query ``query``'s score and weight for key ``key`` in ``head`` of ``layer`` (all from
    0), from the trace's residual stream and the model's ``weights``; ``pair`` is the RoPE
    pair shown (ignored with learned positions). Raises ValueError for an index out of
    range or a key after the query."""
    cfg = trace.config
    L, H, d_k, T = cfg.n_layers, cfg.n_heads, cfg.d_head, len(trace.ids)
    l = whole_number(layer, "layer", 0, L - 1)
    h = whole_number(head, "head", 0, H - 1)
    i = whole_number(query, "query", 0, T - 1)
    j = whole_number(key, "key", 0, i)
    g = cfg.kv_head_of(h)
    gain = weights.attn_norm[l].astype(np.float64)
    shift = (None if weights.attn_norm_bias is None
             else weights.attn_norm_bias[l].astype(np.float64))

    def normed(x: np.ndarray) -> tuple[np.ndarray, float, float]:
        mean = float(np.mean(x)) if cfg.norm == "layer" else 0.0
        root = float(np.sqrt(np.mean((x - mean) ** 2) + cfg.norm_eps))
        return (x - mean) / root * gain + (0.0 if shift is None else shift), mean, root

    xn, mean, root = normed(trace.hidden_states[l, i].astype(np.float64))
    kn = normed(trace.hidden_states[l, j].astype(np.float64))[0]
    w_qkv = weights.attn_qkv[l].astype(np.float64)
    q_cols = slice(h * d_k, (h + 1) * d_k)
    k_cols = slice(H * d_k + g * d_k, H * d_k + (g + 1) * d_k)
    q_raw, k_raw = xn @ w_qkv[:, q_cols], kn @ w_qkv[:, k_cols]
    bias = weights.attn_qkv_bias
    if bias is not None:
        b = bias[l].astype(np.float64)
        q_raw, k_raw = q_raw + b[q_cols], k_raw + b[k_cols]
    q = trace.q[l, h, i].astype(np.float64)
    keys = trace.k[l, g, : i + 1].astype(np.float64)

    pair_index, theta, factor, q_turn, k_turn = None, None, 1.0, None, None
    if cfg.uses_rope:
        p = whole_number(pair, "pair", 0, d_k // 2 - 1)
        pair_index = (2 * p, 2 * p + 1) if cfg.positions == "rope_pairs" else (p, p + d_k // 2)
        if weights.rope_factors is not None:
            factor = float(weights.rope_factors[p])
        theta = cfg.rope_base ** (-2 * p / d_k) / factor
        q_turn, k_turn = (_turned(v, position, theta, pair_index)
                          for v, position in ((q_raw, i), (k_raw, j)))
        a, b_ = pair_index
        check = max(abs(q_turn.after[0] - q[a]), abs(q_turn.after[1] - q[b_]),
                    abs(k_turn.after[0] - keys[j, a]), abs(k_turn.after[1] - keys[j, b_]))
    else:
        p = None
        check = max(float(np.max(np.abs(q_raw - q))), float(np.max(np.abs(k_raw - keys[j]))))
    scores = keys @ q / np.sqrt(d_k)
    return WorkedHead(
        layer=l, head=h, kv_head=g, query=i, key=j, norm=cfg.norm, mean=mean, root=root,
        q_raw=q_raw, k_raw=k_raw, qkv_bias=bias is not None, q=q, keys=keys, pair=p,
        pair_index=pair_index, rope_factor=factor, theta=theta, q_turn=q_turn, k_turn=k_turn,
        check=float(check), scores=scores, exps=np.exp(scores - scores.max()),
        model_weight=float(trace.attentions[l, h, i, j]))


def _turned(v: np.ndarray, position: int, theta: float, pair_index: tuple[int, int]) -> Turn:
    """The pair ``pair_index`` of ``v`` turned by ``position`` × ``theta``."""
    angle = position * theta
    x0, x1 = float(v[pair_index[0]]), float(v[pair_index[1]])
    cos, sin = float(np.cos(angle)), float(np.sin(angle))
    return Turn(position, angle, (x0, x1), (x0 * cos - x1 * sin, x0 * sin + x1 * cos))
