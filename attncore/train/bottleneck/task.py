"""Lesson 0's task: copy a random string of SYMBOLS symbols; the two models' names, the
lengths tested and the strings drawn."""

from __future__ import annotations

import numpy as np

SYMBOLS = 12  # a string's symbols are the ids 0..11
BOS = SYMBOLS  # id 12: the decoder's first input, never a target
CHANCE = 1 / SYMBOLS  # symbols are uniform and independent: no model can beat this blind
MODELS = ("fixed", "attention")
EXAMPLE_LENGTH = 12  # the string whose alignment the lesson shows (12 x 12 keeps numbers in cells)
SHORTEST_TESTED, LONGEST_TESTED = 2, 20  # tested lengths: 2..20, or to max_length + 4 if longer
OFFSETS = np.arange(-2, 3)  # source position minus output position, for weight_by_offset
CHECK_STRINGS = 32  # held-out strings per length measured at each checkpoint
CHECK_LENGTHS = 4  # lengths measured at each checkpoint, spread over the trained range


def make_strings(rng: np.random.Generator, n: int, length: int) -> np.ndarray:
    """(n, length) symbols, each uniform over 0..SYMBOLS-1 and independent."""
    return rng.integers(0, SYMBOLS, (n, length))


def example_string(seed: int) -> np.ndarray:
    """The string of EXAMPLE_LENGTH symbols whose copying the lesson shows at ``seed``:
    drawn from the seed alone, so it is known before the models are trained."""
    return make_strings(np.random.default_rng([seed, 4]), 1, EXAMPLE_LENGTH)[0]


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
