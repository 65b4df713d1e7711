"""Heatmaps: one matrix, small multiples sharing one colour bar, and a model view of
thumbnails. Rows are queries, columns are keys, token labels on both axes."""

from __future__ import annotations

import warnings

import numpy as np
import plotly.graph_objects as go

from .. import figures as package  # builders call package.figure (see __init__)
from ..labels import plotly_safe, unique_labels
from ..numbers import cell_number
from .axes import (
    CHAR_EM,
    FIGURE_PX,
    bottom_px,
    category_axis,
    colourbar_chars,
    colourbar_px,
    left_px,
    longest_label,
    top_to_bottom,
    upright_chars,
)
from .colours import (
    MASKED_GREY,
    WEIGHTS_SCALE,
    cell_fills,
    grid_colours,
    heatmap_colours,
    text_on,
)

MAX_CELLS = 64  # per side, on the wire
TEXT_CELLS = 12  # numbers printed in cells up to this size
MIN_CELL_FONT = 9
# Presenter mode asks for figure fonts of 18 px or more (figure_font gives 20); there, a
# number that would need a smaller font is not printed in its cell at all (hover shows
# it): fewer numbers rather than tiny ones.
PRESENTER_MIN_FONT = 18


def fitting_cell_font(font_size: int, longest_row_label: int, columns: int,
                      longest_text: int, colourbar: bool = True) -> int:
    """The largest cell font (px), up to ``font_size``, at which ``columns`` cells of
    ``longest_text`` characters fit side by side; never below MIN_CELL_FONT."""
    plot = (FIGURE_PX - left_px(font_size, longest_row_label, title=True)
            - (colourbar_px(font_size, label_chars=3) if colourbar else 10))
    fit = int(plot / (CHAR_EM * columns * max(longest_text, 1)))
    return max(min(font_size, fit), MIN_CELL_FONT)


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
    blank_below: float | None = None,
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
    blank_below : float, optional
        Cells below this value print no number (their colour and hover stay), and the
        cell font fits the numbers printed: fewer numbers, larger.
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
    printed = text
    if small and blank_below is not None:
        printed = [["" if x < blank_below else t for t, x in zip(row, values, strict=True)]
                   for row, values in zip(text, shown, strict=True)]
    cell_font = _cell_font(font_size, shown.shape, row_names, printed if small else None)
    if small and font_size >= PRESENTER_MIN_FONT and cell_font < PRESENTER_MIN_FONT:
        small = False  # on a projector: no number rather than a tiny one (hover has it)
    colour = heatmap_colours(shown, kind, compact)
    traces = [
        dict(
            type="heatmap",
            # float32 halves the bytes on the wire; clip first so huge values stay finite.
            z=np.clip(np.where(masked, np.nan, shown), -1e38, 1e38).astype(np.float32),
            x=cols,
            y=rows,
            text=text,
            hovertemplate=f"{y_title} %{{y}}<br>{x_title} %{{x}}<br>value {value}<extra></extra>",
            colorbar={"thickness": 12, "tickfont": {"size": font_size}},
            xgap=1 if small else 0,
            ygap=1 if small else 0,
            **colour,
        )
    ]
    if masked.any():
        traces.append(_masked_layer(masked, cols, rows))
    if small:
        traces.append(_text_layer(_printed(printed, masked), cell_fills(shown, colour), cols,
                                  rows, cell_font))
    if block > 1:
        title += _pooling_note(block)
    layout = _heatmap_layout(title, x_title, y_title, font_size, rows, cols, height,
                             title_lines=2 if block > 1 else 1)
    if traces[0].get("showscale", True):
        layout["margin"]["r"] = colourbar_px(font_size, colourbar_chars(traces[0]))
    return package.figure(traces, layout)


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


def _masked_layer(masked: np.ndarray, cols: list[str], rows: list[str]) -> dict:
    """Masked cells: a grey layer under the heatmap's gaps and NaNs."""
    return dict(
        type="heatmap",
        z=np.where(masked, 1.0, np.nan).astype(np.float32),
        x=cols,
        y=rows,
        colorscale=[[0, MASKED_GREY], [1, MASKED_GREY]],
        showscale=False,
        hoverinfo="skip",
        xgap=1,
        ygap=1,
    )


def _printed(text: list[list[str]], masked: np.ndarray) -> list[list[str]]:
    """The text printed in each cell: its number (or ✓/✗), "−∞" when masked."""
    return [["−∞" if m else t for t, m in zip(row, mask_row, strict=True)]
            for row, mask_row in zip(text, masked, strict=True)]


def _text_layer(text: list[list[str]], fills: np.ndarray, cols: list[str], rows: list[str],
                font_size: int) -> dict:
    """The numbers printed in the cells, each in black or white, whichever contrasts more
    with its cell's colour (WCAG's 4.5:1 at least; Plotly's own choice gave white on
    mid-Viridis cells, 3.8:1, and on the grey of masked cells, 1.5:1). Text on a scatter
    trace over the heatmap: a heatmap's text has one colour for all its cells."""
    cells = [(c, r, t, fills[i, j]) for i, (r, row) in enumerate(zip(rows, text, strict=True))
             for j, (c, t) in enumerate(zip(cols, row, strict=True)) if t]
    return dict(type="scatter", mode="text", x=[c for c, *_ in cells],
                y=[r for _, r, *_ in cells], text=[t for *_, t, _ in cells],
                textfont={"size": font_size, "color": [text_on(f) for *_, f in cells]},
                hoverinfo="skip", showlegend=False)


def _heatmap_layout(title: str, x_title: str, y_title: str, font_size: int, rows: list[str],
                    cols: list[str], height: int | None, title_lines: int = 1) -> dict:
    """Title, category axes showing every label (the first row on top) and a height that
    grows with the rows up to 14 of them, unless ``height`` is given."""
    # The layout goes to the constructor: update_layout costs about 30 ms a figure.
    x_axis = category_axis(cols, x_title, font_size)
    x_axis["side"] = "bottom"
    y_axis = category_axis(rows, y_title, font_size)
    y_axis |= top_to_bottom(len(rows))
    top = 20 + int(1.5 * (font_size + 2) * title_lines)
    return {
        "title": {"text": title, "font": {"size": font_size + 2}},
        "xaxis": x_axis,
        "yaxis": y_axis,
        "margin": {"l": left_px(font_size, longest_label(rows), bool(y_title)), "r": 10,
                   "t": top,
                   "b": bottom_px(font_size, bool(x_title), upright_chars(cols, font_size))},
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
    longest_row, longest_col = longest_label(rows), longest_label(cols)
    label_px = CHAR_EM * font_size * longest_row + 40  # with room for the y title
    colour = grid_colours(shown, kind, font_size)
    right_px = 10 if kind == "mask" else colourbar_px(
        font_size, colourbar_chars(colour), colour["colorbar"]["thickness"])
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
            name=plotly_safe(name),  # the panel's name in its data (access.figure_table)
            z=np.clip(np.where(masked, np.nan, m), -1e38, 1e38).astype(np.float32),
            x=cols, y=rows, text=text,
            hovertemplate=f"{plotly_safe(name)}<br>{y_title} %{{y}}<br>{x_title} %{{x}}<br>"
                          + ("value %{text}" if printed else f"value %{{z:.{decimals}f}}")
                          + "<extra></extra>",
            xgap=1, ygap=1,
        ))
        on_axes = {"xaxis": f"x{axis}", "yaxis": f"y{axis}"}
        if masked.any():
            traces.append(_masked_layer(masked, cols, rows) | on_axes)
        if printed:
            traces.append(_text_layer(_printed(text, masked), cell_fills(m, colour), cols, rows,
                                      cell_font) | on_axes)
        x_axis = category_axis(cols, x_title, font_size)
        x_axis |= {"domain": [left, min(left + width_frac, 1.0)], "anchor": f"y{axis}",
                   "tickangle": -90 if upright else 0, "automargin": False}
        y_axis = category_axis(rows, y_title if c == 0 else "", font_size)
        y_axis |= {"domain": [max(y_low, 0.0), y_high], "anchor": f"x{axis}",
                   **top_to_bottom(len(rows)), "automargin": False,
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
    return package.figure(traces, layout)


def head_thumbnails(a, labels, *, font_size: int = 14, max_cells: int = 16,
                    title: str = "Every head's attention weights") -> go.Figure:
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
    title_px = int(1.5 * (font_size + 2))  # the title's line, above the heads' names
    layout = {"height": 62 * n_layers + 60 + title_px,
              "title": {"text": plotly_safe(title), "font": {"size": font_size + 2}},
              "margin": {"l": 50, "r": colourbar_px(font_size, len("weight")),
                         "t": 40 + title_px, "b": 10},
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
            names = _pool_labels(labels, block) if block > 1 else unique_labels(labels)
            names = [plotly_safe(x) for x in names]
            traces.append(dict(
                type="heatmap", z=shown.astype(np.float32), x=names, y=names,
                xaxis=f"x{n}", yaxis=f"y{n}", coloraxis="coloraxis",
                name=f"layer {r + 1}, head {c + 1}",
                hovertemplate=f"layer {r + 1}, head {c + 1}<br>query %{{y}}<br>key %{{x}}<br>"
                              "weight %{z:.3f}<extra></extra>"))
            x0, y1 = c / n_heads, 1 - r / n_layers
            layout[f"xaxis{n}"] = {"domain": [x0 + gap, x0 + 1 / n_heads - gap],
                                   "anchor": f"y{n}", **bare}
            layout[f"yaxis{n}"] = {"domain": [y1 - 1 / n_layers + 2 * gap, y1 - 2 * gap],
                                   "anchor": f"x{n}", **top_to_bottom(len(names)), **bare}
    for c in range(n_heads):
        layout["annotations"].append({"text": f"H{c + 1}", "x": (c + 0.5) / n_heads, "y": 1.0,
                                      "xref": "paper", "yref": "paper", "yanchor": "bottom",
                                      "showarrow": False})
    for r in range(n_layers):
        layout["annotations"].append({"text": f"L{r + 1}", "x": 0, "y": 1 - (r + 0.5) / n_layers,
                                      "xref": "paper", "yref": "paper", "xanchor": "right",
                                      "showarrow": False})
    return package.figure(traces, layout)
