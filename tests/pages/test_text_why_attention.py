"""Lesson 0's sentences (pages/text/why_attention.py) as plain functions of made-up
readings: each branch chosen by the numbers, never by the defaults."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from attncore import copying
from attncore.recurrence import compare_layers
from attncore.train import bottleneck as bn
from pages.text import why_attention as text
from pages.ui.copying_view import softmax_line

LENGTHS = np.arange(2, 7)


def lengths_reading(attention, fixed, low=3, high=4) -> copying.LengthReading:
    return copying.length_reading(LENGTHS, {"attention": np.array(attention),
                                            "fixed": np.array(fixed)}, low, high)


def test_the_length_sentence_says_where_attention_leads_and_where_it_falls():
    # Attention ahead everywhere, and lower at 6 (0.6) than at 4 (0.95): it "falls too".
    r = lengths_reading([1.0, 1.0, 0.95, 0.8, 0.6], [0.9, 0.8, 0.5, 0.3, 0.2])
    said = text.length_text(r, 1 / 12)
    assert said.startswith("On the trained lengths (shaded) the attention model copies 95% "
                           "to 100% of the letters right")
    assert "from 80% at length 3 to 50% at length 4 (chance: 8%)" in said
    assert "ahead at every length tested" in said
    assert "falls too, from 95% at length 4 to 60% at length 6 (the fixed one 20%)" in said


def test_the_length_sentence_names_the_lengths_where_the_fixed_model_is_level():
    # Level at 2 only (singular), then at 2 and 6 (plural); attention at 6 (0.95) is not
    # below its 0.95 at 4: it "keeps" it.
    one = text.length_text(lengths_reading([0.9, 1.0, 0.95, 0.96, 0.95],
                                           [0.9, 0.8, 0.5, 0.3, 0.2]), 1 / 12)
    assert "level or ahead at length 2." in one
    assert "keeps 95% at length 6 (the fixed one 20%)" in one and "falls too" not in one
    two = text.length_text(lengths_reading([0.9, 1.0, 0.95, 0.96, 0.1],
                                           [0.9, 0.8, 0.5, 0.3, 0.2]), 1 / 12)
    assert "level or ahead at lengths 2, 6." in two


def test_a_run_with_no_trained_length_tested_says_so_and_nothing_past_is_not_claimed():
    r = lengths_reading([0.9, 0.8, 0.7, 0.6, 0.5], [0.5, 0.4, 0.3, 0.2, 0.1], low=1, high=1)
    said = text.length_text(r, 1 / 12)
    assert said.startswith("No tested length was trained (tests start at 2); from length 2")
    r = lengths_reading([1.0] * 5, [0.5] * 5, low=2, high=6)
    assert "Past the trained lengths" not in text.length_text(r, 1 / 12)


def test_the_position_sentence_counts_positions_from_1():
    r = copying.position_reading([2, 3], [[1.0, 0.5, np.nan], [0.9, 0.4, 0.7]], 3)
    said = text.position_text(r, 32)
    assert said.startswith("At length 3 the fixed-context model gets position 1 right most "
                           "often (90%) and position 2 least (40%); the first letter 90%, "
                           "the last 70%.")
    assert "from the 32 numbers of the encoder's last state" in said


def alignment(copied: float, length: int = 4) -> copying.AlignmentReading:
    return copying.AlignmentReading(length=length, copied=copied, before=0.1, after=0.05,
                                    near=0.75)


def earlier(weight: float = 0.3, accuracy: float = 0.998, later: float = 0.999):
    return bn.EarlierStates(length=4, strings=200, weight_before=weight,
                            weight_previous=0.25, accuracy=accuracy, accuracy_later_only=later)


def test_the_alignment_sentence_says_the_offsets_and_which_states_can_carry_the_letter():
    close = text.alignment_text(alignment(0.93), earlier(), n_test=200, max_length=16)
    assert "puts on average 0.93 of its weight on source position t" in close
    assert "0.10 on position t − 1 and 0.05 on position t + 1" in close
    assert "neighbour in 75% of the rows" in close
    # a left-to-right encoder: only h_t and later states have read letter t
    assert "only h_t and later states can carry it" in close
    assert ("Over the steps that have earlier states (steps 2 to 4), 0.30 of the weight, on "
            "average, still falls on them, 0.25 of it on h_(t−1) alone.") in close
    assert "Why is not measured here" in close and "likely reason" not in close
    assert "h_(t+1) may still carry letter t" not in close
    past = text.alignment_text(alignment(0.6, length=12), earlier(), n_test=200, max_length=4)
    assert "is not close to 1; these strings of 12 letters are longer than any trained " \
           "(at most 4)" in past
    assert "is close to 1; these strings" in text.alignment_text(alignment(0.95, 12),
                                                                earlier(), 200, 4)


def test_the_earlier_states_verdict_follows_the_two_accuracies():
    # 99.8% -> 99.9%: not needed; 99.8% -> 99.0%: within a point, barely; -> 90%: used
    assert "from 99.8% to 99.9%, so the copy does not need the earlier states" in \
        text.earlier_text(earlier())
    assert "from 99.8% to 99%, so the copy barely depends on the earlier states" in \
        text.earlier_text(earlier(later=0.99))
    used = text.earlier_text(earlier(later=0.9))
    assert "from 99.8% to 90%, so the model uses the earlier states, for something other " \
           "than letter t (what, is not measured here)" in used


def test_the_progress_label_counts_each_models_steps():
    # 2 × 800 steps in all, the fixed model's first
    assert text.progress_text(240, 1600) == "Training the fixed-context model: step 240 of 800"
    assert text.progress_text(800, 1600) == "Training the fixed-context model: step 800 of 800"
    assert text.progress_text(801, 1600) == "Training the attention model: step 1 of 800"
    assert text.progress_text(1600, 1600) == "Training the attention model: step 800 of 800"


def test_the_coverage_sentence_says_where_most_test_strings_were_trained_on():
    # The defaults: about 3,657 strings of each of 14 lengths; 88% of the 1,728 strings of
    # 3 letters, 16% of the 20,736 of 4 (worked out in tests/core/test_copying.py).
    c = copying.training_coverage(np.arange(2, 21), 3, 16, 800, 64, 12)
    said = text.coverage_text(c, 12)
    assert said.startswith("Training drew about 3,657 strings of each length from 3 to 16 "
                           "(800 steps of 64 strings, each step one length).")
    assert "Of the 12³ = 1,728 possible strings of 3 letters it drew about 88% and of the " \
           "12⁴ = 20,736 of 4 letters about 16%" in said
    assert said.endswith("at 3 letters most test strings had also been trained on; from 4 "
                         "letters on most were new.")
    assert "144" not in said  # length 2 was not trained
    # Lengths 1 to 2 only: every tested trained length (2) was mostly drawn
    short = text.coverage_text(copying.training_coverage(np.arange(2, 7), 1, 2, 100, 64, 12),
                               12)
    assert "of length" not in short and "each length from 1 to 2" in short
    assert short.endswith("at 2 letters most test strings had also been trained on.")
    # 10 steps of 8 strings at lengths 5 to 8: 20 of each, none mostly drawn
    few = text.coverage_text(copying.training_coverage(np.arange(2, 13), 5, 8, 10, 8, 12), 12)
    assert few.endswith("at every length tested most test strings were new.")
    # trained on 1-letter strings only: nothing tested was trained
    none = text.coverage_text(copying.training_coverage(np.arange(2, 21), 1, 1, 100, 64, 12),
                              12)
    assert "strings of length 1 (100 steps" in none
    assert none.endswith("No tested length was trained: every test string was new.")


def forced(greedy, teacher):
    n = len(greedy)
    return copying.forced_reading([n], [greedy], [teacher], n)


def test_the_forced_sentence_separates_compounding_from_the_state():
    # Forced falls (0.9 -> 0.5, lowest 0.4 at 3): the state; greedy below it at every
    # later position, most at 4 (0.5 - 0.1); the last comes back above the lowest.
    said = text.forced_text(forced([0.9, 0.6, 0.3, 0.1], [0.9, 0.7, 0.4, 0.5]))
    assert "the first letter right 90% of the time and the last 50% (greedy: 90% and 10%); " \
           "its lowest is position 3, 40%." in said
    assert "Even with no earlier mistake to follow it copies the later letters less often" in said
    # with a decimal, so that 50.0% − 10.0% = 40.0% adds up as printed
    assert ("fewer right at every later position, by up to 40.0% of the strings (position 4: "
            "50.0% against 10.0%)") in said
    assert "the last letter (50%), read last by the encoder, is copied more often than " \
           "position 3" in said
    assert "[Teacher forcing](./#glossary-teacher-forcing)" in said
    # Forced flat: the fall is compounding; greedy equal at one later position: no "every"
    flat = text.forced_text(forced([0.9, 0.9, 0.5], [0.9, 0.9, 0.9]))
    assert "the fall along the string comes from errors compounding" in flat
    assert "fewer right, by up to 40.0% of the strings (position 3: 90.0% against 50.0%)" in flat
    assert "read last by the encoder" not in flat
    # No gap at all
    same = text.forced_text(forced([0.9, 0.5], [0.9, 0.5]))
    assert "gets no fewer right at any position: no errors compound" in same


def test_the_comparison_defines_the_charts_terms_and_links_greedy_decoding():
    # Trained on 2..10, 1,000 steps of 32: 32,000 / 9 ≈ 3,556 strings per length. Share
    # seen 1 − (1 − 1/N)^3556: N = 12² = 144 → ≈1, N = 12³ = 1,728 → 0.87, 12⁴ → 0.16.
    seen = copying.training_coverage(np.arange(2, 21), 2, 10, 1000, 32, 12)
    said = text.comparison_text(200, 2, 20, 12, seen)
    assert said.startswith("**Fixed context**: the decoder reads the encoder's last state "
                           "h_n alone")
    assert "**Attention**: at each step t it reads every encoder state h_j" in said
    assert ("200 fresh random strings of each length from 2 to 20 (drawn anew, not kept apart "
            "from training: at 2 and 3 letters most were also trained on; only 144 strings of "
            "2 letters exist, so the 200 draws must repeat some)") in said
    assert "([greedy decoding](./#glossary-greedy))" in said and "1/12" in said


def test_the_test_strings_sentence_follows_the_coverage_and_the_draws():
    # Trained on 10 only: 12¹⁰ strings, 32,000 draws, share ≈ 5e-7 > 0 but far below 0.5.
    few = copying.training_coverage(np.arange(2, 11), 10, 10, 1000, 32, 12)
    said = text.test_strings_text(200, few)
    assert "at the trained lengths some may also have been trained on" in said
    assert "only 144 strings of 2 letters exist, so the 200 draws must repeat some" in said
    # Tested at 3 to 5 only, trained on 6: nothing trained; 12³ = 1,728 ≥ 200, no repeat.
    none = copying.training_coverage(np.arange(3, 6), 6, 6, 10, 4, 12)
    said = text.test_strings_text(200, none)
    assert said == ("drawn anew, not kept apart from training: no tested length was trained, "
                    "so none was trained on")
    # 2 symbols, 50 draws: 2² = 4 and 2³ = 8 and 2⁴ = 16 and 2⁵ = 32 are all below 50.
    tiny = copying.training_coverage(np.arange(2, 7), 2, 6, 100, 10, 2)
    said = text.test_strings_text(50, tiny)
    assert "only 4 of 2 letters, 8 of 3 letters, 16 of 4 letters and 32 of 5 letters exist, " \
           "so the 50 draws must repeat some" in said


def test_the_layers_lead_links_the_tables_terms():
    said = text.layers_lead(compare_layers(16, 32))
    assert said.startswith("One layer of each kind on n = 16 tokens")
    for key in ("self-attention", "projection", "multiply-add"):
        assert f"(./#glossary-{key})" in said


def step(weights, probabilities, *, t=2, previous=0, token=1):
    return SimpleNamespace(t=t, weights=np.array(weights), probabilities=np.array(probabilities),
                           previous_token=previous, token=token)


def test_the_step_sentence_reads_the_step_and_its_check():
    # Source B, C, A (ids 1, 2, 0); step 2 copies C. The largest weight, 0.7, is on
    # position 2; the context rebuilt exactly; the top probability one rounding below 1.
    s = step([0.2, 0.7, 0.1], [1e-7, 1 - 1e-7], previous=1, token=2)
    # Printed to 2 decimals the weights add up to 0.99 and rebuild c_t 0.0098 off.
    check = copying.StepReading(rebuilt=np.zeros(2), difference=0.0, best=2, mean_update=0.4,
                                rounded_difference=0.0098, rounded_sum=0.99, decimals=2)
    said = text.step_text(s, check, [1, 2, 0], 32)
    assert "largest on position 2 (C, 0.70)" in said
    assert "the weighted sum of the 3 encoder states (32 numbers each" in said
    assert "from the full-precision weights (shown rounded to 2 decimals), it differs by " \
        "exactly 0; from the rounded weights, which add up to 0.99, by up to 0.0098)" in said
    assert "last letter written (B)" in said
    assert "keeping on average 0.40 of the old one" in said
    assert "gives C the largest probability, 1 − 1.0×10⁻⁷." in said
    assert said.endswith("The letter to copy was C.")
    rounded = copying.StepReading(rebuilt=np.zeros(2), difference=1.2e-7, best=2,
                                  mean_update=0.4, rounded_difference=0.0, rounded_sum=1.0,
                                  decimals=2)
    assert "it differs by 1.2×10⁻⁷ (rounding)" in text.step_text(s, rounded, [1, 2, 0], 32)
    first = step([0.2, 0.7, 0.1], [0.5, 0.5], t=1, previous=12)
    assert "last letter written (BOS)" in text.step_text(first, check, [1, 2, 0], 32)


def test_the_layers_sentence_reads_which_part_is_cheaper():
    # n = 16, d = 32: the whole attention layer, 2·16²·32 + 4·16·32² = 16,384 + 65,536 =
    # 81,920 < the GRU's 6·16·32² = 98,304; with n = 200, d = 8 it is 2·200²·8 + 4·200·8²
    # = 640,000 + 51,200 = 691,200 > 6·200·8² = 76,800.
    assert ("the whole self-attention layer, its four projections included, costs less than "
            "the GRU layer (81,920 against 98,304 multiply-adds, of which attention's own "
            "part, Q Kᵀ and the weights times V, is 16,384") in text.layers_text(
                compare_layers(16, 32))
    assert "costs more than the GRU layer (691,200 against 76,800" in \
        text.layers_text(compare_layers(200, 8))
    # Vaswani et al.'s first reason, cost per layer, read from n and d: 16²·32 = 8,192
    # against 16·32² = 16,384 (n < d); 200²·8 = 320,000 against 200·8² = 12,800 (n > d).
    # Counted whole, as in the table: 81,920 against 98,304; 691,200 against 76,800.
    assert "self-attention's is the smaller when n < d (here n = 16 < d = 32: without the " \
        "constant factors, n²·d = 8,192 against n·d² = 16,384; counted whole, as in the " \
        "table, 81,920 against 98,304;" in text.layers_text(compare_layers(16, 32))
    assert "a recurrent layer's is the smaller when n > d (here n = 200 > d = 8: without the " \
        "constant factors, n²·d = 320,000 against n·d² = 12,800; counted whole, as in the " \
        "table, 691,200 against 76,800;" in text.layers_text(compare_layers(200, 8))


def softmax_step(exps: list[float]) -> SimpleNamespace:
    """The numbers softmax_line reads of one step: the scores' exponentials (the largest 1,
    at position 1) and their sum."""
    exps = np.array(exps)
    return SimpleNamespace(t=3, position=1, shift=4.0, exps=exps, total=float(exps.sum()),
                           weights=exps / exps.sum())


def test_the_softmax_sum_adds_up_as_printed_or_says_it_does_not():
    # 1 + 0.126 + 0.126 + 0.126 = 1.378: to 3 decimals the printed terms add up to Z
    exact = softmax_line(softmax_step([1.0, 0.126, 0.126, 0.126]))
    assert "1 + 0.126 + 0.126 + 0.126 = 1.378" in exact and "unrounded" not in exact
    # 3 × 0.12555 = 0.37665, Z = 1.37665: to 2 decimals 1 + 3 × 0.13 = 1.39, not 1.38; to
    # 3 decimals 1 + 3 × 0.126 = 1.378, not 1.377: Z is said to come from the unrounded terms
    rounded = softmax_line(softmax_step([1.0, 0.12555, 0.12555, 0.12555]))
    assert (r"1 + 0.13 + 0.13 + 0.13 \approx 1.38\ (\text{from the unrounded terms})"
            in rounded)
    assert r"\frac{1}{1.38}" in rounded  # the fraction keeps Z alone


def test_what_to_notice_reads_the_direction_and_the_added_numbers():
    r = lengths_reading([1.0, 1.0, 0.95, 0.8, 0.6], [0.9, 0.8, 0.5, 0.3, 0.2])
    items = text.notice_items(r, alignment(0.9), {"fixed": 1000, "attention": 1250}, 200)
    assert items[0].startswith("Over the trained lengths the fixed-context model falls from "
                               "80% of the letters right at length 3 to 50% at length 4")
    assert "stays between 95% and 100%" in items[0]
    assert "75% of the output steps" in items[1]
    # the 0.90 is the mean over the fresh strings (alignment's length 4), not the example
    assert "over 200 fresh strings of 4 letters a step puts on average 0.90 of its weight " \
           "on the copied position itself" in items[1]
    assert "has 250 more trained numbers than the fixed one (W_a, U_a and v_a of the score: 25% " \
           "more)" in items[2]
    rising = lengths_reading([1.0] * 5, [0.1, 0.2, 0.3, 0.4, 0.5], low=1, high=1)
    said = text.notice_items(rising, alignment(0.9), {"fixed": 10, "attention": 11}, 200)[0]
    assert said.startswith("From the shortest tested length the fixed-context model stays")


def test_symbols_are_letters_and_the_first_input_is_bos():
    assert [text.symbol(i) for i in (0, 11, 12)] == ["A", "L", "BOS"]
