r"""A causal decoder run by our own NumPy code (float32): SmolLM2-135M, and any Llama, Qwen2 or
GPT-2 model a teacher adds, through one ``forward`` whose differences are the named
switches of :class:`~attncore.lm.config.LMConfig`.

Each of the L layers is pre-norm: the residual stream x goes through a norm, then causal
self-attention (query heads reading their key/value heads, positions given to q and k
by RoPE or added to the input as a learned table), whose output is added back to x; then
the norm again and the feed-forward network, added back too. A last norm, and the output
matrix turns each position's vector into logits over the vocabulary:

.. math::
    x \leftarrow x + \mathrm{Attn}(\mathrm{Norm}(x)),\qquad
    x \leftarrow x + \mathrm{FFN}(\mathrm{Norm}(x))

For SmolLM2 (a Llama) the norm is RMSNorm, RoPE turns q and k, 9 query heads read 3 KV
heads and the FFN is SwiGLU, :math:`W_2(\mathrm{SiLU}(W_g h) \odot W_u h)`; for GPT-2 the
norm is LayerNorm with a bias, positions are a learned table, every head has its own keys
and values, the FFN is GELU and every map has a bias. Each switch is read in one line
below (``cfg.norm``, ``cfg.positions``, ``cfg.mlp``, the optional biases).

The encoder of lesson 9 (:mod:`attncore.encoder`) normalises *after* each residual add
(post-LN) and lets every token see every other; this decoder normalises *before* (pre-LN)
and masks the future. The traces use the same names for the same things (``tokens``,
``ids``, ``hidden_states``, ``q``, ``k``, ``v``, ``attentions``).

**Everything stays float32.** Under NumPy 2's promotion rules a float64 scalar such as
``np.sqrt(64)`` turns a float32 array into float64, and then every ``x @ W`` converts a
whole weight matrix on each call (measured in the prototype: 40 ms → 166 ms per generated
token). Constants here are float32, and a test checks the residual stream's dtype.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from ..measure import one_blas_thread
from .config import LMConfig, LMWeights
from .files import LanguageModel
from .interventions import Interventions

F32 = np.float32


def linear(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """x @ W for x of any leading shape (..., d_in) and W (d_in, d_out), as one product.

    NumPy multiplies a stack of matrices by W one matrix at a time, reading all of W each
    time: a batch of 9 patched runs read each FFN matrix 9 times (9 ms a layer, against
    2 here). Every row is still computed by itself.
    """
    if x.ndim <= 2:
        return x @ weight
    return (x.reshape(-1, x.shape[-1]) @ weight).reshape(*x.shape[:-1], weight.shape[-1])


def rms_norm(x: np.ndarray, gain: np.ndarray, eps: float) -> np.ndarray:
    r"""RMSNorm over the last axis: :math:`g \odot x / \sqrt{\mathrm{mean}(x^2) + \epsilon}`.

    Unlike LayerNorm it subtracts no mean and adds no shift: it only rescales each vector
    to root-mean-square 1, then multiplies by the learned gain.
    """
    rms = np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + F32(eps))
    return x / rms * gain


def layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    r"""LayerNorm over the last axis: :math:`g \odot (x - \mu) / \sqrt{\sigma^2 + \epsilon} + b`,
    μ and σ² the mean and variance of each vector (GPT-2's norm)."""
    centred = x - np.mean(x, axis=-1, keepdims=True)
    sigma = np.sqrt(np.mean(centred * centred, axis=-1, keepdims=True) + F32(eps))
    return centred / sigma * gain + bias


def norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray | None, cfg: LMConfig) -> np.ndarray:
    """The model's norm: RMSNorm (``cfg.norm == "rms"``) or LayerNorm with its bias."""
    if cfg.norm == "rms":
        return rms_norm(x, gain, cfg.norm_eps)
    return layer_norm(x, gain, bias, cfg.norm_eps)


def rope_angles(positions: np.ndarray, d_k: int, base: float,
                factors: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""cos and sin of the rotation angles :math:`p\,\theta_i`, :math:`\theta_i =
    \mathrm{base}^{-2i/d_k}`, for i = 0 .. d_k/2 − 1: two (T, d_k/2) float32 arrays.

    ``factors`` (d_k/2,) divide each θ_i (Llama 3's scaling of long wavelengths; llama.cpp's
    ``rope_freqs``). Computed in float64 and rounded once, so that position 8000 loses no
    digits.
    """
    theta = float(base) ** (-np.arange(0, d_k, 2, dtype=np.float64) / d_k)  # (d_k/2,)
    if factors is not None:
        theta = theta / np.asarray(factors, dtype=np.float64)
    angles = np.asarray(positions, dtype=np.float64)[:, None] * theta  # (T, d_k/2)
    return np.cos(angles).astype(F32), np.sin(angles).astype(F32)


def rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, halves: bool = False) -> np.ndarray:
    r"""Rotate pairs of numbers of every vector, pair i by its angle :math:`\phi = p\,\theta_i`:

    .. math:: (a\cos\phi - b\sin\phi,\; a\sin\phi + b\cos\phi)

    with (a, b) = (x_{2i}, x_{2i+1}), adjacent pairs, as llama.cpp turns a Llama's q and k
    and lays out the GGUF's W_Q and W_K for; or, with ``halves``, (a, b) = (x_i,
    x_{i+d_k/2}), Hugging Face's ``rotate_half``, for W_Q and W_K in its files' row order
    (and llama.cpp's for Qwen2). The two are the same rotation of rows in another order:
    the scores come out the same. x is (..., T, d_k); cos and sin are (T, d_k/2).
    """
    half = x.shape[-1] // 2
    a, b = (x[..., :half], x[..., half:]) if halves else (x[..., 0::2], x[..., 1::2])
    out = np.empty_like(x)
    if halves:
        out[..., :half] = a * cos - b * sin
        out[..., half:] = a * sin + b * cos
    else:
        out[..., 0::2] = a * cos - b * sin
        out[..., 1::2] = a * sin + b * cos
    return out


def repeat_kv(x: np.ndarray, group: int) -> np.ndarray:
    """Grouped-query attention: each of the KV heads serves ``group`` query heads in a
    row, (..., KV, T, d_k) -> (..., KV·group, T, d_k); query head h reads KV head
    h // group. The textbook form (Hugging Face's ``repeat_kv``), kept as the reference
    the tests hold ``attention``'s grouped products to: ``attention`` never copies K or V."""
    return np.repeat(x, group, axis=-3)


def masked_softmax(scores: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """Softmax over the last axis where ``mask`` is True ("may attend"), in float32.

    Masked weights are exactly 0. The policy of :mod:`attncore.softmax` for a row with no
    allowed key (all-zero weights, never NaN) holds here too; the causal mask never
    makes one, as every token may attend to itself. ``mask`` None: every key (one new
    token reading the cache).
    """
    if mask is None:
        exps = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return exps / exps.sum(axis=-1, keepdims=True)
    weights = np.where(mask, scores, F32(-np.inf))  # the one array this makes
    shift = weights.max(axis=-1, keepdims=True)
    some_key = mask.any(axis=-1, keepdims=True)  # (Tq, 1): rows with a key to read
    every_row = bool(some_key.all())
    if not every_row:
        shift = np.where(some_key, shift, F32(0))
    weights -= shift
    np.exp(weights, out=weights)  # exactly 0 where masked: e^−∞
    sums = weights.sum(axis=-1, keepdims=True)
    weights /= sums if every_row else np.where(sums > 0, sums, F32(1))
    return weights


def causal_mask(t_q: int, t_k: int) -> np.ndarray:
    """(Tq, Tk) True where query i (at position i + Tk − Tq) may see key j: j <= its
    position. Bottom-right aligned, as :func:`attncore.masks.causal_mask`."""
    return np.arange(t_k)[None, :] <= np.arange(t_q)[:, None] + (t_k - t_q)


@dataclass(frozen=True, eq=False)
class KVCache:
    """Every layer's keys (after RoPE) and values for the tokens seen so far.

    ``keys[n]`` and ``values[n]`` are layer n's (..., KV, T, d_k) arrays. A new token's
    pass appends one position to each and returns a new cache; the arrays are exactly what
    is held, so ``nbytes`` = 2 · L · KV · T · d_k · 4 bytes (float32).
    """

    keys: tuple[np.ndarray, ...]
    values: tuple[np.ndarray, ...]

    @property
    def length(self) -> int:
        return self.keys[0].shape[-2] if self.keys else 0

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.keys + self.values)


def attention(x: np.ndarray, n: int, w: LMWeights, cfg: LMConfig, cos: np.ndarray | None,
              sin: np.ndarray | None, mask: np.ndarray, past: tuple[np.ndarray, np.ndarray] | None
              = None, keep: np.ndarray | None = None,
              patch: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Layer n's grouped-query self-attention on the normed stream x (..., T, d).

    ``past`` is this layer's cached (keys, values) of earlier positions, or None; ``mask``
    is (T, Tk) with Tk = past length + T (or (..., 1, T, Tk), one per sequence), or None
    when every key may be read; ``keep`` (H,) of 0/1 switches heads off (their outputs
    times 0, before W_O); ``patch`` = (chosen (..., H) bool, values (..., H, T, d_k))
    replaces the chosen heads' outputs, before W_O, by other values (activation patching).
    ``cos`` and ``sin`` are RoPE's angles for the T positions (None for learned positions).
    Returns q, k, v (k, v including the past), the weights, each head's output before W_O
    (``head_outputs``, (..., H, T, d_k)) and the layer's output (..., T, d).
    """
    *lead, T, _ = x.shape
    H, KV, d_k = cfg.n_heads, cfg.n_kv_heads, cfg.d_head
    qkv = linear(x, w.attn_qkv[n])  # (..., T, (H + 2 KV) d_k)
    if w.attn_qkv_bias is not None:  # Qwen2, GPT-2
        qkv += w.attn_qkv_bias[n]

    def heads(y: np.ndarray, count: int) -> np.ndarray:
        return y.reshape(*lead, T, count, d_k).swapaxes(-2, -3)  # (..., count, T, d_k)

    q = heads(qkv[..., : H * d_k], H)  # (..., H, T, d_k)
    k = heads(qkv[..., H * d_k: (H + KV) * d_k], KV)  # (..., KV, T, d_k)
    v = heads(qkv[..., (H + KV) * d_k:], KV)
    if cfg.uses_rope:  # turned by their positions; GPT-2's positions are in x already
        halves = cfg.positions == "rope_halves"
        q, k = rope(q, cos, sin, halves), rope(k, cos, sin, halves)
    if past is not None:
        k = np.concatenate([past[0], k], axis=-2)  # (..., KV, Tk, d_k)
        v = np.concatenate([past[1], v], axis=-2)
    scale = F32(1.0 / np.sqrt(d_k))  # 1/8, as float32 (see the module's note)
    # The group query heads that read one KV head are stacked as rows, so that each KV
    # head takes one product: the same numbers as q @ repeat_kv(k)ᵀ, without copying k
    # and v group times (the copies cost a generated token about 1.5 ms).
    Tk, G = k.shape[-2], cfg.group
    grouped = q.reshape(*lead, KV, G * T, d_k)  # (..., H, T, d_k) -> (..., KV, G·T, d_k)
    scores = (grouped @ k.swapaxes(-1, -2) * scale).reshape(*lead, H, T, Tk)
    weights = masked_softmax(scores, mask)  # (..., H, T, Tk)
    # (..., KV, G·T, Tk) x (..., KV, Tk, d_k) -> (..., KV, G·T, d_k) -> (..., H, T, d_k)
    head_outputs = (weights.reshape(*lead, KV, G * T, Tk) @ v).reshape(*lead, H, T, d_k)
    if keep is not None:
        head_outputs = head_outputs * keep[:, None, None].astype(F32)
    if patch is not None:
        chosen, values = patch
        head_outputs = np.where(chosen[..., None, None], values, head_outputs)
    concat = head_outputs.swapaxes(-2, -3).reshape(*lead, T, H * d_k)  # heads side by side
    output = linear(concat, w.attn_output[n])  # (..., T, d)
    if w.attn_output_bias is not None:  # GPT-2: b_O, added once, not by any one head
        output += w.attn_output_bias[n]
    return {"q": q, "k": k, "v": v, "weights": weights, "head_outputs": head_outputs,
            "output": output}


def gelu_tanh(z: np.ndarray) -> np.ndarray:
    r"""GELU in its tanh form (GPT-2's ``gelu_new``):
    :math:`\tfrac12 z\,(1 + \tanh(\sqrt{2/\pi}\,(z + 0.044715\,z^3)))`."""
    return F32(0.5) * z * (F32(1) + np.tanh(F32(math.sqrt(2 / math.pi))
                                            * (z + F32(0.044715) * z * z * z)))


def feed_forward(x: np.ndarray, n: int, w: LMWeights, cfg: LMConfig) -> np.ndarray:
    r"""SwiGLU: :math:`W_2(\mathrm{SiLU}(W_g x) \odot W_u x)`, SiLU(z) = z·sigmoid(z); or,
    for ``cfg.mlp == "gelu"``, :math:`W_2\,\mathrm{GELU}(W_1 x + b_1) + b_2`."""
    if cfg.mlp == "gelu":
        h = linear(x, w.ffn_gate_up[n])  # (..., T, d_ff)
        if w.ffn_gate_up_bias is not None:
            h += w.ffn_gate_up_bias[n]
        out = linear(gelu_tanh(h), w.ffn_down[n])  # (..., T, d)
        if w.ffn_down_bias is not None:
            out += w.ffn_down_bias[n]
        return out
    gate_up = linear(x, w.ffn_gate_up[n])  # (..., T, 2 d_ff)
    gate, up = gate_up[..., : cfg.d_ff], gate_up[..., cfg.d_ff:]
    h = np.exp(-gate)  # SiLU(gate) · up, in place: one (T, d_ff) array, not four
    h += F32(1)
    np.divide(gate, h, out=h)
    h *= up
    return linear(h, w.ffn_down[n])  # (..., T, d)


@dataclass(frozen=True)
class Pass:
    """What :func:`forward` returns: the logits, the new cache, and (when asked) every
    intermediate by name, stacked over layers."""

    logits: np.ndarray  # (..., T, V) or (..., V) for the last position only
    cache: KVCache | None
    record: dict[str, np.ndarray]


def forward(m: LanguageModel, ids: np.ndarray, *, cache: KVCache | None = None,
            interventions: Interventions | None = None,
            record: bool | Collection[str] = False, last_only: bool = False,
            vocab: np.ndarray | None = None, keep_cache: bool = True) -> Pass:
    """Run the decoder on ``ids`` (..., T), after the ``cache`` of earlier positions.

    Parameters
    ----------
    interventions : Interventions, optional
        What the pass changes in the model (heads switched off, other weights or masks,
        a start part-way from a given stream, patched heads); none by default.
    record : bool or collection of names
        Keep every intermediate (q, k, v, weights, hidden states...) in ``record``, or
        only those named (``("weights",)``: every layer's attention, nothing else).
    last_only : bool
        Logits of the last position only (generation: one 49,152-row product, not T).
    vocab : (n,) token ids, optional
        Logits for these tokens only: an answer against a wrong answer needs 2 columns of
        the output matrix, not 49,152.
    keep_cache : bool
        Return the keys and values for a later call (generation); off for one-off passes.
    """
    iv = interventions or Interventions()
    cfg, w = m.config, iv.weights if iv.weights is not None else m.weights
    ids = np.asarray(ids)
    T, past = ids.shape[-1], cache.length if cache is not None else 0
    mask = iv.mask
    if mask is None and T > 1:  # one new token may read every key: no mask needed
        mask = causal_mask(T, past + T)
    positions = np.arange(past, past + T)
    if past + T > cfg.context_length and cfg.positions == "learned":
        raise ValueError(f"this model has learned positions for {cfg.context_length} tokens; "
                         f"got {past + T}")
    cos = sin = None
    if cfg.uses_rope:
        cos, sin = rope_angles(positions, cfg.d_head, cfg.rope_base, w.rope_factors)
    from_layer = iv.from_layer
    if from_layer or iv.stream is not None:
        if iv.stream is None or keep_cache or record:
            raise ValueError("from_layer needs the stream entering that layer, and no kept "
                             "cache or record")
        x = np.asarray(iv.stream, dtype=F32)
    else:
        x = np.asarray(w.token_embd[ids], dtype=F32)  # (..., T, d)
        if cfg.positions == "learned":  # GPT-2: each position's own vector, added
            x = x + w.pos_embd[positions]
    kept = _Record(record, cfg.n_layers)
    keys, values = [], []
    # Small products: BLAS threads only spin. Even the batches of patched runs were 5 to
    # 10 times slower with 2 threads on this 2-core machine while other work ran.
    with one_blas_thread():
        for n in range(from_layer, cfg.n_layers):
            h = norm(x, w.attn_norm[n], _layer(w.attn_norm_bias, n), cfg)
            layer_mask = mask if iv.layer_masks is None else iv.layer_masks.get(n, mask)
            a = attention(h, n, w, cfg, cos, sin, layer_mask,
                          None if cache is None else (cache.keys[n], cache.values[n]),
                          None if iv.head_mask is None else iv.head_mask[n],
                          iv.head_patch if n == from_layer else None)
            if keep_cache:
                keys.append(a["k"])
                values.append(a["v"])
            for name, value in {"hidden_states": x, "attn_norm_output": h, **a}.items():
                kept.add(name, n, value)
            x = x + a["output"]
            f = feed_forward(norm(x, w.ffn_norm[n], _layer(w.ffn_norm_bias, n), cfg), n, w, cfg)
            kept.add("ffn_output", n, f)
            x = x + f
        kept.add("hidden_states", cfg.n_layers, x)  # the last layer's output: L + 1 states
        final = norm(x[..., -1:, :] if last_only else x, w.output_norm, w.output_norm_bias, cfg)
        output = w.output if vocab is None else w.output[:, vocab]
        logits = linear(final, output)  # (..., T, d) x (d, V)
    if last_only:
        logits = logits[..., 0, :]
    if record is True:
        kept.arrays["final_norm_output"] = final
    return Pass(logits=logits, cache=KVCache(tuple(keys), tuple(values)) if keep_cache
                else None, record=kept.arrays)


def _layer(a: np.ndarray | None, n: int) -> np.ndarray | None:
    """Layer n's slice of an optional stacked array (a norm's bias: LayerNorm has one)."""
    return None if a is None else a[n]


class _Record:
    """The intermediates a pass keeps, each written into one array with a layer axis as
    the layers go (stacking 30 arrays afterwards cost about 5% of a 100-token pass): a
    per-head value (..., heads, T, ·) goes to (..., L, heads, T, ·), any other (..., T, ·)
    to (..., L, T, ·); hidden_states holds L + 1 states."""

    PER_HEAD = {"q", "k", "v", "weights", "head_outputs"}

    def __init__(self, record: bool | Collection[str], n_layers: int) -> None:
        self.record, self.n_layers = record, n_layers
        self.arrays: dict[str, np.ndarray] = {}

    def add(self, name: str, layer: int, value: np.ndarray) -> None:
        if not (self.record is True or (self.record and name in self.record)):
            return
        axis = value.ndim - (3 if name in self.PER_HEAD else 2)  # where the layer axis goes
        if name not in self.arrays:
            depth = self.n_layers + (name == "hidden_states")
            shape = (*value.shape[:axis], depth, *value.shape[axis:])
            self.arrays[name] = np.empty(shape, dtype=value.dtype)
        np.moveaxis(self.arrays[name], axis, 0)[layer] = value
