"""Interaction tests for lesson 7, the cost of attention (AppTest, no browser)."""

from __future__ import annotations

from pathlib import Path

from conftest import open_page
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "7_Cost.py")


def run(**query) -> AppTest:
    return open_page(PAGE, **query)


def measurements(at: AppTest):
    return next(d.value for d in at.dataframe if "peak / weights" in d.value.columns)


def test_defaults_measure_every_length_with_exact_weight_sizes():
    at = run(cost_max_n="256", cost_heads="2")
    table = measurements(at)
    assert list(table["n"]) == [64, 128, 256]
    # H·n²·8 bytes in MiB: 2·64²·8 / 2²⁰ = 0.0625, then ×4 per doubling.
    assert list(table["weights H·n² (MB)"]) == [0.0625, 0.25, 1.0]
    assert (table["peak / weights"] >= 1.0).all()


def test_unrelated_rerun_does_not_measure_again():
    at = run(cost_max_n="256", cost_heads="2")
    first = measurements(at)["time (ms)"].tolist()
    at.select_slider(key="cost_chunk").set_value(16).run()  # another section's control
    assert measurements(at)["time (ms)"].tolist() == first  # cached on its settings
    at.button(key="cost_again").click().run()
    assert measurements(at)["time (ms)"].tolist() != first  # measured anew


def test_caps_stop_the_measurement_with_a_message():
    at = run(cost_max_n="2048", cost_heads="8")
    assert "over the cap" in " ".join(w.value for w in at.warning)
    assert measurements(at)["n"].max() == 512  # 8·512² = 2,097,152 <= 4·1024²


def test_chunked_output_difference_and_memory_on_the_page():
    at = run(cost_heads="2")
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["Largest difference in the output"]) < 1e-12
    full = float(metrics["Peak memory, all rows"].split()[0])
    chunk = float(metrics["Peak memory, 64 rows at a time"].split()[0])
    assert chunk < full / 2
