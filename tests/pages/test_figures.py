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
    "histogram alone": lambda rng: figures.histogram(
        rng.standard_normal(500), title="H", x_title="q·k", bins=7),
}


def _validated(traces: list[dict], layout: dict) -> go.Figure:
    """``figures.figure`` as plotly would build it, checking every property."""
    return go.Figure(data=[{k: v for k, v in t.items() if v is not None} for t in traces],
                     layout=layout)


def _json(fig: go.Figure):
    # NaN stays a token, so that two NaNs compare equal.
    return json.loads(pio.to_json(fig, validate=False), parse_constant=lambda c: c)


@pytest.mark.parametrize("case", list(CASES))
def test_builders_send_what_validated_plotly_would(case: str, monkeypatch) -> None:
    fast = CASES[case](np.random.default_rng(7))
    monkeypatch.setattr(figures, "figure", _validated)  # raises ValueError if invalid
    checked = CASES[case](np.random.default_rng(7))
    assert _json(fast) == _json(checked)


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


def _cell_font(fig: go.Figure) -> int:
    return fig.to_dict()["data"][0]["textfont"]["size"]


def test_long_cell_numbers_get_a_smaller_font() -> None:
    # 3 × 3 weights at 3 decimals, labels "the" (3 characters), font 14: the plot gets
    # 400 - 0.6·14·3 - 70 - 20 = 284.8 px; 3 cells of "0.401" need 0.6·3·5 = 9 px per px
    # of font, so up to 31 px fits and the font stays 14.
    small = figures.matrix_heatmap(np.full((3, 3), 0.401), TOKENS[:3], TOKENS[:3], title="W")
    assert _cell_font(small) == 14
    # 6 × 6 at 6 decimals, labels "0".."5" (1 character): plot 400 - 8.4 - 90 = 301.6 px;
    # "-3.190000" is 9 characters: 301.6 / (0.6·6·9) = 9.3, so 9.
    wide = figures.matrix_heatmap(np.full((6, 6), -3.19), _labels(6), _labels(6), title="S",
                                  kind="scores", decimals=6)
    assert _cell_font(wide) == 9
    # The masks lesson in presenter mode: font 20, labels up to "<pad> (3)" (9), six
    # columns of "-0.72" (5): plot 400 - 0.6·20·9 - 90 = 202 px; 202 / (0.6·6·5) = 11.2.
    labels = ["A", "dog", "barked", "<pad>", "<pad> (2)", "<pad> (3)"]
    masks = figures.matrix_heatmap(np.full((6, 6), -0.72), labels, labels, title="S",
                                   kind="scores", decimals=2, font_size=20)
    assert _cell_font(masks) == 11


def test_cell_fonts_never_go_below_the_floor() -> None:
    # 12 × 12 at 6 decimals: 301.6 / (0.6·12·9) = 4.7, held at the floor of 9.
    widest = figures.matrix_heatmap(np.full((12, 12), -3.19), _labels(12), _labels(12),
                                    title="S", kind="scores", decimals=6)
    assert _cell_font(widest) == figures.MIN_CELL_FONT == 9
