"""Interaction tests for lesson 2, why divide by √d_k (AppTest, no browser)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from conftest import chart_array, chart_spec, open_page
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "2_Scaling.py")


def run(**query) -> AppTest:
    return open_page(PAGE, **query)


def moments(at: AppTest):
    """The moments table: rows qᵀk and qᵀk/√d_k."""
    return next(df for df in (t.value for t in at.table)
                if "empirical variance" in getattr(df, "columns", [])).map(float)


def summary(at: AppTest):
    return next(df for df in (t.value for t in at.table)
                if "max weight" in getattr(df, "index", []))


def test_defaults_show_variance_near_theory():
    at = run()
    m = moments(at)
    # d_k = 64, σ² = 1: theory 64 and 1; 1000 samples give a relative standard error of
    # sqrt(2/999 + 6/(64·1000)) = 0.047; allow five.
    assert m.loc["qᵀk", "theory variance"] == 64.0
    assert abs(m.loc["qᵀk", "empirical variance"] / 64 - 1) < 5 * 0.047
    assert abs(m.loc["qᵀk / √d_k", "empirical variance"] - 1) < 5 * 0.047


def test_sigma_changes_the_theory_to_d_k_sigma4():
    at = run()
    at.slider(key="sc_sigma2").set_value(2.0).run()
    assert moments(at).loc["qᵀk", "theory variance"] == 64 * 2.0**2


def test_large_d_k_without_scaling_saturates():
    at = run(sc_dk="1024", sc_nkeys="8")
    table = summary(at)
    assert float(table.loc["max weight", "no scaling"]) > 0.99
    # 1/d_k: almost uniform over 8 keys, e^H close to 8.
    assert float(table.loc["effective keys e^H", "1/d_k"].split(" of ")[0]) > 7.5


def test_a_saturated_entropy_is_not_shown_as_zero():
    # d_k = 1024, σ² = 4, seed 0: the unscaled softmax puts all but about 5e-12 of the
    # weight on one key, so its entropy is tiny but not 0 (1.3e-10 computed in float64).
    at = run(sc_dk="1024", sc_sigma2="4.0")
    entropy = summary(at).loc["entropy H (of log n)", "no scaling"].split(" of ")[0]
    assert "×10⁻" in entropy, entropy


@pytest.mark.parametrize("query", [
    {"sc_dk": "1024", "sc_samples": "10000", "sc_trials": "200", "sc_nkeys": "64",
     "sc_sigma2": "4.0"},
    {"sc_temp": "0.05", "sc_nkeys": "1"},
    {"sc_temp": "20.0", "sc_dk": "1"},
])
def test_extreme_settings_give_numbers_not_nan(query):
    at = run(**query)
    text = " ".join(m.value for m in at.markdown) + summary(at).to_string()
    assert "nan" not in text.lower() and "inf" not in text.lower()


def test_temperature_slider_moves_between_hard_and_uniform():
    at = run()
    texts = " ".join(m.value for m in at.markdown)
    assert "hard attention" in texts
    at.select_slider(key="sc_temp").set_value(20.0).run()
    assert not at.exception
    # At T = 20 the 1/√d_k scores of 8 keys (|s| of order 1, below 3 with σ² = 1) are
    # divided by 20: every weight lies within a factor e^{±2·3/20} of 1/8.
    weights = chart_array(at, "sc_fig_temperature_weights", "y")
    assert weights.size == 8 and weights.sum() == pytest.approx(1.0)
    assert weights.max() < math.exp(6 / 20) / 8


def test_section_4_does_not_follow_d_k_n_or_sigma():
    # Its own example: moving the controls of sections 1 to 3 leaves its figures as
    # they were, so the browser does not draw them again.
    at = run()
    keys = ("sc_fig_temperature_weights", "sc_fig_temperature")
    before = [chart_spec(at, key) for key in keys]
    at.select_slider(key="sc_dk").set_value(512)
    at.slider(key="sc_sigma2").set_value(2.0)
    at.slider(key="sc_nkeys").set_value(30).run()
    assert [chart_spec(at, key) for key in keys] == before


def test_practice_question_checks_the_answer():
    at = run()
    at.number_input(key="sc_pq2").set_value(64.0).run()
    assert any("Right" in s.value for s in at.success)
    at.number_input(key="sc_pq2").set_value(8.0).run()  # the standard deviation, not variance
    assert any("Not quite" in w.value for w in at.warning)


def test_link_holds_settings_and_nonsense_falls_back():
    at = run(sc_dk="256", sc_samples="300")
    assert at.select_slider(key="sc_dk").value == 256
    assert moments(at).loc["qᵀk", "theory variance"] == 256.0
    at = run(sc_dk="1000", sc_samples="lots", sc_sigma2="-3")
    assert at.select_slider(key="sc_dk").value == 64
    assert math.isclose(moments(at).loc["qᵀk", "theory variance"], 64.0)


def test_temperature_is_tau():
    at = run()
    assert at.select_slider(key="sc_temp").label == "Softmax temperature τ"
    titles = [chart_spec(at, key)["layout"]["title"]["text"]
              for key in ("sc_fig_temperature_weights",)]
    assert titles == ["softmax(s / τ) at τ = 1"]


def test_presenter_mode_leaves_out_the_long_captions():
    at = run(presenter="true")
    main_captions = [c.value for c in at.main.caption]
    assert not any(c.startswith("Theory:") for c in main_captions)
    # every figure still drawn: histograms, variance, saturation, curves, temperature (2)
    assert len(at.get("plotly_chart")) == 6
