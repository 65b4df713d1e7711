"""Lesson 0's GRU encoder-decoder (attncore.train.gru, attncore.train.bottleneck).

Gradients: every hand-written backward pass against central finite differences in
float64, as tests/core/test_train_layers.py does: a scalar L = sum(out * R) with a fixed
random R (so dL/dout = R), relative error ||num - ana|| / (||num|| + ||ana||) <= 1e-6
(measured: 2e-10 to 8e-10 per layer, 8e-9 and 1.3e-7 for the whole fixed and
attention models). The forward pass is checked against a plain loop over
time steps and source positions written from the formulas, not from the module.
"""

import json

import numpy as np
import pytest
from gradcheck import TOL, check, numeric_grad, rel_error

from attncore.train import bottleneck as bn
from attncore.train.gru import (
    gru_backward,
    gru_cell_backward,
    gru_cell_forward,
    gru_forward,
    gru_weight_grads,
)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# --- gradients, layer by layer --------------------------------------------------------


def test_gru_cell_gradients(rng):
    B, d = 3, 4
    gx, h = rng.standard_normal((B, 3 * d)), rng.standard_normal((B, d))
    W_h, b_h = rng.standard_normal((d, 3 * d)) * 0.5, rng.standard_normal(3 * d)
    R = rng.standard_normal((B, d))
    _, cache = gru_cell_forward(gx, h, W_h, b_h)
    dgx, dh, dgh = gru_cell_backward(R, cache, W_h)
    dW_h, db_h = gru_weight_grads(h[:, None], dgh[:, None])  # one step: T = 1
    check(lambda: np.sum(gru_cell_forward(gx, h, W_h, b_h)[0] * R),
          {"gx": dgx, "h": dh, "W_h": dW_h, "b_h": db_h},
          {"gx": gx, "h": h, "W_h": W_h, "b_h": b_h})


def test_gru_through_time_gradients(rng):
    # gradients on every state (an output layer) and on the last one (a decoder's start)
    B, T, d = 2, 4, 3
    gx, h0 = rng.standard_normal((B, T, 3 * d)), rng.standard_normal((B, d))
    W_h, b_h = rng.standard_normal((d, 3 * d)) * 0.5, rng.standard_normal(3 * d)
    R, R_last = rng.standard_normal((B, T, d)), rng.standard_normal((B, d))

    def loss():
        hs = gru_forward(gx, h0, W_h, b_h)[0]
        return np.sum(hs * R) + np.sum(hs[:, -1] * R_last)

    hs, caches = gru_forward(gx, h0, W_h, b_h)
    dgx, dh0, dgh = gru_backward(R, caches, W_h, R_last.copy())
    h_prev = np.concatenate([h0[:, None], hs[:, :-1]], axis=1)
    dW_h, db_h = gru_weight_grads(h_prev, dgh)
    check(loss, {"gx": dgx, "h0": dh0, "W_h": dW_h, "b_h": db_h},
          {"gx": gx, "h0": h0, "W_h": W_h, "b_h": b_h})


def test_additive_attention_step_gradients(rng):
    B, Ts, d, A = 2, 5, 4, 3
    s, h, Uh = (rng.standard_normal((B, d)), rng.standard_normal((B, Ts, d)),
                rng.standard_normal((B, Ts, A)))
    W, v = rng.standard_normal((d, A)), rng.standard_normal(A)
    R = rng.standard_normal((B, d))
    _, _, cache = bn.additive_step_forward(s, h, Uh, W, v)
    ds, dh, dUh, dq, dv = bn.additive_step_backward(R, cache)
    check(lambda: np.sum(bn.additive_step_forward(s, h, Uh, W, v)[0] * R),
          {"s": ds, "h": dh, "Uh": dUh, "W": s.T @ dq, "v": dv},
          {"s": s, "h": h, "Uh": Uh, "W": W, "v": v})
    # the model's variant leaves dh to one product after its loop; the rest is the same
    ds2, dh2, dUh2, dq2, dv2 = bn.additive_step_backward(R, cache, through_context=False)
    assert dh2 is None
    assert all(np.array_equal(a, b) for a, b in ((ds, ds2), (dUh, dUh2), (dq, dq2), (dv, dv2)))


@pytest.mark.parametrize("model", bn.MODELS)
def test_whole_model_loss_gradient(rng, model):
    p = bn.init_params(4, rng, model, dtype=np.float64)
    src = np.array([[3, 11, 3], [0, 7, 5]])  # a repeated symbol: embedding rows add up

    def loss():
        return bn.loss_and_gradients(p, src, model)[0]

    _, grads = bn.loss_and_gradients(p, src, model)
    assert set(grads) == set(p)
    for name, arr in p.items():
        err = rel_error(numeric_grad(loss, arr), grads[name])
        assert err <= TOL, f"{name}: relative error {err:.2e}"


def test_training_stays_in_float32():
    p = bn.init_params(8, np.random.default_rng(0), "attention")
    loss, grads = bn.loss_and_gradients(p, bn.make_strings(np.random.default_rng(1), 4, 5),
                                        "attention")
    assert all(g.dtype == np.float32 for g in grads.values())
    assert np.isfinite(loss)


# --- the forward pass against a plain loop --------------------------------------------


def plain_model(p, src, model):
    """The formulas of the module docstring, one string at a time, one source position
    at a time, with column-vector algebra written out (W s as s @ W for row vectors)."""

    def sig(x):
        return 1 / (1 + np.exp(-x))

    def gru(x_part, h, W_h, b_h):
        d = len(h)
        r = sig(x_part[:d] + h @ W_h[:, :d] + b_h[:d])
        z = sig(x_part[d:2 * d] + h @ W_h[:, d:2 * d] + b_h[d:2 * d])
        n = np.tanh(x_part[2 * d:] + r * (h @ W_h[:, 2 * d:] + b_h[2 * d:]))
        return (1 - z) * n + z * h

    all_logits, all_weights = [], []
    for string in src:
        T = len(string)
        h = np.zeros(p["enc.Wh"].shape[0])
        hs = []
        for x in string:
            h = gru(p["enc.E"][x] @ p["enc.Wx"] + p["enc.bx"], h, p["enc.Wh"], p["enc.bh"])
            hs.append(h)
        s, logits, weights = hs[-1], [], []
        for t in range(T):
            y_prev = bn.BOS if t == 0 else string[t - 1]
            if model == "attention":
                e = np.array([p["att.v"] @ np.tanh(s @ p["att.W"] + hs[j] @ p["att.U"])
                              for j in range(T)])
                a = np.exp(e - e.max()) / np.exp(e - e.max()).sum()
                c = sum(a[j] * hs[j] for j in range(T))
                weights.append(a)
            else:
                c = hs[-1]
            x_part = p["dec.E"][y_prev] @ p["dec.Wy"] + c @ p["dec.Wc"] + p["dec.bx"]
            s = gru(x_part, s, p["dec.Wh"], p["dec.bh"])
            logits.append(np.concatenate([s, c]) @ p["out.W"] + p["out.b"])
        all_logits.append(logits)
        all_weights.append(weights)
    return np.array(all_logits), np.array(all_weights)


@pytest.mark.parametrize("model", bn.MODELS)
def test_vectorised_forward_equals_a_plain_loop(rng, model):
    p = bn.init_params(6, rng, model, dtype=np.float64)
    src = bn.make_strings(rng, 3, 5)
    logits, caches = bn.forward(p, src, model)
    ref_logits, ref_weights = plain_model(p, src, model)
    assert np.allclose(logits, ref_logits, rtol=1e-10, atol=1e-12)
    if model == "attention":
        assert np.allclose(caches["weights"], ref_weights, rtol=1e-10, atol=1e-12)
    else:
        assert caches["weights"] is None


def test_weights_are_a_distribution_over_the_source(rng):
    p = bn.init_params(8, rng, "attention")
    src = bn.make_strings(rng, 5, 7)
    a = bn.forward(p, src, "attention")[1]["weights"]  # (B, Tt, Ts)
    assert a.shape == (5, 7, 7) and np.all(a >= 0)
    assert np.allclose(a.sum(axis=-1), 1, atol=1e-6)  # float32 rounding
    run = bn.decode(p, src, "attention")
    assert np.allclose(run.weights.sum(axis=-1), 1, atol=1e-6)
    assert np.allclose(run.probabilities.sum(axis=-1), 1, atol=1e-6)


@pytest.mark.parametrize("model", bn.MODELS)
def test_greedy_decoding_is_the_teacher_forced_pass_fed_its_own_outputs(rng, model):
    p = bn.init_params(6, rng, model, dtype=np.float64)
    src = bn.make_strings(rng, 4, 6)
    run = bn.decode(p, src, model)
    fed = np.concatenate([np.full((4, 1), bn.BOS), run.tokens[:, :-1]], axis=1)
    logits, caches = bn.forward(p, src, model, inputs=fed)
    assert np.array_equal(logits.argmax(-1), run.tokens)
    assert np.allclose(caches["S"], run.states, atol=1e-12)


def test_the_traced_step_is_the_decoding_step(rng):
    p = bn.init_params(8, rng, "attention", dtype=np.float64)
    source = np.array([4, 0, 9, 9, 2, 11])
    run = bn.decode(p, source, "attention")
    for t in (1, 4, 6):  # steps count from 1, as in the formulas; rows from 0
        step = bn.trace_step(p, source, t)
        row = t - 1
        assert step.t == t
        assert np.allclose(step.state, run.states[0, row], atol=1e-12)
        assert np.allclose(step.weights, run.weights[0, row], atol=1e-12)
        assert np.allclose(step.probabilities, run.probabilities[0, row], atol=1e-12)
        assert step.token == run.tokens[0, row]
        assert step.previous_token == (bn.BOS if t == 1 else run.tokens[0, row - 1])
        first = run.encoder_states[0, -1]  # s_0 = h_n
        assert np.allclose(step.previous_state, first if t == 1 else run.states[0, row - 1])
        # the pieces add up: e_j = v . tanh(W s + U h_j), c = sum_j a_j h_j, s_t from the gates
        e = np.tanh(step.projected_state + step.projected_sources) @ p["att.v"]
        assert np.allclose(e, step.scores, atol=1e-12)
        assert np.allclose(step.weights @ run.encoder_states[0], step.context, atol=1e-12)
        s = (1 - step.update) * step.candidate + step.update * step.previous_state
        assert np.allclose(s, step.state, atol=1e-12)
        # the output layer's three parts: W_o's rows on s_t, its rows on c_t, b_o
        assert np.array_equal(step.score_weights, p["att.v"])
        assert np.allclose(step.from_state + step.from_context + step.output_bias,
                           step.logits, atol=1e-12)
        assert np.allclose(step.from_context, step.context @ p["out.W"][8:], atol=1e-12)
    with pytest.raises(ValueError, match=r"t must lie in 1\.\.6; got 0"):
        bn.trace_step(p, source, 0)
    with pytest.raises(ValueError, match="needs the attention model"):
        bn.trace_step(bn.init_params(8, rng, "fixed"), source, 1)


def test_decoding_can_be_kept_to_some_source_positions(rng):
    p = bn.init_params(6, rng, "attention", dtype=np.float64)
    src = bn.make_strings(rng, 3, 5)
    run = bn.decode(p, src, "attention")
    every = bn.decode(p, src, "attention", np.ones((5, 5), dtype=bool))
    assert np.array_equal(every.tokens, run.tokens)
    assert np.allclose(every.weights, run.weights, atol=1e-12)
    # only j = t: the weights are the identity, and the context is h_t itself
    diagonal = bn.decode(p, src, "attention", np.eye(5, dtype=bool))
    assert np.array_equal(diagonal.weights, np.broadcast_to(np.eye(5), (3, 5, 5)))
    # j >= t: zero weight before t, each row summing to 1; step 1 may read every position,
    # so its weights are the unrestricted ones
    later = bn.decode(p, src, "attention", np.triu(np.ones((5, 5), dtype=bool)))
    assert np.all(np.tril(later.weights[0], k=-1) == 0)
    assert np.allclose(later.weights.sum(axis=-1), 1, atol=1e-12)
    assert np.allclose(later.weights[:, 0], run.weights[:, 0], atol=1e-12)  # step 1: all s
    with pytest.raises(ValueError, match=r"allowed must be a \(5, 5\) bool array"):
        bn.decode(p, src, "attention", np.ones((4, 4), dtype=bool))
    with pytest.raises(ValueError, match="allowing one source position or more"):
        bn.decode(p, src, "attention", np.zeros((5, 5), dtype=bool))
    with pytest.raises(ValueError, match="of the attention model"):
        bn.decode(bn.init_params(6, rng, "fixed"), src, "fixed", np.ones((5, 5), dtype=bool))


def test_the_earlier_states_measure_their_weight_and_the_copy_without_them(rng):
    p = bn.init_params(6, rng, "attention", dtype=np.float64)
    src = bn.make_strings(rng, 4, 5)
    e = bn.earlier_states(p, src)
    run = bn.decode(p, src, "attention")
    # a second method: a loop over the steps that have earlier states (t >= 2, index 1 on),
    # the weights on j < t summed, and the weight on j = t − 1 alone
    before = np.mean([[run.weights[b, t, :t].sum() for t in range(1, 5)] for b in range(4)])
    previous = np.mean([[run.weights[b, t, t - 1] for t in range(1, 5)] for b in range(4)])
    assert (e.length, e.strings) == (5, 4)
    assert e.weight_before == pytest.approx(before, abs=1e-12)
    assert e.weight_previous == pytest.approx(previous, abs=1e-12)
    assert e.weight_previous <= e.weight_before
    assert e.accuracy == run.accuracy
    later = np.triu(np.ones((5, 5), dtype=bool))
    assert e.accuracy_later_only == bn.decode(p, src, "attention", later).accuracy


@pytest.mark.parametrize("model", bn.MODELS)
def test_teacher_forced_accuracy_reads_the_correct_previous_symbols(rng, model):
    p = bn.init_params(6, rng, model, dtype=np.float64)
    lengths = np.array([2, 4])
    greedy, g_pos = bn.accuracy_by_length(p, model, lengths, 16, seed=3)
    forced, f_pos = bn.accuracy_by_length(p, model, lengths, 16, seed=3, teacher_forced=True)
    # position 1 reads BOS either way: the same right answers
    assert np.array_equal(g_pos[:, 0], f_pos[:, 0])
    # the same strings (from the seed alone), decoded by the teacher-forced pass
    strings = np.random.default_rng([3, 3])
    for i, n in enumerate(lengths):
        src = bn.make_strings(strings, 16, int(n))
        right = bn.forward(p, src, model)[0].argmax(-1) == src
        assert np.array_equal(f_pos[i, :n], right.mean(axis=0))
        assert forced[i] == right.mean()
        assert np.isnan(f_pos[i, n:]).all()


def test_weight_by_offset_on_hand_made_weights():
    # T = 3; row 0 puts all its weight on position 0, rows 1 and 2 half on t, half on t - 1.
    # Offset 0 (the diagonal): (1 + 0.5 + 0.5) / 3 = 2/3; offset -1: (0.5 + 0.5) / 2 = 0.5;
    # offset +1: (0 + 0) / 2 = 0; offset +-2 has one entry each: 0.
    w = np.array([[[1.0, 0, 0], [0.5, 0.5, 0], [0, 0.5, 0.5]]])
    assert np.allclose(bn.weight_by_offset(w), [0, 0.5, 2 / 3, 0, 0])
    assert np.isnan(bn.weight_by_offset(w, [3])).all()  # no such position


# --- sizes, settings, errors ----------------------------------------------------------


def test_parameter_counts_by_hand():
    # V = 12 symbols, d = 32. Encoder: V d + 2 (d 3d) + 2 (3d) = 384 + 6144 + 192 = 6720.
    # Decoder: (V + 1) d + 3 (d 3d) + 2 (3d) = 416 + 9216 + 192 = 9824.
    # Output: 2d V + V = 768 + 12 = 780. Fixed: 17,324. Attention adds 2 d d + d = 2080.
    assert bn.count_parameters(32, "fixed") == 17_324
    assert bn.count_parameters(32, "attention") == 19_404


def test_both_models_start_from_the_same_shared_weights():
    fixed = bn.init_params(8, np.random.default_rng(7), "fixed")
    attention = bn.init_params(8, np.random.default_rng(7), "attention")
    assert set(attention) - set(fixed) == {"att.W", "att.U", "att.v"}
    assert all(np.array_equal(fixed[k], attention[k]) for k in fixed)


def test_chance_is_one_in_twelve():
    # every symbol equally likely and independent: any guess is right 1 time in 12
    assert bn.CHANCE == pytest.approx(1 / 12)
    counts = np.bincount(bn.make_strings(np.random.default_rng(0), 6000, 10).ravel())
    assert len(counts) == bn.SYMBOLS and counts.min() > 0.9 * 60_000 / 12


@pytest.mark.parametrize("bad, match", [
    ({"d_model": 65}, r"d_model must lie in 4\.\.64; got 65"),
    ({"d_model": 3.0}, "d_model must be a whole number"),
    ({"steps": 0}, r"steps must lie in 1\.\.1500"),
    ({"min_length": 0}, r"min_length must lie in 1\.\.20"),
    ({"min_length": 9, "max_length": 5}, r"max_length must lie in 9\.\.20; got 5"),
    ({"max_length": 21}, r"max_length must lie in 3\.\.20"),
    ({"batch": 65}, r"batch must lie in 1\.\.64"),
    ({"lr": 0.0}, "lr must be a finite number > 0"),
    ({"lr": 0.5}, r"lr must lie in \(0, 0\.1\]"),
    ({"seed": -1}, "seed must lie in"),
])
def test_bad_settings_name_the_setting_and_its_range(bad, match):
    with pytest.raises(ValueError, match=match):
        bn.BottleneckConfig(**bad)


@pytest.mark.parametrize("bad, match", [
    (np.array([1, 12]), r"symbols must lie in 0\.\.11"),
    (np.array([0.5, 1.0]), "symbol ids"),
    (np.zeros((1, 1, 2), dtype=int), "symbol ids"),
])
def test_bad_strings_are_refused(bad, match):
    p = bn.init_params(4, np.random.default_rng(0), "fixed")
    with pytest.raises(ValueError, match=match):
        bn.decode(p, bad, "fixed")


def test_the_time_cap_combines_width_lengths_and_steps():
    # the defaults fit; the widest model on the longest strings allows fewer steps
    assert bn.estimated_seconds(32, 3, 16, 800) <= bn.ESTIMATE_LIMIT
    most = bn.max_steps(64, 20, 20)
    assert 0 < most < 800 <= bn.max_steps(32, 3, 16)
    assert bn.estimated_seconds(64, 20, 20, most) <= bn.ESTIMATE_LIMIT
    assert bn.estimated_seconds(64, 20, 20, most + 1) > bn.ESTIMATE_LIMIT
    bn.BottleneckConfig(d_model=64, min_length=20, max_length=20, steps=most)
    with pytest.raises(ValueError, match=rf"steps must lie in 1\.\.{most} at d_model=64 and "
                                         r"lengths 20-20 \(more would train for over 30 s\)"):
        bn.BottleneckConfig(d_model=64, min_length=20, max_length=20, steps=most + 1)
    # more width, longer strings or a larger test never allow more steps
    assert bn.max_steps(16, 3, 16) >= bn.max_steps(32, 3, 16) >= bn.max_steps(64, 3, 16)
    assert bn.max_steps(32, 3, 12) >= bn.max_steps(32, 3, 16) >= bn.max_steps(32, 10, 20)
    assert bn.max_steps(64, 3, 16, 200) >= bn.max_steps(64, 3, 16, 1000)


def test_tested_lengths_reach_past_the_trained_ones():
    assert bn.BottleneckConfig().test_lengths.tolist() == list(range(2, 21))
    assert bn.BottleneckConfig(max_length=20).test_lengths[-1] == 24


# --- training -------------------------------------------------------------------------

SMALL = {"d_model": 16, "min_length": 3, "max_length": 8, "steps": 300, "batch": 32,
         "lr": 0.03, "n_test": 64, "checkpoints": 3}


@pytest.fixture(scope="module")
def small_run():
    calls = []
    result = bn.train_bottleneck(bn.BottleneckConfig(**SMALL),
                                 progress=lambda done, total: calls.append((done, total)))
    return result, calls


def test_attention_beats_the_fixed_context_on_longer_strings(small_run):
    # A small, quick run (d = 16, lengths 3-8, 300 steps, about 1.5 s): at length 8
    # attention is well ahead (seeds 0-3: 0.61-0.77 against 0.34-0.38), though neither
    # has finished learning.
    result, _ = small_run
    at8 = list(result.lengths).index(8)
    assert result.accuracy["attention"][at8] > result.accuracy["fixed"][at8] + 0.2
    assert result.accuracy["fixed"][at8] > 2 * bn.CHANCE  # it learned something
    # what the fixed context loses: its first output, read straight off s_0 = h_n, is
    # its best; later positions fall towards chance
    by_position = result.position_accuracy["fixed"][at8]
    assert by_position[0] == np.nanmax(by_position)


def test_a_run_reports_progress_and_its_shapes(small_run):
    result, calls = small_run
    total = 2 * SMALL["steps"]
    assert calls[-1] == (total, total) and all(t == total for _, t in calls)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)
    L = len(result.lengths)
    for model in bn.MODELS:
        assert result.accuracy[model].shape == (L,)
        pos = result.position_accuracy[model]  # (L, longest): NaN past each length
        assert pos.shape == (L, result.lengths.max())
        assert all(np.isnan(pos[i, n:]).all() and not np.isnan(pos[i, :n]).any()
                   for i, n in enumerate(result.lengths))
        assert result.runs[model].steps == SMALL["steps"]
    assert result.example["fixed"].source.shape == (1, bn.EXAMPLE_LENGTH)
    assert np.array_equal(result.example["fixed"].source, result.example["attention"].source)
    assert result.example["attention"].weights.shape == (1, 12, 12)
    assert result.offset_weights.shape == (5,)
    assert np.all((result.offset_weights >= 0) & (result.offset_weights <= 1))
    for model in bn.MODELS:  # teacher-forced on the same strings: the same first column
        forced = result.forced_position_accuracy[model]
        assert forced.shape == result.position_accuracy[model].shape
        assert np.array_equal(forced[:, 0], result.position_accuracy[model][:, 0])
    early = result.earlier
    assert (early.length, early.strings) == (bn.EXAMPLE_LENGTH, SMALL["n_test"])
    assert 0 <= early.weight_before <= 1 and 0 <= early.accuracy_later_only <= 1
    snapshots = result.runs["attention"].snapshots["alignment"]
    assert snapshots.shape == (len(result.runs["attention"].checkpoints), 12, 12)


def test_a_seed_gives_the_same_run():
    config = bn.BottleneckConfig(d_model=4, max_length=4, steps=3, n_test=2, checkpoints=1)
    a, b = bn.train_bottleneck(config), bn.train_bottleneck(config)
    for model in bn.MODELS:
        assert np.array_equal(a.runs[model].loss, b.runs[model].loss)
        assert np.array_equal(a.accuracy[model], b.accuracy[model])
    # both models train on the same batches, so their first losses are close (same data,
    # same shared weights) but not equal (attention changes the context)
    assert a.runs["fixed"].loss[0] != a.runs["attention"].loss[0]


def test_the_command_line_prints_the_lengths_and_both_accuracies(capsys, monkeypatch):
    import attncore.train.__main__ as cli
    from attncore.train import train_task

    def tiny(task, seed, **settings):
        return train_task(task, seed, d_model=4, steps=2, n_test=3, checkpoints=1)

    monkeypatch.setattr(cli, "train_task", tiny)
    cli.main(["bottleneck", "--seed", "2"])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["task"] == "bottleneck" and summary["seed"] == 2
    assert {4, 8, 12, 16, 20} <= set(summary["lengths"])
    n = len(summary["lengths"])
    assert len(summary["accuracy_attention"]) == len(summary["accuracy_fixed"]) == n
    assert all(0 <= a <= 1 for a in summary["accuracy_attention"] + summary["accuracy_fixed"])
    assert summary["train_lengths"] == [3, 16]
    assert summary["chance"] == pytest.approx(1 / 12, abs=1e-4)
    assert len(summary["offset_weights_attention"]) == len(summary["offsets"]) == 5
    assert 0 <= summary["weight_before_attention"] <= 1
    assert 0 <= summary["accuracy_later_states_only"] <= 1
    assert summary["seconds"] > 0
