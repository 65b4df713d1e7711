"""Lesson 9's head by hand (attncore.encoder.worked) against a computation written here
with plain Python sums and math.exp, with no shift by the row maximum (the shift cancels in
the ratio, so the two must agree to rounding)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from attncore.encoder.worked import worked_head
from tests.model_marks import needs_minilm


def fake_trace(seed: int = 0, L: int = 2, H: int = 3, T: int = 5, d_k: int = 4):
    """A trace with the fields worked_head reads; its weights and outputs computed by
    loops, as a model's would be."""
    rng = np.random.default_rng(seed)
    q, k, v = (rng.normal(size=(L, H, T, d_k)) * 2 for _ in range(3))
    weights = np.zeros((L, H, T, T))
    outputs = np.zeros((L, H, T, d_k))
    for a in range(L):
        for b in range(H):
            for i in range(T):
                e = [math.exp(sum(q[a, b, i, c] * k[a, b, j, c] for c in range(d_k))
                              / math.sqrt(d_k)) for j in range(T)]
                weights[a, b, i] = [x / sum(e) for x in e]
                for c in range(d_k):
                    outputs[a, b, i, c] = sum(weights[a, b, i, j] * v[a, b, j, c]
                                              for j in range(T))
    return SimpleNamespace(q=q, k=k, v=v, attentions=weights, head_outputs=outputs,
                           config=SimpleNamespace(d_model=H * d_k))


def test_every_step_is_the_plain_computation():
    trace = fake_trace()
    w = worked_head(trace, 1, 2, 3, 1)  # layer 2, head 3, query 4, key 2
    q, k = trace.q[1, 2, 3], trace.k[1, 2]
    assert (w.d_model, w.n_heads, w.d_k) == (12, 3, 4) and w.root == 2.0  # √4
    np.testing.assert_array_equal(w.products, [q[c] * k[1, c] for c in range(4)])
    s = [sum(q[c] * k[j, c] for c in range(4)) for j in range(5)]
    np.testing.assert_allclose(w.scores, s, rtol=1e-14)
    assert w.score == pytest.approx(sum(w.products), rel=1e-14)
    np.testing.assert_allclose(w.scaled, np.array(s) / 2, rtol=1e-14)
    assert w.shift == max(w.scaled)
    np.testing.assert_allclose(w.exps, [math.exp(x - w.shift) for x in w.scaled], rtol=1e-14)
    assert w.total == pytest.approx(sum(w.exps), rel=1e-14)
    np.testing.assert_allclose(w.weights, trace.attentions[1, 2, 3], atol=1e-15)
    assert w.weight == w.weights[1] and w.model_weight == trace.attentions[1, 2, 3, 1]
    assert w.weight_difference < 1e-15
    np.testing.assert_allclose(w.output, trace.head_outputs[1, 2, 3], atol=1e-13)
    assert w.output_difference < 1e-13
    assert w.recomputed_difference < 1e-15  # lesson 1's function on the whole head


def test_a_model_weight_that_differs_is_measured():
    trace = fake_trace()
    trace.attentions = trace.attentions.copy()
    trace.attentions[0, 0, 2, 4] += 1e-3
    w = worked_head(trace, 0, 0, 2, 4)
    assert w.weight_difference == pytest.approx(1e-3, rel=1e-9)
    assert w.recomputed_difference == pytest.approx(1e-3, rel=1e-9)
    other = worked_head(trace, 0, 1, 2, 4)  # another head: untouched
    assert other.recomputed_difference < 1e-15


def test_the_result_cannot_be_changed():
    w = worked_head(fake_trace(), 0, 0, 0, 0)
    with pytest.raises(ValueError):
        w.weights[0] = 0.5
    with pytest.raises(AttributeError):
        w.query = 1


@pytest.mark.parametrize("where, name", [
    ((2, 0, 0, 0), "layer"), ((0, 3, 0, 0), "head"), ((0, 0, 5, 0), "query"),
    ((0, 0, 0, -1), "key"), ((0, 0, 1.5, 0), "query"),
])
def test_an_index_outside_the_trace_is_refused(where, name):
    with pytest.raises(ValueError, match=name):
        worked_head(fake_trace(), *where)


@needs_minilm
def test_the_real_model_s_head_is_recomputed_to_rounding():
    from attncore.encoder import encode

    trace = encode("My cat chases moonbeams across the kitchen.", max_tokens=64)
    w = worked_head(trace, 0, 2, 2, 1)  # layer 1, head 3: "cat" looking at "my"
    assert (w.d_model, w.n_heads, w.d_k) == (384, 12, 32)
    assert w.root == math.sqrt(32)
    assert w.weight_difference < 1e-12 and w.output_difference < 1e-12
    assert w.recomputed_difference < 1e-12
