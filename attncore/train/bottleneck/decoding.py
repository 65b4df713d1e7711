"""Lesson 0's greedy decoding (each step reads the model's own last output), one step of it
taken apart, and what it shows: accuracy against length, attention by offset."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._checks import whole_number
from ..gru import gru_cell_forward
from ..layers import softmax_forward
from .network import additive_step_forward, encode, forward
from .task import BOS, OFFSETS, as_strings, make_strings


@dataclass(frozen=True)
class Decoding:
    """A batch of strings decoded greedily (each step reads the model's own last output).

    source (B, T) the strings; tokens (B, T) the outputs; probabilities (B, T, V) the
    output distribution at each step (rows sum to 1); states (B, T, d) the decoder
    states s_t; encoder_states (B, T, d) the h_j; weights (B, T, T) the attention
    weights (output steps x source positions, rows sum to 1), None for the fixed model.
    """

    model: str
    source: np.ndarray
    tokens: np.ndarray
    probabilities: np.ndarray
    states: np.ndarray
    encoder_states: np.ndarray
    weights: np.ndarray | None

    @property
    def correct(self) -> np.ndarray:
        """(B, T) True where the output symbol is the source symbol."""
        return self.tokens == self.source

    @property
    def accuracy(self) -> float:
        """Token accuracy: the fraction of all output symbols that are right."""
        return float(self.correct.mean())


def decode(p: dict, src, model: str, allowed=None) -> Decoding:
    """Greedy decoding of ``src`` (B, T), or of one string (T,): as many steps as symbols.

    ``allowed`` (T, T) bool, for the attention model only: the source positions output
    step t may read (row t - 1); the softmax runs over those alone (weight 0 elsewhere,
    the rest renormalised). Every row must allow one position or more. None: all.
    """
    src = as_strings(src)
    attend = model == "attention"
    B, T = src.shape
    if allowed is not None:
        allowed = np.asarray(allowed, dtype=bool)
        if not attend or allowed.shape != (T, T) or not allowed.any(axis=1).all():
            raise ValueError(f"allowed must be a ({T}, {T}) bool array of the attention "
                             "model, allowing one source position or more at every step; "
                             f"got shape {allowed.shape} for the {model} model")
    hs, _ = encode(p, src)
    h_last = hs[:, -1]
    table = p["dec.E"] @ p["dec.Wy"] + p["dec.bx"]  # (V+1, 3d): each input symbol's y part
    Uh = hs @ p["att.U"] if attend else None
    d, V = h_last.shape[-1], p["out.b"].shape[0]
    tokens = np.empty((B, T), dtype=np.int64)
    probs = np.empty((B, T, V), dtype=hs.dtype)
    S = np.empty((B, T, d), dtype=hs.dtype)
    weights = np.empty((B, T, T), dtype=hs.dtype) if attend else None
    s, y = h_last, np.full(B, BOS)
    for t in range(T):
        if attend:
            c, weights[:, t], (_, _, u, _, _, v) = additive_step_forward(
                s, hs, Uh, p["att.W"], p["att.v"])
            if allowed is not None:  # the same scores, softmax over the allowed positions
                weights[:, t] = softmax_forward(u @ v, allowed[t])
                c = (weights[:, t, None, :] @ hs)[:, 0]
        else:
            c = h_last
        s, _ = gru_cell_forward(table[y] + c @ p["dec.Wc"], s, p["dec.Wh"], p["dec.bh"])
        logits = np.concatenate([s, c], axis=-1) @ p["out.W"] + p["out.b"]  # (B, V)
        probs[:, t] = softmax_forward(logits)
        y = tokens[:, t] = logits.argmax(axis=-1)
        S[:, t] = s
    return Decoding(model, src, tokens, probs, S, hs, weights)


@dataclass(frozen=True)
class DecodingStep:
    r"""One step of the attention model's greedy decoding, every intermediate shown.

    t is the output step counted as in the formulas, from 1 (step t writes the t-th
    symbol; array row t - 1 of :class:`Decoding`); previous_token is y_{t-1} (y_0 = BOS),
    previous_state s_{t-1} (d,) (s_0 = h_n), projected_state W s_{t-1} (A,),
    projected_sources U h_j (Ts, A), score_weights v (A,),
    scores e_tj = v · tanh(W s_{t-1} + U h_j) (Ts,), weights α_t (Ts,) summing to 1,
    context c_t (d,); reset r, update z and candidate n (d,) of the GRU, state
    s_t = (1 - z) n + z s_{t-1}; the output layer's three parts (V,) each, from_state
    (the rows of W_o that read s_t, times s_t), from_context (those that read c_t, times
    c_t) and output_bias b_o, whose sum is logits W_o [s_t; c_t] + b_o; probabilities
    (V,), and the chosen token (argmax).
    """

    t: int
    source: np.ndarray
    previous_token: int
    previous_state: np.ndarray
    projected_state: np.ndarray
    projected_sources: np.ndarray
    score_weights: np.ndarray
    scores: np.ndarray
    weights: np.ndarray
    context: np.ndarray
    reset: np.ndarray
    update: np.ndarray
    candidate: np.ndarray
    state: np.ndarray
    from_state: np.ndarray
    from_context: np.ndarray
    output_bias: np.ndarray
    logits: np.ndarray
    probabilities: np.ndarray
    token: int


def trace_step(p: dict, source, t: int) -> DecodingStep:
    """Step ``t`` (1..T, as in the formulas) of the attention model's greedy decoding of
    one string ``source`` (T,), taken apart: the same functions as :func:`decode`, on a
    batch of one."""
    src = as_strings(source)
    if src.shape[0] != 1:
        raise ValueError(f"source must be one string; got {src.shape[0]} strings")
    if "att.W" not in p:
        raise ValueError("trace_step needs the attention model's parameters (att.W, att.U, att.v)")
    T = src.shape[1]
    whole_number(t, "t", 1, T)
    run = decode(p, src, "attention")
    hs = run.encoder_states
    s_prev = hs[:, -1] if t == 1 else run.states[:, t - 2]  # s_0 = h_n
    y_prev = BOS if t == 1 else int(run.tokens[0, t - 2])  # y_0 = BOS
    Uh = hs @ p["att.U"]  # (1, T, A)
    c, alpha, (_, _, u, _, _, _) = additive_step_forward(s_prev, hs, Uh, p["att.W"], p["att.v"])
    gx = p["dec.E"][[y_prev]] @ p["dec.Wy"] + p["dec.bx"] + c @ p["dec.Wc"]  # (1, 3d)
    s, (_, rz, n, _) = gru_cell_forward(gx, s_prev, p["dec.Wh"], p["dec.bh"])
    d = s.shape[-1]
    logits = (np.concatenate([s, c], axis=-1) @ p["out.W"] + p["out.b"])[0]
    probs = softmax_forward(logits)
    from_state, from_context = (s @ p["out.W"][:d])[0], (c @ p["out.W"][d:])[0]
    return DecodingStep(
        t=t, source=src[0], previous_token=y_prev, previous_state=s_prev[0],
        projected_state=(s_prev @ p["att.W"])[0], projected_sources=Uh[0],
        score_weights=p["att.v"].copy(), scores=(u @ p["att.v"])[0], weights=alpha[0], context=c[0],
        reset=rz[0, :d], update=rz[0, d:], candidate=n[0], state=s[0],
        from_state=from_state, from_context=from_context, output_bias=p["out.b"].copy(),
        logits=logits, probabilities=probs, token=int(np.argmax(logits)),
    )


def weight_by_offset(weights: np.ndarray, offsets=OFFSETS) -> np.ndarray:
    """Mean attention weight on source position j = t + k, for each offset k.

    weights (B, T, T) (output steps x source positions, as :class:`Decoding`) ->
    (len(offsets),): offset 0 is the symbol being copied, -1 the one before it. Each
    mean runs over the output steps where that position exists.
    """
    T = weights.shape[-1]
    return np.array([np.diagonal(weights, offset=k, axis1=1, axis2=2).mean()
                     if abs(k) < T else np.nan for k in offsets])


def accuracy_by_length(p: dict, model: str, lengths, n: int, seed: int,
                       teacher_forced: bool = False):
    """Token accuracy on ``n`` fresh strings at each length: greedy (each step reads the
    model's own last output), or with ``teacher_forced`` each step reading the correct
    previous symbol, as in training (the same strings either way: they come from
    ``seed`` alone). The two differ only from the second step on: the first reads BOS.

    Returns (accuracy (L,), position_accuracy (L, max length)): the fraction of right
    symbols at each length, and at each output position (NaN past the length). Two models
    given the same seed see the same strings (at short lengths most were also seen in
    training: there are only 12^n strings).
    """
    rng = np.random.default_rng([seed, 3])
    lengths = np.asarray(lengths)
    accuracy = np.empty(len(lengths))
    by_position = np.full((len(lengths), lengths.max()), np.nan)
    for i, length in enumerate(lengths):
        src = make_strings(rng, n, int(length))
        if teacher_forced:
            right = forward(p, src, model)[0].argmax(axis=-1) == src
        else:
            right = decode(p, src, model).correct
        accuracy[i] = right.mean()
        by_position[i, :length] = right.mean(axis=0)
    return accuracy, by_position


@dataclass(frozen=True)
class EarlierStates:
    """What the attention model's weight on encoder states before the symbol it copies is
    for, measured on ``strings`` fresh strings of ``length`` symbols.

    A left-to-right encoder's h_j has read symbols 1..j only, so at output step t the
    states h_1 .. h_(t-1) hold nothing of symbol t: only h_t and later states can carry
    it. ``weight_before`` is the mean weight on those earlier states (Σ_{j<t} α_tj, over
    the steps t >= 2 of every string, the steps that have earlier states) and
    ``weight_previous`` the part of it on h_(t-1) alone (α_t,t-1, over the same steps);
    ``accuracy`` is the greedy token accuracy as trained,
    ``accuracy_later_only`` the same when each step may read h_t and later states alone
    (the same scores, softmax over j >= t: the weight before moves onto them).
    """

    length: int
    strings: int
    weight_before: float
    weight_previous: float
    accuracy: float
    accuracy_later_only: float


def earlier_states(p: dict, src) -> EarlierStates:
    """Measure :class:`EarlierStates` of the attention model ``p`` on strings ``src`` (B, T)."""
    src = as_strings(src)
    B, T = src.shape
    run = decode(p, src, "attention")
    later = np.triu(np.ones((T, T), dtype=bool))  # row t: source positions j >= t
    before = np.sum(run.weights * ~later, axis=-1)[:, 1:]  # steps 2..T (step 1 has none)
    previous = np.diagonal(run.weights, offset=-1, axis1=1, axis2=2)  # α_t,t-1, t >= 2
    return EarlierStates(length=T, strings=B, weight_before=float(np.mean(before)),
                         weight_previous=float(np.mean(previous)), accuracy=run.accuracy,
                         accuracy_later_only=decode(p, src, "attention", later).accuracy)
