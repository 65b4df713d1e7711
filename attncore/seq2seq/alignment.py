r"""Encoder-decoder attention as in the first neural translation models.

An encoder turns the source tokens into states :math:`h_1 \dots h_S`; at each
decoding step t a decoder state asks which source states matter now:

.. math:: \alpha_{tj} = \mathrm{softmax}_j\, \mathrm{score}(\text{query}_t, h_j), \qquad
          c_t = \sum_j \alpha_{tj} h_j .

* **Bahdanau** (2015): additive score :math:`v^\top \tanh(W_q s_{t-1} + W_k h_j)`, queried
  with the *previous* decoder state :math:`s_{t-1}`.
* **Luong** (2015): dot :math:`s_t^\top h_j`, general :math:`s_t^\top W h_j` or additive
  score (Luong's "concat"), queried with the *current* state :math:`s_t`; and *local*
  attention over a window of half-width D around a position :math:`p_t`.

The "encoder" and "decoder" here are fixed maps of toy embeddings: the lesson is about
the attention step, not about training the RNNs around it. The decoder reads a target
word through a tiny French-English lexicon (:data:`LEXICON`), so a word and its
translation get similar states and the dot score can find the alignment, as a trained
model would; the additive and general scores' matrices are random (untrained).

What the decoder then does with :math:`c_t` is :mod:`attncore.seq2seq.decoding`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import as_real_array, positive_number, whole_number
from ..init import normal_weights
from ..scores import (
    SCORE_NAMES,
    additive_scores,
    dot_scores,
    general_scores,
    scaled_dot_scores,
    score_parameter_count,
)
from ..softmax import softmax
from ..text import toy_embeddings

LUONG_SCORES = ("dot", "general", "additive")

#: A few French words and their English translations (lower case).
LEXICON = {
    "j'": "i", "je": "i", "l'": "the", "aime": "love", "les": "the", "le": "the", "la": "the",
    "chats": "cats", "chat": "cat", "chien": "dog", "chiens": "dogs", "noir": "black",
    "est": "is", "sur": "on", "tapis": "mat", "assis": "sat", "mange": "eat",
    "une": "a", "un": "a", "pomme": "apple", "et": "and", "petit": "small",
}


@dataclass(frozen=True)
class Seq2SeqParams:
    """Seeded parameters of the toy encoder, decoder and attention scores.

    Attributes
    ----------
    w_enc : ndarray (d, d)
        The map from embeddings to states, shared by encoder and decoder:
        h = tanh(X W_enc), s = tanh(Y W_enc).
    w_general : ndarray (d, d)
        Luong's general score matrix.
    w_q, w_k : ndarray (d_a, d)
        Additive score projections; ``v`` (d_a,).
    w_p : ndarray (d_a, d), v_p : ndarray (d_a,)
        Predictive alignment: p_t = S · sigmoid(v_pᵀ tanh(W_p s_t)).
    """

    w_enc: np.ndarray
    w_general: np.ndarray
    w_q: np.ndarray
    w_k: np.ndarray
    v: np.ndarray
    w_p: np.ndarray
    v_p: np.ndarray

    @property
    def d(self) -> int:
        return self.w_enc.shape[0]

    def parameter_counts(self) -> dict[str, int]:
        """Learned parameters of each score function, by the names of :data:`SCORE_NAMES`."""
        return {name: score_parameter_count(name, self.d, self.d, self.v.shape[0])
                for name in SCORE_NAMES}


def init_seq2seq(d: int, rng: np.random.Generator, d_a: int | None = None) -> Seq2SeqParams:
    """Seeded parameters with entries N(0, 1/fan_in): 1/d for the matrices applied to a
    state (W_enc, W_general, W_q, W_k, W_p), 1/d_a for the vectors v and v_p."""
    d = whole_number(d, "d", 1, 256)
    d_a = d if d_a is None else whole_number(d_a, "d_a", 1, 256)

    def m(rows, cols):  # used as W @ x: each output sums over the cols inputs
        return normal_weights(rng, (rows, cols), fan_in=cols)

    return Seq2SeqParams(w_enc=m(d, d), w_general=m(d, d), w_q=m(d_a, d),
                         w_k=m(d_a, d), v=normal_weights(rng, (d_a,)),
                         w_p=m(d_a, d), v_p=normal_weights(rng, (d_a,)))


def encode(tokens, params: Seq2SeqParams, seed: int = 0) -> np.ndarray:
    """Encoder states h_j = tanh(x_j W_enc), shape (S, d)."""
    if len(tokens) == 0:
        raise ValueError("the source sentence is empty; type at least one word")
    return np.tanh(toy_embeddings(tokens, params.d, seed=seed, decimals=None) @ params.w_enc)


def read_as(tokens) -> list[str]:
    """The word the toy decoder reads each target token as: its translation in
    :data:`LEXICON` (matched in lower case, with ’ read as '), else the token itself."""
    return [LEXICON.get(t.lower().replace("\u2019", "'"), t) for t in tokens]


def lexicon_matches(source, target) -> np.ndarray:
    """Which source token each target token is read as, shape (T, S) of bool.

    ``[t, j]`` is True when target token t, read through :data:`LEXICON`
    (:func:`read_as`), is source token j (case-insensitive, as the toy embeddings are):
    the pairs whose states are alike, which an untrained dot score can find. A row with
    no True has no translation in the source.

    >>> lexicon_matches(["I", "love", "cats"], ["J'", "aime", "les", "chats"]).astype(int)
    array([[1, 0, 0],
           [0, 1, 0],
           [0, 0, 0],
           [0, 0, 1]])
    """
    words = [w.lower() for w in source]
    return np.array([[m.lower() == w for w in words] for m in read_as(target)],
                    dtype=bool).reshape(len(target), len(words))


@dataclass(frozen=True)
class LexiconAlignment:
    """How an alignment fares against :data:`LEXICON`: ``findable`` target words have
    their translation in the source, and ``found`` of them put their largest weight on
    it."""

    findable: int
    found: int


def lexicon_alignment(source, target, weights) -> LexiconAlignment:
    """Count the target words whose largest weight in ``weights`` (T, S) (target rows,
    source columns) lies on their translation in the source (:func:`lexicon_matches`).

    >>> lexicon_alignment(["I", "love", "cats"], ["J'", "aime", "les", "chats"],
    ...                   np.eye(4, 3))
    LexiconAlignment(findable=3, found=2)
    """
    matches = lexicon_matches(source, target)  # (T, S)
    weights = as_real_array(weights, "weights", min_ndim=2)
    if weights.shape != matches.shape:
        raise ValueError(f"weights must be target × source, {matches.shape}; got "
                         f"{weights.shape}")
    has = matches.any(axis=1)
    found = matches[np.arange(len(target)), weights.argmax(axis=1)] & has
    return LexiconAlignment(findable=int(has.sum()), found=int(found.sum()))


def decoder_states(tokens, params: Seq2SeqParams, seed: int = 0) -> np.ndarray:
    """Decoder states s_t = tanh(u_t W_enc), shape (T, d).

    u_t is the embedding of the word's translation (:data:`LEXICON`; the word itself
    when it has none) plus 0.3 times the word's own embedding (:func:`word_embeddings`),
    so that a word and its translation are close but not identical.
    """
    if len(tokens) == 0:
        raise ValueError("the target sentence is empty; type at least one word")
    u = (toy_embeddings(read_as(tokens), params.d, seed=seed, decimals=None)
         + 0.3 * word_embeddings(tokens, params.d, seed=seed))
    return np.tanh(u @ params.w_enc)


def word_embeddings(tokens, d: int, seed: int = 0) -> np.ndarray:
    """The target words' own embeddings, shape (T, d): Bahdanau et al.'s E y for each
    word y (E the embedding matrix, y one-hot), a fixed random vector per word."""
    return toy_embeddings(tokens, d, seed=seed + 1, decimals=None)


def score(method: str, queries, h, params: Seq2SeqParams) -> np.ndarray:
    """Scores of queries (T, d) against encoder states h (S, d), shape (T, S).

    ``method`` is one of :data:`attncore.scores.SCORE_NAMES`.
    """
    queries = as_real_array(queries, "decoder states", min_ndim=2)
    h = as_real_array(h, "encoder states", min_ndim=2)
    if method == "dot":
        return dot_scores(queries, h)
    if method == "scaled_dot":
        return scaled_dot_scores(queries, h)
    if method == "general":
        return general_scores(queries, h, params.w_general)
    if method == "additive":
        return additive_scores(queries, h, params.w_q, params.w_k, params.v)
    raise ValueError(f"unknown score {method!r}; expected one of {', '.join(SCORE_NAMES)}")


def score_weights(query, h, params: Seq2SeqParams) -> dict[str, np.ndarray]:
    """The weights over the source of one decoder state ``query`` (d,) against the encoder
    states h (S, d) under each score of :data:`attncore.scores.SCORE_NAMES`: name -> (S,),
    each a softmax that sums to 1."""
    query = as_real_array(query, "decoder state", min_ndim=1)
    return {name: softmax(score(name, query.reshape(1, -1), h, params))[0]
            for name in SCORE_NAMES}


@dataclass(frozen=True)
class Alignment:
    """Every decoding step of one attention model.

    Attributes
    ----------
    queries : ndarray (T, d)
        The state that asks at each step (s_{t-1} for Bahdanau, s_t for Luong).
    scores : ndarray (T, S)
    weights : ndarray (T, S)
        Row t is α_t; each row sums to 1 (global attention).
    contexts : ndarray (T, d)
        c_t = Σ_j α_tj h_j.
    """

    queries: np.ndarray
    scores: np.ndarray
    weights: np.ndarray
    contexts: np.ndarray


def bahdanau(h, s, params: Seq2SeqParams) -> Alignment:
    """Bahdanau attention: additive score, queried with the previous decoder state.

    The state before the first step is the mean of the encoder states: this app's
    choice (Bahdanau et al. start from s_0 = tanh(W_s h←_1), the backward encoder's
    state at the first source word). Row t (from 0) is queried with the state of target
    token t - 1, row 0 with that mean.
    """
    h = as_real_array(h, "encoder states", min_ndim=2)
    s = as_real_array(s, "decoder states", min_ndim=2)
    previous = np.vstack([h.mean(axis=0, keepdims=True), s[:-1]])  # (T, d)
    return _align(previous, h, "additive", params)


def luong(h, s, params: Seq2SeqParams, method: str = "dot") -> Alignment:
    """Luong (global) attention: dot, general or additive score with the current state."""
    if method not in LUONG_SCORES:
        raise ValueError(f"Luong's score is one of {LUONG_SCORES}; got {method!r}")
    s = as_real_array(s, "decoder states", min_ndim=2)
    return _align(s, h, method, params)


def _align(queries, h, method, params) -> Alignment:
    scores = score(method, queries, h, params)
    weights = softmax(scores)  # (T, S)
    return Alignment(queries, scores, weights, weights @ h)  # (T, S) x (S, d) -> (T, d)


def monotonic_position(t: int, source_len: int) -> float:
    """Local-m: p_t = t (clipped to the last source position)."""
    return float(min(t, source_len - 1))


def predictive_position(s_t, params: Seq2SeqParams, source_len: int) -> float:
    """Local-p: p_t = S · sigmoid(v_pᵀ tanh(W_p s_t)), a learned position in [0, S]."""
    z = params.v_p @ np.tanh(params.w_p @ np.asarray(s_t, dtype=np.float64))
    return float(source_len / (1.0 + np.exp(-z)))


@dataclass(frozen=True)
class LocalAttention:
    """Local attention at one step.

    Attributes
    ----------
    p_t : float
        The window's centre.
    window : ndarray of bool (S,)
        Source positions j with |j - p_t| <= D.
    gaussian : ndarray (S,) or None
        Local-p only: exp(-(j - p_t)² / (2σ²)) with σ = D/2. None for local-m.
    weights : ndarray (S,)
        The softmax of the scores over the window, exactly 0 outside it: for local-m
        that is all (it sums to 1); for local-p it is multiplied by the Gaussian and, as
        in Luong et al., not renormalised, so it sums to less than 1.
    context : ndarray (d,)
    """

    p_t: float
    window: np.ndarray
    gaussian: np.ndarray | None
    weights: np.ndarray
    context: np.ndarray


#: The two kinds of local attention of Luong et al. (2015), named by how p_t is found.
LOCAL_MODES = ("monotonic", "predictive")


def local_attention(scores, h, p_t: float, half_width: int, *, mode: str) -> LocalAttention:
    """Luong's local attention over the window [p_t - D, p_t + D].

    ``mode="monotonic"`` (local-m, p_t = t): the softmax of the scores over the window,
    Luong et al.'s eq. (7) restricted to it. ``mode="predictive"`` (local-p, p_t
    learned): that softmax times a Gaussian centred on p_t with σ = D/2, favouring the
    positions near the predicted one (their eq. 10).

    Parameters
    ----------
    scores : array_like (S,)
        Scores of the current query against every source state.
    h : array_like (S, d)
    p_t : float
    half_width : int
        D >= 1; a window wider than the source simply covers all of it.
    mode : "monotonic" or "predictive"
    """
    scores = as_real_array(scores, "scores", min_ndim=1)
    h = as_real_array(h, "encoder states", min_ndim=2)
    half_width = whole_number(half_width, "the half-width D", 1)
    if mode not in LOCAL_MODES:
        raise ValueError(f"local attention is 'monotonic' (local-m) or 'predictive' "
                         f"(local-p), got {mode!r}")
    S = scores.shape[0]
    if h.shape[0] != S:
        raise ValueError(f"scores ({S},) and encoder states {h.shape} disagree on S")
    positions = np.arange(S)
    window = np.abs(positions - p_t) <= half_width
    if not window.any():  # p_t beyond the source: take the nearest position
        window[int(np.clip(round(p_t), 0, S - 1))] = True
    weights = softmax(scores, mask=window)
    gaussian = None
    if mode == "predictive":
        sigma = positive_number(half_width / 2, "sigma")
        gaussian = np.exp(-((positions - p_t) ** 2) / (2 * sigma**2))
        weights = weights * gaussian
    weights[~window] = 0.0
    return LocalAttention(float(p_t), window, gaussian, weights, weights @ h)


def hard_attention(scores, h, rng: np.random.Generator | None = None) -> tuple[int, np.ndarray]:
    """Hard attention: one source position, the argmax (or a sample from the softmax
    when ``rng`` is given); the context is exactly that encoder state."""
    scores = as_real_array(scores, "scores", min_ndim=1)
    h = as_real_array(h, "encoder states", min_ndim=2)
    if rng is None:
        chosen = int(np.argmax(scores))
    else:
        chosen = int(rng.choice(scores.shape[0], p=softmax(scores)))
    return chosen, h[chosen].copy()


def context_gradient(scores, h, eps: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    """Central-difference derivative of the soft and the hard (argmax) context with
    respect to each score: ‖dc/ds_j‖ for every j, shapes (S,) and (S,).

    The soft context moves smoothly with every score; the hard context is piecewise
    constant, so its derivative is 0 almost everywhere: plain backpropagation gets no
    signal (hard attention is trained with REINFORCE-style estimators instead).
    """
    scores = as_real_array(scores, "scores", min_ndim=1)
    h = as_real_array(h, "encoder states", min_ndim=2)
    soft, hard = np.empty(scores.shape[0]), np.empty(scores.shape[0])
    for j in range(scores.shape[0]):
        e = np.zeros_like(scores)
        e[j] = eps
        soft[j] = np.linalg.norm(softmax(scores + e) @ h - softmax(scores - e) @ h) / (2 * eps)
        hard[j] = np.linalg.norm(hard_attention(scores + e, h)[1]
                                 - hard_attention(scores - e, h)[1]) / (2 * eps)
    return soft, hard
