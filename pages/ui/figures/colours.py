"""The colour rules of every figure, in one place.

Weights on a fixed 0..1 sequential colour-blind-safe scale (Viridis); scores and values
on diverging scales centred on 0 (red against blue, purple against orange: never red
against green); series in Okabe-Ito's hues, each also with its own line style and
marker; masked cells grey. Contrast as WCAG 2.1 measures it: text 4.5:1 against what is
behind it (numbers in cells get black or white, whichever contrasts more), lines,
markers and bars 3:1 against the white plot.
"""

from __future__ import annotations

import re

import numpy as np
from plotly.colors import get_colorscale

# Colour scales as explicit stops: plotly.js knows "Viridis" but not "RdBu_r" or "PuOr_r"
# (reversed scales are a feature of the Python library's validation, skipped here).
WEIGHTS_SCALE = get_colorscale("Viridis")
SCORES_SCALE = get_colorscale("RdBu_r")
VALUES_SCALE = get_colorscale("PuOr_r")


# Okabe-Ito's hues, distinguishable with every common colour-vision deficiency; its
# orange (#E69F00), reddish purple (#CC79A7) and sky blue (#56B4E9) darkened to reach 3:1
# against white (2.25, 3.06 and 2.31 before; tests/pages/test_colours.py measures all).
SERIES_COLOURS = ["#0072B2", "#C47600", "#009E73", "#C0659F", "#3A87B8", "#D55E00", "#000000"]
# A series is never told apart by colour alone: each has its own line style and marker.
SERIES_DASHES = ["solid", "dot", "dashdot", "longdash", "longdashdot", "5px,3px,1px,3px,1px,3px",
                 "solid"]
SERIES_MARKERS = ["circle", "square", "diamond", "triangle-up", "x", "cross", "star"]
# The dashes used above leave out "dash": reference lines (theory, ∝ n²) are grey dashes.
REFERENCE_GREY = "#555555"
THEORY_BLACK = "#222222"  # a histogram's theory curve, over bars of SERIES_COLOURS[0]
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


_RGB = re.compile(r"rgba?\(\s*([\d.]+)\s*,\s*([\d.]+)\s*,\s*([\d.]+)")


def rgb(colour: str) -> tuple[float, float, float]:
    """A colour as Plotly writes it ("#RRGGBB" or "rgb(r, g, b)") as 0..255 channels."""
    if colour.startswith("#") and len(colour) == 7:
        return tuple(float(int(colour[i:i + 2], 16)) for i in (1, 3, 5))
    found = _RGB.match(colour)
    if not found:
        raise ValueError(f"not a colour written as #RRGGBB or rgb(r, g, b): {colour!r}")
    return tuple(float(c) for c in found.groups())


def relative_luminance(colour: str) -> float:
    """WCAG 2.1's relative luminance: 0 for black, 1 for white."""
    channels = np.array(rgb(colour)) / 255.0
    linear = np.where(channels <= 0.04045, channels / 12.92,
                      ((channels + 0.055) / 1.055) ** 2.4)
    return float(linear @ np.array([0.2126, 0.7152, 0.0722]))


def contrast_ratio(a: str, b: str) -> float:
    """WCAG 2.1's contrast ratio (L1 + 0.05) / (L2 + 0.05), 1 to 21."""
    high, low = sorted([relative_luminance(a), relative_luminance(b)], reverse=True)
    return (high + 0.05) / (low + 0.05)


def text_on(fill: str) -> str:
    """Black or white text, whichever contrasts more with ``fill``: at least 4.58:1 on any
    colour (the worst fill, of luminance 0.179, gives 4.58 with either)."""
    return ("#000000" if contrast_ratio("#000000", fill) >= contrast_ratio("#FFFFFF", fill)
            else "#FFFFFF")


def scale_colour(scale: list, t: float) -> str:
    """The colour Plotly.js draws at ``t`` (0..1, clipped) of a colour scale of stops
    ``[[position, colour], ...]``: linear in RGB between the two stops around it."""
    t = min(max(float(t), 0.0), 1.0)
    positions = [p for p, _ in scale]
    k = min(max(int(np.searchsorted(positions, t, side="right")) - 1, 0), len(scale) - 2)
    (p0, c0), (p1, c1) = scale[k], scale[k + 1]
    w = 0.0 if p1 == p0 else (t - p0) / (p1 - p0)
    mixed = [(1 - w) * a + w * b for a, b in zip(rgb(c0), rgb(c1), strict=True)]
    return "#" + "".join(f"{round(c):02x}" for c in mixed)


def cell_fills(shown: np.ndarray, colour: dict) -> np.ndarray:
    """The fill of each cell of a heatmap drawn with ``colour`` (its colorscale and
    zmin/zmax, or cmin/cmax for a colour axis): masked cells (``-inf``) grey, NaN None."""
    scale = colour["colorscale"]
    low = colour.get("zmin", colour.get("cmin", 0.0))
    high = colour.get("zmax", colour.get("cmax", 1.0))
    span = (high - low) or 1.0
    fills = np.empty(shown.shape, dtype=object)
    for index, value in np.ndenumerate(shown):
        fills[index] = (MASKED_GREY if np.isneginf(value) else None if np.isnan(value)
                        else scale_colour(scale, (value - low) / span))
    return fills
