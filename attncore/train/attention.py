r"""The attention layers the models learn with, each a forward/backward pair.

* :func:`self_attention_forward` — multi-head self-attention, optional causal and
  padding masks, every head at once (no loop over heads or batch rows).
* :func:`pool_forward` — attention pooling with a learned query: one weight per token,
  a weighted average of the tokens. Scores may come from a different array than the
  values (the sentiment model scores the layer's input and pools its output).
* :func:`cross_attention_forward` — a decoder attending over the encoder, with the
  Bahdanau (additive) or Luong (general) score.

Formulas (rows are queries, columns keys):
:math:`A = \mathrm{softmax}(QK^\top/\sqrt{d_k})`, :math:`Y = A V W_o`;
additive :math:`e_{tj} = v^\top\tanh(W_1 s_t + W_2 h_j)`; general :math:`e_{tj} = s_t^\top W h_j`.
"""

from __future__ import annotations

import numpy as np

from .layers import softmax_backward, softmax_forward

ATTENTION_KEYS = ("Wq", "Wk", "Wv", "Wo")


def self_attention_forward(x, p: dict, n_heads: int, mask=None):
    """Multi-head self-attention.

    x (B, T, D); p holds Wq, Wk, Wv, Wo, each (D, D); mask broadcastable to
    (B, H, T, T), True = may attend (None: all). Returns (y (B, T, D), cache) where
    cache = (x, q, k, v, a, o, p, H) and ``a`` (B, H, T, T) are the weights.
    """
    B, T, D = x.shape
    H = n_heads
    dk = D // H
    q = (x @ p["Wq"]).reshape(B, T, H, dk).transpose(0, 2, 1, 3)  # (B, H, T, dk)
    k = (x @ p["Wk"]).reshape(B, T, H, dk).transpose(0, 2, 1, 3)  # (B, H, T, dk)
    v = (x @ p["Wv"]).reshape(B, T, H, dk).transpose(0, 2, 1, 3)  # (B, H, T, dk)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dk)  # (B, H, T, dk) x (B, H, dk, T) -> (B, H, T, T)
    a = softmax_forward(s, mask)
    o = (a @ v).transpose(0, 2, 1, 3).reshape(B, T, D)  # (B, H, T, dk) -> (B, T, D)
    y = o @ p["Wo"]
    return y, (x, q, k, v, a, o, p, H)


def self_attention_backward(dy, cache):
    """Return (dx (B, T, D), grads {Wq, Wk, Wv, Wo}) for :func:`self_attention_forward`."""
    x, q, k, v, a, o, p, H = cache
    B, T, D = x.shape
    dk = D // H
    dWo = o.reshape(-1, D).T @ dy.reshape(-1, D)
    do = (dy @ p["Wo"].T).reshape(B, T, H, dk).transpose(0, 2, 1, 3)  # (B, H, T, dk)
    da = do @ v.transpose(0, 1, 3, 2)  # (B, H, T, T)
    dv = a.transpose(0, 1, 3, 2) @ do  # (B, H, T, dk)
    ds = softmax_backward(da, a) / np.sqrt(dk)  # (B, H, T, T)
    dq = ds @ k  # (B, H, T, dk)
    dkk = ds.transpose(0, 1, 3, 2) @ q  # (B, H, T, dk)
    grads, dx = {}, np.zeros_like(x)
    for name, d in (("Wq", dq), ("Wk", dkk), ("Wv", dv)):
        d = d.transpose(0, 2, 1, 3).reshape(B, T, D)  # (B, T, D)
        grads[name] = x.reshape(-1, D).T @ d.reshape(-1, D)
        dx += d @ p[name].T
    grads["Wo"] = dWo
    return dx, grads


def pool_forward(x_score, x_value, Wk, query, mask=None, temperature: float = 1.0):
    r"""Attention pooling with a learned query.

    x_score (B, T, D) gives the keys ``k = x_score Wk`` (Wk (D, dk)); query (dk,);
    x_value (B, T, Dv) is averaged; mask (B, T), True = a real token.
    :math:`a = \mathrm{softmax}(k q / (\sqrt{d_k}\,\tau))`, :math:`y = \sum_t a_t x_t`.
    Returns (y (B, Dv), cache) with cache = (x_score, x_value, k, a, Wk, query, c) and
    ``a`` (B, T) the pooling weights.
    """
    k = x_score @ Wk  # (B, T, dk)
    c = 1.0 / (np.sqrt(Wk.shape[1]) * temperature)
    a = softmax_forward((k @ query) * c, mask)  # (B, T)
    y = np.einsum("bt,btd->bd", a, x_value)  # (B, Dv)
    return y, (x_score, x_value, k, a, Wk, query, c)


def pool_backward(dy, cache):
    """Return (dx_score, dx_value, dWk, dquery) for :func:`pool_forward`."""
    x_score, x_value, k, a, Wk, query, c = cache
    dx_value = a[:, :, None] * dy[:, None, :]  # (B, T, Dv)
    da = np.einsum("btd,bd->bt", x_value, dy)  # (B, T)
    ds = softmax_backward(da, a) * c  # (B, T)
    dquery = np.einsum("bt,btk->k", ds, k)
    dk = ds[:, :, None] * query  # (B, T, dk)
    D = x_score.shape[-1]
    dWk = x_score.reshape(-1, D).T @ dk.reshape(-1, Wk.shape[1])
    return dk @ Wk.T, dx_value, dWk, dquery


def cross_attention_forward(s, h, p: dict, kind: str, mask=None):
    """Decoder states ``s`` (B, Tt, D) attend over encoder states ``h`` (B, Ts, D).

    kind "additive" uses p W1 (D, A), W2 (D, A), v (A,); kind "general" uses p W (D, D).
    mask (B, 1, Ts), True = a real source token. Returns (context (B, Tt, D), cache);
    cache[3] is the alignment ``a`` (B, Tt, Ts), rows summing to 1.
    """
    if kind == "additive":
        u = np.tanh((s @ p["W1"])[:, :, None, :] + (h @ p["W2"])[:, None, :, :])  # (B, Tt, Ts, A)
        e = u @ p["v"]  # (B, Tt, Ts)
        extra = u
    elif kind == "general":
        hw = h @ p["W"].T  # (B, Ts, D): row j is W h_j
        e = s @ hw.transpose(0, 2, 1)  # (B, Tt, D) x (B, D, Ts) -> (B, Tt, Ts)
        extra = hw
    else:
        raise ValueError(f"kind must be 'additive' or 'general'; got {kind!r}")
    a = softmax_forward(e, mask)
    context = a @ h  # (B, Tt, Ts) x (B, Ts, D) -> (B, Tt, D)
    return context, (s, h, p, a, kind, extra)


def cross_attention_backward(dcontext, cache):
    """Return (ds, dh, grads) for :func:`cross_attention_forward`."""
    s, h, p, a, kind, extra = cache
    dh = a.transpose(0, 2, 1) @ dcontext  # (B, Ts, D)
    da = dcontext @ h.transpose(0, 2, 1)  # (B, Tt, Ts)
    de = softmax_backward(da, a)  # (B, Tt, Ts)
    D = s.shape[-1]
    if kind == "additive":
        u = extra
        dv = np.einsum("bts,btsa->a", de, u)
        dpre = de[..., None] * p["v"] * (1.0 - u**2)  # (B, Tt, Ts, A)
        dsw, dhw = dpre.sum(axis=2), dpre.sum(axis=1)  # (B, Tt, A), (B, Ts, A)
        A = dsw.shape[-1]
        grads = {
            "W1": s.reshape(-1, D).T @ dsw.reshape(-1, A),
            "W2": h.reshape(-1, D).T @ dhw.reshape(-1, A),
            "v": dv,
        }
        return dsw @ p["W1"].T, dh + dhw @ p["W2"].T, grads
    hw = extra
    ds = de @ hw  # (B, Tt, D)
    dhw = de.transpose(0, 2, 1) @ s  # (B, Ts, D)
    grads = {"W": dhw.reshape(-1, D).T @ h.reshape(-1, D)}  # hw = h W^T
    return ds, dh + dhw @ p["W"], grads
