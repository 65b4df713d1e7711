"""Positional encodings, and lesson 5's test that attention needs them.

Two modules, one idea each:

* ``table``: the sinusoidal table (:func:`sinusoidal`, :func:`frequencies`,
  :func:`wavelengths`, :func:`offset_cosine`, :func:`shift_rotation`) and lesson 5's
  checks of it (:func:`sinusoidal_table`, :func:`table_sample`, :func:`shift_check`,
  :func:`offset_spread`, :func:`apparent_turn`), with :func:`permutation_test`;
* ``schemes``: the other schemes: a learned table, relative positions, RoPE and ALiBi.

The package exports every public name, so ``from attncore import positional as pos`` and
``pos.sinusoidal`` read as one place.
"""

from .schemes import (
    alibi_bias,
    alibi_slopes,
    geometric_ratio,
    learned_table,
    relative_positions,
    rope,
    rope_scores,
)
from .table import (
    PermutationTest,
    ShiftCheck,
    SinusoidalTable,
    TableSample,
    apparent_turn,
    frequencies,
    offset_cosine,
    offset_spread,
    permutation_test,
    shift_check,
    shift_rotation,
    sinusoidal,
    sinusoidal_table,
    table_sample,
    wavelengths,
)

__all__ = [
    "PermutationTest",
    "ShiftCheck",
    "SinusoidalTable",
    "TableSample",
    "alibi_bias",
    "alibi_slopes",
    "apparent_turn",
    "frequencies",
    "geometric_ratio",
    "learned_table",
    "offset_cosine",
    "offset_spread",
    "permutation_test",
    "relative_positions",
    "rope",
    "rope_scores",
    "shift_check",
    "shift_rotation",
    "sinusoidal",
    "sinusoidal_table",
    "table_sample",
    "wavelengths",
]
