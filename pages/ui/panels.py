"""Several charts drawn as the panels of ONE figure, side by side.

A page whose control changes three small charts makes the browser draw three figures,
each with its own layout pass; the same charts as panels of one figure are one draw.
The panels keep the look the builders of ``pages.ui.figures`` give them: axes, ranges,
log ticks, hover.
"""

from __future__ import annotations

import plotly.graph_objects as go

from .figures import figure

PANEL_GAP = 0.07  # between panels, as a fraction of the figure's width


def side_by_side(figs: list[go.Figure], *, font_size: int = 14,
                 height: int | None = None) -> go.Figure:
    """The figures ``figs`` (each with one pair of axes) as panels of one figure.

    Each panel keeps its axes, its traces and its title (written above the panel). One
    legend at the top lists each series name once: a name shown in several panels (the
    same scaling in each) is one legend entry, and clicking it hides it everywhere.
    """
    n = len(figs)
    width = (1 - PANEL_GAP * (n - 1)) / n
    traces, layout, annotations, seen = [], {}, [], set()
    heights, legend, margins = [], False, []
    for i, fig in enumerate(figs):
        spec = fig.to_plotly_json()
        panel = spec["layout"]
        suffix = "" if i == 0 else str(i + 1)
        left = i * (width + PANEL_GAP)
        panel_legend = panel.get("showlegend", False)
        for trace in spec["data"]:
            name = trace.get("name")
            shown = panel_legend and name is not None and name not in seen
            if shown:
                seen.add(name)
            legend |= shown
            traces.append(trace | {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}",
                                   "legendgroup": name, "showlegend": shown})
        layout[f"xaxis{suffix}"] = panel["xaxis"] | {"domain": [left, left + width],
                                                     "anchor": f"y{suffix}"}
        layout[f"yaxis{suffix}"] = panel["yaxis"] | {"anchor": f"x{suffix}"}
        annotations.append({"text": panel.get("title", {}).get("text", ""), "showarrow": False,
                            "xref": "paper", "yref": "paper", "x": left, "y": 1.0,
                            "xanchor": "left", "yanchor": "bottom",
                            "font": {"size": font_size + 2, "weight": "bold"}})
        margins.append({"l": 10, "b": 10} | panel.get("margin", {}))
        heights.append(panel.get("height", 320) - margins[-1].get("t", 50))
        for key in ("bargap", "barmode"):
            if key in panel:
                layout[key] = panel[key]
    line = 1.5 * font_size
    title_px = 10 + 1.5 * (font_size + 2)
    top = int(title_px + (line + 8 if legend else 0) + 6)
    plot = height or max(heights, default=300)
    layout |= {
        "annotations": annotations,
        # Room for the first panel's y labels and the x labels under every panel, as
        # each panel planned it (figures: margins planned, not pushed by automargin).
        "margin": {"l": margins[0]["l"], "r": 10, "t": top,
                   "b": max(m["b"] for m in margins)},
        "height": plot + top,
        "font": {"size": font_size},
        "showlegend": legend,
    }
    if legend:
        layout["legend"] = {"orientation": "h", "yref": "container", "y": 1.0,
                            "yanchor": "top", "x": 0, "xanchor": "left",
                            "font": {"size": font_size}}
    return figure(traces, layout)
