"""Masking by hand, and how it goes wrong (lesson 3's pitfalls).

Two modules, one idea each:

* ``by_hand``: the textbook's masked softmax in any float type
  (:func:`plain_masked_softmax`, :func:`stored_as`) and the mistaken readings of a mask
  (:func:`read_mask` and its :data:`CONVENTIONS`, :func:`blocked_triangle`,
  :func:`softmax_over_queries`);
* ``comparisons``: lesson 3's comparisons, each computed whole on one sentence's scores
  as a frozen result the page lays out (:func:`fully_masked_row`, :func:`inverted_mask`,
  :func:`off_by_one`, :func:`wrong_axis`, :func:`fills_by_type`, :func:`dropout_sums`,
  and :func:`random_self_attention`, the attention they start from).

The package exports every public name, so ``from attncore import pitfalls`` and
``pitfalls.fully_masked_row`` read as one place.
"""

from .by_hand import (
    CONVENTIONS,
    PlainSoftmax,
    blocked_triangle,
    plain_masked_softmax,
    read_mask,
    softmax_over_queries,
    stored_as,
)
from .comparisons import (
    FILLS_BY_TYPE,
    SUMS_TO_ONE,
    DropoutSums,
    FillInType,
    FillsByType,
    FullyMaskedRow,
    InvertedMask,
    OffByOne,
    RandomSelfAttention,
    WrongAxis,
    dropout_sums,
    fills_by_type,
    fully_masked_row,
    inverted_mask,
    off_by_one,
    random_self_attention,
    wrong_axis,
)

__all__ = [
    "CONVENTIONS",
    "FILLS_BY_TYPE",
    "SUMS_TO_ONE",
    "DropoutSums",
    "FillInType",
    "FillsByType",
    "FullyMaskedRow",
    "InvertedMask",
    "OffByOne",
    "PlainSoftmax",
    "RandomSelfAttention",
    "WrongAxis",
    "blocked_triangle",
    "dropout_sums",
    "fills_by_type",
    "fully_masked_row",
    "inverted_mask",
    "off_by_one",
    "plain_masked_softmax",
    "random_self_attention",
    "read_mask",
    "softmax_over_queries",
    "stored_as",
    "wrong_axis",
]
