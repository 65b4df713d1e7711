r"""Positional encodings.

Sinusoidal (Vaswani et al., 2017):

.. math:: PE_{p, 2i} = \sin\!\left(\frac{p}{b^{2i/d_{model}}}\right), \qquad
          PE_{p, 2i+1} = \cos\!\left(\frac{p}{b^{2i/d_{model}}}\right)

with base b = 10000 by default. Pair i is a point on the unit circle turning at
angular speed :math:`\omega_i = b^{-2i/d_{model}}` (wavelength :math:`2\pi/\omega_i`).
"""

from __future__ import annotations

import numbers

import numpy as np

from ._checks import positive_number


def _whole(value, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be a whole number; got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must lie in {low}..{high}; got {value}")
    return int(value)


def frequencies(d_model: int, base: float = 10000.0) -> np.ndarray:
    """Angular speeds ω_i = base^(-2i/d_model) of the d_model/2 sin/cos pairs."""
    d_model = _whole(d_model, "d_model", 2, 8192)
    if d_model % 2:
        raise ValueError(
            f"d_model must be even for sinusoidal encodings (sin/cos pairs); got {d_model}"
        )
    base = positive_number(base, "base")
    if base <= 1:
        raise ValueError(f"base must be > 1; got {base}")
    return base ** (-np.arange(0, d_model, 2) / d_model)  # (d_model/2,)


def wavelengths(d_model: int, base: float = 10000.0) -> np.ndarray:
    """Wavelength 2π/ω_i of each pair, in positions: from 2π up to 2π·base."""
    return 2 * np.pi / frequencies(d_model, base)


def sinusoidal(max_len: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """The sinusoidal encoding table.

    Returns
    -------
    ndarray (max_len, d_model)
        Row p is PE(p); even columns are sines, odd columns cosines; every value
        lies in [-1, 1]; PE(0) alternates 0 and 1.
    """
    max_len = _whole(max_len, "max_len", 1, 100_000)
    omega = frequencies(d_model, base)
    angles = np.arange(max_len)[:, None] * omega[None, :]  # (T, d_model/2)
    pe = np.empty((max_len, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe
