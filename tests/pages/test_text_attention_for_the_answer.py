"""Lesson 12's sentences (pages/text/attention_for_the_answer.py) as plain functions of
results made up here, each chosen so that one branch of a sentence must be taken; the
expected words and numbers are worked out by hand in the comments."""

from __future__ import annotations

import numpy as np
import pytest

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
    residual = np.array([[0, 0, 0, 1.0, 0.0], [0, 0, 0, 0.8, 0.2], [0, 0, 0, 0.1, 0.9]])
    runs = text.carrier_runs(residual, make_pair())
    # the changed token carries it into layers 1–2, the last token into layer 3: it moves
    # inside layer 2
    assert text.moved_into(runs) == 2
    assert "to the last token inside layer 2" in text.moved_text(make_pair(), 2)
    assert text.agreement_text([(1, 0, 0.7)], 2).startswith(
        "The head that restores most sits in layer 2,")
    assert text.agreement_text([(2, 0, 0.7)], 2) is None
    assert text.agreement_text([(1, 0, 0.7)], None) is None


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
    assert one.endswith("1 of the 6 windows at least halve it (those starting at layer 3).")


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
    assert lines == [
        "L1 H1, the head that restores most, puts 0.90 of the last token's attention on "
        "'␣France'.",
        "2 heads put at least 0.5 of it there; of these, 1 change the answer by less than "
        "0.05 when patched: they look and do not matter here.",
        "2 heads put at least 0.5 on the first token, the attention sink of lessons 10 and "
        "11; their recoveries lie between -0.20 and 0.00.",
        f"Across all 4 heads the correlation between looking and mattering is r = {r:.2f}."]


def test_no_sink_line_when_the_first_token_is_the_changed_one():
    looks, heads, first = looks_grid()
    pair = make_pair(corrupt=["A", *CLEAN[1:]])  # position 0 changed
    lines = text.looks_lines(looks, heads, first, [(0, 0, 0.8)], pair)
    assert len(lines) == 3 and "sink" not in " ".join(lines)


def test_a_correlation_with_a_constant_grid_is_not_a_number_shown():
    looks, heads, first = looks_grid()
    lines = text.looks_lines(np.zeros_like(looks), heads, first, [(0, 0, 0.8)], make_pair())
    assert lines[-1].endswith("r = 0.00.") and "nan" not in " ".join(lines)
    assert lines[1].startswith("0 heads put at least 0.5")


def test_the_heads_that_move_the_answer_are_counted():
    _, heads, _ = looks_grid()  # |0.8|, |−0.2| ≥ 0.05; 0.01 and 0 are not
    assert text.moving_text(heads).startswith("Here 2 of the 4 heads move the answer by at "
                                              "least 0.05 of the way")
