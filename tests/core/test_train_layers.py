"""Every hand-written backward pass of attncore.train against central finite differences.

Each check builds a scalar loss L = sum(out * R) with a fixed random R, so dL/dout = R,
and compares the analytic gradient of every input and parameter with
(L(θ + h) - L(θ - h)) / 2h, in float64; the relative error
||num - ana|| / (||num|| + ||ana||) must be <= 1e-6.
"""

import numpy as np
import pytest
from gradcheck import TOL, check, numeric_grad, rel_error

from attncore.train import alignment, induction, sentiment
from attncore.train.attention import (
    cross_attention_backward,
    cross_attention_forward,
    pool_backward,
    pool_forward,
    self_attention_backward,
    self_attention_forward,
)
from attncore.train.layers import (
    cross_entropy_backward,
    cross_entropy_forward,
    embedding_backward,
    embedding_forward,
    linear_backward,
    linear_forward,
    softmax_backward,
    softmax_forward,
)
from attncore.train.optim import AdamState, adam_step


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def test_embedding(rng):
    ids = np.array([[0, 2, 2], [1, 0, 3]])  # repeated ids must add their gradients
    table = rng.standard_normal((4, 5))
    R = rng.standard_normal((2, 3, 5))
    _, cache = embedding_forward(ids, table)
    check(lambda: np.sum(embedding_forward(ids, table)[0] * R),
          {"table": embedding_backward(R, cache)}, {"table": table})


def test_linear(rng):
    x, W, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5)), rng.standard_normal(5)
    R = rng.standard_normal((2, 3, 5))
    _, cache = linear_forward(x, W, b)
    dx, dW, db = linear_backward(R, cache)
    check(lambda: np.sum(linear_forward(x, W, b)[0] * R),
          {"x": dx, "W": dW, "b": db}, {"x": x, "W": W, "b": b})


def test_masked_softmax(rng):
    s = rng.standard_normal((3, 4))
    mask = np.array([[1, 1, 0, 1], [1, 0, 0, 0], [1, 1, 1, 1]], dtype=bool)
    R = rng.standard_normal((3, 4))
    a = softmax_forward(s, mask)
    assert np.all(a[~mask] == 0) and np.allclose(a.sum(axis=1), 1)
    check(lambda: np.sum(softmax_forward(s, mask) * R), {"s": softmax_backward(R, a)}, {"s": s})


def test_cross_entropy_with_row_weights(rng):
    logits = rng.standard_normal((5, 3))
    targets = np.array([0, 2, 1, 1, 0])
    weight = np.array([1, 1, 0, 1, 0])  # rows 2 and 4 do not count
    _, cache = cross_entropy_forward(logits, targets, weight)
    d = cross_entropy_backward(cache)
    assert np.all(d[[2, 4]] == 0)
    check(lambda: cross_entropy_forward(logits, targets, weight)[0],
          {"logits": d}, {"logits": logits})


@pytest.mark.parametrize("heads, causal", [(1, False), (2, True)])
def test_self_attention(rng, heads, causal):
    B, T, D = 2, 4, 6
    x = rng.standard_normal((B, T, D))
    p = {k: rng.standard_normal((D, D)) * 0.5 for k in ("Wq", "Wk", "Wv", "Wo")}
    if causal:
        mask = np.tril(np.ones((T, T), dtype=bool))
    else:  # the second sentence has one padding token
        mask = np.array([[1, 1, 1, 1], [1, 1, 1, 0]], dtype=bool)[:, None, None, :]
    R = rng.standard_normal((B, T, D))
    _, cache = self_attention_forward(x, p, heads, mask)
    dx, grads = self_attention_backward(R, cache)
    check(lambda: np.sum(self_attention_forward(x, p, heads, mask)[0] * R),
          {"x": dx, **grads}, {"x": x, **p})


def test_attention_pooling(rng):
    B, T, D, Dv = 2, 5, 4, 3
    xs, xv = rng.standard_normal((B, T, D)), rng.standard_normal((B, T, Dv))
    Wk, q = rng.standard_normal((D, D)), rng.standard_normal(D)
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=bool)
    R = rng.standard_normal((B, Dv))
    _, cache = pool_forward(xs, xv, Wk, q, mask, temperature=0.7)
    dxs, dxv, dWk, dq = pool_backward(R, cache)
    check(lambda: np.sum(pool_forward(xs, xv, Wk, q, mask, 0.7)[0] * R),
          {"xs": dxs, "xv": dxv, "Wk": dWk, "q": dq}, {"xs": xs, "xv": xv, "Wk": Wk, "q": q})


@pytest.mark.parametrize("kind", ["additive", "general"])
def test_cross_attention(rng, kind):
    B, Tt, Ts, D, A = 2, 3, 4, 5, 3
    s, h = rng.standard_normal((B, Tt, D)), rng.standard_normal((B, Ts, D))
    if kind == "additive":
        p = {"W1": rng.standard_normal((D, A)), "W2": rng.standard_normal((D, A)),
             "v": rng.standard_normal(A)}
    else:
        p = {"W": rng.standard_normal((D, D)) * 0.5}
    mask = np.array([[1, 1, 1, 1], [1, 1, 0, 0]], dtype=bool)[:, None, :]
    R = rng.standard_normal((B, Tt, D))
    _, cache = cross_attention_forward(s, h, p, kind, mask)
    ds, dh, grads = cross_attention_backward(R, cache)
    check(lambda: np.sum(cross_attention_forward(s, h, p, kind, mask)[0] * R),
          {"s": ds, "h": dh, **grads}, {"s": s, "h": h, **p})


def model_check(params, loss, grads):
    """Whole-model check: every entry of every parameter's gradient."""
    for name, arr in params.items():
        err = rel_error(numeric_grad(loss, arr), grads[name])
        assert err <= TOL, f"{name}: relative error {err:.2e}"


@pytest.mark.parametrize("model", sentiment.MODELS)
def test_sentiment_model(rng, model):
    config = sentiment.SentimentConfig(model=model, d_model=4, heads=2, pool_first=0)
    p = sentiment.init_params(config, rng)
    ids = np.array([[1, 30, 20, 0], [5, 6, 7, 8]])  # padding in the first sentence
    labels = np.array([1, 0])

    def loss():
        return cross_entropy_forward(sentiment.forward(p, ids)[0], labels)[0]

    logits, caches = sentiment.forward(p, ids)
    _, c = cross_entropy_forward(logits, labels)
    model_check(p, loss, sentiment.backward(p, cross_entropy_backward(c), caches))


@pytest.mark.parametrize("kind", alignment.KINDS)
def test_alignment_model(rng, kind):
    config = alignment.AlignmentConfig(kind=kind, d_model=4)
    p = alignment.init_params(config, rng)
    src, dec, tgt, _ = alignment.make_pairs(rng, 2)
    src, dec, tgt = src[:, :6], dec[:, :6], tgt[:, :6]
    V = len(alignment.TARGET_VOCAB)

    def loss():
        logits = alignment.forward(p, src, dec, kind)[0]
        return cross_entropy_forward(logits.reshape(-1, V), tgt.ravel(), tgt.ravel() != 0)[0]

    logits, caches = alignment.forward(p, src, dec, kind)
    _, c = cross_entropy_forward(logits.reshape(-1, V), tgt.ravel(), tgt.ravel() != 0)
    grads = alignment.backward(p, cross_entropy_backward(c).reshape(logits.shape), caches)
    model_check(p, loss, grads)


def test_induction_model(rng):
    config = induction.InductionConfig(d_model=4, heads=2, vocab=5, length=6,
                                       min_period=2, max_period=3)
    p = induction.init_params(config, rng)
    ids, period = induction.make_sequences(rng, 2, config)
    weight = induction.predictable(period, config.length).ravel()

    def loss():
        logits = induction.forward(p, ids[:, :-1], 2)[0]
        return cross_entropy_forward(logits.reshape(-1, 5), ids[:, 1:].ravel(), weight)[0]

    logits, caches = induction.forward(p, ids[:, :-1], 2)
    _, c = cross_entropy_forward(logits.reshape(-1, 5), ids[:, 1:].ravel(), weight)
    grads = induction.backward(p, cross_entropy_backward(c).reshape(logits.shape), caches)
    model_check(p, loss, grads)


def test_adam_first_step_moves_each_entry_by_lr_times_sign():
    # first step: m_hat = g and v_hat = g^2, so the update is lr * g / (|g| + eps)
    p = {"w": np.array([1.0, -2.0, 3.0])}
    g = {"w": np.array([0.5, -4.0, 1e-3])}
    adam_step(p, g, AdamState(), lr=0.1)
    assert np.allclose(p["w"], [0.9, -1.9, 2.9], atol=1e-6)


def test_adamw_decays_weights_with_zero_gradient():
    p = {"w": np.array([2.0])}
    adam_step(p, {"w": np.array([0.0])}, AdamState(), lr=0.1, weight_decay=0.5)
    assert p["w"][0] == pytest.approx(2.0 * (1 - 0.1 * 0.5))  # decay only: w (1 - lr λ)
