"""Input checks shared by the core: every bad input becomes a ValueError that names it."""

from __future__ import annotations

import numbers

import numpy as np


def as_real_array(x, name: str, *, min_ndim: int = 0) -> np.ndarray:
    """Return ``x`` as a finite float64 array, or raise ValueError naming ``name``.

    Parameters
    ----------
    x : array_like
        Anything ``np.asarray`` accepts.
    name : str
        The argument's name, quoted in the error message.
    min_ndim : int
        The least number of dimensions accepted (2 for a matrix).
    """
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must hold numbers only; got {_describe(x)}") from exc
    if arr.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimensions; got shape {arr.shape}"
        )
    if arr.size == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}); it needs at least one value")
    if not np.all(np.isfinite(arr)):
        bad = "NaN" if np.isnan(arr).any() else "an infinite value"
        raise ValueError(f"{name} contains {bad}; every entry must be a finite number")
    return arr


def as_bool_mask(mask, name: str = "mask") -> np.ndarray:
    """Return ``mask`` as a boolean array (True means "may attend")."""
    arr = np.asarray(mask)
    if arr.dtype != np.bool_:
        raise ValueError(
            f"{name} must be boolean (True = may attend); got dtype {arr.dtype}"
        )
    return arr


def positive_number(value, name: str) -> float:
    """Return ``value`` as a float that is finite and > 0, or raise ValueError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a positive number; got {value!r}")
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0; got {value!r}")
    return value


def whole_number(value, name: str, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as an int in ``low..high`` (either end may be open), or raise
    ValueError naming ``name``.

    Accepts Python and NumPy integers; refuses bools, floats (even 3.0) and strings, so a
    slider that sends the wrong type is caught rather than silently rounded.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be a whole number; got {_describe(value)}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        span = f"{'-inf' if low is None else low}..{'inf' if high is None else high}"
        raise ValueError(f"{name} must lie in {span}; got {value}")
    return value


def require_finite(arr: np.ndarray, what: str) -> np.ndarray:
    """Raise ValueError if a computed array overflowed (inf) or went NaN."""
    if not np.all(np.isfinite(arr)):
        raise ValueError(
            f"{what} overflowed float64 (largest finite value is about 1.8e308); "
            "use smaller input values"
        )
    return arr


def _describe(x) -> str:
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."
