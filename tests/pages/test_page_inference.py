"""Interaction tests for lesson 11, attention at inference (AppTest, no browser)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from conftest import assert_no_exception, chart_array, open_page, text_of
from streamlit.testing.v1 import AppTest

from attncore import lm
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
    # the window's share, from the kept weights: the layer shown (where full attention puts
    # most on token 1), each query row that lost token 1, its weight on itself and the 31
    # keys before it, summed, then averaged over the rows
    shifted = inf.window_perplexities(inf.default_text(), 32, 4, 256, shift=True).shift
    layer = int(np.argmax(shifted.dense_first))
    rows = range(256 - shifted.rows, 256)
    full, windowed = (np.mean([maps[layer, p, p - 31: p + 1].sum() for p in rows])
                      for maps in shifted.maps[:2])
    assert (f"get {full:.1%} of a query's weight with full attention and {windowed:.1%} "
            f"under the window: {100 * (windowed - full):.1f} percentage points more") in text
    # where token 1's weight goes once masked: the same window share, said in the sentence
    # that calls the tokens it spreads onto neither ignored nor not; the 4 sinks take more
    # than token 1 held (0.80 against 0.67 here), so they are called the sink
    gained = shifted.window_oldest[layer] - shifted.dense_oldest[layer]
    assert gained < shifted.dense_first[layer] / 2
    assert (f"only {100 * gained:.1f} percentage points "
            f"({gained / shifted.dense_first[layer]:.0%} of that weight) move to") in text
    assert f"onto tokens that held {full:.0%} of the query's weight with full" in text
    on_sinks, first = shifted.sinks_on_sinks[layer], shifted.dense_first[layer]
    compared = ("about as much as" if abs(on_sinks - first) <= 0.1 * first else
                "more than" if on_sinks > first else "less than")
    assert f"they take {on_sinks:.0%} of the weight, {compared} the {first:.0%} token 1 " \
           "held" in text
    assert ("they take its place as the" in text) == (on_sinks >= first / 2)
    # 8,192 tokens: Mistral's rolling cache holds its last 4,096; Llama 2 (4,096) and
    # Falcon (2,048) were trained on shorter contexts
    table = next(t.value for t in at.table if "KV heads" in t.value.columns).set_index("model")
    assert table.loc["Mistral 7B v0.1 (grouped-query)", "cache (fp16)"].endswith("✱")
    assert "its rolling cache keeps only the last 4,096" in text
    marked = table.index[table["context it was trained for"].str.contains("†")]
    assert set(marked) == {"Llama 2 7B (multi-head)", "Llama 2 70B (grouped-query)",
                           "Falcon 7B (multi-query)"}


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
    # 1,024 tokens: within every window and every trained context, nothing is marked
    table = next(t.value for t in at.table if "KV heads" in t.value.columns)
    assert not table.map(lambda cell: "✱" in str(cell) or "†" in str(cell)).any().any()


@needs_smollm
def test_the_online_softmax_equals_plain_attention_on_the_page():
    at = run(inf_steps="2", inf_fa_bk="5", inf_fa_bq="7", inf_fa_row="30")
    assert_no_exception(at)
    assert "The tiled result against plain attention, both in float64" in text_of(at)
    blocks = [t.value for t in at.table if "m (running max)" in t.value.columns]
    assert len(blocks) == 1 and len(blocks[0]) == -(-48 // 5)  # ceil(48 / 5) blocks
    # 48 = 9 · 5 + 3; a tile is at most 7 query rows by 5 keys
    assert "10 blocks of 5 (the last of 3)" in text_of(at)
    assert "at most 7 × 5 = 35 scores, never the whole 48 × 48 matrix" in text_of(at)
    # both blocks as long as the text: one tile is the whole matrix, and the page says so
    at.slider(key="inf_fa_bk").set_value(48).run()
    at.slider(key="inf_fa_bq").set_value(48).run()
    assert "one tile is the whole 48 × 48 matrix" in text_of(at)
    assert "never the whole" not in text_of(at)


@needs_smollm
def test_the_timing_sentence_follows_the_fitted_exponents(monkeypatch):
    """The cached time's growth is called nearly flat only when every round's fit says
    so; the context at which the cache outweighs the weights comes from the model's sizes.
    The timing itself is replaced by made-up times (it takes 5 to 20 s)."""
    contexts = np.array([16, 32, 64, 128, 256])

    def made_up(growth):
        def times(contexts_asked, rounds=2, progress=None, m=None):
            cached = np.vstack([1e-3 * (contexts / 16) ** growth] * 2)
            uncached = np.vstack([1e-3 * contexts / 16] * 2)
            return inf.TokenTimes(contexts, cached, uncached, np.full(2, growth),
                                  np.ones(2))
        return times

    for growth, flat in ((0.05, True), (0.6, False)):
        monkeypatch.setattr(inf, "token_times", made_up(growth))
        at = run(inf_steps="2")
        at.button(key="inf_measure_times").click().run()
        assert_no_exception(at, f"growth {growth}")
        said = text_of(at)
        assert ("(nearly flat here: every k below 0.2)" in said) == flat
        m = lm.model()
        at_least = -(-m.weights.bytes_per_token // (2 * 30 * 3 * 64 * 4))  # ceil, by hand
        assert f"from {at_least:,} tokens on the cache outweighs the weights" in said
        # past the 8,192 tokens SmolLM2 was trained on, so the page says when 8 caches
        # (8 conversations at once) outweigh the weights: ceil(weights / (8 · 46,080))
        assert at_least > 8192
        served = -(-m.weights.bytes_per_token // (8 * 2 * 30 * 3 * 64 * 4))
        assert f"the caches outweigh the weights from {served:,} tokens on" in said


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

    def counted(prompt, steps, m=None, **progress):
        calls.append((prompt, steps))
        return real(prompt, steps, m=m, **progress)

    monkeypatch.setattr(inf, "cache_comparison", counted)
    first, second = run(inf_steps="3"), run(inf_steps="3")
    assert calls == [("The capital of France is", 3)]
    said = [text_of(at, "caption") for at in (first, second)]
    assert all("Measured on this server under a minute ago, 3 steps:" in s for s in said)
    # Both captions quote the same measured seconds: one measurement, shown twice.
    times = [s.split(", 3 steps: ")[1].split(" without")[0] for s in said]
    assert times[0] == times[1]
