"""A clean prompt and a corrupted one, with the answer and the wrong answer: lesson 12's input.

"The capital of France is" and "The capital of Italy is" differ in one token; the model
should answer " Paris" after the first and " Rome" after the second. The *logit
difference* LD = logit(answer) − logit(wrong) at the last position measures how much it
prefers the clean answer; everything lesson 12 computes (the lens, the attribution,
patching, knockout) is read through it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .decoder import KVCache, forward
from .files import LanguageModel
from .tokens import encode, pieces, prompt_ids

#: Tokens a prompt of the pair may hold: patching runs the model about L·(H + T) times.
MAX_PAIR_TOKENS = 32


@dataclass(frozen=True, eq=False)
class Pair:
    """Two prompts of the same length and two one-token answers, checked.

    ``clean`` and ``corrupt`` are (T,) ids; ``changed`` the positions where they differ
    (at least one); ``answer`` and ``wrong`` the two tokens whose logits are compared.
    """

    clean: np.ndarray
    corrupt: np.ndarray
    answer: int
    wrong: int
    clean_tokens: list[str]
    corrupt_tokens: list[str]
    answer_token: str
    wrong_token: str

    @property
    def n_tokens(self) -> int:
        return len(self.clean)

    @property
    def changed(self) -> np.ndarray:
        return np.flatnonzero(self.clean != self.corrupt)

    @property
    def vocab(self) -> np.ndarray:
        """The two ids whose logits LD compares: (answer, wrong)."""
        return np.array([self.answer, self.wrong])


def _split(m: LanguageModel, text: str) -> str:
    return " | ".join(f"'{p}'" for p in pieces(m, prompt_ids(m, text)))


def _one_token(m: LanguageModel, text: str, role: str) -> int:
    if not isinstance(text, str) or not text:
        raise ValueError(f"the {role} is empty: type one word (with its leading space, "
                         "' Paris', when it follows a word)")
    ids = encode(m, text)
    if len(ids) != 1:
        raise ValueError(f"the {role} {text!r} is {len(ids)} tokens ({_split(m, text)}): "
                         "lesson 12 compares single tokens; choose a word that is one token")
    return int(ids[0])


def _prompt(m: LanguageModel, text: str, role: str) -> np.ndarray:
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"the {role} prompt is empty: type a sentence")
    ids = prompt_ids(m, text)
    if len(ids) > MAX_PAIR_TOKENS:
        raise ValueError(f"the {role} prompt has {len(ids)} tokens; at most "
                         f"{MAX_PAIR_TOKENS} are allowed here (patching runs the model "
                         "hundreds of times)")
    return ids


def make_pair(m: LanguageModel, clean: str, corrupt: str, answer: str, wrong: str) -> Pair:
    """Check and tokenise a pair.

    Raises
    ------
    ValueError
        With a message naming the problem: an empty text; prompts of different lengths
        (both counts and both splits); a prompt over :data:`MAX_PAIR_TOKENS`; identical
        prompts; an answer that is not one token (its pieces); the same answer twice.
    """
    clean_ids = _prompt(m, clean, "clean")
    corrupt_ids = _prompt(m, corrupt, "corrupted")
    if len(clean_ids) != len(corrupt_ids):
        raise ValueError(
            f"the clean prompt has {len(clean_ids)} tokens and the corrupted one "
            f"{len(corrupt_ids)}: patching puts each position of one run into the other, so "
            f"both need the same number. Clean: {_split(m, clean)}. Corrupted: "
            f"{_split(m, corrupt)}.")
    if np.array_equal(clean_ids, corrupt_ids):
        raise ValueError("the two prompts are the same tokens: change a word in the "
                         "corrupted one")
    answer_id = _one_token(m, answer, "answer")
    wrong_id = _one_token(m, wrong, "wrong answer")
    if answer_id == wrong_id:
        raise ValueError("the answer and the wrong answer are the same token: their "
                         "logit difference is always 0")
    answer_piece, wrong_piece = pieces(m, [answer_id, wrong_id])
    return Pair(clean=clean_ids, corrupt=corrupt_ids, answer=answer_id, wrong=wrong_id,
                clean_tokens=pieces(m, clean_ids), corrupt_tokens=pieces(m, corrupt_ids),
                answer_token=answer_piece, wrong_token=wrong_piece)


def logit_difference(logits: np.ndarray) -> np.ndarray:
    """LD from logits whose last axis holds (answer, wrong), as ``forward(..., vocab=
    pair.vocab)`` returns them: logit(answer) − logit(wrong)."""
    return logits[..., 0] - logits[..., 1]


def recovery(ld: np.ndarray, ld_clean: float, ld_corrupt: float) -> np.ndarray:
    r"""The share of the clean answer a patch brings back:
    :math:`(LD_{patched} - LD_{corrupt}) / (LD_{clean} - LD_{corrupt})`:
    0 for no effect, 1 when the patched run prefers the answer as much as the clean run."""
    return (np.asarray(ld, dtype=np.float64) - ld_corrupt) / (ld_clean - ld_corrupt)


@dataclass(frozen=True, eq=False)
class PairRuns:
    """The clean and corrupted runs, with what patching reads from them.

    The tokens before the first changed one (``start`` of them) are the same in both
    prompts, and in a causal model nothing later changes their stream: they are run once,
    and every other run reads their keys and values from ``prefix`` (lesson 11's KV cache).
    So the recorded arrays cover positions ``start`` .. T − 1 (Ts of them): the residual
    stream entering each layer (L + 1, Ts, d), every head's output before W_O
    (L, H, Ts, d_k), the FFNs' outputs (L, Ts, d) and the attention weights
    (L, H, Ts, T).
    """

    pair: Pair
    start: int
    prefix: KVCache | None
    ld_clean: float
    ld_corrupt: float
    clean: dict[str, np.ndarray]
    corrupt: dict[str, np.ndarray]

    def cache(self, copies: int) -> KVCache | None:
        """The prefix's keys and values for a batch of ``copies`` runs (views, no copy)."""
        if self.prefix is None:
            return None
        def batch(arrays):
            return tuple(np.broadcast_to(a, (copies, *a.shape)) for a in arrays)
        return KVCache(batch(self.prefix.keys), batch(self.prefix.values))


RECORDED = ("hidden_states", "head_outputs", "ffn_output", "weights")


def run_pair(m: LanguageModel, pair: Pair) -> PairRuns:
    """Both runs, recorded, and their logit differences.

    Every run is computed as the patched runs are (after the same prefix cache, two
    columns of the output matrix). A patch that restores everything gives the clean LD to
    float32 rounding, not to the bit: BLAS rounds a row differently with the number of
    rows multiplied at once, and the patched runs go in batches.
    """
    start = int(pair.changed[0])
    prefix = (forward(m, pair.clean[:start], keep_cache=True, last_only=True).cache
              if start else None)
    runs = PairRuns(pair, start, prefix, np.nan, np.nan, {}, {})
    lds = {}
    for name, ids in (("clean", pair.clean), ("corrupt", pair.corrupt)):
        p = forward(m, ids[None, start:], cache=runs.cache(1), record=RECORDED,
                    keep_cache=False, last_only=True, vocab=pair.vocab)
        getattr(runs, name).update({key: value[0] for key, value in p.record.items()})
        lds[name] = float(logit_difference(p.logits)[0])
    if lds["clean"] == lds["corrupt"]:
        raise ValueError("the answer's logit difference is the same after both prompts "
                         f"({lds['clean']:.4g}): recovery, a share of the change, is "
                         "undefined; choose answers the changed word decides")
    return PairRuns(pair, start, prefix, lds["clean"], lds["corrupt"], runs.clean,
                    runs.corrupt)
