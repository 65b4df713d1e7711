"""The colour rules of every figure, in one place.

Weights on a fixed 0..1 sequential colour-blind-safe scale (Viridis); scores and values
on diverging scales centred on 0; series in the Okabe-Ito colours; masked cells grey.
"""

from __future__ import annotations

import numpy as np
from plotly.colors import get_colorscale

# Colour scales as explicit stops: plotly.js knows "Viridis" but not "RdBu_r" or "PuOr_r"
# (reversed scales are a feature of the Python library's validation, skipped here).
WEIGHTS_SCALE = get_colorscale("Viridis")
SCORES_SCALE = get_colorscale("RdBu_r")
VALUES_SCALE = get_colorscale("PuOr_r")


# Okabe-Ito colours: distinguishable with every common colour-vision deficiency.
SERIES_COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000"]
# Our own look (look.py): light page, Streamlit's text colour.
TEXT_COLOUR = "#31333F"
GRID_COLOUR = "#E6EAF1"
MASKED_GREY = "#d0d0d0"  # masked cells, and "✗" (may not attend) in a mask
MAY_ATTEND = "#21918c"  # "✓" cells of a mask (Viridis' middle)


def heatmap_colours(shown: np.ndarray, kind: str, compact: bool) -> dict:
    """Colour scale, range and colour bar of a heatmap of ``kind``.

    weights: Viridis on a fixed 0..1; scores and values: diverging scales centred on 0
    over ± the largest finite magnitude; mask: grey (masked) and teal (may attend).
    Compact figures have no colour bar.
    """
    if kind == "mask":
        colour = {"colorscale": [[0, MASKED_GREY], [1, MAY_ATTEND]], "zmin": 0.0, "zmax": 1.0,
                  "showscale": False}
    elif kind == "weights":
        colour = {"colorscale": WEIGHTS_SCALE, "zmin": 0.0, "zmax": 1.0}
    else:
        finite = shown[np.isfinite(shown)]
        span = float(np.max(np.abs(finite))) if finite.size else 1.0
        span = span if span > 0 else 1.0
        scale = SCORES_SCALE if kind == "scores" else VALUES_SCALE
        colour = {"colorscale": scale, "zmin": -span, "zmax": span, "zmid": 0.0}
    if compact:
        colour["showscale"] = False
    return colour


def grid_colours(shown: list[np.ndarray], kind: str, font_size: int) -> dict:
    """The one colour axis of a grid: its scale, range and colour bar."""
    if kind == "mask":
        return {"colorscale": [[0, MASKED_GREY], [1, MAY_ATTEND]], "cmin": 0.0, "cmax": 1.0,
                "showscale": False}
    bar = {"thickness": 14, "len": 1.0, "tickfont": {"size": font_size}}
    if kind == "weights":
        return {"colorscale": WEIGHTS_SCALE, "cmin": 0.0, "cmax": 1.0, "colorbar": bar}
    finite = np.concatenate([m[np.isfinite(m)] for m in shown])
    span = float(np.max(np.abs(finite))) if finite.size else 1.0
    span = span if span > 0 else 1.0
    return {"colorscale": SCORES_SCALE if kind == "scores" else VALUES_SCALE,
            "cmin": -span, "cmax": span, "colorbar": bar}
