"""What attention does for the answer: everything lesson 12 computes for one pair.

:func:`study` runs the clean and corrupted prompts and computes, from them, the logit
lens, the direct attribution, both patching grids and each head's attention to the changed
token; :func:`attncore.lm.patching.knockout` depends on a window the page lets the
student choose, and is computed apart.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .decoder import forward, norm
from .files import LanguageModel
from .generation import model_probs
from .lens import Attribution, Lens, direct_attribution, logit_lens
from .pair import Pair, PairRuns, make_pair, run_pair
from .patching import attention_to_changed, head_patching, knockout, residual_patching
from .tokens import pieces

#: The page's presets: (clean prompt, corrupted prompt, answer, wrong answer). The capital
#: cities differ in one token; the landmark in three; the last is indirect-object
#: identification (Wang et al. 2022): who receives the drink is the name not repeated.
PRESETS: dict[str, tuple[str, str, str, str]] = {
    "A capital city": ("The capital of France is", "The capital of Italy is", " Paris",
                       " Rome"),
    "Another capital": ("The capital of Japan is", "The capital of China is", " Tokyo",
                        " Beijing"),
    "A landmark": ("The Eiffel Tower is located in the city of",
                   "The Colosseum is located in the city of", " Paris", " Rome"),
    "Who gets the drink": (
        "When Mary and John went to the store, John gave a drink to",
        "When Mary and John went to the store, Mary gave a drink to", " Mary", " John"),
}

#: Layers a knockout window spans by default: 1, the narrowest, so that each point of the
#: curve is one layer's edge and a dip names that layer (a wider window blurs one layer's
#: dip over every window that holds it).
KNOCKOUT_WINDOW = 1


@dataclass(frozen=True, eq=False)
class AnswerStudy:
    """Lesson 12's results for one pair (arrays in model order, layer 0 first).

    ``p_clean`` and ``p_corrupt`` are p(answer) after each prompt; ``residual`` (L, T) and
    ``heads`` (L, H) the patching recoveries; ``looks`` (L, H) each head's attention from
    the last token to the changed token(s) in the clean run; ``seconds`` the time the
    runs, both grids and the lens took.
    """

    pair: Pair
    runs: PairRuns
    p_clean: float
    p_corrupt: float
    lens: Lens
    attribution: Attribution
    residual: np.ndarray
    heads: np.ndarray
    looks: np.ndarray
    seconds: float

    @property
    def ld_clean(self) -> float:
        return self.runs.ld_clean

    @property
    def ld_corrupt(self) -> float:
        return self.runs.ld_corrupt

    def top_heads(self, n: int = 5) -> list[tuple[int, int, float]]:
        """The ``n`` heads whose patching recovers the most, as (layer, head, recovery),
        from 0, largest first (ties in model order)."""
        order = np.argsort(-self.heads, axis=None, kind="stable")[:n]
        H = self.heads.shape[1]
        return [(int(i) // H, int(i) % H, float(self.heads.flat[i])) for i in order]


@dataclass(frozen=True)
class FirstGuess:
    """The logit lens's first row: the stream before any layer (the last token's embedding,
    plus its position's for learned positions) read through the final norm and the output
    matrix. Ids and their pieces: the last ``token``, the ``top`` guess and the best
    other one (``runner_up``), with their logits; ``tied``: whether the output matrix is
    the embedding table transposed."""

    token: int
    top: int
    runner_up: int
    token_logit: float
    top_logit: float
    runner_up_logit: float
    pieces: tuple[str, str, str]  # token, top, runner_up
    tied: bool


def first_guess(m: LanguageModel, runs: PairRuns) -> FirstGuess:
    """:class:`FirstGuess` of the clean run, in float64 from the float32 logits (the same
    numbers as the lens's row 0)."""
    cfg, w = m.config, m.weights
    stream = runs.clean["hidden_states"][0, -1][None]  # (1, d)
    logits = (norm(stream, w.output_norm, w.output_norm_bias, cfg) @ w.output
              )[0].astype(np.float64)
    top, runner_up = (int(i) for i in np.argsort(-logits, kind="stable")[:2])
    token = int(runs.pair.clean[-1])
    return FirstGuess(token=token, top=top, runner_up=runner_up,
                      token_logit=float(logits[token]), top_logit=float(logits[top]),
                      runner_up_logit=float(logits[runner_up]),
                      pieces=tuple(pieces(m, [token, top, runner_up])),
                      tied=bool(cfg.tied_output))


def _p_answer(m: LanguageModel, ids: np.ndarray, answer: int) -> float:
    logits = forward(m, ids, keep_cache=False, last_only=True).logits
    return float(model_probs(logits)[answer])


def study(m: LanguageModel, pair: Pair, progress: Callable[[float, str], None] | None = None
          ) -> AnswerStudy:
    """Every result of lesson 12 but the knockout, for ``pair``.

    ``progress(fraction, what)`` is told how far the work has gone: the head grid is
    about two thirds of it.
    """
    def told(low: float, high: float, what: str):
        if progress is None:
            return None
        progress(low, what)
        return lambda done: progress(low + (high - low) * done, what)

    start = time.perf_counter()
    told(0.0, 0.05, "running both prompts")
    runs = run_pair(m, pair)
    p_clean, p_corrupt = (_p_answer(m, ids, pair.answer) for ids in (pair.clean, pair.corrupt))
    lens, attribution = logit_lens(m, runs), direct_attribution(m, runs)
    residual = residual_patching(m, runs, told(0.05, 0.35, "patching the residual stream"))
    heads = head_patching(m, runs, told(0.35, 1.0, "patching every head"))
    return AnswerStudy(pair=pair, runs=runs, p_clean=p_clean, p_corrupt=p_corrupt,
                       lens=lens, attribution=attribution, residual=residual, heads=heads,
                       looks=attention_to_changed(runs),
                       seconds=time.perf_counter() - start)


def study_texts(m: LanguageModel, clean: str, corrupt: str, answer: str, wrong: str,
                progress: Callable[[float, str], None] | None = None) -> AnswerStudy:
    """:func:`study` of the pair these texts make (:func:`make_pair` checks them)."""
    return study(m, make_pair(m, clean, corrupt, answer, wrong), progress)


def summary(m: LanguageModel, result: AnswerStudy, texts: tuple[str, str, str, str],
            window: int) -> dict:
    """Everything computed for a pair as plain JSON values, with the knockout curve of
    ``window`` layers: what ``python -m attncore.lm patch`` prints and lesson 12's download
    holds. Arrays in model order, layer 0 first; lists of layers, heads and positions count
    from 1."""
    windows, probs, p_none = knockout(m, result.runs, window)
    dla = result.attribution
    clean, corrupt, answer, wrong = texts
    return {"clean": clean, "corrupt": corrupt, "answer": answer, "wrong": wrong,
            "tokens": result.pair.n_tokens,
            "changed_positions": [int(p) + 1 for p in result.pair.changed],
            "logit_diff_clean": result.ld_clean, "logit_diff_corrupt": result.ld_corrupt,
            "p_answer_clean": result.p_clean, "p_answer_corrupt": result.p_corrupt,
            "head_recovery": result.heads.tolist(),
            "residual_recovery": result.residual.tolist(),
            "dla_heads": dla.heads.tolist(), "dla_ffn": dla.ffn.tolist(),
            "dla_embed": dla.embed, "dla_biases": dla.biases, "dla_total": dla.total,
            "knockout_window": window, "knockout_p_answer_none": p_none,
            "knockout": [[first + 1, last + 1, float(p)]
                         for (first, last), p in zip(windows, probs, strict=True)],
            "top_heads": [[layer + 1, head + 1, r] for layer, head, r in result.top_heads()],
            "lens_rank": result.lens.rank.tolist(),
            "lens_p_answer": result.lens.p_answer.tolist()}
