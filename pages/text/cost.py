"""Lesson 7's sentences that depend on its measurements, as plain functions of them.

Each is chosen by the numbers it is given (a verdict is said only when every round
agrees), so that the page never states what this run did not measure.
"""

from __future__ import annotations

import numpy as np

from attncore import cost
from pages.ui.glossary import term_link

MIB = cost.MIB


# What each verdict of cost.against_square says about the fitted growth, and why it may be so
# (a cause is offered as likely: the page measures the time, not its causes).
GROWTH_WORDS = {
    "slower": "more slowly than the n² of the arithmetic; likely causes: at these lengths a "
              "call's fixed cost and its work that grows like n still weigh, and larger "
              "products run the processor closer to its full speed",
    "like n²": "close to the n² of the arithmetic",
    "faster": "faster than the n² of the arithmetic; a likely cause is memory: the larger "
              "arrays no longer fit in the processor's caches",
}
SHORT_WORDS = {"slower": "more slowly than n²", "like n²": "like n²",
               "faster": "faster than n²"}


def arithmetic_text(growth: cost.Growth) -> str:
    """What one call computes, counted at the largest n measured, and how long it took."""
    n, H, d_k = int(growth.ns[-1]), growth.heads, growth.d_k
    return (
        f"Attention on {term_link('T', 'n')} tokens takes 2·H·n²·d_k "
        f"{term_link('multiply-add', 'multiply-adds')}: Q Kᵀ and the weights times V cost "
        f"H·n²·d_k each ({term_link('H', 'H')} = {H}, {term_link('d_k', 'd_k')} = {d_k}), and "
        f"the softmax adds H·n² exponentials. At "
        f"n = {n} that is {cost.attention_multiply_adds(n, H, d_k):,} multiply-adds and "
        f"{H * n * n:,} exponentials; the fastest of the calls timed here took "
        f"{growth.seconds[-1] * 1e3:.3g} ms.")


def growth_text(growth: cost.Growth) -> str:
    """The fitted exponent against the n² of the arithmetic, in words chosen by the numbers,
    and what the lengths left out of the fit did. A verdict is stated only when the minima's
    fit and every round's fit agree on it (cost.shared_verdict); otherwise the page says
    which verdicts the rounds leave open."""
    fitted = ", ".join(str(n) for n in growth.fit_ns)
    exponents = (growth.exponent, growth.exponent_low, growth.exponent_high)
    verdict = cost.shared_verdict(exponents)
    if verdict is not None:
        said = GROWTH_WORDS[verdict]
    else:
        open_ = sorted({cost.against_square(e) for e in exponents}, key=list(SHORT_WORDS).index)
        low, high = 2 - cost.SQUARE_TOLERANCE, 2 + cost.SQUARE_TOLERANCE
        straddled = ("the whole band" if {"slower", "faster"} <= set(open_)
                     else f"{low:.2f}" if "slower" in open_ else f"{high:.2f}")
        said = ("and the rounds do not settle whether that is "
                + " or ".join(SHORT_WORDS[w] for w in open_)
                + f" (an exponent from {low:.2f} to {high:.2f} counts as like n² here; these "
                f"fits fall on both sides of {straddled})")
    text = (f"Fitted over n = {fitted}: time grows like **n^{growth.exponent:.2f}** (the "
            f"{growth.rounds} rounds fitted one by one give {growth.exponent_low:.2f} to "
            f"{growth.exponent_high:.2f}), {said}.")
    left_out = growth.ns[growth.ns < growth.fit_ns[0]]
    if left_out.size:
        a, b = int(growth.ns[0]), int(growth.ns[1])
        slope = float(cost.local_exponents(growth.ns[:2], growth.seconds[:2])[0])
        rounds = [float(cost.local_exponents(growth.ns[:2], row[:2])[0])
                  for row in growth.round_seconds]
        spread = f" (rounds: {min(rounds):.2f} to {max(rounds):.2f})"
        fit = np.isin(growth.ns, growth.fit_ns)
        inside = cost.local_exponents(growth.fit_ns, growth.seconds[fit])  # the fit's steps
        slowest = float(np.min(inside))
        if cost.shared_verdict([slope, *rounds]) != "slower":
            why = f"like n^{slope:.2f}{spread}"
        elif max(slope, *rounds) < slowest:  # slower than every step the fit keeps
            why = (f"only like n^{slope:.2f}{spread}, slower than any step inside the fit "
                   f"(the slowest n^{slowest:.2f}): with few weights, a call's fixed cost and "
                   "its work that grows like n (scaling Q, the output) likely weigh more there")
        else:
            why = (f"only like n^{slope:.2f}{spread}, not clearly more slowly than the "
                   f"slowest step inside the fit (n^{slowest:.2f})")
        text += (f" The fit starts at n = {int(growth.fit_ns[0])}; from n = {a} to {b} the "
                 f"best time grew {why}.")
    return text


def projections_text(growth: cost.Growth) -> str:
    """Why a whole layer's time does not show n² on short sequences: the projections."""
    n, H, d_k = int(growth.ns[-1]), growth.heads, growth.d_k
    d_model = H * d_k  # this app's convention: d_k = d_model / H
    attention = cost.attention_multiply_adds(n, H, d_k)
    projections = cost.projection_multiply_adds(n, d_model)
    return (
        "The call timed here starts from Q, K and V. A whole attention layer also computes "
        "them from the tokens' vectors and multiplies the result by W_O: four products of "
        f"n·{term_link('d_model', 'd_model')}² multiply-adds each, with d_model = H·d_k = "
        f"{d_model} here. Against attention's 2·n²·d_model they cost more while n < "
        f"2·d_model = {2 * d_model}; at n = {n} attention is "
        f"{attention / (attention + projections):.0%} of the layer's multiply-adds. So on "
        "sequences much shorter than 2·d_model a layer's multiply-adds grow nearly like n "
        "(a whole model's even more so: its feed-forward layers add more work per token), "
        "and n² takes over only on long ones. This page times attention alone, not a layer.")


def memory_text(growth: cost.Growth) -> str:
    """The measured peak against the weights it must hold: at least them, by how much more."""
    ratio = growth.peak_bytes / growth.weights_bytes
    trend = (", falling towards 1 as n grows" if ratio.size > 1 and np.all(np.diff(ratio) < 0)
             else "")
    # The weights are allocated inside the call, so the peak cannot be below them.
    bound = "at least that" if ratio.min() >= 1 else "not always above it (a measuring error)"
    return (
        "The weights alone take H·n²·8 bytes in float64, so doubling n quadruples them. The "
        f"peak measured is {bound}: here {ratio.min():.2f} to {ratio.max():.2f} times "
        f"it{trend}. Besides its one n × n array per head, the lean function measured holds "
        "a few n × d_k arrays per head (Q/√d_k, V with a column of ones, the output), which "
        "weigh more at small n. A textbook implementation keeps several n × n arrays per "
        "head alive at once (the scores, their exponentials, the weights), and needs more.")


def chunk_memory_text(cx: cost.ChunkExperiment) -> str:
    """How much of the chunked peak the chunk's weights are, and how far the peak fell
    against the weights: the peak also counts arrays that grow like n·d_k, not n²."""
    if cx.chunk >= cx.n:
        return "A chunk of all the rows is the full call: the same memory."
    weights = cx.heads * cx.chunk * cx.n * 8  # float64 weights of one chunk
    share = weights / cx.chunk_peak_bytes
    most = ("; at this chunk they are most of the peak" if share < 0.5 else "")
    return (f"The chunk's weights take {weights / MIB:.3g} MiB ({share:.0%}) of its "
            f"{cx.chunk_peak_bytes / MIB:.3g} MiB peak; the rest are arrays that grow like "
            f"n·d_k, not n² (V with a column of ones, the output being assembled){most}. So "
            f"the peak fell {cx.full_peak_bytes / cx.chunk_peak_bytes:.1f}-fold while the "
            f"weights fell {cx.n // cx.chunk}-fold.")


def speedup_text(lx: cost.LoopExperiment) -> str:
    """The speed-up (loop time / vectorised time, best of each) with its rounds, and which
    of the two was faster in every round, if one was."""
    low, high = float(np.min(lx.ratios)), float(np.max(lx.ratios))
    verdict = ("the vectorised call faster in every round" if low > 1
               else "the loop faster in every round" if high < 1
               else "no clear winner: the rounds disagree")
    return f"{lx.speedup:.2f}× (rounds: {low:.2f}× to {high:.2f}×; {verdict})"


def loop_text(here: cost.LoopExperiment, many: cost.LoopExperiment) -> str:
    """What the two timings say, in words chosen by their rounds."""
    text = ("Both columns do the same arithmetic: the loop calls the same function once per "
            "head. What differs is how the work is cut: the loop pays a call's fixed cost "
            "(Python and NumPy's setup) H times instead of once, and works on one head's "
            "arrays at a time, which are smaller and may fit the processor's caches better. "
            "Where each head does little work, the fixed cost is a large part of it. ")
    if here.heads == 1:
        text += (f"With H = 1 there is nothing to vectorise over: your setting's "
                 f"{here.speedup:.2f}× compares the same work twice. ")
    ranges = (f"(rounds: {np.min(many.ratios):.2f}× to {np.max(many.ratios):.2f}× against "
              f"{np.min(here.ratios):.2f}× to {np.max(here.ratios):.2f}×)")
    if np.min(many.ratios) > np.max(here.ratios):
        text += (f"Here the {many.heads} small heads' speed-up ({many.speedup:.2f}×) is above "
                 f"your setting's ({here.speedup:.2f}×) in every round {ranges}.")
    elif np.min(here.ratios) > np.max(many.ratios):
        text += (f"Here your setting's speed-up ({here.speedup:.2f}×) is above the "
                 f"{many.heads} small heads' ({many.speedup:.2f}×) in every round {ranges}, "
                 "against what their fixed costs suggest: other work on the machine may have "
                 "disturbed the run; press “Measure again”.")
    else:
        text += (f"Here the {many.heads} small heads' speed-up is {many.speedup:.2f}× and your "
                 f"setting's {here.speedup:.2f}×, but their rounds overlap {ranges}, so this "
                 "run does not settle which is larger: other work on the machine may have "
                 "disturbed it; press “Measure again”.")
    text += " On a GPU the loop would also launch H times as many small kernels."
    return text + (f" Your setting's vectorised call is the call section 1 times at "
                   f"n = {here.n} (when its largest n reaches {here.n}), measured again at "
                   "another moment: its best time here need not match section 1's, and may "
                   "differ by more than either measurement's rounds disagree, since other "
                   "work on the machine comes and goes.")
