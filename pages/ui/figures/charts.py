"""Line charts, bar charts and histograms, with room planned for titles and legends."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .. import figures as package  # builders call package.figure (see __init__)
from ..labels import plotly_safe, unique_labels
from ..numbers import number_text
from .axes import (
    ALL_LABELS_UP_TO,
    CHAR_EM,
    abbreviate,
    bottom_px,
    left_px,
    log_ticks,
    tick_chars,
    upright_chars,
)
from .colours import (
    REFERENCE_GREY,
    SERIES_COLOURS,
    SERIES_DASHES,
    SERIES_MARKERS,
    THEORY_BLACK,
)


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
                  "automargin": True, **(log_ticks(x_values) if log_x else {})},
        "yaxis": {"title": {"text": y_title, "font": {"size": font_size}},
                  "type": "log" if log_y else "linear", "tickfont": {"size": font_size},
                  "automargin": True, **(log_ticks(y_values) if log_y else {})},
        "margin": {"l": left_px(font_size, tick_chars(y_values, log_y), bool(y_title)),
                   "r": 10, "t": top,
                   "b": bottom_px(font_size, bool(x_title))},
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
    reference lines (theory), drawn dashed in grey without markers. Each other series has
    its own colour, line style and marker, so that no series is told apart by colour alone."""
    x = np.asarray(x, dtype=np.float64)
    traces = []
    for n, (name, y) in enumerate(series.items()):
        ref = name in dashed
        style = n % len(SERIES_COLOURS)
        traces.append(dict(
            type="scatter", x=x, y=np.asarray(y, dtype=np.float64), name=plotly_safe(name),
            mode="lines" if ref else "lines+markers",
            line={"color": REFERENCE_GREY if ref else SERIES_COLOURS[style],
                  "dash": "dash" if ref else SERIES_DASHES[style], "width": 2},
            marker=None if ref else {"symbol": SERIES_MARKERS[style], "size": 7},
            hovertemplate=f"{plotly_safe(name)}<br>{x_title} %{{x:.4g}}<br>"
                          f"{y_title} %{{y:.4g}}<extra></extra>",
        ))
    ys = [np.asarray(y, dtype=np.float64) for y in series.values()]
    return package.figure(traces, _axes_layout(title, x_title, y_title, font_size, height, log_x,
                                       log_y, legend=[str(k) for k in series], x_values=x,
                                       y_values=np.concatenate(ys) if ys else ()))


def bar_chart(labels, values, *, title: str, x_title: str, y_title: str,
              y_range: tuple | None = None, colour: str = SERIES_COLOURS[0],
              decimals: int = 3, font_size: int = 14, height: int = 320) -> go.Figure:
    """Bars of ``values`` over categorical ``labels``, the value printed on small charts."""
    values = np.asarray(values, dtype=np.float64)
    labels = [plotly_safe(x) for x in unique_labels(labels)]
    show_text = len(labels) <= 8
    # number_text, not a fixed format: a bar of 1.4e-4 reads 1.400×10⁻⁴, never "0.000".
    said = [number_text(v, decimals) for v in values]
    bar = dict(
        type="bar", x=labels, y=values, marker={"color": colour},
        text=said if show_text else None,
        textposition="outside" if show_text else None,
        textfont={"size": font_size} if show_text else None,
        customdata=said,
        hovertemplate=f"{x_title} %{{x}}<br>{y_title} %{{customdata}}<extra></extra>",
    )
    layout = _axes_layout(title, x_title, y_title, font_size, height,
                          y_values=[0.0, *(y_range or ()), *values])
    layout["xaxis"] |= {"type": "category"}
    layout["margin"]["b"] = bottom_px(font_size, bool(x_title),
                                       upright_chars(labels, font_size))
    if len(labels) <= ALL_LABELS_UP_TO:
        layout["xaxis"] |= {"tickmode": "array", "tickvals": labels,
                            "ticktext": [abbreviate(x) for x in labels]}
    if y_range is not None:
        layout["yaxis"]["range"] = list(y_range)
    return package.figure([bar], layout)


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
                           mode="lines", line={"color": THEORY_BLACK, "dash": "dash", "width": 2}))
    layout = _axes_layout(title, x_title, "density", font_size, height,
                          legend=["samples", "theory"] if reference_pdf is not None else [],
                          y_values=np.concatenate([[0.0], density, *(
                              [traces[1]["y"]] if reference_pdf is not None else [])]))
    layout["bargap"] = 0
    return package.figure(traces, layout)


def scatter_chart(groups: dict, *, title: str, x_title: str, y_title: str,
                  font_size: int = 14, height: int = 380) -> go.Figure:
    """Points, one group per name: ``groups`` maps a name to (x, y, labels), each point
    labelled on hover (a head's name). Each group has its own colour and marker, so that
    no group is told apart by colour alone."""
    traces, xs, ys = [], [], []
    for n, (name, (x, y, labels)) in enumerate(groups.items()):
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        style = n % len(SERIES_COLOURS)
        traces.append(dict(
            type="scatter", x=x, y=y, name=plotly_safe(name), mode="markers",
            marker={"color": SERIES_COLOURS[style], "symbol": SERIES_MARKERS[style],
                    "size": 9 if n else 7},
            text=[plotly_safe(label) for label in labels],
            hovertemplate=f"%{{text}}<br>{x_title} %{{x:.3f}}<br>{y_title} %{{y:.3f}}"
                          "<extra></extra>",
        ))
        xs.append(x)
        ys.append(y)
    return package.figure(traces, _axes_layout(
        title, x_title, y_title, font_size, height, legend=[str(k) for k in groups],
        x_values=np.concatenate(xs) if xs else (), y_values=np.concatenate(ys) if ys else ()))
