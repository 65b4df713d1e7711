r"""Lesson 13: attention with a fixed-size memory.

Softmax attention keeps every (key, value) pair it has seen (the KV cache grows with
every token); linear attention, the delta rule and gated delta keep one matrix
:math:`S` (d_v, d_k) instead, an RNN's state again, and read it with :math:`S q`:

* linear: :math:`S_t = S_{t-1} + v_t k_t^\top`;
* delta: :math:`S_t = S_{t-1} + \beta_t (v_t - S_{t-1} k_t) k_t^\top`;
* gated delta: :math:`S_t = \alpha_t S_{t-1} + \beta_t (v_t - \alpha_t S_{t-1} k_t) k_t^\top`.

The modules, one idea each: ``rules`` (the four rules, each returning every state, and
the crosstalk of a linear-attention read), ``chunked`` (causal linear attention step by
step and chunk by chunk, as it is trained), ``stored_pairs`` (recall against the number
of stored pairs; a key written twice), ``leak`` (what a linear read takes in from the
other pairs), ``by_hand`` (three pairs written and read, small enough to check by hand)
and ``hybrid`` (a KV cache against a fixed-size state; a released hybrid's memory from
its config). ``python -m attncore.memory --in FILE.npz --rule
RULE --out OUT.npz`` runs one rule on arrays from a file.
"""

from .chunked import ChunkedLinear, causal_linear_attention, chunked_linear_attention
from .rules import (
    RATES,
    RECURRENT_RULES,
    RULES,
    Crosstalk,
    MemoryTrace,
    SoftmaxMemory,
    check_pairs,
    check_rate,
    crosstalk,
    delta_memory,
    gated_delta_memory,
    linear_memory,
    rule_rates,
    softmax_memory,
    write_and_read,
)
from .stored_pairs import (
    PAIR_COUNTS,
    SEEDS,
    SOFTMAX_SCALE,
    RecallCurve,
    WriteTwice,
    random_pairs,
    recall_curve,
    write_twice,
)

__all__ = [
    "PAIR_COUNTS", "RATES", "RECURRENT_RULES", "RULES", "SEEDS", "SOFTMAX_SCALE", "ChunkedLinear",
    "Crosstalk", "MemoryTrace", "RecallCurve", "SoftmaxMemory", "WriteTwice",
    "causal_linear_attention", "check_pairs", "check_rate", "chunked_linear_attention",
    "crosstalk", "delta_memory", "gated_delta_memory", "linear_memory", "random_pairs",
    "recall_curve", "rule_rates", "softmax_memory", "write_and_read", "write_twice",
]
