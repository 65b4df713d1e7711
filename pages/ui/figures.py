"""Figure builders: pure functions from arrays to Plotly figures (no Streamlit).

One convention everywhere: rows are queries, columns are keys, token labels on both
axes; weights on a fixed 0..1 sequential colour-blind-safe scale (Viridis); scores
on a diverging scale centred on 0. Small matrices print their numbers in the cells;
every cell shows its number on hover. Larger matrices are average-pooled to at most
``MAX_CELLS`` per side so that a figure stays small on the wire.
"""

from __future__ import annotations

import hashlib
import html
import pickle
import re
import warnings

import numpy as np

# pandas in full before Plotly is used. Streamlit runs each browser session's script in
# its own thread: on a freshly started server one session can still be importing pandas
# while another builds a figure, and Plotly looks pandas up in sys.modules without waiting
# for its import to finish ("partially initialized module 'pandas' has no attribute
# 'Series'"). An import statement waits for the other thread's import; this module is the
# only one that calls Plotly. tests/pages/test_first_runs_at_once.py makes the race certain.
import pandas  # noqa: F401
import plotly.graph_objects as go
import plotly.io as pio
from plotly.colors import get_colorscale

from .labels import plotly_safe, split_occurrence, unique_labels
from .numbers import cell_number

MAX_CELLS = 64  # per side, on the wire
TEXT_CELLS = 12  # numbers printed in cells up to this size
# Cell numbers must fit their cells. Heatmaps with numbers sit in half-page columns,
# about FIGURE_PX wide in normal and presenter mode alike; the plot gets what the
# margins planned for the row labels (CHAR_EM em per character) and the colour bar leave.
FIGURE_PX = 400
CHAR_EM = 0.6
MIN_CELL_FONT = 9
# Presenter mode asks for figure fonts of 18 px or more (figure_font gives 20); there, a
# number that would need a smaller font is not printed in its cell at all (hover shows
# it): fewer numbers rather than tiny ones.
PRESENTER_MIN_FONT = 18
LABEL_CHARS = 10  # longer token labels are abbreviated on the axes (full text on hover)


def fitting_cell_font(font_size: int, longest_row_label: int, columns: int,
                      longest_text: int, colourbar: bool = True) -> int:
    """The largest cell font (px), up to ``font_size``, at which ``columns`` cells of
    ``longest_text`` characters fit side by side; never below MIN_CELL_FONT."""
    plot = (FIGURE_PX - _left_px(font_size, longest_row_label, title=True)
            - (_colourbar_px(font_size, label_chars=3) if colourbar else 10))
    fit = int(plot / (CHAR_EM * columns * max(longest_text, 1)))
    return max(min(font_size, fit), MIN_CELL_FONT)

# Colour scales as explicit stops: plotly.js knows "Viridis" but not "RdBu_r" or "PuOr_r"
# (reversed scales are a feature of the Python library's validation, skipped here).
WEIGHTS_SCALE = get_colorscale("Viridis")
SCORES_SCALE = get_colorscale("RdBu_r")
VALUES_SCALE = get_colorscale("PuOr_r")


# Okabe-Ito colours: distinguishable with every common colour-vision deficiency.
SERIES_COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000"]
# Our own look, written into each figure: pages show figures with Streamlit's theme off
# (pages.ui.layout.show_figure). Streamlit's theme rewrites every figure's JSON in the
# browser on each draw; without it four changed heatmaps redrew in about two thirds of
# the time (headless Chromium, 2 cores). Light page, Streamlit's font and text colour.
TEXT_COLOUR = "#31333F"
GRID_COLOUR = "#E6EAF1"
LOOK = {"data": {"heatmap": {"xgap": 1, "ygap": 1}}, "layout": {
    "font": {"family": '"Source Sans", "Source Sans Pro", sans-serif', "color": TEXT_COLOUR},
    "paper_bgcolor": "#FFFFFF",
    "plot_bgcolor": "#FFFFFF",
    "colorway": SERIES_COLOURS,
    "title": {"x": 0, "xanchor": "left", "font": {"weight": "bold"}},
    "hoverlabel": {"font": {"family": '"Source Sans", "Source Sans Pro", sans-serif'}},
}, "axis": {"gridcolor": GRID_COLOUR, "zerolinecolor": "#C5CAD3", "ticks": ""}}
_AXIS = re.compile(r"[xy]axis\d*")
pio.templates.default = None  # no template in any figure: see with_look


def _under(defaults: dict, given: dict) -> dict:
    """``given`` with ``defaults`` filled in where it says nothing (nested dicts merged)."""
    out = dict(defaults)
    for key, value in given.items():
        out[key] = (_under(out[key], value) if isinstance(value, dict)
                    and isinstance(out.get(key), dict) else value)
    return out


def _plain(value):
    """A 1-D array as a list. Plotly.js keeps the decoded copy of an encoded array inside
    the figure, and Streamlit's second hand-over (see ``with_look``) turns that copy into
    a plain object, which reads as new data and redraws the whole figure. Matrices (a
    heatmap's z) stay encoded: they are large on the wire and do not cause this."""
    return value.tolist() if isinstance(value, np.ndarray) and value.ndim == 1 else value


def with_look(traces: list[dict], layout: dict) -> tuple[list[dict], dict]:
    """The traces and layout with LOOK written in, on every axis and every heatmap.

    The look is written out rather than sent as a Plotly template: Plotly.js redraws a
    figure that has a template in full each time it is handed the same figure again,
    and Streamlit hands every newly drawn figure over twice (once as it mounts, once
    restyled); without a template the second hand-over costs a few milliseconds.
    Keys set to None are left out, as plotly does; 1-D arrays are sent as lists.
    """
    traces = [{k: _plain(v) for k, v in t.items() if v is not None} for t in traces]
    traces = [_under(LOOK["data"][t["type"]], t) if t.get("type") in LOOK["data"] else t
              for t in traces]
    axes = {"xaxis", "yaxis"} | {k for k in layout if _AXIS.fullmatch(k)}
    axes |= {f"{a}axis{t[a + 'axis'][1:]}" for t in traces for a in "xy" if t.get(a + "axis")}
    layout = _under(LOOK["layout"], layout)
    for axis in axes:
        layout[axis] = _under(LOOK["axis"], layout.get(axis, {}))
    return traces, layout


def revision(traces: list[dict], layout: dict) -> str:
    """A fingerprint of a figure's content, sent as its ``layout.datarevision``.

    With a datarevision Plotly.js compares data arrays by this value instead of by
    identity, so the second hand-over of the same figure (see ``with_look``) does not
    redraw it; a figure whose numbers change gets a new value and is drawn anew.
    """
    return hashlib.blake2b(pickle.dumps([traces, layout], protocol=5),
                           digest_size=8).hexdigest()


def figure(traces: list[dict], layout: dict) -> go.Figure:
    """A figure from plain trace dicts (each with its ``type``), without validation.

    Plotly checks every property of every trace as it builds a figure, about 5 ms a
    heatmap, and Streamlit serialises the figure without checking again; a lesson draws
    up to 20 figures per rerun. The builders here set only properties that plotly
    accepts: ``tests/pages/test_figures.py`` builds every kind of figure both ways and
    compares the JSON. The figure carries its look (``with_look``), no template, and a
    fingerprint of its content (``revision``).
    """
    traces, layout = with_look(traces, layout)
    layout["datarevision"] = revision(traces, layout)
    return go.Figure(data=traces, layout=layout, _validate=False)


def pool_matrix(m: np.ndarray, max_cells: int = MAX_CELLS) -> tuple[np.ndarray, int]:
    """Average-pool a 2-D matrix to at most ``max_cells`` per side.

    Returns the pooled matrix and the block size (1 when nothing was pooled).
    ``-inf`` cells (masked) are averaged as if absent; a block with only masked
    cells stays ``-inf``.
    """
    rows, cols = m.shape
    block = int(np.ceil(max(rows, cols) / max_cells))
    if block <= 1:
        return m, 1
    pr, pc = -(-rows // block), -(-cols // block)
    padded = np.full((pr * block, pc * block), np.nan)
    padded[:rows, :cols] = np.where(np.isneginf(m), np.nan, m)
    blocks = padded.reshape(pr, block, pc, block)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-masked blocks: mean of nothing
        pooled = np.nanmean(blocks, axis=(1, 3))
    return np.where(np.isnan(pooled), -np.inf, pooled), block


def _pool_labels(labels, block: int) -> list[str]:
    """Labels of pooled blocks: the range of positions each block covers, counted from 1
    ("1–2", "3–4"), since a block holds several tokens; unchanged when not pooled."""
    labels = [str(x) for x in labels]
    if block == 1:
        return labels
    n = len(labels)
    return [f"{i + 1}–{min(i + block, n)}" if min(i + block, n) > i + 1 else f"{i + 1}"
            for i in range(0, n, block)]


def _pooling_note(block: int) -> str:
    return f"<br>each cell: mean of a {block}×{block} block (positions shown as ranges)"


ALL_LABELS_UP_TO = 32  # categories per axis for which every label is drawn


def _abbreviate(label: str, limit: int = LABEL_CHARS) -> str:
    """A label (already made Plotly-safe) cut to ``limit`` characters as read, not
    counting a repeated token's occurrence mark, which is kept: "extraordi… (2nd)"."""
    token, mark = split_occurrence(html.unescape(label))
    return label if len(token) <= limit else plotly_safe(token[:limit - 1] + "…" + mark)


def _top_to_bottom(n: int) -> dict:
    """A category axis of ``n`` rows with the first on top, as an explicit range.

    ``autorange: "reversed"`` shows the same, but Streamlit hands each new figure to
    Plotly.js twice as it mounts, and with autorange the second hand-over redraws the
    figure in full (measured in headless Chromium); with a range it costs nothing.
    """
    return {"range": [n - 0.5, -0.5]}


def _longest_label(names: list[str]) -> int:
    """Characters of the longest label as an axis shows it (abbreviated, unescaped)."""
    return max((len(html.unescape(_abbreviate(x))) for x in names), default=1)


def _category_axis(names: list[str], title: str, font_size: int) -> dict:
    """A category axis that shows every label (abbreviated past LABEL_CHARS characters;
    hover gives the full text): Plotly would otherwise drop every other one."""
    axis = {"title": {"text": title, "font": {"size": font_size}}, "type": "category",
            "tickfont": {"size": font_size}, "automargin": True}
    if len(names) <= ALL_LABELS_UP_TO:
        axis |= {"tickmode": "array", "tickvals": names,
                 "ticktext": [_abbreviate(x) for x in names]}
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


def _line_px(font_size: int) -> float:
    return 1.4 * font_size


def _left_px(font_size: int, label_chars: int, title: bool) -> int:
    """A y axis's tick labels and (rotated) title, left of the plot."""
    return int(LABEL_EM * font_size * label_chars + 8
               + (_line_px(font_size) + 4 if title else 0)) + 1


def _bottom_px(font_size: int, title: bool, upright_chars: int = 0) -> int:
    """An x axis's tick labels (level, or turned upright with ``upright_chars``) and its
    title, below the plot."""
    labels = CHAR_EM * font_size * upright_chars if upright_chars else _line_px(font_size)
    return int(labels + 10 + (_line_px(font_size) + 4 if title else 0)) + 1


def _upright_chars(labels: list[str], font_size: int) -> int:
    """The longest of ``labels`` when Plotly will turn them upright (they do not fit side
    by side across a figure of about FIGURE_PX), else 0."""
    longest = _longest_label(labels)
    return longest if len(labels) * CHAR_EM * font_size * (longest + 1) > FIGURE_PX else 0


def _colourbar_px(font_size: int, label_chars: int, thickness: int = 12) -> int:
    """A colour bar right of the plot, with tick labels of ``label_chars``."""
    return int(COLOURBAR_FIXED_PX + thickness - 12 + CHAR_EM * font_size * label_chars) + 1


def _tick_chars(values, log: bool = False) -> int:
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


def _colourbar_chars(colour: dict) -> int:
    """The longest tick label of a colour bar from ``cmin``/``zmin`` to its maximum."""
    return _tick_chars([colour.get("cmin", colour.get("zmin", 0.0)),
                        colour.get("cmax", colour.get("zmax", 1.0))])


def matrix_heatmap(
    m,
    row_labels,
    col_labels,
    *,
    title: str,
    kind: str = "weights",
    decimals: int = 3,
    x_title: str = "key",
    y_title: str = "query",
    height: int | None = None,
    font_size: int = 14,
    compact: bool = False,
) -> go.Figure:
    """A labelled heatmap of one matrix.

    Parameters
    ----------
    m : array_like (rows, cols)
        May contain ``-inf`` (masked scores), drawn as grey cells labelled "−∞", and
        NaN (not computed yet), drawn as blank cells.
    row_labels, col_labels : sequence of str
    kind : {"weights", "scores", "values", "mask"}
        weights: fixed 0..1 Viridis; scores and values: diverging, centred on 0;
        mask: a boolean matrix, "✓" (may attend) on teal, "✗" (masked) on grey.
    decimals : int
        Digits printed in the cells and on hover.
    compact : bool
        For small multiples: no colour bar and no numbers in the cells (hover still
        shows them), so that several fit side by side.
    """
    m = np.asarray(m, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"matrix_heatmap needs a 2-D matrix; got shape {m.shape}")
    shown, block = pool_matrix(m)
    row_names = unique_labels(_pool_labels(row_labels, block))
    rows = [plotly_safe(x) for x in row_names]
    cols = [plotly_safe(x) for x in unique_labels(_pool_labels(col_labels, block))]
    masked = np.isneginf(shown)
    # Large matrices carry no text array, which would outweigh the rest of the figure on
    # the wire; their hover reads the value from z instead.
    has_text = max(shown.shape) <= TEXT_CELLS
    small = has_text and not compact  # numbers printed in the cells
    text = _cell_text(shown, kind, decimals) if has_text else None
    value = "%{text}" if has_text else f"%{{z:.{decimals}f}}"
    cell_font = _cell_font(font_size, shown.shape, row_names, text if small else None)
    if small and font_size >= PRESENTER_MIN_FONT and cell_font < PRESENTER_MIN_FONT:
        small = False  # on a projector: no number rather than a tiny one (hover has it)
    traces = [
        dict(
            type="heatmap",
            # float32 halves the bytes on the wire; clip first so huge values stay finite.
            z=np.clip(np.where(masked, np.nan, shown), -1e38, 1e38).astype(np.float32),
            x=cols,
            y=rows,
            text=text,
            texttemplate="%{text}" if small else None,
            textfont={"size": cell_font, **({"color": "#ffffff"} if kind == "mask" else {})},
            hovertemplate=f"{y_title} %{{y}}<br>{x_title} %{{x}}<br>value {value}<extra></extra>",
            colorbar={"thickness": 12, "tickfont": {"size": font_size}},
            xgap=1 if small else 0,
            ygap=1 if small else 0,
            **_colour_settings(shown, kind, compact),
        )
    ]
    if masked.any():
        traces.append(_masked_layer(masked, cols, rows, small, font_size))
    if block > 1:
        title += _pooling_note(block)
    layout = _heatmap_layout(title, x_title, y_title, font_size, rows, cols, height,
                             title_lines=2 if block > 1 else 1)
    if traces[0].get("showscale", True):
        layout["margin"]["r"] = _colourbar_px(font_size, _colourbar_chars(traces[0]))
    return figure(traces, layout)


def _cell_text(shown: np.ndarray, kind: str, decimals: int) -> list[list[str]]:
    """The text of each cell: its number, "−∞" when masked, blank when NaN; for a mask,
    "✓" (may attend) or "✗"."""
    if kind == "mask":
        return [["✓" if x >= 0.5 else "✗" for x in row] for row in shown]
    return [["" if np.isnan(x) else cell_number(x, decimals) for x in row] for row in shown]


def _cell_font(font_size: int, shape: tuple[int, int], row_names: list[str],
               printed: list[list[str]] | None) -> int:
    """Font size of the cell text: a little smaller past 8 cells a side and, when numbers
    are ``printed`` in the cells, small enough for the longest one to fit its cell."""
    cell_font = font_size if max(shape) <= 8 else font_size - 2
    if printed is None:
        return cell_font
    # Long numbers in many columns get a smaller font: 6 columns of "-3.190000" at 6
    # decimals ran into each other, and presenter mode's larger type overflowed the
    # masks lesson's cells.
    return min(cell_font, fitting_cell_font(
        font_size, max((len(r) for r in row_names), default=1), shape[1],
        max((len(t) for row in printed for t in row), default=1)))


def _colour_settings(shown: np.ndarray, kind: str, compact: bool) -> dict:
    """Colour scale, range and colour bar of a heatmap of ``kind``.

    weights: Viridis on a fixed 0..1; scores and values: diverging scales centred on 0
    over ± the largest finite magnitude; mask: grey (masked) and teal (may attend).
    Compact figures have no colour bar.
    """
    if kind == "mask":
        colour = {"colorscale": [[0, "#d0d0d0"], [1, "#21918c"]], "zmin": 0.0, "zmax": 1.0,
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


def _masked_layer(masked: np.ndarray, cols: list[str], rows: list[str], small: bool,
                  font_size: int) -> dict:
    """Masked cells: a grey layer under the heatmap's gaps and NaNs ("−∞" on small maps)."""
    return dict(
        type="heatmap",
        z=np.where(masked, 1.0, np.nan).astype(np.float32),
        x=cols,
        y=rows,
        colorscale=[[0, "#d0d0d0"], [1, "#d0d0d0"]],
        showscale=False,
        hoverinfo="skip",
        text=[["−∞" if cell else "" for cell in row] for row in masked] if small else None,
        texttemplate="%{text}" if small else None,
        textfont={"size": font_size, "color": "#333"},
        xgap=1,
        ygap=1,
    )


def _heatmap_layout(title: str, x_title: str, y_title: str, font_size: int, rows: list[str],
                    cols: list[str], height: int | None, title_lines: int = 1) -> dict:
    """Title, category axes showing every label (the first row on top) and a height that
    grows with the rows up to 14 of them, unless ``height`` is given."""
    # The layout goes to the constructor: update_layout costs about 30 ms a figure.
    x_axis = _category_axis(cols, x_title, font_size)
    x_axis["side"] = "bottom"
    y_axis = _category_axis(rows, y_title, font_size)
    y_axis |= _top_to_bottom(len(rows))
    top = 20 + int(1.5 * (font_size + 2) * title_lines)
    return {
        "title": {"text": title, "font": {"size": font_size + 2}},
        "xaxis": x_axis,
        "yaxis": y_axis,
        "margin": {"l": _left_px(font_size, _longest_label(rows), bool(y_title)), "r": 10,
                   "t": top,
                   "b": _bottom_px(font_size, bool(x_title), _upright_chars(cols, font_size))},
        "height": height or (top + 70 + 3 * font_size * min(len(rows), 14)),
        "font": {"size": font_size},
    }


GRID_WIDTH_PX = 1150  # the width a full-width figure gets at 1280 px (sidebar closed)
GRID_GAP_PX = 24


def heatmap_grid(mats, row_labels, col_labels, titles, *, kind: str = "weights",
                 decimals: int = 2, font_size: int = 14, columns: int = 4,
                 height: int | None = None, x_title: str = "key", y_title: str = "query",
                 title: str | None = None) -> go.Figure:
    """Small multiples: one heatmap per matrix in one figure, with ONE shared colour bar.

    Every panel shows all its column labels (abbreviated past LABEL_CHARS characters,
    full text on hover, rotated when they do not fit side by side); the row labels are
    shown on the first panel of each row of panels, as all panels share them. Cells are
    at least about 1.4 × ``font_size`` wide and the figure's height is computed from the
    cell count, so that cells stay readable: fewer panels go side by side (at most
    ``columns``) when they would not fit. Numbers are printed in the cells only when
    they fit at ``font_size`` (✓/✗ for masks); hover always shows them. Matrices larger
    than MAX_CELLS a side are average-pooled, the title says so and the labels become
    position ranges.

    Parameters
    ----------
    mats : sequence of array_like, all of one shape (rows, cols)
    titles : sequence of str, one per matrix
    kind : {"weights", "scores", "values", "mask"}, as for ``matrix_heatmap``; scores and
        values share one diverging scale over the largest magnitude of all panels.
    """
    mats = [np.asarray(m, dtype=np.float64) for m in mats]
    if not mats or any(m.ndim != 2 or m.shape != mats[0].shape for m in mats):
        raise ValueError("heatmap_grid needs one or more 2-D matrices of one shape; got "
                         f"shapes {[m.shape for m in mats]}")
    if len(titles) != len(mats):
        raise ValueError(f"heatmap_grid needs one title per matrix; got {len(titles)} titles "
                         f"for {len(mats)} matrices")
    pooled = [pool_matrix(m) for m in mats]
    block = pooled[0][1]
    shown = [p for p, _ in pooled]
    n_rows, n_cols = shown[0].shape
    rows = [plotly_safe(x) for x in unique_labels(_pool_labels(row_labels, block))]
    cols = [plotly_safe(x) for x in unique_labels(_pool_labels(col_labels, block))]
    # Cell size: room for the printed number (or ✓/✗) at the cell font, else a square
    # about one and a half letters high.
    text_chars = 1 if kind == "mask" else decimals + 3
    cell_font = (font_size if font_size >= PRESENTER_MIN_FONT
                 else max(font_size - 2, MIN_CELL_FONT))
    printed = max(n_rows, n_cols) <= (16 if kind == "mask" else 8)
    cell = max(1.6 * font_size, CHAR_EM * cell_font * text_chars + 8 if printed else 0)
    longest_row, longest_col = _longest_label(rows), _longest_label(cols)
    label_px = CHAR_EM * font_size * longest_row + 40  # with room for the y title
    colour = _grid_colours(shown, kind, font_size)
    right_px = 10 if kind == "mask" else _colourbar_px(
        font_size, _colourbar_chars(colour), colour["colorbar"]["thickness"])
    plot_w = GRID_WIDTH_PX - 10 - right_px  # the paper: the figure less its side margins
    panel_w = n_cols * cell
    fit = int((plot_w - label_px + GRID_GAP_PX) // (panel_w + GRID_GAP_PX))
    per_row = max(1, min(columns, len(mats), fit))
    grid_rows = -(-len(mats) // per_row)
    # Column labels: side by side if they fit under their cells, else turned upright.
    upright = CHAR_EM * font_size * longest_col > cell
    x_labels_px = (CHAR_EM * font_size * longest_col + 12) if upright else 1.6 * font_size
    title_px = 1.6 * (font_size + 2)
    band = title_px + n_rows * cell + x_labels_px + 1.6 * font_size + GRID_GAP_PX
    top = 10 + (1.6 * (font_size + 2) * (2 if block > 1 else 1) if title or block > 1 else 0)
    total = int(height or (top + grid_rows * band + 10))
    # Domains in paper fractions: panels left to right, rows top to bottom.
    x0 = label_px / plot_w
    width_frac = (1 - x0 - (per_row - 1) * GRID_GAP_PX / plot_w) / per_row
    width_frac = min(width_frac, panel_w / plot_w)
    plot_h = total - top - 10
    scale = plot_h / (grid_rows * band)
    traces, layout = [], {}
    annotations = []
    for k, (m, name) in enumerate(zip(shown, titles, strict=True)):
        r, c = divmod(k, per_row)
        axis = "" if k == 0 else str(k + 1)
        left = x0 + c * (width_frac + GRID_GAP_PX / plot_w)
        band_top = 1 - (r * band * scale) / plot_h
        y_high = band_top - title_px * scale / plot_h
        y_low = y_high - n_rows * cell * scale / plot_h
        masked = np.isneginf(m)
        text = _cell_text(m, kind, decimals) if printed else None
        traces.append(dict(
            type="heatmap", xaxis=f"x{axis}", yaxis=f"y{axis}", coloraxis="coloraxis",
            z=np.clip(np.where(masked, np.nan, m), -1e38, 1e38).astype(np.float32),
            x=cols, y=rows, text=text, texttemplate="%{text}" if printed else None,
            textfont={"size": cell_font, **({"color": "#ffffff"} if kind == "mask" else {})},
            hovertemplate=f"{plotly_safe(name)}<br>{y_title} %{{y}}<br>{x_title} %{{x}}<br>"
                          + ("value %{text}" if printed else f"value %{{z:.{decimals}f}}")
                          + "<extra></extra>",
            xgap=1, ygap=1,
        ))
        if masked.any():
            traces.append(_masked_layer(masked, cols, rows, printed, cell_font)
                          | {"xaxis": f"x{axis}", "yaxis": f"y{axis}"})
        x_axis = _category_axis(cols, x_title, font_size)
        x_axis |= {"domain": [left, min(left + width_frac, 1.0)], "anchor": f"y{axis}",
                   "tickangle": -90 if upright else 0, "automargin": False}
        y_axis = _category_axis(rows, y_title if c == 0 else "", font_size)
        y_axis |= {"domain": [max(y_low, 0.0), y_high], "anchor": f"x{axis}",
                   **_top_to_bottom(len(rows)), "automargin": False,
                   "showticklabels": c == 0}
        layout[f"xaxis{axis}"], layout[f"yaxis{axis}"] = x_axis, y_axis
        annotations.append({"text": plotly_safe(name), "showarrow": False, "xref": "paper",
                            "yref": "paper", "x": left + width_frac / 2, "y": y_high,
                            "xanchor": "center", "yanchor": "bottom",
                            "font": {"size": font_size + 2}})
    heading = (title or "") + (_pooling_note(block) if block > 1 else "")
    layout |= {
        "coloraxis": colour,
        "annotations": annotations,
        "margin": {"l": 10, "r": right_px, "t": int(top), "b": 10},
        "height": total,
        "font": {"size": font_size},
    }
    if heading:
        layout["title"] = {"text": heading, "font": {"size": font_size + 2}}
    return figure(traces, layout)


def _grid_colours(shown: list[np.ndarray], kind: str, font_size: int) -> dict:
    """The one colour axis of a grid: its scale, range and colour bar."""
    if kind == "mask":
        return {"colorscale": [[0, "#d0d0d0"], [1, "#21918c"]], "cmin": 0.0, "cmax": 1.0,
                "showscale": False}
    bar = {"thickness": 14, "len": 1.0, "tickfont": {"size": font_size}}
    if kind == "weights":
        return {"colorscale": WEIGHTS_SCALE, "cmin": 0.0, "cmax": 1.0, "colorbar": bar}
    finite = np.concatenate([m[np.isfinite(m)] for m in shown])
    span = float(np.max(np.abs(finite))) if finite.size else 1.0
    span = span if span > 0 else 1.0
    return {"colorscale": SCORES_SCALE if kind == "scores" else VALUES_SCALE,
            "cmin": -span, "cmax": span, "colorbar": bar}


def _log_ticks(values) -> dict:
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


def _legend_rows(names: list[str], font_size: int, width_px: int = 480) -> int:
    """Rows a horizontal legend of ``names`` takes in about ``width_px`` (an estimate on
    the narrow side, so that the space kept for it is enough)."""
    rows, used = 1, 0.0
    for name in names:
        item = 40 + CHAR_EM * font_size * len(name)
        if used and used + item > width_px:
            rows, used = rows + 1, 0.0
        used += item
    return rows


def _axes_layout(title: str, x_title: str, y_title: str, font_size: int, height: int,
                 log_x: bool = False, log_y: bool = False, legend: list[str] = (),
                 x_values=(), y_values=()) -> dict:
    """Axes with titles, and the legend (if any) in a band of its own between the title
    and the plot, so that it never sits on an axis title. ``y_values``: what the y axis
    spans, for the room its labels need (TICK_CHARS when not given)."""
    line = 1.5 * font_size
    title_px = 12 + 1.5 * (font_size + 2)
    legend_px = _legend_rows(list(legend), font_size) * line + 8 if len(legend) > 1 else 0
    top = int(title_px + legend_px + 14)
    layout = {
        "title": {"text": title, "font": {"size": font_size + 2}, "yref": "container",
                  "y": 1.0, "yanchor": "top", "pad": {"t": 8}},
        "xaxis": {"title": {"text": x_title, "font": {"size": font_size}},
                  "type": "log" if log_x else "linear", "tickfont": {"size": font_size},
                  "automargin": True, **(_log_ticks(x_values) if log_x else {})},
        "yaxis": {"title": {"text": y_title, "font": {"size": font_size}},
                  "type": "log" if log_y else "linear", "tickfont": {"size": font_size},
                  "automargin": True, **(_log_ticks(y_values) if log_y else {})},
        "margin": {"l": _left_px(font_size, _tick_chars(y_values, log_y), bool(y_title)),
                   "r": 10, "t": top,
                   "b": _bottom_px(font_size, bool(x_title))},
        "height": height + (top - 50),
        "font": {"size": font_size},
        "showlegend": len(legend) > 1,
    }
    if len(legend) > 1:
        layout["legend"] = {"orientation": "h", "yref": "container", "y": 1 - title_px / (
            height + top - 50), "yanchor": "top", "x": 0, "xanchor": "left",
            "font": {"size": font_size}}
    return layout


def line_chart(x, series: dict, *, title: str, x_title: str, y_title: str,
               log_x: bool = False, log_y: bool = False, dashed: tuple = (),
               font_size: int = 14, height: int = 360) -> go.Figure:
    """Lines of ``series`` (name -> y values) against ``x``; names in ``dashed`` are
    reference lines (theory), drawn dashed."""
    x = np.asarray(x, dtype=np.float64)
    traces = []
    for n, (name, y) in enumerate(series.items()):
        ref = name in dashed
        traces.append(dict(
            type="scatter", x=x, y=np.asarray(y, dtype=np.float64), name=plotly_safe(name),
            mode="lines" if ref else "lines+markers",
            line={"color": "#555555" if ref else SERIES_COLOURS[n % len(SERIES_COLOURS)],
                  "dash": "dash" if ref else "solid", "width": 2},
            hovertemplate=f"{plotly_safe(name)}<br>{x_title} %{{x:.4g}}<br>"
                          f"{y_title} %{{y:.4g}}<extra></extra>",
        ))
    ys = [np.asarray(y, dtype=np.float64) for y in series.values()]
    return figure(traces, _axes_layout(title, x_title, y_title, font_size, height, log_x,
                                       log_y, legend=[str(k) for k in series], x_values=x,
                                       y_values=np.concatenate(ys) if ys else ()))


def bar_chart(labels, values, *, title: str, x_title: str, y_title: str,
              y_range: tuple | None = None, colour: str = SERIES_COLOURS[0],
              decimals: int = 3, font_size: int = 14, height: int = 320) -> go.Figure:
    """Bars of ``values`` over categorical ``labels``, the value printed on small charts."""
    values = np.asarray(values, dtype=np.float64)
    labels = [plotly_safe(x) for x in unique_labels(labels)]
    show_text = len(labels) <= 8
    bar = dict(
        type="bar", x=labels, y=values, marker={"color": colour},
        text=[f"{v:.{decimals}f}" for v in values] if show_text else None,
        textposition="outside" if show_text else None,
        textfont={"size": font_size} if show_text else None,
        hovertemplate=f"{x_title} %{{x}}<br>{y_title} %{{y:.{decimals}f}}<extra></extra>",
    )
    layout = _axes_layout(title, x_title, y_title, font_size, height,
                          y_values=[0.0, *(y_range or ()), *values])
    layout["xaxis"] |= {"type": "category"}
    layout["margin"]["b"] = _bottom_px(font_size, bool(x_title),
                                       _upright_chars(labels, font_size))
    if len(labels) <= ALL_LABELS_UP_TO:
        layout["xaxis"] |= {"tickmode": "array", "tickvals": labels,
                            "ticktext": [_abbreviate(x) for x in labels]}
    if y_range is not None:
        layout["yaxis"]["range"] = list(y_range)
    return figure([bar], layout)


def histogram(samples, *, title: str, x_title: str, bins: int = 40, reference_pdf=None,
              colour: str = SERIES_COLOURS[0], font_size: int = 14,
              height: int = 320) -> go.Figure:
    """A density histogram computed here (only the bins go on the wire), with an
    optional reference density ``reference_pdf(x)`` drawn as a dashed line."""
    samples = np.asarray(samples, dtype=np.float64)
    density, edges = np.histogram(samples, bins=bins, density=True)
    centres = (edges[:-1] + edges[1:]) / 2
    traces = [dict(type="bar", x=centres, y=density, width=np.diff(edges), name="samples",
                   marker={"color": colour, "line": {"width": 0}},
                   hovertemplate="%{x:.3g}: density %{y:.3g}<extra></extra>")]
    if reference_pdf is not None:
        xs = np.linspace(edges[0], edges[-1], 200)
        traces.append(dict(type="scatter", x=xs, y=reference_pdf(xs), name="theory",
                           mode="lines", line={"color": "#222222", "dash": "dash", "width": 2}))
    layout = _axes_layout(title, x_title, "density", font_size, height,
                          legend=["samples", "theory"] if reference_pdf is not None else [],
                          y_values=np.concatenate([[0.0], density, *(
                              [traces[1]["y"]] if reference_pdf is not None else [])]))
    layout["bargap"] = 0
    return figure(traces, layout)


def head_thumbnails(a, labels, *, font_size: int = 14, max_cells: int = 16) -> go.Figure:
    """A model view: every head's weights (L, H, T, T) as a thumbnail, a row per layer and a
    column per head, with one colour bar (0..1) and no tick labels (hover names the cell).

    For overviews too large for :func:`heatmap_grid`'s labelled panels (72 heads of
    MiniLM); each thumbnail is average-pooled to at most ``max_cells`` a side.
    """
    a = np.asarray(a, dtype=np.float64)
    n_layers, n_heads = a.shape[:2]
    gap, traces = 0.006, []
    bare = {"type": "category", "showticklabels": False, "ticks": "", "showgrid": False,
            "zeroline": False, "showline": False}
    layout = {"height": 62 * n_layers + 60,
              "margin": {"l": 50, "r": _colourbar_px(font_size, len("weight")), "t": 40, "b": 10},
              "font": {"size": font_size}, "annotations": [],
              "coloraxis": {"colorscale": WEIGHTS_SCALE, "cmin": 0.0, "cmax": 1.0,
                            "colorbar": {"thickness": 12,
                                         "title": {"text": "weight", "font": {"size": font_size}},
                                         "tickfont": {"size": font_size}}}}
    for r in range(n_layers):
        for c in range(n_heads):
            n = r * n_heads + c + 1
            n = "" if n == 1 else n  # plotly names the first axes "x" and "y"
            shown, block = pool_matrix(a[r, c], max_cells)
            names = unique_labels(labels[::block]) if block > 1 else unique_labels(labels)
            names = [plotly_safe(x) for x in names]
            traces.append(dict(
                type="heatmap", z=shown.astype(np.float32), x=names, y=names,
                xaxis=f"x{n}", yaxis=f"y{n}", coloraxis="coloraxis",
                hovertemplate=f"layer {r + 1}, head {c + 1}<br>query %{{y}}<br>key %{{x}}<br>"
                              "weight %{z:.3f}<extra></extra>"))
            x0, y1 = c / n_heads, 1 - r / n_layers
            layout[f"xaxis{n}"] = {"domain": [x0 + gap, x0 + 1 / n_heads - gap],
                                   "anchor": f"y{n}", **bare}
            layout[f"yaxis{n}"] = {"domain": [y1 - 1 / n_layers + 2 * gap, y1 - 2 * gap],
                                   "anchor": f"x{n}", **_top_to_bottom(len(names)), **bare}
    for c in range(n_heads):
        layout["annotations"].append({"text": f"H{c + 1}", "x": (c + 0.5) / n_heads, "y": 1.0,
                                      "xref": "paper", "yref": "paper", "yanchor": "bottom",
                                      "showarrow": False})
    for r in range(n_layers):
        layout["annotations"].append({"text": f"L{r + 1}", "x": 0, "y": 1 - (r + 0.5) / n_layers,
                                      "xref": "paper", "yref": "paper", "xanchor": "right",
                                      "showarrow": False})
    return figure(traces, layout)
