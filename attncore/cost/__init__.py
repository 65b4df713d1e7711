"""What attention costs in time and memory, counted and measured here (lessons 7 and 11).

One module per idea, in the order lesson 7 meets them:

* ``lean``: :func:`lean_attention`, the memory-lean form (one (..., Tq, Tk) array alive at
  a time) that the timings run, equal to
  :func:`attncore.attention.scaled_dot_product_attention` up to rounding;
* ``counts``: multiply-adds of attention and of its projections, and the cap on the
  weights a measurement may hold (:data:`MAX_WEIGHT_ELEMENTS`);
* ``growth``: time and memory against n (:func:`measure_growth`), the growth exponent
  fitted on log-log axes and its verdict against n²;
* ``chunks``: the output a few query rows at a time, the same to rounding in less memory
  (:func:`chunk_experiment`);
* ``head_loop``: a Python loop over the heads against one vectorised call
  (:func:`loop_experiment`), and the textbook's loop;
* ``flash``: lesson 11's FlashAttention, the online softmax tile by tile
  (:func:`online_softmax_attention`), its slow-memory accesses counted and its memory
  measured (:func:`tiled_memory`).

Each experiment returns a frozen result. The package exports every public name, so
``from attncore import cost`` and ``cost.measure_growth`` read as one place.
"""

from .chunks import ChunkExperiment, chunk_experiment, chunked_attention
from .counts import (
    MAX_WEIGHT_ELEMENTS,
    MIB,
    attention_multiply_adds,
    check_cost_size,
    projection_multiply_adds,
)
from .flash import (
    OnlineSoftmaxTrace,
    TiledMemory,
    hbm_accesses_flash,
    hbm_accesses_standard,
    online_softmax_attention,
    tiled_memory,
)
from .growth import (
    EXPONENT_SPREAD_LIMIT,
    SQUARE_TOLERANCE,
    Growth,
    against_square,
    growth_exponent,
    local_exponents,
    measure_growth,
    shared_verdict,
)
from .head_loop import LoopExperiment, head_loop_attention, loop_experiment, textbook_attention
from .lean import lean_attention

__all__ = [
    "EXPONENT_SPREAD_LIMIT",
    "MAX_WEIGHT_ELEMENTS",
    "MIB",
    "SQUARE_TOLERANCE",
    "ChunkExperiment",
    "Growth",
    "LoopExperiment",
    "OnlineSoftmaxTrace",
    "TiledMemory",
    "against_square",
    "attention_multiply_adds",
    "check_cost_size",
    "chunk_experiment",
    "chunked_attention",
    "growth_exponent",
    "hbm_accesses_flash",
    "hbm_accesses_standard",
    "head_loop_attention",
    "lean_attention",
    "local_exponents",
    "loop_experiment",
    "measure_growth",
    "online_softmax_attention",
    "projection_multiply_adds",
    "shared_verdict",
    "textbook_attention",
    "tiled_memory",
]
