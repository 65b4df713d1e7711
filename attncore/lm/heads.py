r"""What the heads of the real model do: statistics, switching heads off, induction heads.

**Induction heads.** Take a segment of P random tokens and repeat it: [s₁ … s_P s₁ … s_P].
The first copy is unpredictable; in the second, a model that has learnt to copy can look
back at the earlier occurrence of the current token and read off the token that came
*after* it. An induction head does exactly that: at position t of the second copy
(t = P … 2P − 1, counting from 0) it attends to position t − P + 1. Its **induction
score** is the mean weight on that key, over the second copy and over the sequences
(lesson 8 grows such heads in a 2-layer toy; here they are found in a real model).
Switching the strongest ones off and watching the loss on the second copy rise shows
that the model's copying goes through them.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

from .. import analysis
from .._checks import whole_number
from .._installed import read_only
from ..results_cache import kept
from .decoder import forward
from .files import LanguageModel
from .interventions import Interventions
from .models import model

#: Segments a page may ask for: 3 sequences of 2 × 40 tokens is 240 positions a pass.
MAX_SEGMENT = 40
MAX_SEQUENCES = 4


def head_statistics(attentions: np.ndarray) -> dict[str, np.ndarray]:
    """Per-head statistics of a trace's (..., T, T) causal attentions, averaged over the
    query rows 2 .. T: name -> (...). The first row is left out, as it can only attend to
    itself (it would add a 1 to every head's first-token mass); with T = 1 it is all
    there is. Mass on the first token (the usual attention sink), on the previous token,
    and the entropy in nats (0 = one key; row i can reach at most log i)."""
    rows = attentions[..., 1:, :] if attentions.shape[-2] > 1 else attentions
    T = attentions.shape[-1]
    previous = (analysis.previous_token_mass(attentions)[..., 1:] if T > 1
                else np.zeros(attentions.shape[:-1]))
    return {
        "mass on the first token": analysis.first_token_mass(rows).mean(axis=-1),
        "previous-token mass": previous.mean(axis=-1),
        "entropy (nats)": analysis.entropy(rows).mean(axis=-1),
    }


def random_heads(rng: np.random.Generator, like: list[tuple[int, int]], n_heads: int
                 ) -> list[tuple[int, int]]:
    """For each (layer, head) of ``like``, another head of the same layer chosen at random,
    never one of ``like`` and never twice: a control with the same depth."""
    chosen: set[tuple[int, int]] = set()
    out = []
    for layer, _ in like:
        free = [h for h in range(n_heads) if (layer, h) not in like and (layer, h) not in chosen]
        if not free:
            raise ValueError(f"layer {layer + 1} has no head left to draw at random")
        head = int(rng.choice(free))
        chosen.add((layer, head))
        out.append((layer, head))
    return out


def head_mask_for(heads: list[tuple[int, int]], n_layers: int, n_heads: int) -> np.ndarray:
    """(L, H) of 1s with 0 at each (layer, head) given (both from 0)."""
    mask = np.ones((n_layers, n_heads), dtype=np.float32)
    for layer, head in heads:
        mask[layer, head] = 0.0
    return mask


def repeated_tokens(m: LanguageModel, seed: int, segment: int, sequences: int) -> np.ndarray:
    """``sequences`` rows of a random segment of ``segment`` ordinary tokens (no special
    token), each written twice: (sequences, 2 · segment) ids."""
    rng = np.random.default_rng(seed)
    special = {m.tokenizer.token_to_id(t) for t in m.special_tokens} - {None}
    # the tokenizer's own tokens: an embedding may have spare rows past them (Qwen2)
    known = min(m.config.vocab_size, m.tokenizer.get_vocab_size())
    ordinary = np.setdiff1d(np.arange(known), np.array(sorted(special), dtype=np.int64))
    first = rng.choice(ordinary, size=(sequences, segment))  # with replacement, like text
    return np.concatenate([first, first], axis=1)


def token_losses(logits: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Cross-entropy in nats of each next token: position t predicts ids[t + 1].

    logits (..., T, V), ids (..., T) -> (..., T − 1), float64.
    """
    z = np.asarray(logits[..., :-1, :], dtype=np.float64)
    shift = z.max(axis=-1, keepdims=True)
    log_norm = np.log(np.exp(z - shift).sum(axis=-1)) + shift[..., 0]
    target = np.take_along_axis(z, ids[..., 1:, None], axis=-1)[..., 0]
    return log_norm - target


def induction_scores(attentions: np.ndarray, segment: int) -> np.ndarray:
    """Mean weight from each query t of the second copy (t = P .. 2P − 1) to key
    t − P + 1, the token after the query's first occurrence.

    attentions (..., L, H, 2P, 2P) -> (L, H), averaged over leading axes (sequences).
    """
    P = segment
    t = np.arange(P, 2 * P)
    on_target = attentions[..., t, t - P + 1]  # (..., L, H, P)
    return on_target.mean(axis=-1).reshape(-1, *attentions.shape[-4:-2]).mean(axis=0)


@dataclass(frozen=True, eq=False)
class InductionTest:
    """The repeated-tokens test on SmolLM2 (layers and heads count from 0 here).

    ids : (S, 2P) the sequences; scores : (L, H) induction scores
    top_heads : the ``n_top`` best (layer, head), best first
    random_draws : for each draw, one random head in each top head's layer
    losses : (S, 2P − 1) per-token loss, all heads on; losses_top_off : top heads off;
    losses_random_off : (draws, S, 2P − 1), random heads off
    best_attention : (2P, 2P) the best head's weights on the first sequence
    """

    seed: int
    segment: int
    ids: np.ndarray
    scores: np.ndarray
    top_heads: list[tuple[int, int]]
    random_draws: list[list[tuple[int, int]]]
    losses: np.ndarray
    losses_top_off: np.ndarray
    losses_random_off: np.ndarray
    best_attention: np.ndarray

    def _first(self, losses: np.ndarray) -> float:
        """Mean loss on the first copy's tokens 2 .. P (token 1 has no context)."""
        return float(losses[..., : self.segment - 1].mean())

    def _repeat(self, losses: np.ndarray) -> float:
        """Mean loss on the second copy's tokens 2 .. P: its first token repeats s₁, which
        nothing before it announces."""
        return float(losses[..., self.segment:].mean())

    @property
    def best_map_score(self) -> float:
        """The best head's induction score on the first sequence alone: the mean of the
        map ``best_attention`` over its stripe (``scores`` averages every sequence)."""
        return float(induction_scores(self.best_attention[None, None], self.segment)[0, 0])

    @property
    def loss_first(self) -> float:
        return self._first(self.losses)

    @property
    def loss_repeat(self) -> float:
        return self._repeat(self.losses)

    @property
    def loss_top_off(self) -> float:
        return self._repeat(self.losses_top_off)

    @property
    def loss_random_off(self) -> np.ndarray:
        """(draws,) loss on the second copy with each draw of random heads off."""
        return np.array([self._repeat(r) for r in self.losses_random_off])


def induction_test(seed: int = 0, segment: int = 25, sequences: int = 3, n_top: int = 5,
                   draws: int = 4, *, m: LanguageModel | None = None) -> InductionTest:
    """Find the model's induction heads (``m``, SmolLM2 by default) and switch them off.

    ``sequences`` random segments of ``segment`` tokens, each repeated; the induction
    score of all 270 heads; the per-token loss with every head on, with the ``n_top``
    best heads off, and with ``draws`` sets of random heads (same layers) off.
    """
    seed = whole_number(seed, "seed", 0)
    segment = whole_number(segment, "segment", 2, MAX_SEGMENT)
    sequences = whole_number(sequences, "sequences", 1, MAX_SEQUENCES)
    m = m or model()
    L, H = m.config.n_layers, m.config.n_heads
    n_top = whole_number(n_top, "n_top", 1, L * H)
    draws = whole_number(draws, "draws", 1, 16)
    return _induction_test(m, seed, segment, sequences, n_top, draws)


# Six passes through the model (a few seconds): a server keeps the last results, as
# run() keeps its traces, and the machine keeps them on disk (a few kB each), keyed by the
# model's sha256 and the sha256 of the code that computes them, so that a first visit to
# lesson 10 on a new server reads them. The arrays are read-only, as every caller shares
# them.
@functools.lru_cache(maxsize=16)
def _induction_test(m: LanguageModel, seed: int, segment: int, sequences: int, n_top: int,
                    draws: int) -> InductionTest:
    settings = {"model": m.sha256, "seed": seed, "segment": segment, "sequences": sequences,
                "n_top": n_top, "draws": draws}
    found = kept("lm-induction", settings, __name__,
                 lambda: _compute_induction_test(m, seed, segment, sequences, n_top, draws))
    return dataclasses.replace(found, **{name: read_only(value) for name, value
                                        in vars(found).items()
                                        if isinstance(value, np.ndarray)})


def _compute_induction_test(m: LanguageModel, seed: int, segment: int, sequences: int, n_top: int,
                            draws: int) -> InductionTest:
    L, H = m.config.n_layers, m.config.n_heads
    ids = repeated_tokens(m, seed, segment, sequences)
    clean = forward(m, ids, record=("weights", "hidden_states"), keep_cache=False)
    attentions = clean.record["weights"]  # (S, L, H, 2P, 2P)
    scores = induction_scores(attentions, segment)
    order = np.argsort(-scores, axis=None, kind="stable")[:n_top]
    top = [(int(i) // H, int(i) % H) for i in order]

    def losses_with(off: list[tuple[int, int]]) -> np.ndarray:
        first = min(layer for layer, _ in off)  # layers before it are unchanged
        off_heads = Interventions(head_mask=head_mask_for(off, L, H), from_layer=first,
                                  stream=clean.record["hidden_states"][..., first, :, :])
        p = forward(m, ids, interventions=off_heads, keep_cache=False)
        return token_losses(p.logits, ids)

    rng = np.random.default_rng([seed, 1])  # its own stream: not the segments' draws
    random_sets = [random_heads(rng, top, H) for _ in range(draws)]
    return InductionTest(
        seed=seed, segment=segment, ids=read_only(ids), scores=read_only(scores), top_heads=top,
        random_draws=random_sets, losses=read_only(token_losses(clean.logits, ids)),
        losses_top_off=read_only(losses_with(top)),
        losses_random_off=read_only(np.stack([losses_with(s) for s in random_sets])),
        best_attention=read_only(attentions[0, top[0][0], top[0][1]].copy()),
    )
