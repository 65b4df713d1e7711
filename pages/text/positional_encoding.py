"""Lesson 5's sentences that depend on its numbers, as plain functions of its results.

Each sentence is chosen by the numbers it is given (the most alike distance, whether
the slopes form one geometric sequence, what a sampled table shows), so that the page
never states what these settings did not give.
"""

from __future__ import annotations

import math

import numpy as np

from attncore import positional as pos
from attncore.positional import PermutationTest, ShiftCheck, SinusoidalTable
from pages.ui.glossary import term_link
from pages.ui.numbers import difference_text, exact_text, number_text, said_number, subscript

# Above this, a difference is more than rounding (which is about 1e-16 here).
ORDER_MATTERS = 1e-9
COSINE_DECIMALS = 4  # a cosine of 0.99984 must not read as a rounded 1


def _cosine(x: float) -> str:
    return number_text(x, COSINE_DECIMALS)


def sample_note(row_step: int, pair_step: int, examples: bool = False) -> str:
    """What a sampled table draws, e.g. "1 position in 8 and 1 sin/cos pair in 8"."""
    first = f" (p = 0, {row_step}, {2 * row_step}, …)" if examples else ""
    parts = [f"1 position in {row_step}{first}"] if row_step > 1 else []
    parts += [f"1 sin/cos pair in {pair_step}"] if pair_step > 1 else []
    return " and ".join(parts)


def sampled_rows_note(row_step: int) -> str:
    """What pair 0's columns look like when one row in ``row_step`` is drawn, decided by
    the turn the drawn rows show: pair 0 turns by ω₀ = 1 radian per position, so by
    ``row_step`` radians between drawn rows, which reads as speckle when that is more
    than a quarter turn, and as a slow wave the encoding does not have (an alias) when
    it is close to a whole number of turns."""
    seen = pos.apparent_turn(row_step)
    said = (f" Pair 0 turns by {row_step} radians between drawn rows (a full turn is 2π ≈ "
            f"6.28), which the drawn rows show as a turn of {seen:.2f} radians")
    if seen >= np.pi / 2:
        return said + ", more than a quarter turn from row to row: its columns look speckled."
    return (said + f": its columns seem to wave once every {2 * np.pi / seen:.1f} drawn rows, "
            f"an artefact of drawing 1 row in {row_step} (aliasing), not a slow wave of the "
            f"encoding, which turns once every 6.28 positions.")


def sampled_table_caption(T: int, d: int, row_step: int, pair_step: int) -> str:
    """What a table too large to draw whole draws instead."""
    return (f"The table has {T * d:,} entries: it draws "
            f"{sample_note(row_step, pair_step, examples=True)}, "
            f"each cell a true entry, never an average."
            + (sampled_rows_note(row_step) if row_step > 1 else ""))


def table_alt(pe: np.ndarray, base: float) -> str:
    """The text alternative of the table's heatmap."""
    T, d = pe.shape
    lengths = pos.wavelengths(d, base)
    return (f"The sinusoidal table, positions p = 0 to {T - 1} down and {d} dimensions "
            f"across, values from {number_text(pe.min(), 3)} to "
            f"{number_text(pe.max(), 3)}: dimension 2i is a sine and 2i + 1 a "
            f"cosine of the position; pair 0 has a wavelength of 2π ≈ "
            f"{said_number(lengths[0])} positions"
            + (f", pair {d // 2 - 1} of {said_number(lengths[-1])}." if d > 2 else "."))


def similarity_alt(m: np.ndarray, cosine: bool) -> str:
    """The text alternative of PE · PEᵀ (or of the cosine map): its diagonal and its
    first row at a few distances."""
    T = len(m)
    along = "; ".join(f"at distance {k}: {said_number(m[0, k])}"
                      for k in sorted({1, min(5, T - 1), T - 1}))
    if cosine:
        return (f"Cosine similarity between every two positions: 1 on the diagonal, "
                f"{along}; the same along each diagonal.")
    return (f"PE(p) · PE(p′) between every two positions: {m[0, 0]:.3g} on the diagonal, "
            f"{along}; the same along each diagonal.")


def chosen_pairs_caption(chosen: int, plotted: list[int]) -> str:
    """Said when more pairs are chosen than are plotted."""
    return (f"{chosen} pairs chosen: the first {len(plotted)} are plotted "
            f"(pairs {', '.join(map(str, plotted))}), so that the curves stay readable.")


def wavelengths_caption(lengths: np.ndarray) -> str:
    """The wavelengths of the pairs, first to last, and their ratio."""
    if len(lengths) == 1:
        return f"A single pair, pair 0: its wavelength is 2π ≈ {lengths[0]:.2f} positions."
    return (f"Wavelengths run from 2π ≈ {lengths[0]:.2f} positions (pair 0) to "
            f"{said_number(lengths[-1])} positions (pair {len(lengths) - 1}), a geometric "
            f"progression: each pair's is b^(2/d_model) ≈ "
            f"{said_number(lengths[1] / lengths[0])} times the one before.")


def table_text(pe: np.ndarray) -> str:
    """What the table holds, counted as the lesson counts."""
    T, d = pe.shape
    return (
        f"A {term_link('positional-encoding', 'positional encoding')} gives each position p "
        f"a vector PE(p) of {term_link('d_model', 'd_model')} = {d} numbers, added to the "
        f"embedding of the token at that position. **Positions are counted from 0, as in the "
        f"formula: p = 0, 1, …, {T - 1}** on every axis, table and download of this lesson, "
        f"so row p = 0 alternates 0 (sin 0) and 1 (cos 0). Dimensions and pairs are counted "
        f"from 0 too: pair i is dimensions 2i (sin) and 2i + 1 (cos). Every value lies in "
        f"[−1, 1] (here from {number_text(pe.min(), 3)} to {number_text(pe.max(), 3)}).")


def turns_text(d: int, base: float) -> str:
    """How fast the first and last pairs turn."""
    if d <= 2:
        return ("With d_model = 2 there is one pair, turning by ω₀ = b⁰ = 1 radian per "
                "position whatever the base.")
    omega = pos.frequencies(d, base)
    return (f"Pair i turns by ωᵢ radians per position: pair 0 by ω₀ = b⁰ = 1, pair "
            f"{d // 2 - 1} by {said_number(omega[-1])}, so the left columns change fast and "
            f"the right ones slowly.")


def _alike(table: SinusoidalTable) -> str:
    cos_k, nearest = table.offset_cosines, table.nearest
    if nearest == 1:
        return (f"Neighbours (distance 1) have cosine {_cosine(cos_k[0])}, and no two "
                f"positions farther apart are as alike")
    return (f"Neighbours (distance 1) have cosine {_cosine(cos_k[0])}, but "
            f"positions {nearest} apart are more alike still (cosine "
            f"{_cosine(cos_k[nearest - 1])}): similarity does not simply fall with "
            f"distance")


def similarity_text(table: SinusoidalTable) -> str:
    """Why PE · PEᵀ is constant along its diagonals, every row's length, and which
    distance is the most alike."""
    half = table.pe.shape[1] // 2
    length = (f"√{half} = {math.isqrt(half)}" if math.isqrt(half) ** 2 == half
              else f"√{half} ≈ {number_text(math.sqrt(half), 3)}")
    return (
        f"PE(p)·PE(p′) = Σᵢ cos((p − p′)ωᵢ): it depends on p − p′ only, so the matrix is "
        f"constant "
        f"along every diagonal, up to rounding: the largest spread along a diagonal is "
        f"{difference_text(table.diagonal_spread, rounding=True)}. "
        f"Every PE(p) has the same length, √(d_model / 2) = {length}, since each pair adds "
        f"sin² + cos² = 1; the largest difference between two lengths is "
        f"{difference_text(table.length_spread, rounding=True)}. So the cosine is PE · PEᵀ "
        f"divided by {half}, with the same diagonals. {_alike(table)}.")


def shift_text(shift: ShiftCheck) -> str:
    """What R_Δ is, and the largest error of PE(p + Δ) = R_Δ PE(p) where it was checked."""
    k, checked = shift.offset, shift.checked
    return (f"R_Δ is block diagonal: one 2×2 rotation by Δ·ωᵢ per pair, the same for "
            f"every position. Its blocks, rows (cos Δωᵢ, sin Δωᵢ) and (−sin Δωᵢ, "
            f"cos Δωᵢ), turn the other way from RoPE's in section 5 because a pair "
            f"holds its sine first. Checked on all {checked} positions that have a "
            f"position Δ = {k} further on in the table, p = 0 to {checked - 1}: the largest "
            f"error is **{difference_text(shift.error, rounding=True)}**.")


def shuffle_text(n: int, test: PermutationTest) -> str:
    """Attention with no mask and no positions matches the shuffle; with positions, the
    order matters (or, for this sentence and shuffle, does not); so it does with a causal
    mask and no positions (:func:`causal_text`)."""
    if test.diff_with > ORDER_MATTERS:
        with_positions = (f"they differ by up to {number_text(test.diff_with, 3)}: the "
                          "order now matters.")
    else:
        with_positions = (f"they differ by only "
                          f"{difference_text(test.diff_with, rounding=True)}: for this "
                          "sentence and shuffle, the positions change nothing either.")
    return (
        f"The columns are the positions p = 0 to {n - 1}. Shuffle the tokens, run "
        f"{term_link('self-attention', 'self-attention')} with no mask, and compare its "
        f"outputs with the original outputs shuffled the same way. **Without** positional "
        f"encodings they match, to a largest difference of "
        f"{difference_text(test.diff_without, rounding=True)}: unmasked attention is "
        f"permutation-equivariant, it sees a bag of words. **With** sinusoidal "
        f"encodings added (PE(p) to whichever token is now at p) {with_positions} "
        + causal_text(test)
    )


def causal_text(test: PermutationTest) -> str:
    """What a causal mask alone, still without positions, does to the same shuffle."""
    mask = term_link("causal-mask", "causal mask")
    if test.diff_causal <= ORDER_MATTERS:
        return (f"**With a {mask}** and no positions they differ by only "
                f"{difference_text(test.diff_causal, rounding=True)}: for this sentence and "
                "shuffle, the mask changes nothing either.")
    return (f"**With a {mask}** and still no positions they differ by up to "
            f"{number_text(test.diff_causal, 3)}: each token sees itself and the tokens "
            "before it, and the shuffle changes which those are, so the mask alone already "
            "tells orders apart (decoder-only models trained without positional encodings "
            "still learn order: Haviv et al., 2022).")


def learned_text(small: int, width: int, d: int) -> str:
    """A learned table: one vector per position, none past its length."""
    return (
        f"Row p of a table E is added to the embedding x_p of the token at position p, "
        f"as the sinusoids are, but E has no formula: it is trained with the model "
        f"(here random numbers, seed 0, for {small} positions and {width} dimensions"
        + (f", not d_model = {d}, to keep the figure small" if width < d else "")
        + "). "
        f"A table of T_max rows has nothing for p ≥ T_max: this one, T_max = {small}, "
        f"cannot place a token at p = {small}, and a trained model has learned nothing "
        "for rows it never saw (GPT-2's table has T_max = 1,024).")


def relative_text(rel: np.ndarray, clip: int, presenter: bool) -> str:
    """Which learned vectors the clipped offsets use, and how many pairs are clipped."""
    small = len(rel)
    clipped = int(np.count_nonzero(rel != pos.relative_positions(small)))
    edge = int(np.count_nonzero(np.abs(rel) == clip))  # clipped, and exactly ±C apart
    pairs = (f"here {clipped} of the {small * small} query–key pairs are farther apart "
             f"than {clip} and are clipped to a{subscript(-clip)} or a{subscript(clip)}, "
             f"which the pairs exactly {clip} apart use too: {edge} cells in all"
             if clipped else
             f"here no two of the {small} positions are farther apart than {clip}, so "
             "nothing is clipped")
    if presenter:
        return f"{2 * clip + 1} learned vectors a, one per clipped offset; {pairs}."
    return (
        f"Nothing is added to the inputs. In the score of query i and key j, a learned "
        f"vector a is added to the key vector k_j, chosen by the key's offset j − i "
        f"from the query, clipped to ±C; the figure shows that offset, so each cell "
        f"says which of the 2C + 1 = {2 * clip + 1} vectors a{subscript(-clip)} … "
        f"a{subscript(clip)} its score uses. "
        f"The same {2 * clip + 1} vectors serve any length; {pairs}. The slider sets "
        f"C. The vectors are trained with the model and not drawn here; Shaw et al. "
        f"add a second such set to the values as well.")


def rope_spread(scores: np.ndarray) -> str:
    """The largest spread along a diagonal of RoPE's scores: rounding."""
    return difference_text(pos.offset_spread(scores), rounding=True)


def rope_alt(scores: np.ndarray, described: str) -> str:
    """The RoPE figure's text alternative around ``described``, the map's description."""
    return ("RoPE scores of one query vector q placed at every position p and one key vector "
            f"k at every p′: {described} Each diagonal holds one value, up to rounding: the "
            f"score depends on p′ − p only. Largest spread along a diagonal: "
            f"{rope_spread(scores)}.")


def rope_text(scores: np.ndarray, width: int, base: float, presenter: bool) -> str:
    """Why a RoPE score depends on the offset only, and how far the figure's diagonals
    spread."""
    spread = rope_spread(scores)
    if presenter:
        return (f"The score depends on p′ − p only: the largest spread along a "
                f"diagonal is {spread}.")
    return (
        f"Nothing is added to the inputs: in every layer the query at position p and "
        f"the key at position p′ are rotated, pair i (dimensions 2i and 2i + 1) by the "
        f"angle p·θᵢ or p′·θᵢ. A rotation's transpose turns back ($R_p^\\top = R_{{-p}}$) "
        f"and turns add up ($R_{{-p}} R_{{p'}} = R_{{p'-p}}$), so the score depends on the "
        f"offset p′ − p only. The figure places one random q and k (d_k = {width}, seed 1) "
        f"at every p and p′, with b = {base:,.0f} (RoFormer's base, whatever the Base "
        f"slider says; θᵢ plays the part of the table's ωᵢ): every diagonal holds one "
        f"value, up to rounding: the largest spread along a diagonal is {spread}. It "
        f"shows the dot product before the division by √d_k.")


def heads_text(first: int, last: int) -> str:
    """ "head 5", "heads 5 and 6", "heads 1 to 4"."""
    if first == last:
        return f"head {first}"
    return f"heads {first} {'and' if last == first + 1 else 'to'} {last}"


def slopes_text(slopes: np.ndarray) -> str:
    """What the ALiBi slopes are, decided by the numbers: one slope, a geometric sequence
    (with its ratio), or two interleaved ones (the paper's rule when H is not a power of
    two)."""
    listed = "Slopes: " + ", ".join(exact_text(s) for s in slopes)
    H = len(slopes)
    if H == 1:
        return f"{listed}: one head, one slope, 2^(−8)."
    ratio = pos.geometric_ratio(slopes)
    if ratio is not None:
        return (f"{listed}: a geometric sequence, each slope {exact_text(ratio)} = "
                f"2^(−8/{H}) times the one before.")
    below = 2 ** int(np.floor(np.log2(H)))
    rest = ", ".join(exact_text(s) for s in slopes[below:])
    return (f"{listed}: not one geometric sequence. {H} is not a power of two, so "
            f"{heads_text(1, below)} take the {below}-head slopes 2^(−8h/{below}) and "
            f"{heads_text(below + 1, H)} every other slope of the {2 * below}-head sequence, "
            f"from its first: {rest}.")


def alibi_text(head: int, slope: float) -> str:
    """What ALiBi adds to the scores, with the slope of the head shown."""
    return (
        f"Nothing is added to the inputs: each head h adds to its scores a penalty "
        f"proportional to the distance, with its own fixed slope m_h (not learned). "
        f"The paper trains causal language models: query i sees keys j ≤ i (a "
        f"{term_link('causal-mask', 'causal mask')}), the farther back the larger the "
        f"penalty. The symmetric form puts the same penalty on keys after the query, "
        f"for a model that reads both ways; the two agree on and below the diagonal. "
        f"The controls: H sets how many slopes there are, h which head's bias is drawn "
        f"(here m{subscript(head)} = {exact_text(slope)}: a key 10 positions back loses "
        f"{exact_text(10 * slope)} from its score), and the form switches between the two.")


#: What the diagram above section 1 shows, with the schemes it names linked.
DIAGRAM_TEXT = (
    "Five schemes give attention the order of the tokens, in four places: a table added to "
    "the inputs X (sinusoidal or learned), a rotation of each query and key by its position "
    f"({term_link('rope', 'RoPE')}), a term q·a inside QKᵀ (relative positions: a learned "
    "vector a per clipped offset is added to the key, so the term depends on the query and "
    f"the offset), or a bias by offset alone added after ÷ √d_k ({term_link('alibi', 'ALiBi')})."
    " Sections 1 to 4 study the sinusoidal table, section 5 the others; pick one to see "
    "where it enters lesson 1's flow.")


def schemes_text(small: int) -> str:
    """What section 5's four schemes share, and the positions its figures use."""
    return (f"The sinusoidal table is fixed and added to the inputs once. A learned table is "
            f"added the same way; the three others put position into every attention score "
            f"instead. Each figure here uses the first {small} positions, p = 0 to "
            f"{small - 1}.")


def alike_note(table: SinusoidalTable) -> str:
    """Which positions are the most alike, for "What to notice"."""
    cos_k, nearest = table.offset_cosines, table.nearest
    if nearest == 1:
        return (f"neighbours are the most alike (cosine {_cosine(cos_k[0])} at these "
                "settings)")
    return (f"at these settings positions {nearest} apart are more alike (cosine "
            f"{_cosine(cos_k[nearest - 1])}) than neighbours ({_cosine(cos_k[0])})")


def base_text(d: int, k: int) -> str:
    """What the base does to far positions, decided by the cosines at distance k with the
    bases 100 and 10,000 at this d_model."""
    if d == 2:
        return ("Set the base to 100 at d_model = 2: nothing changes, since the only pair "
                "turns by ω₀ = b⁰ = 1 whatever the base.")
    low, high = pos.offset_cosine(k, d, 100.0), pos.offset_cosine(k, d, 10000.0)
    longest = pos.wavelengths(d, 100.0)[-1], pos.wavelengths(d, 10000.0)[-1]
    said = _cosine(low), _cosine(high)
    if said[0] == said[1]:
        verdict = "far positions look about as alike"
    else:
        verdict = f"far positions look {'less' if low < high else 'more'} alike"
    return (f"Set the base to 100 (d_model = {d}): every pair but pair 0 turns faster (the "
            f"slowest pair's wavelength falls from {said_number(longest[1])} to "
            f"{said_number(longest[0])} positions), and {verdict}: positions {k} apart have "
            f"cosine {said[0]} with base 100 and {said[1]} with base 10,000.")


def notice_items(table: SinusoidalTable) -> list[str]:
    """"What to notice", with the most alike distance at these settings."""
    return [
        f"Each position gets its own vector; {alike_note(table)}.",
        "PE·PEᵀ is constant along its diagonals: similarity depends on the distance, not on "
        "where you are in the sentence.",
        "One fixed rotation moves every PE(p) to PE(p + Δ): an offset is a linear map of the "
        "encoding, which Vaswani et al. hoped would let attention learn relative positions.",
        "Without positional information or a mask, shuffling the words only shuffles the "
        "outputs (up to rounding); a causal mask alone can already tell orders apart.",
        "Relative positions, RoPE and ALiBi put position into the scores instead of the "
        "inputs; a RoPE score's positional part depends on the offset p′ − p only.",
    ]


def try_items(d: int, T: int) -> list[str]:
    """"Try this": the base's effect at half the table's length, and ALiBi's slopes with
    1 head and with 16."""
    few, many = pos.alibi_slopes(1), pos.alibi_slopes(16)
    return [
        base_text(d, T // 2),
        "Set d_model = 2: a single sin/cos pair, a point going round the circle; the "
        "cosine of positions p and p′ is then cos(p − p′).",
        "Type a sentence with a repeated word and try several shuffle seeds: without "
        "positions or a mask the largest difference stays at rounding level for every "
        "shuffle; compare it with the difference with positions.",
        f"Compare ALiBi with 1 head and with 16: one head has the single slope "
        f"{exact_text(few[0])}; 16 heads run from {exact_text(many.max())} down to "
        f"{exact_text(many.min())}.",
        "Switch ALiBi to symmetric: the cells on and below the diagonal stay as they "
        "were; the keys after the query, masked in the causal form, get the penalty of "
        "the keys as far behind.",
    ]


def questions(entry: float, slopes: np.ndarray) -> list[dict]:
    """The practice questions, their answers from ``entry`` (PE(1, 0) of the table) and
    ``slopes`` (ALiBi's 6 slopes)."""
    return [
        {"q": "What is PE(1, 0), the entry in row p = 1 and column 0 of the table (the "
              "second row: p counts from 0)?", "value": entry, "tol": 1e-3,
         "a": f"sin(1 · ω₀) = sin(1 / b⁰) = sin 1 ≈ {entry:.4f}, whatever the base and "
              "d_model: b⁰ = 1. The row above it, p = 0, holds sin 0 = 0."},
        {"q": "Why does the encoding use both sin and cos?",
         "a": "A pair (sin, cos) is a point on a circle; moving by k positions is a rotation, "
              "a linear map, which needs both coordinates (sin alone is not enough)."},
        {"q": "What does self-attention without positions compute for “dog bites man” "
              "compared with “man bites dog”?",
         "a": "With no mask, the same three output vectors (up to rounding), in a "
              "different order: it cannot tell the sentences apart. With a causal mask it "
              "can: each word sees itself and the words before it, so “dog” first sees "
              "itself alone, and last sees all three."},
        {"q": "With H = 6 ALiBi heads, what is the slope m₅ of head 5?",
         "value": float(slopes[4]), "tol": 1e-3,
         "a": f"{exact_text(slopes[4])}. 6 is not a power of two, so heads 1 to 4 take the 4-head "
              f"slopes 2^(−8h/4): {', '.join(exact_text(s) for s in slopes[:4])}; heads 5 and 6 "
              f"take every other slope of the 8-head sequence 2^(−8h/8), from its first: "
              f"{exact_text(slopes[4])} and {exact_text(slopes[5])}. The six slopes are not "
              "one geometric sequence."},
    ]


#: ALiBi's slopes, on two lines to fit beside the figure.
ALIBI_SLOPES = (r"\begin{gathered}m_h = 2^{-8h/H},\quad h = 1, \dots, H \\ "
                r"(H \text{ a power of two})\end{gathered}")
