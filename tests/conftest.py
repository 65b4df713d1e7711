"""Every tier's tests keep long results (attncore.results_cache) in a folder of their run's.

A kept result is read from disk when the machine kept it before: a test reading the
developer's own results folder would see what an older run or a server computed, not what
the code under test computes, and would leave its own results there. Each run of the
suite makes an empty folder, points $ATTNLAB_RESULTS_DIR at it (pytest-xdist's workers and
the servers the tests start inherit it) and removes it at the end. The models' converted
weights still come from the machine's weight cache: converting them takes seconds.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from attncore.results_cache import RESULTS_ENV

_FOLDER = pytest.StashKey[tuple[str, str | None]]()


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get(RESULTS_ENV):
        return  # a worker: its controller made the folder, and removes it
    folder = tempfile.mkdtemp(prefix="attnlab-results-")
    config.stash[_FOLDER] = (folder, os.environ.get(RESULTS_ENV))
    os.environ[RESULTS_ENV] = folder


def pytest_unconfigure(config: pytest.Config) -> None:
    if _FOLDER not in config.stash:
        return
    folder, before = config.stash[_FOLDER]
    if before is None:
        os.environ.pop(RESULTS_ENV, None)
    else:
        os.environ[RESULTS_ENV] = before
    shutil.rmtree(folder, ignore_errors=True)
