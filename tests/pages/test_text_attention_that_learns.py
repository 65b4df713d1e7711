"""Lesson 8's sentences (pages/text/attention_that_learns.py) as plain functions of runs.

The runs are made here with the few fields each sentence reads (and, for what the models
predict, two short real trainings), so that every branch is chosen by numbers whose
answer is known by hand.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from attncore.train import SentimentConfig, train_sentiment
from attncore.train import sentiment as sa
from pages.text import attention_that_learns as say

A, B = "pooling only", "self-attention + pooling"


def induction_run(drops: list[float]) -> SimpleNamespace:
    """A run of 20 steps with a checkpoint at every step, its held-out loss starting at 10
    and falling by ``drops[s]`` over step s + 1; its heads' scores rise by 0.05 a step."""
    checkpoints = np.arange(21)
    loss = 10.0 - np.concatenate([[0.0], np.cumsum(drops)])
    return SimpleNamespace(steps=20, checkpoints=checkpoints, held_out_loss=loss,
                           scores=checkpoints * 0.05,
                           curves={"L1H1 previous": checkpoints * 0.04,
                                   "L2H1 induction": checkpoints * 0.05})


def test_a_loss_that_never_falls_is_said_so():
    run = induction_run([0.0] * 20)
    assert say.loss_shape(run) == ("The held-out loss has not fallen in 20 steps (10.00 at "
                                   "step 0, 10.00 at step 20).")


def test_a_loss_that_falls_fastest_at_once_has_no_step():
    # 20 intervals: the steepest stretch is 2 of them, here steps 0 to 2 (loss 10 -> 8)
    text = say.loss_shape(induction_run([1.0, 1.0] + [0.1] * 18))
    assert text.startswith("The held-out loss falls fastest at once, from 10.00 at step 0 to "
                           "8.00 at step 2, and more slowly after: no plateau, so no step.")
    # the heads over that stretch: induction 0.05·s, previous-token 0.04·s
    assert text.endswith("induction score goes from 0.00 to 0.10, and the best layer-1 "
                         "head's previous-token score from 0.00 to 0.08.")


@pytest.mark.parametrize("before, said", [
    (0.0, "it does not fall for the first 5 steps, then drops from 10.00 at step 5 to 4.00 "
          "at step 7."),  # a plateau: infinitely faster, no pace given
    (0.2, "it falls slowly (10.00 to 9.00) for the first 5 steps, then drops from 9.00 at "
          "step 5 to 3.00 at step 7, 15.0 times as fast."),  # 3 a step against 0.2
])
def test_a_plateau_then_a_drop_is_a_step(before, said):
    text = say.loss_shape(induction_run([before] * 5 + [3.0, 3.0] + [0.0] * 13))
    assert text.startswith("The held-out loss falls in a step: " + said)


def test_a_fall_that_speeds_up_less_than_a_step_is_not_called_one():
    # 1 a step, then 2 a step over steps 5 to 7: twice the pace, under STEP_RATIO (3)
    text = say.loss_shape(induction_run([1.0] * 5 + [2.0, 2.0] + [1.0] * 13))
    assert ("then faster: from 5.00 at step 5 to 1.00 at step 7, 2.0 times the earlier pace"
            in text)
    assert "not a sudden step after a plateau (which would be at least 3 times)" in text


def test_a_fast_first_step_can_make_the_earlier_pace_the_faster():
    # stretches of 2 steps fall 5, 5, 5, 6, 6, 0 …: the steepest starts at step 3, and the
    # mean fall before it is (10 + 0 + 10) / 3 = 6.67 a step, more than its 6
    text = say.loss_shape(induction_run([10.0, 0.0, 10.0, 0.0, 12.0] + [0.0] * 15))
    assert text.startswith("The held-out loss falls faster on average before step 3 (10.00 at "
                           "step 0, -10.00 at step 3) than over the steepest stretch")
    assert "(0.9 times that pace): no plateau, so no step." in text


def pooling_run(scores: list[float], steps: int = 40) -> SimpleNamespace:
    """Model A with checkpoints every 10 steps and the given share on key words."""
    scores = np.array(scores)
    return SimpleNamespace(
        steps=steps, checkpoints=np.arange(scores.size) * 10, scores=scores,
        accuracy=np.full(scores.size, 0.8),
        curves={"filler_share": 1 - scores, "pool_entropy": np.full(scores.size, 0.97),
                "one_hot_share": np.zeros(scores.size)})


def test_the_pooling_notice_says_when_the_key_words_reach_one_half():
    text = say.pooling_notice(pooling_run([0.2, 0.4, 0.6, 0.7, 0.8]))
    # entropy 0.97 >= 0.95 and no one-hot rows: nearly uniform
    assert text.startswith("Before training model A's pooling weights are nearly uniform "
                           "(normalised entropy 0.97; nearly uniform here means normalised "
                           "entropy at least 0.95)")
    assert "By step 20 the share on those words reaches one half; at step 40 it is 0.80, " \
           "and filler's 0.20." in text
    late = say.pooling_notice(pooling_run([0.2, 0.3, 0.4, 0.45, 0.49]))
    assert late.endswith("After 40 steps the share on those words is 0.49: it has not yet "
                         "reached one half.")


def test_the_pooling_notice_never_rounds_a_share_to_a_false_one():
    # 0.9978 at two decimals would read 1.00: 1 − 0.9978 = 2.2×10⁻³ is said instead, and
    # filler's 0.0022 is not a false 0.00.
    text = say.pooling_notice(pooling_run([0.2, 0.6, 0.9978], steps=20))
    assert "at step 20 it is 1 − 2.2×10⁻³, and filler's 2.20×10⁻³." in text
    assert "1.00" not in text and "0.00," not in text


def test_the_estimate_scales_the_caps_time_by_the_steps():
    # 5 s for 600 steps: 250 steps take 250/600 · 5 = 2.08 s, and 12.5 s at 30 s for 600
    assert say.training_estimate(250, 250 / 600 * 5, 250 / 600 * 30) == (
        "about 2 s for 250 steps on a quiet machine here, up to about 12 s on a busy one")
    # 1 step: 5/600 = 0.008 s and 0.05 s, both under a second
    assert say.training_estimate(1, 5 / 600, 30 / 600) == (
        "under 1 s for 1 step on a quiet machine here, up to under 1 s on a busy one")


def test_uniform_attention_is_not_called_collapse():
    intro = say.collapse_intro()
    assert "1 for uniform attention (nothing picked out)" in intro
    assert "“entropy collapse” is this one-hot extreme, not the uniform one" in intro


def sentiment_runs(steps: int, on_good: int) -> dict:
    """A and B after ``steps`` (B's layer switches on after 100); ``on_good`` of B's two
    heads look from *not* at *good* in the negated example."""
    words = sa.DISPLAY[say.NEGATED].split()
    attn = np.zeros((2, len(sa.DISPLAY), 2, sa.MAX_LEN, sa.MAX_LEN))
    for h in range(2):
        attn[-1, say.NEGATED, h, words.index("not"),
             words.index("good") if h < on_good else words.index("plot")] = 1.0
    curves = {"negated_accuracy": [0.5, 0.48], "plain_accuracy": [0.5, 0.97],
              "negated_p_low": [0.5, 0.41], "negated_p_high": [0.5, 0.62]}
    a = SimpleNamespace(steps=steps, curves=curves)
    b = SimpleNamespace(steps=steps, config=SimpleNamespace(pool_first=100),
                        curves=curves | {"negated_accuracy": [0.5, 0.91]},
                        snapshots={"attn": attn})
    return {A: a, B: b}


def test_the_negation_notice_follows_b_s_layer():
    off = say.negation_notice(sentiment_runs(100, on_good=2))
    assert off.startswith("After 100 steps B's self-attention layer is still off (it "
                          "switches on after step 100)")
    assert "both are right 0.480 of the time" in off
    on = say.negation_notice(sentiment_runs(101, on_good=1))
    assert "model A is right 0.480 of the time (chance: 0.5) and model B 0.910" in on
    assert "1 of B's 2 heads look from *not* mostly at *good*" in on


def test_a_is_said_to_guess_only_when_every_negated_p_is_near_one_half():
    runs = sentiment_runs(101, on_good=2)
    # 0.41 and 0.62 both lie within GUESS_MARGIN (0.15) of 0.5
    assert "So model A guesses: it gives every negated held-out sentence a P(positive) " \
           "between 0.410 and 0.620, all within 0.15 of 0.5." in say.negation_text(runs)
    runs[A].curves = runs[A].curves | {"negated_p_high": [0.5, 0.66]}  # 0.16 above 0.5
    text = say.negation_text(runs)
    assert "guesses" not in text
    assert "Model A gives the negated held-out sentences a P(positive) from 0.410 to 0.660." \
        in text


def test_a_verdict_is_a_guess_only_near_one_half():
    assert say.verdict(0.64) == "**positive**, but only just: within 0.15 of 0.5, a guess"
    assert say.verdict(0.66) == "**positive**"
    assert say.verdict(0.2) == "**negative**"


def test_the_sentiment_caption_says_when_b_is_a():
    config = SimpleNamespace(seed=3, steps=100, batch=32, n_held_out=400, pool_first=100)
    caption = say.sentiment_caption(SimpleNamespace(steps=100, config=config))
    assert caption.startswith("Seed 3, 100 Adam steps of 32 sentences; held-out: 400")
    assert caption.endswith("B's layer is still off after 100 steps (it switches on after "
                            "step 100): B's numbers are A's.")
    config.steps = 101
    assert "still off" not in say.sentiment_caption(SimpleNamespace(steps=101, config=config))


def test_the_collapse_notice_sorts_the_settings_by_their_rise():
    # a rise of 0.30 moved (at least 0.25); 0.20 did not
    runs = {"sensible": pooling_run([0.3, 0.6]), "tiny": pooling_run([0.3, 0.5])}
    text = say.collapse_notice(runs, seed=7)
    assert text.startswith("In section 4 (seed 7) the pooling weights moved onto the sentiment "
                           "and negation words (their share rose by at least 0.25) under "
                           "*sensible* ")
    assert text.endswith(". They did not under *tiny* (starts nearly uniform, ends nearly "
                         "uniform; weight on those words 0.30 → 0.50, accuracy 0.80).")
    none = say.collapse_notice({"tiny": pooling_run([0.3, 0.5])}, seed=0)
    assert "under no setting. They did not under *tiny*" in none
    rows = say.collapse_rows(runs)
    assert [r["moved onto them"] for r in rows] == ["yes", "no"]


def test_the_alignment_notice_never_rounds_a_share_to_all():
    run = SimpleNamespace(steps=60, curves={"moved_score": [0.25, 0.996]})
    assert say.alignment_notice(run).endswith("for 25% of them untrained and 99.6% at step 60.")


def test_the_strongest_key_of_each_head_is_named():
    words = ["the", "plot", "was", "not", "good"]
    attn = np.zeros((2, 5, 5))
    attn[0, 3, 4] = attn[1, 3, 1] = 1.0
    assert say.strongest_keys_text(attn, words) == (
        "Row *not*: the word each head's query at *not* attends to most — head 1: *good*, "
        "head 2: *plot*.")


def test_what_each_model_says_of_not_bad_is_its_own_prediction():
    runs = {A: train_sentiment(SentimentConfig(model="pooling", steps=20)),
            B: train_sentiment(SentimentConfig(model="self-attention", steps=20))}
    text = say.not_bad_notice(runs)
    ids = sa.encode("the film was not bad")[0][None, :]
    for letter, run in zip("AB", runs.values(), strict=True):
        p = float(sa.predict(run.params, ids)["positive"][0])
        side = "positive" if p >= 0.5 else "negative"
        assert f"model {letter} gives P(positive) = {say.p_text(p)} ({side}" in text
    assert text.startswith("Type *the film was not bad*: model A gives")


def test_a_probability_never_reads_a_false_one_or_zero():
    # 1 − 0.9996 = 4.0×10⁻⁴: three decimals would say 1.000
    assert say.p_text(0.9996) == "1 − 4.0×10⁻⁴"
    assert say.p_text(0.5) == "0.500"
    assert say.p_text(2e-6) == "2.000×10⁻⁶"
    assert say.share(0.9957) == "1 − 4.3×10⁻³" and say.share(0.9957, 3) == "0.996"


def collapse_run(entropy, one_hot, key, accuracy) -> SimpleNamespace:
    """A pooling run of 200 steps with two checkpoints (start, end): its mean normalised
    entropy, share of nearly one-hot rows and weight on the key words at each, and its
    final held-out accuracy (what attncore.train.collapse.outcome reads)."""
    return SimpleNamespace(steps=200, scores=np.array(key), accuracy=np.array([0.5, accuracy]),
                           curves={"pool_entropy": np.array(entropy),
                                   "one_hot_share": np.array(one_hot)})


SENSIBLE = "sensible (lr 0.01, scale 1, τ 1)"
LARGE = "large initial scale (× 8)"


def test_one_hot_at_the_end_is_learnt_and_one_hot_from_the_start_is_what_fails():
    # Seed 0's numbers, rounded: the sensible run ends one-hot on the key words (0.996)
    # with the best accuracy; the ×8 run starts one-hot (98% of rows) on other words
    # (0.193 on the key words) and stays there (0.185).
    runs = {SENSIBLE: collapse_run([0.98, 0.0145], [0.0, 0.866], [0.218, 0.9957], 0.81),
            "high temperature τ = 20": collapse_run([1.0, 0.99], [0, 0], [0.22, 0.25], 0.61),
            LARGE: collapse_run([0.0048, 0.0085], [0.98, 0.958], [0.193, 0.185], 0.466)}
    text = say.sparsity_text(runs)
    assert text.startswith(
        "The sensible run ends nearly one-hot (normalised entropy 0.01), with 0.996 of its "
        "weight on the sentiment and negation words and a held-out accuracy of 0.81, the "
        "best of the 3 settings. Nearly one-hot at the end, on those words, is what it "
        "learnt.")
    # 0.0048 is said 4.80×10⁻³, not a false 0.00
    assert (f"The run *{LARGE}* starts nearly one-hot (entropy 4.80×10⁻³), with 0.193 of its "
            "weight on those words, and does not move onto them (0.185 at step 200; "
            "accuracy 0.47).") in text
    assert text.endswith("What fails there is not one-hot attention but being one-hot from "
                         "the start, mostly on other words: the saturated softmax passes "
                         "almost no gradient, and the weights stay where chance put them.")
    assert "over-sparse" not in say.collapse_intro()


def test_without_a_one_hot_start_nothing_is_blamed_on_it():
    runs = {SENSIBLE: collapse_run([0.98, 0.6], [0.0, 0.0], [0.22, 0.4], 0.7),
            "other": collapse_run([0.9, 0.5], [0.0, 0.0], [0.2, 0.3], 0.75)}
    text = say.sparsity_text(runs)
    # the sensible run ends spread (entropy 0.60), not the best (0.75)
    assert "ends spread (normalised entropy 0.60)" in text and "(the best: 0.75)" in text
    assert "is what it learnt" not in text
    assert text.endswith("No setting starts nearly one-hot at this seed.")
    # one that starts one-hot and moves onto the key words (a rise of 0.5 ≥ 0.25)
    runs["other"] = collapse_run([0.01, 0.02], [0.9, 0.9], [0.3, 0.8], 0.75)
    text = say.sparsity_text(runs)
    assert "and moves onto them (0.800 at step 200)." in text
    assert "What fails there" not in text


def test_a_probability_never_reads_as_the_half_that_decides():
    # 0.50020 rounds to 0.500 at three decimals, the verdict's threshold, yet says
    # "positive": a fourth decimal tells them apart; 0.4434 and exactly 0.5 stay as they are.
    assert say.p_text(0.50020) == "0.5002"
    assert say.p_text(0.49996) == "0.49996"
    assert (say.p_text(0.4434), say.p_text(0.5)) == ("0.443", "0.500")
