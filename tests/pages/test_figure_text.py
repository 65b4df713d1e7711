"""Every figure on every page (home and every ``pages/*.py``, so a new lesson is covered
the day it lands) has a title and a text alternative right after it, and off the
projector a download of its data: what ``pages.ui.layout.show_figure`` draws.

A figure drawn some other way (``st.plotly_chart`` directly) has none of these, and fails
here with its key. The describers that compute the text alternatives, and the table of a
figure's data, are tested against values worked out by hand.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from conftest import (
    PRESENTER_KEY,
    app_scripts,
    assert_no_exception,
    page_at_defaults,
    page_in_presenter_mode,
    script_id,
)
from streamlit.testing.v1.element_tree import Block

from pages.ui import figures
from pages.ui.layout import ALT_KEY_PREFIX

SCRIPTS = app_scripts()


def _siblings(node):
    """(parent's children in order, this node's place among them), for every node."""
    kids = list(getattr(node, "children", {}).values())
    for i, kid in enumerate(kids):
        yield kid, kids, i
        yield from _siblings(kid)


def _unescaped(markdown: str) -> str:
    return re.sub(r"\\(.)", r"\1", markdown)


def figure_problems(at) -> tuple[int, list[str]]:
    """How many figures the page draws, and what each lacks."""
    presenter = bool(at.session_state[PRESENTER_KEY]) if PRESENTER_KEY in at.session_state \
        else False
    found, problems = 0, []
    for node, kids, i in _siblings(at._tree):
        if getattr(node, "type", "") != "plotly_chart":
            continue
        found += 1
        key = node.key
        spec = json.loads(node.proto.spec)
        layout = spec["layout"]
        titled = (layout.get("title", {}).get("text", "").strip()
                  or any(a.get("text", "").strip() for a in layout.get("annotations", [])))
        if not titled:
            problems.append(f"{key}: no title")
        after = kids[i + 1] if i + 1 < len(kids) else None
        if not (isinstance(after, Block) and after.key == f"{ALT_KEY_PREFIX}{key}"):
            problems.append(f"{key}: no text alternative right after it (show_figure's "
                            f"{ALT_KEY_PREFIX}{key} block)")
            continue
        parts = list(after.children.values())
        captions = [_unescaped(p.value) for p in parts if getattr(p, "type", "") == "caption"]
        if not captions or len(captions[0]) < 20 or not re.search(r"\d", captions[0]):
            problems.append(f"{key}: its text alternative says too little: {captions}")
        downloads = [p.key for p in parts if getattr(p, "type", "") == "download_button"]
        want = [] if presenter else [f"{key}_csv"]
        if downloads != want:
            problems.append(f"{key}: data downloads {downloads}, expected {want}")
    return found, problems


@pytest.mark.parametrize("presenter", [False, True], ids=["normal", "presenter"])
@pytest.mark.parametrize("script", SCRIPTS, ids=[script_id(p) for p in SCRIPTS])
def test_every_figure_has_a_title_a_text_alternative_and_its_data(script, presenter) -> None:
    # the runs shared by the tests that only read a page (conftest)
    at = page_in_presenter_mode(script) if presenter else page_at_defaults(script)
    assert_no_exception(at, f"{script.name}, presenter={presenter}")
    found, problems = figure_problems(at)
    assert not problems, f"{script.name}, presenter={presenter}: " + "; ".join(problems)
    if script.name != "8_Attention_that_learns.py":  # its figures wait for a Train button
        assert found, f"{script.name} draws no figure at its defaults"


def test_a_figure_drawn_without_show_figure_is_caught() -> None:
    """The check above can fail: st.plotly_chart alone leaves the figure without one."""
    from streamlit.testing.v1 import AppTest

    def page():
        import numpy as np
        import streamlit as st

        from pages.ui.figures import matrix_heatmap
        st.plotly_chart(matrix_heatmap(np.eye(2), ["a", "b"], ["a", "b"], title="W"),
                        key="x_fig", theme=None)

    at = AppTest.from_function(page).run()
    found, problems = figure_problems(at)
    assert found == 1 and problems == [
        "x_fig: no text alternative right after it (show_figure's alt_x_fig block)"]


def test_show_figure_refuses_an_empty_text_alternative() -> None:
    from streamlit.testing.v1 import AppTest

    def page():
        import numpy as np

        from pages.ui.figures import matrix_heatmap
        from pages.ui.layout import show_figure
        show_figure(matrix_heatmap(np.eye(2), ["a", "b"], ["a", "b"], title="W"), key="x_fig",
                    alt="  ")

    at = AppTest.from_function(page).run()
    assert at.exception and "needs a text alternative" in at.exception[0].message


# ---- the describers ---------------------------------------------------------------------

def test_weights_name_each_querys_strongest_keys_with_ties() -> None:
    # The textbook example's weights: row 1 is softmax([1, 0, 1] / √2), so keys 1 and 3 tie
    # at e^(1/√2) / (2 e^(1/√2) + 1) = 2.0281 / 5.0562 = 0.401.
    a = np.exp(1 / np.sqrt(2))
    w = np.array([[a, 1, a]]) / (2 * a + 1)
    text = figures.describe_matrix(w, ["x1"], ["x1", "x2", "x3"])
    assert text == ("1 × 3 weights (rows: query, columns: key). query “x1”: most on “x1” and "
                    "“x3” (0.401 each).")


def test_many_rows_are_summarised() -> None:
    # 8 rows, each with 0.9 on the next token except the last (0.5 on itself).
    T = 8
    w = np.full((T, T), 0.1 / (T - 1))
    for i in range(T - 1):
        w[i, i + 1] = 0.9
    w[T - 1] = 0.5 / (T - 1)
    w[T - 1, T - 1] = 0.5
    tokens = [f"t{i}" for i in range(T)]
    text = figures.describe_matrix(w, tokens, tokens)
    # mean of the largest weights: (7 · 0.9 + 0.5) / 8 = 6.8 / 8 = 0.85
    assert "Largest weight 0.9, query “t0” on key “t1”" in text
    assert "is 0.85 on average (0.5, query “t7”, to 0.9)" in text
    assert text.endswith("1 of 8 put it on itself.")


def test_scores_give_their_range_and_masked_cells() -> None:
    s = np.array([[1.5, -np.inf], [-2.0, 0.25]])
    text = figures.describe_matrix(s, ["a", "b"], ["a", "b"], kind="scores")
    assert text == ("2 × 2 scores (rows: query, columns: key): from −2 (query “b”, key “a”) to "
                    "1.5 (query “a”, key “a”); 1 of 4 cells masked (−∞).")


def test_masks_count_the_cells_that_may_attend() -> None:
    # A causal mask of 4 tokens: 1 + 2 + 3 + 4 = 10 of 16 cells may attend.
    text = figures.describe_matrix(np.tril(np.ones((4, 4))), list("abcd"), list("abcd"),
                                   kind="mask")
    assert "10 of 16 cells may attend (✓), 6 are masked (✗)" in text


def test_lines_give_ends_and_an_inner_peak() -> None:
    text = figures.describe_lines([1, 2, 4], {"a": [0.5, 2.0, 1.0], "b": [1, 2, 3]},
                                  x_title="d_k", y_title="max weight")
    assert text == ("max weight against d_k. a: 0.5 at d_k 1, 1 at 4 (highest 2 at 2); "
                    "b: 1 at d_k 1, 3 at 4.")


def test_bars_largest_first_and_symbols_said_in_words() -> None:
    text = figures.describe_bars(["[CLS]", "##s", ".", "Ġthe"], [0.1, 0.5, 0.3, 0.1],
                                 what="Row 2")
    assert text == ("Row 2, largest first: “s” (continuing the word before) 0.5; full stop "
                    "0.3; [CLS] (start of text) 0.1; “the” (after a space) 0.1.")


def test_small_numbers_are_never_a_false_zero() -> None:
    assert figures.said_number(4e-9) == "4.00×10⁻⁹"
    assert figures.said_number(-0.5) == "−0.5"
    assert figures.said_number(0.0) == "0"
    assert figures.said_number(-0.0) == "0"  # ALiBi's diagonal is −0.0: no sign on zero


def test_a_repeated_symbol_is_said_in_words_with_its_occurrence() -> None:
    assert figures.spoken_token(". (2nd)") == "full stop (2nd)"
    assert figures.spoken_token("[SEP] (2nd)") == figures.spoken_token("[SEP]") + " (2nd)"
    assert figures.spoken_token("##s (3rd)") == "“s (3rd)” (continuing the word before)"


def test_a_rounded_number_never_sounds_exact() -> None:
    # 0.99996 to 3 significant digits is 1.00: the zeros say it was rounded; an exact 1
    # is said "1", and an exact 0.5 "0.5".
    assert figures.said_number(0.99996) == "1.00"
    assert figures.said_number(1.0) == "1"
    assert figures.said_number(0.5) == "0.5"
    assert figures.said_number(12.0004) == "12.0"


def test_heads_name_the_strongest_sink() -> None:
    # 1 layer, 2 heads, 2 tokens: head 2 puts 0.8 of every row on "[SEP]".
    a = np.array([[[[0.5, 0.5], [0.5, 0.5]], [[0.2, 0.8], [0.2, 0.8]]]])
    text = figures.describe_heads(a, ["[CLS]", "[SEP]"])
    assert "Layer 1, head 2 puts the most on one key: 80% of its weight on [SEP]" in text
    # the heads' top columns: 0.5 and 0.8, mean 0.65
    assert text.endswith("takes 65% of its weight on average.")


def test_repeated_tokens_are_told_apart() -> None:
    w = np.array([[0.2, 0.8], [0.9, 0.1]])
    text = figures.describe_matrix(w, ["the", "the"], ["the", "the"])
    assert "“the (2nd)”" in text


# ---- the data behind a figure -----------------------------------------------------------

def test_a_heatmaps_data_is_its_matrix_with_masked_cells() -> None:
    s = np.array([[1.5, -np.inf], [-2.0, 0.25]])
    table = figures.figure_table(figures.matrix_heatmap(s, ["a", "<b>"], ["a", "<b>"],
                                                        title="S", kind="scores"))
    assert list(table.index) == ["a", "<b>"] and list(table.columns) == ["a", "<b>"]
    np.testing.assert_array_equal(table.to_numpy(), s)


def test_a_grids_data_has_one_row_per_cell_and_panel() -> None:
    mats = [np.eye(2) * 0.5, np.ones((2, 2)) * 0.25]
    table = figures.figure_table(figures.heatmap_grid(mats, ["a", "b"], ["a", "b"],
                                                      ["head 1", "head 2"]))
    assert len(table) == 8 and list(table.columns) == ["panel", "row", "column", "value"]
    assert table[table.panel == "head 2"].value.tolist() == [0.25] * 4


def test_a_line_charts_data_is_one_column_per_series() -> None:
    fig = figures.line_chart([1, 2, 4], {"a": [0.5, 2.0, 1.0], "b": [1, 2, 3]},
                             title="T", x_title="d_k", y_title="v")
    table = figures.figure_table(fig)
    assert list(table.columns) == ["d_k", "a", "b"]
    assert table["a"].tolist() == [0.5, 2.0, 1.0] and table["d_k"].tolist() == [1, 2, 4]
    csv = figures.figure_csv(fig)
    assert csv.splitlines()[0] == "d_k,a,b" and csv.splitlines()[1] == "1,0.5,1"


def test_the_model_views_data_names_each_head() -> None:
    a = np.random.default_rng(0).dirichlet(np.ones(3), size=(2, 2, 3))  # (L, H, T, T)
    table = figures.figure_table(figures.head_thumbnails(a, ["x", "y", "z"]))
    assert sorted(set(table.panel)) == ["layer 1, head 1", "layer 1, head 2",
                                        "layer 2, head 1", "layer 2, head 2"]
    np.testing.assert_allclose(
        table[table.panel == "layer 2, head 1"].value.to_numpy().reshape(3, 3), a[1, 0],
        rtol=1e-6)  # float32 on the wire


def test_a_pooled_thumbnail_names_the_positions_each_cell_averages() -> None:
    # 4 tokens pooled to 2 cells a side: each cell averages tokens 1–2 or 3–4, so it is
    # named by that range, not by one token of the block ("a", "c").
    a = np.full((1, 1, 4, 4), 0.25)
    fig = figures.head_thumbnails(a, ["a", "b", "c", "d"], max_cells=2)
    assert list(fig.data[0].x) == ["1–2", "3–4"] and list(fig.data[0].y) == ["1–2", "3–4"]


def test_large_numbers_are_whole_and_grouped() -> None:
    assert figures.said_number(1024.0) == "1,024"
    assert figures.said_number(981.6) == "982"
    assert figures.said_number(2.5e7) == "2.50×10⁷"
