r"""Lesson 0: the fixed-size bottleneck, and the attention that removes it.

A GRU encoder-decoder (:mod:`attncore.train.gru`) learns to copy random strings of
``SYMBOLS`` = 12 symbols (ids 0..11, drawn independently and uniformly, so a guess is
right with probability ``CHANCE`` = 1/12). Two models of the same width, trained on the
same batches from the same initial weights for every parameter they share:

* ``"fixed"``: the decoder sees the source only through the encoder's last state
  :math:`h_n`: it starts from it (:math:`s_0 = h_n`) and reads it as its context at
  every step, :math:`c_t = h_n` (Cho et al. 2014 feed the summary to every step, as here;
  Sutskever et al. 2014 only start from it). Everything the decoder will ever know about
  the string has to fit in d numbers.
* ``"attention"``: the same decoder, but the context is recomputed at every step from
  every encoder state with Bahdanau's additive score (Bahdanau, Cho and Bengio 2015):

  .. math::

      e_{ts} = v^\top \tanh(W s_{t-1} + U h_s), \quad
      \alpha_t = \mathrm{softmax}(e_t), \quad
      c_t = \textstyle\sum_s \alpha_{ts} h_s

The two share everything else:

.. math::

    h_s = \mathrm{GRU}(E_x[x_s], h_{s-1}), \quad h_0 = 0; \qquad
    s_t = \mathrm{GRU}([E_y[y_{t-1}]; c_t], s_{t-1}), \quad s_0 = h_n; \qquad
    p(y_t) = \mathrm{softmax}(W_o [s_t; c_t] + b_o)

so they differ only in :math:`c_t`; the attention model has :math:`W, U` (d, d) and
:math:`v` (d,) more (:func:`count_parameters`). The decoder's first input
:math:`y_0` is ``BOS`` (id 12, never in a string and never predicted); in training it
then reads the correct previous symbol (teacher forcing), in testing its own previous
output (greedy decoding). No end mark: the decoder runs as many steps as the string is
long, so accuracy counts symbols only. The encoder is one GRU reading left to right
(Bahdanau's was bidirectional), so :math:`h_s` mixes every symbol up to ``s`` and the
weights need not fall on the aligned position alone: trained, they spread over it and
its neighbours (:func:`weight_by_offset` measures how).

Code convention: vectors are rows, so :math:`W s` is written ``s @ W`` with ``W`` (d, A).
Each mini-batch has one length drawn uniformly from the training range, so no padding
is needed. Training runs in float32 on one BLAS thread; the gradient checks in the tests
run the same functions in float64.
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np

from .._checks import positive_number, whole_number
from .gru import gru_backward, gru_cell_backward, gru_cell_forward, gru_forward, gru_weight_grads
from .layers import (
    cross_entropy_backward,
    cross_entropy_forward,
    embedding_forward,
    init_matrix,
    linear_backward,
    linear_forward,
    softmax_backward,
    softmax_forward,
)
from .run import Measure, TrainingRun, train

try:  # an optional speed-up; the numbers are the same without it
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover
    threadpool_limits = None

SYMBOLS = 12  # a string's symbols are the ids 0..11
BOS = SYMBOLS  # id 12: the decoder's first input, never a target
CHANCE = 1 / SYMBOLS  # symbols are uniform and independent: no model can beat this blind
MODELS = ("fixed", "attention")
EXAMPLE_LENGTH = 12  # the string whose alignment the lesson shows (12 x 12 keeps numbers in cells)
SHORTEST_TESTED, LONGEST_TESTED = 2, 20  # tested lengths: 2..20, or to max_length + 4 if longer
OFFSETS = np.arange(-2, 3)  # source position minus output position, for weight_by_offset
CHECK_STRINGS = 32  # held-out strings per length measured at each checkpoint
CHECK_LENGTHS = 4  # lengths measured at each checkpoint, spread over the trained range

# Caps on each setting, and on their combination: the estimated time of one call of
# train_bottleneck (both models, then the test) may not exceed ESTIMATE_LIMIT, so that
# nothing accepted takes more than LIMIT_SECONDS on the development machine (SPEC §6);
# the estimate keeps a sixth in hand for other work on the machine.
MAX_D_MODEL = 64
MAX_LENGTH = 20
MAX_STEPS = 1500
MAX_BATCH = 64
MAX_TEST = 1000
LIMIT_SECONDS = 30.0
ESTIMATE_LIMIT = 25.0
# Milliseconds per training step of both models together, batch 64, strings of T symbols:
# a T + b T d² + c T² d (time steps, the gates' products, the attention's T x T scores),
# fitted to process times measured on the development machine (2 cores, one BLAS thread)
# at d = 8..64 and T = 3..20 while other work ran (load average about 2.7); within 15%
# of the measurements, and above them on an idle machine.
STEP_MS = (1.14, 2.28e-4, 5.97e-4)


def step_ms(d_model: int, length) -> np.ndarray:
    """Estimated milliseconds of one training step of both models (see STEP_MS)."""
    a, b, c = STEP_MS
    T = np.asarray(length, dtype=float)
    return a * T + b * T * d_model**2 + c * T**2 * d_model


def estimated_seconds(d_model: int, min_length: int, max_length: int, steps: int,
                      n_test: int = 200) -> float:
    """Estimated wall time of :func:`train_bottleneck`: the steps (a batch's length is
    uniform over the trained range), 10% more for the checkpoints, and the test, whose
    greedy decoding of n_test strings at each tested length costs about twice a
    training step at that length per 200 strings (measured)."""
    train_ms = steps * step_ms(d_model, np.arange(min_length, max_length + 1)).mean() * 1.1
    tested = np.arange(SHORTEST_TESTED, max(LONGEST_TESTED, max_length + 4) + 1)
    test_ms = 2 * step_ms(d_model, tested).sum() * max(1.0, n_test / 200)
    return float(train_ms + test_ms) / 1000


def max_steps(d_model: int, min_length: int, max_length: int, n_test: int = 200) -> int:
    """The most steps (at most MAX_STEPS) whose estimated time stays within ESTIMATE_LIMIT;
    0 if even the test alone would not."""
    fixed = estimated_seconds(d_model, min_length, max_length, 0, n_test)
    per_step = estimated_seconds(d_model, min_length, max_length, 1, n_test) - fixed
    return int(np.clip((ESTIMATE_LIMIT - fixed) // per_step, 0, MAX_STEPS))


@dataclass(frozen=True)
class BottleneckConfig:
    """Settings of one lesson-0 run (both models); the defaults are the page's defaults.

    d_model is the width d of every vector (embeddings, encoder and decoder states,
    the attention's hidden layer); strings are min_length..max_length symbols long;
    n_test fresh strings are decoded at each tested length. Adam's step size starts at
    lr and falls along half a cosine to lr / 10 (:func:`attncore.train.run.train`'s
    ``decay``). Measured with the attention model: at a constant 3e-3 (the prototype's
    rate) it reached only 0.94-0.99 token accuracy at length 12 over seeds 0-5, still
    rising at the last step; 0.012 with the decay reached 0.99-1.00 at 12 and 0.96-0.99
    at 16 in each of seeds 0-15 (the fixed model: 0.41-0.45 at 12).
    """

    seed: int = 0
    d_model: int = 32
    min_length: int = 3
    max_length: int = 16
    steps: int = 800
    batch: int = 64
    lr: float = 0.012
    n_test: int = 200
    checkpoints: int = 10

    def __post_init__(self):
        whole_number(self.seed, "seed", 0, 2**32 - 1)
        whole_number(self.d_model, "d_model", 4, MAX_D_MODEL)
        whole_number(self.min_length, "min_length", 1, MAX_LENGTH)
        whole_number(self.max_length, "max_length", self.min_length, MAX_LENGTH)
        whole_number(self.steps, "steps", 1, MAX_STEPS)
        whole_number(self.batch, "batch", 1, MAX_BATCH)
        whole_number(self.n_test, "n_test", 1, MAX_TEST)
        whole_number(self.checkpoints, "checkpoints", 1, 100)
        positive_number(self.lr, "lr")
        if self.lr > 0.1:
            raise ValueError(f"lr must lie in (0, 0.1]; got {self.lr!r}")
        most = max_steps(self.d_model, self.min_length, self.max_length, self.n_test)
        if self.steps > most:
            raise ValueError(
                f"steps must lie in 1..{most} at d_model={self.d_model} and lengths "
                f"{self.min_length}-{self.max_length} (more would train for over "
                f"{LIMIT_SECONDS:.0f} s); got {self.steps}. A smaller d_model or "
                "max_length allows more steps")

    @property
    def train_lengths(self) -> tuple[int, int]:
        return (self.min_length, self.max_length)

    @property
    def test_lengths(self) -> np.ndarray:
        """Every length from 2 to 20, or to 4 past the longest trained length if later."""
        longest = max(LONGEST_TESTED, self.max_length + 4)
        return np.arange(SHORTEST_TESTED, longest + 1)


def make_strings(rng: np.random.Generator, n: int, length: int) -> np.ndarray:
    """(n, length) symbols, each uniform over 0..SYMBOLS-1 and independent."""
    return rng.integers(0, SYMBOLS, (n, length))


def init_params(d_model: int, rng: np.random.Generator, model: str,
                dtype=np.float32) -> dict:
    """The parameters of one model; the attention's three come last, so that both models
    drawn from the same ``rng`` start from the same values for every shared parameter.

    enc.E (V, d), enc.Wx, enc.Wh (d, 3d), enc.bx, enc.bh (3d,): encoder embedding and GRU;
    dec.E (V+1, d) (row BOS too), dec.Wy, dec.Wc, dec.Wh (d, 3d), dec.bx, dec.bh (3d,):
    decoder embedding and GRU, whose input [E_y[y]; c] is split into its two halves;
    out.W (2d, V), out.b (V,): the output layer on [s_t; c_t];
    att.W, att.U (d, d), att.v (d,): the additive score (attention model only).
    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}; got {model!r}")
    d, V = d_model, SYMBOLS
    p = {
        "enc.E": rng.standard_normal((V, d)),
        "enc.Wx": init_matrix(rng, d, 3 * d), "enc.bx": np.zeros(3 * d),
        "enc.Wh": init_matrix(rng, d, 3 * d), "enc.bh": np.zeros(3 * d),
        "dec.E": rng.standard_normal((V + 1, d)),
        "dec.Wy": init_matrix(rng, d, 3 * d), "dec.Wc": init_matrix(rng, d, 3 * d),
        "dec.bx": np.zeros(3 * d),
        "dec.Wh": init_matrix(rng, d, 3 * d), "dec.bh": np.zeros(3 * d),
        "out.W": init_matrix(rng, 2 * d, V), "out.b": np.zeros(V),
    }
    if model == "attention":
        p["att.W"] = init_matrix(rng, d, d)
        p["att.U"] = init_matrix(rng, d, d)
        p["att.v"] = init_matrix(rng, d, 1)[:, 0]
    return {name: value.astype(dtype) for name, value in p.items()}


def count_parameters(d_model: int, model: str) -> int:
    """Number of trained numbers in one model (17,324 fixed and 19,404 attention at d = 32:
    V d + 2 (3d² + 3d) + (V+1) d + 3 (3d²) + 2 (3d) + 2d V + V, plus 2d² + d for attention)."""
    shapes = init_params(d_model, np.random.default_rng(0), model)
    return sum(value.size for value in shapes.values())


# --- Bahdanau's additive attention, one decoder step ---------------------------------


def additive_step_forward(s_prev, h, Uh, W, v):
    r"""The context of one decoder step: :math:`e_s = v^\top\tanh(W s_{t-1} + U h_s)`,
    :math:`\alpha = \mathrm{softmax}(e)`, :math:`c = \sum_s \alpha_s h_s`.

    s_prev (B, d) the decoder's previous state, h (B, Ts, d) every encoder state,
    Uh = h U (B, Ts, A) computed once per batch (it does not depend on t), W (d, A),
    v (A,). Returns (c (B, d), alpha (B, Ts), cache) with alpha's rows summing to 1 and
    cache = (s_prev, h, u, alpha, W, v), u = tanh(...) (B, Ts, A).
    """
    q = s_prev @ W  # (B, d) x (d, A) -> (B, A)
    u = np.tanh(q[:, None, :] + Uh)  # (B, 1, A) + (B, Ts, A) -> (B, Ts, A)
    e = u @ v  # (B, Ts, A) x (A,) -> (B, Ts)
    alpha = softmax_forward(e)
    c = (alpha[:, None, :] @ h)[:, 0]  # (B, 1, Ts) x (B, Ts, d) -> (B, d)
    return c, alpha, (s_prev, h, u, alpha, W, v)


def additive_step_backward(dc, cache, through_context: bool = True):
    """Gradients of one step, given dc (B, d).

    Returns (ds_prev (B, d), dh (B, Ts, d), dUh (B, Ts, A), dq (B, A), dv (A,)); dq is
    the gradient of q = s_prev W, so dW = s_prevᵀ dq, and dU = hᵀ dUh (the model forms
    both for every step at once after its loop). dh is the gradient through
    c = Σ_s α_s h_s only (h also reaches the score through Uh); with
    ``through_context=False`` it is None, for a caller that forms Σ_t α_tᵀ dc_t for every
    step in one product after its loop.
    """
    s_prev, h, u, alpha, W, v = cache
    dh = alpha[:, :, None] * dc[:, None, :] if through_context else None  # (B, Ts, d)
    dalpha = (h @ dc[:, :, None])[:, :, 0]  # (B, Ts, d) x (B, d, 1) -> (B, Ts)
    de = softmax_backward(dalpha, alpha)  # (B, Ts)
    A = v.shape[0]
    dv = (de.reshape(1, -1) @ u.reshape(-1, A))[0]  # (1, B Ts) x (B Ts, A) -> (A,)
    dUh = u * u
    dUh -= 1
    dUh *= de[:, :, None] * -v  # (B, Ts, A) = de v (1 - u²): through v and tanh
    dq = dUh.sum(axis=1)  # q was broadcast over the source positions
    return dq @ W.T, dh, dUh, dq, dv


# --- the encoder-decoder --------------------------------------------------------------


def encode(p: dict, src: np.ndarray):
    """Encoder states hs (B, Ts, d) and the caches of the embedding and the GRU."""
    B, _ = src.shape
    x, c_emb = embedding_forward(src, p["enc.E"])  # (B, Ts, d)
    gx = x @ p["enc.Wx"] + p["enc.bx"]  # (B, Ts, 3d): every step's input part in one product
    h0 = np.zeros((B, p["enc.Wh"].shape[0]), dtype=gx.dtype)
    hs, c_gru = gru_forward(gx, h0, p["enc.Wh"], p["enc.bh"])
    return hs, (x, c_emb, h0, c_gru)


def decoder_inputs(src: np.ndarray) -> np.ndarray:
    """Teacher forcing: y_0 = BOS, then the correct previous symbol. (B, T) -> (B, T)."""
    return np.concatenate([np.full((src.shape[0], 1), BOS), src[:, :-1]], axis=1)


def forward(p: dict, src: np.ndarray, model: str, inputs: np.ndarray | None = None):
    """The teacher-forced pass: logits (B, T, V) of every output step, and the caches.

    src (B, T) the strings (which are also the targets); inputs (B, T) the decoder's
    inputs y_{t-1} (default :func:`decoder_inputs`). caches["weights"] (B, T, T) holds
    the attention weights (output steps x source positions; None for the fixed model).
    """
    attend = model == "attention"
    B, T = src.shape
    hs, enc = encode(p, src)  # (B, T, d)
    h_last = hs[:, -1]
    y = decoder_inputs(src) if inputs is None else inputs
    ey, c_ey = embedding_forward(y, p["dec.E"])  # (B, T, d)
    gy = ey @ p["dec.Wy"] + p["dec.bx"]  # (B, T, 3d): the y part of every step's input
    Uh = hs @ p["att.U"] if attend else None  # (B, T, A), once per batch
    d = h_last.shape[-1]
    S = np.empty((B, T, d), dtype=hs.dtype)  # s_t
    C = np.empty_like(S)  # c_t
    weights = np.empty((B, T, T), dtype=hs.dtype) if attend else None
    s, steps = h_last, []
    for t in range(T):
        if attend:
            c, weights[:, t], c_att = additive_step_forward(s, hs, Uh, p["att.W"], p["att.v"])
        else:
            c, c_att = h_last, None
        s, c_cell = gru_cell_forward(gy[:, t] + c @ p["dec.Wc"], s, p["dec.Wh"], p["dec.bh"])
        S[:, t], C[:, t] = s, c
        steps.append((c_att, c_cell))
    logits, c_out = linear_forward(np.concatenate([S, C], axis=-1), p["out.W"], p["out.b"])
    caches = {"enc": enc, "hs": hs, "ey": ey, "c_ey": c_ey, "S": S, "C": C,
              "steps": steps, "out": c_out, "weights": weights, "attend": attend}
    return logits, caches


def symbol_counts(ids: np.ndarray, V: int, grad: np.ndarray) -> np.ndarray:
    """(V, k): row i sums the rows of ``grad`` (..., k) at the positions holding symbol i.

    An embedding's gradient is this times the next layer's weights transposed
    (dE = onehotᵀ dgx W_xᵀ); the one-hot product is faster here than np.add.at.
    """
    k = grad.shape[-1]
    one_hot = (ids.reshape(-1, 1) == np.arange(V)).astype(grad.dtype)  # (N, V)
    return one_hot.T @ grad.reshape(-1, k)  # (V, N) x (N, k)


def backward(p: dict, dlogits: np.ndarray, caches: dict) -> dict:
    """Gradients of every parameter (same dtype as the parameter), given dlogits (B, T, V)."""
    attend, hs, S, C = caches["attend"], caches["hs"], caches["S"], caches["C"]
    B, T, d = S.shape
    g = {}
    dz, g["out.W"], g["out.b"] = linear_backward(dlogits, caches["out"])
    dS, dC = dz[..., :d], dz[..., d:]  # (B, T, d) each
    h_last = hs[:, -1]
    ds = np.zeros_like(h_last)
    dhs = np.zeros_like(hs)  # gradient on the encoder states from the decoder
    dh_last = np.zeros_like(h_last)
    dgx = np.empty((B, T, 3 * d), dtype=S.dtype)
    dgh = np.empty_like(dgx)
    dC_all = np.empty_like(S)  # the whole gradient reaching each c_t
    if attend:
        A = p["att.v"].shape[0]
        dUh, dq = np.zeros((B, T, A), dtype=S.dtype), np.empty((B, T, A), dtype=S.dtype)
        dv = np.zeros(A, dtype=S.dtype)
    for t in reversed(range(T)):
        c_att, c_cell = caches["steps"][t]
        dgx[:, t], ds, dgh[:, t] = gru_cell_backward(dS[:, t] + ds, c_cell, p["dec.Wh"])
        dc = dC_all[:, t] = dC[:, t] + dgx[:, t] @ p["dec.Wc"].T  # (B, 3d) x (3d, d)
        if attend:
            ds_att, _, dUh_t, dq[:, t], dv_t = additive_step_backward(dc, c_att, False)
            ds += ds_att
            dUh += dUh_t
            dv += dv_t
    if not attend:
        dh_last += dC_all.sum(axis=1)  # c_t = h_n at every step
    dh_last += ds  # s_0 = h_n
    # weight gradients of the decoder: one product each over every step and row
    S_prev = np.concatenate([h_last[:, None], S[:, :-1]], axis=1)  # s_{t-1} (B, T, d)
    flat = dgx.reshape(-1, 3 * d)
    g["dec.Wy"] = caches["ey"].reshape(-1, d).T @ flat
    g["dec.Wc"] = C.reshape(-1, d).T @ flat  # (d, B T) x (B T, 3d)
    g["dec.bx"] = flat.sum(axis=0)
    g["dec.E"] = symbol_counts(caches["c_ey"][0], p["dec.E"].shape[0], flat) @ p["dec.Wy"].T
    g["dec.Wh"], g["dec.bh"] = gru_weight_grads(S_prev, dgh)
    if attend:
        g["att.W"] = S_prev.reshape(-1, d).T @ dq.reshape(-1, A)
        g["att.U"] = hs.reshape(-1, d).T @ dUh.reshape(-1, A)
        g["att.v"] = dv
        dhs += caches["weights"].transpose(0, 2, 1) @ dC_all  # (B, Ts, Tt) x (B, Tt, d): via c_t
        dhs += dUh @ p["att.U"].T  # (B, Ts, A) x (A, d): via the scores
    dhs[:, -1] += dh_last
    # the encoder
    x, c_emb, h0, c_gru = caches["enc"]
    dgx_e, _, dgh_e = gru_backward(dhs, c_gru, p["enc.Wh"])
    g["enc.Wx"] = x.reshape(-1, d).T @ dgx_e.reshape(-1, 3 * d)
    g["enc.bx"] = dgx_e.reshape(-1, 3 * d).sum(axis=0)
    g["enc.E"] = symbol_counts(c_emb[0], p["enc.E"].shape[0], dgx_e) @ p["enc.Wx"].T
    H_prev = np.concatenate([h0[:, None], hs[:, :-1]], axis=1)  # h_{s-1} (B, T, d)
    g["enc.Wh"], g["enc.bh"] = gru_weight_grads(H_prev, dgh_e)
    return {name: grad.astype(p[name].dtype, copy=False) for name, grad in g.items()}


def loss_and_gradients(p: dict, src: np.ndarray, model: str):
    """Mean cross-entropy over every output step of every string, and its gradients."""
    logits, caches = forward(p, src, model)
    V = logits.shape[-1]
    loss, c = cross_entropy_forward(logits.reshape(-1, V), src.ravel())
    dlogits = cross_entropy_backward(c).reshape(logits.shape).astype(logits.dtype)
    return loss, backward(p, dlogits, caches)


# --- greedy decoding and what it shows ------------------------------------------------


@dataclass(frozen=True)
class Decoding:
    """A batch of strings decoded greedily (each step reads the model's own last output).

    source (B, T) the strings; tokens (B, T) the outputs; probabilities (B, T, V) the
    output distribution at each step (rows sum to 1); states (B, T, d) the decoder
    states s_t; encoder_states (B, T, d) the h_s; weights (B, T, T) the attention
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


def as_strings(src, name: str = "source") -> np.ndarray:
    """``src`` as a (B, T) int array of symbols (a single string becomes one row)."""
    arr = np.asarray(src)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] < 1 or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must be a string of symbol ids (ints) or a batch of them; "
                         f"got shape {arr.shape}, dtype {arr.dtype}")
    if arr.size and (arr.min() < 0 or arr.max() >= SYMBOLS):
        raise ValueError(f"{name} symbols must lie in 0..{SYMBOLS - 1}; "
                         f"got {arr.min()}..{arr.max()}")
    return arr


def decode(p: dict, src, model: str) -> Decoding:
    """Greedy decoding of ``src`` (B, T), or of one string (T,): as many steps as symbols."""
    src = as_strings(src)
    attend = model == "attention"
    B, T = src.shape
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
            c, weights[:, t], _ = additive_step_forward(s, hs, Uh, p["att.W"], p["att.v"])
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
    projected_sources U h_s (Ts, A),
    scores e_ts (Ts,), weights α_t (Ts,) summing to 1, context c_t (d,);
    reset r, update z and candidate n (d,) of the GRU, state s_t = (1 - z) n + z s_{t-1};
    logits W_o [s_t; c_t] + b_o and probabilities (V,), and the chosen token (argmax).
    """

    t: int
    source: np.ndarray
    previous_token: int
    previous_state: np.ndarray
    projected_state: np.ndarray
    projected_sources: np.ndarray
    scores: np.ndarray
    weights: np.ndarray
    context: np.ndarray
    reset: np.ndarray
    update: np.ndarray
    candidate: np.ndarray
    state: np.ndarray
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
    return DecodingStep(
        t=t, source=src[0], previous_token=y_prev, previous_state=s_prev[0],
        projected_state=(s_prev @ p["att.W"])[0], projected_sources=Uh[0],
        scores=(u @ p["att.v"])[0], weights=alpha[0], context=c[0],
        reset=rz[0, :d], update=rz[0, d:], candidate=n[0], state=s[0],
        logits=logits, probabilities=probs, token=int(np.argmax(logits)),
    )


def weight_by_offset(weights: np.ndarray, offsets=OFFSETS) -> np.ndarray:
    """Mean attention weight on source position s = t + k, for each offset k.

    weights (B, T, T) (output steps x source positions, as :class:`Decoding`) ->
    (len(offsets),): offset 0 is the symbol being copied, -1 the one before it. Each
    mean runs over the output steps where that position exists.
    """
    T = weights.shape[-1]
    return np.array([np.diagonal(weights, offset=k, axis1=1, axis2=2).mean()
                     if abs(k) < T else np.nan for k in offsets])


def accuracy_by_length(p: dict, model: str, lengths, n: int, seed: int):
    """Greedy token accuracy on ``n`` fresh strings at each length.

    Returns (accuracy (L,), position_accuracy (L, max length)): the fraction of right
    symbols at each length, and at each output position (NaN past the length). The
    strings come from ``seed`` alone, so two models given the same seed see the same ones
    (at short lengths most were also seen in training: there are only 12^n strings).
    """
    rng = np.random.default_rng([seed, 3])
    lengths = np.asarray(lengths)
    accuracy = np.empty(len(lengths))
    by_position = np.full((len(lengths), lengths.max()), np.nan)
    for i, length in enumerate(lengths):
        right = decode(p, make_strings(rng, n, int(length)), model).correct
        accuracy[i] = right.mean()
        by_position[i, :length] = right.mean(axis=0)
    return accuracy, by_position


# --- training -------------------------------------------------------------------------


def check_lengths(config: BottleneckConfig) -> np.ndarray:
    """Up to CHECK_LENGTHS lengths evenly spread from min_length to max_length (both in)."""
    spread = np.linspace(config.min_length, config.max_length, CHECK_LENGTHS)
    return np.unique(np.round(spread).astype(int))


def train_model(config: BottleneckConfig, model: str, progress=None) -> TrainingRun:
    """Train one of the two models (float32, Adam with a cosine decay, one BLAS thread).

    At each checkpoint it measures, on CHECK_STRINGS held-out strings at each of
    :func:`check_lengths`: accuracy = greedy token accuracy, loss = teacher-forced
    cross-entropy per symbol, score = greedy token accuracy at the longest trained length;
    the attention model also its weights on the example string (snapshot "alignment",
    T x T) and curve "aligned_weight", the mean weight α_tt on the symbol being copied.
    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}; got {model!r}")
    check_rng = np.random.default_rng([config.seed, 5])
    held_out = [make_strings(check_rng, CHECK_STRINGS, n) for n in check_lengths(config)]
    example = make_strings(np.random.default_rng([config.seed, 4]), 1, EXAMPLE_LENGTH)
    params = init_params(config.d_model, np.random.default_rng([config.seed, 2]), model)

    def loss_and_grads(p, rng, step):
        length = rng.integers(config.min_length, config.max_length + 1)
        return loss_and_gradients(p, make_strings(rng, config.batch, length), model)

    def measure(p):
        runs = [decode(p, src, model) for src in held_out]
        losses = []
        for src in held_out:
            logits, _ = forward(p, src, model)
            losses.append(cross_entropy_forward(logits.reshape(-1, SYMBOLS), src.ravel())[0])
        right = np.concatenate([run.correct.ravel() for run in runs])
        lengths = np.array([src.shape[1] for src in held_out])
        snapshots, extra = {}, {}
        if model == "attention":
            snapshots["alignment"] = decode(p, example, model).weights[0]
            diagonal = [run.weights.diagonal(axis1=1, axis2=2).ravel() for run in runs]
            extra["aligned_weight"] = float(np.concatenate(diagonal).mean())
        return Measure(
            accuracy=float(right.mean()),
            loss=float(np.average(losses, weights=lengths)),  # per symbol, as training
            score=runs[-1].accuracy,
            snapshots=snapshots,
            extra=extra,
        )

    return train(f"bottleneck ({model})", config.seed, config, params, loss_and_grads,
                 measure, {"example": example[0]}, steps=config.steps, lr=config.lr,
                 decay=True, checkpoints=config.checkpoints, progress=progress)


@dataclass(frozen=True)
class BottleneckResult:
    """Both models trained and tested (dicts are keyed by model name, MODELS).

    runs: each model's :class:`TrainingRun` (loss per step, checkpoint measures, trained
    params). lengths (L,) the tested lengths; accuracy[model] (L,) greedy token accuracy
    on n_test fresh strings per length; position_accuracy[model] (L, max length) the same
    per output position, NaN past each length; example[model] the :class:`Decoding` of one
    string of EXAMPLE_LENGTH symbols (the same string for both); offset_weights (5,) the
    attention model's :func:`weight_by_offset` at OFFSETS (-2..2) over n_test fresh
    strings of EXAMPLE_LENGTH symbols; parameters[model] the number of trained numbers;
    seconds the wall time of training both and testing.
    """

    config: BottleneckConfig
    runs: dict
    lengths: np.ndarray
    accuracy: dict
    position_accuracy: dict
    example: dict
    offset_weights: np.ndarray
    parameters: dict
    seconds: float
    chance: float = field(default=CHANCE)

    def summary(self) -> dict:
        """The figures the command line prints, as plain Python numbers."""
        c = self.config
        return {
            "task": "bottleneck",
            "seed": c.seed,
            "steps": c.steps,
            "d_model": c.d_model,
            "train_lengths": [c.min_length, c.max_length],
            "lengths": self.lengths.tolist(),
            "accuracy_attention": [round(float(a), 4) for a in self.accuracy["attention"]],
            "accuracy_fixed": [round(float(a), 4) for a in self.accuracy["fixed"]],
            "chance": round(self.chance, 4),
            "offsets": OFFSETS.tolist(),
            "offset_weights_attention": [round(float(w), 4) for w in self.offset_weights],
            "n_test": c.n_test,
            "parameters_fixed": self.parameters["fixed"],
            "parameters_attention": self.parameters["attention"],
            "seconds_fixed": round(self.runs["fixed"].seconds, 3),
            "seconds_attention": round(self.runs["attention"].seconds, 3),
            "seconds": round(self.seconds, 3),
        }


def train_bottleneck(config: BottleneckConfig = BottleneckConfig(),
                     progress=None) -> BottleneckResult:
    """Train the fixed model, then the attention model, on the same batches, and test both
    on the same fresh strings. ``progress(done, total)`` counts the steps of both models
    (total = 2 x steps; the fixed model's come first)."""
    start = time.perf_counter()
    limit = threadpool_limits(1) if threadpool_limits is not None else nullcontext()
    runs, accuracy, by_position, example, count = {}, {}, {}, {}, {}
    with limit:
        for i, model in enumerate(MODELS):
            report = None if progress is None else (
                lambda step, steps, i=i: progress(i * steps + step, len(MODELS) * steps))
            run = runs[model] = train_model(config, model, report)
            accuracy[model], by_position[model] = accuracy_by_length(
                run.params, model, config.test_lengths, config.n_test, config.seed)
            example[model] = decode(run.params, run.examples["example"], model)
            count[model] = count_parameters(config.d_model, model)
        strings = make_strings(np.random.default_rng([config.seed, 6]), config.n_test,
                               EXAMPLE_LENGTH)
        offsets = weight_by_offset(decode(runs["attention"].params, strings, "attention").weights)
    return BottleneckResult(config, runs, config.test_lengths, accuracy, by_position,
                            example, offsets, count, time.perf_counter() - start)


# --- benchmark ------------------------------------------------------------------------

BUDGET_SECONDS = 15.0  # both models at the defaults (SPEC §6)


def slowest_configs(seed: int = 0) -> list[BottleneckConfig]:
    """The slowest accepted settings: the most steps allowed at the widest d_model, for
    strings all MAX_LENGTH long and for the default range of lengths."""
    return [BottleneckConfig(seed=seed, d_model=MAX_D_MODEL, min_length=lo, max_length=hi,
                             steps=max_steps(MAX_D_MODEL, lo, hi))
            for lo, hi in ((MAX_LENGTH, MAX_LENGTH), (3, 16))]


def benchmark(seed: int = 0, slowest: bool = True) -> list[dict]:
    """Time :func:`train_bottleneck` at the defaults (and at :func:`slowest_configs`):
    ``python -c "from attncore.train.bottleneck import benchmark; benchmark()"``.

    Prints one line per run: wall and process (CPU) seconds of each model's training,
    of the test, of the whole call, and the ratio of the whole to its budget (15 s at the
    defaults, LIMIT_SECONDS at the slowest settings), with the load average, since the
    machine is shared. A script, not a test: timings depend on the machine and its load.
    """
    import os

    jobs = [("defaults", BottleneckConfig(seed=seed), BUDGET_SECONDS)]
    if slowest:
        jobs += [("slowest", config, LIMIT_SECONDS) for config in slowest_configs(seed)]
    figures = []
    for name, config, budget in jobs:
        load = os.getloadavg()[0]
        cpu = time.process_time()
        result = train_bottleneck(config)
        cpu = time.process_time() - cpu
        train_s = {m: result.runs[m].seconds for m in MODELS}
        test_s = result.seconds - sum(train_s.values())
        figures.append({"settings": name, "config": config, "seconds": result.seconds,
                        "cpu_seconds": cpu, "budget": budget, "seconds_test": test_s,
                        **{f"seconds_{m}": s for m, s in train_s.items()}, "load": load})
        print(f"{name:<9} d={config.d_model} lengths {config.min_length}-{config.max_length} "
              f"steps {config.steps}: fixed {train_s['fixed']:.2f} s "
              f"({config.steps / train_s['fixed']:.0f} steps/s), attention "
              f"{train_s['attention']:.2f} s ({config.steps / train_s['attention']:.0f} "
              f"steps/s), test {test_s:.2f} s; total {result.seconds:.2f} s wall, "
              f"{cpu:.2f} s CPU = {result.seconds / budget:.2f} of {budget:.0f} s "
              f"(load average {load:.1f})", flush=True)
    return figures
