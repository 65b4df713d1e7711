"""The glossary's entries for the words lessons 0 and 12 use (GRU, teacher forcing, greedy
decoding, BLEU, projection, LD, g, rms, a head's name), the lessons each entry names,
and one meaning per written form."""

from __future__ import annotations

import math

import pytest
from conftest import open_page

from pages.ui import glossary
from pages.ui.lessons import LESSONS


@pytest.mark.parametrize("key, lessons", [
    ("gru", {0, 6}), ("teacher-forcing", {0}), ("greedy", {0, 10}), ("bleu", {0}),
    ("projection", {0, 4}), ("logit-difference", {12}), ("g", {10, 12}), ("rms", {12}),
    ("head-label", {9, 12}),
])
def test_the_entries_lesson_0_and_lesson_12_need_name_their_lessons(key, lessons):
    entry = glossary.ALL[key]
    assert lessons <= {entry.lesson, *entry.also}, key
    assert all(n in {lesson.number for lesson in LESSONS} for n in (entry.lesson, *entry.also))


def test_the_logit_difference_says_how_it_turns_into_odds():
    meaning = glossary.ALL["logit-difference"].meaning
    # p(a)/p(b) = e^{z_a}/e^{z_b} = e^{LD}: LD = 2 gives e² = 7.389 to 1
    assert "$e^{LD}$ : 1" in meaning
    assert f"LD = 2: {math.exp(2):.1f} to 1" in meaning and "7.4 to 1" in meaning
    assert glossary.written_forms(glossary.ALL["logit-difference"]) == ("logit difference",
                                                                         "LD")


def test_activation_patching_defines_recovery_as_lesson_12_computes_it():
    from attncore.lm.pair import recovery
    meaning = glossary.ALL["activation-patching"].meaning
    assert "(patched − corrupted) / (clean − corrupted)" in meaning
    assert "share of the clean logit difference" not in meaning
    # clean 3, corrupted −1: a patched LD of 1 is halfway across the gap of 4, not 1/3 of 3.
    assert recovery([1.0], 3.0, -1.0).tolist() == [0.5]


def test_a_heads_name_is_not_the_number_of_layers_or_heads():
    meaning = glossary.ALL["head-label"].meaning
    assert "counted from 1" in meaning and "Not the number of layers L" in meaning
    assert glossary.written_forms(glossary.ALL["L"]) == ("L",)


def test_each_written_form_has_one_entry():
    """One meaning per symbol: no form (a symbol, a word) is written for two entries."""
    owner = {}
    for entry in glossary.ALL.values():
        for form in glossary.written_forms(entry):
            assert form not in owner, f"{form!r}: {owner.get(form)} and {entry.key}"
            owner[form] = entry.key


def test_the_default_forms_follow_the_name():
    assert glossary.written_forms(glossary.ALL["entropy"]) == ("entropy",)  # brackets out
    assert glossary.written_forms(glossary.ALL["kv-cache"]) == ("KV cache",)  # two capitals
    assert glossary.written_forms(glossary.ALL["d_k"]) == ("d_k", "d_v")  # the symbols
    assert glossary.written_forms(glossary.ALL["teacher-forcing"]) == ("teacher forcing",)


def test_an_entry_names_the_lesson_that_explains_it_and_those_that_use_it():
    assert glossary.lessons_note(glossary.ALL["greedy"]) == " *(Lesson 10; also lesson 0.)*"
    assert glossary.lessons_note(glossary.ALL["projection"]) == (
        " *(Lesson 4; also lessons 0, 7 and 8.)*")
    assert glossary.lessons_note(glossary.ALL["bleu"]) == " *(Lesson 0.)*"
    home = " ".join(m.value for m in open_page("dashboard.py").markdown)
    assert glossary.ALL["greedy"].meaning + " *(Lesson 10; also lesson 0.)*" in home
