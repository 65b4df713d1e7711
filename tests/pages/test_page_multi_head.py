"""Interaction tests for lesson 4, multi-head attention (AppTest, no browser)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from conftest import chart_array, chart_spec, open_page
from presenter_order import above_first_figure, not_allowed_above
from streamlit.testing.v1 import AppTest

from pages.ui.glossary import term_link

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "4_Multi_head.py")


def run(**query) -> AppTest:
    return open_page(PAGE, **query)


def charts(at: AppTest) -> dict:
    return {c.proto.id: json.loads(c.proto.spec) for c in at.get("plotly_chart")}


def markdown(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown)


def test_a_heads_queries_match_its_slice_of_q_in_words():
    """An exact 0 reads "exactly 0", never "0.0e+00"; a rounding difference says so."""
    text = markdown(run())
    match = re.search(r"Its queries X W_Qʰ are the head's slice of Q: the largest difference "
                      r"is (exactly 0|\d\.\d×10⁻[⁰¹²³⁴⁵⁶⁷⁸⁹]+ \(rounding\))\.", text)
    assert match, text[:600]
    assert "e+00" not in text


def test_shapes_are_written_with_the_current_numbers():
    at = run()
    text = markdown(at)
    # Default sentence: 11 tokens; d_model = 32, H = 4, d_k = 32/4 = 8.
    assert (f"T = 11 tokens, {term_link('d_model', 'd_model')} = 32 (the width of each "
            "token's vector), H = 4 heads, d_k = d_model / H = 8") in text
    assert "| (4, 11, 11) weights |" in text and "| (11, 4·8 = 32) |" in text
    at.select_slider(key="mha_dmodel").set_value(64)
    at.run()
    at.selectbox(key="mha_heads").set_value(8).run()
    assert "(8, 11, 8) each" in markdown(at)


def test_only_divisors_are_offered_as_head_counts():
    at = run()
    for d_model in (8, 16, 32, 64, 128):
        at.select_slider(key="mha_dmodel").set_value(d_model).run()
        offered = [int(h) for h in at.selectbox(key="mha_heads").options]
        assert offered == [h for h in range(1, d_model + 1) if d_model % h == 0]


def test_parameter_count_is_the_same_for_one_and_h_heads():
    at = run(mha_dmodel="64", mha_heads="16")
    # 4 · 64² = 16,384 for one head and for 16 heads.
    assert markdown(at).count("16,384") >= 3


def test_designed_heads_are_checked_on_the_page():
    at = run(mha_weights="designed", mha_heads="8")
    table = next(t.value for t in at.table if "pattern" in t.value.columns)
    assert list(table["pattern"]) == ["previous", "self", "first", "same word"] * 2
    assert set(table["largest weight there"]) == {"✓"}
    grid = chart_spec(at, "mha_fig_heads")  # one panel per head, titled by annotations
    titles = [a["text"] for a in grid["layout"]["annotations"]]
    assert titles[:4] == ["head 1: previous", "head 2: self", "head 3: first",
                          "head 4: same word"]


def test_designed_heads_offer_only_head_counts_with_two_dimensions_each():
    at = run(mha_weights="designed")
    for d_model in (8, 16, 32, 64, 128):
        at.select_slider(key="mha_dmodel").set_value(d_model).run()
        offered = [int(h) for h in at.selectbox(key="mha_heads").options]
        # By hand: a designed head needs d_k = d_model / H >= 2, so H <= d_model / 2.
        assert offered == [h for h in range(1, d_model // 2 + 1) if d_model % h == 0]
        assert not at.error


@pytest.mark.parametrize("query", [
    {"mha_weights": "designed", "mha_dmodel": "8", "mha_heads": "8"},
    {"mha_weights": "designed", "mha_dmodel": "128", "mha_heads": "128"},
    {"mha_dmodel": "32", "mha_heads": "128"},
    {"mha_heads": "7"},
])
def test_a_link_with_a_head_count_not_offered_opens_a_working_lesson(query):
    at = run(**query)
    assert not at.error
    heads = at.selectbox(key="mha_heads")
    assert heads.value == 4 and str(heads.value) in heads.options  # options are labels
    # The link no longer carries the count that was not offered (4, the default, drops out).
    assert at.query_params.get("mha_heads") in (None, ["4"], "4")


def test_switching_to_designed_weights_moves_an_impossible_head_count_and_the_link():
    at = run(mha_dmodel="128", mha_heads="128")
    assert at.selectbox(key="mha_heads").value == 128  # random heads: d_k = 1 is fine
    at.radio(key="mha_weights").set_value("designed").run()
    assert not at.error
    assert at.selectbox(key="mha_heads").value == 4
    assert "128" not in str(at.query_params.get("mha_heads"))
    # Back to random: 4 is still offered and stays.
    at.radio(key="mha_weights").set_value("random").run()
    assert at.selectbox(key="mha_heads").value == 4


def test_cross_attention_is_rectangular_for_sentences_of_different_lengths():
    at = run()
    spec = chart_spec(at, "mha_fig_cross")
    # Target "J'aime les chats" -> J' aime les chats (4 rows); source "I love cats" (3).
    assert len(spec["data"][0]["y"]) == 4 and len(spec["data"][0]["x"]) == 3
    at.text_input(key="mha_source").set_value("the black cat sleeps all day long").run()
    assert len(chart_spec(at, "mha_fig_cross")["data"][0]["x"]) == 7
    at.text_input(key="mha_target").set_value("").run()
    assert "Type both a source and a target" in " ".join(i.value for i in at.info)


@pytest.mark.parametrize("sentence, message", [
    ("", "Type a sentence"),
    ("   ", "Type a sentence"),
    (" ".join(["word"] * 100), "only the first 24 are used"),
])
def test_bad_sentences_give_messages(sentence, message):
    at = run()
    at.text_input(key="mha_sentence").set_value(sentence).run()
    assert not at.exception
    shown = " ".join(e.value for e in [*at.info, *at.warning])
    assert message in shown


def test_html_in_the_sentence_is_text():
    at = run(mha_sentence="<img src=x onerror=alert(1)> hello")
    labels = chart_spec(at, "mha_fig_heads")["data"][-1]["y"]  # the average's panel
    assert "&lt;" in labels and all("<" not in label for label in labels)


def test_causal_mask_makes_every_head_lower_triangular():
    at = run(mha_causal="true")
    panels = chart_spec(at, "mha_fig_heads")["data"]  # one heatmap trace per panel
    assert len(panels) == 4 + 1  # the default H heads, then their average
    for h in range(len(panels)):
        w = chart_array(at, "mha_fig_heads", trace=h)
        assert np.all(np.triu(w, k=1) == 0.0), h


def test_the_average_is_the_last_panel_of_the_grid():
    at = run()
    spec = chart_spec(at, "mha_fig_heads")
    assert spec["layout"]["annotations"][-1]["text"] == "average of the 4 heads"
    heads = np.stack([chart_array(at, "mha_fig_heads", trace=h) for h in range(4)])
    np.testing.assert_allclose(chart_array(at, "mha_fig_heads", trace=4), heads.mean(axis=0),
                               atol=1e-6)  # float32 on the wire


def test_one_chart_of_the_heads_at_a_time():
    at = run()
    stat = chart_spec(at, "mha_fig_stat")
    assert stat["layout"]["title"]["text"] == "entropy"
    assert len(chart_array(at, "mha_fig_stat", "y")) == 4
    at.selectbox(key="mha_stat").set_value("similarity between heads").run()
    ids = " ".join(c.proto.id for c in at.get("plotly_chart"))
    assert "mha_fig_similarity" in ids and "mha_fig_stat" not in ids
    np.testing.assert_allclose(np.diag(chart_array(at, "mha_fig_similarity")), 1.0, atol=1e-6)


def test_heads_rows_and_columns_are_counted_from_one():
    at = run(mha_head="head 2")  # d_model = 32, H = 4, d_k = 8: head 2 owns columns 9 to 16
    spec = chart_spec(at, "mha_fig_slice")
    assert spec["data"][0]["x"][0] == "9" and spec["data"][0]["x"][-1] == "16"
    assert spec["data"][0]["y"][0] == "1" and spec["data"][0]["y"][-1] == "32"
    assert "Head 2 owns columns 9 to 16" in markdown(at)
    assert chart_spec(at, "mha_fig_stat")["data"][0]["x"] == ["h1", "h2", "h3", "h4"]


def _main_in_order(node):
    kids = getattr(node, "children", None)
    if kids is None:
        yield node
        return
    for k in sorted(kids) if isinstance(kids, dict) else range(len(kids)):
        yield from _main_in_order(kids[k])


def test_presenter_mode_puts_every_heads_weights_first_and_hides_the_tables():
    at = run(presenter="true")
    assert not_allowed_above(at) == []  # the goal, the controls, headings
    # The layer's diagram is the first figure; then come every head's weights, with no
    # section but theirs in between.
    assert above_first_figure(at)[-1].type != "header"
    nodes = list(_main_in_order(at.main))
    charts_at = [n for n, node in enumerate(nodes) if node.type == "plotly_chart"]
    diagram_at = next(n for n, node in enumerate(nodes)
                      if node.type == "markdown" and node.value.startswith("<svg"))
    assert diagram_at < charts_at[0]
    assert [node.value for node in nodes[:charts_at[0]] if node.type == "header"] == [
        "1 · Every head's weights, and their average"]
    assert "| step | operation | shape |" not in markdown(at)  # the shapes table: hidden
    tables = [*at.dataframe, *at.table]
    assert not any("entropy" in d.value.columns for d in tables)  # the statistics: hidden
    # The slices of W_Q, W_K, W_V still come, after the heads.
    assert chart_spec(at, "mha_fig_slice") and "2 · The shapes" in " ".join(
        h.value for h in at.header)
    normal = run()
    assert "| step | operation | shape |" in markdown(normal)


def test_head_pickers_follow_the_head_count():
    at = run(mha_head="head 4", mha_cross_head="head 3")
    assert chart_spec(at, "mha_fig_cross")["layout"]["title"]["text"].endswith("head 3")
    w = chart_array(at, "mha_fig_cross")
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-6)  # rows over the source
    at.selectbox(key="mha_heads").set_value(2).run()  # heads 3 and 4 no longer exist
    assert not at.exception
    assert at.selectbox(key="mha_head").value == 0
    assert at.selectbox(key="mha_cross_head").value == 0
    assert "Head 1 owns columns 1 to 16" in markdown(at)  # d_k = 32 / 2 = 16


def test_the_matrix_picker_shows_the_heads_slice_of_each_matrix():
    at = run(mha_head="head 2", mha_matrix="W_V")
    spec = chart_spec(at, "mha_fig_slice")
    assert spec["layout"]["title"]["text"] == "W_V columns of head 2"
    assert chart_array(at, "mha_fig_slice").shape == (32, 8)  # (d_model, d_k) = (32, 32/4)


def test_cross_attention_is_not_redrawn_when_d_model_moves():
    # Its heads are a layer of their own (H as above, d_model 128): the same figure JSON,
    # which the browser does not draw again.
    at = run()
    before = chart_spec(at, "mha_fig_cross")
    at.select_slider(key="mha_dmodel").set_value(64).run()
    assert chart_spec(at, "mha_fig_cross") == before
    assert "H = 4, d_model = 128, d_k = 32" in markdown(at)


def test_the_similarity_map_is_described_by_its_pairs_of_different_heads():
    at = run()
    at.selectbox(key="mha_stat").set_value("similarity between heads").run()
    sim = chart_array(at, "mha_fig_similarity")  # float32 on the wire
    # The most alike pair of different heads, found on the drawn map's upper triangle.
    i, j = np.triu_indices(sim.shape[0], k=1)
    best = int(np.argmax(sim[i, j]))
    alt = " ".join(str(c.value) for c in at.caption).replace("\\", "")  # markdown escapes
    assert f"Most alike: h{i[best] + 1} and h{j[best] + 1}, " in alt
    assert "1 on the diagonal" in alt


def test_d_k_is_said_to_be_a_convention_not_a_law():
    at = run()
    assert "d_k = d_model / H = 8: this implementation's choice" in markdown(at)
    assert "original Transformer" in at.selectbox(key="mha_heads").help
    answers = " ".join(e.markdown[0].value for e in at.expander if e.label.startswith("Answer"))
    assert "convention, not a law" in answers and "24 × 32" in answers  # 3 heads × d_v = 8


def test_the_positional_encoding_switched_on_by_default_is_explained_with_links():
    at = run()
    assert at.toggle(key="mha_pe").value is True
    text = markdown(at)
    assert "[lesson 5](./Positional_encoding)" in text
    assert "#glossary-positional-encoding" in text
    # On a projector the explanation is secondary: hidden.
    assert "[lesson 5](./Positional_encoding)" not in markdown(run(presenter="true"))


def test_a_small_statistic_is_never_shown_as_a_false_zero():
    # Designed heads are nearly one-hot: head 1's mean entropy is about 1e-4 nats, nonzero.
    at = run(mha_weights="designed")
    table = next(t for t in at.table if "entropy" in t.value.columns)
    assert 0 < table.value.loc["head 1", "entropy"] < 5e-4
    # What the student reads: the Styler's display strings, sent beside the numbers.
    shown = pa.ipc.open_stream(table.proto.arrow_data.styler.display_values).read_pandas()
    assert shown.loc["head 1", "entropy"].endswith("×10⁻⁴")
    assert "0.000" not in shown.to_numpy().ravel().tolist()


def test_sparsity_counts_keys_below_half_the_uniform_weight():
    at = run()
    table = next(t.value for t in at.table if "entropy" in t.value.columns)
    assert "sparsity (< 1/(2T))" in table.columns and "sparsity (< 0.1)" not in table.columns
    assert "less than half the uniform weight 1/T (sparsity, < 1/(2T)" in markdown(at)
    # A row's sparsity is at most (T − 1)/T: one key must hold at least 1/T > 1/(2T).
    assert (table["sparsity (< 1/(2T))"] < 1).all()


def test_one_head_and_one_column_are_said_in_the_singular():
    # d_model = 8, H = 8: d_k = 8 / 8 = 1, so head 3 owns the single column 3.
    at = run(mha_dmodel="8", mha_heads="8", mha_head="head 3")
    assert "Head 3 owns column 3 of W_Q" in markdown(at)
    assert "columns 3 to 3" not in markdown(at)
    at = run(mha_heads="1")  # H = 1: d_k = 32, one head whose average is itself
    assert "H = 1 head, d_k = d_model / H = 32" in markdown(at)
    assert chart_spec(at, "mha_fig_heads")["layout"]["annotations"][-1]["text"] == \
        "average (one head: itself)"


def test_the_shapes_table_names_the_causal_mask_when_it_is_on():
    assert "softmax(Qʰ Kʰᵀ / √8) per head" in markdown(run())
    assert "softmax(Qʰ Kʰᵀ / √8 + causal mask) per head" in markdown(run(mha_causal="true"))


def test_the_designed_heads_sentence_follows_their_check():
    # Every designed head passes its check at the defaults and at the smallest width
    # (d_model = 8, H = 4, d_k = 2) with the causal mask: the sentence says "is".
    for query in ({}, {"mha_dmodel": "8", "mha_causal": "true"}):
        at = run(mha_weights="designed", **query)
        table = next(t.value for t in at.table if "pattern" in t.value.columns)
        assert set(table["largest weight there"]) == {"✓"}
        assert "largest weight in each row is where its pattern says" in markdown(at)
