"""Lesson 12's sentences (pages/text/attention_for_the_answer.py) as plain functions of
results made up here, each chosen so that one branch of a sentence must be taken; the
expected words and numbers are worked out by hand in the comments."""

from __future__ import annotations

import numpy as np
import pytest

from attncore.lm.answer import FirstGuess
from attncore.lm.lens import Attribution
from attncore.lm.pair import Pair
from pages.text import attention_for_the_answer as text

CLEAN = ["The", "␣capital", "␣of", "␣France", "␣is"]
CORRUPT = ["The", "␣capital", "␣of", "␣Italy", "␣is"]


def make_pair(clean: list[str] = CLEAN, corrupt: list[str] = CORRUPT) -> Pair:
    ids = {t: n for n, t in enumerate(sorted(set(clean) | set(corrupt)))}
    return Pair(clean=np.array([ids[t] for t in clean]),
                corrupt=np.array([ids[t] for t in corrupt]), answer=100, wrong=101,
                clean_tokens=clean, corrupt_tokens=corrupt, answer_token="␣Paris",
                wrong_token="␣Rome")


def test_the_pair_shows_its_changed_positions_in_bold_and_counts_them():
    one = text.pair_text(make_pair())
    assert one.startswith("Clean (5 tokens): `The` · `␣capital` · `␣of` · **`␣France`** · `␣is`")
    assert "Corrupted: `The` · `␣capital` · `␣of` · **`␣Italy`** ·" in one
    assert one.endswith("Answer `␣Paris` against `␣Rome`; the changed position is in bold.")
    two = text.pair_text(make_pair(corrupt=["A", "␣capital", "␣of", "␣Italy", "␣is"]))
    assert "**`The`**" in two and two.endswith("the changed positions are in bold.")
    assert text.changed_names(make_pair()) == "'␣France'"


def test_the_note_counts_the_patched_runs():
    # 30 layers × (9 heads + 5 positions) = 420 runs
    note = text.patching_note(30, 9, 5, preset=True)
    assert note.startswith("Patching runs the model about 420 times on 5 tokens")
    assert note.endswith("kept for every student of this machine.")
    assert text.patching_note(2, 4, 5, preset=False).endswith("Press the button.")


@pytest.mark.parametrize("clean, corrupt, words", [
    (2.0, 3.5, "reads backwards"),  # gap −1.5
    (2.0, 2.0, "reads backwards"),  # gap 0: at least as much
    (2.5, 2.0, "differ by only 0.50"),  # gap 0.5 < 1
])
def test_a_gap_that_misleads_recovery_is_warned_of(clean, corrupt, words):
    assert words in text.gap_warning(clean, corrupt, "␣Paris")


def test_a_clear_gap_needs_no_warning():
    assert text.gap_warning(6.0, -2.0, "␣Paris") is None


@pytest.mark.parametrize("rank, words", [
    ([900, 40, 7, 3, 2, 2, 5], "never ranks 1st, not even after the last layer, 6"),
    ([900, 40, 7, 3, 2, 2, 1], "ranks 1st only after the last layer, 6"),
    ([900, 40, 1, 1, 1, 1, 1], "first ranks 1st after layer 2 and stays there"),
    ([900, 1, 2, 1, 1, 1, 1], "first ranks 1st after layer 1, but not at every later layer"),
])
def test_the_lens_sentence_follows_the_ranks(rank, words):
    said = text.lens_text(np.array(rank), "␣Paris")
    # six layers: "a few before the last" is layer 6 − 3 = 3, row 3 of the lens
    assert said == (f"`␣Paris` ranks 900 after the embedding, {rank[3]:,} after layer 3, and "
                    f"{words}.")


def test_a_shallow_model_skips_the_late_layer():
    # 2 layers: no layer "a few before the last"
    assert text.lens_text(np.array([1234, 5, 1]), "x") == (
        "`x` ranks 1,234 after the embedding, and ranks 1st only after the last layer, 2.")


def attribution(biases: float = 0.0, ld: float | None = None) -> Attribution:
    heads = np.array([[0.5, -3.0], [1.25, 0.0]])  # 2 layers, 2 heads: sum −1.25
    ffn = np.array([2.0, 0.5])  # sum 2.5
    total = 0.25 - 1.25 + 2.5 + biases
    return Attribution(embed=0.25, heads=heads, ffn=ffn, ld=total if ld is None else ld,
                       biases=biases)


def test_the_split_names_every_component_and_adds_up():
    names, parts = text.components(attribution(), biases=False)
    assert names == ["embedding", "L1 H1", "L1 H2", "L2 H1", "L2 H2", "FFN 1", "FFN 2"]
    assert parts.sum() == pytest.approx(1.5)  # 0.25 − 1.25 + 2.5
    said = text.attribution_sum_text(attribution(), biases=False)
    assert said.startswith("Embedding 0.250 + 4 heads -1.250 + 2 FFNs 2.500 = **1.5000**; "
                           "the clean LD is **1.5000**: they differ by exactly 0 ")
    names, parts = text.components(attribution(biases=0.125), biases=True)
    assert names[-1] == "biases" and parts[-1] == 0.125
    # the run's own LD 1.6255: the parts' 1.625 differs by −0.0005
    said = text.attribution_sum_text(attribution(biases=0.125, ld=1.6255), biases=True)
    assert " + biases 0.125 = **1.6250**; the clean LD is **1.6255**" in said
    assert "differ by -5.0×10⁻⁴" in said


def test_the_largest_part_is_the_largest_in_size_of_either_sign():
    names, parts = text.components(attribution(), biases=False)
    # L1 H2's −3.0 outweighs FFN 1's 2.0
    assert text.largest_part_caption(names, parts).endswith(
        "The largest part here is L1 H2's, -3.00.")
    # the chart's 7 bars, largest in size first: −3.0, 2.0, then the rest; its alt names the
    # most negative part as such, not as the "smallest"
    order = np.argsort(-np.abs(parts), kind="stable")
    shown = [names[k] for k in order]
    alt = text.largest_parts_alt(shown, parts[order], limit=2)
    assert alt.startswith("The 7 largest direct parts of the logit difference in size, either "
                          "sign. Largest in size: “L1 H2” −3; “FFN 1” 2.")
    assert alt.endswith("The most negative: “L1 H2”, −3.") and "mallest" not in alt
    assert text.largest_parts_alt(["a", "b"], np.array([2.0, 0.5])).endswith(
        "None is negative.")
    assert text.largest_parts_title(12, 7.3125) == (
        "The 12 largest parts of LD = 7.31 in size, either sign")


def test_the_carriers_are_read_from_the_residual_grid():
    pair = make_pair()  # changed position 3 (from 0), last 4
    residual = np.array([  # (L = 5, T = 5)
        [0, 0, 0, 1.0, 0.0],  # layer 1: the changed token
        [0, 0, 0, 0.9, 0.1],  # layer 2: the changed token
        [0, 0, 0, 0.3, 0.4],  # layer 3: none restores half
        [0, 0.6, 0, 0.2, 0.2],  # layer 4: position 2, '␣capital'
        [0, 0, 0, 0.0, 1.0],  # layer 5: the last token
    ])
    runs = text.carrier_runs(residual, pair)
    assert runs == [(0, 1, "changed"), (2, 2, ""), (3, 3, "2:␣capital"), (4, 4, "last")]
    assert text.carrier_lines(runs, pair) == [
        "entering layers 1–2: the changed token ('␣France')",
        "entering layer 3: no single position (none restores half)",
        "entering layer 4: '2:␣capital'",
        "entering layer 5: the last token ('␣is')"]
    # no run of the changed token is followed straight by one of the last token
    assert text.moved_into(runs) is None


def test_the_layer_where_the_answer_moves_is_the_one_before_the_last_tokens_run():
    residual = np.array([[0, 0, 0, 1.0, 0.0], [0, 0, 0, 0.8, 0.02], [0, 0, 0, 0.1, 0.9]])
    pair = make_pair()
    runs = text.carrier_runs(residual, pair)
    # the changed token carries it into layers 1–2, the last token into layer 3: it moves
    # inside layer 2, and jumps there: 0.02 entering layer 2 is under 0.1
    assert text.moved_into(runs) == 2
    assert text.move_layers(residual, pair, 2) == (2, 2)
    said = text.moved_text(pair, (2, 2), residual[:, -1])
    assert said.startswith("The last token's patch restores 0.02 entering layer 2 and 0.90 "
                           "entering layer 3: the information moves from '␣France' to the "
                           "last token inside layer 2, where its recovery jumps from near 0 "
                           "(under 0.1).")
    assert "so heads of layer 2 must move it" in said


def ioi_like() -> np.ndarray:
    """The last token's recoveries of a move spread over layers: near 0 entering layers 1–3,
    then 0.12, 0.33, 0.38 entering layers 4–6, and 0.92 entering layer 7 (8 layers)."""
    residual = np.zeros((8, 5))
    residual[:, 4] = [0.0, 0.0, -0.01, 0.12, 0.33, 0.38, 0.92, 0.97]
    residual[:6, 3] = [1.0, 1.0, 1.0, 0.91, 0.61, 0.58]  # the changed token, into layer 6
    return residual


def test_a_move_spread_over_layers_names_them_all_and_no_single_layer():
    residual, pair = ioi_like(), make_pair()
    runs = text.carrier_runs(residual, pair)
    assert runs == [(0, 5, "changed"), (6, 7, "last")]
    into = text.moved_into(runs)
    assert into == 6  # the last token carries it from layer 7 on
    # the last stream near 0 (|−0.01| < 0.1) enters layer 3: it moves inside layers 3–6
    assert text.move_layers(residual, pair, into) == (3, 6)
    said = text.moved_text(pair, (3, 6), residual[:, 4])
    assert said == ("The information moves from '␣France' to the last token over layers "
                    "3–6, not inside one layer: the last token's patch restores -0.01 "
                    "entering layer 3, then 0.12, 0.33, 0.38 and 0.92 entering layers 4 to 7. "
                    "Only attention moves information between positions, so heads of these "
                    "layers move it. The head grid below looks for them.")
    assert "inside layer 6" not in said


def test_a_long_gradual_move_gives_its_ends_and_its_largest_step():
    pair = make_pair()
    residual = np.zeros((12, 5))
    residual[:, 4] = [0, 0.05, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.9, 1.0, 1.0]
    residual[:9, 3] = 1.0
    # near 0 entering layers 1–2; the last token carries it from layer 10: layers 2–9
    assert text.move_layers(residual, pair, 9) == (2, 9)
    said = text.moved_text(pair, (2, 9), residual[:, 4])
    # 9 values (entering layers 2 to 10): too many to list; the largest step is 0.45 -> 0.90,
    # inside layer 9
    assert ("restores 0.05 entering layer 2 and 0.90 entering layer 10; its largest step is "
            "inside layer 9, from 0.45 to 0.90.") in said


def test_the_heads_that_restore_most_are_set_against_the_layers_of_the_move():
    top = [(5, 3, 0.58), (7, 1, 0.27), (4, 0, 0.22), (1, 4, 0.18), (3, 2, 0.16)]
    # layers 3–6 hold L6 H4, L5 H1 and L4 H3 (layers from 1: 6, 5, 4)
    assert text.agreement_text(top, (3, 6)) == (
        "3 of the 5 heads that restore most sit in layers 3–6, where the residual grid showed "
        "the information move: L6 H4, L5 H1, L4 H3, the first the one that restores most.")
    assert text.agreement_text(top, (8, 8)) == (
        "1 of the 5 heads that restore most sits in layer 8, where the residual grid showed "
        "the information move: L8 H2.")
    assert text.agreement_text(top, (9, 9)) is None
    assert text.agreement_text(top, None) is None


def test_the_embedding_patch_is_one_up_to_rounding():
    assert "recovery 1, 1 up to float32 rounding (exactly 0:" in text.embedding_back_text(1.0)
    said = text.embedding_back_text(1 - 2**-23)  # float32's step below 1
    assert "recovery 0.999999881, " in said and "(-1.2×10⁻⁷:" in said


def test_the_head_sentence_names_the_top_heads_and_counts_those_pushing_back():
    heads = np.array([[0.1, -0.2], [0.6, 0.04]])  # one below −0.05; sum 0.54
    top = [(1, 0, 0.6), (0, 0, 0.1), (1, 1, 0.04)]
    said = text.heads_text(heads, top)
    assert said == ("Patching **L2 H1 (0.60)** alone restores the most; then L1 H1 (0.10), "
                    "L2 H2 (0.04). 1 head pushes the other way (below −0.05). The 4 "
                    "single-head recoveries add up to 0.54: effects through later layers do "
                    "not simply add.")
    assert "3 heads push the other way" in text.heads_text(heads - 0.3, top)


def test_the_knockout_sentence_without_a_harmful_window():
    said = text.knockout_text([(0, 1), (1, 2)], np.array([0.5, 0.4]), 0.6, "␣Paris")
    # the lowest is the second window, layers 2–3; 0.4 is not below 0.6 / 2
    assert said == ("With nothing cut p(`␣Paris`) is 0.600. Cutting the edge in layers 2–3 "
                    "leaves 0.400, the lowest. No window halves it.")


def test_the_knockout_sentence_names_the_harmful_windows_and_their_shared_layers():
    windows = [(first, first + 2) for first in range(6)]  # 3 layers each
    probs = np.array([0.5, 0.2, 0.1, 0.25, 0.5, 0.1])  # below 0.3: windows 2, 3, 4 and 6
    said = text.knockout_text(windows, probs, 0.6, "x")
    # starting at layers 2, 3, 4 (a run) and 6; 2–4, 3–5, 4–6 and 6–8 share no layer
    assert said.endswith("4 of the 6 windows at least halve it (those starting at layers "
                         "2–4, 6).")
    assert "Cutting the edge in layers 3–5 leaves 0.100" in said  # the first lowest
    said = text.knockout_text(windows, np.array([0.5, 0.2, 0.1, 0.5, 0.5, 0.5]), 0.6, "x")
    # windows 2–4 and 3–5 share layers 3–4
    assert said.endswith("2 of the 6 windows at least halve it (those starting at layers "
                         "2–3); all of them include layers 3–4.")
    one = text.knockout_text(windows, np.array([0.5, 0.5, 0.1, 0.5, 0.5, 0.5]), 0.6, "x")
    assert one.endswith("leaves 0.100, the lowest. It is the only window that halves it.")


def test_one_layer_windows_are_named_by_their_layers():
    windows = [(n, n) for n in range(6)]
    probs = np.array([0.5, 0.2, 0.1, 0.5, 0.5, 0.25])  # below 0.3: layers 2, 3 and 6
    said = text.knockout_text(windows, probs, 0.6, "x")
    assert said.endswith("Cutting the edge in layer 3 leaves 0.100, the lowest. 3 of the 6 "
                         "windows at least halve it (layers 2–3, 6).")


def test_the_knockout_alternative_says_its_lowest_point():
    windows = [(first, first + 2) for first in range(4)]
    probs = np.array([0.7, 0.2, 0.05, 0.6])
    alt = text.knockout_alt(windows, probs, 0.75, "Paris")
    # said numbers (3 significant digits, no trailing zeros)
    assert alt == ("p of Paris with the edge cut, one point per window of 3 layers by its first "
                   "layer: 0.7 for layers 1–3, 0.6 for layers 4–6; lowest 0.05, for "
                   "layers 3–5. With nothing cut: 0.75.")
    one = text.knockout_alt([(0, 0), (1, 1)], np.array([0.7, 0.1]), 0.75, "Paris")
    assert "window of 1 layer by" in one and "lowest 0.1, for layer 2" in one


def test_the_default_window_is_the_narrowest_and_says_why():
    from attncore.lm import answer

    assert answer.KNOCKOUT_WINDOW == 1
    assert text.WINDOW_REASON.startswith("The window starts at 1 layer, the narrowest")


def test_runs_of_consecutive_numbers():
    assert text.runs_of([12, 16, 17, 18]) == [(12, 12), (16, 18)]
    assert text.runs_of([]) == []


def looks_grid() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    looks = np.array([[0.9, 0.6], [0.1, 0.0]])  # two heads look (≥ 0.5)
    heads = np.array([[0.8, 0.01], [0.0, -0.2]])  # L1 H2 looks and does not matter
    first = np.array([[0.0, 0.3], [0.7, 0.9]])  # two sinks, recoveries 0.0 and −0.2
    return looks, heads, first


def test_looking_against_mattering():
    looks, heads, first = looks_grid()
    lines = text.looks_lines(looks, heads, first, [(0, 0, 0.8)], make_pair())
    r = np.corrcoef(looks.ravel(), heads.ravel())[0, 1]  # a second method than the page's
    r_others = np.corrcoef(looks.ravel()[1:], heads.ravel()[1:])[0, 1]  # L1 H1 is cell 0
    ending = ": that one head makes most of it." if abs(r_others) < abs(r) / 2 else "."
    assert lines == [
        "L1 H1, the head that restores most, puts 0.90 of the last token's attention on "
        "'␣France'.",
        "2 heads put at least 0.5 of it there; of these, 1 moves the answer by less than "
        "0.05 of the way when patched alone: alone it does not carry the answer. That does "
        "not show it is unnecessary: patching one head into the corrupted run tests whether "
        "it suffices, not whether it is needed, and another head can do the same work.",
        "2 heads put at least 0.5 of the last token's attention on the first token, the "
        "attention sink of lessons 10 and 11 (lesson 10 averages over the query rows after "
        "the first; here only the last token's row counts); their recoveries lie between "
        "-0.20 and 0.00.",
        f"Across all 4 heads the correlation between looking and restoring (patched alone) "
        f"is r = {r:.2f}; without L1 H1 it is {r_others:.2f}{ending}"]
    # no looker that moves it by less than 0.05: each of the 2 moves it by 0.05 or more
    assert text.looks_lines(looks, heads + 0.1, first, [(0, 0, 0.8)], make_pair())[1] == (
        "2 heads put at least 0.5 of it there; each moves the answer by at least 0.05 of the "
        "way when patched alone.")


def test_one_head_that_makes_the_correlation_is_said():
    # Three heads that look little and restore nothing, in no order, and one that looks
    # and restores: r is high with it and, among the other three, 0 or of either sign.
    looks = np.array([[0.9, 0.1], [0.2, 0.15]])
    heads = np.array([[0.9, 0.01], [0.012, 0.02]])
    line = text.looks_lines(looks, heads, np.zeros((2, 2)), [(0, 0, 0.9)], make_pair())[-1]
    r = np.corrcoef(looks.ravel(), heads.ravel())[0, 1]  # 0.994
    r_others = np.corrcoef([0.1, 0.2, 0.15], [0.01, 0.012, 0.02])[0, 1]  # 0.189
    assert r > 0.9 and abs(r_others) < r / 2
    assert line.endswith(f"is r = {r:.2f}; without L1 H1 it is {r_others:.2f}: that one "
                         "head makes most of it.")


def test_no_sink_line_when_the_first_token_is_the_changed_one():
    looks, heads, first = looks_grid()
    pair = make_pair(corrupt=["A", *CLEAN[1:]])  # position 0 changed
    lines = text.looks_lines(looks, heads, first, [(0, 0, 0.8)], pair)
    assert len(lines) == 3 and "sink" not in " ".join(lines)


def test_a_correlation_with_a_constant_grid_is_not_a_number_shown():
    looks, heads, first = looks_grid()
    lines = text.looks_lines(np.zeros_like(looks), heads, first, [(0, 0, 0.8)], make_pair())
    assert lines[-1] == ("Across all 4 heads the correlation between looking and restoring "
                         "(patched alone) is undefined: no head looks more than another.")
    assert "nan" not in " ".join(lines)
    assert lines[1] == "0 heads put at least 0.5 of it there."


def test_the_heads_that_move_the_answer_are_counted():
    _, heads, _ = looks_grid()  # |0.8|, |−0.2| ≥ 0.05; 0.01 and 0 are not
    assert text.moving_text(heads).startswith(
        "Here 2 of the 4 heads move the answer by at least 0.05 of the way when patched "
        "alone, in either direction (1 towards the clean answer, 1 away from it);")
    # 0.05 itself counts, towards; −0.05 away; −0.04 and 0.049 do not: 2 = 1 + 1
    assert "Here 2 of the 4 heads" in text.moving_text(np.array([0.05, -0.05, -0.04, 0.049]))
    assert "(1 towards the clean answer, 1 away from it)" in text.moving_text(
        np.array([0.05, -0.05, -0.04, 0.049]))


# ---- what LD means, the lens's first row, the attribution's symbols, the named heads ----

@pytest.mark.parametrize("ld, odds", [
    (2.0, "7.4 : 1"),  # e² = 7.389
    (0.0, "1 : 1"),
    (7.3125, "1,500 : 1"),  # e^7.3125 = 1,500.6, to 3 significant digits
    (-6.02, "1 : 412"),  # e^6.02 = 411.6
    (33.5, "3.54×10¹⁴ : 1"),  # e^33.5 = 10^(33.5 / ln 10) = 10^14.549 = 3.54×10¹⁴
])
def test_ld_is_said_as_odds(ld, odds):
    assert text.odds_text(ld) == odds


def test_the_ld_sentence_defines_ld_and_gives_both_odds():
    said = text.ld_text(7.3125, -6.02, "␣Paris", "␣Rome")
    assert said == ("LD = logit(`␣Paris`) − logit(`␣Rome`) at the last position. The softmax "
                    "makes p(`␣Paris`) / p(`␣Rome`) = $e^{LD}$, the odds of `␣Paris` against "
                    "`␣Rome`: the clean prompt's LD of 7.31 is odds of 1,500 : 1, the corrupted "
                    "prompt's LD of -6.02 is odds of 1 : 412.")


def guess(top: int = 7, tied: bool = True) -> FirstGuess:
    pieces = ("␣is", "␣is" if top == 7 else "␣was", "␣was" if top == 7 else "␣is")
    return FirstGuess(token=7, top=top, runner_up=9 if top == 7 else 7, token_logit=101.2,
                      top_logit=101.2 if top == 7 else 105.0, runner_up_logit=67.7
                      if top == 7 else 101.2, pieces=pieces, tied=tied)


def test_the_lens_first_row_is_the_token_itself_when_the_output_is_tied():
    p = 1 - 2.9e-15
    said = text.first_row_text(guess(), p, learned_positions=False)
    # 101.2 − 67.7 = 33.5: odds e^33.5 = 3.54×10¹⁴ : 1
    assert said.startswith("Row 0 (after layer 0: no layer has run) is `␣is`'s own embedding. "
                           "The output matrix is the embedding table transposed (tied)")
    assert ("`␣is` scores 101.2, the runner-up `␣was` 67.7: a gap of 33.5, odds of "
            "3.54×10¹⁴ : 1 against the runner-up, so p(`␣is`) = 1 − 2.9×10⁻¹⁵.") in said
    assert "0.99999" not in said
    assert "is 1 to float64's precision" in text.first_row_text(guess(), 1.0, False)
    assert "plus its position's" in text.first_row_text(guess(), p, learned_positions=True)


def test_the_lens_first_row_when_another_token_wins_or_the_output_is_not_tied():
    said = text.first_row_text(guess(top=3), 0.97, False)
    assert "yet the token itself, 101.2, is not the top: `␣was` scores 105.0" in said
    assert "repeats the input" not in said
    said = text.first_row_text(guess(tied=False), 0.97, False)
    assert "through an output matrix of its own (not tied to the embedding)" in said


def test_the_lens_alternative_says_the_worst_rank_not_the_highest():
    rank = np.array([4316, 2678, 5012, 90, 1])  # 4 layers
    assert text.lens_alt(rank, "Paris") == (
        "Rank of Paris after each layer (1 = the top guess; log scale): 4,316 after the "
        "embedding (layer 0), worst rank 5,012 after layer 2, 1 after the last layer, 4.")
    rank = np.array([900, 40, 1, 3, 2])
    assert "best rank 1 first after layer 2, 2 after the last layer, 4." in text.lens_alt(
        rank, "x")


def test_the_attribution_names_its_heads_and_its_symbols():
    said = text.attribution_intro(attribution(), learned_positions=False, biases=False,
                                  rms=True)
    # the largest head in size is L1 H2 (−3.0): the example of a head's name
    assert ("A head is named by its layer and its number in that layer, both counted from 1: "
            "[L1 H2](./#glossary-head-label) is head 2 of layer 1.") in said
    assert "Freeze the final RMSNorm's scale" in said
    terms = text.formula_terms(rms=True)
    assert "[rms](./#glossary-rms) the root mean square" in terms
    assert "[g](./#glossary-g) the final norm's gain" in terms
    assert "σ the standard deviation" in text.formula_terms(rms=False)


def test_the_scatter_names_the_heads_that_restore_most_the_one_pushing_back_and_a_looker():
    looks, heads, _ = looks_grid()
    top = [(0, 0, 0.8), (0, 1, 0.01)]
    strong, idle = text.labelled_heads(looks, heads, top)
    # L2 H2's −0.2 pushes back by 0.05 or more; L1 H2 looks (0.6) and moves it by 0.01
    assert strong == [(0, 0), (0, 1), (1, 1)]
    assert idle == [(0, 1)]
    assert text.labelled_text(2, True, idle, make_pair()) == (
        "Named: the 2 heads that restore most, the head that pushes the answer back most, and "
        "the 1 head that looks most at '␣France' (at least 0.5) yet, patched alone, moves it "
        "by less than 0.05.")
    strong, idle = text.labelled_heads(looks, np.abs(heads), top)
    assert strong == [(0, 0), (0, 1)]  # nothing pushes back
