"""Lesson 8, attention that learns (AppTest). Links set few training steps so that each
test trains in about a second; the page's default runs are checked by the benchmark."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import NOT_FUZZED, assert_no_exception, chart_array, chart_spec, open_page

from attncore.train import (
    AlignmentConfig,
    InductionConfig,
    SentimentConfig,
    train_alignment,
    train_induction,
    train_sentiment,
)
from attncore.train.alignment import DISPLAY, translate_words
from attncore.train.collapse import SETTINGS, train_setting
from attncore.train.sentiment import GUESS_MARGIN, encode, predict

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "8_Attention_that_learns.py")
FAST = {"learn_sentiment_steps": "20", "learn_alignment_steps": "15"}


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_opens_with_the_numbers_the_core_computes():
    at = open_page(PAGE, **FAST)
    shown = metrics(at)
    # the same run, trained here without the page: the page must show its figures
    b = train_sentiment(SentimentConfig(model="self-attention", steps=20))
    assert shown["B: held-out accuracy"] == f"{b.final_accuracy:.3f}"
    assert shown["B: pooling weight on sentiment and negation words"] == f"{b.attention_score:.3f}"
    # alignment and induction wait for a click
    assert sum("Press **Train**" in i.value for i in at.info) == 2
    at.button(key="learn_alignment_train").click().run()
    a = train_alignment(AlignmentConfig(steps=15))
    assert metrics(at)["Alignment score"] == f"{a.attention_score:.3f}"


@pytest.mark.parametrize("text, kind, words", [
    ("<script>alert(1)</script>", "error", "no word from the vocabulary"),
    ("   ", "error", "no word from the vocabulary"),
    ("the zorgly film was great", "warning", "not in the vocabulary"),
])
def test_a_bad_sentence_gets_a_message(text, kind, words):
    at = open_page(PAGE, **FAST)
    at.text_input(key="learn_sent_text").input(text).run()
    assert_no_exception(at, text)
    assert any(words in m.value for m in getattr(at, kind))


def test_words_left_out_are_listed_as_typed():
    at = open_page(PAGE, **FAST)
    at.text_input(key="learn_sent_text").input("the zorgly film was <b>great</b>").run()
    left_out = next(d.value for d in at.dataframe if "left out" in d.value.columns[0])
    assert list(left_out.iloc[:, 0]) == ["zorgly", "<", "b", ">", "<", "/", "b", ">"]


def test_train_buttons_train_at_tiny_settings():
    at = open_page(PAGE, **FAST)
    at.number_input(key="learn_induction_steps").set_value(4.0)
    at.button(key="learn_induction_train").click().run()
    assert_no_exception(at, "induction Train")
    assert "Layer-2 induction score" in metrics(at)
    at.button(key="learn_sentiment_again").click().run()  # seed 0 -> 1
    assert_no_exception(at, "Train again")
    assert at.number_input(key="learn_sentiment_seed").value == 1
    assert any("Seed 1," in c.value for c in at.caption)


def test_presenter_mode_hides_the_practice_questions():
    at = open_page(PAGE, presenter="true", **FAST)
    assert not any("Practice questions" in s.value for s in at.subheader)


def test_expensive_buttons_are_kept_from_the_fuzz():
    assert {"learn_induction_train", "learn_collapse_train"} <= set(NOT_FUZZED)


def test_lesson_6_shows_trained_scores_that_align_the_words():
    at = open_page(Path(PAGE).with_name("6_Scoring_and_seq2seq.py"))
    order = translate_words(DISPLAY[0].split())[1]  # "the black dog ..." -> le chien noir ...
    for kind in ("additive", "general"):
        weights = chart_array(at, f"s2s_fig_trained_{kind}")
        assert list(weights.argmax(axis=1)[: len(order)]) == order, kind


def test_checkpoint_sliders_show_the_maps_of_their_step():
    at = open_page(PAGE, **FAST)
    at.number_input(key="learn_induction_steps").set_value(4.0)
    at.button(key="learn_induction_train").click().run()
    title = chart_spec(at, "learn_fig_selfattn_0")["layout"]["title"]["text"]
    assert title.endswith("step 20")  # the last checkpoint of 20 steps
    at.select_slider(key="learn_sent_checkpoint").set_value(0).run()
    assert chart_spec(at, "learn_fig_selfattn_0")["layout"]["title"]["text"].endswith("step 0")
    # the induction model's four heads: one figure of four panels at the chosen step
    grid = chart_spec(at, "learn_fig_ind_heads_at")
    assert [a["text"] for a in grid["layout"]["annotations"]] == [
        "layer 1, head 1", "layer 1, head 2", "layer 2, head 1", "layer 2, head 2"]
    # its text says each head's score on the sequence shown, here by plain loops (the
    # strongest weight of every panel, row 1's 1 on itself, would say nothing)
    run = train_induction(InductionConfig(steps=4))
    ids, period = run.examples["ids"], run.examples["period"]
    alt = next(c.value for c in at.caption if "heads at step 4" in c.value).replace("\\", "")
    for h in range(2):
        a1, a2 = run.snapshots["L1"][-1, h], run.snapshots["L2"][-1, h]
        prev = np.mean([a1[t, t - 1] for t in range(1, len(ids))])
        ind = np.mean([sum(a2[t, s] for s in range(1, t + 1) if ids[s - 1] == ids[t])
                       for t in range(period, len(ids))])
        for layer, value, what in ((1, prev, "previous token"), (2, ind, "tokens that")):
            said = re.search(f"layer {layer}, head {h + 1}: ([0-9.]+) on the {what}", alt)
            assert float(said[1]) == pytest.approx(value, rel=0.01), (layer, h, alt)
    at.select_slider(key="learn_ind_checkpoint").set_value(0).run()
    assert chart_spec(at, "learn_fig_ind_heads_at")["layout"]["title"]["text"] == "Step 0"


def test_a_link_reopens_the_checkpoint_a_teacher_showed():
    """Every checkpoint slider is in the link, as every other control is: a link with a
    step other than the last opens at that step, for each of the three tasks."""
    steps = [int(s) for s in train_sentiment(SentimentConfig(model="self-attention",
                                                             steps=20)).checkpoints]
    align = [int(s) for s in train_alignment(AlignmentConfig(steps=15)).checkpoints]
    shown, aligned = steps[len(steps) // 3], align[len(align) // 2]
    assert shown != steps[-1] and aligned != align[-1]  # not the slider's default
    at = open_page(PAGE, **FAST, learn_sent_checkpoint=str(shown),
                   learn_align_checkpoint=str(aligned), learn_induction_steps="4",
                   learn_ind_checkpoint="0")
    assert at.select_slider(key="learn_sent_checkpoint").value == shown
    title = chart_spec(at, "learn_fig_selfattn_0")["layout"]["title"]["text"]
    assert title.endswith(f"step {shown}")
    at.button(key="learn_alignment_train").click().run()
    assert at.select_slider(key="learn_align_checkpoint").value == aligned
    at.button(key="learn_induction_train").click().run()
    assert chart_spec(at, "learn_fig_ind_heads_at")["layout"]["title"]["text"] == "Step 0"


def test_a_run_with_other_steps_shows_its_own_end():
    """The slider's default is the last step, so it moves with the steps: a kept step
    would then no longer be in the link. A new number of steps shows the new end."""
    at = open_page(PAGE, **FAST, learn_sent_checkpoint="5")
    at.number_input(key="learn_sentiment_steps").set_value(40.0)
    at.button(key="learn_sentiment_train").click().run()
    assert_no_exception(at, "40 steps")
    assert at.select_slider(key="learn_sent_checkpoint").value == 40


@pytest.fixture
def policy_warnings(monkeypatch) -> list[logging.LogRecord]:
    """What Streamlit's widget checks log at WARNING or above during the test (a widget
    given a default and a value set through session state logs its stack). Streamlit logs
    that once per process, so the flag that says it did is reset first."""
    from streamlit.elements.lib import policies

    monkeypatch.setattr(policies, "_shown_default_value_warning", False)
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append
    logger = logging.getLogger(policies.__name__)  # Streamlit's loggers do not propagate
    logger.addHandler(handler)
    yield records
    logger.removeHandler(handler)


def test_buttons_and_checkpoints_leave_the_server_log_clean(policy_warnings):
    at = open_page(PAGE, **FAST)
    at.button(key="learn_sentiment_again").click().run()  # sets the seed: 0 -> 1
    assert at.number_input(key="learn_sentiment_seed").value == 1
    assert [r.getMessage() for r in policy_warnings] == []
    at.number_input(key="learn_sentiment_steps").set_value(40.0)
    at.button(key="learn_sentiment_train").click().run()  # moves the checkpoint to 40
    assert at.select_slider(key="learn_sent_checkpoint").value == 40
    assert [r.getMessage() for r in policy_warnings] == []


def notice(at) -> str:
    """The What to notice and Try this lists, as one text."""
    return "\n".join(m.value for m in at.markdown if m.value.startswith("- "))


def assert_probability_said(text: str, p: float) -> None:
    """Three decimals, or a power of ten for a probability that would read 0.000, or 1
    minus a power of ten for one that would read 1.000: never a false 0 (B's P(positive)
    for a negative sentence can be 10⁻⁶) nor a false 1 (0.9996 is "1 − 4.0×10⁻⁴")."""
    if text.startswith("1 − "):
        rest = text.removeprefix("1 − ")
        mantissa, power = rest.split("×10")
        gap = float(mantissa) * 10.0 ** int(power.translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹",
                                                                          "-0123456789")))
        assert p > 0.9995 and 1 - gap == pytest.approx(p, abs=0.01 * gap), (text, p)
    elif "×10" in text:
        mantissa, power = text.split("×10")
        value = float(mantissa) * 10.0 ** int(power.translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹",
                                                                            "-0123456789")))
        assert p < 0.0005 and value == pytest.approx(p, rel=0.01), (text, p)
    else:
        assert text == f"{p:.3f}" and text not in ("0.000", "1.000"), (text, p)


def test_what_a_model_says_of_not_bad_is_read_off_the_trained_models():
    # 20 steps (the link's) and 600 (the cap): the sentence gives each model's own
    # P(positive), and calls it a guess exactly when it lies within GUESS_MARGIN of 0.5
    ids = encode("the film was not bad")[0][None, :]
    for steps in (20, 600):
        at = open_page(PAGE, **FAST | {"learn_sentiment_steps": str(steps)})
        for model, letter in (("pooling", "A"), ("self-attention", "B")):
            run = train_sentiment(SentimentConfig(model=model, steps=steps))
            p = float(predict(run.params, ids)["positive"][0])
            side = "positive" if p >= 0.5 else "negative"
            guess = abs(p - 0.5) < GUESS_MARGIN
            shown = re.search(f"model {letter} gives P\\(positive\\) = (.+?) \\((\\w+)(.)",
                              notice(at))
            assert shown[2] == side and (shown[3] == ",") == guess, (steps, model)
            assert_probability_said(shown[1], p)
            yours = next(m.value for m in at.markdown
                         if m.value.startswith(f"**{'pooling only' if letter == 'A' else 'self'}"))
            typed = predict(run.params, encode("the acting was not very good")[0][None, :])
            assert_probability_said(yours.split(" = ")[1].split(" → ")[0],
                                    float(typed["positive"][0]))
            if model == "pooling":  # when its share on key words first reached one half
                reached = [s for s, v in zip(run.checkpoints, run.scores, strict=True)
                           if v >= 0.5]
                expected = (f"By step {reached[0]} the share on those words reaches one half"
                            if reached else "it has not yet reached one half")
                assert expected in notice(at), steps
        # B's layer is held off for its first pool_first updates: at 20 steps B is A
        off = steps <= SentimentConfig.pool_first
        assert ("B's self-attention layer is still off" in notice(at)) == off, steps
        assert ("of B's 2 heads look from *not*" in notice(at)) == (not off), steps


def held_out_loss(at, key: str) -> tuple[np.ndarray, np.ndarray]:
    """The held-out loss a loss chart draws, at its checkpoints (the other steps are gaps)."""
    x = chart_array(at, key, "x", trace=1)
    y = chart_array(at, key, "y", trace=1)
    kept = np.isfinite(y)
    return x[kept].astype(int), y[kept]


def test_the_loss_and_collapse_sentences_follow_the_runs():
    """At the defaults (250 steps, seed 0) the induction loss speeds up but has no plateau;
    at 4 steps it falls fastest at once. Section 4 sorts each setting by whether its weight
    on the key words rose by at least 0.25, counted here from its scores."""
    at = open_page(PAGE, **FAST)
    at.button(key="learn_induction_train").click().run()
    at.button(key="learn_collapse_train").click().run()
    assert_no_exception(at, "induction and collapse at their defaults")
    steps, loss = held_out_loss(at, "learn_fig_ind_loss")
    assert steps[-1] == InductionConfig.steps and steps.size == 21
    # by a second, plainer method: every stretch of 2 of the 20 intervals, the steepest,
    # and the mean fall a step before it
    falls = [((loss[i] - loss[i + 2]) / (steps[i + 2] - steps[i]), i) for i in range(19)]
    slope, i = max(falls)
    ratio = slope / ((loss[0] - loss[i]) / steps[i])
    assert i > 0 and 1 < ratio < 3  # faster, but far from a plateau and a drop
    said = notice(at)
    assert f"then faster: from {loss[i]:.2f} at step {steps[i]}" in said
    assert f"{ratio:.1f} times the earlier pace" in said and "not a sudden step" in said
    moved_part, _, stuck_part = said.partition("They did not under")
    trained = {name: train_setting(name, seed=0) for name in SETTINGS}
    for name, run in trained.items():
        where = moved_part if run.scores[-1] - run.scores[0] >= 0.25 else stuck_part
        assert f"*{name}* (starts" in where, name
    # Section 4 under its table: one-hot at the end of the sensible run is what it learnt;
    # what fails is starting one-hot (at least half the rows above 0.99) off the key words.
    under_table = next(m.value for m in at.markdown if m.value.startswith("The sensible run"))
    sensible = trained[next(iter(SETTINGS))]
    assert (f"with {sensible.scores[-1]:.3f} of its weight on the sentiment and negation "
            f"words and a held-out accuracy of {sensible.accuracy[-1]:.2f}") in under_table
    best = max(run.accuracy[-1] for run in trained.values())
    assert ("the best of the 5 settings" in under_table) == (sensible.accuracy[-1] == best)
    for name, run in trained.items():
        started = run.curves["one_hot_share"][0] >= 0.5
        assert (f"The run *{name}* starts nearly one-hot" in under_table) == started, name
        if started and run.scores[-1] - run.scores[0] < 0.25:
            assert f"The run *{name}* starts nearly one-hot" in under_table
            assert "does not move onto them" in under_table
    assert not any("over-sparse" in m.value for m in at.markdown)
    # the extreme: 4 steps, where the first stretch is the steepest
    at.number_input(key="learn_induction_steps").set_value(4.0)
    at.button(key="learn_induction_train").click().run()
    _, tiny = held_out_loss(at, "learn_fig_ind_loss")
    fastest_first = np.argmax(-np.diff(tiny)) == 0 and tiny[1] < tiny[0]
    assert ("falls fastest at once" in notice(at)) == bool(fastest_first)
