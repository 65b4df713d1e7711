"""Lesson 13's core: the four memory rules against plain loops, the chunked form against
the recurrent one, the identities a page states, bad inputs, and the command line."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attncore import memory

ROOT = Path(__file__).resolve().parents[2]


def loop_rule(rule, keys, values, queries, beta, alpha, scale):
    """Each rule written out one pair and one entry at a time, float64. Gated delta uses
    its factored form alpha S (I - beta k kᵀ) + beta v kᵀ, a second way to write it."""
    n, d_k = keys.shape
    d_v = values.shape[1]
    if rule == "softmax":
        reads = []
        for q in queries:
            s = [scale * sum(q[i] * k[i] for i in range(d_k)) for k in keys]
            e = [np.exp(x - max(s)) for x in s]
            reads.append(sum(e[t] / sum(e) * values[t] for t in range(n)))
        return np.array(reads), None
    S = np.zeros((d_v, d_k))
    states = []
    for t in range(n):
        k, v = keys[t], values[t]
        if rule == "linear":
            S = S + np.outer(v, k)
        elif rule == "delta":
            S = S + beta[t] * np.outer(v - S @ k, k)
        else:
            S = alpha[t] * S @ (np.eye(d_k) - beta[t] * np.outer(k, k)) + beta[t] * np.outer(v, k)
        states.append(S)
    return np.array([S @ q for q in queries]), np.array(states)


def random_case(seed, n=6, d_k=4, d_v=3, m=5):
    rng = np.random.default_rng(seed)
    keys = rng.standard_normal((n, d_k)) / np.sqrt(d_k)
    keys[3] = keys[1]  # a key written twice
    return (keys, rng.standard_normal((n, d_v)), rng.standard_normal((m, d_k)),
            rng.uniform(0, 1, n), rng.uniform(0, 1, n))


@pytest.mark.parametrize("rule", memory.RULES)
@pytest.mark.parametrize("rates", ["random", "zero", "one", "ends"])
def test_every_rule_equals_a_plain_loop(rule, rates):
    keys, values, queries, beta, alpha = random_case(len(rule))
    n = len(keys)
    beta, alpha = {"random": (beta, alpha), "zero": (np.zeros(n), np.zeros(n)),
                   "one": (np.ones(n), np.ones(n)),
                   "ends": (np.r_[0.0, 1.0, 0.0, 1.0, 0.5, 1.0],
                            np.r_[1.0, 0.0, 1.0, 0.3, 0.0, 1.0])}[rates]
    result = memory.write_and_read(rule, keys, values, queries, beta=beta, alpha=alpha,
                                   scale=1.7)
    reads, states = loop_rule(rule, keys, values, queries, beta, alpha, 1.7)
    np.testing.assert_allclose(result.reads, reads, rtol=1e-12, atol=1e-12)
    if states is not None:
        np.testing.assert_allclose(result.states, states, rtol=1e-12, atol=1e-12)
        # one write is S_t = alpha_t S_{t-1} + w_t k_tᵀ, with the trace's alpha and w
        previous = np.concatenate([np.zeros((1, *states.shape[1:])), states[:-1]])
        rebuilt = (result.alpha[:, None, None] * previous
                   + result.written[:, :, None] * keys[:, None, :])
        np.testing.assert_allclose(rebuilt, states, rtol=1e-12, atol=1e-12)


def test_the_softmax_scale_defaults_to_one_over_root_dk():
    keys, values, queries, *_ = random_case(1)
    result = memory.softmax_memory(keys, values, queries)
    assert result.scale == 0.5  # d_k = 4
    np.testing.assert_allclose(result.weights.sum(axis=1), 1.0)
    assert result.state_numbers == 6 * (4 + 3)


def test_a_linear_read_is_the_sum_of_each_pairs_term():
    keys, values, queries, *_ = random_case(2)
    trace = memory.linear_memory(keys, values, queries)
    split = memory.crosstalk(trace, query=2, wanted=4)
    np.testing.assert_allclose(split.terms, (keys @ queries[2])[:, None] * values)
    np.testing.assert_allclose(split.signal + split.leak, trace.reads[2], atol=1e-12)
    np.testing.assert_allclose(split.signal, (keys[4] @ queries[2]) * values[4])
    # by default the wanted pair is the key most like the query: read key 0 back
    back = memory.crosstalk(memory.linear_memory(keys, values, keys), query=0)
    assert back.wanted == int(np.argmax(keys @ keys[0]))


def test_orthonormal_keys_have_no_crosstalk_and_the_delta_rule_recalls_them_exactly():
    rng = np.random.default_rng(3)
    keys = np.linalg.qr(rng.standard_normal((5, 5)))[0].T  # 5 orthonormal rows
    values = rng.standard_normal((5, 2))
    for result in (memory.linear_memory(keys, values, keys),
                   memory.delta_memory(keys, values, keys, beta=1.0)):
        np.testing.assert_allclose(result.reads, values, atol=1e-12)
    assert memory.crosstalk(memory.linear_memory(keys, values, keys), 1).leak_ratio < 1e-12


def test_the_delta_rule_replaces_and_linear_attention_adds():
    k = np.array([[0.6, 0.8], [0.6, 0.8]])  # a unit key written twice
    v = np.array([[1.0, 2.0], [5.0, -1.0]])
    np.testing.assert_allclose(memory.linear_memory(k, v, k[:1]).reads[0], [6.0, 1.0])
    np.testing.assert_allclose(memory.delta_memory(k, v, k[:1]).reads[0], [5.0, -1.0])
    # beta = 0 writes nothing at all
    assert not memory.delta_memory(k, v, k[:1], beta=0.0).state.any()


def test_gated_delta_with_alpha_zero_keeps_only_the_last_write():
    keys, values, queries, beta, _ = random_case(4)
    trace = memory.gated_delta_memory(keys, values, queries, beta=beta, alpha=0.0)
    np.testing.assert_allclose(trace.state, beta[-1] * np.outer(values[-1], keys[-1]),
                               atol=1e-15)
    # alpha = 1 is the delta rule
    np.testing.assert_allclose(memory.gated_delta_memory(keys, values, queries, beta).states,
                               memory.delta_memory(keys, values, queries, beta).states)


@pytest.mark.parametrize("chunk", [1, 3, 4, 16, 50])
def test_chunked_linear_attention_equals_the_recurrent_form(chunk):
    rng = np.random.default_rng(chunk)
    keys, values, queries = (rng.standard_normal((13, d)) for d in (4, 5, 4))
    recurrent = memory.causal_linear_attention(keys, values, queries)
    by_hand = np.array([sum((keys[s] @ queries[t]) * values[s] for s in range(t + 1))
                        for t in range(13)])
    np.testing.assert_allclose(recurrent, by_hand, atol=1e-12)
    chunked = memory.chunked_linear_attention(keys, values, queries, chunk=chunk)
    np.testing.assert_allclose(chunked.outputs, recurrent, atol=1e-12)
    assert chunked.chunk_states.shape == (-(-13 // chunk), 5, 4)
    np.testing.assert_allclose(chunked.chunk_states[-1],
                               memory.linear_memory(keys, values, queries).state, atol=1e-12)
    first = slice(0, chunk)  # the first chunk has no earlier state to read
    assert not chunked.inter[first].any()


@pytest.mark.parametrize("rule, beta, alpha, twice, other", [
    ("linear", 0.3, 0.2, (0, 1, 1), (1, 0, 0)),  # the sum; linear has no beta or alpha
    ("delta", 1.0, 1.0, (0, 0, 1), (1, 0, 0)),  # the new value replaces the old
    ("delta", 0.5, 1.0, (0, 0.25, 0.5), (0.5, 0, 0)),  # beta(1 - beta), beta; beta
    ("gated_delta", 1.0, 0.5, (0, 0, 1), (0.25, 0, 0)),  # the other pair faded by alpha²
    ("gated_delta", 0.5, 0.5, (0, 0.125, 0.5), (0.125, 0, 0)),  # alpha beta(1 - beta); alpha² beta
])
def test_a_key_written_twice(rule, beta, alpha, twice, other):
    result = memory.write_twice(rule, d_k=6, beta=beta, alpha=alpha, seed=1)
    np.testing.assert_allclose(result.at_twice, twice, atol=1e-10)
    np.testing.assert_allclose(result.at_other, other, atol=1e-10)
    np.testing.assert_allclose(result.coefficients @ result.memory.values, result.memory.reads,
                               atol=1e-12)


def test_softmax_weighs_both_copies_of_a_key_written_twice_the_same():
    result = memory.write_twice("softmax", d_k=6, seed=2)
    old, new = result.at_twice[1:]
    assert old == pytest.approx(new) and old + new > 0.99  # scale 8: the other key weighs e^-8


def test_the_recall_curve_equals_reading_each_seed_with_the_rules():
    curve = memory.recall_curve(8, pair_counts=(3, 12), seeds=(0, 5), rule="delta", beta=0.7)
    for i, seed in enumerate((0, 5)):
        for c, n in enumerate((3, 12)):
            keys, values = memory.random_pairs(seed, n, 8, 8)
            reads = memory.delta_memory(keys, values, keys, beta=0.7).reads
            cos = (reads / np.linalg.norm(reads, axis=1, keepdims=True)) @ values.T
            assert curve.recall[i, c] == np.mean(np.argmax(cos, axis=1) == np.arange(n))
            assert curve.cosine[i, c] == pytest.approx(np.mean(np.diag(cos)))
    np.testing.assert_array_equal(curve.state_numbers, [64, 64])


def test_recall_softmax_keeps_every_pair_and_a_fixed_state_blurs():
    counts = (4, 16, 64, 256)
    soft = memory.recall_curve(16, counts, rule="softmax", scale=8.0)
    linear = memory.recall_curve(16, counts, rule="linear")
    assert soft.mean_recall.tolist() == [1.0] * 4
    np.testing.assert_array_equal(soft.state_numbers, np.array(counts) * 32)  # n (d_k + d_v)
    assert np.all(np.diff(linear.mean_recall) < 0) and linear.mean_recall[-1] < 0.1
    one = memory.recall_curve(5, pair_counts=(1,), rule="linear")  # one unit key: no leak
    assert one.recall.min() == 1.0 and one.cosine.min() == pytest.approx(1.0)


@pytest.mark.parametrize("d_k, beta", [(16, 1.0), (4, 0.5)])
def test_only_gated_delta_decays(d_k, beta):
    counts = (1, 4, 16, 64, 256)
    # the delta rule has no α: its curve does not move with α and is gated delta's at α = 1
    delta = [memory.recall_curve(d_k, counts, rule="delta", beta=beta, alpha=a)
             for a in (1.0, 0.9, 0.0)]
    whole = memory.recall_curve(d_k, counts, rule="gated_delta", beta=beta, alpha=1.0)
    for curve in delta:
        np.testing.assert_array_equal(curve.recall, whole.recall)
        np.testing.assert_array_equal(curve.cosine, whole.cosine)
        assert curve.alpha == 1.0 and curve.beta == beta
    # with α < 1 gated delta forgets: its curve differs from the delta rule's
    for alpha in (0.9, 0.0):
        gated = memory.recall_curve(d_k, counts, rule="gated_delta", beta=beta, alpha=alpha)
        assert gated.alpha == alpha
        assert not np.array_equal(gated.cosine, whole.cosine)
    assert memory.rule_rates("delta", 0.5, 0.9) == (0.5, 1.0)
    assert memory.rule_rates("linear", 0.5, 0.9) == (1.0, 1.0)
    with pytest.raises(ValueError, match="rule must be one of"):
        memory.rule_rates("gated", 1.0, 1.0)


def test_the_delta_rule_at_the_lesson_defaults():
    # d_k = 16, β = 1, α = 0.9 on the page: the delta rule writes with α = 1 whatever
    counts = (16, 256)
    delta = memory.recall_curve(16, counts, rule="delta", beta=1.0, alpha=0.9)
    again = memory.recall_curve(16, counts, rule="delta", beta=1.0)
    # a second method: the delta rule run pair by pair with no decay (delta_memory)
    keys, values = memory.random_pairs(0, 16, 16, 16)
    reads = memory.delta_memory(keys, values, keys).reads
    cos = (reads / np.linalg.norm(reads, axis=1, keepdims=True)) @ values.T
    assert delta.recall[0, 0] == np.mean(np.argmax(cos, axis=1) == np.arange(16))
    np.testing.assert_array_equal(delta.recall, again.recall)
    gated = memory.recall_curve(16, counts, rule="gated_delta", beta=1.0, alpha=0.9)
    assert delta.mean_recall[0] > gated.mean_recall[0]  # forgetting costs recall here


def test_beta_zero_reads_nothing_and_recalls_nothing():
    curve = memory.recall_curve(4, pair_counts=(3,), seeds=(0,), rule="delta", beta=0.0)
    assert curve.recall[0, 0] == 0.0 and curve.cosine[0, 0] == 0.0


GOOD = np.ones((3, 2))


@pytest.mark.parametrize("call, message", [
    (lambda: memory.linear_memory(np.ones(3), GOOD, GOOD), r"keys must have shape \(n, d_k\); "
     r"got shape \(3,\)"),
    (lambda: memory.delta_memory(GOOD, np.ones((2, 2)), GOOD),
     r"values must have shape \(n, d_v\) with n = 3 .*got shape \(2, 2\)"),
    (lambda: memory.softmax_memory(GOOD, GOOD, np.ones((4, 3))),
     r"queries must have shape \(m, d_k\) with d_k = 2 .*got shape \(4, 3\)"),
    (lambda: memory.linear_memory([[np.nan, 0.0]] * 3, GOOD, GOOD), "keys contains NaN"),
    (lambda: memory.linear_memory(GOOD, [[np.inf, 0.0]] * 3, GOOD),
     "values contains an infinite value"),
    (lambda: memory.delta_memory(GOOD, GOOD, GOOD, beta=1.5),
     r"beta must lie in \[0, 1\]; got 1.5 at write 0"),
    (lambda: memory.gated_delta_memory(GOOD, GOOD, GOOD, alpha=[1.0, -0.1, 1.0]),
     r"alpha must lie in \[0, 1\]; got -0.1 at write 1"),
    (lambda: memory.delta_memory(GOOD, GOOD, GOOD, beta=[1.0, 1.0]),
     r"beta must be a number or have shape \(n,\) = \(3,\).*got shape \(2,\)"),
    (lambda: memory.softmax_memory(GOOD, GOOD, GOOD, scale=0.0), "scale must be"),
    (lambda: memory.write_and_read("fast", GOOD, GOOD, GOOD), "rule must be one of"),
    (lambda: memory.crosstalk(memory.delta_memory(GOOD, GOOD, GOOD)),
     "crosstalk splits a read of linear attention"),
    (lambda: memory.crosstalk(memory.linear_memory(GOOD, GOOD, GOOD), query=3),
     r"query must lie in 0..2"),
    (lambda: memory.chunked_linear_attention(GOOD, GOOD, np.ones((2, 2))),
     r"queries must have shape \(n, d_k\) = \(3, 2\).*got shape \(2, 2\)"),
    (lambda: memory.chunked_linear_attention(GOOD, GOOD, GOOD, chunk=0), "chunk must lie in"),
    (lambda: memory.recall_curve(4, beta=[0.5, 0.5]), r"beta must be one number in \[0, 1\]"),
    (lambda: memory.recall_curve(4, pair_counts=(4, 0)), "each pair count must lie in"),
    (lambda: memory.write_twice("linear", d_k=1), "d_k must lie in 2"),
])
def test_bad_inputs_raise_a_value_error_naming_them(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- The command line ----------------------------------------------------------------------

def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "attncore.memory", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("rule", memory.RULES)
def test_the_command_line_writes_the_read_and_the_state(rule, tmp_path):
    keys, values, queries, beta, alpha = random_case(5)
    source, out = tmp_path / "in.npz", tmp_path / "out.npz"
    np.savez(source, keys=keys, values=values, queries=queries, beta=beta, alpha=alpha,
             scale=2.0)
    done = run_cli("--in", source, "--rule", rule, "--out", out)
    assert done.returncode == 0 and done.stderr == ""
    reads, states = loop_rule(rule, keys, values, queries, beta, alpha, 2.0)
    with np.load(out) as saved:
        np.testing.assert_allclose(saved["read"], reads, atol=1e-12)
        if rule == "softmax":
            assert saved.files == ["read"]
        else:
            np.testing.assert_allclose(saved["state"], states[-1], atol=1e-12)


def test_the_command_line_defaults_beta_alpha_and_scale(tmp_path):
    keys, values, queries, *_ = random_case(6)
    source = tmp_path / "in.npz"
    np.savez(source, keys=keys, values=values, queries=queries)
    for rule in ("softmax", "gated_delta"):
        assert run_cli("--in", source, "--rule", rule, "--out", tmp_path / rule).returncode == 0
        ones = np.ones(len(keys))
        with np.load(tmp_path / f"{rule}.npz") as saved:  # np.savez adds the suffix
            np.testing.assert_allclose(saved["read"], loop_rule(rule, keys, values, queries,
                                                                ones, ones, 0.5)[0], atol=1e-12)


@pytest.mark.parametrize("arrays, message", [
    ({"values": np.ones((2, 3))}, "values must have shape (n, d_v) with n = 3"),
    ({"keys": np.full((3, 4), np.nan)}, "keys contains NaN"),
    ({"beta": np.array([0.5, 1.2, 0.5])}, "beta must lie in [0, 1]; got 1.2 at write 1"),
    ({"alpha": -1.0}, "alpha must lie in [0, 1]; got -1 at write 0"),
    ({"queries": None}, "holds no array 'queries'"),
    (None, "no file"),
])
def test_the_command_line_says_what_is_wrong_in_one_line(arrays, message, tmp_path):
    rng = np.random.default_rng(0)
    source = tmp_path / "in.npz"
    if arrays is not None:
        given = {"keys": rng.standard_normal((3, 4)), "values": rng.standard_normal((3, 3)),
                 "queries": rng.standard_normal((2, 4)), **arrays}
        np.savez(source, **{k: v for k, v in given.items() if v is not None})
    done = run_cli("--in", source, "--rule", "gated_delta", "--out", tmp_path / "out.npz")
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and message in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out.npz").exists()
