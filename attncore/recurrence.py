r"""Recurrence against self-attention, for one layer on a sequence of n tokens of width d
(lesson 0's table; Vaswani et al. 2017, table 1, counts the same three things).

* **Sequential steps**: a recurrent layer computes state t from state t − 1, so its n
  steps run one after the other; a self-attention layer computes every position at once
  (its matrix products have no order), one step.
* **Longest path** between two tokens: information from the first token reaches the last
  through n − 1 recurrent updates; in self-attention the last token reads the first
  directly, one step.
* **Multiply-adds per layer**: a GRU layer (input width d) makes, per token, three gate
  products of the input and three of the state, each d × d: :math:`6 n d^2`. A
  self-attention layer makes :math:`Q K^\top` and the weights times V,
  :math:`2 n^2 d`, and its four projections (Q, K, V, output), :math:`4 n d^2`
  (lesson 7). So the recurrent layer grows like :math:`n d^2` and attention's own part
  like :math:`n^2 d`: that part is below the GRU's while n < 3d, and with the projections
  added the whole attention layer is below it while n < d.
  (An RNN is sometimes said to cost :math:`O(n^3)`: it is :math:`O(n d^2)`.)
"""

from __future__ import annotations

from dataclasses import dataclass

from ._checks import whole_number
from .cost.counts import attention_multiply_adds, projection_multiply_adds


@dataclass(frozen=True)
class LayerComparison:
    """The three counts for one layer of each kind (see the module's docstring)."""

    n: int
    d: int
    rnn_steps: int
    attention_steps: int
    rnn_path: int
    attention_path: int
    gru_multiply_adds: int
    attention_multiply_adds: int  # Q Kᵀ and weights times V: 2·n²·d
    projection_multiply_adds: int  # Q, K, V and output projections: 4·n·d²


def compare_layers(n: int, d: int) -> LayerComparison:
    """Sequential steps, longest path and multiply-adds of a GRU layer and a
    self-attention layer on ``n`` tokens of width ``d``.

    >>> c = compare_layers(10, 32)
    >>> c.rnn_steps, c.attention_steps, c.rnn_path, c.attention_path
    (10, 1, 9, 1)
    >>> c.gru_multiply_adds, c.attention_multiply_adds, c.projection_multiply_adds
    (61440, 6400, 40960)
    """
    n = whole_number(n, "n", 1, 10**9)
    d = whole_number(d, "d", 1, 10**6)
    return LayerComparison(
        n=n, d=d, rnn_steps=n, attention_steps=1, rnn_path=n - 1, attention_path=min(1, n - 1),
        gru_multiply_adds=6 * n * d * d,
        attention_multiply_adds=attention_multiply_adds(n, heads=1, d_k=d),  # H·d_k = d
        projection_multiply_adds=projection_multiply_adds(n, d),
    )
