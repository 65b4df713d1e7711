"""Lesson 13's trained comparison: every hand-written backward pass against central finite
differences (float64, relative error <= 1e-6, see gradcheck.py), a few training steps, and
the command line's JSON. The full training and its accuracies are a benchmark
(benchmarks/fixed_memory.py), not a test."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from gradcheck import check

from attncore.train import recall
from attncore.train.layers import embedding_backward

ROOT = Path(__file__).resolve().parents[2]
SMALL = recall.RecallConfig(d_model=6, d_k=2)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def test_symbol_sums_equal_the_embedding_gradient(rng):
    ids = rng.integers(0, 7, (3, 5))  # repeated symbols add up
    grad = rng.standard_normal((3, 5, 4))
    np.testing.assert_allclose(recall.symbol_sums(ids, grad, 7), embedding_backward(grad, (ids, 7)),
                               atol=1e-12)


def test_the_projections(rng):
    p = recall.init_params(SMALL, rng)
    batch = recall.make_batch(rng, 3, 4)
    Rq, Rk, Rv = (rng.standard_normal(shape) for shape in ((3, 2), (3, 4, 2), (3, 4, 6)))

    def loss():
        q, k, v = recall.project_forward(batch, p, 2)[0]
        return np.sum(q * Rq) + np.sum(k * Rk) + np.sum(v * Rv)

    _, cache = recall.project_forward(batch, p, 2)
    grads = recall.project_backward(Rq, Rk, Rv, cache)
    names = ("E_key", "E_value", "Wqkv")
    check(loss, grads, {n: p[n] for n in names})


@pytest.mark.parametrize("model", recall.MODELS)
def test_each_read(model, rng):
    q, k, v = (rng.standard_normal(shape) for shape in ((3, 2), (3, 5, 2), (3, 5, 4)))
    R = rng.standard_normal((3, 4))
    forward, backward = recall.READS[model]
    _, cache = forward(q, k, v)
    dq, dk, dv = backward(R, cache)
    check(lambda: np.sum(forward(q, k, v)[0] * R), {"q": dq, "k": dk, "v": dv},
          {"q": q, "k": k, "v": v})


def test_the_linear_read_is_the_sum_of_each_pairs_term(rng):
    q, k, v = (rng.standard_normal(shape) for shape in ((2, 3), (2, 4, 3), (2, 4, 5)))
    o, cache = recall.linear_read_forward(q, k, v)
    by_hand = np.array([sum((k[b, t] @ q[b]) * v[b, t] for t in range(4)) for b in range(2)])
    np.testing.assert_allclose(o, by_hand, atol=1e-12)
    assert cache[3].shape == (2, 5, 3)  # S: d_model x d_k per sequence


@pytest.mark.parametrize("model", recall.MODELS)
def test_the_whole_model(model, rng):
    p = recall.init_params(SMALL, rng)
    batch = recall.make_batch(rng, 4, 3)
    _, grads = recall.loss_and_gradients(p, batch, model)
    assert set(grads) == set(p)
    check(lambda: recall.loss_and_gradients(p, batch, model)[0], grads, p)


def test_a_batch_asks_for_a_stored_pair(rng):
    batch = recall.make_batch(rng, 50, 64)
    assert all(len(set(row)) == 64 for row in batch["keys"])  # distinct keys in a sequence
    rows = np.arange(50)
    np.testing.assert_array_equal(batch["query"], batch["keys"][rows, batch["where"]])
    np.testing.assert_array_equal(batch["target"], batch["values"][rows, batch["where"]])


def test_a_short_training_runs_and_is_seeded():
    config = recall.RecallConfig(steps=4, batch=8, n_test=20, checkpoints=2)
    reported = []
    first = recall.train_recall(config, progress=lambda *done: reported.append(done))
    again = recall.train_recall(config)
    # checkpoints at steps 0, 2 and 4 of each model, counted over both: 2 x 4 = 8 steps
    assert reported == [(0, 8), (2, 8), (4, 8), (4, 8), (6, 8), (8, 8)]
    assert set(first.runs) == set(recall.MODELS)
    np.testing.assert_array_equal(first.pairs, recall.TEST_PAIRS)
    for model in recall.MODELS:
        run = first.runs[model]
        assert run.loss.shape == (4,) and np.all(np.isfinite(run.loss))
        assert run.snapshots["scores"].shape == (3, recall.EXAMPLE_PAIRS)
        assert np.all((first.accuracy[model] >= 0) & (first.accuracy[model] <= 1))
        np.testing.assert_array_equal(first.accuracy[model], again.accuracy[model])
        np.testing.assert_array_equal(run.loss, again.runs[model].loss)
    np.testing.assert_allclose(first.runs["softmax"].snapshots["scores"].sum(axis=1), 1.0)
    assert first.state_numbers["linear"].tolist() == [64 * 8] * len(recall.TEST_PAIRS)
    assert first.state_numbers["softmax"].tolist() == [n * (8 + 64) for n in recall.TEST_PAIRS]


@pytest.mark.parametrize("settings, message", [
    ({"steps": 0}, "steps must lie in 1..5000"),
    ({"d_model": 1}, "d_model must lie in 2..128"),
    ({"min_pairs": 10, "max_pairs": 5}, "max_pairs must lie in 10..128"),
    ({"d_k": 65}, "d_k must lie in 1..64"),
    ({"lr": 0.5}, r"lr must lie in \(0, 0.1\]"),
])
def test_bad_settings_raise_a_value_error(settings, message):
    with pytest.raises(ValueError, match=message):
        recall.RecallConfig(**settings)


def test_the_command_line_prints_one_json_line():
    done = subprocess.run([sys.executable, "-m", "attncore.train", "recall", "--seed", "1",
                           "--steps", "2"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1
    summary = json.loads(lines[0])
    assert {"pairs", "accuracy_softmax", "accuracy_linear", "state_numbers_linear",
            "seconds"} <= set(summary)
    assert {4, 8, 16, 32, 64} <= set(summary["pairs"])
    assert len(summary["accuracy_softmax"]) == len(summary["accuracy_linear"]) == len(
        summary["pairs"])
    assert summary["state_numbers_linear"] == 512 and summary["seed"] == 1
    assert summary["steps"] == 2 and summary["seconds"] > 0
