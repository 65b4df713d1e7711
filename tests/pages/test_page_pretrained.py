"""Interaction tests for lesson 9, the real pretrained model (AppTest, no browser)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import (
    assert_no_exception,
    chart_array,
    chart_spec,
    new_app,
    open_page,
    shown_number,
    text_of,
)
from streamlit.testing.v1 import AppTest

from attncore import encoder as pt
from pages.ui.numbers import percent_text
from tests.model_marks import needs_minilm

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "9_Pretrained_model.py")
DEFAULT = "My cat chases moonbeams across the kitchen."



def run(**query) -> AppTest:
    return open_page(PAGE, **query)


@needs_minilm
def test_defaults_show_the_model_s_own_weights():
    at = run()
    trace = pt.encode(DEFAULT, max_tokens=64)
    assert "12 WordPieces" in text_of(at)
    # Layer 1, head 3 by default; the figure carries float32 weights.
    np.testing.assert_allclose(chart_array(at, "pre_fig_head"), trace.attentions[0, 2], atol=1e-6)
    np.testing.assert_allclose(chart_array(at, "pre_fig_row", "y"), trace.attentions[0, 2, 2],
                               atol=1e-12)
    assert len(chart_spec(at, "pre_fig_grid")["data"]) == 72


@needs_minilm
def test_layer_head_and_query_controls_choose_the_map_and_the_row():
    at = run()
    at.selectbox(key="pre_layer").set_value(4)
    at.selectbox(key="pre_head").set_value(7)
    at.slider(key="pre_query").set_value(5)
    at.run()
    assert_no_exception(at)
    trace = pt.encode(DEFAULT, max_tokens=64)
    assert chart_spec(at, "pre_fig_head")["layout"]["title"]["text"].startswith("Layer 4, head 7")
    np.testing.assert_allclose(chart_array(at, "pre_fig_head"), trace.attentions[3, 6], atol=1e-6)
    np.testing.assert_allclose(chart_array(at, "pre_fig_row", "y"), trace.attentions[3, 6, 4],
                               atol=1e-12)
    assert "One head by hand: layer 4, head 7" in " ".join(h.value for h in at.header)


@needs_minilm
def test_each_section_picks_its_own_token():
    # The head view's row, the worked head's query and the LayerNorm token are separate
    # controls, each beside what it changes (each section reruns alone).
    at = run()
    at.slider(key="pre_hand_query").set_value(5).run()
    trace = pt.encode(DEFAULT, max_tokens=64)
    assert "Query 5 is “" in text_of(at)
    np.testing.assert_allclose(chart_array(at, "pre_fig_row", "y"), trace.attentions[0, 2, 2],
                               atol=1e-12)  # the head view's row is still 3
    at.slider(key="pre_ln_token").set_value(4).run()
    x = trace.attn_ln_input[0, 3]
    np.testing.assert_allclose(chart_array(at, "pre_fig_ln", "y"), x[:48], atol=1e-12)


@needs_minilm
def test_layer_norm_view_picks_its_own_layer():
    # The LayerNorm view has its own layer picker (it reruns alone); the head's Layer picker
    # leaves it where it was.
    at = run()
    trace = pt.encode(DEFAULT, max_tokens=64)
    at.selectbox(key="pre_layer").set_value(5).run()
    np.testing.assert_allclose(chart_array(at, "pre_fig_ln", "y"), trace.attn_ln_input[0, 2, :48],
                               atol=1e-12)
    at.selectbox(key="pre_ln_layer").set_value(4).run()
    assert_no_exception(at)
    np.testing.assert_allclose(chart_array(at, "pre_fig_ln", "y"), trace.attn_ln_input[3, 2, :48],
                               atol=1e-12)
    assert "enters layer 4's first LayerNorm" in text_of(at)


@needs_minilm
def test_the_explanation_section_follows_the_chosen_layer():
    at = run()
    at.selectbox(key="pre_layer").set_value(4).run()
    trace = pt.encode(DEFAULT, max_tokens=64)
    # Independently: each head's largest weight per query row, averaged over the rows.
    sharpest = trace.attentions[3].max(axis=-1).mean(axis=-1)  # (12,)
    assert chart_spec(at, "pre_fig_focus")["layout"]["title"]["text"].startswith("Layer 4:")
    np.testing.assert_allclose(chart_array(at, "pre_fig_focus", "y"), sharpest, atol=1e-6)
    assert any("Switch off layer 4, head 3" in m.label for m in at.metric)


@needs_minilm
def test_the_hand_computed_weight_is_the_model_s():
    at = run(pre_hand_query="3", pre_key="2")
    weight = pt.encode(DEFAULT, max_tokens=64).attentions[0, 2, 2, 1]
    assert f"The model's own weight is {weight:.6f}" in text_of(at)
    assert "divides by √32 ≈ 5.6569" in text_of(at)  # d_k = 384 / 12 = 32; √32 = 5.65685...


@needs_minilm
def test_the_hand_tables_hold_the_head_s_products_and_row():
    # Query 3 ("cat"), key 2 ("my") of layer 1, head 3: the products table holds q_c·k_c
    # for c = 1..32, which sum to the score; the row table's weights are the model's row 3.
    at = run(pre_hand_query="3", pre_key="2")
    trace = pt.encode(DEFAULT, max_tokens=64)
    q, k = trace.q[0, 2, 2], trace.k[0, 2, 1]
    tables = {tuple(t.value.columns): t.value for t in at.table}
    products = tables[("c", "q_c", "k_c", "q_c × k_c")]
    np.testing.assert_array_equal(products["c"], np.arange(1, 33))
    np.testing.assert_allclose(products["q_c × k_c"], q * k, atol=1e-12)
    np.testing.assert_allclose(products["q_c × k_c"].sum(), q @ k, rtol=1e-12)
    row = tables[("j", "key", "s", "s / √32", "e^(s̃ − m)", "weight")]
    assert list(row["key"]) == list(trace.tokens)
    np.testing.assert_allclose(row["weight"], trace.attentions[0, 2, 2], atol=1e-12)


@needs_minilm
def test_sink_shares_are_printed_per_layer():
    at = run()
    sinks = pt.special_token_mass(pt.encode(DEFAULT, max_tokens=64)).sum(axis=-1).mean(axis=1)
    assert f"L2 {sinks[1]:.0%}" in text_of(at)


@needs_minilm
@pytest.mark.parametrize(("text", "kind", "message"), [
    ("", "info", "Type a sentence"),
    ("    ", "info", "Type a sentence"),
    ("\u200b", "error", "no WordPieces"),
    ("你" * 400, "warning", "this page reads the first 63 ([CLS] included) and [SEP], 64 in"),
])
def test_bad_or_long_input_shows_a_message(text, kind, message):
    at = run()
    at.text_input(key="pre_text").set_value(text).run()
    assert_no_exception(at, repr(text))
    assert message in text_of(at, kind)


@needs_minilm
def test_html_is_shown_as_text():
    at = run(pre_text="<script>alert(1)</script>")
    assert "`<`" in text_of(at) and "`script`" in text_of(at)
    assert "&lt;" in chart_spec(at, "pre_fig_head")["data"][0]["y"][1]


@needs_minilm
def test_similarity_compares_with_a_paraphrase_and_an_unrelated_sentence():
    at = run()
    values = {m.label: float(m.value) for m in at.metric if "cosine(" in m.label}
    assert values["cosine(your sentence, paraphrase)"] > values["cosine(your sentence, unrelated)"]
    at.text_input(key="pre_para").set_value("").run()
    assert "Type a paraphrase sentence" in text_of(at, "info")


@needs_minilm
def test_presenter_mode_hides_the_downloads():
    at = run()
    assert at.get("download_button")
    at.toggle(key="presenter").set_value(True).run()
    assert_no_exception(at)
    assert not at.get("download_button")


def test_without_the_model_package_the_page_says_how_to_install_it(monkeypatch):
    def missing():
        raise pt.ModelNotInstalledError("not installed")

    monkeypatch.setattr(pt, "model", missing)
    at = new_app(PAGE).run()
    assert_no_exception(at)
    assert "not installed" in text_of(at, "info")
    assert pt.INSTALL_COMMAND in " ".join(c.value for c in at.code)


@needs_minilm
def test_statistic_picker_maps_the_chosen_statistic_of_every_head():
    at = run()
    trace = pt.encode(DEFAULT, max_tokens=64)
    at.selectbox(key="pre_stat").set_value("mass on [CLS]")
    at.run()
    assert_no_exception(at)
    # Independently: the mean over query rows of each head's weight on key 0 ([CLS]).
    expected = trace.attentions[..., :, 0].mean(axis=-1)  # (6 layers, 12 heads)
    shown = chart_array(at, "pre_fig_stats")
    assert shown.shape == (6, 12)
    np.testing.assert_allclose(shown, expected, atol=1e-6)  # float32 on the wire
    assert chart_spec(at, "pre_fig_stats")["layout"]["title"]["text"] == "mass on [CLS]"


@needs_minilm
def test_the_block_table_counts_its_own_rows():
    text = next(m.value for m in run().markdown if m.value.startswith("| step |"))
    table = [line for line in text.split("\n") if line.startswith("| ")]
    rows = [line.split(" | ")[0].strip("| ") for line in table[1:]]  # past the header
    assert rows[0] == "embeddings" and len(rows) == 6
    # every row after the embeddings repeats per layer: attention, W_O, residual +
    # LayerNorm, feed-forward, residual + LayerNorm
    assert "The last 5 rows repeat in each of the 6 layers." in text


@needs_minilm
def test_the_sentence_embedding_is_said_to_be_l2_normalised():
    at = run()
    caption = text_of(at, "caption")
    assert "divided by its Euclidean (L2) norm so that it has norm 1" in caption
    assert "divided by its length" not in caption


@needs_minilm
def test_the_row_sentence_never_rounds_a_weight_to_an_exact_looking_1():
    at = run()  # layer 1, head 3, row 3 ("cat"): 0.99997 on "my"
    w = pt.encode(DEFAULT, max_tokens=64).attentions[0, 2, 2]
    top = np.argsort(w)[::-1][:3]
    assert w[top[0]] < 1 and "its largest weights are on “my” (1.00)" in text_of(at)
    assert "(1)" not in text_of(at)
    assert f"“cat” ({w[top[1]]:.3g}" not in text_of(at)  # scientific as the pages write it


@needs_minilm
def test_same_weights_is_said_as_the_difference_allows():
    at = run()
    text = text_of(at)
    shown = text.split("gives the same weights")[1].split("largest difference ")[1]
    difference = shown_number(shown)
    said = "the same weights up to rounding" if difference > 0 else "the same weights ("
    assert ("gives " + said) in text


@needs_minilm
@pytest.mark.parametrize("text", [DEFAULT, "hi"])
def test_what_to_notice_counts_the_sink_and_previous_token_heads(text):
    at = run(pre_text=text)
    trace = pt.encode(text, max_tokens=64)
    T = len(trace.tokens)
    # Independently: the weight on the first and last key ([CLS], [SEP]), per head,
    # averaged over the query rows; and the weight on key i − 1, averaged over the T − 1
    # rows i = 1..T−1 that have a token before (as section 2's caption).
    sink = trace.attentions[..., [0, T - 1]].sum(axis=-1).mean(axis=-1)  # (6, 12)
    previous = np.stack([trace.attentions[..., i, i - 1] for i in range(1, T)],
                        axis=-1).sum(axis=-1) / (T - 1)
    notice = text_of(at)
    assert f"{int((sink > 0.5).sum())} of the 72 heads each put more than half" in notice
    layers = [f"L{r + 1}" for r in range(6) if sink[r].mean() > 0.5]
    assert f"in {', '.join(layers)} more than half of all attention lands there" in notice
    l, h = np.unravel_index(np.argmax(previous), previous.shape)
    assert (f"the most: layer {l + 1}, head {h + 1}, {percent_text(previous[l, h])} on average "
            f"over the {T - 1} rows that have a token before") in notice
    n = int((previous > 0.5).sum())
    assert (f"{n} of the 72 heads each put" if n > 1 else f"{n} of the 72 heads puts") + \
        " more than half of its weight on the previous token" in notice


@needs_minilm
@pytest.mark.parametrize("text", [DEFAULT, "hi"])
def test_cls_and_sep_are_called_sinks_only_well_above_an_even_spread(text):
    at = run(pre_text=text)
    trace = pt.encode(text, max_tokens=64)
    T = len(trace.tokens)
    # Independently: per layer, the weight on the first and last key averaged over heads and
    # rows; an even spread over T keys gives the 2 special tokens 2 / T of it.
    layer_share = trace.attentions[..., [0, T - 1]].sum(axis=-1).mean(axis=(1, 2))  # (6,)
    even = 2 / T  # 1/6 for 12 tokens, 2/3 for "hi" (3 tokens)
    text_shown = text_of(at)
    assert (f"2 tokens out of {T} get up to {layer_share.max():.0%} of it, against {even:.0%} "
            "if every query spread its weight evenly") in text_shown
    sinks = layer_share.max() >= 2 * even
    assert sinks == (text == DEFAULT)  # 66% against 17% at the default; "hi" cannot reach 133%
    assert ("they act as [attention sinks]" in text_shown) == sinks
    assert ("A common reading of such sinks" in text_shown) == sinks
    assert ("too little above it to call them sinks on this sentence" in text_shown) != sinks


@needs_minilm
def test_rounded_numbers_by_hand_are_written_with_approx():
    at = run(pre_hand_query="3", pre_key="2")
    trace = pt.encode(DEFAULT, max_tokens=64)
    s = trace.q[0, 2, 2] @ trace.k[0, 2, 1]  # 131.849..., not 131.849 exactly
    assert float(f"{s:.6g}") != s
    latex = " ".join(x.value for x in at.latex)
    assert f"s \\approx {s:.6g}" in latex and f"s = {s:.6g}" not in latex
    assert "q_c\\, k_c \\approx (" in latex  # the factors are rounded to 3 decimals


@needs_minilm
def test_the_ablation_metric_never_rounds_a_cosine_to_an_exact_looking_1(monkeypatch):
    cosines = np.full(12, 1 - 2e-7)
    cosines[5] = 1 - 3e-3
    monkeypatch.setattr(pt, "ablate_each_head", lambda *args: cosines)
    at = run()  # layer 1, head 3: 1 − cosine = 2e-7 (about: 1 − (1 − 2e-7) in float64)
    value = next(m.value for m in at.metric if "Switch off layer 1, head 3" in m.label)
    assert value.startswith("1 − 2.0×10⁻⁷") and "1.00000" not in value
    assert "the head whose removal moves the embedding most is H6" in text_of(at)


@needs_minilm
@pytest.mark.parametrize("layer", [1, 4])
def test_the_most_moving_and_the_sharpest_head_are_compared(layer):
    at = run(pre_layer=str(layer))
    trace = pt.encode(DEFAULT, max_tokens=64)
    moved = 1 - pt.ablate_each_head(DEFAULT, layer - 1, 64)
    sharpest = trace.attentions[layer - 1].max(axis=-1).mean(axis=-1)  # (12,)
    most, sharp = int(np.argmax(moved)), int(np.argmax(sharpest))
    text = text_of(at)
    assert f"moves the embedding most is H{most + 1}" in text
    if most == sharp:
        assert "the one that attends most sharply is the same head here" in text
    else:
        assert f"the one that attends most sharply is H{sharp + 1}, another head." in text


@needs_minilm
def test_each_statistic_is_said_under_its_map():
    at = run()
    assert "Per [head](" in text_of(at) and "divided by ln T, its largest possible value" in \
        text_of(at)
    at.selectbox(key="pre_stat").set_value("previous-token mass").run()
    assert "averaged over the rows that have one (all but the first, [CLS])" in text_of(at)


@needs_minilm
def test_layer_norm_is_not_said_to_give_variance_exactly_1():
    at = run()
    names = [trace["name"] for trace in chart_spec(at, "pre_fig_ln")["data"]]
    assert "z = (x − μ)/√(σ² + ε)" in names and not any("variance 1" in n for n in names)
    assert "variance just under 1" in text_of(at)
