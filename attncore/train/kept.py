"""The version of the training code that results kept on disk are filed under.

Lessons 0, 6 and 8 keep their trainings at the pages' defaults on disk
(:mod:`attncore.results_cache`). Each is filed under this version, the sha256 of the source
of every module that trains a model or decides its numbers, so that a change to any of
them trains again.
"""

from __future__ import annotations

import functools
import importlib

from ..results_cache import code_version

#: The modules whose source decides a training's numbers.
MODULES = ("layers", "optim", "run", "attention", "gru", "sentiment", "alignment",
           "induction", "collapse", "bottleneck")


@functools.cache
def train_code_version() -> str:
    return code_version(*(importlib.import_module(f"{__package__}.{name}")
                          for name in MODULES))
