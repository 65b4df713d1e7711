"""Interaction tests for lesson 6, scoring functions and seq2seq (AppTest, no browser)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import chart_array, chart_spec, open_page
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "6_Scoring_and_seq2seq.py")


def run(**query) -> AppTest:
    return open_page(PAGE, **query)


def markdown(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown)


def test_four_scores_with_parameter_counts():
    at = run()
    spec = chart_spec(at, "s2s_fig_scores")  # one figure: a row of weights per score
    assert spec["data"][0]["y"] == ["dot", "scaled dot", "general", "additive"]
    np.testing.assert_allclose(chart_array(at, "s2s_fig_scores").sum(axis=1), 1.0, atol=1e-6)
    # d = 16: general has d² = 256, additive d_a(2d + 1) = 16 × 33 = 528.
    counts = "| dot | qᵀk | 0 |", "| scaled dot | qᵀk / √d | 0 |", "| general | qᵀW k | 256 |"
    assert all(row in markdown(at) for row in counts) and "| 528 |" in markdown(at)


def test_each_section_has_its_own_step():
    # Moving one section's step changes that section only: its figures follow it, the
    # others keep theirs (each section reruns alone, as a fragment).
    at = run(s2s_model="Luong")
    before = {k: chart_spec(at, k) for k in ("s2s_fig_scores", "s2s_fig_alignment",
                                              "s2s_fig_local")}
    at.slider(key="s2s_align_step").set_value(4).run()
    assert chart_spec(at, "s2s_fig_alignment") != before["s2s_fig_alignment"]
    assert chart_spec(at, "s2s_fig_scores") == before["s2s_fig_scores"]
    assert chart_spec(at, "s2s_fig_local") == before["s2s_fig_local"]
    at.slider(key="s2s_step").set_value(4).run()
    assert "Weights of “chats”" in chart_spec(at, "s2s_fig_scores")["layout"]["title"]["text"]


def test_alignment_fills_row_by_row():
    at = run(s2s_model="Luong")
    for step in (1, 3, 4):
        at.slider(key="s2s_align_step").set_value(step).run()
        text = chart_spec(at, "s2s_fig_alignment")["data"][0]["text"]
        filled = [any(cell for cell in row) for row in text]
        assert filled == [r < step for r in range(4)]  # "J'aime les chats": J' aime les chats
        assert f"α_{step} sums to 1.000000" in markdown(at)


@pytest.mark.parametrize("step, source_index", [(1, 0), (2, 1), (4, 2)])
def test_luong_dot_aligns_the_translation(step, source_index):
    # Target J' aime les chats, source I love cats: J' -> I, aime -> love, chats -> cats.
    at = run(s2s_model="Luong")
    at.slider(key="s2s_align_step").set_value(step).run()
    alpha = chart_array(at, "s2s_fig_alpha", "y")
    assert int(np.argmax(alpha)) == source_index


def test_apostrophes_and_hyphens_stay_inside_words_on_the_page():
    at = run(s2s_source="I don't like state-of-the-art cats", s2s_target="L'homme n'aime pas")
    assert chart_spec(at, "s2s_fig_alpha")["data"][0]["x"] == [
        "I", "don't", "like", "state-of-the-art", "cats"]
    assert chart_spec(at, "s2s_fig_alignment")["data"][0]["y"] == [
        "L'", "homme", "n'", "aime", "pas"]


def test_steps_and_window_centre_are_counted_from_1():
    # Monotonic window at step t: the centre is source position t (counted from 1), the
    # same number as the slider, clipped to the source length S = 3.
    for step, centre in [(1, 1), (2, 2), (4, 3)]:
        at = run(s2s_local_step=str(step))
        assert f"p_t = {centre:.2f}" in markdown(at)
        assert chart_spec(at, "s2s_fig_local")["layout"]["title"]["text"].startswith(
            f"Local, p_t = {centre:.2f}")


def test_decoder_state_subscripts_render_without_braces():
    for model in ("Bahdanau", "Luong"):
        at = run(s2s_model=model)
        text = markdown(at)
        assert "_{" not in text and ("sₜ₋₁" in text if model == "Bahdanau" else "sₜ" in text)


def test_local_weights_are_zero_outside_the_window():
    at = run(s2s_window="1", s2s_local_step="1")
    local = chart_array(at, "s2s_fig_local", "y")
    # Step 1: monotonic p_t = 1, D = 1: only source tokens 1 and 2 may be non-zero.
    assert local[2] == 0.0 and local[:2].sum() > 0


def test_hard_attention_gradient_is_zero_on_the_page():
    at = run()
    table = next(d.value for d in at.table if "hard ‖dc/ds_j‖" in d.value.columns)
    assert (table["hard ‖dc/ds_j‖"] == 0).all() and (table["soft ‖dc/ds_j‖"] > 0).all()


@pytest.mark.parametrize("query, message, where", [
    ({"s2s_source": ""}, "Type both a source and a target", "info"),
    ({"s2s_target": "   "}, "Type both a source and a target", "info"),
    ({"s2s_source": " ".join(["word"] * 50)}, "only the first 20 are used", "warning"),
    ({"s2s_window": "20"}, "covers the whole source", "info"),
])
def test_bad_inputs_give_messages(query, message, where):
    at = run(**query)
    assert message in " ".join(e.value for e in getattr(at, where))


def test_html_in_sentences_is_text():
    at = run(s2s_source="<script>alert(1)</script>", s2s_target="<img src=x onerror=alert(1)>")
    source_labels = chart_spec(at, "s2s_fig_alpha")["data"][0]["x"]
    target_labels = chart_spec(at, "s2s_fig_alignment")["data"][0]["y"]
    assert "&lt;" in source_labels and "&lt;" in target_labels
    assert all("<" not in x for x in [*source_labels, *target_labels])


def test_one_token_target_and_shrinking_target_keep_working():
    # Regressions found by the fuzzer: a one-token target made the step slider's
    # min = max = 1, and a kept step beyond a shorter target raised an error.
    at = run(s2s_target="cat")
    assert " ".join(c.value for c in at.caption).count("the only choice") == 3  # three steps
    at = run(s2s_target="a b c d e f")
    for key in ("s2s_step", "s2s_align_step", "s2s_local_step"):
        at.slider(key=key).set_value(6).run()
    at.text_input(key="s2s_target").set_value("a b").run()
    assert not at.exception
    assert [at.slider(key=k).value for k in ("s2s_step", "s2s_align_step",
                                              "s2s_local_step")] == [2, 2, 2]
