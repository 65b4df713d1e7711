"""The colour rules of the figures (pages/ui/figures/colours.py), measured as WCAG 2.1 does.

Text at least 4.5:1 against what is behind it (the numbers printed in heatmap cells
included), lines, markers and bars at least 3:1 against the white plot, and no series of
a line chart told apart by colour alone. Cell colours are recomputed here with Plotly's
own Python colour-scale sampling, a second method beside the builders' interpolation.
"""

from __future__ import annotations

import numpy as np
import pytest
from plotly.colors import sample_colorscale
from test_figures import CASES

from pages.ui import figures
from pages.ui.figures import colours

WHITE = "#FFFFFF"


def _hex(colour: str) -> str:
    """Plotly's "rgb(r, g, b)" (channels possibly fractional) as "#rrggbb"."""
    if colour.startswith("#"):
        return colour
    channels = colour[colour.index("(") + 1:colour.index(")")].split(",")
    return "#" + "".join(f"{round(float(c)):02x}" for c in channels)


@pytest.mark.parametrize("a, b, ratio", [
    ("#000000", "#FFFFFF", 21.0),  # the largest ratio there is
    ("#FFFFFF", "#FFFFFF", 1.0),
    ("#767676", "#FFFFFF", 4.54),  # the lightest grey that passes 4.5:1 on white
    ("#777777", "#FFFFFF", 4.48),  # one step lighter fails
    ("rgb(0,0,0)", "#FFFFFF", 21.0),
])
def test_contrast_ratio_matches_wcag_reference_values(a, b, ratio) -> None:
    assert colours.contrast_ratio(a, b) == pytest.approx(ratio, abs=0.005)


def test_black_or_white_text_passes_on_any_fill() -> None:
    # Whichever of black and white contrasts more gives at least 4.58:1 (the worst fill
    # has luminance sqrt(1.05 · 0.05) − 0.05 = 0.179): checked over a cube of fills.
    levels = np.linspace(0, 255, 18).round().astype(int)
    worst = min(colours.contrast_ratio(colours.text_on(f), f)
                for f in (f"#{r:02x}{g:02x}{b:02x}" for r in levels for g in levels
                          for b in levels))
    assert worst >= 4.5


def _cells(fig):
    """(text, text colour, fill) of every number printed over a heatmap, the fill found
    from the heatmap (or grid panel) under it, on the same axes, with Plotly's own
    sampling."""
    axes = lambda t: (t.xaxis or "x", t.yaxis or "y")  # noqa: E731
    heatmaps = {axes(t): t for t in fig.data if t.type == "heatmap" and t.hoverinfo != "skip"}
    for layer in (t for t in fig.data if t.type == "scatter" and t.mode == "text"):
        heat = heatmaps[axes(layer)]
        colour = fig.layout.coloraxis if heat.coloraxis else heat
        low = colour.cmin if heat.coloraxis else colour.zmin
        high = colour.cmax if heat.coloraxis else colour.zmax
        scale = [list(stop) for stop in colour.colorscale]
        z = np.asarray(heat.z, dtype=np.float64)
        row_of = {name: i for i, name in enumerate(heat.y)}
        col_of = {name: j for j, name in enumerate(heat.x)}
        for x, y, text, ink in zip(layer.x, layer.y, layer.text, layer.textfont.color,
                                   strict=True):
            value = z[row_of[y], col_of[x]]
            fill = colours.MASKED_GREY if np.isnan(value) else _hex(sample_colorscale(
                scale, [float(np.clip((value - low) / (high - low), 0, 1))])[0])
            yield text, ink, fill


# The cases of test_figures whose cells print numbers (or ✓/✗): compact, pooled and
# large matrices print none.
PRINTING = {"weights, small, numbers in cells", "weights, 10 cells, smaller cell font",
            "masked scores with a NaN cell, small", "values, rectangular", "mask",
            "all zero values", "grid of weights, one colour bar", "grid of masks"}


@pytest.mark.parametrize("case", list(CASES))
def test_numbers_in_cells_have_4_5_to_1_against_their_cell(case: str) -> None:
    cells = list(_cells(CASES[case](np.random.default_rng(7))))
    assert bool(cells) == (case in PRINTING), f"{case}: {len(cells)} cells printed"
    low = [(text, ink, fill, round(colours.contrast_ratio(ink, fill), 2))
           for text, ink, fill in cells if colours.contrast_ratio(ink, fill) < 4.5]
    assert not low, f"{case}: cell text below 4.5:1 (text, ink, fill, ratio): {low[:8]}"


def test_a_mid_viridis_cell_gets_black_text() -> None:
    # Viridis at 0.5 is about #21918c (luminance 0.222): white on it is 3.8:1, black 5.4:1;
    # Plotly's own choice there was white.
    fig = figures.matrix_heatmap(np.full((2, 2), 0.5), ["a", "b"], ["a", "b"], title="W")
    layer = [t for t in fig.data if t.type == "scatter"][0]
    assert set(layer.textfont.color) == {"#000000"}


def test_masked_cells_print_minus_infinity_in_black() -> None:
    scores = np.array([[1.0, -np.inf], [0.5, -0.5]])
    fig = figures.matrix_heatmap(scores, ["a", "b"], ["a", "b"], title="S", kind="scores")
    layer = [t for t in fig.data if t.type == "scatter"][0]
    masked = list(layer.text).index("−∞")
    assert layer.textfont.color[masked] == "#000000"  # on grey #d0d0d0: 13.5:1


@pytest.mark.parametrize("colour", colours.SERIES_COLOURS)
def test_series_colours_have_3_to_1_against_the_plot(colour: str) -> None:
    assert colours.contrast_ratio(colour, WHITE) >= 3.0


def test_reference_lines_and_figure_text_contrast_with_the_plot() -> None:
    assert colours.contrast_ratio(colours.REFERENCE_GREY, WHITE) >= 3.0
    assert colours.contrast_ratio(colours.THEORY_BLACK, WHITE) >= 3.0
    assert colours.contrast_ratio(colours.TEXT_COLOUR, WHITE) >= 4.5  # titles, ticks


def test_series_differ_in_line_style_and_marker_not_only_colour() -> None:
    series = {f"head {h}": np.arange(4.0) + h for h in range(7)}
    fig = figures.line_chart(np.arange(4), series, title="L", x_title="i", y_title="v")
    styles = [(t.line.dash, t.marker.symbol) for t in fig.data]
    assert len(set(d for d, _ in styles)) >= 6 and len(set(m for _, m in styles)) == 7
    assert all(t.mode == "lines+markers" for t in fig.data)


def test_signed_values_are_centred_on_zero() -> None:
    fig = figures.matrix_heatmap(np.array([[-0.5, 2.0], [1.0, 0.0]]), ["a", "b"], ["a", "b"],
                                 title="S", kind="scores")
    heat = fig.data[0]
    assert (heat.zmin, heat.zmid, heat.zmax) == (-2.0, 0.0, 2.0)


def test_scale_colour_follows_plotlys_sampling() -> None:
    for scale in (colours.WEIGHTS_SCALE, colours.SCORES_SCALE, colours.VALUES_SCALE):
        for t in np.linspace(0, 1, 23):
            ours = colours.rgb(colours.scale_colour(scale, t))
            theirs = colours.rgb(_hex(sample_colorscale(scale, [t])[0]))
            assert np.max(np.abs(np.subtract(ours, theirs))) <= 1.0, (t, ours, theirs)
