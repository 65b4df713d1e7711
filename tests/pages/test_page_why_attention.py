"""Lesson 0, why attention exists (AppTest). The defaults train both models once per test
run (kept on disk by attncore.results_cache, in the run's own folder: tests/conftest.py),
so only the first test pays for it; other settings wait for the Train button."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
from conftest import NOT_FUZZED, assert_no_exception, open_page

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
    for k in (0, 1, 2, 3):
        text = f"{100 * x:.{k}f}"
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


def test_the_cost_table_counts_for_the_longest_trained_string():
    at = open_page(PAGE)
    table = at.table[0].value
    # n = 16, d = 32: a GRU layer makes 6·16·32² = 98,304 multiply-adds; attention's
    # QKᵀ and weights·V make 2·16²·32 = 16,384.
    assert table.loc["multiply-adds per layer", "recurrent layer (GRU)"].startswith("98,304")
    assert table.loc["multiply-adds per layer", "self-attention layer"].startswith("16,384")
    assert table.loc["sequential steps"].tolist() == ["16", "1"]
    assert "attention's own part is smaller than the GRU's" in text_of(at)


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


def test_the_spread_of_the_alignment_is_offered_as_likely_only():
    at = open_page(PAGE)
    result = default_result()
    text = text_of(at)
    # The example (12 letters) lies inside the default training range 3..16.
    if result.offset_weights[2] < 0.9:  # OFFSETS = -2..2: index 2 is offset 0
        assert "A likely reason (not measured here)" in text
    else:
        assert "comes close to 1." in text
    assert "still carries letter t" not in text


def test_an_example_longer_than_any_trained_string_is_said_to_be():
    at = open_page(PAGE, why_width="8", why_steps="100", why_shortest="1", why_longest="4")
    at.button(key="why_train").click().run()
    assert_no_exception(at, "trained on lengths 1 to 4")
    text = text_of(at)
    assert "longer than any trained (at most 4)" in text
    assert "A likely reason" not in text
