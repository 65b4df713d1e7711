r"""One head of the encoder computed by hand: one query's score, weight and output.

:func:`worked_head` takes a trace of :func:`attncore.encoder.encode` and recomputes, for
query i and key j of one head, every step lesson 9 writes out:

.. math::

   s = q_i \cdot k_j, \qquad \tilde s = s / \sqrt{d_k}, \qquad
   w_{ij} = \frac{e^{\tilde s_j - m}}{\sum_{j'} e^{\tilde s_{j'} - m}}, \qquad
   o_i = \sum_j w_{ij} v_j,

with m the row's largest scaled score, all in float64, and says how far each result is
from the model's own: the weight, the head's output for the row, and the whole head's
weights recomputed by lesson 1's :func:`attncore.scaled_dot_product_attention`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import whole_number
from ..attention import scaled_dot_product_attention


def _frozen(x) -> np.ndarray:
    a = np.array(x, dtype=np.float64)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class WorkedHead:
    """Query ``query``'s row of one head, step by step (indices from 0; arrays read-only).

    Attributes
    ----------
    layer, head, query, key : int
        Where the worked cell is: the weight of key ``key`` in query ``query``'s row.
    d_model, n_heads, d_k : int
        The model's width, its heads per layer and each head's width (d_model / heads).
    root : float
        √d_k, what every score is divided by.
    q, k : (d_k,)
        The query's and the key's vectors; ``products`` (d_k,) is q_c k_c, summing to s.
    scores : (T,)
        The row's raw scores q · k_j' for every key j'; ``scaled`` (T,) is scores / √d_k.
    shift : float
        m, the row's largest scaled score, subtracted before e^x.
    exps : (T,)
        e^(s̃ − m) per key; ``total`` is their sum.
    weights : (T,)
        The row's weights, exps / total, recomputed here.
    model_weight : float
        The model's own weight of the cell.
    recomputed_difference : float
        The largest difference over the whole head between the model's weights and lesson
        1's attention function run on the head's q, k and v.
    output, model_output : (d_k,)
        The row's output o = Σ_j w_j v_j recomputed here, and the model's.
    """

    layer: int
    head: int
    query: int
    key: int
    d_model: int
    n_heads: int
    d_k: int
    root: float
    q: np.ndarray
    k: np.ndarray
    products: np.ndarray
    scores: np.ndarray
    scaled: np.ndarray
    shift: float
    exps: np.ndarray
    total: float
    weights: np.ndarray
    model_weight: float
    recomputed_difference: float
    output: np.ndarray
    model_output: np.ndarray

    @property
    def score(self) -> float:
        """s = q · k of the worked cell."""
        return float(self.scores[self.key])

    @property
    def scaled_score(self) -> float:
        return float(self.scaled[self.key])

    @property
    def exp(self) -> float:
        """e^(s̃ − m) of the worked cell."""
        return float(self.exps[self.key])

    @property
    def weight(self) -> float:
        """The cell's weight as recomputed here."""
        return float(self.weights[self.key])

    @property
    def weight_difference(self) -> float:
        """|recomputed weight − the model's|."""
        return abs(self.weight - self.model_weight)

    @property
    def output_difference(self) -> float:
        """The largest |recomputed output − the model's| over the row's d_k numbers."""
        return float(np.max(np.abs(self.output - self.model_output)))


def worked_head(trace, layer: int, head: int, query: int, key: int) -> WorkedHead:
    """Query ``query``'s row of head ``head`` in layer ``layer`` of ``trace``, step by step,
    with the weight of key ``key`` worked out (all indices from 0).

    Raises ValueError for an index outside the trace (a layer, head or token it lacks).
    """
    n_layers, n_heads, T = trace.attentions.shape[:3]
    layer = whole_number(layer, "layer", 0, n_layers - 1)
    head = whole_number(head, "head", 0, n_heads - 1)
    query = whole_number(query, "query", 0, T - 1)
    key = whole_number(key, "key", 0, T - 1)
    q, k, v = (np.asarray(a[layer, head], dtype=np.float64)
               for a in (trace.q, trace.k, trace.v))  # (T, d_k) each
    w = np.asarray(trace.attentions[layer, head], dtype=np.float64)  # (T, T)
    d_k = q.shape[-1]
    root = float(np.sqrt(d_k))
    scores = q[query] @ k.T  # (T,)
    scaled = scores / root
    shift = float(scaled.max())
    exps = np.exp(scaled - shift)
    total = float(exps.sum())
    weights = exps / total
    recomputed = scaled_dot_product_attention(q, k, v).weights
    return WorkedHead(
        layer=layer, head=head, query=query, key=key, d_model=int(trace.config.d_model),
        n_heads=int(n_heads), d_k=int(d_k), root=root, q=_frozen(q[query]),
        k=_frozen(k[key]), products=_frozen(q[query] * k[key]), scores=_frozen(scores),
        scaled=_frozen(scaled), shift=shift, exps=_frozen(exps), total=total,
        weights=_frozen(weights), model_weight=float(w[query, key]),
        recomputed_difference=float(np.max(np.abs(recomputed - w))),
        output=_frozen(weights @ v),
        model_output=_frozen(trace.head_outputs[layer, head, query]))
