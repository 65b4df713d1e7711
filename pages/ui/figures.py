"""Figure builders: pure functions from arrays to Plotly figures (no Streamlit).

One convention everywhere: rows are queries, columns are keys, token labels on both
axes; weights on a fixed 0..1 sequential colour-blind-safe scale (Viridis); scores
on a diverging scale centred on 0. Small matrices print their numbers in the cells;
every cell shows its number on hover. Larger matrices are average-pooled to at most
``MAX_CELLS`` per side so that a figure stays small on the wire.
"""

from __future__ import annotations

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
from plotly.colors import get_colorscale

from .labels import plotly_safe, unique_labels

MAX_CELLS = 64  # per side, on the wire
TEXT_CELLS = 12  # numbers printed in cells up to this size
# Cell numbers must fit their cells. Heatmaps with numbers sit in half-page columns,
# about FIGURE_PX wide in normal and presenter mode alike; the plot gets what the row
# labels (CHAR_EM em per character), the colour bar and the margins leave.
FIGURE_PX = 400
COLOURBAR_PX = 70
MARGINS_PX = 20
CHAR_EM = 0.6
MIN_CELL_FONT = 9


def fitting_cell_font(font_size: int, longest_row_label: int, columns: int,
                      longest_text: int, colourbar: bool = True) -> int:
    """The largest cell font (px), up to ``font_size``, at which ``columns`` cells of
    ``longest_text`` characters fit side by side; never below MIN_CELL_FONT."""
    plot = (FIGURE_PX - CHAR_EM * font_size * longest_row_label
            - (COLOURBAR_PX if colourbar else 0) - MARGINS_PX)
    fit = int(plot / (CHAR_EM * columns * max(longest_text, 1)))
    return max(min(font_size, fit), MIN_CELL_FONT)

# Colour scales as explicit stops: plotly.js knows "Viridis" but not "RdBu_r" or "PuOr_r"
# (reversed scales are a feature of the Python library's validation, skipped here).
WEIGHTS_SCALE = get_colorscale("Viridis")
SCORES_SCALE = get_colorscale("RdBu_r")
VALUES_SCALE = get_colorscale("PuOr_r")


def figure(traces: list[dict], layout: dict) -> go.Figure:
    """A figure from plain trace dicts (each with its ``type``), without validation.

    Plotly checks every property of every trace as it builds a figure, about 5 ms a
    heatmap, and Streamlit serialises the figure without checking again; a lesson draws
    up to 20 figures per rerun. The builders here set only properties that plotly
    accepts: ``tests/pages/test_figures.py`` builds every kind of figure both ways and
    compares the JSON. Keys set to None are left out, as plotly does.
    """
    data = [{k: v for k, v in t.items() if v is not None} for t in traces]
    return go.Figure(data=data, layout=layout, _validate=False)


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
    labels = [str(x) for x in labels]
    if block == 1:
        return labels
    return [f"{labels[i]}…" if len(labels[i:i + block]) > 1 else labels[i]
            for i in range(0, len(labels), block)]


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
            colorbar={"thickness": 12},
            xgap=1 if small else 0,
            ygap=1 if small else 0,
            **_colour_settings(shown, kind, compact),
        )
    ]
    if masked.any():
        traces.append(_masked_layer(masked, cols, rows, small, font_size))
    if block > 1:
        title += f" (pooled {block}×{block} for display)"
    return figure(traces, _heatmap_layout(title, x_title, y_title, font_size, len(rows), height))


def _cell_text(shown: np.ndarray, kind: str, decimals: int) -> list[list[str]]:
    """The text of each cell: its number, "−∞" when masked, blank when NaN; for a mask,
    "✓" (may attend) or "✗"."""
    if kind == "mask":
        return [["✓" if x >= 0.5 else "✗" for x in row] for row in shown]
    fmt = f"{{:.{decimals}f}}"
    return [["−∞" if np.isneginf(x) else "" if np.isnan(x) else fmt.format(x) for x in row]
            for row in shown]


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


def _heatmap_layout(title: str, x_title: str, y_title: str, font_size: int, n_rows: int,
                    height: int | None) -> dict:
    """Title, category axes (the first row on top) and a height that grows with the rows
    up to 14 of them, unless ``height`` is given."""
    # The layout goes to the constructor: update_layout costs about 30 ms a figure.
    return {
        "title": {"text": title, "font": {"size": font_size + 2}},
        "xaxis": {"title": {"text": x_title}, "side": "bottom", "type": "category",
                  "tickfont": {"size": font_size}},
        "yaxis": {"title": {"text": y_title}, "autorange": "reversed", "type": "category",
                  "tickfont": {"size": font_size}},
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "height": height or (120 + 3 * font_size * min(n_rows, 14)),
        "font": {"size": font_size},
    }


# Okabe-Ito colours: distinguishable with every common colour-vision deficiency.
SERIES_COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000"]


def _axes_layout(title: str, x_title: str, y_title: str, font_size: int, height: int,
                 log_x: bool = False, log_y: bool = False) -> dict:
    return {
        "title": {"text": title, "font": {"size": font_size + 2}},
        "xaxis": {"title": {"text": x_title}, "type": "log" if log_x else "linear",
                  "tickfont": {"size": font_size}},
        "yaxis": {"title": {"text": y_title}, "type": "log" if log_y else "linear",
                  "tickfont": {"size": font_size}},
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "height": height,
        "font": {"size": font_size},
        "legend": {"orientation": "h", "y": -0.25},
    }


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
    return figure(traces, _axes_layout(title, x_title, y_title, font_size, height, log_x,
                                       log_y))


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
        hovertemplate=f"{x_title} %{{x}}<br>{y_title} %{{y:.{decimals}f}}<extra></extra>",
    )
    layout = _axes_layout(title, x_title, y_title, font_size, height)
    layout["xaxis"]["type"] = "category"
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
    layout = _axes_layout(title, x_title, "density", font_size, height)
    layout["bargap"] = 0
    return figure(traces, layout)
