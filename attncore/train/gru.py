r"""A gated recurrent unit (GRU; Cho et al. 2014), forward and backward by hand.

One step reads an input ``x`` and the previous state ``h`` and returns the next state:

.. math::

    r &= \sigma(x W_{xr} + b_{xr} + h W_{hr} + b_{hr})            && \text{reset gate} \\
    z &= \sigma(x W_{xz} + b_{xz} + h W_{hz} + b_{hz})            && \text{update gate} \\
    n &= \tanh(x W_{xn} + b_{xn} + r \odot (h W_{hn} + b_{hn}))   && \text{candidate} \\
    h' &= (1 - z) \odot n + z \odot h

The reset gate multiplies the recurrent product *after* it is taken (the form PyTorch
and cuDNN use; Cho et al. write :math:`U(r \odot h)`), so the three gates share one
product per step: :math:`W_x` (D_in, 3d) and :math:`W_h` (d, 3d) hold the gates side by
side as ``[r | z | n]``. The input part ``gx = x W_x + b_x`` of every time step is then
one product taken before the loop, the recurrent part ``gh = h W_h + b_h`` one (B, d) x
(d, 3d) product per step, and the weight gradients two products after the backward loop
(:func:`gru_weight_grads`).

Each function is a forward/backward pair in the style of :mod:`attncore.train.layers`;
the cache of a step is ``(h, rz, n, ghn)``, exactly what its backward needs. Shape
letters: ``B`` batch, ``T`` time steps, ``d`` state width. The arrays keep the dtype
they are given (float32 in training, float64 in the gradient checks).
"""

from __future__ import annotations

import numpy as np


def sigmoid(x: np.ndarray) -> np.ndarray:
    r""":math:`\sigma(x) = 1/(1+e^{-x}) = (1 + \tanh(x/2))/2`; the tanh form never overflows."""
    return 0.5 + 0.5 * np.tanh(0.5 * x)


def gru_cell_forward(gx: np.ndarray, h: np.ndarray, W_h: np.ndarray, b_h: np.ndarray):
    """One GRU step from a precomputed input part.

    gx (B, 3d) is ``x W_x + b_x`` (gates [r | z | n]), h (B, d) the previous state,
    W_h (d, 3d), b_h (3d,). Returns (h_new (B, d), cache) with cache = (h, rz, n, ghn):
    rz (B, 2d) the reset and update gates side by side, n (B, d) the candidate, and
    ghn = h W_hn + b_hn (B, d), the recurrent part the reset gate scales.
    """
    d = h.shape[-1]
    gh = h @ W_h + b_h  # (B, d) x (d, 3d) -> (B, 3d): all three gates in one product
    rz = sigmoid(gx[:, :2 * d] + gh[:, :2 * d])  # (B, 2d): [r | z] in one call
    r, z, ghn = rz[:, :d], rz[:, d:], gh[:, 2 * d:]
    n = np.tanh(gx[:, 2 * d:] + r * ghn)
    h_new = n + z * (h - n)  # = (1 - z) n + z h
    return h_new, (h, rz, n, ghn)


def gru_cell_backward(dh_new: np.ndarray, cache, W_h: np.ndarray):
    """Gradients of one step, given dh_new (B, d).

    Returns (dgx (B, 3d), dh (B, d), dgh (B, 3d)): dgx flows to the input part (so
    dW_x = xᵀ dgx, db_x = Σ dgx, dx = dgx W_xᵀ), dh to the previous state, and dgh to the
    recurrent part (dW_h = hᵀ dgh and db_h = Σ dgh, formed by :func:`gru_weight_grads`).
    """
    h, rz, n, ghn = cache
    d = h.shape[-1]
    r, z = rz[:, :d], rz[:, d:]
    dan = dh_new * (1 - z) * (1 - n * n)  # through (1 - z) n, then tanh
    drz = np.concatenate([dan * ghn, dh_new * (h - n)], axis=1)  # (B, 2d): d/dr, d/dz
    drz *= rz * (1 - rz)  # through both sigmoids at once
    dgx = np.concatenate([drz, dan], axis=1)  # (B, 3d)
    dgh = np.concatenate([drz, dan * r], axis=1)  # (B, 3d): r scales ghn
    dh = dh_new * z + dgh @ W_h.T  # (B, 3d) x (3d, d) -> (B, d)
    return dgx, dh, dgh


def gru_forward(gx: np.ndarray, h0: np.ndarray, W_h: np.ndarray, b_h: np.ndarray):
    """Run the cell over every time step.

    gx (B, T, 3d) the input parts of all steps (one product before the loop), h0 (B, d)
    the initial state. Returns (hs (B, T, d), caches): hs[:, t] is the state after step
    t, caches the T step caches.
    """
    B, T, _ = gx.shape
    hs = np.empty((B, T, h0.shape[-1]), dtype=h0.dtype)
    caches, h = [], h0
    for t in range(T):
        h, cache = gru_cell_forward(gx[:, t], h, W_h, b_h)
        hs[:, t] = h
        caches.append(cache)
    return hs, caches


def gru_backward(dhs: np.ndarray, caches, W_h: np.ndarray, dh_last: np.ndarray | None = None):
    """Backpropagation through time for :func:`gru_forward`.

    dhs (B, T, d) is the gradient reaching each state from outside the recurrence (an
    output layer), dh_last (B, d) an extra gradient on the last state. Returns
    (dgx (B, T, 3d), dh0 (B, d), dgh (B, T, 3d)).
    """
    B, T, d = dhs.shape
    dgx = np.empty((B, T, 3 * d), dtype=dhs.dtype)
    dgh = np.empty_like(dgx)
    dh = np.zeros((B, d), dtype=dhs.dtype) if dh_last is None else dh_last
    for t in reversed(range(T)):
        dgx[:, t], dh, dgh[:, t] = gru_cell_backward(dhs[:, t] + dh, caches[t], W_h)
    return dgx, dh, dgh


def gru_weight_grads(h_prev: np.ndarray, dgh: np.ndarray):
    """(dW_h (d, 3d), db_h (3d,)) from every step's previous state h_prev (B, T, d) and dgh
    (B, T, 3d): one product over all steps and rows, after the backward loop."""
    d = h_prev.shape[-1]
    dgh = dgh.reshape(-1, 3 * d)
    return h_prev.reshape(-1, d).T @ dgh, dgh.sum(axis=0)  # (d, N) x (N, 3d)
