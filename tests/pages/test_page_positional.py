"""Interaction tests for lesson 5, positional encodings (AppTest, no browser)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import chart_array, chart_spec, open_page, shown_number
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "5_Positional_encoding.py")


def run(**query) -> AppTest:
    return open_page(PAGE, **query)


def markdown(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown)


def number_after(text: str, phrase: str) -> float:
    assert phrase in text, f"{phrase!r} not in {text[:400]!r}"
    return shown_number(text.split(phrase, 1)[1])


def test_shift_error_and_toeplitz_spread_are_rounding_only():
    at = run()
    text = markdown(at)
    assert number_after(text, "the largest error is") < 1e-12
    assert number_after(text, "largest spread along a diagonal:") < 1e-12


def test_permutation_without_positions_matches_and_with_positions_differs():
    at = run()
    text = markdown(at)
    assert number_after(text, "(largest difference") < 1e-12
    assert number_after(text, "they differ by up to") > 1e-3


@pytest.mark.parametrize("query", [
    {"pe_len": "512", "pe_dmodel": "512"},
    {"pe_len": "8", "pe_dmodel": "2", "pe_base": "100"},
    {"pe_base": "100000", "pe_offset": "63"},
])
def test_extreme_settings_render(query):
    at = run(**query)
    assert number_after(markdown(at), "the largest error is") < 1e-11


def test_pooled_table_stays_small_on_the_wire():
    at = run(pe_len="512", pe_dmodel="512")
    import json
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        for trace in spec["data"]:
            if trace.get("type") == "heatmap":
                assert len(trace["y"]) <= 64 and len(trace["x"]) <= 64


def test_short_sentence_and_html_are_handled():
    at = run(pe_sentence="one")
    assert "at least two tokens" in " ".join(i.value for i in at.info)
    at = run(pe_sentence="<script>alert(1)</script>")
    table = next(d.value for d in at.table if "shuffled" in d.value.index)
    assert "script" in table.loc["original"].tolist()


def test_alibi_slopes_listed_and_practice_question_checks():
    at = run(pe_heads="4")
    captions = " ".join(c.value for c in at.caption)
    assert "Slopes: 0.25, 0.0625, 0.01562, 0.003906" in captions  # 4^-1 .. 4^-4
    at.number_input(key="pe_pq1").set_value(0.8415).run()
    assert any("Right" in s.value for s in at.success)


def test_dependent_controls_survive_their_range_shrinking():
    # Regressions found by the fuzzer: a kept slider value above a new, smaller maximum
    # raised StreamlitValueAboveMaxError, and one ALiBi head made min = max = 1.
    at = run()
    at.slider(key="pe_heads").set_value(1).run()
    assert not at.exception
    at.slider(key="pe_len").set_value(512).run()
    at.slider(key="pe_offset").set_value(53).run()
    at.slider(key="pe_len").set_value(8).run()
    assert not at.exception and at.slider(key="pe_offset").value == 7  # clamped to T - 1
    at.slider(key="pe_len").set_value(9).run()
    assert not at.exception and at.slider(key="pe_offset").value == 7


def captions(at: AppTest) -> str:
    return " ".join(c.value for c in at.caption)


def test_positions_are_counted_from_1_on_the_page():
    at = run(pe_len="8", pe_dmodel="4")
    spec = chart_spec(at, "pe_fig_table")
    assert spec["data"][0]["y"] == [str(p) for p in range(1, 9)]
    # Position 1 is the formula's p = 0: sin 0 = 0 and cos 0 = 1 in every pair.
    assert list(chart_array(at, "pe_fig_table")[0]) == [0.0, 1.0, 0.0, 1.0]
    shuffled = next(d.value for d in at.table if "shuffled" in d.value.index)
    assert list(shuffled.columns) == [str(p) for p in range(1, 7)]  # "The cat sat on the mat"
    at.radio(key="pe_view").set_value("Chosen pairs").run()
    assert list(chart_array(at, "pe_fig_dims", "x")) == list(range(1, 9))


def test_one_pair_at_d_model_2_is_said_once_and_not_offered_three_times():
    at = run(pe_dmodel="2", pe_view="Chosen pairs")
    assert "A single pair, pair 0" in captions(at) and "to 6 positions" not in captions(at)
    assert not [m for m in at.multiselect if m.key == "pe_pairs"]
    at = run(pe_dmodel="4", pe_view="Chosen pairs")
    picker = at.multiselect(key="pe_pairs")
    assert picker.value == [0, 1] and len(set(picker.value)) == len(picker.value)


def test_large_table_draws_true_entries_on_a_minus_1_to_1_scale():
    at = run(pe_len="512", pe_dmodel="512", pe_base="10000")
    spec = chart_spec(at, "pe_fig_table")
    trace = spec["data"][0]
    assert (trace["zmin"], trace["zmax"]) == (-1.0, 1.0)
    assert "(1 position in 8 and 1 sin/cos pair in 8 drawn)" in spec["layout"]["title"]["text"]
    assert "pooled" not in spec["layout"]["title"]["text"]
    assert "never an average" in captions(at)
    # Rows: positions 1, 9, 17, … (p = 0, 8, 16, …); columns: pairs 0, 8, 16, … and each
    # pair's two columns. Each drawn value is the formula's, computed here directly.
    z = chart_array(at, "pe_fig_table")
    rows = [int(y) - 1 for y in trace["y"]]
    cols = [int(x) for x in trace["x"]]
    assert rows[:3] == [0, 8, 16] and cols[:4] == [0, 1, 16, 17] and z.shape == (64, 64)
    for i, p in enumerate(rows):
        for j, c in enumerate(cols):
            angle = p / 10000 ** ((c - c % 2) / 512)
            expected = np.sin(angle) if c % 2 == 0 else np.cos(angle)
            assert abs(z[i, j] - expected) < 1e-6  # float32 on the wire
    # The fast columns keep their swing: an average over blocks would bring it near 0.
    assert z[:, 0].max() > 0.9 and z[:, 0].min() < -0.9


def test_large_similarity_maps_draw_true_entries_not_block_averages():
    # d_model = 2: one pair with ω = 1, so PE(p)·PE(q) = cos(p − q), which swings between
    # −1 and 1 every few positions; 8 × 8 block averages of it stayed within ±0.03.
    at = run(pe_len="512", pe_dmodel="2")
    spec = chart_spec(at, "pe_fig_similarity")
    assert "(1 position in 8 drawn)" in spec["layout"]["title"]["text"]
    z = chart_array(at, "pe_fig_similarity")
    drawn = np.array([int(y) - 1 for y in spec["data"][0]["y"]])  # the formula's p
    expected = np.cos(drawn[:, None] - drawn[None, :])
    np.testing.assert_allclose(z, expected, atol=1e-6)  # float32 on the wire
    assert z.max() > 0.99 and z.min() < -0.99
    at = run(pe_len="512", pe_dmodel="2", pe_view="Wavelengths")
    assert not [c for c in at.get("plotly_chart") if "pe_fig_wavelengths" in c.proto.id]
    assert "A single pair, pair 0: its wavelength is 2π ≈ 6.28 positions" in captions(at)


def figures_shown(at: AppTest) -> str:
    return " ".join(c.proto.id for c in at.get("plotly_chart"))


def test_one_figure_per_view_and_every_view_is_one_click_away():
    # A slider that feeds every view redraws only the one shown (each costs the browser).
    at = run()
    assert "pe_fig_table" in figures_shown(at) and "pe_fig_dims" not in figures_shown(at)
    at.radio(key="pe_view").set_value("Chosen pairs").run()
    assert "pe_fig_dims" in figures_shown(at) and "pe_fig_table" not in figures_shown(at)
    # d_model = 64: pairs 0, 1, 8 and 31 by default, each the formula's sin column.
    assert at.multiselect(key="pe_pairs").value == [0, 1, 8, 31]
    np.testing.assert_allclose(chart_array(at, "pe_fig_dims", "y", trace=2)[:3],
                               np.sin(np.arange(3) / 10000 ** (16 / 64)), atol=1e-6)
    at.radio(key="pe_view").set_value("Wavelengths").run()
    np.testing.assert_allclose(chart_array(at, "pe_fig_wavelengths", "y"),
                               2 * np.pi * 10000 ** (np.arange(32) * 2 / 64), rtol=1e-6)
    at.radio(key="pe_similarity").set_value("Cosine").run()
    assert "pe_fig_cosine" in figures_shown(at)
    assert "pe_fig_similarity" not in figures_shown(at)
    np.testing.assert_allclose(np.diag(chart_array(at, "pe_fig_cosine")), 1.0, atol=1e-6)


def test_the_shuffle_follows_its_seed_not_d_model():
    def shuffled(**query):
        at = run(**query)
        return next(d.value for d in at.table if "shuffled" in d.value.index)
    first = shuffled()
    assert first.loc["shuffled"].tolist() == shuffled(pe_dmodel="16").loc["shuffled"].tolist()
    assert sorted(first.loc["shuffled"]) == sorted(first.loc["original"])
