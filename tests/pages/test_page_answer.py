"""Lesson 12, what attention does for the answer (AppTest). A preset's study is computed
once per machine and kept on disk; the tests read the same study through the core and
check what the page says against it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import NOT_FUZZED, assert_no_exception, chart_array, open_page, text_of

from attncore import lm
from attncore.lm import answer, patching
from tests.model_marks import needs_smollm

pytestmark = needs_smollm
PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "12_Attention_for_the_answer.py")
CAPITAL = answer.PRESETS["A capital city"]


@pytest.fixture(scope="module")
def study() -> answer.AnswerStudy:
    return answer.study_texts(lm.model(), *CAPITAL)


def two(x: float) -> str:
    return f"{x:.2f}"


def test_the_patching_button_is_never_fuzzed():
    assert "ans_run" in NOT_FUZZED


def test_the_defaults_show_the_studys_numbers_and_say_what_they_mean(study):
    at = open_page(PAGE, timeout=120)
    assert_no_exception(at, "defaults")
    metrics = {m.label: m.value for m in at.metric}
    assert two(study.ld_clean) in metrics.values() and two(study.ld_corrupt) in metrics.values()
    # drawn with layers across: the transposes of the (L, H) and (L, T) grids
    np.testing.assert_allclose(chart_array(at, "ans_fig_heads"), study.heads.T, atol=1e-6)
    np.testing.assert_allclose(chart_array(at, "ans_fig_residual"), study.residual.T,
                               atol=1e-6)
    text = text_of(at)
    # The top head, found here independently of the page's sort: the grid's largest cell.
    layer, head = np.unravel_index(np.argmax(study.heads), study.heads.shape)
    assert f"Patching **L{layer + 1} H{head + 1} ({two(study.heads.max())})** alone" in text
    # The split adds up: the page's sum is the parts' sum, beside the run's own LD.
    parts = study.attribution.embed + study.attribution.heads.sum() + study.attribution.ffn.sum()
    assert f"= **{parts:.4f}**; the clean LD is **{study.ld_clean:.4f}**" in text
    # Where the information sits: the residual grid's own runs of layers, read here from it.
    at_france = np.flatnonzero(study.residual[:, 3] >= 0.5)
    at_last = np.flatnonzero(study.residual[:, 4] >= 0.5)
    assert f"entering layers 1–{at_france.max() + 1}: the changed token ('␣France')" in text
    assert f"entering layers {at_last.min() + 1}–30: the last token ('␣is')" in text
    # The lens: " Paris" is top-1 after the last layer and after no earlier one (this model,
    # this prompt), so the page must say "only after the last layer".
    ranks = study.lens.rank
    assert ranks[-1] == 1 and (ranks[:-1] > 1).all()
    assert "ranks 1st only after the last layer, 30" in text


def test_the_knockout_window_redraws_its_section_with_its_own_numbers(study):
    at = open_page(PAGE, timeout=120)
    at.slider(key="ans_window").set_value(1).run()
    assert_no_exception(at, "window of 1")
    windows, probs, p_none = patching.knockout(lm.model(), study.runs, 1)
    np.testing.assert_allclose(chart_array(at, "ans_fig_knockout", "y"), probs, atol=1e-6)
    worst = int(np.argmin(probs))
    # a one-layer window is named "layer n", not "layers n"
    assert f"Cutting the edge in layer {worst + 1} leaves {probs[worst]:.3f}" in text_of(at)
    assert f"With nothing cut p(`␣Paris`) is {p_none:.3f}" in text_of(at)


@pytest.mark.parametrize("clean, corrupt, answer_text, wrong, message", [
    ("The capital of France is", "The capital of Italy is now", " Paris", " Rome",
     "the clean prompt has 5 tokens and the corrupted one 6"),
    ("The capital of France is", "The capital of Italy is", " Parisian", " Rome",
     "is 2 tokens ('␣Paris' | 'ian')"),
    ("The capital of France is", "The capital of France is", " Paris", " Rome",
     "the same tokens"),
    ("The capital of France is", "The capital of Italy is", "", " Rome", "the answer is empty"),
])
def test_a_bad_pair_is_refused_with_a_message_naming_the_problem(clean, corrupt, answer_text,
                                                                  wrong, message):
    at = open_page(PAGE, ans_preset="Your own pair", ans_clean=clean, ans_corrupt=corrupt,
                   ans_answer=answer_text, ans_wrong=wrong)
    assert_no_exception(at, message)
    assert any(message in e.value for e in at.error), [e.value for e in at.error]
    assert not at.metric  # nothing computed from a bad pair


def test_an_own_pair_waits_for_the_button_then_shows_its_grids():
    pair = ("The capital of Japan is", "The capital of China is", " Tokyo", " Beijing")
    at = open_page(PAGE, timeout=120, ans_preset="Your own pair", ans_clean=pair[0],
                   ans_corrupt=pair[1], ans_answer=pair[2], ans_wrong=pair[3])
    assert_no_exception(at, "own pair")
    assert any("Press the button" in c.value for c in at.caption)
    assert not at.metric
    at.button(key="ans_run").click().run()
    assert_no_exception(at, "own pair patched")
    expected = answer.study_texts(lm.model(), *pair)
    np.testing.assert_allclose(chart_array(at, "ans_fig_heads"), expected.heads.T, atol=1e-6)
