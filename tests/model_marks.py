"""Where the model packages are (requirements-model.txt), and the marks for tests that need
them: such a test is skipped, saying how to install the package, only on a developer's
machine without it. Under CI (``CI`` set, as ``.ci/run`` sets it) a missing package is
never a skip: the test runs and fails, naming what is missing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from attncore._installed import INSTALL_COMMAND, package_file
from attncore.encoder import files as encoder_files
from attncore.lm import files as lm_files


def _needs(path: Path | None) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        path is None and not os.environ.get("CI"),
        reason=f"the model package is not installed ({INSTALL_COMMAND})")


#: lesson 9's encoder: the wheel's zip, or None
MINILM_ZIP = package_file(encoder_files.PACKAGE, encoder_files.DISTRIBUTION,
                          encoder_files.ZIP_NAME)
#: lessons 10 and 11's decoder: the GGUF, or None
SMOLLM_GGUF = package_file(lm_files.PACKAGE, lm_files.DISTRIBUTION, lm_files.GGUF_NAME)
needs_minilm = _needs(MINILM_ZIP)
needs_smollm = _needs(SMOLLM_GGUF)
