"""Results of long deterministic computations, kept on disk beside the weight cache.

A lesson whose defaults need seconds of work (lesson 0 trains two models) computes that
result once per machine: every server process, every restart and every test run after
the first reads it from disk. A result is filed under its settings and a version of the
code that computes it (the sha256 of that code's source files), so that a change to
either computes it again; it is still computed on the machine, never shipped. Pickled:
the folder is the user's own cache (:func:`attncore.weight_cache.cache_root`), written
only by this code.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TypeVar

from .weight_cache import cache_root, read_meta, read_or_build

T = TypeVar("T")
RESULT = "result.pickle"
META = "meta.json"


def code_version(*modules: ModuleType) -> str:
    """The sha256 of the source files of ``modules``, in the order given: it changes when
    any of them changes."""
    digest = hashlib.sha256()
    for module in modules:
        digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()


def results_folder(name: str, settings: dict, version: str) -> Path:
    """Where the result of ``name`` at ``settings`` by code ``version`` is kept."""
    key = json.dumps({"settings": settings, "version": version}, sort_keys=True)
    return cache_root() / "results" / f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def _expected(name: str, settings: dict, version: str) -> dict:
    return {"name": name, "settings": json.loads(json.dumps(settings)), "version": version}


def is_kept(name: str, settings: dict, version: str) -> bool:
    """Whether this machine has kept the result of ``name`` at ``settings`` by code
    ``version`` (:func:`kept` would read it, not compute it)."""
    folder = results_folder(name, settings, version)
    return (read_meta(folder, _expected(name, settings, version)) is not None
            and (folder / RESULT).is_file())


def kept(name: str, settings: dict, version: str, compute: Callable[[], T]) -> T:
    """``compute()``, read from disk when this machine computed it before for the same
    ``settings`` and code ``version``; otherwise computed now and kept. One process of the
    machine computes it at a time; the others wait and read it."""
    folder = results_folder(name, settings, version)
    expected = _expected(name, settings, version)

    def read(path: Path):
        if read_meta(path, expected) is None:
            return None
        try:
            with open(path / RESULT, "rb") as f:
                return (pickle.load(f),)  # a tuple: a result of None is still found
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            return None

    def build(path: Path) -> None:
        result = compute()
        with open(path / RESULT, "wb") as f:
            pickle.dump(result, f, protocol=pickle.HIGHEST_PROTOCOL)
        (path / META).write_text(json.dumps(expected, indent=1), encoding="utf-8")

    found, _ = read_or_build(folder, read, build)
    if found is None:  # written but unreadable (a full disk): the result all the same
        return compute()
    return found[0]
