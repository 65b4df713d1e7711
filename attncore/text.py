"""Tokens, toy embeddings and the named example presets.

Everything here is deterministic: the same words, sizes and seed always give the
same numbers, on any machine (no Python ``hash``, which changes between runs).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import numpy as np

from ._checks import as_real_array
from .init import normal_weights

PAD = "<pad>"
#: Longest sentence (in tokens) the lessons accept; longer input is cut with a message.
MAX_TOKENS = 64

# A token is, in this order of preference:
# - a French elided article or pronoun with its apostrophe, "J'", "l'", "qu'", split from
#   the word it leans on ("J'aime" -> "J'", "aime"), as French tokenizers do, so that the
#   translation lesson can align "J'" with "I" and "aime" with "love";
# - a word, with any inner apostrophes and hyphens ("don't", "I'm", "state-of-the-art",
#   "aujourd'hui" stay whole): a student reads them as one word;
# - any other single character that is not a space (punctuation, "<", a lone "-" or "'").
_ELISION = r"\b(?:[cdjlmnst]|qu)['\u2019](?=\w)"
_WORD = r"\w+(?:['\u2019-]\w+)*"
_TOKEN = re.compile(rf"{_ELISION}|{_WORD}|[^\w\s]", re.IGNORECASE)
# A number as a student types it: 3, -0.5, .5, 1e300, 2.5E-3 (a leading "−" is read as
# "-"). Python's float() also takes "1_000", "nan" and "infinity": not numbers to a student.
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")

SENTENCES = {
    "cat": "The cat sat on the mat",
    "translation_source": "I love cats",
    "translation_target": "J'aime les chats",
    "sentiment": "The movie was not good at all",
}


def tokenize(sentence: str) -> list[str]:
    """Split a sentence into words and single punctuation marks.

    Apostrophes and hyphens inside a word keep it whole; a French elision ("J'", "l'",
    "qu'") is a token of its own, apostrophe included.

    >>> tokenize("The cat sat.")
    ['The', 'cat', 'sat', '.']
    >>> tokenize("J'aime le rock-n-roll, don't you?")
    ["J'", 'aime', 'le', 'rock-n-roll', ',', "don't", 'you', '?']
    """
    if not isinstance(sentence, str):
        raise ValueError(f"sentence must be text; got {type(sentence).__name__}")
    return _TOKEN.findall(sentence)


def pad_batch(
    sentences, pad: str = PAD, max_tokens: int | None = None
) -> tuple[list[list[str]], np.ndarray]:
    """Tokenize sentences, keep at most ``max_tokens`` tokens each, pad to the longest.

    Returns
    -------
    tokens : list of B lists of T strings
    lengths : ndarray of int (B,)
        Real tokens per sentence (the rest is padding).
    """
    batch = [tokenize(s)[:max_tokens] for s in sentences]
    if not batch:
        raise ValueError("the batch is empty; give at least one sentence")
    t = max(len(toks) for toks in batch)
    if t == 0:
        raise ValueError("every sentence is empty; type at least one word")
    lengths = np.array([len(toks) for toks in batch], dtype=np.int64)
    return [toks + [pad] * (t - len(toks)) for toks in batch], lengths


def _word_seed(word: str, seed: int) -> int:
    digest = hashlib.sha256(f"{seed}:{word.lower()}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def toy_embeddings(tokens, d_model: int, *, seed: int = 0, decimals: int | None = 1) -> np.ndarray:
    """A fixed vector per word (case-insensitive), the same wherever the word appears.

    Parameters
    ----------
    tokens : sequence of str (T,)
    d_model : int
        Embedding size.
    seed : int
        Picks another, equally arbitrary, vocabulary.
    decimals : int or None
        Round entries (1 decimal keeps hand arithmetic easy); None keeps them exact.

    Returns
    -------
    ndarray (T, d_model)
        Entries drawn from N(0, 1) by a generator seeded with the word itself.
    """
    if d_model < 1:
        raise ValueError(f"d_model must be >= 1; got {d_model}")
    rows = [np.random.default_rng(_word_seed(tok, seed)).standard_normal(d_model) for tok in tokens]
    x = np.array(rows, dtype=np.float64).reshape(len(rows), d_model)
    return x if decimals is None else np.round(x, decimals)


@dataclass(frozen=True)
class WorkedExample:
    """A small attention example: token names and Q, K, V (and X, W when projected).

    Attributes
    ----------
    name : str
    tokens : tuple of str (T,)
    q, k : ndarray (T, d_k)
    v : ndarray (T, d_v)
    x : ndarray (T, d_model) or None
        The token embeddings when Q, K, V are projections ``X W``.
    w_q, w_k : ndarray (d_model, d_k) or None
    w_v : ndarray (d_model, d_v) or None
    """

    name: str
    tokens: tuple[str, ...]
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    x: np.ndarray | None = None
    w_q: np.ndarray | None = None
    w_k: np.ndarray | None = None
    w_v: np.ndarray | None = None


PRESETS = {
    "textbook": "Textbook: Q = K = [[1,0],[0,1],[1,1]], V = [[1,2,3],[4,5,6],[7,8,9]]",
    "cat": "“The cat sat …”: toy embeddings X, then Q = X W_Q, K = X W_K, V = X W_V",
    "uniform": "Uniform: every query is 0, so every score is equal",
    "random": "Random (seeded)",
}


def worked_example(
    preset: str, n_tokens: int = 3, d_k: int = 2, d_v: int = 3, seed: int = 0
) -> WorkedExample:
    """Build a named preset of :data:`PRESETS`.

    The textbook preset is fixed (3 tokens, d_k = 2, d_v = 3) and ignores the sizes;
    the others follow ``n_tokens`` (tokens), ``d_k``, ``d_v`` and ``seed``.
    """
    for name, value, low, high in (("n_tokens", n_tokens, 1, MAX_TOKENS), ("d_k", d_k, 1, 512),
                                   ("d_v", d_v, 1, 512)):
        if not low <= value <= high:
            raise ValueError(f"{name} must lie in {low}..{high}; got {value}")
    if preset == "textbook":
        q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        v = np.arange(1.0, 10.0).reshape(3, 3)
        return WorkedExample(preset, ("x1", "x2", "x3"), q, q.copy(), v)
    rng = np.random.default_rng(seed)
    if preset == "cat":
        words = tokenize(SENTENCES["cat"])
        tokens = tuple((words * n_tokens)[:n_tokens])
        d_model = 4
        x = toy_embeddings(tokens, d_model, seed=seed)
        w_q, w_k, w_v = (np.round(normal_weights(rng, (d_model, d)), 1) for d in (d_k, d_k, d_v))
        return WorkedExample(preset, tokens, x @ w_q, x @ w_k, x @ w_v, x, w_q, w_k, w_v)
    tokens = tuple(f"x{i + 1}" for i in range(n_tokens))
    k = np.round(rng.standard_normal((n_tokens, d_k)), 1)
    v = np.round(rng.standard_normal((n_tokens, d_v)), 1)
    if preset == "uniform":
        return WorkedExample(preset, tokens, np.zeros((n_tokens, d_k)), k, v)
    if preset == "random":
        q = np.round(rng.standard_normal((n_tokens, d_k)), 1)
        return WorkedExample(preset, tokens, q, k, v)
    raise ValueError(f"unknown preset {preset!r}; choose one of {sorted(PRESETS)}")


def parse_number(cell, where: str) -> float:
    """Read one typed cell as a finite number, exactly as typed, or raise ValueError.

    ``cell`` is a number, or text in plain or scientific notation (``1e300`` is
    10³⁰⁰, never 1300). Anything else (empty, ``1,5``, ``1_000``, ``abc``, NaN,
    infinity) raises a ValueError that starts with ``where`` and says what was typed.

    >>> parse_number(" -2.5e3 ", "Q row 1, column 1")
    -2500.0
    """
    if isinstance(cell, str):
        text = cell.strip().replace("\u2212", "-")
        if not text:
            raise ValueError(f"{where} is empty; type a number")
        if not _NUMBER.fullmatch(text):
            raise ValueError(f"{where} is not a number: {cell.strip()[:30]!r}")
        number = float(text)
    elif cell is None or isinstance(cell, bool):
        raise ValueError(f"{where} is empty; type a number")
    else:
        try:
            number = float(cell)
        except (TypeError, ValueError):
            raise ValueError(f"{where} is not a number: {str(cell)[:30]!r}") from None
        if np.isnan(number):
            raise ValueError(f"{where} is empty or not a number (NaN); type a number")
    if not np.isfinite(number):
        raise ValueError(f"{where} is infinite (or too large for a float): type a finite number")
    return number


def check_matrix(values, name: str, shape: tuple[int, int]) -> np.ndarray:
    """Validate a user-edited matrix: numbers only, finite, of the expected shape.

    Each cell is read by :func:`parse_number`. The message names the first bad cell
    (1-based row and column), so a student can find it in the table.
    """
    rows = np.asarray(values, dtype=object)
    if rows.ndim != 2 or rows.shape != shape:
        raise ValueError(f"{name} must have shape {shape}; got {rows.shape}")
    out = np.empty(shape, dtype=np.float64)
    for (i, j), cell in np.ndenumerate(rows):
        out[i, j] = parse_number(cell, f"{name} row {i + 1}, column {j + 1}")
    return as_real_array(out, name, min_ndim=2)
