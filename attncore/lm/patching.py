"""Activation patching and attention knockout: change one piece of a run, see what the
answer does.

*Patching* runs the corrupted prompt ("... Italy is") but puts back one activation from
the clean run ("... France is"), and measures how much of the clean answer returns
(:func:`attncore.lm.pair.recovery`). *Knockout* runs the clean prompt but forbids the
last token to read the changed token in a window of layers, and measures the answer's
probability.

Every patched run starts at the layer it changes, from the stream the unpatched run had
there (``forward``'s ``from_layer``): the layers before it would give the same numbers.
The runs that start at one layer go as one batch. This is the whole speed-up over a loop
of full passes (about 55 s per grid in the prototype, a few seconds here).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .decoder import causal_mask, forward
from .files import LanguageModel
from .generation import model_probs
from .interventions import Interventions
from .pair import PairRuns, logit_difference, recovery

Progress = Callable[[float], None] | None


def _tick(progress: Progress, done: float) -> None:
    if progress is not None:
        progress(done)


def residual_patching(m: LanguageModel, runs: PairRuns, progress: Progress = None) -> np.ndarray:
    """(L, T) recovery when the residual stream *entering* layer l at position p is the
    clean run's, in the corrupted run (layer 0: the token embeddings).

    One batch per layer: a copy of the corrupted run for each position from the first
    changed one, copy p patched at position p. Before the first changed token both runs
    hold the same stream, so a patch there changes nothing: those columns are exactly 0,
    and are not run.
    """
    L, T, start = m.config.n_layers, runs.pair.n_tokens, runs.start
    suffix = runs.pair.corrupt[start:]
    Ts = len(suffix)
    out = np.zeros((L, T))
    for layer in range(L):
        stream = np.repeat(runs.corrupt["hidden_states"][layer][None], Ts, axis=0)
        copies = np.arange(Ts)  # (Ts, Ts, d): copy i patches position start + i
        stream[copies, copies] = runs.clean["hidden_states"][layer]
        p = forward(m, suffix, cache=runs.cache(Ts),
                    interventions=Interventions(from_layer=layer, stream=stream),
                    keep_cache=False, last_only=True, vocab=runs.pair.vocab)
        out[layer, start:] = recovery(logit_difference(p.logits), runs.ld_clean,
                                      runs.ld_corrupt)
        _tick(progress, (layer + 1) / L)
    return out


def head_patching(m: LanguageModel, runs: PairRuns, progress: Progress = None) -> np.ndarray:
    """(L, H) recovery when head h of layer l outputs, at every position, what it output in
    the clean run: its weighted sum of values, *before* W_O (d_k numbers a position).

    One batch per layer: H copies of the corrupted run from that layer, copy h with head h
    patched. (Before the first changed token the two runs' heads output the same values.)
    """
    L, H = m.config.n_layers, m.config.n_heads
    suffix = runs.pair.corrupt[runs.start:]
    chosen = np.eye(H, dtype=bool)  # (copy, head): copy h patches head h alone
    out = np.empty((L, H))
    for layer in range(L):
        stream = np.repeat(runs.corrupt["hidden_states"][layer][None], H, axis=0)  # (H, Ts, d)
        values = runs.clean["head_outputs"][layer][None]  # (1, H, Ts, d_k)
        patch = Interventions(from_layer=layer, stream=stream, head_patch=(chosen, values))
        p = forward(m, suffix, cache=runs.cache(H), interventions=patch, keep_cache=False,
                    last_only=True, vocab=runs.pair.vocab)
        out[layer] = recovery(logit_difference(p.logits), runs.ld_clean, runs.ld_corrupt)
        _tick(progress, (layer + 1) / L)
    return out


def knockout_windows(n_layers: int, window: int) -> list[tuple[int, int]]:
    """Every run of ``window`` consecutive layers, as (first, last), from 0."""
    if not 1 <= window <= n_layers:
        raise ValueError(f"the window must hold 1 to {n_layers} layers; got {window}")
    return [(first, first + window - 1) for first in range(n_layers - window + 1)]


def knockout(m: LanguageModel, runs: PairRuns, window: int, progress: Progress = None
             ) -> tuple[list[tuple[int, int]], np.ndarray, float]:
    """The answer's probability in the clean run when the last token may not read the
    changed token(s) in each window of ``window`` consecutive layers.

    Returns the windows (first, last, from 0), p(answer) for each, and p(answer) with
    nothing knocked out. The blocked edges go from the last query to the changed keys, in
    every head of each layer of the window; every other edge is the causal mask's. One
    batch: a copy of the run for each window, each with its own masks.
    """
    pair, cfg = runs.pair, m.config
    T, suffix = pair.n_tokens, pair.clean[runs.start:]
    windows = knockout_windows(cfg.n_layers, window)
    allowed = causal_mask(len(suffix), T)  # (Ts, T): the suffix's queries, every key
    blocked = allowed.copy()
    blocked[-1, pair.changed] = False
    layers = np.arange(cfg.n_layers)
    covers = np.array([(first <= layers) & (layers <= last) for first, last in windows])
    masks = {n: np.where(covers[:, n, None, None, None], blocked, allowed)  # (B, 1, Ts, T)
             for n in range(cfg.n_layers)}
    B = len(windows)
    stream = np.repeat(runs.clean["hidden_states"][0][None], B + 1, axis=0)
    masks = {n: np.concatenate([mask, allowed[None, None]]) for n, mask in masks.items()}
    p = forward(m, suffix, cache=runs.cache(B + 1),
                interventions=Interventions(stream=stream, layer_masks=masks),
                keep_cache=False, last_only=True)
    _tick(progress, 1.0)
    probs = np.array([model_probs(logits)[pair.answer] for logits in p.logits])
    return windows, probs[:B], float(probs[B])


def attention_to_changed(runs: PairRuns) -> np.ndarray:
    """(L, H) each head's attention weight from the last token to the changed token(s) in
    the clean run (summed when several changed): where each head *looks*, to set
    against what patching it *does*."""
    weights = runs.clean["weights"]  # (L, H, Ts, T): the suffix's queries
    return weights[:, :, -1, runs.pair.changed].astype(np.float64).sum(axis=-1)


__all__ = ["attention_to_changed", "head_patching", "knockout", "knockout_windows",
           "residual_patching"]
