"""attncore: the NumPy core of Attention Lab.

Pure functions and frozen dataclasses; NumPy only (never streamlit, plotly or
pandas). Shape letters everywhere: ``B`` batch, ``H`` heads, ``Tq``/``Tk`` query
and key lengths, ``d_model``, ``d_k = d_v = d_model / H``.
"""

from .attention import AttentionTrace, resolve_scale, scaled_dot_product_attention
from .masks import causal_mask, combine_masks, padding_mask, window_mask
from .scores import additive_scores, dot_scores, general_scores, scaled_dot_scores
from .softmax import SoftmaxSteps, fully_masked_rows, softmax, softmax_jacobian, softmax_steps

__all__ = [
    "AttentionTrace",
    "SoftmaxSteps",
    "additive_scores",
    "causal_mask",
    "combine_masks",
    "dot_scores",
    "fully_masked_rows",
    "general_scores",
    "padding_mask",
    "resolve_scale",
    "scaled_dot_product_attention",
    "scaled_dot_scores",
    "softmax",
    "softmax_jacobian",
    "softmax_steps",
    "window_mask",
]
