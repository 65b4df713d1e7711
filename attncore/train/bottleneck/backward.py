"""Lesson 0's backward pass: the gradient of every parameter of either model, written by
hand (checked against finite differences in the tests)."""

from __future__ import annotations

import numpy as np

from ..gru import gru_backward, gru_cell_backward, gru_weight_grads
from ..layers import cross_entropy_backward, cross_entropy_forward, linear_backward
from .network import additive_step_backward, forward


def symbol_counts(ids: np.ndarray, V: int, grad: np.ndarray) -> np.ndarray:
    """(V, k): row i sums the rows of ``grad`` (..., k) at the positions holding symbol i.

    An embedding's gradient is this times the next layer's weights transposed
    (dE = onehotᵀ dgx W_xᵀ); the one-hot product is faster here than np.add.at.
    """
    k = grad.shape[-1]
    one_hot = (ids.reshape(-1, 1) == np.arange(V)).astype(grad.dtype)  # (N, V)
    return one_hot.T @ grad.reshape(-1, k)  # (V, N) x (N, k)


def backward(p: dict, dlogits: np.ndarray, caches: dict) -> dict:
    """Gradients of every parameter (same dtype as the parameter), given dlogits (B, T, V)."""
    attend, hs, S, C = caches["attend"], caches["hs"], caches["S"], caches["C"]
    B, T, d = S.shape
    g = {}
    dz, g["out.W"], g["out.b"] = linear_backward(dlogits, caches["out"])
    dS, dC = dz[..., :d], dz[..., d:]  # (B, T, d) each
    h_last = hs[:, -1]
    ds = np.zeros_like(h_last)
    dhs = np.zeros_like(hs)  # gradient on the encoder states from the decoder
    dh_last = np.zeros_like(h_last)
    dgx = np.empty((B, T, 3 * d), dtype=S.dtype)
    dgh = np.empty_like(dgx)
    dC_all = np.empty_like(S)  # the whole gradient reaching each c_t
    if attend:
        A = p["att.v"].shape[0]
        dUh, dq = np.zeros((B, T, A), dtype=S.dtype), np.empty((B, T, A), dtype=S.dtype)
        dv = np.zeros(A, dtype=S.dtype)
    for t in reversed(range(T)):
        c_att, c_cell = caches["steps"][t]
        dgx[:, t], ds, dgh[:, t] = gru_cell_backward(dS[:, t] + ds, c_cell, p["dec.Wh"])
        dc = dC_all[:, t] = dC[:, t] + dgx[:, t] @ p["dec.Wc"].T  # (B, 3d) x (3d, d)
        if attend:
            ds_att, _, dUh_t, dq[:, t], dv_t = additive_step_backward(dc, c_att, False)
            ds += ds_att
            dUh += dUh_t
            dv += dv_t
    if not attend:
        dh_last += dC_all.sum(axis=1)  # c_t = h_n at every step
    dh_last += ds  # s_0 = h_n
    # weight gradients of the decoder: one product each over every step and row
    S_prev = np.concatenate([h_last[:, None], S[:, :-1]], axis=1)  # s_{t-1} (B, T, d)
    flat = dgx.reshape(-1, 3 * d)
    g["dec.Wy"] = caches["ey"].reshape(-1, d).T @ flat
    g["dec.Wc"] = C.reshape(-1, d).T @ flat  # (d, B T) x (B T, 3d)
    g["dec.bx"] = flat.sum(axis=0)
    g["dec.E"] = symbol_counts(caches["c_ey"][0], p["dec.E"].shape[0], flat) @ p["dec.Wy"].T
    g["dec.Wh"], g["dec.bh"] = gru_weight_grads(S_prev, dgh)
    if attend:
        g["att.W"] = S_prev.reshape(-1, d).T @ dq.reshape(-1, A)
        g["att.U"] = hs.reshape(-1, d).T @ dUh.reshape(-1, A)
        g["att.v"] = dv
        dhs += caches["weights"].transpose(0, 2, 1) @ dC_all  # (B, Ts, Tt) x (B, Tt, d): via c_t
        dhs += dUh @ p["att.U"].T  # (B, Ts, A) x (A, d): via the scores
    dhs[:, -1] += dh_last
    # the encoder
    x, c_emb, h0, c_gru = caches["enc"]
    dgx_e, _, dgh_e = gru_backward(dhs, c_gru, p["enc.Wh"])
    g["enc.Wx"] = x.reshape(-1, d).T @ dgx_e.reshape(-1, 3 * d)
    g["enc.bx"] = dgx_e.reshape(-1, 3 * d).sum(axis=0)
    g["enc.E"] = symbol_counts(c_emb[0], p["enc.E"].shape[0], dgx_e) @ p["enc.Wx"].T
    H_prev = np.concatenate([h0[:, None], hs[:, :-1]], axis=1)  # h_{j-1} (B, T, d)
    g["enc.Wh"], g["enc.bh"] = gru_weight_grads(H_prev, dgh_e)
    return {name: grad.astype(p[name].dtype, copy=False) for name, grad in g.items()}


def loss_and_gradients(p: dict, src: np.ndarray, model: str):
    """Mean cross-entropy over every output step of every string, and its gradients."""
    logits, caches = forward(p, src, model)
    V = logits.shape[-1]
    loss, c = cross_entropy_forward(logits.reshape(-1, V), src.ravel())
    dlogits = cross_entropy_backward(c).reshape(logits.shape).astype(logits.dtype)
    return loss, backward(p, dlogits, caches)
