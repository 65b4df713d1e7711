"""Lesson 5's sentences (pages/text/positional_encoding.py) as plain functions of
attncore's results: each branch is chosen by the numbers, checked against values derived
by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attncore import positional as pos
from attncore.positional import PermutationTest
from pages.text import positional_encoding as say


def test_the_length_of_pe_is_said_exactly_or_approximately():
    # d_model = 8: √4 = 2 exactly; d_model = 64: √32 = 5.6569 is not 5.657.
    assert "√(d_model / 2) = √4 = 2," in say.similarity_text(pos.sinusoidal_table(16, 8))
    text = say.similarity_text(pos.sinusoidal_table(64, 64))
    assert "√(d_model / 2) = √32 ≈ 5.657" in text and "divided by 32" in text


def test_which_distance_is_most_alike_is_said_from_the_cosines():
    # Defaults: neighbours are the most alike (cos(PE(0), PE(1)) = 0.9662).
    table = pos.sinusoidal_table(64, 64)
    near = f"{table.offset_cosines[0]:.4f}"
    assert near == "0.9662"
    assert (f"Neighbours (distance 1) have cosine {near}, and no two positions farther "
            f"apart are as alike.") in say.similarity_text(table)
    assert say.alike_note(table) == f"neighbours are the most alike (cosine {near} at these " \
                                    "settings)"
    # d_model = 2: cosine at distance k is cos k; the largest for k < 64 is cos 44 = 0.9998.
    table = pos.sinusoidal_table(64, 2)
    assert (f"but positions 44 apart are more alike still (cosine {math.cos(44):.4f})"
            in say.similarity_text(table))
    assert say.alike_note(table) == (f"at these settings positions 44 apart are more alike "
                                     f"(cosine {math.cos(44):.4f}) than neighbours "
                                     f"({math.cos(1):.4f})")


@pytest.mark.parametrize("step, words", [
    # 2 radians between drawn rows, more than a quarter turn (π/2 ≈ 1.571): speckle.
    (2, "show as a turn of 2.00 radians, more than a quarter turn from row to row: its "
        "columns look speckled."),
    # 6 radians is 2π − 6 = 0.2832 short of a turn: a wave every 2π / 0.2832 = 22.2 rows.
    (6, "show as a turn of 0.28 radians: its columns seem to wave once every 22.2 drawn "
        "rows, an artefact of drawing 1 row in 6 (aliasing)"),
])
def test_what_a_sampled_table_shows_is_computed(step, words):
    assert words in say.sampled_rows_note(step)


def test_a_sampled_tables_caption_counts_its_entries():
    # 512 × 512 = 262,144 entries, one position and one pair in 8.
    text = say.sampled_table_caption(512, 512, 8, 8)
    assert text.startswith("The table has 262,144 entries: it draws 1 position in 8 "
                           "(p = 0, 8, 16, …) and 1 sin/cos pair in 8, each cell a true "
                           "entry, never an average.")
    assert say.sample_note(1, 8) == "1 sin/cos pair in 8"


@pytest.mark.parametrize("heads, words", [
    (1, "Slopes: 0.00390625: one head, one slope, 2^(−8)."),  # 2^(−8/1)
    # 4 heads: 2^(−2h) = 1/4, 1/16, …, ratio 1/4.
    (4, "Slopes: 0.25, 0.0625, 0.015625, 0.00390625: a geometric sequence, each slope 0.25 = "
        "2^(−8/4) times the one before."),
    # 6 heads: the 4-head slopes, then the 8-head slopes 2^(−1) and 2^(−3).
    (6, "not one geometric sequence. 6 is not a power of two, so heads 1 to 4 take the "
        "4-head slopes 2^(−8h/4) and heads 5 and 6 every other slope of the 8-head "
        "sequence, from its first: 0.5, 0.125."),
])
def test_the_slopes_are_called_geometric_only_when_they_are(heads, words):
    assert words in say.slopes_text(pos.alibi_slopes(heads))


def test_heads_are_named_one_two_or_a_range():
    assert [say.heads_text(5, 5), say.heads_text(5, 6), say.heads_text(1, 4)] == [
        "head 5", "heads 5 and 6", "heads 1 to 4"]


def test_the_shuffle_sentence_follows_the_difference_with_positions():
    order = say.shuffle_text(4, PermutationTest(np.arange(4), 2e-16, 0.5, 2.02))
    assert "run [self-attention](./#glossary-self-attention) with no mask" in order
    assert "to a largest difference of 2.0×10⁻¹⁶ (rounding): unmasked attention is " \
           "permutation-equivariant" in order
    assert "they differ by up to 0.500: the order now matters." in order
    same = say.shuffle_text(4, PermutationTest(np.arange(4), 0.0, 1e-15, 0.0))
    assert "they differ by only 1.0×10⁻¹⁵ (rounding): for this sentence and shuffle, the " \
           "positions change nothing either." in same


def test_the_causal_sentence_follows_the_difference_with_the_mask():
    # a causal mask and no positions: 2.02 is order seen by the mask alone
    order = say.causal_text(PermutationTest(np.arange(4), 2e-16, 0.5, 2.02))
    assert order.startswith("**With a [causal mask](./#glossary-causal-mask)** and still no "
                            "positions they differ by up to 2.020: each token sees itself "
                            "and the tokens before it")
    assert "Haviv et al., 2022" in order
    assert order in say.shuffle_text(4, PermutationTest(np.arange(4), 2e-16, 0.5, 2.02))
    # a shuffle of equal tokens ("a a"): no order to see, nothing changes
    same = say.causal_text(PermutationTest(np.arange(2)[::-1], 0.0, 0.0, 0.0))
    assert same.endswith("and no positions they differ by only exactly 0: for this "
                         "sentence and shuffle, the mask changes nothing either.")


def test_the_notes_on_order_name_the_mask():
    table = pos.sinusoidal_table(16, 8)
    assert ("Without positional information or a mask, shuffling the words only shuffles "
            "the outputs (up to rounding); a causal mask alone can already tell orders "
            "apart.") in say.notice_items(table)
    answer = say.questions(0.84, pos.alibi_slopes(6))[2]["a"]
    assert answer.startswith("With no mask, the same three output vectors")
    assert "With a causal mask it can" in answer


def test_the_shift_sentence_says_where_it_was_checked():
    # 64 positions, Δ = 3: positions 0 … 60 have one 3 further on.
    text = say.shift_text(pos.shift_check(pos.sinusoidal(64, 16), 3))
    assert "Checked on all 61 positions that have a position Δ = 3 further on in the " \
           "table, p = 0 to 60: the largest error is **" in text


def test_the_relative_sentence_counts_the_clipped_pairs():
    # 16 positions, C = 4: 16 + 2·(15 + 14 + 13 + 12) = 124 pairs within ±4, 132 beyond;
    # 2·12 = 24 pairs exactly 4 apart use a₋₄ or a₄ too: 132 + 24 = 156 cells.
    text = say.relative_text(pos.relative_positions(16, clip=4), 4, presenter=False)
    assert ("here 132 of the 256 query–key pairs are farther apart than 4 and are clipped to "
            "a₋₄ or a₄, which the pairs exactly 4 apart use too: 156 cells in all") in text
    assert "2C + 1 = 9 vectors a₋₄ … a₄" in text
    short = say.relative_text(pos.relative_positions(16, clip=16), 16, presenter=True)
    assert short == ("33 learned vectors a, one per clipped offset; here no two of the 16 "
                     "positions are farther apart than 16, so nothing is clipped.")


def test_the_base_sentence_follows_the_cosines():
    # d_model = 64, distance 32: cosine 0.12 with base 100 and 0.61 with base 10,000.
    low, high = pos.offset_cosine(32, 64, 100.0), pos.offset_cosine(32, 64, 10000.0)
    assert f"{low:.2f}, {high:.2f}" == "0.12, 0.61"
    assert (f"far positions look less alike: positions 32 apart have cosine {low:.4f} with "
            f"base 100 and {high:.4f} with base 10,000") in say.base_text(64, 32)
    # d_model = 4, distance 63: pair 1 turns by 0.1 per position with base 100, 6.3 in
    # all, almost a full turn: far positions look more alike.
    assert "far positions look more alike" in say.base_text(4, 63)
    assert say.base_text(2, 32).startswith("Set the base to 100 at d_model = 2: nothing changes")


def test_the_wavelengths_and_turns_of_the_pairs():
    assert say.wavelengths_caption(pos.wavelengths(2)) == (
        "A single pair, pair 0: its wavelength is 2π ≈ 6.28 positions.")
    # d_model = 64: each wavelength is 10000^(2/64) = 1.33 times the one before.
    assert "≈ 1.33 times the one before" in say.wavelengths_caption(pos.wavelengths(64))
    # ω₃₁ = 10000^(−62/64) = 1.33×10⁻⁴.
    assert "pair 31 by 1.33×10⁻⁴" in say.turns_text(64, 10000.0)
    assert say.turns_text(2, 100.0).startswith("With d_model = 2 there is one pair")


def test_the_rope_sentence_states_the_spread_it_measured():
    scores = pos.rope_scores(16, 16, np.random.default_rng(1))
    spread = say.rope_spread(scores)
    assert spread.endswith("(rounding)") or spread == "exactly 0"
    assert say.rope_text(scores, 16, 10000.0, presenter=True) == (
        f"The score depends on p′ − p only: the largest spread along a diagonal is {spread}.")
    full = say.rope_text(scores, 16, 10000.0, presenter=False)
    assert "(d_k = 16, seed 1)" in full
    # RoPE's positions are p and p′, as the glossary writes them: m is ALiBi's slope m_h on
    # this page, so no RoPE sentence uses m (or n) for a position.
    for said in (full, say.rope_alt(scores, "Map.")):
        assert "position p" in said and "p′ − p" in said
        assert not any(f"{w} m" in said or f"{w} n" in said for w in ("position", "every"))
    assert "Rₘ" not in full and "$R_{-p} R_{p'} = R_{p'-p}$" in full


def test_the_practice_answers_come_from_the_numbers():
    slopes = pos.alibi_slopes(6)
    questions = say.questions(math.sin(1.0), slopes)
    assert questions[0]["value"] == math.sin(1.0) and "sin 1 ≈ 0.8415" in questions[0]["a"]
    # Head 5 of 6 takes the first 8-head slope, 2^(−8/8) = 0.5.
    assert questions[3]["value"] == 0.5 and questions[3]["a"].startswith("0.5. 6 is not")


def test_the_diagram_sentence_links_rope_and_alibi_before_section_5():
    # the diagram above section 1 names every scheme: the two glossary terms are linked there
    assert "([RoPE](./#glossary-rope))" in say.DIAGRAM_TEXT
    assert "([ALiBi](./#glossary-alibi))" in say.DIAGRAM_TEXT
    assert "glossary" not in say.schemes_text(16)


def test_slopes_that_are_whole_powers_of_two_are_written_in_full():
    # 8 heads: 2^(−h), h = 1..8; 2^(−6) = 1/64 = 0.015625 has six decimals, all shown.
    text = say.slopes_text(pos.alibi_slopes(8))
    assert "0.03125, 0.015625, 0.0078125, 0.00390625:" in text
    # 16 heads run from 2^(−1/2) ≈ 0.7071 (no finite decimal) down to 2^(−8) in full.
    assert "16 heads run from 0.7071 down to 0.00390625." in say.try_items(64, 64)[3]
    # Head 6 of 8: m = 2^(−6); a key 10 back loses 10/64 = 0.15625.
    assert "m₆ = 0.015625: a key 10 positions back loses 0.15625" in say.alibi_text(6, 2 ** -6)
    # 6 heads: 4-head slopes 1/4, 1/16, 1/64, 1/256, in full in the answer.
    assert "0.25, 0.0625, 0.015625, 0.00390625;" in say.questions(0.84, pos.alibi_slopes(6))[3]["a"]


def test_the_diagram_sentence_puts_alibi_after_the_scaling_and_relative_in_the_key():
    assert "a term q·a inside QKᵀ" in say.DIAGRAM_TEXT
    assert "added to the key, so the term depends on the query and the offset" in say.DIAGRAM_TEXT
    assert "a bias by offset alone added after ÷ √d_k" in say.DIAGRAM_TEXT
