"""Encoder-decoder attention: scores, Bahdanau and Luong steps, local and hard attention."""

import math

import numpy as np
import pytest

from attncore import seq2seq as s2s
from attncore.scores import additive_scores, dot_scores, general_scores
from attncore.softmax import softmax
from attncore.text import tokenize, toy_embeddings


@pytest.fixture
def model():
    params = s2s.init_seq2seq(16, np.random.default_rng(0))  # d = 16, as on the page
    h = s2s.encode(tokenize("the black cat sat on the mat"), params)
    s = s2s.decoder_states(tokenize("le chat noir est assis"), params)
    return params, h, s


def test_general_with_identity_is_dot():
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))
    np.testing.assert_allclose(general_scores(q, k, np.eye(4)), dot_scores(q, k), rtol=1e-15)


def test_additive_score_by_hand_in_two_dimensions():
    # q = (1, 0), k = (0, 1), W_q = I, W_k = 2I, v = (1, -1):
    # W_q q + W_k k = (1, 0) + (0, 2) = (1, 2); tanh -> (0.76159, 0.96403);
    # v · tanh = 0.76159 - 0.96403 = -0.20244.
    score = additive_scores([[1.0, 0.0]], [[0.0, 1.0]], np.eye(2), 2 * np.eye(2), [1.0, -1.0])
    assert score[0, 0] == pytest.approx(math.tanh(1) - math.tanh(2), rel=1e-14)


@pytest.mark.parametrize("which", ["bahdanau", "dot", "general", "additive"])
def test_every_alpha_sums_to_one_and_contexts_are_weighted_sums(model, which):
    params, h, s = model
    align = s2s.bahdanau(h, s, params) if which == "bahdanau" else s2s.luong(h, s, params, which)
    assert align.weights.shape == (5, 7)
    np.testing.assert_allclose(align.weights.sum(axis=1), 1.0, rtol=1e-14)
    for t in range(5):  # c_t = Σ_j α_tj h_j, by a loop
        c = np.zeros(16)
        for j in range(7):
            c += align.weights[t, j] * h[j]
        np.testing.assert_allclose(align.contexts[t], c, atol=1e-14)


def test_bahdanau_asks_with_the_previous_state_and_luong_with_the_current(model):
    params, h, s = model
    b = s2s.bahdanau(h, s, params)
    np.testing.assert_array_equal(b.queries[0], h.mean(axis=0))  # before step 1
    np.testing.assert_array_equal(b.queries[1:], s[:-1])
    np.testing.assert_array_equal(s2s.luong(h, s, params, "additive").queries, s)
    # Same (additive) score, shifted queries: Bahdanau's step t+1 is Luong-additive's step t.
    np.testing.assert_allclose(b.weights[1:], s2s.luong(h, s, params, "additive").weights[:-1])


@pytest.mark.parametrize("seed", range(5))
def test_dot_score_finds_the_lexicon_translation(seed):
    params = s2s.init_seq2seq(16, np.random.default_rng(seed))
    source = tokenize("the black cat sat on the mat")
    h = s2s.encode(source, params)
    s = s2s.decoder_states(tokenize("le chat noir est assis"), params)
    top = s2s.luong(h, s, params, "dot").weights.argmax(axis=1)
    # le -> the, chat -> cat, noir -> black, assis -> sat ("est" has no entry)
    assert [source[top[i]] for i in (0, 1, 2, 4)] == ["the", "cat", "black", "sat"]


@pytest.mark.parametrize("p_t, D", [(3.0, 1), (0.0, 2), (6.0, 3), (2.4, 1), (3.0, 10)])
def test_local_m_is_the_softmax_over_the_window(model, p_t, D):
    # Luong et al.'s local-m: eq. (7), the softmax of the scores, over the window alone
    params, h, s = model
    scores = s2s.score("dot", s[:1], h, params)[0]
    local = s2s.local_attention(scores, h, p_t, D, mode="monotonic")
    positions = np.arange(7)
    inside = np.abs(positions - p_t) <= D
    assert np.all(local.weights[~inside] == 0.0) and local.gaussian is None
    # by a second route: exponentials of the scores inside, divided by their sum
    e = np.exp(scores[inside] - scores[inside].max())
    np.testing.assert_allclose(local.weights[inside], e / e.sum(), rtol=1e-14)
    assert local.weights.sum() == pytest.approx(1.0, abs=1e-15)
    np.testing.assert_allclose(local.context, local.weights @ h, atol=1e-15)


@pytest.mark.parametrize("p_t, D", [(3.0, 1), (0.0, 2), (6.0, 3), (2.4, 1), (3.0, 10)])
def test_local_p_is_that_softmax_times_the_gaussian(model, p_t, D):
    params, h, s = model
    scores = s2s.score("dot", s[:1], h, params)[0]
    local = s2s.local_attention(scores, h, p_t, D, mode="predictive")
    positions = np.arange(7)
    inside = np.abs(positions - p_t) <= D
    assert np.all(local.weights[~inside] == 0.0)
    # Inside: softmax over the window times exp(-(j - p_t)² / (2 (D/2)²)), not renormalised.
    sigma = D / 2
    expected = softmax(scores[inside]) * np.exp(-((positions[inside] - p_t) ** 2)
                                                / (2 * sigma**2))
    np.testing.assert_allclose(local.weights[inside], expected, rtol=1e-14)
    assert local.weights.sum() < 1.0
    np.testing.assert_allclose(local.context, local.weights @ h, atol=1e-15)


def test_local_m_over_the_whole_source_is_global_attention(model):
    params, h, s = model
    scores = s2s.score("dot", s[:1], h, params)[0]
    local = s2s.local_attention(scores, h, 3.0, 7, mode="monotonic")  # [−4, 10] ⊇ 0..6
    np.testing.assert_allclose(local.weights, softmax(scores), rtol=1e-14)


def test_positions_monotonic_and_predictive(model):
    params, _, s = model
    assert s2s.monotonic_position(2, 7) == 2.0 and s2s.monotonic_position(9, 7) == 6.0
    p = s2s.predictive_position(s[0], params, 7)
    z = params.v_p @ np.tanh(params.w_p @ s[0])
    assert p == pytest.approx(7 / (1 + math.exp(-z))) and 0 < p < 7


def test_hard_context_is_exactly_one_state_with_zero_gradient(model):
    params, h, s = model
    scores = s2s.score("dot", s[1:2], h, params)[0]
    chosen, context = s2s.hard_attention(scores, h)
    assert chosen == int(np.argmax(scores)) and np.array_equal(context, h[chosen])
    soft, hard = s2s.context_gradient(scores, h)
    assert np.all(hard == 0.0) and np.all(soft > 0.0)
    sampled, _ = s2s.hard_attention(scores, h, np.random.default_rng(0))
    assert 0 <= sampled < 7


def test_bad_inputs_raise_clear_errors(model):
    params, h, s = model
    with pytest.raises(ValueError, match="source sentence is empty"):
        s2s.encode([], params)
    with pytest.raises(ValueError, match="target sentence is empty"):
        s2s.decoder_states([], params)
    with pytest.raises(ValueError, match="Luong"):
        s2s.luong(h, s, params, "additive-ish")
    with pytest.raises(ValueError, match="half-width"):
        s2s.local_attention(np.zeros(7), h, 1.0, 0, mode="monotonic")
    with pytest.raises(ValueError, match="local-m"):
        s2s.local_attention(np.zeros(7), h, 1.0, 1, mode="gaussian")


def test_parameter_counts():
    params = s2s.init_seq2seq(16, np.random.default_rng(0))
    # general: 16 × 16 = 256; additive with d_a = 16: 16 · (16 + 16 + 1) = 528.
    assert params.parameter_counts() == {"dot": 0, "scaled_dot": 0, "general": 256,
                                         "additive": 528}


def test_lexicon_matches_read_the_target_as_the_decoder_does():
    # "Le" -> "the" (lower-cased), "l’" -> "the" (curly apostrophe), "chat" -> "cat",
    # "noir" -> "black", "zzz" has no entry and is read as itself.
    got = s2s.lexicon_matches(["The", "black", "cat", "zzz"], ["Le", "l’", "chat", "noir", "zzz"])
    expected = np.zeros((5, 4), dtype=bool)
    expected[0, 0] = expected[1, 0] = expected[2, 2] = expected[3, 1] = expected[4, 3] = True
    np.testing.assert_array_equal(got, expected)
    assert s2s.lexicon_matches(["a"], ["b", "c"]).shape == (2, 1)
    # A word and the word it is read as get states that are alike: the decoder's "chat" and
    # the encoder's "cat" are nearer than "chat" and "dog".
    params = s2s.init_seq2seq(16, np.random.default_rng(0))
    h = s2s.encode(["cat", "dog"], params)
    s = s2s.decoder_states(["chat"], params)
    assert s[0] @ h[0] > s[0] @ h[1]


def test_init_variances_follow_each_arrays_fan_in():
    # d = 64, d_a = 256: W_q (d_a, d) is used as W_q @ s, summing over d, so its entries
    # have variance 1/64; v (d_a,) sums over d_a: 1/256. 16,384 and 256 draws: the sample
    # variances land within 6 standard errors (√(2/n)) of 1/64 and 1/256.
    params = s2s.init_seq2seq(64, np.random.default_rng(0), d_a=256)
    assert abs(params.w_q.var() * 64 - 1) < 6 * math.sqrt(2 / params.w_q.size)
    assert abs(params.v.var() * 256 - 1) < 6 * math.sqrt(2 / 256)


# --- What the decoder does with c_t -----------------------------------------------------

def matvec(m, x):
    """W x by a plain double loop."""
    return [sum(m[i][j] * x[j] for j in range(len(x))) for i in range(len(m))]


def sigmoid(x):
    return [1 / (1 + math.exp(-v)) for v in x]


def softmax_loop(x):
    e = [math.exp(v) for v in x]
    return [v / sum(e) for v in e]


@pytest.fixture
def decoder():
    vocab = s2s.target_vocabulary(tokenize("le chat noir est assis"))
    return s2s.init_decoder(16, len(vocab), np.random.default_rng(3)), len(vocab)


def test_bahdanau_step_is_the_gru_and_deep_output_written_as_loops(decoder):
    dec, K = decoder
    rng = np.random.default_rng(4)
    s_prev, ey, c = np.tanh(rng.standard_normal(16)), rng.standard_normal(16), \
        np.tanh(rng.standard_normal(16))
    got = s2s.bahdanau_step(s_prev, ey, c, dec)

    def gate(w, u, cm, s):  # W E y + U s + C c, each product a loop
        return [a + b + g for a, b, g in zip(matvec(w, ey), matvec(u, s), matvec(cm, c),
                                             strict=True)]

    z = sigmoid(gate(dec.w_z, dec.u_z, dec.c_z, s_prev))
    r = sigmoid(gate(dec.w_r, dec.u_r, dec.c_r, s_prev))
    cand = [math.tanh(v) for v in gate(dec.w_cand, dec.u_cand, dec.c_cand,
                                       [ri * si for ri, si in zip(r, s_prev, strict=True)])]
    state = [(1 - zi) * si + zi * ci for zi, si, ci in zip(z, s_prev, cand, strict=True)]
    pre = [a + b + g for a, b, g in zip(matvec(dec.u_o, state), matvec(dec.v_o, ey),
                                        matvec(dec.c_o, c), strict=True)]
    maxout = [max(pre[2 * j], pre[2 * j + 1]) for j in range(len(pre) // 2)]
    probs = softmax_loop(matvec(dec.w_o, maxout))
    for name, expected in [("z", z), ("r", r), ("candidate", cand), ("state", state),
                           ("maxout_in", pre), ("maxout", maxout), ("probs", probs)]:
        np.testing.assert_allclose(getattr(got, name), expected, rtol=1e-12, atol=1e-14,
                                   err_msg=name)
    assert got.probs.shape == (K,) and got.maxout.shape == (8,)  # l = 16 / 2


def test_the_new_state_lies_between_the_old_one_and_the_candidate(decoder):
    dec, _ = decoder
    rng = np.random.default_rng(5)
    for _ in range(20):
        step = s2s.bahdanau_step(np.tanh(rng.standard_normal(16)), rng.standard_normal(16),
                                 np.tanh(rng.standard_normal(16)), dec)
        low = np.minimum(step.s_prev, step.candidate)
        high = np.maximum(step.s_prev, step.candidate)
        assert np.all((low <= step.state) & (step.state <= high))
        assert np.all((0 < step.z) & (step.z < 1)) and np.all((0 < step.r) & (step.r < 1))


def test_zero_weights_give_half_gates_by_hand():
    # Every GRU matrix 0: z = r = sigmoid(0) = 1/2 and s̃ = tanh(0) = 0, so
    # s_t = (1 − 1/2) s_{t−1} + 1/2 · 0 = s_{t−1} / 2. With every output matrix 0 too the
    # logits are 0 and p is uniform, 1 over the vocabulary size.
    dec = s2s.init_decoder(4, 3, np.random.default_rng(0))
    zero = s2s.DecoderParams(**{k: np.zeros_like(v) for k, v in vars(dec).items()})
    step = s2s.bahdanau_step([0.2, -0.4, 0.6, 1.0], [1.0, 2.0, 3.0, 4.0], [0.5] * 4, zero)
    np.testing.assert_array_equal(step.z, 0.5)
    np.testing.assert_array_equal(step.state, [0.1, -0.2, 0.3, 0.5])
    np.testing.assert_allclose(step.probs, 1 / 3, rtol=1e-15)
    luong = s2s.luong_step([0.2, -0.4, 0.6, 1.0], [0.5] * 4, zero)
    np.testing.assert_array_equal(luong.attentional, 0.0)


def test_luong_step_concatenates_the_context_first(decoder):
    dec, K = decoder
    rng = np.random.default_rng(6)
    s_t, c = np.tanh(rng.standard_normal(16)), np.tanh(rng.standard_normal(16))
    got = s2s.luong_step(s_t, c, dec)
    attentional = [math.tanh(v) for v in matvec(dec.w_c, [*c, *s_t])]  # [c_t; s_t]
    np.testing.assert_allclose(got.attentional, attentional, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got.probs, softmax_loop(matvec(dec.w_out, attentional)),
                               rtol=1e-12)
    np.testing.assert_allclose(got.from_context + got.from_state,
                               np.arctanh(got.attentional), rtol=1e-10)
    np.testing.assert_allclose(got.from_context, matvec(dec.w_c[:, :16], c), rtol=1e-12)
    # The order matters: [s_t; c_t] gives another h̃ (W_c's two halves differ).
    assert not np.allclose(got.attentional, np.tanh(dec.w_c @ np.concatenate([s_t, c])))
    assert got.probs.shape == (K,)


def test_next_word_steps_take_each_models_own_inputs(model):
    params, h, s = model
    target = tokenize("le chat noir est assis")
    dec = s2s.init_decoder(16, len(s2s.target_vocabulary(target)), np.random.default_rng(0))
    b0, _ = s2s.next_word_steps(h, s, target, 0, params, dec)
    np.testing.assert_array_equal(b0.s_prev, h.mean(axis=0))  # no state before step 1
    np.testing.assert_array_equal(b0.ey_prev, s2s.word_embeddings(["<s>"], 16)[0])
    b, lu = s2s.next_word_steps(h, s, target, 2, params, dec)
    bahdanau, luong = s2s.bahdanau(h, s, params), s2s.luong(h, s, params, "dot")
    np.testing.assert_array_equal(b.s_prev, s[1])  # the score was asked with s_{t−1}
    np.testing.assert_array_equal(b.context, bahdanau.contexts[2])
    np.testing.assert_array_equal(b.ey_prev, s2s.word_embeddings(["chat"], 16)[0])
    np.testing.assert_array_equal(lu.state, s[2])  # Luong: the current state
    np.testing.assert_array_equal(lu.context, luong.contexts[2])
    with pytest.raises(ValueError, match="step t"):
        s2s.next_word_steps(h, s, target, 5, params, dec)


def test_target_vocabulary_and_decoder_shapes():
    # "Le" and "le" are one word (the toy embeddings ignore case); the end mark comes last.
    assert s2s.target_vocabulary(["Le", "chat", "le", "noir"]) == ["Le", "chat", "noir", "</s>"]
    a = s2s.init_decoder(16, 4, np.random.default_rng(0))
    b = s2s.init_decoder(16, 9, np.random.default_rng(0))
    assert a.w_o.shape == (4, 8) and a.w_out.shape == (4, 16) and a.w_c.shape == (16, 32)
    # Only the vocabulary's matrices depend on K.
    np.testing.assert_array_equal(a.w_z, b.w_z)
    np.testing.assert_array_equal(a.w_c, b.w_c)
    # The toy decoder's "own embedding" of a word is E y: the same vector.
    params = s2s.init_seq2seq(16, np.random.default_rng(0))
    u = (toy_embeddings(["cat"], 16, seed=0, decimals=None)
         + 0.3 * s2s.word_embeddings(["chat"], 16))
    np.testing.assert_allclose(s2s.decoder_states(["chat"], params), np.tanh(u @ params.w_enc))


def test_score_weights_are_each_scores_softmax_over_the_source(model):
    params, h, s = model
    weights = s2s.score_weights(s[2], h, params)
    assert list(weights) == ["dot", "scaled_dot", "general", "additive"]
    # The dot score by hand: q·h_j for each source state, then a softmax.
    dots = np.array([sum(s[2][i] * hj[i] for i in range(16)) for hj in h])
    np.testing.assert_allclose(weights["dot"], softmax(dots), rtol=1e-12)
    np.testing.assert_allclose(weights["scaled_dot"], softmax(dots / 4.0), rtol=1e-12)  # √16
    for name in s2s.LUONG_SCORES:  # the same weights as Luong's attention asked with s_3
        np.testing.assert_array_equal(weights[name],
                                      s2s.luong(h, s[2:3], params, name).weights[0])


def test_lexicon_alignment_counts_the_words_that_find_their_translation():
    # J' -> I, aime -> love, chats -> cats; "les" (the) has no translation in the source.
    source, target = ["I", "love", "cats"], ["J'", "aime", "les", "chats"]
    right = np.array([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.3, 0.3, 0.4], [0.1, 0.1, 0.8]])
    assert s2s.lexicon_alignment(source, target, right) == s2s.LexiconAlignment(3, 3)
    # "chats" now looks at "I": 2 of the 3 findable words; "les" never counts.
    wrong = right.copy()
    wrong[3] = [0.8, 0.1, 0.1]
    assert s2s.lexicon_alignment(source, target, wrong) == s2s.LexiconAlignment(3, 2)
    assert s2s.lexicon_alignment(["x"], ["y", "z"], [[1.0], [1.0]]).findable == 0
    with pytest.raises(ValueError, match="target × source"):
        s2s.lexicon_alignment(source, target, right.T)
