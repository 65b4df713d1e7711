"""Interaction tests for lesson 11, attention at inference (AppTest, no browser)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from conftest import assert_no_exception, chart_array, open_page, text_of
from streamlit.testing.v1 import AppTest

from attncore.lm import inference as inf
from tests.model_marks import needs_smollm

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "11_Inference.py")



def run(**query) -> AppTest:
    return open_page(PAGE, timeout=180, **query)


@needs_smollm
def test_defaults_measure_the_cache_the_merge_and_the_window():
    at = run(inf_steps="3")
    text = text_of(at)
    assert "**the same tokens**" in text
    # "The capital of France is" is 5 tokens; after 3 steps the cache holds 5 + 2 = 7:
    # 2 · 30 · 3 · 64 · 7 · 4 = 322,560 bytes
    assert "**322,560 bytes** measured on the arrays themselves, equal to the formula" in text
    merged = inf.merged_kv_perplexity(inf.default_text(), 256)
    assert f"{merged.gqa:.2f}" in [m.value for m in at.metric]
    # the rise is about 500-fold here: a whole number with its thousands grouped, never
    # scientific notation (which .3g gives from 1,000 on)
    assert f"×{merged.merged / merged.gqa:,.0f}" in [m.delta for m in at.metric]
    window = inf.window_perplexities(inf.default_text(), 32, 4, 256)
    np.testing.assert_allclose(chart_array(at, "inf_fig_window", "y"),
                               [window.dense, window.window, window.window_sinks], atol=1e-9)


@needs_smollm
def test_other_settings_wait_for_the_measure_button():
    at = run(inf_steps="2", inf_window="16", inf_sinks="2", inf_tokens="64")
    assert not [c for c in at.get("plotly_chart") if "inf_fig_window" in c.proto.id]
    at.button(key="inf_measure_window").click().run()
    assert_no_exception(at)
    window = inf.window_perplexities(inf.default_text(), 16, 2, 64)
    np.testing.assert_allclose(chart_array(at, "inf_fig_window", "y"),
                               [window.dense, window.window, window.window_sinks], atol=1e-9)


@needs_smollm
def test_the_cache_table_scales_with_context_and_batch():
    at = run(inf_steps="2", inf_ctx="1024", inf_batch="2")
    # 2 · 30 · 3 · 64 · 1024 · 2 · 2 bytes (fp16) = 47.2 MB for SmolLM2 as trained
    assert f"{2 * 30 * 3 * 64 * 1024 * 2 * 2 / 1e6:.3g} MB in fp16 with its 3 KV heads" in \
        text_of(at)


@needs_smollm
def test_the_online_softmax_equals_plain_attention_on_the_page():
    at = run(inf_steps="2", inf_fa_bk="5", inf_fa_bq="7", inf_fa_row="30")
    assert_no_exception(at)
    assert "The tiled result against plain attention, both in float64" in text_of(at)
    blocks = [t.value for t in at.table if "m (running max)" in t.value.columns]
    assert len(blocks) == 1 and len(blocks[0]) == -(-48 // 5)  # ceil(48 / 5) blocks


@needs_smollm
def test_the_memory_measurement_on_request():
    at = run(inf_steps="2")
    at.button(key="inf_measure_memory").click().run()
    assert_no_exception(at)
    peaks = chart_array(at, "inf_fig_memory", "y", trace=0)  # plain, MiB
    tiled = chart_array(at, "inf_fig_memory", "y", trace=1)
    assert peaks[-1] > 30 * tiled[-1]  # n = 2048: 32 MiB of weights alone against a few tiles


@needs_smollm
def test_own_text_that_is_too_short_asks_for_more():
    at = run(inf_steps="2", inf_text="Your own text", inf_own="Just a few words.")
    assert_no_exception(at)
    assert "type or paste at least 64" in text_of(at, "info")


@needs_smollm
def test_a_class_arriving_at_once_writes_the_tokens_once(monkeypatch):
    """The second student to open the same prompt and count is shown the first one's
    comparison, and told it was measured earlier on this server, not in their run."""
    calls = []
    real = inf.cache_comparison

    def counted(prompt, steps):
        calls.append((prompt, steps))
        return real(prompt, steps)

    monkeypatch.setattr(inf, "cache_comparison", counted)
    first, second = run(inf_steps="3"), run(inf_steps="3")
    assert calls == [("The capital of France is", 3)]
    said = [text_of(at, "caption") for at in (first, second)]
    assert all("Measured on this server under a minute ago, 3 steps:" in s for s in said)
    # Both captions quote the same measured seconds: one measurement, shown twice.
    times = [s.split(", 3 steps: ")[1].split(" without")[0] for s in said]
    assert times[0] == times[1]
