"""Lesson 4's sentences that depend on its layer, as plain functions of it.

Each is said with the layer's own numbers (T, d_model, H, d_k) and from its own checks
(a designed head's pattern, a head's slice of Q), so that the page never states what
this layer does not do.
"""

from __future__ import annotations

import numpy as np

from attncore import multihead as mh
from pages.ui.glossary import term_link
from pages.ui.numbers import difference_text, said_number


def sizes_text(T: int, params: mh.MultiHeadParams) -> str:
    """The layer's sizes, with d_k said to be a convention."""
    H = params.n_heads
    return (f"T = {T} tokens, {term_link('d_model', 'd_model')} = {params.d_model} (the width "
            f"of each token's vector), H = {H} head{'s' * (H > 1)}, "
            f"d_k = d_model / H = {params.d_k}: this implementation's choice, and the original "
            "Transformer's.")


def shapes_table(T: int, params: mh.MultiHeadParams, causal: bool) -> str:
    """Every step from X to the output, with its shape (a markdown table)."""
    d_model, H, d_k = params.d_model, params.n_heads, params.d_k
    return (
        f"| step | operation | shape |\n|---|---|---|\n"
        f"| input | X | ({T}, {d_model}) |\n"
        f"| project | Q = X W_Q, K = X W_K, V = X W_V | ({T}, {d_model}) each |\n"
        f"| split | reshape to heads | ({H}, {T}, {d_k}) each |\n"
        f"| attend | softmax(Qʰ Kʰᵀ / √{d_k}{' + causal mask' if causal else ''}) per head "
        f"| ({H}, {T}, {T}) weights |\n"
        f"| mix | weights · Vʰ | ({H}, {T}, {d_k}) head outputs |\n"
        f"| concatenate | heads side by side | ({T}, {H}·{d_k} = {H * d_k}) |\n"
        f"| output | concat · W_O | ({T}, {d_model}) |"
    )


def owned_text(part: mh.HeadSlice) -> str:
    """The columns a head owns: "column 3", "columns 9 to 16"."""
    return (f"column {part.first}" if part.first == part.last
            else f"columns {part.first} to {part.last}")


def slice_text(part: mh.HeadSlice) -> str:
    """Which columns of W_Q, W_K, W_V a head owns, and how far its queries computed from
    its own slice lie from its slice of Q."""
    d_model, d_k = part.w_q.shape
    return (f"Head {part.head + 1} owns {owned_text(part)} of W_Q, W_K and W_V: W_Qʰ, W_Kʰ, "
            f"W_Vʰ are ({d_model}, {d_k}) slices. Its queries X W_Qʰ are the head's slice of "
            "Q: the largest difference is "
            f"{difference_text(part.query_difference, rounding=True)}.")


def slice_alt(part: mh.HeadSlice, name: str) -> str:
    """The start of the text alternative of one slice's figure."""
    one = part.first == part.last
    return (f"{owned_text(part).capitalize()} of {name}, the {'one' if one else 'ones'} "
            f"head {part.head + 1} owns. ")


def designed_text(holds: bool) -> str:
    """The sentence above the designed heads' check: "is" only when every head passes."""
    return ("Each designed head's largest weight in each row "
            + ("is" if holds else "should be (✗ marks a head where it is not)")
            + " where its pattern says (for the previous-token head, from the second row on):")


def similarity_text(similarity: np.ndarray, heads: list[str]) -> str:
    """The text alternative of the heads' similarity map: its diagonal is 1 (each head with
    itself), so it names the most and least alike pairs of different heads."""
    text = "Cosine similarity between the heads' weight maps, 1 on the diagonal."
    if len(heads) < 2:
        return text
    i, j = np.triu_indices(len(heads), k=1)
    pairs = similarity[i, j]
    hi, lo = int(np.argmax(pairs)), int(np.argmin(pairs))
    return (f"{text} Most alike: {heads[i[hi]]} and {heads[j[hi]]}, "
            f"{said_number(pairs[hi])}; least alike: {heads[i[lo]]} and {heads[j[lo]]}, "
            f"{said_number(pairs[lo])}.")


def parameters_text(one: mh.MultiHeadParams, layer: mh.MultiHeadParams) -> str:
    """One head against the layer's H heads: the same matrices, the same parameters."""
    d_model = layer.d_model
    return (
        f"| | heads | d_k | W_Q, W_K, W_V, W_O | parameters |\n|---|---|---|---|---|\n"
        f"| one head | 1 | {one.d_k} | 4 × ({d_model} × {d_model}) | {one.n_parameters:,} |\n"
        f"| this layer | {layer.n_heads} | {layer.d_k} | 4 × ({d_model} × {d_model}) | "
        f"{layer.n_parameters:,} |\n\n"
        f"Both have 4·d_model² = 4 × {d_model}² = {4 * d_model ** 2:,} parameters (no biases "
        "here, and d_k = d_model / H): the heads split the same matrices instead of adding new "
        "ones. One head gives each query one set of weights over the keys; H heads give it H "
        "sets, each free to look somewhere else."
    )


def cross_text(n_target: int, n_source: int, heads: int, d_model: int) -> str:
    """What a cross-attention map is, with the pair's lengths and the layer's sizes."""
    return (f"Queries come from the target ({n_target} tokens), keys and values from the "
            f"source ({n_source} tokens): each head's map is {n_target} × {n_source}, one row "
            "per target token. Rows still sum to 1, over the source tokens. These are random "
            f"heads of a layer of their own (H = {heads}, d_model = {d_model}, "
            f"d_k = {d_model // heads}).")
