"""Results of long deterministic computations, kept on disk beside the weight cache.

A lesson whose defaults need seconds of work (lesson 0 trains two models) computes that
result once per machine: every server process, every restart and every later visit reads
it from disk. A result is filed under its settings and the version of the code that
computes it, so that a change to either computes it again; it is still computed on the
machine, never shipped. Pickled: the folder is the machine's own cache, written only by
this code.

The version is derived, never listed by hand: :func:`module_version` is the sha256 of the
source of the module that computes the result and of every ``attncore`` module it imports,
directly or through others, as its import statements say (read with :mod:`ast`, nothing is
imported). :data:`RESULTS` names every kept result and its module, so that the versions
are known without computing anything::

    python -m attncore.results_cache versions   # {name: current version}, one JSON object
    python -m attncore.results_cache list       # the kept folders on disk, one JSON a line
"""

from __future__ import annotations

import argparse
import ast
import functools
import hashlib
import json
import os
import pickle
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TypeVar

from .weight_cache import cache_root, read_meta, read_or_build

T = TypeVar("T")
RESULT = "result.pickle"
META = "meta.json"

#: Where the kept results go: $ATTNLAB_RESULTS_DIR, else ``results`` in the weight cache's
#: folder. The tests set it to a folder of their own, and still read the converted models.
RESULTS_ENV = "ATTNLAB_RESULTS_DIR"

#: The package whose modules a version reads, and the folder that holds it.
PACKAGE = Path(__file__).resolve().parent.name
SOURCE_ROOT = Path(__file__).resolve().parents[1]

#: Every kept result: its name and the module whose code computes it. The page or module
#: that keeps it names the same module (:func:`kept` checks), and a name not listed here
#: cannot be kept.
RESULTS: dict[str, str] = {
    "lesson0-bottleneck": "attncore.train.bottleneck",
    "lesson6-trained-alignments": "attncore.train.alignment",
    "lesson8-sentiment": "attncore.train.sentiment",
    "lesson8-alignment": "attncore.train.alignment",
    "lesson8-induction": "attncore.train.induction",
    "lesson8-collapse": "attncore.train.collapse",
    "lm-induction": "attncore.lm.heads",
    "lm-window": "attncore.lm.inference",
    "lm-merged-kv": "attncore.lm.inference",
    "lesson12-study": "attncore.lm.answer",
    "lesson13-recall": "attncore.train.recall",
}


# --- The version of a module: its source and that of everything it imports -------------

def _module_path(name: str, root: Path) -> Path | None:
    """The file of module ``name`` under ``root``: a package's ``__init__.py``, else
    ``<name>.py``; None if there is neither."""
    base = root.joinpath(*name.split("."))
    for path in (base / "__init__.py", base.parent / f"{base.name}.py"):
        if path.is_file():
            return path
    return None


# CPython 3.11's ast.parse is not safe in two threads at once (it can raise "SystemError:
# AST constructor recursion depth mismatch"), and a server's sessions are threads.
_PARSING = threading.Lock()


@functools.lru_cache(maxsize=1024)
def _parsed(path: str, stamp: tuple[int, ...]) -> tuple[bytes, tuple]:
    """The sha256 of a source file and its import statements, each as (level, module,
    names); read again whenever the file changes (any write changes its ``stamp``)."""
    source = Path(path).read_bytes()
    found = []
    with _PARSING:
        tree = ast.parse(source, filename=path)
    for node in ast.walk(tree):  # imports in functions too
        if isinstance(node, ast.Import):
            found += [(0, alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.level, node.module or "", tuple(a.name for a in node.names)))
    return hashlib.sha256(source).digest(), tuple(found)


def _read(path: Path) -> tuple[bytes, tuple]:
    stat = path.stat()
    return _parsed(str(path), (stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size))


def _imported(name: str, is_package: bool, statement: tuple,
              path_of: Callable[[str], Path | None]) -> list[str]:
    """The ``attncore`` modules one import statement of module ``name`` runs: ``import
    a.b``, ``from a import b`` (``a.b`` if it is a module, else ``a``, whose own imports
    then count), and relative imports (``from . import x``, ``from ..x import y``)."""
    level, module, names = statement
    if level:
        parts = (name if is_package else name.rpartition(".")[0]).split(".")
        if level > len(parts):
            return []  # above the top package: Python refuses it too
        base = ".".join(parts[:len(parts) - level + 1] + ([module] if module else []))
    else:
        base = module
    if base != PACKAGE and not base.startswith(f"{PACKAGE}."):
        return []
    if not names:
        return [base]
    return [f"{base}.{n}" if n != "*" and path_of(f"{base}.{n}") else base for n in names]


def module_files(module: str, root: Path | None = None) -> dict[str, Path]:
    """Every source file whose change may change what ``module`` computes, by module name
    in sorted order: the module, every ``attncore`` module it imports, transitively, and the
    ``__init__.py`` of each package above them (which runs first; its own imports count
    only where a module imports from the package itself).

    ``root`` is the folder holding the ``attncore`` package (this one's by default). Raises
    ValueError if ``module`` is not a module there.
    """
    root = SOURCE_ROOT if root is None else Path(root)
    path_of = functools.cache(functools.partial(_module_path, root=root))  # this call's
    if path_of(module) is None:
        raise ValueError(f"{module!r} is not a module under {root}")
    files: dict[str, Path] = {}
    followed: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        path = path_of(name)
        if name in followed or path is None:  # None: an import Python would refuse
            continue
        followed.add(name)
        files[name] = path
        parts = name.split(".")
        for i in range(1, len(parts)):
            package = ".".join(parts[:i])
            init = path_of(package)
            if init is not None:  # None: a namespace package, no file of its own
                files.setdefault(package, init)
        is_package = path.name == "__init__.py"
        for statement in _read(path)[1]:
            todo += _imported(name, is_package, statement, path_of)
    return dict(sorted(files.items()))


def module_version(module: str | ModuleType, root: Path | None = None) -> str:
    """The sha256 of the source of ``module`` (a module or its dotted name) and of every
    file :func:`module_files` finds for it, in a stable order: it changes when any of them
    changes, and only then."""
    digest = hashlib.sha256()
    for name, path in module_files(_module_name(module), root).items():
        digest.update(name.encode() + b"\0" + _read(path)[0])
    return digest.hexdigest()


def _module_name(module: str | ModuleType) -> str:
    return module if isinstance(module, str) else module.__name__


def result_version(name: str, module: str | ModuleType | None = None,
                   root: Path | None = None) -> str:
    """The current version of kept result ``name``: that of its module in
    :data:`RESULTS`. Raises ValueError if ``name`` is not listed there, or if ``module``
    is given and is not the listed one."""
    listed = RESULTS.get(name)
    if listed is None:
        raise ValueError(f"{name!r} is not a kept result: list it in "
                         f"attncore.results_cache.RESULTS with the module that computes it")
    if module is not None and _module_name(module) != listed:
        raise ValueError(f"kept result {name!r} is computed by {listed} (RESULTS), not by "
                         f"{_module_name(module)!r}: kept(name, settings, module, compute) "
                         f"takes the module that computes it")
    return module_version(listed, root)


def versions(root: Path | None = None) -> dict[str, str]:
    """Every kept result's name and current version, in :data:`RESULTS`' order."""
    return {name: result_version(name, root=root) for name in RESULTS}


# --- Keeping a result -----------------------------------------------------------------

def results_root() -> Path:
    """$ATTNLAB_RESULTS_DIR, else ``results`` in :func:`attncore.weight_cache.cache_root`."""
    if os.environ.get(RESULTS_ENV):
        return Path(os.environ[RESULTS_ENV])
    return cache_root() / "results"


def results_folder(name: str, settings: dict, version: str) -> Path:
    """Where the result of ``name`` at ``settings`` by code ``version`` is kept."""
    key = json.dumps({"settings": settings, "version": version}, sort_keys=True)
    return results_root() / f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def _expected(name: str, settings: dict, version: str) -> dict:
    return {"name": name, "settings": json.loads(json.dumps(settings)), "version": version}


def is_kept_as(name: str, settings: dict, version: str) -> bool:
    """Whether this machine has kept the result of ``name`` at ``settings`` by code
    ``version`` (:func:`kept_as` would read it, not compute it)."""
    folder = results_folder(name, settings, version)
    return (read_meta(folder, _expected(name, settings, version)) is not None
            and (folder / RESULT).is_file())


def kept_as(name: str, settings: dict, version: str, compute: Callable[[], T]) -> T:
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


def kept(name: str, settings: dict, module: str | ModuleType, compute: Callable[[], T]) -> T:
    """``compute()``, kept on disk under ``settings`` and the current version of
    ``module``, the module whose code computes it (:func:`module_version`): read when this
    machine computed it before with the same settings and code, else computed now.

    ``name`` must be listed in :data:`RESULTS` with ``module`` (ValueError otherwise).
    """
    return kept_as(name, settings, result_version(name, module), compute)


def is_kept(name: str, settings: dict, module: str | ModuleType) -> bool:
    """Whether :func:`kept` would read this result from disk rather than compute it."""
    return is_kept_as(name, settings, result_version(name, module))


# --- What is on disk ------------------------------------------------------------------

def on_disk(root: Path | None = None) -> list[dict]:
    """Each folder of :func:`results_root`, sorted: its name, settings and version as
    filed, whether that version is its result's current one, its size in bytes. A folder
    without a readable result (a build cut short) says ``"complete": false``."""
    folder = results_root()
    current = versions(root)
    found = []
    for path in sorted(folder.iterdir()) if folder.is_dir() else ():
        if not path.is_dir() or ".part-" in path.name:  # a build under way, or killed
            continue
        size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
        meta = read_meta(path, {})
        entry = {"folder": path.name, "bytes": size}
        if meta is None or not (path / RESULT).is_file():
            found.append({**entry, "complete": False, "current": False})
            continue
        name = meta.get("name")
        found.append({"name": name, "settings": meta.get("settings"),
                      "version": meta.get("version"),
                      "current": current.get(name) == meta.get("version"),
                      "complete": True, **entry})
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m attncore.results_cache",
        description="The results kept on disk: their code's current versions, and what "
                    f"this machine keeps (${RESULTS_ENV}, else the weight cache's results "
                    "folder).")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("versions", help="one JSON object: each kept result's name and "
                                         "its code's current version")
    commands.add_parser("list", help="one JSON object a line: each kept folder's name, "
                                     "settings, version and whether it is current")
    args = parser.parse_args(argv)
    if args.command == "versions":
        print(json.dumps(versions(), indent=1))
        return 0
    entries = on_disk()
    print(f"{len(entries)} kept folder(s) in {results_root()}", file=sys.stderr)
    for entry in entries:
        print(json.dumps(entry, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
