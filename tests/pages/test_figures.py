"""The figure builders skip Plotly's validation for speed; here Plotly validates them.

``pages.ui.figures.figure`` builds figures from plain dicts without checking them
(about 5 ms saved per heatmap). Each case below builds a figure of every kind and
shape the lessons draw twice from the same inputs: once as the app does, and once with
``figure`` swapped for a validated ``go.Figure``, which checks every property (an
unknown or misspelt one raises ValueError) and coerces every value. The two must
serialise to the same JSON: what the browser receives is what plotly would have sent
had it validated. The colour scales, now explicit stops, are pinned to plotly's names.
"""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from pages.ui import figures

TOKENS = ["the", "cat", "sat", "the", "<b>mat</b>"]


def _masked_scores(n: int = 5, rng=None) -> np.ndarray:
    rng = rng or np.random.default_rng(1)
    scores = rng.standard_normal((n, n))
    scores[np.triu_indices(n, k=1)] = -np.inf  # a causal mask
    return scores


def _labels(n: int) -> list[str]:
    return [str(i) for i in range(n)]


def _pooled_masked_scores(rng) -> np.ndarray:
    scores = _masked_scores(200, rng)
    scores[:, 190:] = -np.inf  # padding keys: whole pooled blocks are masked
    return scores


# Each case: rng -> figure. Every path of the builders: cell text or not (small, 9 to 12
# cells with the smaller font, large and pooled), compact, each kind, masked cells with
# and without text, NaN cells, an all-zero matrix, bars with and without printed values,
# histograms with and without a theory curve, line charts on log and linear axes.
CASES = {
    "weights, small, numbers in cells": lambda rng: figures.matrix_heatmap(
        np.full((5, 5), 0.2), TOKENS, TOKENS, title="W"),
    "weights, 10 cells, smaller cell font": lambda rng: figures.matrix_heatmap(
        rng.dirichlet(np.ones(10), size=10), _labels(10), _labels(10), title="W"),
    "masked scores with a NaN cell, small": lambda rng: figures.matrix_heatmap(
        np.where(np.eye(5, k=-4) == 1, np.nan, _masked_scores(5, rng)), TOKENS, TOKENS,
        title="S", kind="scores"),
    "masked scores, compact": lambda rng: figures.matrix_heatmap(
        _masked_scores(5, rng), TOKENS, TOKENS, title="S", kind="scores", compact=True),
    "masked scores, pooled, no text": lambda rng: figures.matrix_heatmap(
        _pooled_masked_scores(rng), _labels(200), _labels(200), title="S", kind="scores"),
    "values, rectangular": lambda rng: figures.matrix_heatmap(
        rng.standard_normal((5, 3)), TOKENS, ["d1", "d2", "d3"], title="V", kind="values",
        x_title="dimension", y_title="token"),
    "mask": lambda rng: figures.matrix_heatmap(
        np.tril(np.ones((5, 5))), TOKENS, TOKENS, title="M", kind="mask"),
    "mask, compact": lambda rng: figures.matrix_heatmap(
        np.tril(np.ones((5, 5))), TOKENS, TOKENS, title="M", kind="mask", compact=True),
    "mask, 20 cells, no text": lambda rng: figures.matrix_heatmap(
        np.tril(np.ones((20, 20))), _labels(20), _labels(20), title="M", kind="mask"),
    "large weights, pooled, no text": lambda rng: figures.matrix_heatmap(
        rng.dirichlet(np.ones(200), size=200), _labels(200), _labels(200), title="W",
        font_size=20),
    "all zero values": lambda rng: figures.matrix_heatmap(
        np.zeros((3, 3)), TOKENS[:3], TOKENS[:3], title="Z", kind="values"),
    "line chart, log axes, dashed reference": lambda rng: figures.line_chart(
        [1, 2, 4, 8], {"measured": [1.0, 3.9, 16.2, 63.0], "∝ n²": [1, 4, 16, 64]},
        title="T", x_title="n", y_title="ms", log_x=True, log_y=True, dashed=("∝ n²",)),
    "line chart, linear axes, eight series": lambda rng: figures.line_chart(
        np.arange(5), {f"head {h}": rng.random(5) for h in range(8)}, title="L",
        x_title="position", y_title="weight"),
    "bar chart with printed values and a range": lambda rng: figures.bar_chart(
        TOKENS, [0.1, 0.2, 0.3, 0.2, 0.2], title="B", x_title="key", y_title="weight",
        y_range=(0, 1)),
    "bar chart, many bars, no printed values": lambda rng: figures.bar_chart(
        _labels(20), rng.random(20), title="B", x_title="i", y_title="v"),
    "histogram with a theory curve": lambda rng: figures.histogram(
        rng.standard_normal(500), title="H", x_title="q·k",
        reference_pdf=lambda x: np.exp(-x**2 / 2) / np.sqrt(2 * np.pi)),
    "grid of weights, one colour bar": lambda rng: figures.heatmap_grid(
        [rng.dirichlet(np.ones(5), size=5) for _ in range(3)], TOKENS, TOKENS,
        ["head 1", "head 2", "head 3"], font_size=18, columns=2),
    "grid of masks": lambda rng: figures.heatmap_grid(
        [np.tril(np.ones((5, 5))), np.ones((5, 5))], TOKENS, TOKENS, ["causal", "none"],
        kind="mask"),
    "grid of masked scores, pooled": lambda rng: figures.heatmap_grid(
        [_pooled_masked_scores(rng), _masked_scores(200, rng)], _labels(200), _labels(200),
        ["a", "b"], kind="scores"),
    "line chart, log axes within a decade": lambda rng: figures.line_chart(
        [1, 2, 3], {"a": [0.2, 0.3, 0.5], "b": [0.3, 0.4, 0.6]}, title="T", x_title="n",
        y_title="v", log_y=True),
    "head thumbnails, some pooled": lambda rng: figures.head_thumbnails(
        rng.dirichlet(np.ones(20), size=(2, 3, 20)), _labels(20), font_size=18, max_cells=8),
    "histogram alone": lambda rng: figures.histogram(
        rng.standard_normal(500), title="H", x_title="q·k", bins=7),
}


def _validated(traces: list[dict], layout: dict) -> go.Figure:
    """``figures.figure`` as plotly would build it, checking every property."""
    traces, layout = figures.with_look(traces, layout)
    revision = figures.revision(traces, layout)
    return go.Figure(data=traces, layout=layout | {"datarevision": revision})


def _json(fig: go.Figure):
    # NaN stays a token, so that two NaNs compare equal.
    return json.loads(pio.to_json(fig, validate=False), parse_constant=lambda c: c)


@pytest.mark.parametrize("case", list(CASES))
def test_builders_send_what_validated_plotly_would(case: str, monkeypatch) -> None:
    fast = CASES[case](np.random.default_rng(7))
    monkeypatch.setattr(figures, "figure", _validated)  # raises ValueError if invalid
    checked = CASES[case](np.random.default_rng(7))
    assert _json(fast) == _json(checked)


@pytest.mark.parametrize("case", list(CASES))
def test_figures_carry_their_look_and_no_template(case: str) -> None:
    """Plotly.js redraws a figure with a template in full when Streamlit hands it over a
    second time; the look is written on every axis and heatmap instead."""
    spec = _json(CASES[case](np.random.default_rng(7)))
    layout = spec["layout"]
    assert "template" not in layout
    assert layout["font"]["color"] == figures.TEXT_COLOUR
    assert layout["colorway"] == figures.SERIES_COLOURS
    used = {f"{a}axis{t.get(a + 'axis', a)[1:]}" for t in spec["data"] for a in "xy"}
    for axis in used:
        assert layout[axis]["gridcolor"] == figures.GRID_COLOUR, axis
    for trace in spec["data"]:
        if trace["type"] == "heatmap":  # the look's gap of 1, or the builder's own
            assert {"xgap", "ygap"} <= set(trace)
        # An encoded 1-D array (a dict with "bdata") is redrawn on the second hand-over.
        for key in ("x", "y", "text", "width"):
            assert not isinstance(trace.get(key), dict), (trace["type"], key)
    # autorange "reversed" is redrawn on the second hand-over; an explicit range is not.
    assert all(layout[a].get("autorange") != "reversed" for a in layout if "axis" in a)


def test_the_look_fills_in_but_never_overrides() -> None:
    traces, layout = figures.with_look(
        [{"type": "heatmap", "z": [[1]], "xgap": 0, "xaxis": "x3", "yaxis": "y3"},
         {"type": "heatmap", "z": [[1]], "name": None}],
        {"font": {"size": 20}, "xaxis": {"gridcolor": "red"}})
    assert (traces[0]["xgap"], traces[0]["ygap"]) == (0, 1)
    assert (traces[1]["xgap"], traces[1]["ygap"]) == (1, 1) and "name" not in traces[1]
    assert layout["font"] == figures.LOOK["layout"]["font"] | {"size": 20}
    assert layout["xaxis"]["gridcolor"] == "red"
    assert layout["yaxis"] == layout["xaxis3"] == layout["yaxis3"] == figures.LOOK["axis"]


def test_revision_changes_with_the_numbers_only() -> None:
    """datarevision tells Plotly.js whether the arrays changed: the same content gives
    the same value (so the second hand-over is not redrawn), one changed cell a new one."""
    m = np.random.default_rng(3).random((4, 4))
    changed = m.copy()
    changed[2, 1] += 1e-3  # a change in the third decimal, as the cells print
    draw = lambda a: _json(figures.matrix_heatmap(a, TOKENS[:4], TOKENS[:4], title="W"))  # noqa: E731
    assert draw(m)["layout"]["datarevision"] == draw(m.copy())["layout"]["datarevision"]
    assert draw(m)["layout"]["datarevision"] != draw(changed)["layout"]["datarevision"]


@pytest.mark.parametrize("stops, name", [(figures.WEIGHTS_SCALE, "Viridis"),
                                         (figures.SCORES_SCALE, "RdBu_r"),
                                         (figures.VALUES_SCALE, "PuOr_r")])
def test_colour_scales_are_plotlys_named_scales(stops, name) -> None:
    named = go.Heatmap(colorscale=name).colorscale  # plotly's own reading of the name
    assert [c for _, c in stops] == [c for _, c in named]
    np.testing.assert_allclose([p for p, _ in stops], [p for p, _ in named], atol=1e-12)


def test_an_invalid_property_would_be_caught() -> None:
    # The check above can fail: a misspelt property is refused by the validated build.
    bad = [{"type": "heatmap", "z": [[1.0]], "colourscale": "Viridis"}]
    figures.figure(bad, {})  # the fast path does not look
    with pytest.raises(ValueError, match="colourscale"):
        _validated(bad, {})


def _printed_cells(fig: go.Figure) -> dict | None:
    """The trace that prints the numbers in the cells (text over the heatmap), if any."""
    layers = [t for t in fig.to_dict()["data"] if t.get("mode") == "text"]
    return layers[0] if layers else None


def _cell_font(fig: go.Figure) -> int:
    return _printed_cells(fig)["textfont"]["size"]


def test_long_cell_numbers_get_a_smaller_font() -> None:
    # The plot gets FIGURE_PX less the margins the layout plans: on the left the labels,
    # int(0.5·font·chars + 8 + 1.4·font + 4) + 1, on the right a colour bar with 3-character
    # labels, int(52 + 0.6·font·3) + 1.
    # 3 × 3 weights at 3 decimals, labels "the" (3 characters), font 14: left
    # int(21 + 8 + 23.6) + 1 = 53, right int(77.2) + 1 = 78, plot 400 - 53 - 78 = 269 px;
    # 3 cells of "0.401" need 0.6·3·5 = 9 px per px of font, so up to 29 px fits: 14 stays.
    small = figures.matrix_heatmap(np.full((3, 3), 0.401), TOKENS[:3], TOKENS[:3], title="W")
    assert _cell_font(small) == 14
    # 6 × 6 at 6 decimals, labels "0".."5" (1 character): left int(7 + 8 + 23.6) + 1 = 39,
    # plot 400 - 39 - 78 = 283 px; "-3.190000" is 9 characters: 283 / (0.6·6·9) = 8.7,
    # held at the floor of 9.
    wide = figures.matrix_heatmap(np.full((6, 6), -3.19), _labels(6), _labels(6), title="S",
                                  kind="scores", decimals=6)
    assert _cell_font(wide) == 9
    # The masks lesson in presenter mode: font 20, labels up to "<pad> (3)" (9), six
    # columns of "-0.72" (5): left int(90 + 8 + 28 + 4) + 1 = 131, right int(52 + 36) + 1
    # = 89, plot 400 - 131 - 89 = 180 px; 180 / (0.6·6·5) = 10.
    labels = ["A", "dog", "barked", "<pad>", "<pad> (2)", "<pad> (3)"]
    assert figures.fitting_cell_font(20, len("<pad> (3)"), 6, len("-0.72")) == 10
    # 10 px is below presenter mode's 18: the numbers are not printed at all (hover has them).
    masks = figures.matrix_heatmap(np.full((6, 6), -0.72), labels, labels, title="S",
                                   kind="scores", decimals=2, font_size=20)
    assert _printed_cells(masks) is None


def test_cell_fonts_never_go_below_the_floor() -> None:
    # 12 × 12 at 6 decimals: 283 / (0.6·12·9) = 4.4, held at the floor of 9.
    widest = figures.matrix_heatmap(np.full((12, 12), -3.19), _labels(12), _labels(12),
                                    title="S", kind="scores", decimals=6)
    assert _cell_font(widest) == figures.MIN_CELL_FONT == 9


def test_cells_below_a_value_print_no_number_and_the_rest_get_a_larger_font() -> None:
    # 12 × 12 weights at 1 decimal, labels "0".."11" (2 characters): left
    # int(14 + 8 + 23.6) + 1 = 46, right 78 (as above), plot 400 - 46 - 78 = 276 px.
    # Every cell printed, the longest text is "<0.1" (4 characters): 276 / (0.6·12·4)
    # = 9.6 -> 9. Only the cells of 0.05 or more printed ("0.5", 3 characters):
    # 276 / (0.6·12·3) = 12.8 -> 12.
    m = np.full((12, 12), 0.001)
    np.fill_diagonal(m, 0.5)
    every = figures.matrix_heatmap(m, _labels(12), _labels(12), title="W", decimals=1)
    assert _cell_font(every) == 9 and len(_printed_cells(every)["text"]) == 144
    some = figures.matrix_heatmap(m, _labels(12), _labels(12), title="W", decimals=1,
                                  blank_below=0.05)
    assert _printed_cells(some)["text"] == ["0.5"] * 12 and _cell_font(some) == 12
    # the hover still reads every value
    assert some.data[0].text[0][1] == "<0.1"


def test_pooled_blocks_are_labelled_by_their_range_and_the_title_says_so() -> None:
    # 200 tokens pooled to at most 64 a side: blocks of ceil(200 / 64) = 4; the last block
    # holds positions 197 to 200.
    fig = figures.matrix_heatmap(np.zeros((200, 200)), _labels(200), _labels(200), title="W")
    y = list(fig.data[0].y)
    assert y[:2] == ["1–4", "5–8"] and y[-1] == "197–200" and len(y) == 50
    assert "mean of a 4×4 block" in fig.layout.title.text
    assert not any("…" in label for label in y)


def test_every_token_label_is_drawn_and_long_ones_are_abbreviated() -> None:
    labels = [f"t{i}" for i in range(23)] + ["extraordinarily"]
    fig = figures.matrix_heatmap(np.zeros((24, 24)), labels, labels, title="W")
    assert list(fig.layout.xaxis.tickvals) == labels  # all 24, none dropped
    assert fig.layout.xaxis.ticktext[-1] == "extraordi…"  # 10 characters as read
    assert fig.data[0].x[-1] == "extraordinarily"  # the hover has the full text


def test_an_abbreviated_repeat_keeps_its_occurrence_mark() -> None:
    """Cut to 10 characters, "extraordinarily" and its second occurrence would read the
    same on the axis; the mark is kept, and short marked labels are not cut at all."""
    labels = ["extraordinarily", "extraordinarily", "<pad>", "<pad>"]
    fig = figures.matrix_heatmap(np.zeros((4, 4)), labels, labels, title="W")
    assert list(fig.layout.xaxis.ticktext) == [
        "extraordi…", "extraordi… (2nd)", "&lt;pad&gt;", "&lt;pad&gt; (2nd)"]


def test_grid_has_one_colour_bar_and_all_labels_on_every_panel() -> None:
    rng = np.random.default_rng(3)
    mats = [rng.dirichlet(np.ones(11), size=11) for _ in range(8)]
    words = "The cat sat on the mat because the cat was tired".split()
    fig = figures.heatmap_grid(mats, words, words, [f"head {h + 1}" for h in range(8)],
                               font_size=18, columns=4)
    assert {t.coloraxis for t in fig.data} == {"coloraxis"}  # one shared colour axis
    assert fig.layout.coloraxis.cmin == 0 and fig.layout.coloraxis.cmax == 1
    axes = [fig.layout[f"xaxis{'' if k == 0 else k + 1}"] for k in range(8)]
    assert all(len(a.tickvals) == 11 for a in axes)
    # Cells: 1.6 × 18 = 28.8 px; a panel of 11 is 317 px. The colour bar's labels ("0.2")
    # take 52 + 0.6·18·3 + 1 = 85 px, so the paper is 1150 - 10 - 85 = 1055 px; at most
    # (1055 - 0.6·18·8 - 40 + 24) / (317 + 24) = 2.8 -> 2 panels a row, 4 rows.
    lefts = sorted({round(a.domain[0], 3) for a in axes})
    assert len(lefts) == 2
    assert fig.layout.height > 4 * 11 * 28.8


def test_on_a_projector_numbers_too_long_for_their_cells_are_not_printed() -> None:
    # 12 columns of "-3.190000" at font 20 would need a 5 px font: no text at all.
    fig = figures.matrix_heatmap(np.full((12, 12), -3.19), _labels(12), _labels(12),
                                 title="S", kind="scores", decimals=6, font_size=20)
    assert _printed_cells(fig) is None
    # 3 × 3 at 3 decimals fit at 20 px: printed.
    fits = figures.matrix_heatmap(np.full((3, 3), 0.401), TOKENS[:3], TOKENS[:3], title="W",
                                  font_size=20)
    assert _printed_cells(fits)["text"] == ["0.401"] * 9 and _cell_font(fits) == 20


def test_log_axes_label_powers_of_ten_only() -> None:
    fig = figures.line_chart([16, 64, 256, 1024], {"a": [0.05, 0.4, 6.0, 90.0], "b": [1, 2, 3, 4]},
                             title="T", x_title="n", y_title="ms", log_x=True, log_y=True)
    assert fig.layout.xaxis.dtick == 1 and fig.layout.yaxis.dtick == 1
    # Within one decade, 1-2-5 steps inside the data's range (0.2 to 0.6, widened by 1.5).
    small = figures.line_chart([1, 2], {"a": [0.2, 0.6]}, title="T", x_title="n",
                               y_title="v", log_y=True)
    assert list(small.layout.yaxis.tickvals) == [0.2, 0.5]


def test_a_legend_sits_between_the_title_and_the_plot() -> None:
    fig = figures.line_chart([1, 2], {"measured": [1, 2], "theory": [1, 2]}, title="T",
                             x_title="n", y_title="v", font_size=20)
    # Title band 12 + 1.5·22 = 45 px; one legend row 1.5·20 + 8 = 38 px; top margin
    # 45 + 38 + 14 = 97 px; the legend's top is at 45 px from the figure's top.
    assert fig.layout.margin.t == 97
    assert fig.layout.legend.yref == "container"
    assert (1 - fig.layout.legend.y) * fig.layout.height == pytest.approx(45)


def test_head_thumbnails_one_panel_per_head_and_a_legible_colour_bar() -> None:
    weights = np.random.default_rng(0).dirichlet(np.ones(5), size=(2, 3, 5))  # (L, H, T, T)
    fig = figures.head_thumbnails(weights, _labels(5), font_size=20)
    assert len(fig.data) == 2 * 3
    assert fig.layout.coloraxis.colorbar.tickfont.size == 20  # 18 px or more on a projector
    assert [a.text for a in fig.layout.annotations] == ["H1", "H2", "H3", "L1", "L2"]
