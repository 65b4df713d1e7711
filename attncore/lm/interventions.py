"""What a pass of the decoder changes in the model: lessons 10 to 12's experiments, as one
frozen object handed to :func:`attncore.lm.decoder.forward`.

Every field is off by default, and ``Interventions()`` runs the model as it is. Lesson 10
switches heads off (``head_mask``); lesson 11 runs other weights (merged KV heads) and other
masks (a sliding window, attention sinks); lesson 12 starts a pass part-way with a changed
residual stream (``from_layer``, ``stream``), replaces chosen heads' outputs (``head_patch``)
and forbids chosen query-key pairs in chosen layers (``layer_masks``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .config import LMWeights


@dataclass(frozen=True, eq=False)
class Interventions:
    """The changes one pass makes to the model (none by default).

    Attributes
    ----------
    mask : (T, Tk) bool, optional
        Which keys each query may see, in every layer; the causal mask by default
        (Tk = cache + T).
    layer_masks : {layer: mask}, optional
        A mask for each layer named, instead of ``mask`` there: (T, Tk), or (..., 1, T, Tk)
        with one per sequence (attention knockout forbids chosen query-key pairs).
    head_mask : (L, H) of 0/1, optional
        Heads to switch off (0): their outputs are multiplied by 0 before W_O.
    weights : LMWeights, optional
        Other weights of the same shapes (lesson 11 merges the KV heads); the model's own
        by default.
    from_layer, stream : int and (..., T, d), optional
        Start at layer ``from_layer`` (0: the first) from the residual stream entering it
        (a recorded pass's ``hidden_states[from_layer]``): the layers before a
        switched-off head give the same numbers, so an ablation need not run them again.
        A ``cache`` then holds the earlier positions' keys and values for every layer;
        the pass keeps no cache and records nothing.
    head_patch : (chosen (..., H) bool, values (..., H, T, d_k)), optional
        Layer ``from_layer``'s chosen heads output ``values`` (before W_O) instead of their
        own: activation patching, which starts at the layer it changes.
    """

    mask: np.ndarray | None = None
    layer_masks: Mapping[int, np.ndarray] | None = None
    head_mask: np.ndarray | None = None
    weights: LMWeights | None = None
    from_layer: int = 0
    stream: np.ndarray | None = None
    head_patch: tuple[np.ndarray, np.ndarray] | None = None

