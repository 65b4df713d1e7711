"""Long results kept on disk: computed once per machine, settings and code version."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attncore import results_cache
from attncore.results_cache import code_version, kept


def test_a_result_is_computed_once_and_read_after(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNLAB_CACHE_DIR", str(tmp_path))
    calls = []

    def compute():
        calls.append(1)
        return {"weights": np.arange(3.0)}

    assert not results_cache.is_kept("demo", {"seed": 0}, "v1")
    first = kept("demo", {"seed": 0}, "v1", compute)
    assert results_cache.is_kept("demo", {"seed": 0}, "v1")
    assert not results_cache.is_kept("demo", {"seed": 0}, "v2")
    again = kept("demo", {"seed": 0}, "v1", compute)
    assert len(calls) == 1 and np.array_equal(again["weights"], first["weights"])
    # Other settings, or another version of the code, compute again.
    kept("demo", {"seed": 1}, "v1", compute)
    kept("demo", {"seed": 0}, "v2", compute)
    assert len(calls) == 3


def test_a_result_of_none_is_kept_too(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNLAB_CACHE_DIR", str(tmp_path))
    calls = []
    for _ in range(2):
        assert kept("nothing", {}, "v1", lambda: calls.append(1)) is None
    assert len(calls) == 1


def test_a_damaged_file_is_computed_again(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNLAB_CACHE_DIR", str(tmp_path))
    kept("demo", {"seed": 0}, "v1", lambda: 1)
    folder = results_cache.results_folder("demo", {"seed": 0}, "v1")
    (folder / results_cache.RESULT).write_bytes(b"not a pickle")
    assert kept("demo", {"seed": 0}, "v1", lambda: 2) == 2


def test_the_code_version_follows_the_source():
    assert code_version(results_cache) == code_version(results_cache)
    assert code_version(results_cache) != code_version(results_cache, np)
    assert len(code_version(results_cache)) == 64


def test_the_training_code_version_reads_every_training_module():
    # a module added to attncore/train that trains or scores a model must be listed, or
    # a change to it would leave lessons 0, 6 and 8 reading stale kept trainings
    from attncore.train import kept as train_kept

    folder = Path(train_kept.__file__).parent
    found = {p.stem for p in folder.glob("*.py")} - {"__init__", "__main__", "bench", "kept"}
    assert set(train_kept.MODULES) == found
    assert len(train_kept.train_code_version()) == 64
