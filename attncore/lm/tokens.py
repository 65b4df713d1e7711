"""Text to token ids and back, for the model's byte-level BPE, with readable pieces.

A byte-level BPE works on the bytes of the UTF-8 text, each byte written as one printable
character (GPT-2's table: a space is "Ġ", a newline "Ċ"). A piece is therefore a run of
bytes, which may end in the middle of a character (an emoji takes 4 bytes and can be
split between pieces). :func:`readable` turns a piece into what a student should see: the
text it spells, with a leading space shown as "␣", line breaks and tabs as symbols, and
bytes that are only part of a character as ``\\xNN``.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from .files import LanguageModel

SPACE, NEWLINE, TAB = "␣", "↵", "⇥"


@functools.cache
def _byte_of_char() -> dict[str, int]:
    """GPT-2's byte-to-character table, inverted: the printable bytes stand for
    themselves; the other 68 (control characters, space, and a few more) are moved to
    characters 256 and up, in byte order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    chars = {b: chr(b) for b in printable}
    moved = [b for b in range(256) if b not in chars]
    chars.update({b: chr(256 + n) for n, b in enumerate(moved)})
    return {c: b for b, c in chars.items()}


def piece_bytes(piece: str, byte_level: bool = True) -> bytes:
    """The bytes a piece stands for: a byte-level piece ("Ġcat" -> b" cat"), or, with
    ``byte_level`` False, a SentencePiece one (the tokenizer.json of Llama 2, TinyLlama or
    Mistral): "▁" for a space, "<0x0A>" for a byte of its own ("▁cat" -> b" cat")."""
    if byte_level:
        table = _byte_of_char()
        return bytes(table[c] for c in piece)
    spelled = re.fullmatch(r"<0x([0-9A-Fa-f]{2})>", piece)
    if spelled:
        return bytes([int(spelled.group(1), 16)])
    return piece.replace("\u2581", " ").encode("utf-8")


def readable(piece: str, special: bool = False, byte_level: bool = True) -> str:
    """A piece as a student should see it: "Ġcat" -> "␣cat", "Ċ" -> "↵", a lone part of
    an emoji -> "\\xf0\\x9f" (SentencePiece's "▁cat" -> "␣cat" with ``byte_level`` False).
    Special tokens ("<|im_start|>") are shown as they are."""
    if special:
        return piece
    text = piece_bytes(piece, byte_level).decode("utf-8", errors="backslashreplace")
    return (text.replace(" ", SPACE).replace("\n", NEWLINE).replace("\t", TAB)
            .replace("\r", "\\r"))


def encode(m: LanguageModel, text: str) -> np.ndarray:
    """Token ids of ``text`` (T,); special tokens written in the text ("<|im_end|>") are
    matched whole, as the model's own tokenizer does. No BOS token: this is the text's own
    tokens (an answer's, a piece of a prompt); :func:`prompt_ids` starts a prompt."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a string; got {type(text).__name__}")
    return np.array(m.tokenizer.encode(text, add_special_tokens=False).ids, dtype=np.int64)


def prompt_ids(m: LanguageModel, text: str) -> np.ndarray:
    """The ids the model reads for the prompt ``text``: the BOS token first when the model
    adds one (``config.add_bos``, as its own metadata says: Llama's tokenizers do,
    SmolLM2's, Qwen2's and GPT-2's do not), then :func:`encode`'s."""
    ids = encode(m, text)
    if m.config.add_bos:
        ids = np.concatenate([[m.config.bos_id], ids]).astype(np.int64)
    return ids


def pieces(m: LanguageModel, ids) -> list[str]:
    """The readable piece of each id (see :func:`readable`)."""
    special = set(m.special_tokens)
    byte_level = byte_level_pieces(m)
    out = []
    for i in np.asarray(ids).ravel().tolist():
        piece = m.tokenizer.id_to_token(int(i))
        if piece is None:  # a row of the embedding past the tokenizer's vocabulary (Qwen2)
            out.append(f"<unused {i}>")
            continue
        out.append(readable(piece, piece in special, byte_level))
    return out


def byte_level_pieces(m: LanguageModel) -> bool:
    """Whether the model's pieces are byte-level BPE's (GPT-2's table: SmolLM2, Llama 3,
    Qwen2, GPT-2), not SentencePiece's."""
    from tokenizers import decoders

    return isinstance(m.tokenizer.decoder, decoders.ByteLevel)


def decode(m: LanguageModel, ids) -> str:
    """The text of ``ids``, special tokens included; bytes of an unfinished character
    become U+FFFD."""
    return m.tokenizer.decode([int(i) for i in np.asarray(ids).ravel()],
                              skip_special_tokens=False)


def chat_prompt(m: LanguageModel, user_text: str) -> str:
    """``user_text`` wrapped in the model's own chat template (Jinja, from the GGUF's
    ``tokenizer.chat_template``), as one user message followed by the start of the
    assistant's turn. The template is rendered in Jinja's sandbox, as Hugging Face renders
    chat templates."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    if not isinstance(user_text, str):
        raise ValueError(f"text must be a string; got {type(user_text).__name__}")
    if not m.chat_template:
        raise ValueError(f"{m.name} has no chat template (a base model, such as GPT-2): "
                         "give it plain text to continue")
    template = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True
                                             ).from_string(m.chat_template)
    return template.render(messages=[{"role": "user", "content": user_text}],
                           add_generation_prompt=True)
