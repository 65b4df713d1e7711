"""Interaction tests for lesson 5, positional encodings (AppTest, no browser)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import open_page
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "5_Positional_encoding.py")


def run(**query) -> AppTest:
    return open_page(PAGE, **query)


def markdown(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown)


def number_after(text: str, phrase: str) -> float:
    match = re.search(re.escape(phrase) + r"\s*\**([-0-9.e+]+)", text)
    assert match, f"{phrase!r} not in {text[:400]!r}"
    return float(match.group(1).rstrip("."))


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
    table = next(d.value for d in at.dataframe if "shuffled" in d.value.index)
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
