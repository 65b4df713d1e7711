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

      e_{tj} = v^\top \tanh(W s_{t-1} + U h_j), \quad
      \alpha_t = \mathrm{softmax}(e_t), \quad
      c_t = \textstyle\sum_j \alpha_{tj} h_j

The two share everything else:

.. math::

    h_j = \mathrm{GRU}(E_x[x_j], h_{j-1}), \quad h_0 = 0; \qquad
    s_t = \mathrm{GRU}([E_y[y_{t-1}]; c_t], s_{t-1}), \quad s_0 = h_n; \qquad
    p(y_t) = \mathrm{softmax}(W_o [s_t; c_t] + b_o)

so they differ only in :math:`c_t`; the attention model has :math:`W, U` (d, d) and
:math:`v` (d,) more (:func:`count_parameters`). The decoder's first input
:math:`y_0` is ``BOS`` (id 12, never in a string and never predicted); in training it
then reads the correct previous symbol (teacher forcing), in testing its own previous
output (greedy decoding). No end mark: the decoder runs as many steps as the string is
long, so accuracy counts symbols only. The encoder is one GRU reading left to right
(Bahdanau's was bidirectional), so :math:`h_j` mixes every symbol up to ``j`` and the
weights need not fall on the aligned position alone: trained, they spread over it and
its neighbours (:func:`weight_by_offset` measures how), though only h_t and later states
have read symbol t (:func:`earlier_states` measures what the weight before it is for).

Code convention: vectors are rows, so :math:`W s` is written ``s @ W`` with ``W`` (d, A).
Each mini-batch has one length drawn uniformly from the training range, so no padding
is needed. Training runs in float32 on one BLAS thread; the gradient checks in the tests
run the same functions in float64.

The modules, one idea each: ``task`` (the symbols, the models' names, the strings drawn),
``settings`` (the caps and the time estimate, :class:`BottleneckConfig`), ``network`` (the
parameters and the forward pass), ``backward`` (the gradients), ``decoding`` (greedy
decoding, one step of it taken apart, accuracy against length) and ``training``
(:func:`train_bottleneck`).
"""

from .backward import backward, loss_and_gradients, symbol_counts
from .decoding import (
    Decoding,
    DecodingStep,
    EarlierStates,
    accuracy_by_length,
    decode,
    earlier_states,
    trace_step,
    weight_by_offset,
)
from .network import (
    additive_step_backward,
    additive_step_forward,
    count_parameters,
    decoder_inputs,
    encode,
    forward,
    init_params,
)
from .settings import (
    ESTIMATE_LIMIT,
    LIMIT_SECONDS,
    MAX_BATCH,
    MAX_D_MODEL,
    MAX_LENGTH,
    MAX_STEPS,
    MAX_TEST,
    STEP_MS,
    BottleneckConfig,
    estimated_seconds,
    max_steps,
    step_ms,
)
from .task import (
    BOS,
    CHANCE,
    CHECK_LENGTHS,
    CHECK_STRINGS,
    EXAMPLE_LENGTH,
    LONGEST_TESTED,
    MODELS,
    OFFSETS,
    SHORTEST_TESTED,
    SYMBOLS,
    as_strings,
    example_string,
    make_strings,
)
from .training import BottleneckResult, check_lengths, train_bottleneck, train_model

__all__ = [
    "BOS", "CHANCE", "CHECK_LENGTHS", "CHECK_STRINGS", "ESTIMATE_LIMIT", "EXAMPLE_LENGTH",
    "LIMIT_SECONDS", "LONGEST_TESTED", "MAX_BATCH", "MAX_D_MODEL", "MAX_LENGTH", "MAX_STEPS",
    "MAX_TEST", "MODELS", "OFFSETS", "SHORTEST_TESTED", "STEP_MS", "SYMBOLS",
    "BottleneckConfig", "BottleneckResult", "Decoding", "DecodingStep", "EarlierStates",
    "accuracy_by_length", "additive_step_backward", "additive_step_forward", "as_strings",
    "backward", "check_lengths", "count_parameters", "decode", "decoder_inputs",
    "earlier_states", "encode",
    "estimated_seconds", "example_string", "forward", "init_params", "loss_and_gradients",
    "make_strings", "max_steps", "step_ms", "symbol_counts", "trace_step", "train_bottleneck",
    "train_model", "weight_by_offset",
]
