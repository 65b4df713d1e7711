"""Lesson 12's sentences that depend on its results, as plain functions of them.

Each is chosen by the numbers it is given: where the lens first ranks the answer 1st,
which position carries the answer into each layer, which heads restore it, which knockout
windows halve it, so that the page never states what this pair did not show. Arrays are
in model order, layer 0 first; the sentences count layers and heads from 1.
"""

from __future__ import annotations

import numpy as np

from attncore.lm.lens import Attribution
from attncore.lm.pair import Pair
from pages.ui.labels import token_code
from pages.ui.numbers import difference_text, number_text, significant_text

HALF = 0.5  # "carries the answer": a patch that restores at least half of it
SMALL = 0.05  # "does not matter": a patch that moves less than 5% of the way
LOOKS = 0.5  # "looks at": at least half the last token's attention

#: Why the plain lens is read with care (said off the projector).
LENS_CAVEAT = (
    "In a small model the plain lens is a rough instrument: the earlier layers were never "
    "trained to be read through the last layer's norm and output matrix (the tuned lens, "
    "Belrose et al. 2023, trains a map per layer for this reason). Patching, below, asks the "
    "causal question instead.")


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def changed_names(pair: Pair) -> str:
    """The changed tokens of the clean prompt, quoted: "'␣France'"."""
    return ", ".join(f"'{pair.clean_tokens[p]}'" for p in pair.changed)


def position_labels(pair: Pair) -> list[str]:
    """One label per position, unique even when a token repeats: "1:The", "2:␣capital"."""
    return [f"{n + 1}:{t}" for n, t in enumerate(pair.clean_tokens)]


def _strip(pieces: list[str], changed: list[int]) -> str:
    return " · ".join(f"**{token_code(t)}**" if n in changed else token_code(t)
                      for n, t in enumerate(pieces))


def pair_text(pair: Pair) -> str:
    """Both prompts' tokens, the changed ones in bold, and the two answers compared."""
    changed = [int(p) for p in pair.changed]
    return (f"Clean ({pair.n_tokens} tokens): {_strip(pair.clean_tokens, changed)}  \n"
            f"Corrupted: {_strip(pair.corrupt_tokens, changed)}  \n"
            f"Answer {token_code(pair.answer_token)} against {token_code(pair.wrong_token)}; "
            f"the changed position{'s are' if len(changed) > 1 else ' is'} in bold.")


def patching_note(n_layers: int, n_heads: int, n_tokens: int, preset: bool) -> str:
    """What pressing the button will take: one patched run per layer and position and per
    head, L·(T + H) runs."""
    return (f"Patching runs the model about {n_layers * (n_heads + n_tokens)} times on "
            f"{n_tokens} tokens: a few seconds here, longer for longer prompts; a bar shows "
            "how far it is. Press the button"
            + (" once: this preset is then kept for every student of this machine." if preset
               else "."))


def seconds_caption(seconds: float) -> str:
    """How long the study took when it was computed."""
    return (f"Both runs, the lens and both patching grids took {number_text(seconds, 1)} s "
            "when this server first computed them (one batch of patched runs a layer, each "
            "starting at the layer it changes).")


def gap_warning(ld_clean: float, ld_corrupt: float, answer: str) -> str | None:
    """A warning when recovery, which divides by LD_clean − LD_corrupted, reads backwards
    (a gap of 0 or less) or magnifies noise (a gap under 1); None otherwise."""
    gap = ld_clean - ld_corrupt
    if gap <= 0:
        return (f"The corrupted prompt prefers {token_code(answer)} at least as much as the "
                f"clean one (LD {number_text(ld_corrupt, 2)} against "
                f"{number_text(ld_clean, 2)}): recovery below reads backwards. Swap the "
                "prompts or the answers.")
    if gap < 1:
        return (f"The two prompts' LDs differ by only {number_text(gap, 2)}: recovery divides "
                "by that difference, so small changes look large. Read it with care.")
    return None


def lens_text(rank: np.ndarray, answer: str) -> str:
    """The answer's rank after the embedding, a few layers before the last (in a model
    deep enough) and where it first ranks 1st, if it does. ``rank`` has L + 1 rows."""
    n_layers = len(rank) - 1
    tops = np.flatnonzero(rank == 1)
    late = n_layers - 3 if n_layers > 4 else None
    if tops.size == 0:
        top_text = f"never ranks 1st, not even after the last layer, {n_layers}"
    elif tops[0] == n_layers:
        top_text = f"ranks 1st only after the last layer, {n_layers}"
    else:
        first = int(tops[0])
        top_text = (f"first ranks 1st after layer {first}"
                    + (" and stays there" if (rank[first:] == 1).all()
                       else ", but not at every later layer"))
    return (f"{token_code(answer)} ranks {int(rank[0]):,} after the embedding, "
            + (f"{int(rank[late]):,} after layer {late}, " if late is not None else "")
            + f"and {top_text}.")


def components(dla: Attribution, biases: bool) -> tuple[list[str], np.ndarray]:
    """Every component's name and direct part of LD, in the order they write: the
    embedding, each head (layer by layer), each FFN, and the biases if the model has any."""
    n_layers, n_heads = dla.heads.shape
    names = (["embedding"]
             + [f"L{layer + 1} H{head + 1}" for layer in range(n_layers)
                for head in range(n_heads)]
             + [f"FFN {layer + 1}" for layer in range(n_layers)]
             + (["biases"] if biases else []))
    parts = np.concatenate([[dla.embed], dla.heads.ravel(), dla.ffn]
                           + ([[dla.biases]] if biases else []))
    return names, parts


def attribution_sum_text(dla: Attribution, biases: bool) -> str:
    """The parts added up, against the run's own LD, and why they differ."""
    n_layers, n_heads = dla.heads.shape
    return (f"Embedding {number_text(dla.embed, 3)} + {n_layers * n_heads} heads "
            f"{number_text(float(dla.heads.sum()), 3)} + {n_layers} FFNs "
            f"{number_text(float(dla.ffn.sum()), 3)}"
            + (f" + biases {number_text(dla.biases, 3)}" if biases else "")
            + f" = **{number_text(dla.total, 4)}**; the clean LD is "
            f"**{number_text(dla.ld, 4)}**: they differ by {difference_text(dla.total - dla.ld)} "
            "(the model adds its parts in float32; they are summed here in float64).")


def largest_part_caption(names: list[str], parts: np.ndarray) -> str:
    """What "direct" leaves out, and the largest part (in size, of either sign)."""
    top = int(np.argmax(np.abs(parts)))
    return ("Direct means what a component writes straight into the answer. A head whose "
            "output only changes what later layers compute gets nothing here; patching "
            f"sees it. The largest part here is {names[top]}'s, {number_text(parts[top], 2)}.")


def carrier_runs(residual: np.ndarray, pair: Pair) -> list[tuple[int, int, str]]:
    """Which position carries the answer into each layer, as runs of layers (first, last,
    from 0) with one carrier: "changed", "last", a position's label, or "" when no single
    position restores at least half of it. ``residual`` is (L, T)."""
    changed, labels = [int(p) for p in pair.changed], position_labels(pair)
    runs: list[tuple[int, int, str]] = []
    for layer, row in enumerate(residual):
        best = int(np.argmax(row))
        who = ("" if row[best] < HALF else "changed" if best in changed
               else "last" if best == pair.n_tokens - 1 else labels[best])
        if runs and runs[-1][2] == who:
            runs[-1] = (runs[-1][0], layer, who)
        else:
            runs.append((layer, layer, who))
    return runs


def span(first: int, last: int) -> str:
    """Layers ``first`` to ``last`` (from 0), counted from 1: "layer 4", "layers 1–3"."""
    return f"layer {first + 1}" if first == last else f"layers {first + 1}–{last + 1}"


def _where(who: str, pair: Pair) -> str:
    return {"changed": f"the changed token{'s' if len(pair.changed) > 1 else ''} "
                       f"({changed_names(pair)})",
            "last": f"the last token ('{pair.clean_tokens[-1]}')",
            "": "no single position (none restores half)"}.get(who, f"'{who}'")


def carrier_lines(runs: list[tuple[int, int, str]], pair: Pair) -> list[str]:
    """One line per run of layers: "entering layers 1–18: the changed token ('␣France')"."""
    return [f"entering {span(a, b)}: {_where(who, pair)}" for a, b, who in runs]


def moved_into(runs: list[tuple[int, int, str]]) -> int | None:
    """The layer (from 1) inside which the answer moves from the changed token(s) to the
    last token, when one run of layers hands it straight to the next; else None."""
    for (_, _, before), (first, _, after) in zip(runs, runs[1:], strict=False):
        if before == "changed" and after == "last":
            return first  # the last token carries it entering layer first + 1
    return None


def moved_text(pair: Pair, layer: int) -> str:
    """Only attention moves information between positions: the heads of ``layer`` must."""
    return (f"The information moves from {changed_names(pair)} to the last token inside layer "
            f"{layer}: only attention moves information between positions, so heads of layer "
            f"{layer} must move it. The head grid below looks for them.")


def embedding_back_text(back: float) -> str:
    """Patching the changed token's embedding gives back the clean run: recovery 1 up to
    rounding, and by how much it is not."""
    return (f"Putting back the changed token's own embedding (entering layer 1) makes the "
            f"corrupted run the clean one: recovery {significant_text(back, 9)}, 1 up to "
            f"float32 rounding ({difference_text(back - 1)}: the patched runs go in batches, "
            "and BLAS rounds a row differently with the batch's size).")


def said_heads(top: list[tuple[int, int, float]]) -> list[str]:
    """Heads as (layer, head, recovery) from 0, named: "L17 H3 (0.42)"."""
    return [f"L{layer + 1} H{head + 1} ({number_text(r, 2)})" for layer, head, r in top]


def heads_text(heads: np.ndarray, top: list[tuple[int, int, float]]) -> str:
    """The heads that restore most, those that push the other way, and the grid's sum."""
    said = said_heads(top)
    pushing = int(np.count_nonzero(heads < -SMALL))
    return (f"Patching **{said[0]}** alone restores the most; then {', '.join(said[1:])}. "
            f"{_plural(pushing, 'head pushes', 'heads push')} the other way (below "
            f"−{SMALL:g}). The {heads.size} single-head recoveries add up to "
            f"{number_text(heads.sum(), 2)}: effects through later layers do not simply add.")


def agreement_text(top: list[tuple[int, int, float]], moved: int | None) -> str | None:
    """Said when the head that restores most sits in the layer where the residual grid
    showed the answer move; None otherwise."""
    layer = top[0][0] + 1
    if moved is None or layer != moved:
        return None
    return (f"The head that restores most sits in layer {layer}, the layer where the "
            "residual grid showed the information move.")


def runs_of(numbers: list[int]) -> list[tuple[int, int]]:
    """Consecutive runs of sorted whole numbers: [12, 16, 17, 18] -> [(12, 12), (16, 18)]."""
    found: list[tuple[int, int]] = []
    for n in numbers:
        if found and n == found[-1][1] + 1:
            found[-1] = (found[-1][0], n)
        else:
            found.append((n, n))
    return found


def knockout_text(windows: list[tuple[int, int]], probs: np.ndarray, p_none: float,
                  answer: str) -> str:
    """The lowest p(answer) of the knockout windows, which windows at least halve it and
    the layers all of those share."""
    worst = int(np.argmin(probs))
    harmful = [w for w, p in zip(windows, probs, strict=True) if p < p_none / 2]
    text = (f"With nothing cut p({token_code(answer)}) is {number_text(p_none, 3)}. Cutting "
            f"the edge in {span(*windows[worst])} leaves {number_text(probs[worst], 3)}, the "
            "lowest. ")
    if not harmful:
        return text + "No window halves it."
    shared = set(range(harmful[0][0], harmful[0][1] + 1))
    for a, b in harmful[1:]:
        shared &= set(range(a, b + 1))
    starts = ", ".join(span(a, b).removeprefix("layers ").removeprefix("layer ")
                       for a, b in runs_of([first for first, _ in harmful]))
    return text + (f"{len(harmful)} of the {len(windows)} windows at least halve it (those "
                   f"starting at layer{'s' if len(harmful) > 1 else ''} {starts})" + (
                       f"; all of them include {span(min(shared), max(shared))}."
                       if shared and len(harmful) > 1 else "."))


def looks_lines(looks: np.ndarray, heads: np.ndarray, first_token: np.ndarray,
                top: list[tuple[int, int, float]], pair: Pair) -> list[str]:
    """Where the heads look against what patching them does: the top head's look, the
    heads that look and do not matter, the attention sinks (when the first token is not
    a changed one) and the correlation. ``looks``, ``heads`` and ``first_token`` are
    (L, H): attention to the changed token(s), recovery, attention to the first token."""
    lookers = looks >= LOOKS
    idle = lookers & (np.abs(heads) < SMALL)
    sinks = first_token >= LOOKS
    best_l, best_h, _ = top[0]
    varies = looks.std() > 0 and heads.std() > 0  # else the correlation is undefined
    r = float(np.corrcoef(looks.ravel(), heads.ravel())[0, 1]) if varies else 0.0
    lines = [
        f"L{best_l + 1} H{best_h + 1}, the head that restores most, puts "
        f"{number_text(looks[best_l, best_h], 2)} of the last token's attention on "
        f"{changed_names(pair)}.",
        f"{_plural(int(lookers.sum()), 'head puts', 'heads put')} at least {LOOKS:g} of it "
        f"there; of these, {int(idle.sum())} change the answer by less than {SMALL:g} when "
        "patched: they look and do not matter here.",
    ]
    if 0 not in pair.changed:
        lines.append(
            f"{_plural(int(sinks.sum()), 'head puts', 'heads put')} at least {LOOKS:g} on the "
            "first token, the attention sink of lessons 10 and 11" + (
                f"; their recoveries lie between {number_text(heads[sinks].min(), 2)} and "
                f"{number_text(heads[sinks].max(), 2)}." if sinks.any() else "."))
    lines.append(f"Across all {heads.size} heads the correlation between looking and mattering "
                 f"is r = {number_text(r, 2)}.")
    return lines


def moving_text(heads: np.ndarray) -> str:
    """How many heads move the answer by at least SMALL of the way when patched alone."""
    moving = int(np.count_nonzero(np.abs(heads) >= SMALL))
    return (f"Here {moving} of the {heads.size} heads move the answer by at least {SMALL:g} "
            "of the way when patched alone; each of the others moves it by less.")
