"""Interaction tests for lesson 1, the worked example (AppTest, no browser).

Expected numbers come from hand arithmetic on the textbook preset,
Q = K = [[1,0],[0,1],[1,1]], V = [[1,2,3],[4,5,6],[7,8,9]], d_k = 2:

    S = Q Kᵀ = [[1,0,1],[0,1,1],[1,1,2]]            (q1·k1 = 1×1 + 0×0 = 1, ...)
    S/√2     = [[a,0,a],[0,a,a],[a,a,2a]]            with a = 1/√2 = 0.70711
    row 1: e^a = 2.02811, e^0 = 1 -> Z = 2·2.02811 + 1 = 5.05622
           w = [2.02811, 1, 2.02811] / 5.05622 = [0.40111, 0.19778, 0.40111]
    row 3: e^a = 2.02811, e^{2a} = e^{1.41421} = 4.11325 -> Z = 8.16947
           w = [0.24826, 0.24826, 0.50349]
    o_1 = 0.40111·[1,2,3] + 0.19778·[4,5,6] + 0.40111·[7,8,9] = [4, 5, 6]
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_no_exception, chart_array, chart_spec, open_page
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "1_Worked_example.py")
TABLE = "we_table_textbook_3_2_3_0"  # editor_key("we_table", preset, T, d_k, d_v, seed)

A = 1 / math.sqrt(2)
Z1 = 2 * math.exp(A) + 1
Z3 = 2 * math.exp(A) + math.exp(2 * A)
HAND = {
    "scores": [[1, 0, 1], [0, 1, 1], [1, 1, 2]],
    "scaled": [[A, 0, A], [0, A, A], [A, A, 2 * A]],
    "weights": [
        [math.exp(A) / Z1, 1 / Z1, math.exp(A) / Z1],
        [1 / Z1, math.exp(A) / Z1, math.exp(A) / Z1],
        [math.exp(A) / Z3, math.exp(A) / Z3, math.exp(2 * A) / Z3],
    ],
}
# Output rows: o_i = Σ_j w_ij v_j with v_j = [3j-2, 3j-1, 3j].
HAND["output"] = [
    [sum(HAND["weights"][i][j] * (3 * j + 1 + c) for j in range(3)) for c in range(3)]
    for i in range(3)
]


def run(**query) -> AppTest:
    return open_page(PAGE, **query)


def cell_texts(at: AppTest, key: str) -> list[list[float]]:
    return [[float(x) for x in row] for row in chart_spec(at, key)["data"][0]["text"]]


def output_cells(at: AppTest) -> list[list[float]]:
    """The output table O = W V (columns v1, v2, ...), as numbers."""
    out = next(t for t in tables(at) if list(t.columns)[:1] == ["v1"])
    return [[float(x) for x in row] for row in out.to_numpy()]


def edit(at: AppTest, key: str, rows: dict) -> AppTest:
    at.session_state[key] = {"edited_rows": rows, "added_rows": [], "deleted_rows": []}
    at.run()
    assert_no_exception(at, f"edit {rows}")
    return at


def errors(at: AppTest) -> str:
    return " | ".join(e.value for e in at.error)


def test_textbook_matrices_on_the_page_match_hand_arithmetic():
    at = run()
    for key, step in [
        ("we_fig_scores", "scores"),
        ("we_fig_scaled", "scaled"),
        ("we_fig_weights", "weights"),
        ("output table", "output"),
    ]:
        shown = output_cells(at) if key == "output table" else cell_texts(at, key)
        for got_row, hand_row in zip(shown, HAND[step], strict=True):
            for got, hand in zip(got_row, hand_row, strict=True):
                assert got == pytest.approx(hand, abs=0.0005 + 1e-12), (key, shown)


def test_cell_arithmetic_is_written_out():
    at = run()
    latex = " ".join(e.value for e in at.latex)
    # Default cell: query 1, key 3: q1·k3 = 1×1 + 0×1 = 1 (exact, so "="), /√2 = 0.70711
    # written 0.707 (rounded, so "≈", never "=").
    assert r"&= 1\times1 + 0\times1 \\ &= 1 \end{aligned}" in latex
    assert r"\frac{1}{\sqrt{2}} \approx 0.707" in latex
    assert r"= 0.707" not in latex
    assert "2.028" in latex and f"{Z1:.3f}" in latex
    at.selectbox(key="we_query").set_value(2).run()  # query 3
    latex = " ".join(e.value for e in at.latex)
    assert f"{HAND['weights'][2][2]:.3f}" in latex  # w_33 = 0.503


def test_check_your_work_marks_right_and_names_first_wrong_step():
    at = run()
    right = {i: {str(j + 1): round(HAND["weights"][i][j], 3) for j in range(3)} for i in range(3)}
    edit(at, "we_check_weights_textbook_3_2_3_0", right)
    assert any("Every number you typed is right" in s.value for s in at.success)

    wrong_scores = {0: {"1": 1, "2": 1}}  # s_12 = q1·k2 = 1×0 + 0×1 = 0, not 1
    edit(at, "we_check_scores_textbook_3_2_3_0", wrong_scores)
    assert "Step 1" in errors(at) and "Row 1, column 2" in errors(at)


def test_check_your_work_recognises_unscaled_softmax():
    at = run()
    # Softmax of the unscaled row 1 [1, 0, 1]: e/(2e + 1) = 0.42232, 1/(2e + 1) = 0.15536.
    e = math.e
    edit(
        at,
        "we_check_weights_textbook_3_2_3_0",
        {0: {"1": round(e / (2 * e + 1), 3), "2": round(1 / (2 * e + 1), 3)}},
    )
    assert "Step 3" in errors(at) and "unscaled" in errors(at)


def test_causal_toggle_zeroes_the_future():
    at = run()
    at.toggle(key="we_causal").set_value(True).run()
    w = cell_texts(at, "we_fig_weights")
    assert w[0] == [1.0, 0.0, 0.0]  # token 1 sees only itself
    # Row 2 under the mask: [0, a] -> 1/(1 + e^a) = 0.33024, e^a/(1 + e^a) = 0.66976.
    assert w[1] == pytest.approx(
        [1 / (1 + math.exp(A)), math.exp(A) / (1 + math.exp(A)), 0], abs=5e-4
    )
    scaled = chart_spec(at, "we_fig_scaled")["data"][0]["text"]
    assert scaled[0][1] == "−∞" and scaled[0][2] == "−∞"


def test_scaling_off_and_temperature_change_the_weights():
    at = run()
    at.toggle(key="we_scale").set_value(False).run()
    w = cell_texts(at, "we_fig_weights")
    e = math.e
    assert w[0] == pytest.approx([e / (2 * e + 1), 1 / (2 * e + 1), e / (2 * e + 1)], abs=5e-4)
    at.toggle(key="we_scale").set_value(True)
    at.slider(key="we_temp").set_value(5.0).run()
    w = cell_texts(at, "we_fig_weights")
    # T = 5: row 1 logits a/5 = 0.14142 -> e^0.14142 = 1.15191; Z = 2·1.15191 + 1 = 3.30382.
    assert w[0][1] == pytest.approx(1 / (2 * math.exp(A / 5) + 1), abs=5e-4)


def test_precision_control_sets_decimals_of_tables_and_arithmetic():
    at = run()
    at.slider(key="we_decimals").set_value(5).run()
    exps = next(t for t in tables(at) if "row sum" in t.columns)
    assert exps.loc["x1", "x1"] == f"{math.exp(A):.5f}"  # e^0.70711 = 2.02811
    assert f"{HAND['weights'][0][2]:.5f}" in latex_text(at)  # w13, the default cell


FIGURES = ("we_fig_scores", "we_fig_scaled", "we_fig_weights")


def test_figures_keep_three_decimals_whatever_the_precision_control():
    # The control sets tables, arithmetic and checking; figures left unchanged are not
    # drawn again by the browser.
    at = run()
    before = {key: chart_spec(at, key) for key in FIGURES}
    at.slider(key="we_decimals").set_value(6).run()
    assert {key: chart_spec(at, key) for key in FIGURES} == before
    assert cell_texts(at, "we_fig_weights")[0][0] == round(HAND["weights"][0][0], 3)


@pytest.mark.parametrize(
    "preset, label",
    [
        ("textbook", "Textbook"),
        ("cat", "The cat sat"),
        ("uniform", "Uniform"),
        ("random", "Random"),
    ],
)
def test_every_preset_renders(preset, label):
    at = run(we_preset=label)  # a bound select box keeps its label in the link
    assert at.selectbox(key="we_preset").value == preset
    if preset == "uniform":
        assert all(
            x == pytest.approx(1 / 3, abs=5e-4)
            for row in cell_texts(at, "we_fig_weights")
            for x in row
        )


def test_cat_preset_shows_x_and_w_that_give_its_scores():
    # The page's own X, W_Q and W_K, read back from its LaTeX, reproduce its S = Q Kᵀ:
    # Q = X W_Q and K = X W_K, so S = (X W_Q)(X W_K)ᵀ.
    at = run(we_preset="The cat sat")
    block = next(x.value for x in at.latex if "W_Q" in x.value and "bmatrix" in x.value)
    matrices = [np.array([[float(x) for x in row.split("&")] for row in body.split(r"\\")])
                for body in re.findall(r"\\begin\{bmatrix\}(.*?)\\end\{bmatrix\}", block)]
    x, w_q, w_k, _ = matrices
    assert x.shape == (3, 4) and w_q.shape == (4, 2)
    np.testing.assert_allclose((x @ w_q) @ (x @ w_k).T, cell_texts(at, "we_fig_scores"),
                               atol=5e-4)


def test_link_holds_settings():
    at = run(we_preset="Random", we_tokens="5", we_dk="4", we_seed="7")
    assert at.slider(key="we_tokens").value == 5
    assert len(cell_texts(at, "we_fig_weights")) == 5


def test_link_with_nonsense_opens_with_defaults():
    at = run(we_preset="nonsense", we_tokens="-4", we_temp="abc", we_data="{not json")
    assert at.selectbox(key="we_preset").value == "textbook"
    assert cell_texts(at, "we_fig_scores")[2][2] == 2.0


def test_edits_are_kept_in_the_link():
    at = run()
    edit(at, TABLE, {0: {"v1": 10}})
    saved = at.query_params["we_data"]
    saved = saved[0] if isinstance(saved, list) else saved
    again = run(we_data=saved)
    # o_1 = 0.40111·10 + 0.19778·4 + 0.40111·7 = 7.60998
    o1 = 10 * HAND["weights"][0][0] + 4 * HAND["weights"][0][1] + 7 * HAND["weights"][0][2]
    assert output_cells(again)[0][0] == pytest.approx(o1, abs=5e-4)


@pytest.mark.parametrize(
    "value, message",
    [
        (None, "empty"),
        ("", "empty"),
        ("abc", "not a number: 'abc'"),
        ("1,5", "not a number: '1,5'"),
        ("nan", "not a number: 'nan'"),
        ("inf", "not a number: 'inf'"),
        ("1e999", "infinite"),
    ],
)
def test_bad_cells_give_a_message_not_a_traceback(value, message):
    at = run()
    edit(at, TABLE, {1: {"q2": value}})
    assert "Q row 2, column 2" in errors(at) and message in errors(at)


def test_huge_values_overflow_with_a_message():
    at = run()
    edit(at, TABLE, {0: {"q1": 1e300}, 2: {"k1": 1e300}})
    assert "overflow" in errors(at)


def test_html_token_names_are_shown_as_text():
    at = run()
    evil = "<script>alert(1)</script>"
    edit(at, TABLE, {0: {"token": evil}})
    assert not errors(at)
    markdown = " ".join(m.value for m in at.markdown)
    assert "<script>" not in markdown  # escaped for markdown, shown as typed
    assert r"\<script\>alert\(1\)\</script\>" in markdown
    labels = chart_spec(at, "we_fig_weights")["data"][0]["y"]
    assert labels[0] == "&lt;script&gt;alert(1)&lt;/script&gt;"


def test_empty_token_name_falls_back_to_position():
    at = run()
    edit(at, TABLE, {1: {"token": "   "}})
    assert chart_spec(at, "we_fig_weights")["data"][0]["y"][1] == "x2"


def tables(at: AppTest) -> list:
    """The page's tables, static (st.table) and grid (st.dataframe) alike."""
    return [t.value for t in at.table] + [d.value for d in at.dataframe]


def latex_text(at: AppTest) -> str:
    return " ".join(e.value for e in at.latex)


def test_e_notation_is_read_as_typed_never_as_digits():
    at = run()
    edit(at, TABLE, {0: {"q1": "1e-3"}})
    # s11 = q1·k1 = 0.001×1 + 0×0 = 0.001 (1300 or 13 would be a misread "e").
    assert cell_texts(at, "we_fig_scores")[0][0] == 0.001
    edit(at, TABLE, {0: {"q1": "1e300"}, 2: {"k1": "1e300"}})
    assert "overflow" in errors(at)
    assert "1300" not in latex_text(at)


def test_long_whole_numbers_are_shown_as_typed():
    at = run()
    edit(at, TABLE, {0: {"q1": "99999999999"}})
    latex = latex_text(at)
    # Default cell s13 = q1·k3 = 99999999999×1 + 0×1.
    assert r"99999999999\times1" in latex and "100000000000" not in latex


def test_an_emptied_cell_keeps_the_page_and_names_the_cell():
    at = run()
    edit(at, TABLE, {1: {"q2": None}})
    assert "Q row 2, column 2 is empty" in errors(at)
    waiting = " | ".join(i.value for i in at.info)
    assert "fill every cell of Q" in waiting and "Q row 2, column 2" in waiting
    assert [h.value for h in at.header][-2:] == ["One cell, written out in full",
                                                "Check your work"]  # the page goes on
    assert not at.get("plotly_chart")  # nothing drawn from a Q that has a hole
    assert "None" not in " ".join(m.value for m in at.markdown)


def test_an_emptied_value_cell_still_shows_the_weights():
    at = run()
    edit(at, TABLE, {0: {"v1": ""}})
    assert "V row 1, column 1 is empty" in errors(at)
    assert cell_texts(at, "we_fig_weights")[0][0] == pytest.approx(HAND["weights"][0][0],
                                                                   abs=5e-4)
    assert "fill every cell of V" in " | ".join(i.value for i in at.info)
    assert not [t for t in tables(at) if list(t.columns)[:1] == ["v1"]]  # no O without V


def test_six_tokens_exponentials_table_has_every_column_and_the_row_sum():
    at = run(we_preset="Random", we_tokens="6", we_dk="4", we_dv="4", we_decimals="6")
    exps = next(df for df in tables(at) if "row sum" in df.columns)
    assert list(exps.columns) == [f"x{n}" for n in range(1, 7)] + ["row sum"]
    assert exps.shape == (6, 7)


def test_large_exponentials_switch_to_scientific_notation():
    at = run(we_temp="0.1")
    # Row 3 of the textbook: s̃33 = 2/√2 = 1.41421, /τ = 14.1421, e^14.1421 = 1,386,281.6.
    exps = next(df for df in tables(at) if "row sum" in df.columns)
    assert exps.loc["x3", "x3"] == "1.386×10⁶"
    assert all("−0.000" not in c and "-0.000" not in c for c in exps.to_numpy().ravel())
    assert r"1.386 \times 10^{6}" in latex_text(at.selectbox(key="we_query").set_value(2)
                                                  .run())


def test_written_out_dot_product_wraps_at_d_k_4():
    at = run(we_preset="Random", we_tokens="6", we_dk="4", we_decimals="6")
    first = next(e.value for e in at.latex if r"q_{1}\cdot k_{6}" in e.value)
    lines = first.split(r"\\")
    assert len(lines) == 3  # 2 products, 2 products, the sum
    assert all(line.count(r"\times") <= 2 for line in lines)


def test_check_your_work_reads_typed_text_strictly():
    at = run()
    # s11 = 1, s12 = 0 (hand arithmetic in the module docstring); "1e0" is 1.
    edit(at, "we_check_scores_textbook_3_2_3_0", {0: {"1": "1e0", "2": "0,0"}})
    warnings = " | ".join(w.value for w in at.warning)
    assert "Step 1: scores Q Kᵀ: row 1, column 2 is not a number: '0,0'" in warnings
    assert any("1 of 1 filled cells right" in m.value for m in at.markdown)


def test_temperature_is_tau_and_written_out_with_tau():
    at = run(we_temp="0.5")
    assert at.slider(key="we_temp").label == "Softmax temperature τ"
    # Default cell (query 1, key 3): s̃13 = 1/√2 = 0.707, /τ = 0.707/0.5 = 1.414.
    # 0.707 is rounded ("≈"); 0.707 / 0.5 = 1.414 exactly as written ("=").
    assert r"\tilde s_{13} / \tau \approx 0.707 / 0.500 = 1.414" in latex_text(at)


def test_output_row_is_the_full_weighted_sum():
    at = run()
    latex = latex_text(at)
    assert r"o_{1} &= \textstyle\sum_j w_{1j}\, v_j = w_{11} v_{1} + w_{12} v_{2} + w_{13} v_{3}" \
        in latex
    # o_1 = 0.401·[1,2,3] + 0.198·[4,5,6] + 0.401·[7,8,9] = [4, 5, 6] (module docstring).
    # The weights are rounded ("≈"); 0.401·1 + 0.198·4 + 0.401·7 = 4 as written ("=").
    assert re.search(r"&\\approx 0\.401 \\begin\{bmatrix\}1 & 2 & 3", latex)
    assert re.search(r"&= \\begin\{bmatrix\}4(\.000)? & 5(\.000)? & 6(\.000)?\\end", latex)


def test_what_to_notice_agrees_with_the_figure():
    at = run()
    notice = next(e for e in at.expander if e.label == "What to notice")
    text = " ".join(m.value for m in notice.markdown)
    assert "length as well as direction" in text and "same weight" in text
    w = cell_texts(at, "we_fig_weights")
    assert w[0][0] == w[0][2]  # x1 weighs k1 = [1, 0] and k3 = [1, 1] equally


def test_presenter_mode_puts_the_scores_beside_the_inputs():
    at = run(presenter="true")
    # The inputs' header and intro text are left out; S is drawn once, at the top.
    assert "The inputs: one query, key and value per token" not in [h.value for h in at.header]
    assert [c.proto.id for c in at.get("plotly_chart")].count(
        next(c.proto.id for c in at.get("plotly_chart") if "we_fig_scores" in c.proto.id)) == 1
    assert any("S is drawn at the top" in m.value for m in at.markdown)


def _ids(node) -> list[str]:
    """The element ids in a block of the page, depth first."""
    ids = []
    for child in getattr(node, "children", {}).values():
        ids.append(getattr(child.proto, "id", "") if hasattr(child, "proto") else "")
        ids += _ids(child)
    return ids


@pytest.mark.parametrize("d_k, d_v, beside", [(2, 3, True), (4, 4, False)])
def test_presenter_inputs_too_wide_to_sit_beside_s_get_the_whole_width(d_k, d_v, beside):
    # 1 token + 2·d_k + d_v columns of 73 px (zoomed): 1 + 4 + 3 = 8 fit in 3/5 of the
    # width beside S; 1 + 8 + 4 = 13 do not, and scrolled sideways there.
    at = run(presenter="true", we_preset="Random", we_tokens="3", we_dk=str(d_k),
             we_dv=str(d_v))
    row = next(block for block in at.main.children.values()
               if any("we_fig_scores" in i for i in _ids(block)))
    assert any("we_table" in i for i in _ids(row)) == beside
    place = "beside the inputs." if beside else "under the inputs."
    assert any(m.value.endswith(place) for m in at.markdown)


def try_this(at: AppTest, start: str) -> str:
    """The item of "Try this" that starts with ``start``, links reduced to their text."""
    box = next(e for e in at.expander if e.label == "Try this")
    items = " ".join(m.value for m in box.markdown).split("\n- ")
    item = next(i.lstrip("- ") for i in items if i.lstrip("- ").startswith(start))
    return re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", item)


def named_rows(part: str, names: list[str]) -> tuple[list[int], str]:
    """The rows a part of a sentence names first (“x1”, “x2” and “x3” ...), and the rest."""
    lead = re.match(r"((?:“[^”]*”(?: \(\d+\))?(?:, | and )?)+) (.*)", part)
    rows = [names.index(n) for n in re.findall(r"“([^”]*)”", lead.group(1))]
    return rows, lead.group(2)


def test_low_tau_try_this_at_the_defaults_by_hand():
    # At τ = 0.1 the logits are 10·S/√2: row 1 [7.07, 0, 7.07] ties keys 1 and 3, row 2
    # [0, 7.07, 7.07] ties keys 2 and 3, row 3 [7.07, 7.07, 14.14] gives key 3
    # 1/(1 + 2e^{-7.07}) = 0.998 > 0.99.
    item = try_this(run(), "Set the temperature τ to 0.1")
    assert ("“x1” splits its weight equally between “x1” and “x3”, tied for its largest "
            "score; “x2” splits its weight equally between “x2” and “x3”") in item
    assert "“x3” becomes nearly one-hot" in item
    assert "every row becomes nearly one-hot" not in item
    # The limit τ → 0 of a tied row is not one key: hard attention is the other thing.
    assert ("only in the limit τ → 0 does a row become an argmax: all its weight on the key "
            "with its largest score, or shared equally by the keys tied for it") in item
    assert "Hard attention (lesson 6) instead picks one key outright" in item
    assert "which picks one key" not in item


@pytest.mark.parametrize("query", [
    {},
    {"we_preset": "Uniform", "we_causal": "true"},
    {"we_preset": "Random", "we_tokens": "6", "we_dk": "4", "we_seed": "3"},
    {"we_preset": "Random", "we_tokens": "6", "we_dk": "1", "we_causal": "true", "we_seed": "2"},
    {"we_preset": "The cat sat", "we_tokens": "6", "we_scale": "false"},
    {"we_preset": "Random", "we_tokens": "5", "we_dk": "3", "we_causal": "true", "we_seed": "4"},
])
def test_low_tau_try_this_follows_the_weights_at_tau_0_1(query):
    at = run(**query)
    item = try_this(at, "Set the temperature τ to 0.1")
    here = item.split("Here, at τ = 0.1: ")[1].split(". Set it to 5")[0]
    names = [str(x) for x in chart_spec(at, "we_fig_weights")["data"][0]["y"]]
    at.slider(key="we_temp").set_value(0.1).run()
    w = chart_array(at, "we_fig_weights")  # the figure's weights, every digit
    seen = []
    for part in here.split("; "):
        rows, claim = named_rows(part, names)
        keys = [names.index(n) for n in re.findall(r"“([^”]*)”", claim)]
        seen += rows
        for i in rows:
            if claim.startswith(("become", "sees only", "see only")):
                assert w[i].max() > 0.99, (part, w[i])  # the glossary's "nearly one-hot"
            elif "split" in claim:  # equal weights on the tied keys, holding nearly all
                assert np.ptp(w[i, keys]) < 1e-12 and w[i, keys].sum() > 0.99, part
            else:
                assert "still spread" in claim and w[i].max() <= 0.99, (part, w[i])
                assert w[i, keys].sum() > 0.99, part
    assert sorted(seen) == list(range(len(names)))  # every row is said once


@pytest.mark.parametrize("query, k_row", [
    ({}, {"k1": "10", "k2": "0"}),  # k1 = [1, 0] -> [10, 0]
    ({"we_preset": "Random", "we_tokens": "5", "we_dk": "3", "we_causal": "true", "we_seed": "4"},
     None),
])
def test_longer_key_try_this_agrees_with_the_page_after_the_edit(query, k_row):
    at = run(**query)
    item = try_this(at, "Make one key much longer")
    names = [str(x) for x in chart_spec(at, "we_fig_weights")["data"][0]["y"]]
    before = chart_array(at, "we_fig_weights")[:, 0]
    if k_row is None:  # the example's own first key, times 10
        from attncore.text import worked_example
        k = worked_example("random", 5, 3, 2, 4).k[0]
        k_row = {f"k{c + 1}": repr(10 * float(x)) for c, x in enumerate(k)}
    edit(at, "we_table_" + "_".join(str(p) for p in table_signature(query)), {0: k_row})
    after = chart_array(at, "we_fig_weights")[:, 0]
    said = item.split(f"Try it on the first key, “{names[0]}”: ")[1].rstrip(".")
    seen = []
    for part in said.split("; "):
        rows, claim = named_rows(part, names)
        seen += rows
        for i in rows:
            if claim.startswith(("turn to", "turns to")):
                assert after[i] > before[i], part
            elif claim.startswith(("turn away", "turns away")):
                assert after[i] < before[i], part
            else:
                assert after[i] == pytest.approx(before[i], abs=1e-12), part
    assert sorted(seen) == list(range(len(names)))
    if not query:  # by hand: q1·k1 = 1, q2·k1 = 0, q3·k1 = 1
        assert said == "“x1” and “x3” turn to it (q·k > 0); “x2” keeps its weights (q·k = 0)"


def table_signature(query: dict) -> list:
    """The editor's signature (preset, T, d_k, d_v, seed), as the page builds it."""
    if not query:
        return ["textbook", 3, 2, 3, 0]
    return [query["we_preset"].lower(), int(query["we_tokens"]), int(query["we_dk"]), 3,
            int(query["we_seed"])]


def test_check_your_work_hint_follows_scaling_switched_off():
    # Scaling off: step 2 is S itself; dividing row 1 [1, 0, 1] by d_k = 2 is a mistake,
    # and the page must not tell the student to divide by √d_k.
    at = run(we_scale="false")
    edit(at, "we_check_scaled_textbook_3_2_3_0", {0: {"1": "0.5", "2": "0", "3": "0.5"}})
    message = errors(at)
    assert "You divided by d_k = 2" in message and "Scaling is switched off" in message
    assert "divides every score by √d_k" not in message


def test_scaling_try_this_follows_d_k_and_the_toggle():
    # "Times larger" was false for a negative score: it is multiplied, and moves away from 0.
    assert "every score is then multiplied by √d_k = √2 ≈ 1.414" in try_this(run(), "Switch")
    assert "divided by √d_k = √2 ≈ 1.414" in try_this(run(we_scale="false"), "Switch")
    assert "with d_k = 1, √d_k = 1, so nothing changes" in try_this(
        run(we_preset="Random", we_dk="1"), "Switch")


def test_step_2_says_the_root_without_a_false_equals():
    text = " ".join(m.value for m in run().markdown)
    assert "√d_k = √2 ≈ 1.414" in text and "√2 = 1.414" not in text
    text = " ".join(m.value for m in run(we_preset="Random", we_dk="4").markdown)
    assert "√d_k = √4 = 2." in text


def test_subtracted_maximum_is_explained_with_the_largest_logit():
    # Scaling off, τ = 0.1: the logits are 10·S; the caption names the largest |logit|.
    at = run(we_preset="Random", we_tokens="6", we_dk="4", we_seed="0", we_temp="0.1",
             we_scale="false")
    largest = np.abs(chart_array(at, "we_fig_scaled")).max() / 0.1
    assert largest > 30  # beyond attncore.softmax.HAND_EXP_LIMIT: the shift is used
    caption = next(c.value for c in at.caption if "larger than 30" in c.value)
    assert f"(up to {largest:.4g})" in caption
    assert not any("larger than 30" in c.value for c in run().caption)  # |x| ≤ 2 at defaults


@pytest.mark.parametrize("query", [
    {},
    {"we_preset": "Uniform", "we_tokens": "4"},
    {"we_preset": "Random", "we_tokens": "5", "we_dk": "3", "we_causal": "true", "we_seed": "4"},
    {"we_preset": "Random", "we_tokens": "6", "we_dk": "4", "we_seed": "1", "we_temp": "0.1"},
])
def test_scaling_try_this_holds_row_by_row(query):
    # Switching the scaling off multiplies every score by √d_k > 1: each row's largest weight
    # rises, except in a row whose visible keys all score the same (the first row under the
    # causal mask; every row of the Uniform example), where it stays.
    at = run(**query)
    item = try_this(at, "Switch the scaling off")
    assert "so every row sharpens (its largest weight rises), unless the scores of the keys it " \
           "may see are all equal" in item
    scores, before = chart_array(at, "we_fig_scaled"), chart_array(at, "we_fig_weights")
    at.toggle(key="we_scale").set_value(False).run()
    after = chart_array(at, "we_fig_weights")
    for i, row in enumerate(scores):
        seen = row[np.isfinite(row)]  # masked cells are drawn as −∞ (or missing)
        if np.ptp(seen) == 0:
            assert after[i].max() == pytest.approx(before[i].max(), abs=1e-15), i
        else:
            assert after[i].max() > before[i].max(), i
    item = try_this(at, "Switch the scaling on")
    assert "so every row flattens (its largest weight falls), unless" in item


def test_temperature_help_says_equal_scores_stay():
    # The Uniform example's rows all score 0: τ changes nothing there, as the help says.
    at = run(we_preset="Uniform")
    assert "a row whose keys all score the same stays as it is" in at.slider(key="we_temp").help
    before = chart_array(at, "we_fig_weights")
    at.slider(key="we_temp").set_value(0.1).run()
    assert np.array_equal(chart_array(at, "we_fig_weights"), before)


def test_check_your_work_says_step_2_is_before_the_mask():
    # The figure of step 2 shows a hidden score as −∞; the check asks for it before the
    # mask: s̃12 = (1×0 + 0×1)/√2 = 0 and s̃13 = (1×1 + 0×1)/√2 = 0.70711.
    at = run(we_causal="true")
    intro = " ".join(m.value for m in at.markdown if m.value.startswith("Compute the steps"))
    assert "step 2 asks for every scaled score, the hidden ones included, before they become −∞" \
        in intro
    edit(at, "we_check_scaled_textbook_3_2_3_0", {0: {"2": "0", "3": "0.707"}})
    assert any("Every number you typed is right" in s.value for s in at.success)
    assert "the hidden ones" not in " ".join(
        m.value for m in run().markdown if m.value.startswith("Compute the steps"))
