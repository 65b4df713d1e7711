"""The figure builders skip Plotly's validation for speed; here Plotly validates them.

``pages.ui.figures.figure`` builds figures from plain dicts without checking them
(about 5 ms saved per heatmap). Each case below builds a figure of every kind and
shape the lessons draw, then rebuilds it from its dict through ``go.Figure``, which
checks every property (an unknown or misspelt one raises ValueError) and coerces every
value. The two must serialise to the same JSON: what the browser receives is what
plotly would have sent had it validated.
"""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from pages.ui import figures

RNG = np.random.default_rng(7)
TOKENS = ["the", "cat", "sat", "the", "<b>mat</b>"]


def _masked_scores() -> np.ndarray:
    scores = RNG.standard_normal((5, 5))
    scores[np.triu_indices(5, k=1)] = -np.inf  # a causal mask
    scores[4, 0] = np.nan  # a cell not computed yet
    return scores


CASES = {
    "weights, small, numbers in cells": lambda: figures.matrix_heatmap(
        np.full((5, 5), 0.2), TOKENS, TOKENS, title="W"),
    "masked scores, small": lambda: figures.matrix_heatmap(
        _masked_scores(), TOKENS, TOKENS, title="S", kind="scores"),
    "masked scores, compact": lambda: figures.matrix_heatmap(
        _masked_scores(), TOKENS, TOKENS, title="S", kind="scores", compact=True),
    "values, rectangular": lambda: figures.matrix_heatmap(
        RNG.standard_normal((5, 3)), TOKENS, ["d1", "d2", "d3"], title="V", kind="values",
        x_title="dimension", y_title="token"),
    "mask": lambda: figures.matrix_heatmap(
        np.tril(np.ones((5, 5))), TOKENS, TOKENS, title="M", kind="mask"),
    "large weights, pooled, no text": lambda: figures.matrix_heatmap(
        RNG.dirichlet(np.ones(200), size=200), [str(i) for i in range(200)],
        [str(i) for i in range(200)], title="W", font_size=20),
    "all zero values": lambda: figures.matrix_heatmap(
        np.zeros((3, 3)), TOKENS[:3], TOKENS[:3], title="Z", kind="values"),
    "line chart, log axes, dashed reference": lambda: figures.line_chart(
        [1, 2, 4, 8], {"measured": [1.0, 3.9, 16.2, 63.0], "∝ n²": [1, 4, 16, 64]},
        title="T", x_title="n", y_title="ms", log_x=True, log_y=True, dashed=("∝ n²",)),
    "bar chart with printed values and a range": lambda: figures.bar_chart(
        TOKENS, [0.1, 0.2, 0.3, 0.2, 0.2], title="B", x_title="key", y_title="weight",
        y_range=(0, 1)),
    "bar chart, many bars, no printed values": lambda: figures.bar_chart(
        [str(i) for i in range(20)], RNG.random(20), title="B", x_title="i", y_title="v"),
    "histogram with a theory curve": lambda: figures.histogram(
        RNG.standard_normal(500), title="H", x_title="q·k",
        reference_pdf=lambda x: np.exp(-x**2 / 2) / np.sqrt(2 * np.pi)),
}


def _json(fig: go.Figure):
    # NaN stays a token, so that two NaNs compare equal.
    return json.loads(pio.to_json(fig, validate=False), parse_constant=lambda c: c)


@pytest.mark.parametrize("case", list(CASES))
def test_builders_send_what_validated_plotly_would(case: str) -> None:
    fast = CASES[case]()
    checked = go.Figure(fast.to_dict())  # raises ValueError on any invalid property
    assert _json(fast) == _json(checked)


def test_an_invalid_property_would_be_caught() -> None:
    # The check above can fail: a misspelt property is refused by the validated rebuild.
    bad = figures.figure([{"type": "heatmap", "z": [[1.0]], "colourscale": "Viridis"}], {})
    with pytest.raises(ValueError, match="colourscale"):
        go.Figure(bad.to_dict())
