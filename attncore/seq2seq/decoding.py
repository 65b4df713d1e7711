r"""What the decoder does with :math:`c_t` (:func:`bahdanau_step`, :func:`luong_step`), with
seeded random (untrained) weights (:func:`init_decoder`):

* **Bahdanau**: :math:`c_t` goes *into* the new state, a GRU step
  :math:`s_t = f(s_{t-1}, y_{t-1}, c_t)`, and the output distribution is
  :math:`g(y_{t-1}, s_t, c_t)`;
* **Luong**: the state comes first, :math:`c_t` is combined with it afterwards,
  :math:`\tilde h_t = \tanh(W_c [c_t; s_t])`, :math:`p(y_t) = \mathrm{softmax}(W_o \tilde h_t)`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import as_real_array, whole_number
from ..init import normal_weights
from ..softmax import softmax
from .alignment import Seq2SeqParams, bahdanau, luong, word_embeddings

START, END = "<s>", "</s>"  # the word read before the first step; the end of a sentence


def target_vocabulary(tokens) -> list[str]:
    """The output layer's words: the target's distinct words (case-insensitive, as the
    toy embeddings are; the first spelling kept), then :data:`END`.

    >>> target_vocabulary(["Le", "chat", "le", "chien"])
    ['Le', 'chat', 'chien', '</s>']
    """
    seen: dict[str, str] = {}
    for word in tokens:
        seen.setdefault(word.lower(), word)
    return [*seen.values(), END]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 + 0.5 * np.tanh(0.5 * x)  # = 1 / (1 + e^-x), without overflow


@dataclass(frozen=True)
class DecoderParams:
    """Seeded random (untrained) weights of the decoding step that follows attention.

    Bahdanau et al.'s GRU (their appendix A.2.2), each matrix applied to a vector of
    width d: ``w_z, u_z, c_z`` (update gate z), ``w_r, u_r, c_r`` (reset gate r) and
    ``w_cand, u_cand, c_cand`` (the candidate s̃: W_s̃, U_s̃, C_s̃, which they write W, U,
    C), all (d, d); their deep output ``u_o, v_o, c_o`` (2l, d) and ``w_o`` (K, l), with
    l = ⌈d/2⌉ maxout units. Luong et al.'s ``w_c`` (d, 2d) and output matrix ``w_out``
    (K, d) (they write W_s; lesson 6 writes W_o, each model's own output matrix).
    K is the vocabulary's size.
    """

    w_z: np.ndarray
    u_z: np.ndarray
    c_z: np.ndarray
    w_r: np.ndarray
    u_r: np.ndarray
    c_r: np.ndarray
    w_cand: np.ndarray
    u_cand: np.ndarray
    c_cand: np.ndarray
    u_o: np.ndarray
    v_o: np.ndarray
    c_o: np.ndarray
    w_o: np.ndarray
    w_c: np.ndarray
    w_out: np.ndarray


def init_decoder(d: int, vocab_size: int, rng: np.random.Generator) -> DecoderParams:
    """Entries N(0, 1/fan_in), every matrix used as W @ x (fan_in: its columns). The
    vocabulary's matrices are drawn last, so the others do not depend on K."""
    d = whole_number(d, "d", 1, 256)
    vocab_size = whole_number(vocab_size, "the vocabulary size K", 1, 100_000)
    l = -(-d // 2)  # noqa: E741 (Bahdanau et al.'s letter)

    def m(rows, cols):
        return normal_weights(rng, (rows, cols), fan_in=cols)

    gru = [m(d, d) for _ in range(9)]  # W_z U_z C_z, W_r U_r C_r, W_s̃ U_s̃ C_s̃
    out = [m(2 * l, d) for _ in range(3)]  # U_o V_o C_o
    w_c = m(d, 2 * d)
    return DecoderParams(*gru, *out, w_o=m(vocab_size, l), w_c=w_c, w_out=m(vocab_size, d))


@dataclass(frozen=True)
class BahdanauStep:
    """One step of Bahdanau et al.'s decoder after attention.

    Attributes (each (d,) unless said)
    ----------
    s_prev, ey_prev, context : the inputs s_{t−1}, E y_{t−1} and c_t
    z, r : the update and reset gates, in (0, 1)
    candidate : s̃_t
    state : s_t = (1 − z) ∘ s_{t−1} + z ∘ s̃_t
    maxout_in : (2l,) U_o s_t + V_o E y_{t−1} + C_o c_t
    maxout : (l,) the larger of each pair of maxout_in
    logits, probs : (K,) W_o maxout and its softmax, p(y_t) over the vocabulary
    """

    s_prev: np.ndarray
    ey_prev: np.ndarray
    context: np.ndarray
    z: np.ndarray
    r: np.ndarray
    candidate: np.ndarray
    state: np.ndarray
    maxout_in: np.ndarray
    maxout: np.ndarray
    logits: np.ndarray
    probs: np.ndarray


def bahdanau_step(s_prev, ey_prev, context, dec: DecoderParams) -> BahdanauStep:
    r"""The new state and the output distribution from c_t (Bahdanau et al. 2015).

    .. math::
        z_t &= \mathrm{sigmoid}(W_z E y_{t-1} + U_z s_{t-1} + C_z c_t) \\
        r_t &= \mathrm{sigmoid}(W_r E y_{t-1} + U_r s_{t-1} + C_r c_t) \\
        \tilde s_t &= \tanh(W_{\tilde s} E y_{t-1} + U_{\tilde s} (r_t \circ s_{t-1})
                     + C_{\tilde s} c_t) \\
        s_t &= (1 - z_t) \circ s_{t-1} + z_t \circ \tilde s_t \\
        p(y_t) &= \mathrm{softmax}(W_o \max\nolimits_\text{pairs}(U_o s_t + V_o E y_{t-1}
                  + C_o c_t))

    The output uses s_t, as their eq. (4), g(y_{t−1}, s_t, c_t), says; their appendix
    writes U_o s_{t−1} in the maxout layer.

    Parameters
    ----------
    s_prev, ey_prev, context : array_like (d,)
        The previous state s_{t−1}, the previous word's embedding E y_{t−1} and c_t.
    """
    s_prev = as_real_array(s_prev, "the previous decoder state", min_ndim=1)
    ey = as_real_array(ey_prev, "the previous word's embedding", min_ndim=1)
    c = as_real_array(context, "the context vector", min_ndim=1)
    z = _sigmoid(dec.w_z @ ey + dec.u_z @ s_prev + dec.c_z @ c)  # (d,)
    r = _sigmoid(dec.w_r @ ey + dec.u_r @ s_prev + dec.c_r @ c)
    candidate = np.tanh(dec.w_cand @ ey + dec.u_cand @ (r * s_prev) + dec.c_cand @ c)
    state = (1 - z) * s_prev + z * candidate
    maxout_in = dec.u_o @ state + dec.v_o @ ey + dec.c_o @ c  # (2l,)
    maxout = maxout_in.reshape(-1, 2).max(axis=1)  # (l, 2) -> (l,): each pair's larger
    logits = dec.w_o @ maxout  # (K, l) x (l,) -> (K,)
    return BahdanauStep(s_prev, ey, c, z, r, candidate, state, maxout_in, maxout, logits,
                        softmax(logits))


@dataclass(frozen=True)
class LuongStep:
    """One step of Luong et al.'s decoder after attention.

    Attributes
    ----------
    state, context : (d,) the current state s_t (Luong et al.'s h_t) and c_t
    from_context, from_state : (d,) the two halves of W_c [c_t; s_t]: W_c's first d
        columns times c_t, its last d times s_t
    attentional : (d,) h̃_t = tanh(W_c [c_t; s_t]) = tanh(from_context + from_state)
    logits, probs : (K,) W_o h̃_t and its softmax, p(y_t) over the vocabulary
    """

    state: np.ndarray
    context: np.ndarray
    from_context: np.ndarray
    from_state: np.ndarray
    attentional: np.ndarray
    logits: np.ndarray
    probs: np.ndarray


def luong_step(state, context, dec: DecoderParams) -> LuongStep:
    r"""The attentional state and the output distribution (Luong et al. 2015, eqs. 5-6).

    .. math:: \tilde h_t = \tanh(W_c [c_t; s_t]), \qquad p(y_t) = \mathrm{softmax}(W_o \tilde h_t)
    """
    s_t = as_real_array(state, "the decoder state", min_ndim=1)
    c = as_real_array(context, "the context vector", min_ndim=1)
    d = c.shape[0]
    # W_c [c; s] = W_c[:, :d] c + W_c[:, d:] s: (d, d) x (d,) -> (d,) each
    from_context, from_state = dec.w_c[:, :d] @ c, dec.w_c[:, d:] @ s_t
    attentional = np.tanh(from_context + from_state)
    logits = dec.w_out @ attentional  # (K, d) x (d,) -> (K,)
    return LuongStep(s_t, c, from_context, from_state, attentional, logits, softmax(logits))


def next_word_steps(h, s, target, t: int, params: Seq2SeqParams, dec: DecoderParams,
                    luong_score: str = "dot") -> tuple[BahdanauStep, LuongStep]:
    """Both models' step t (from 0) on the page's example, from their own c_t.

    Bahdanau: s_{t−1} and c_t from :func:`bahdanau` (the mean of h before step 0),
    y_{t−1} the previous target word (:data:`START` before step 0). Luong: s_t, the toy
    state of target word t, and c_t from :func:`luong` with ``luong_score``.
    """
    t = whole_number(t, "the step t", 0, len(target) - 1)
    b = bahdanau(h, s, params)
    previous = START if t == 0 else target[t - 1]
    ey = word_embeddings([previous], params.d)[0]
    lu = luong(h, s, params, luong_score)
    return (bahdanau_step(b.queries[t], ey, b.contexts[t], dec),
            luong_step(s[t], lu.contexts[t], dec))
