"""Axes and the room they take: category and log axes, and margins planned in pixels
from the labels, so that Plotly.js never lays a figure out twice."""

from __future__ import annotations

import html

import numpy as np

from ..labels import plotly_safe, split_occurrence

# Cell numbers must fit their cells. Heatmaps with numbers sit in half-page columns,
# about FIGURE_PX wide in normal and presenter mode alike; the plot gets what the
# margins planned for the row labels (CHAR_EM em per character) and the colour bar leave.
FIGURE_PX = 400
CHAR_EM = 0.6
LABEL_CHARS = 10  # longer token labels are abbreviated on the axes (full text on hover)
ALL_LABELS_UP_TO = 32  # categories per axis for which every label is drawn


def abbreviate(label: str, limit: int = LABEL_CHARS) -> str:
    """A label (already made Plotly-safe) cut to ``limit`` characters as read, not
    counting a repeated token's occurrence mark, which is kept: "extraordi… (2nd)"."""
    token, mark = split_occurrence(html.unescape(label))
    return label if len(token) <= limit else plotly_safe(token[:limit - 1] + "…" + mark)


def top_to_bottom(n: int) -> dict:
    """A category axis of ``n`` rows with the first on top, as an explicit range.

    ``autorange: "reversed"`` shows the same, but Streamlit hands each new figure to
    Plotly.js twice as it mounts, and with autorange the second hand-over redraws the
    figure in full (measured in headless Chromium); with a range it costs nothing.
    """
    return {"range": [n - 0.5, -0.5]}


def longest_label(names: list[str]) -> int:
    """Characters of the longest label as an axis shows it (abbreviated, unescaped)."""
    return max((len(html.unescape(abbreviate(x))) for x in names), default=1)


def category_axis(names: list[str], title: str, font_size: int) -> dict:
    """A category axis that shows every label (abbreviated past LABEL_CHARS characters;
    hover gives the full text): Plotly would otherwise drop every other one."""
    axis = {"title": {"text": title, "font": {"size": font_size}}, "type": "category",
            "tickfont": {"size": font_size}, "automargin": True}
    if len(names) <= ALL_LABELS_UP_TO:
        axis |= {"tickmode": "array", "tickvals": names,
                 "ticktext": [abbreviate(x) for x in names]}
    return axis


# Margins planned from the labels, as Plotly.js's automargin would make them. When
# automargin has to push a margin outwards, Plotly.js lays the figure out a second time
# (about 40% of a small figure's drawing time, profiled in headless Chromium); with room
# planned it does not. Automargin stays on, for labels longer than planned.
# A label's characters, on average (Source Sans): CHAR_EM, the widest, left the plot
# 10 to 30 px narrower than automargin made it. A label of wide letters is pushed.
LABEL_EM = 0.5
TICK_CHARS = 6  # a numeric tick label ("0.0001", "−0.025", "100k")
COLOURBAR_FIXED_PX = 52  # colour bar offset, padding and thickness, without its labels


def line_px(font_size: int) -> float:
    return 1.4 * font_size


def left_px(font_size: int, label_chars: int, title: bool) -> int:
    """A y axis's tick labels and (rotated) title, left of the plot."""
    return int(LABEL_EM * font_size * label_chars + 8
               + (line_px(font_size) + 4 if title else 0)) + 1


def bottom_px(font_size: int, title: bool, upright_chars: int = 0) -> int:
    """An x axis's tick labels (level, or turned upright with ``upright_chars``) and its
    title, below the plot."""
    labels = CHAR_EM * font_size * upright_chars if upright_chars else line_px(font_size)
    return int(labels + 10 + (line_px(font_size) + 4 if title else 0)) + 1


def upright_chars(labels: list[str], font_size: int) -> int:
    """The longest of ``labels`` when Plotly will turn them upright (they do not fit side
    by side across a figure of about FIGURE_PX), else 0."""
    longest = longest_label(labels)
    return longest if len(labels) * CHAR_EM * font_size * (longest + 1) > FIGURE_PX else 0


def colourbar_px(font_size: int, label_chars: int, thickness: int = 12) -> int:
    """A colour bar right of the plot, with tick labels of ``label_chars``."""
    return int(COLOURBAR_FIXED_PX + thickness - 12 + CHAR_EM * font_size * label_chars) + 1


def tick_chars(values, log: bool = False) -> int:
    """Characters of the longest tick label Plotly prints for an axis over ``values``:
    multiples of a round step (1, 2 or 5 times a power of ten), thousands as "k"; at
    most TICK_CHARS, and TICK_CHARS when there are no values or the axis is a log one."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if log or v.size == 0:
        return TICK_CHARS
    low, high = float(v.min()), float(v.max())
    top = max(abs(low), abs(high))
    step = (high - low) / 5 or top or 1.0
    decimals = max(0, -int(np.floor(np.log10(step)))) if top < 1000 else 0
    whole = len(f"{int(top // 1000)}k") if top >= 1000 else len(str(int(top)))
    return min(whole + (decimals + 1 if decimals else 0) + (low < 0), TICK_CHARS)


def colourbar_chars(colour: dict) -> int:
    """The longest tick label of a colour bar from ``cmin``/``zmin`` to its maximum."""
    return tick_chars([colour.get("cmin", colour.get("zmin", 0.0)),
                        colour.get("cmax", colour.get("zmax", 1.0))])


def log_ticks(values) -> dict:
    """Tick settings of a log axis: labels at powers of ten only (every other power past
    8 decades), or at 1, 2 and 5 times them when the data span less than a decade; never
    Plotly's minor labels ("5 0.1 2 5 1 2", which run into each other)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v) & (v > 0)]
    if v.size == 0:
        return {"dtick": 1}
    low, high = np.floor(np.log10(v.min())), np.ceil(np.log10(v.max()))
    if high - low >= 2 or (high - low >= 1 and v.max() / v.min() >= 10):
        return {"dtick": 2 if high - low > 8 else 1}
    ticks = [m * 10.0 ** e for e in range(int(low) - 1, int(high) + 1) for m in (1, 2, 5)]
    return {"tickmode": "array", "tickvals": [t for t in ticks
                                              if v.min() / 1.5 <= t <= v.max() * 1.5]}
