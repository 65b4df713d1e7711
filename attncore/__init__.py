"""attncore: the NumPy core of Attention Lab.

Pure functions and frozen dataclasses; NumPy only (never streamlit, plotly or
pandas). Shape letters everywhere: ``B`` batch, ``H`` heads, ``Tq``/``Tk`` query
and key lengths, ``d_model``, ``d_k = d_v = d_model / H``.

One module per idea: ``softmax`` (the one softmax policy), ``scores``, ``attention``,
``masks``, ``pitfalls`` (lesson 3's masking mistakes, computed), ``multihead``,
``positional``, ``analysis`` (statistics of weights), ``seq2seq`` (lesson 6: the
alignment, then the decoding step), ``text``, ``init`` (the
one random initialisation), ``exercise`` (checking a student's hand calculation, and what
a changed key does to it), ``measure`` (timing and memory on one BLAS thread), ``copying``
(lesson 0's readings of its two trained copying models), and the
lessons' experiments ``scaling`` (lesson 2) and ``cost`` (lessons 7 and 11, a package of
one module per idea); the models that learn, in packages too: ``train`` (lessons 0, 6
and 8), ``encoder`` (lesson 9's pretrained encoder) and ``lm`` (lessons 10 to 12's
decoder). The package exports the attention function, the scores and the masks;
the softmax functions are imported from their module, ``attncore.softmax``, which the
package leaves unshadowed.
"""

from .attention import AttentionTrace, resolve_scale, scaled_dot_product_attention
from .masks import causal_mask, combine_masks, padding_mask, window_mask
from .scores import additive_scores, dot_scores, general_scores, scaled_dot_scores

__all__ = [
    "AttentionTrace",
    "additive_scores",
    "causal_mask",
    "combine_masks",
    "dot_scores",
    "general_scores",
    "padding_mask",
    "resolve_scale",
    "scaled_dot_product_attention",
    "scaled_dot_scores",
    "window_mask",
]
