"""Seeded random weights: the one initialisation the core and the lessons use.

Entries are independent N(0, 1/fan_in), so that a product with a vector of fan_in
unit-variance entries keeps unit variance: x W neither blows up nor fades away.
"""

from __future__ import annotations

import numpy as np

from ._checks import whole_number


def normal_weights(rng: np.random.Generator, shape: tuple[int, ...],
                   fan_in: int | None = None) -> np.ndarray:
    """An array of ``shape`` with entries N(0, 1/fan_in).

    Parameters
    ----------
    rng : numpy.random.Generator
    shape : tuple of int
        For a weight used as ``x @ W``, (d_in, d_out); for a vector, (d,).
    fan_in : int, optional
        The number of inputs each output sums over; ``shape[0]`` by default, which is
        right for ``x @ W``. A matrix used as ``W @ x`` sums over ``shape[-1]``.

    Examples
    --------
    >>> w = normal_weights(np.random.default_rng(0), (4, 3))
    >>> w.shape
    (4, 3)
    """
    shape = tuple(whole_number(n, "shape", 1) for n in shape)
    fan_in = shape[0] if fan_in is None else whole_number(fan_in, "fan_in", 1)
    return rng.standard_normal(shape) / np.sqrt(fan_in)
