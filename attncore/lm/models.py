"""Which models a server offers: SmolLM2, and the models its operator lists.

The person running the server lists models, never a student: in the environment variable
``ATTNLAB_MODELS`` (``name = path`` entries separated by ``;`` or new lines) or in
``models.txt`` beside ``dashboard.py`` (one ``name = path`` a line, ``#`` for comments,
relative paths read from the file's folder). Each is a GGUF or a Hugging Face folder;
:func:`available_models` checks each (format, family, size) without reading its weights,
and :func:`model` loads one by name (:func:`attncore.lm.files.load_model`), once per
process.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from .._installed import ModelFilesError, ModelNotInstalledError
from .files import (
    GGUF_NAME,
    LanguageModel,
    check_size,
    load_model,
    locate_gguf,
    max_params,
    open_source,
    source_format,
)

#: The default model's name, as :func:`available_models` lists it.
DEFAULT_NAME = "SmolLM2-135M-Instruct"
MODELS_ENV = "ATTNLAB_MODELS"
MODELS_FILE = Path(__file__).resolve().parents[2] / "models.txt"  # beside dashboard.py


@dataclass(frozen=True)
class ModelEntry:
    """A model the server's operator listed: its name and path, and what a check without
    reading its weights found (``problem`` None when it can be loaded)."""

    name: str
    path: Path
    source_format: str = ""  # "gguf" or "hf"
    family: str = ""
    n_params: int = 0
    problem: str | None = None

    @property
    def usable(self) -> bool:
        return self.problem is None


def parse_listing(text: str, relative_to: Path) -> list[tuple[str, Path]]:
    """``name = path`` entries, one a line or separated by ``;``; ``#`` starts a comment; a
    bare path is named after its file or folder."""
    out = []
    for line in re.split(r"[;\n]", text):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, _, where = line.partition("=") if "=" in line else ("", "", line)
        where = Path(where.strip()).expanduser()
        path = where if where.is_absolute() else relative_to / where
        out.append((name.strip() or path.name, path))
    return out


def listed_models() -> list[tuple[str, Path]]:
    """The (name, path) of every model the operator listed: $ATTNLAB_MODELS first, then
    models.txt beside dashboard.py; a name listed twice keeps its first path."""
    entries = parse_listing(os.environ.get(MODELS_ENV, ""), Path.cwd())
    if MODELS_FILE.is_file():
        entries += parse_listing(MODELS_FILE.read_text(encoding="utf-8"), MODELS_FILE.parent)
    seen: dict[str, Path] = {}
    for name, path in entries:
        seen.setdefault(name, path)
    return list(seen.items())


_CHECKED: dict[tuple, ModelEntry] = {}


def check_entry(name: str, path: Path) -> ModelEntry:
    """What a model's files say, without reading its weights; remembered while the files'
    size and time stay the same."""
    try:
        stamp = tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns)
                      for p in ([path] if path.is_file() else sorted(path.iterdir())))
    except OSError as exc:
        return ModelEntry(name, path, problem=f"cannot read {path}: {exc.strerror or exc}")
    key = (name, str(path), stamp, max_params())
    if key not in _CHECKED:
        try:
            source = open_source(path)
        except ModelFilesError as exc:
            _CHECKED[key] = ModelEntry(name, path, problem=str(exc))
        else:
            entry = ModelEntry(name, path, source_format(source), source.config.family,
                               source.n_params)
            try:
                check_size(source.n_params, path)
            except ModelFilesError as exc:
                entry = replace(entry, problem=str(exc))
            _CHECKED[key] = entry
    return _CHECKED[key]


def available_models() -> list[ModelEntry]:
    """SmolLM2 (the default) first, then every model the operator listed, each checked
    (format, family, size): what a page's picker offers. An entry with a ``problem`` says
    why it cannot be loaded."""
    n = 134_515_008  # parameter_count of its config: checked by a test
    try:
        default = ModelEntry(DEFAULT_NAME, locate_gguf(), "gguf", "llama", n)
    except ModelNotInstalledError as exc:
        default = ModelEntry(DEFAULT_NAME, Path(GGUF_NAME), "gguf", "llama", n, str(exc))
    return [default, *(check_entry(name, path) for name, path in listed_models()
                       if name != DEFAULT_NAME)]


_LOADING = threading.Lock()
_MODELS: dict[str, LanguageModel] = {}


def model(name: str | None = None,
          progress: Callable[[float, str], None] | None = None) -> LanguageModel:
    """A model, loaded once per process: SmolLM2 by default, or the listed model ``name``
    (see :func:`available_models`); ``progress`` hears about a first load. A lock keeps two
    first visitors (Streamlit runs each session in its own thread) from converting it twice
    at once. ValueError for a name nobody listed, or a model that fails its checks."""
    key = name or DEFAULT_NAME
    with _LOADING:
        if key not in _MODELS:
            if key == DEFAULT_NAME:
                _MODELS[key] = load_model(progress=progress)
            else:
                listed = dict(listed_models())
                if key not in listed:
                    raise ValueError(f"no model named {key!r} is listed on this server; "
                                     f"listed: {', '.join([DEFAULT_NAME, *listed]) }")
                _MODELS[key] = load_model(listed[key], progress=progress)
        return _MODELS[key]


def model_is_loaded(name: str | None = None) -> bool:
    """Whether :func:`model` has already loaded this model (SmolLM2 by default) in this
    process."""
    return (name or DEFAULT_NAME) in _MODELS
