"""Lesson 0's two models, forward: their parameters, Bahdanau's additive attention (one
decoder step, with its backward pass), the encoder and the teacher-forced decoder."""

from __future__ import annotations

import numpy as np

from ..gru import gru_cell_forward, gru_forward
from ..layers import (
    embedding_forward,
    init_matrix,
    linear_forward,
    softmax_backward,
    softmax_forward,
)
from .task import BOS, MODELS, SYMBOLS


def init_params(d_model: int, rng: np.random.Generator, model: str,
                dtype=np.float32) -> dict:
    """The parameters of one model; the attention's three come last, so that both models
    drawn from the same ``rng`` start from the same values for every shared parameter.

    enc.E (V, d), enc.Wx, enc.Wh (d, 3d), enc.bx, enc.bh (3d,): encoder embedding and GRU;
    dec.E (V+1, d) (row BOS too), dec.Wy, dec.Wc, dec.Wh (d, 3d), dec.bx, dec.bh (3d,):
    decoder embedding and GRU, whose input [E_y[y]; c] is split into its two halves;
    out.W (2d, V), out.b (V,): the output layer on [s_t; c_t];
    att.W, att.U (d, d), att.v (d,): the additive score (attention model only).
    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}; got {model!r}")
    d, V = d_model, SYMBOLS
    p = {
        "enc.E": rng.standard_normal((V, d)),
        "enc.Wx": init_matrix(rng, d, 3 * d), "enc.bx": np.zeros(3 * d),
        "enc.Wh": init_matrix(rng, d, 3 * d), "enc.bh": np.zeros(3 * d),
        "dec.E": rng.standard_normal((V + 1, d)),
        "dec.Wy": init_matrix(rng, d, 3 * d), "dec.Wc": init_matrix(rng, d, 3 * d),
        "dec.bx": np.zeros(3 * d),
        "dec.Wh": init_matrix(rng, d, 3 * d), "dec.bh": np.zeros(3 * d),
        "out.W": init_matrix(rng, 2 * d, V), "out.b": np.zeros(V),
    }
    if model == "attention":
        p["att.W"] = init_matrix(rng, d, d)
        p["att.U"] = init_matrix(rng, d, d)
        p["att.v"] = init_matrix(rng, d, 1)[:, 0]
    return {name: value.astype(dtype) for name, value in p.items()}


def count_parameters(d_model: int, model: str) -> int:
    """Number of trained numbers in one model (17,324 fixed and 19,404 attention at d = 32:
    V d + 2 (3d² + 3d) + (V+1) d + 3 (3d²) + 2 (3d) + 2d V + V, plus 2d² + d for attention)."""
    shapes = init_params(d_model, np.random.default_rng(0), model)
    return sum(value.size for value in shapes.values())


# --- Bahdanau's additive attention, one decoder step ---------------------------------


def additive_step_forward(s_prev, h, Uh, W, v):
    r"""The context of one decoder step: :math:`e_j = v^\top\tanh(W s_{t-1} + U h_j)`,
    :math:`\alpha = \mathrm{softmax}(e)`, :math:`c = \sum_j \alpha_j h_j`.

    s_prev (B, d) the decoder's previous state, h (B, Ts, d) every encoder state,
    Uh = h U (B, Ts, A) computed once per batch (it does not depend on t), W (d, A),
    v (A,). Returns (c (B, d), alpha (B, Ts), cache) with alpha's rows summing to 1 and
    cache = (s_prev, h, u, alpha, W, v), u = tanh(...) (B, Ts, A).
    """
    q = s_prev @ W  # (B, d) x (d, A) -> (B, A)
    u = np.tanh(q[:, None, :] + Uh)  # (B, 1, A) + (B, Ts, A) -> (B, Ts, A)
    e = u @ v  # (B, Ts, A) x (A,) -> (B, Ts)
    alpha = softmax_forward(e)
    c = (alpha[:, None, :] @ h)[:, 0]  # (B, 1, Ts) x (B, Ts, d) -> (B, d)
    return c, alpha, (s_prev, h, u, alpha, W, v)


def additive_step_backward(dc, cache, through_context: bool = True):
    """Gradients of one step, given dc (B, d).

    Returns (ds_prev (B, d), dh (B, Ts, d), dUh (B, Ts, A), dq (B, A), dv (A,)); dq is
    the gradient of q = s_prev W, so dW = s_prevᵀ dq, and dU = hᵀ dUh (the model forms
    both for every step at once after its loop). dh is the gradient through
    c = Σ_j α_j h_j only (h also reaches the score through Uh); with
    ``through_context=False`` it is None, for a caller that forms Σ_t α_tᵀ dc_t for every
    step in one product after its loop.
    """
    s_prev, h, u, alpha, W, v = cache
    dh = alpha[:, :, None] * dc[:, None, :] if through_context else None  # (B, Ts, d)
    dalpha = (h @ dc[:, :, None])[:, :, 0]  # (B, Ts, d) x (B, d, 1) -> (B, Ts)
    de = softmax_backward(dalpha, alpha)  # (B, Ts)
    A = v.shape[0]
    dv = (de.reshape(1, -1) @ u.reshape(-1, A))[0]  # (1, B Ts) x (B Ts, A) -> (A,)
    dUh = u * u
    dUh -= 1
    dUh *= de[:, :, None] * -v  # (B, Ts, A) = de v (1 - u²): through v and tanh
    dq = dUh.sum(axis=1)  # q was broadcast over the source positions
    return dq @ W.T, dh, dUh, dq, dv


# --- the encoder-decoder --------------------------------------------------------------


def encode(p: dict, src: np.ndarray):
    """Encoder states hs (B, Ts, d) and the caches of the embedding and the GRU."""
    B, _ = src.shape
    x, c_emb = embedding_forward(src, p["enc.E"])  # (B, Ts, d)
    gx = x @ p["enc.Wx"] + p["enc.bx"]  # (B, Ts, 3d): every step's input part in one product
    h0 = np.zeros((B, p["enc.Wh"].shape[0]), dtype=gx.dtype)
    hs, c_gru = gru_forward(gx, h0, p["enc.Wh"], p["enc.bh"])
    return hs, (x, c_emb, h0, c_gru)


def decoder_inputs(src: np.ndarray) -> np.ndarray:
    """Teacher forcing: y_0 = BOS, then the correct previous symbol. (B, T) -> (B, T)."""
    return np.concatenate([np.full((src.shape[0], 1), BOS), src[:, :-1]], axis=1)


def forward(p: dict, src: np.ndarray, model: str, inputs: np.ndarray | None = None):
    """The teacher-forced pass: logits (B, T, V) of every output step, and the caches.

    src (B, T) the strings (which are also the targets); inputs (B, T) the decoder's
    inputs y_{t-1} (default :func:`decoder_inputs`). caches["weights"] (B, T, T) holds
    the attention weights (output steps x source positions; None for the fixed model).
    """
    attend = model == "attention"
    B, T = src.shape
    hs, enc = encode(p, src)  # (B, T, d)
    h_last = hs[:, -1]
    y = decoder_inputs(src) if inputs is None else inputs
    ey, c_ey = embedding_forward(y, p["dec.E"])  # (B, T, d)
    gy = ey @ p["dec.Wy"] + p["dec.bx"]  # (B, T, 3d): the y part of every step's input
    Uh = hs @ p["att.U"] if attend else None  # (B, T, A), once per batch
    d = h_last.shape[-1]
    S = np.empty((B, T, d), dtype=hs.dtype)  # s_t
    C = np.empty_like(S)  # c_t
    weights = np.empty((B, T, T), dtype=hs.dtype) if attend else None
    s, steps = h_last, []
    for t in range(T):
        if attend:
            c, weights[:, t], c_att = additive_step_forward(s, hs, Uh, p["att.W"], p["att.v"])
        else:
            c, c_att = h_last, None
        s, c_cell = gru_cell_forward(gy[:, t] + c @ p["dec.Wc"], s, p["dec.Wh"], p["dec.bh"])
        S[:, t], C[:, t] = s, c
        steps.append((c_att, c_cell))
    logits, c_out = linear_forward(np.concatenate([S, C], axis=-1), p["out.W"], p["out.b"])
    caches = {"enc": enc, "hs": hs, "ey": ey, "c_ey": c_ey, "S": S, "C": C,
              "steps": steps, "out": c_out, "weights": weights, "attend": attend}
    return logits, caches
