"""Where the model packages are (requirements-model.txt), and the marks for tests that need
them: such a test is skipped, saying how to install the package, only on a developer's
machine without it. Under CI (``CI`` set, as ``.ci/run`` sets it) a missing package is
never a skip: the test runs and fails, naming what is missing."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from attncore import pretrained_files
from attncore.lm import files as lm_files


def _found(locate: Callable[[], Path], missing: type[Exception]) -> Path | None:
    try:
        return locate()
    except missing:
        return None


def _needs(path: Path | None, install: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        path is None and not os.environ.get("CI"),
        reason=f"the model package is not installed ({install})")


#: lesson 9's encoder: the wheel's zip, or None
MINILM_ZIP = _found(pretrained_files.locate_model_zip, pretrained_files.ModelNotInstalledError)
#: lessons 10 and 11's decoder: the GGUF, or None
SMOLLM_GGUF = _found(lm_files.locate_gguf, lm_files.ModelNotInstalledError)
needs_minilm = _needs(MINILM_ZIP, pretrained_files.INSTALL_COMMAND)
needs_smollm = _needs(SMOLLM_GGUF, lm_files.INSTALL_COMMAND)
