"""The plain layers of the trainable models: embedding, linear, softmax, cross-entropy.

Each layer is a pair of functions in the style of micrograd and minGPT:
``*_forward(inputs, params) -> (out, cache)`` and ``*_backward(dout, cache) -> grads``.
The cache is a small tuple that holds exactly what the backward pass needs, named in
each forward. Gradients are returned, never accumulated in hidden state; float64
throughout, so the finite-difference checks in the tests can reach 1e-6.

Shape letters: ``B`` batch, ``T`` tokens, ``D`` model width, ``V`` vocabulary,
``C`` classes, ``N`` rows of a flattened batch.
"""

from __future__ import annotations

import numpy as np


def init_matrix(rng: np.random.Generator, fan_in: int, fan_out: int, scale: float = 1.0):
    r"""A (fan_in, fan_out) weight matrix with entries drawn from
    :math:`\mathcal N(0, (\text{scale}/\sqrt{\text{fan\_in}})^2)`.

    With ``scale = 1`` a unit-variance input gives unit-variance outputs; the collapse
    demo raises ``scale`` to show what a bad initial scale does to attention.
    """
    return rng.standard_normal((fan_in, fan_out)) * (scale / np.sqrt(fan_in))


def embedding_forward(ids: np.ndarray, table: np.ndarray):
    """Look up one row of ``table`` per token id.

    ids (B, T) int, table (V, D) -> out (B, T, D); cache = (ids, V).
    """
    return table[ids], (ids, table.shape[0])


def embedding_backward(dout: np.ndarray, cache) -> np.ndarray:
    """dtable (V, D): each row sums the gradients of every position holding that id."""
    ids, V = cache
    D = dout.shape[-1]
    dtable = np.zeros((V, D))
    np.add.at(dtable, ids.ravel(), dout.reshape(-1, D))  # repeated ids add up
    return dtable


def linear_forward(x: np.ndarray, W: np.ndarray, b: np.ndarray | None = None):
    """y = x W + b over the last axis.

    x (..., Din), W (Din, Dout), b (Dout,) or None -> y (..., Dout); cache = (x, W).
    """
    y = x @ W
    if b is not None:
        y = y + b
    return y, (x, W)


def linear_backward(dy: np.ndarray, cache):
    """Return (dx, dW, db) for :func:`linear_forward`; db sums over every leading axis."""
    x, W = cache
    Din, Dout = W.shape
    dx = dy @ W.T  # (..., Dout) x (Dout, Din) -> (..., Din)
    dW = x.reshape(-1, Din).T @ dy.reshape(-1, Dout)  # (Din, N) x (N, Dout)
    db = dy.reshape(-1, Dout).sum(axis=0)
    return dx, dW, db


def softmax_forward(scores: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Softmax along the last axis; ``mask`` (broadcastable, True = may attend) sets
    the other entries to exactly 0. Every row must keep at least one allowed entry
    (the models here always leave a token to attend to)."""
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    shifted = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


def softmax_backward(dweights: np.ndarray, weights: np.ndarray) -> np.ndarray:
    r"""Gradient through a row softmax: :math:`ds = a \odot (da - \sum_j a_j\,da_j)`.

    Masked entries have weight 0 and so get gradient 0.
    """
    return weights * (dweights - np.sum(dweights * weights, axis=-1, keepdims=True))


def cross_entropy_forward(logits: np.ndarray, targets: np.ndarray, weight=None):
    r"""Mean softmax cross-entropy :math:`-\log p_{y}` over the rows that count.

    logits (N, C), targets (N,) int, weight (N,) of 0/1 (which rows count; all if None)
    -> (loss, cache) with cache = (probs, targets, weight / number counted).
    """
    N = logits.shape[0]
    w = np.ones(N) if weight is None else weight.astype(np.float64)
    count = max(w.sum(), 1.0)
    probs = softmax_forward(logits)
    picked = probs[np.arange(N), targets]
    loss = -np.sum(w * np.log(np.maximum(picked, 1e-300))) / count
    return float(loss), (probs, targets, w / count)


def cross_entropy_backward(cache) -> np.ndarray:
    """dlogits (N, C) = (probs - onehot(target)) · row weight / count."""
    probs, targets, w = cache
    d = probs.copy()
    d[np.arange(len(targets)), targets] -= 1.0
    return d * w[:, None]
