"""Interaction tests for lesson 7, the cost of attention (AppTest, no browser)."""

from __future__ import annotations

from pathlib import Path

from conftest import open_page, shown_number
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "7_Cost.py")


def run(**query) -> AppTest:
    return open_page(PAGE, **query)


def measurements(at: AppTest):
    return next(d.value for d in at.table if "peak / weights" in d.value.columns)


def test_defaults_measure_every_length_with_exact_weight_sizes():
    at = run(cost_max_n="256", cost_heads="2", cost_rounds="3")
    table = measurements(at)
    assert list(table["n"]) == [64, 128, 256]
    # H·n²·8 bytes in MiB: 2·64²·8 / 2²⁰ = 0.0625, then ×4 per doubling.
    assert list(table["weights H·n² (MiB)"]) == [0.0625, 0.25, 1.0]
    assert (table["peak / weights"] >= 1.0).all()
    # The best time is the best over the rounds: never above the slowest round's best.
    assert (table["best time (ms)"] <= table["slowest round's best (ms)"]).all()


def test_the_growth_is_stated_with_its_spread_or_called_inconclusive():
    at = run(cost_max_n="256", cost_heads="2", cost_rounds="3")
    text = " ".join(m.value for m in at.markdown) + " ".join(w.value for w in at.warning)
    assert "fitted one by one give" in text
    assert ("time grows like" in text) != ("Too noisy to conclude" in text)


def test_unrelated_rerun_does_not_measure_again():
    at = run(cost_max_n="256", cost_heads="2", cost_rounds="3")
    first = measurements(at)["best time (ms)"].tolist()
    at.select_slider(key="cost_chunk").set_value(16).run()  # another section's control
    assert measurements(at)["best time (ms)"].tolist() == first  # kept for this visitor
    at.button(key="cost_again").click().run()
    assert measurements(at)["best time (ms)"].tolist() != first  # measured anew


def test_the_control_says_where_the_cap_stops_n():
    at = run(cost_max_n="2048", cost_heads="8", cost_rounds="3")
    assert "n stops at 512" in " ".join(w.value for w in at.warning)
    assert measurements(at)["n"].max() == 512  # 8·512² = 2,097,152 <= 4·1024² < 8·1024²


def test_chunked_output_difference_and_memory_on_the_page():
    at = run(cost_heads="2", cost_rounds="3")
    metrics = {m.label: m.value for m in at.metric}
    assert shown_number(metrics["Largest difference in the output"]) < 1e-12
    full = float(metrics["Peak memory, all rows"].split()[0])
    chunk = float(metrics["Peak memory, 64 rows at a time"].split()[0])
    assert chunk < full / 2


def test_loop_against_vectorised_at_both_settings():
    at = run(cost_heads="2", cost_rounds="3")
    table = next(d.value for d in at.table if "speed-up" in d.value.columns)
    assert len(table) == 2 and (table["largest difference"] < 1e-12).all()
    assert all("rounds:" in s for s in table["speed-up"])


def test_the_largest_n_changes_section_1_only():
    at = run(cost_max_n="256", cost_heads="2", cost_rounds="3")
    loop = next(d.value for d in at.table if "speed-up" in d.value.columns)
    at.select_slider(key="cost_max_n").set_value(512).run()
    assert list(measurements(at)["n"]) == [64, 128, 256, 512]
    again = next(d.value for d in at.table if "speed-up" in d.value.columns)
    assert again.equals(loop)  # the loop timings were not measured again
