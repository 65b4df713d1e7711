"""The version of the model code that results kept on disk are filed under.

Lessons 10 to 12 keep deterministic results of their defaults on disk beside the weight
cache (:mod:`attncore.results_cache`): the induction test, the perplexities, the preset
pairs' patching. Each is filed under the model's sha256 and this version, the sha256 of
the source of every module that computes a model's numbers, so that a change to any of
them computes the results again.
"""

from __future__ import annotations

import functools
import importlib

from ..results_cache import code_version

#: The modules whose source decides a pass's numbers, or a kept result's.
MODULES = ("config", "decoder", "files", "gguf_files", "hf_files", "tokens", "generation",
           "heads", "inference", "pair", "patching", "lens", "answer")


@functools.cache
def lm_code_version() -> str:
    return code_version(*(importlib.import_module(f"{__package__}.{name}")
                          for name in MODULES))
