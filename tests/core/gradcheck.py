"""The finite-difference gradient check shared by the training tests (lessons 0 and 8).

A scalar loss L = sum(out * R) with a fixed random R gives dL/dout = R; each analytic
gradient is compared with (L(θ + h) - L(θ - h)) / 2h, in float64, by the relative error
||num - ana|| / (||num|| + ||ana||), which must be at most TOL.
"""

from __future__ import annotations

import numpy as np

TOL = 1e-6


def numeric_grad(f, x, h=1e-6):
    """Central differences of the scalar f() with respect to every entry of x (in place)."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + h
        up = f()
        x[i] = old - h
        down = f()
        x[i] = old
        g[i] = (up - down) / (2 * h)
    return g


def rel_error(a, b):
    return np.linalg.norm(a - b) / max(np.linalg.norm(a) + np.linalg.norm(b), 1e-12)


def check(f, analytic: dict, arrays: dict):
    """Each array's analytic gradient against finite differences of ``f``."""
    for name, arr in arrays.items():
        err = rel_error(numeric_grad(f, arr), analytic[name])
        assert err <= TOL, f"{name}: relative error {err:.2e}"
