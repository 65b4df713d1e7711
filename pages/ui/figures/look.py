"""The look written into every figure, and the fast build of a figure from plain dicts."""

from __future__ import annotations

import hashlib
import pickle
import re

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from .colours import GRID_COLOUR, SERIES_COLOURS, TEXT_COLOUR

# Our own look, written into each figure: pages show figures with Streamlit's theme off
# (pages.ui.layout.show_figure). Streamlit's theme rewrites every figure's JSON in the
# browser on each draw; without it four changed heatmaps redrew in about two thirds of
# the time (headless Chromium, 2 cores). Light page, Streamlit's font and text colour.
LOOK = {"data": {"heatmap": {"xgap": 1, "ygap": 1}}, "layout": {
    "font": {"family": '"Source Sans", "Source Sans Pro", sans-serif', "color": TEXT_COLOUR},
    "paper_bgcolor": "#FFFFFF",
    "plot_bgcolor": "#FFFFFF",
    "colorway": SERIES_COLOURS,
    "title": {"x": 0, "xanchor": "left", "font": {"weight": "bold"}},
    # Hover labels dark on white: Plotly's own take the colour of the cell or line
    # hovered, with a text colour that can fall below 4.5:1 on mid-scale cells.
    "hoverlabel": {"bgcolor": "#FFFFFF", "bordercolor": TEXT_COLOUR,
                   "font": {"family": '"Source Sans", "Source Sans Pro", sans-serif',
                            "color": TEXT_COLOUR}},
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
