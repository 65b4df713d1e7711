"""Model weights kept on disk as ``.npy`` files and memory-mapped read-only.

A model read from its download (a zip of safetensors, a quantised GGUF) and converted in
each server process lives in that process's private memory: N processes behind a load
balancer hold N copies. Written once to a folder of ``.npy`` files and memory-mapped
read-only, the same weights are pages of the operating system's file cache, and every
process that maps them shares one copy (their proportional set size, PSS, splits it).

A cache folder is named after what it was built from (a pinned sha256) and the layout of
its arrays (a format number), so that code of two formats sharing a cache never rebuilds
the other's folder. It holds a ``meta.json`` written last: a folder without it, or whose
meta disagrees with what the caller expects, is built again. The cache is never a second
source of truth.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import numpy as np

#: Where the caches go: $ATTNLAB_CACHE_DIR, else the user's cache folder.
CACHE_ENV = "ATTNLAB_CACHE_DIR"
META = "meta.json"

T = TypeVar("T")


def cache_root() -> Path:
    """$ATTNLAB_CACHE_DIR, else $XDG_CACHE_HOME/attention-lab, else ~/.cache/attention-lab."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "attention-lab"


def save(folder: Path, arrays: dict[str, np.ndarray], meta: dict) -> None:
    """Write each array as ``<name>.npy``, then ``meta.json`` (last: it marks the folder
    complete)."""
    for name, a in arrays.items():
        np.save(folder / f"{name}.npy", a)
    (folder / META).write_text(json.dumps(meta, indent=1), encoding="utf-8")


def read_meta(folder: Path, expected: dict) -> dict | None:
    """The folder's ``meta.json`` if it holds every ``expected`` key with that value;
    None if the file is missing, unreadable or says otherwise."""
    try:
        meta = json.loads((folder / META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or any(meta.get(k) != v for k, v in expected.items()):
        return None
    return meta


def open_arrays(folder: Path, shapes: dict[str, tuple[tuple[int, ...], np.dtype]]
                ) -> dict[str, np.ndarray] | None:
    """Every array named in ``shapes``, memory-mapped read-only; None if one is missing or
    has another shape or dtype.

    The arrays are plain read-only views of the maps (``np.asarray``): np.memmap's own
    indexing costs about a millisecond per generated token of lesson 10's model.
    """
    arrays = {}
    for name, (shape, dtype) in shapes.items():
        try:
            a = np.asarray(np.load(folder / f"{name}.npy", mmap_mode="r"))
        except (OSError, ValueError):
            return None
        if a.shape != tuple(shape) or a.dtype != dtype:
            return None
        arrays[name] = a
    return arrays


@contextlib.contextmanager
def _building(folder: Path) -> Iterator[None]:
    """One process of the machine builds ``folder`` at a time; the others wait for it
    (N server processes started together would otherwise each convert the model)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"{folder.name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def read_or_build(folder: Path, read: Callable[[Path], T | None],
                  build: Callable[[Path], None]) -> tuple[T | None, bool]:
    """``read(folder)``; if that gives None, ``build`` a new folder and read it.

    ``build(tmp)`` writes into an empty temporary folder beside ``folder``, which then
    replaces it; if ``build`` raises, an existing folder is left as it was. Returns what
    ``read`` gave (None if even the new folder could not be read) and whether it was built.
    """
    found = read(folder)
    if found is not None:
        return found, False
    with _building(folder):
        found = read(folder)  # another process may have built it while this one waited
        if found is not None:
            return found, False
        # Only the lock's holder builds: a part folder found now is left by a build that was
        # killed (a server stopped while it converted the model), hundreds of MB each.
        for left in folder.parent.glob(f"{folder.name}.part-*"):
            shutil.rmtree(left, ignore_errors=True)
        tmp = Path(tempfile.mkdtemp(prefix=f"{folder.name}.part-", dir=folder.parent))
        tmp.chmod(0o755)  # readable by every server process on the machine
        try:
            build(tmp)
            shutil.rmtree(folder, ignore_errors=True)  # stale or incomplete
            tmp.rename(folder)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return read(folder), True
