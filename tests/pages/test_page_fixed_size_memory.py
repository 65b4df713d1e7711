"""Interaction tests for lesson 13, attention with a fixed-size memory (AppTest, no browser).

The defaults train both models once per test run (kept on disk by attncore.results_cache,
in the run's own folder: tests/conftest.py); other training settings wait for the button,
which the tests press at the smallest settings."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
from conftest import NOT_FUZZED, assert_no_exception, chart_array, open_page, text_of

import attncore.lm
from attncore import memory
from attncore.results_cache import kept
from attncore.train import recall as rc
from pages.ui.numbers import percent_text

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "13_Fixed_size_memory.py")


def default_result() -> rc.RecallResult:
    """The page's default training, read from the disk cache the page reads (or trained
    here, the same way, if no test has yet)."""
    config = rc.RecallConfig()
    return kept("lesson13-recall", asdict(config), "attncore.train.recall",
                lambda: rc.train_recall(config))


def run(**query):
    return open_page(PAGE, timeout=120, **query)


def table(at, column: str):
    return next(t.value for t in at.table if column in t.value.columns)


def test_the_training_button_is_never_fuzzed():
    assert "mem_train" in NOT_FUZZED


def test_the_defaults_tell_the_story_with_the_numbers_shown():
    at = run()
    headers = [h.value for h in at.header]
    assert headers[:5] == ["1 · Memory that grows against memory that doesn't",
                           "2 · Write and read, by hand", "3 · How much a fixed state can hold",
                           "4 · Replace, don't add", "5 · Trained: recall needs room"]
    text = text_of(at)
    # SmolLM2: 2·30·3·64·4 = 46,080 bytes a token against one state per KV head,
    # 30·3·64·64·4 = 1,474,560 bytes: 32 tokens
    assert "= 46,080 bytes a token" in text and "From 32 tokens on" in text
    # section 3 at d_k = 16, β = 1, α = 0.9: the delta rule keeps its state whole (α = 1)
    pairs = (1, 2, 4, 8, 16, 32, 64, 128, 256)
    delta = memory.recall_curve(16, pairs, rule="delta")
    gated = memory.recall_curve(16, pairs, rule="gated_delta", alpha=0.9)
    np.testing.assert_allclose(chart_array(at, "mem_fig_recall", "y", 2), delta.mean_recall)
    np.testing.assert_allclose(chart_array(at, "mem_fig_recall", "y", 3), gated.mean_recall)
    assert not np.array_equal(delta.mean_recall, gated.mean_recall)
    at16 = pairs.index(16)
    assert (f"the delta rule (β = 1) recalls {percent_text(delta.mean_recall[at16])}"
            in text)
    # Qwen3-Next at 32,768 tokens: 24,576 · 32,768 + 37,748,736 + 1,769,472 bytes = 845 MB
    hybrid = table(at, "hybrid in all")
    assert list(hybrid["hybrid in all"]) == ["845 MB", "6.48 GB"]
    assert list(hybrid["full attention, all 48"]) == ["3.22 GB", "25.8 GB"]
    fields = table(at, "value")
    assert fields.loc["full_attention_interval", "value"] == "4"
    # section 2 by hand: S₃ k₁ = (2.6, 0.6)
    assert any(r"\begin{bmatrix}2.6 \\ 0.6\end{bmatrix}" in x.value for x in at.latex)
    # section 5: the kept training's numbers
    result = default_result()
    soft, lin = result.accuracy["softmax"], result.accuracy["linear"]
    assert (f"with 64 pairs, {percent_text(soft[-1])} and {percent_text(lin[-1])}") in text
    np.testing.assert_allclose(chart_array(at, "mem_fig_trained", "y", 1), lin)
    # the story itself, at the defaults (seed 0)
    assert soft[-1] > 0.9 and lin[-1] < 0.6


def test_section_2_follows_the_query_and_the_sharpness():
    # the sharpness is linked as the slider shows it: mem_scale=8, not 8.0
    at = run(mem_query="k₂", mem_scale="8")
    assert "Linear attention reads v₂ = (0, 2) exactly" in text_of(at)
    # c = 8: scores (0, 8, 0), weights e⁸ / (e⁸ + 2) = 0.99933 on k₂
    assert "with c = 8 its weight on k₂ is 0.999" in text_of(at)
    at = run(mem_query="k₃", mem_scale="1")
    text = text_of(at)
    # S₃ k₃ = 0.6 v₁ + 0 v₂ + 1 v₃ = (2.2, 1): a leak of 0.6 v₁, of length 1.2
    assert "plus a leak of 0.6 v₁, of length 1.2" in text
    # c = 1: weights (e^0.6, 1, e) / (e^0.6 + 1 + e) = (0.329, 0.180, 0.491)
    assert "with c = 1 its weight on k₃ is 0.491" in text
    assert any(r"w \approx (0.329, 0.180, 0.491)" in x.value for x in at.latex)


def test_section_3_follows_its_controls():
    at = run(mem_dk="64", mem_pairs="4")
    text = text_of(at)
    assert "At d_k = 64 (a state of 64 × 64 = 4,096 numbers)" in text
    assert "Reading k₁ after n = 4 pairs, the other 3 keys'" in text
    curve = memory.recall_curve(64, (1, 2, 4, 8, 16, 32, 64, 128, 256))
    np.testing.assert_allclose(chart_array(at, "mem_fig_recall", "y", 1), curve.mean_recall)
    at.slider(key="mem_beta").set_value(0.0).run()
    assert_no_exception(at, "β = 0")
    # β = 0 writes nothing: every read of both delta rules is 0, recalled by none
    assert "the delta rule recalls under 90% from 1 pair on (0% at 256)" in text_of(at)
    at.slider(key="mem_alpha").set_value(0.5)
    at.slider(key="mem_beta").set_value(1.0).run()
    gated = memory.recall_curve(64, (1, 2, 4, 8, 16, 32, 64, 128, 256), rule="gated_delta",
                                alpha=0.5)
    np.testing.assert_allclose(chart_array(at, "mem_fig_recall", "y", 3), gated.mean_recall)
    # α is gated delta's alone: the delta rule's curve is the one with no decay
    delta = memory.recall_curve(64, (1, 2, 4, 8, 16, 32, 64, 128, 256), rule="delta")
    np.testing.assert_allclose(chart_array(at, "mem_fig_recall", "y", 2), delta.mean_recall)


def test_an_extreme_setting_draws_every_section():
    at = run(mem_dk="4", mem_pairs="256", mem_beta="0.0", mem_alpha="0.0",
             mem_twice_alpha="0.0", mem_scale="8", mem_query="k₃")
    assert len(at.header) >= 5
    text = text_of(at)
    assert "is forgotten altogether" in text
    assert "Reading k₁ after n = 256 pairs" in text
    assert "with c = 8 its weight on k₃" in text
    assert not at.info  # every value of the link was used


def test_section_4_follows_alpha():
    at = run(mem_twice_alpha="0.5")
    reads = table(at, "read at k_other: v_other")
    # gated delta keeps α² = 0.25 of the pair written before the two copies
    assert reads.loc["gated delta", "read at k_other: v_other"] == "0.25"
    assert reads.loc["linear attention", "read at k: v_old"] == "1.00"
    assert "is kept at 0.25 = α² of it" in text_of(at)


def test_other_training_settings_wait_for_the_button_and_train():
    at = run(mem_steps="250", mem_train_dk="2")
    assert_no_exception(at)
    assert any("press the button to train" in c.value for c in at.caption)
    assert "What a linear layer buys" in text_of(at)  # the conclusion does not wait
    at.button(key="mem_train").click().run()
    assert_no_exception(at, "trained at 250 steps, d_k = 2")
    # the linear model's state: d_model · d_k = 64 · 2 = 128 numbers
    assert "The linear model keeps 128 numbers" in text_of(at)


def test_without_the_language_model_the_rest_of_the_page_works(monkeypatch):
    def missing(*_, **__):
        raise attncore.lm.ModelNotInstalledError("not installed")

    monkeypatch.setattr(attncore.lm, "model_is_loaded", lambda *_: False)
    monkeypatch.setattr(attncore.lm, "model", missing)
    at = run()
    assert any("It is not installed" in i.value for i in at.info)
    assert "From 32 tokens on" not in text_of(at)
    assert "hybrid in all" in table(at, "hybrid in all").columns  # the hybrid still shows


def test_a_link_value_the_controls_refuse_is_ignored_and_said():
    at = run(mem_dk="5", mem_scale="3")
    assert_no_exception(at)
    assert "At d_k = 16" in text_of(at)  # the default
    assert any("could not use" in i.value for i in at.info)


def test_presenter_mode_hides_secondary_material_and_keeps_the_figures():
    at = run(presenter="true")
    assert len(at.get("plotly_chart")) == 5  # sections 1, 3 and 5 keep their charts
    assert not [s for s in at.subheader if s.value in ("Practice questions", "Download")]
    assert not any("Lesson 0's recurrent encoder" in m.value for m in at.markdown)


@pytest.mark.parametrize("answer, right", [(17.0, True), (16.0, False)])
def test_a_practice_answer_is_checked(answer, right):
    at = run()
    at.number_input(key="mem_pq4").set_value(answer).run()
    assert bool(at.success) == right
