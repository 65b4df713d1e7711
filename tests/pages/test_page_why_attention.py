"""Lesson 0, why attention exists (AppTest). The defaults train both models once per test
run (kept on disk by attncore.results_cache, in the run's own folder: tests/conftest.py),
so only the first test pays for it; other settings wait for the Train button."""

from __future__ import annotations

import math
import re
from dataclasses import asdict
from fractions import Fraction
from pathlib import Path

import numpy as np
from conftest import NOT_FUZZED, assert_no_exception, chart_spec, open_page

from attncore.results_cache import kept
from attncore.train import bottleneck as bn

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "0_Why_attention.py")


def default_result() -> bn.BottleneckResult:
    """The page's default result, read from the same disk cache the page reads (or
    trained here, the same way, if no test has yet)."""
    config = bn.BottleneckConfig()
    return kept("lesson0-bottleneck", asdict(config), bn,
                lambda: bn.train_bottleneck(config))


def text_of(at) -> str:
    return " ".join(m.value for m in at.markdown)


def percent(x: float) -> str:
    """As the page says a share: whole percent, with the decimals needed so that a share
    that is not 0 or 1 never reads 0% or 100% (0.996 -> 99.6%)."""
    for k in (0, 1, 2, 3):  # a half rounds up, as the decimal x is written: 0.945 -> 95%
        scaled = Fraction(repr(float(x))) * 100 * 10 ** k
        text = f"{math.floor(scaled + Fraction(1, 2)) / 10 ** k:.{k}f}"
        if float(text) not in (0.0, 100.0) or min(abs(x), abs(1 - x)) < 1e-6:
            break
    return text + "%"


def test_the_training_button_is_never_fuzzed():
    assert "why_train" in NOT_FUZZED


def test_the_defaults_tell_the_story_with_the_numbers_of_the_models_shown():
    at = open_page(PAGE)
    result = default_result()
    acc, lengths = result.accuracy, result.lengths
    trained = (lengths >= 3) & (lengths <= 16)
    text = text_of(at)
    # The sentence's range is the attention curve's own range over the shaded lengths.
    assert (f"the attention model copies {percent(acc['attention'][trained].min())} to "
            f"{percent(acc['attention'][trained].max())}") in text
    assert (f"from {percent(acc['fixed'][lengths == 3][0])} at length 3 to "
            f"{percent(acc['fixed'][lengths == 16][0])} at length 16") in text
    # The story itself, at the defaults (seed 0): attention holds, the fixed context falls.
    assert acc["attention"][trained].min() > 0.9
    assert acc["fixed"][lengths == 16][0] < 0.6


def test_one_decoding_step_names_the_letter_it_copies():
    at = open_page(PAGE)
    result = default_result()
    source = result.example["attention"].source[0]
    at.slider(key="why_step").set_value(1).run()
    assert_no_exception(at, "step 1")
    assert f"The letter to copy was {'ABCDEFGHIJKL'[source[0]]}." in text_of(at)
    # c_t rebuilt from the weights shown equals the model's own, to the last bit or to
    # the rounding of float32 sums, said as such, never a bare 0.
    assert "it differs by exactly 0" in text_of(at) or "(rounding)" in text_of(at)


def test_other_settings_wait_for_the_button_and_say_so():
    at = open_page(PAGE, why_width="8", why_steps="100", why_shortest="1", why_longest="4")
    assert_no_exception(at, "new settings")
    assert any("press the button to train" in c.value for c in at.caption)
    assert not [h for h in at.header if h.value.startswith("1 ·")]
    at.button(key="why_train").click().run()
    assert_no_exception(at, "trained at width 8")
    assert [h for h in at.header if h.value.startswith("1 ·")]
    # once trained, the button and its note are gone: the results are not below them
    assert not [b for b in at.button if b.key == "why_train"]
    assert not any("press the button to train" in c.value for c in at.caption)


def test_the_cost_table_counts_for_the_longest_trained_string():
    at = open_page(PAGE)
    table = next(t.value for t in at.table if "recurrent layer (GRU)" in t.value.columns)
    # n = 16, d = 32: a GRU layer makes 6·16·32² = 98,304 multiply-adds; attention's
    # QKᵀ and weights·V make 2·16²·32 = 16,384.
    assert table.loc["multiply-adds per layer", "recurrent layer (GRU)"].startswith("98,304")
    assert table.loc["multiply-adds per layer", "self-attention layer"].startswith("16,384")
    assert table.loc["sequential steps"].tolist() == ["16", "1"]
    assert "its four projections included, costs less than the GRU layer" in text_of(at)


def test_presenter_mode_keeps_the_figures_and_hides_the_controls_in_an_expander():
    at = open_page(PAGE, presenter="true")
    assert any(e.label == "Training settings" for e in at.expander)
    assert at.get("plotly_chart")
    assert np.isfinite(default_result().seconds)


def test_what_to_notice_reads_the_fixed_models_direction_from_its_two_ends():
    at = open_page(PAGE)
    acc, lengths = default_result().accuracy["fixed"], default_result().lengths
    first, last = acc[lengths == 3][0], acc[lengths == 16][0]
    trend = "falls" if last < first else "stays" if last == first else "rises"
    text = text_of(at)
    assert f"the fixed-context model {trend} from {percent(first)}" in text


def test_the_weight_before_the_copied_letter_is_measured_not_explained():
    at = open_page(PAGE)
    e = default_result().earlier
    text = text_of(at)
    assert "only h_t and later states can carry it" in text
    assert (f"Over the steps that have earlier states (steps 2 to {e.length}), "
            f"{e.weight_before:.2f} of the weight, on average, still falls on them, "
            f"{e.weight_previous:.2f} of it on h_(t−1) alone.") in text
    assert (f"takes the accuracy on the same {e.strings} strings from {percent(e.accuracy)} "
            f"to {percent(e.accuracy_later_only)}") in text
    assert "Why is not measured here" in text
    assert "h_(t+1) may still carry letter t" not in text and "A likely reason" not in text


def test_the_fixed_models_positions_are_predicted_then_split_by_teacher_forcing():
    at = open_page(PAGE)
    result = default_result()
    at16 = list(result.lengths).index(16)
    greedy = result.position_accuracy["fixed"][at16][:16]
    forced = result.forced_position_accuracy["fixed"][at16][:16]
    said = [m.value for m in at.markdown]
    predict = next(i for i, m in enumerate(said) if m.startswith("**Predict first:**"))
    split = next(i for i, m in enumerate(said) if "Teacher forcing" in m)
    assert predict < split  # the question comes before the answer
    assert "a string of 16 letters" in said[predict]
    assert (f"gets the first letter right {percent(forced[0])} of the time and the last "
            f"{percent(forced[-1])} (greedy: {percent(greedy[0])} and {percent(greedy[-1])})"
            ) in said[split]
    # greedy and teacher-forced both read BOS first: the same first letter
    assert forced[0] == greedy[0]
    series = {t["name"]: t["y"] for t in chart_spec(at, "why_fig_forced")["data"]}
    assert np.allclose(series["greedy"], greedy) and np.allclose(series["teacher forcing"],
                                                                 forced)
    # the heatmap's text alternative does not repeat the paragraph beside it
    paragraph = next(m for m in said if m.startswith("At length 16 the fixed-context model"))
    assert not any(paragraph in c.value.replace("\\", "") for c in at.caption)


def test_the_example_is_shown_as_both_models_wrote_it_with_wrong_letters_marked():
    at = open_page(PAGE)
    result = default_result()
    table = next(t.value for t in at.table if "source" in t.value.index)
    source = result.example["fixed"].source[0]
    for row, model in (("fixed context", "fixed"), ("attention", "attention")):
        tokens = result.example[model].tokens[0]
        cells = table.loc[row].tolist()
        marked = [j for j, cell in enumerate(cells[:-1]) if cell.endswith("✗")]
        assert marked == [j for j in range(len(source)) if tokens[j] != source[j]]
        assert cells[-1] == f"{int((tokens == source).sum())} of {len(source)}"
    assert table.loc["source"].tolist()[:-1] == ["ABCDEFGHIJKL"[i] for i in source]


def test_one_step_is_written_out_with_its_scores_weights_context_and_output():
    at = open_page(PAGE)
    result = default_result()
    example = result.example["attention"]
    step = bn.trace_step(result.runs["attention"].params, example.source[0], 3)
    latex = " ".join(m.value for m in at.latex)
    best = int(np.argmax(step.weights)) + 1
    # by hand: the largest weight's score, the softmax's sum, the context, the two logits
    assert f"e_{{3,{best}}} &= v_a^\\top" in latex
    assert f"\\approx {step.scores[best - 1]:.2f} \\end{{aligned}}" in latex
    assert "Z = \\sum_j \\exp(e_{3,j} - e_{3,\\max})" in latex and "c_{3} &=" in latex
    letter = "ABCDEFGHIJKL"[step.token]
    assert f"\\mathrm{{logit}}_{{\\text{{“{letter}”}}}} &\\approx" in latex  # quoted: a token
    # the logit to 2 decimals, or to 3 where its parts add up to it only so
    assert any(f"{step.logits[step.token]:.{k}f}" in latex for k in (2, 3))
    # the decoder's output layer is W_out: W_O is self-attention's output projection
    assert "W_{\\mathrm{out}} [s_{3}; c_{3}] + b_{\\mathrm{out}}" in latex
    assert not re.search(r"[Wb]_o(?!ut)", latex + text_of(at))


def test_the_test_strings_are_said_to_be_drawn_anew():
    at = open_page(PAGE)
    # trained on 3..16: of the 1,728 strings of 3 letters 88% drawn (most), of 12⁴ 16%;
    # 12² = 144 < 200 draws at length 2
    assert ("200 fresh random strings of each length from 2 to 20 (drawn anew, not kept apart "
            "from training: at 3 letters most were also trained on; only 144 strings of 2 "
            "letters exist, so the 200 draws must repeat some)") in text_of(at)


def test_the_coverage_of_the_test_strings_is_computed_from_the_settings():
    at = open_page(PAGE)
    said = " ".join(c.value for c in at.caption)
    # 800 steps × 64 strings over lengths 3..16: 51,200 / 14 = 3,657 of each; of the
    # 12³ = 1,728 strings of 3 letters 1 − (1 − 1/1728)^3657 = 88% drawn, of 12⁴ 16%
    assert "Training drew about 3,657 strings of each length from 3 to 16" in said
    share = 1 - (1 - 1 / 1728) ** (51200 / 14)
    assert f"12³ = 1,728 possible strings of 3 letters it drew about {percent(share)}" in said
    assert "strings of 2 letters" not in said  # not trained at the defaults


def test_presenter_mode_defines_what_the_first_chart_compares_on_screen():
    at = open_page(PAGE, presenter="true")
    shown = [m.value for m in at.markdown]  # text a projector shows (captions may be hidden)
    lead = next(i for i, m in enumerate(shown) if m.startswith("**Fixed context**"))
    assert "the decoder reads the encoder's last state h_n alone" in shown[lead]
    assert "**Attention**: at each step t it reads every encoder state h_j" in shown[lead]
    assert "greedy decoding" in shown[lead] and "**Token accuracy**" in shown[lead]
    # before the chart's own sentence
    assert lead < next(i for i, m in enumerate(shown) if m.startswith("On the trained lengths"))


def test_the_alignment_prints_only_weights_large_enough_to_read():
    at = open_page(PAGE)
    weights = default_result().example["attention"].weights[0]
    printed = [t for t in chart_spec(at, "why_fig_alignment")["data"] if t.get("mode") == "text"]
    assert len(printed) == 1
    # 1 decimal, cells of 0.05 or more: 3 characters in 12 columns, font 11 px or more
    # (12 columns of "<0.01" gave 9 px)
    assert len(printed[0]["text"]) == int((weights >= 0.05).sum())
    assert printed[0]["textfont"]["size"] >= 11
    assert all(len(t) == 3 for t in printed[0]["text"])


def test_the_controls_fit_one_line_and_the_goal_says_width():
    at = open_page(PAGE)
    assert at.select_slider(key="why_width").label == "Width d"
    assert "of the same width" in text_of(at) and "of the same size" not in text_of(at)


def test_an_example_longer_than_any_trained_string_is_said_to_be():
    at = open_page(PAGE, why_width="8", why_steps="100", why_shortest="1", why_longest="4")
    at.button(key="why_train").click().run()
    assert_no_exception(at, "trained on lengths 1 to 4")
    text = text_of(at)
    assert "longer than any trained (at most 4)" in text
    assert "only h_t and later states can carry it" in text
    # 100 steps × 64 strings over lengths 1..4: 1,600 of each; 12² = 144 strings of 2
    # letters: all but e^(−11.1) drawn; 12³ = 1,728: 1 − e^(−0.926) = 60%; 12⁴: 7.4%
    said = " ".join(c.value for c in at.caption)
    assert "Training drew about 1,600 strings of each length from 1 to 4" in said
    assert "at 2 and 3 letters most test strings had also been trained on; from 4 letters " \
           "on most were new." in said
    # the positions at the longest trained length, 4, with and without teacher forcing
    assert "At length 4 the fixed model then gets the first letter right" in text
