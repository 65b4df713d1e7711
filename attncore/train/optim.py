r"""Adam and AdamW (Kingma & Ba 2015; Loshchilov & Hutter 2019) for a dict of arrays.

:math:`m \leftarrow \beta_1 m + (1-\beta_1) g`, :math:`v \leftarrow \beta_2 v + (1-\beta_2) g^2`,
:math:`\theta \leftarrow \theta - \eta\,(\hat m / (\sqrt{\hat v} + \epsilon) + \lambda\theta)`
with bias-corrected :math:`\hat m, \hat v`; :math:`\lambda = 0` is plain Adam, and
:math:`\lambda > 0` decays the weights directly (AdamW), not through the gradient.

The step updates the parameter arrays in place, as every optimiser does: the arrays
belong to the training loop that called it, and the loop hands out copies at the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class AdamState:
    """Moment estimates per parameter name and the step count (mutable, loop-owned)."""

    m: dict = field(default_factory=dict)
    v: dict = field(default_factory=dict)
    t: int = 0


def adam_step(
    params: dict,
    grads: dict,
    state: AdamState,
    lr: float,
    weight_decay: float = 0.0,
    betas: tuple[float, float] = (0.9, 0.98),
    eps: float = 1e-8,
) -> None:
    """One Adam(W) update of every array in ``params`` that has a gradient."""
    b1, b2 = betas
    state.t += 1
    c1, c2 = 1.0 - b1**state.t, 1.0 - b2**state.t
    for name, g in grads.items():
        m = state.m.setdefault(name, np.zeros_like(g))
        v = state.v.setdefault(name, np.zeros_like(g))
        m *= b1
        m += (1.0 - b1) * g
        v *= b2
        v += (1.0 - b2) * g * g
        theta = params[name]
        if weight_decay:
            theta -= lr * weight_decay * theta
        theta -= lr * (m / c1) / (np.sqrt(v / c2) + eps)
