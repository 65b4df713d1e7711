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
import plotly.graph_objects as go

from .labels import plotly_safe, unique_labels

MAX_CELLS = 64  # per side, on the wire
TEXT_CELLS = 12  # numbers printed in cells up to this size

WEIGHTS_SCALE = "Viridis"
SCORES_SCALE = "RdBu_r"
VALUES_SCALE = "PuOr_r"


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
) -> go.Figure:
    """A labelled heatmap of one matrix.

    Parameters
    ----------
    m : array_like (rows, cols)
        May contain ``-inf`` (masked scores), drawn as grey cells labelled "−∞".
    row_labels, col_labels : sequence of str
    kind : {"weights", "scores", "values"}
        weights: fixed 0..1 Viridis; scores and values: diverging, centred on 0.
    decimals : int
        Digits printed in the cells and on hover.
    """
    m = np.asarray(m, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"matrix_heatmap needs a 2-D matrix; got shape {m.shape}")
    shown, block = pool_matrix(m)
    rows = [plotly_safe(x) for x in unique_labels(_pool_labels(row_labels, block))]
    cols = [plotly_safe(x) for x in unique_labels(_pool_labels(col_labels, block))]
    masked = np.isneginf(shown)
    z = np.where(masked, np.nan, shown).astype(np.float32)
    fmt = f"{{:.{decimals}f}}"
    text = [["−∞" if masked[i, j] else fmt.format(shown[i, j]) for j in range(shown.shape[1])]
            for i in range(shown.shape[0])]
    colour: dict = {}
    if kind == "weights":
        colour = {"colorscale": WEIGHTS_SCALE, "zmin": 0.0, "zmax": 1.0}
    else:
        finite = shown[np.isfinite(shown)]
        span = float(np.max(np.abs(finite))) if finite.size else 1.0
        span = span if span > 0 else 1.0
        scale = SCORES_SCALE if kind == "scores" else VALUES_SCALE
        colour = {"colorscale": scale, "zmin": -span, "zmax": span, "zmid": 0.0}
    small = max(shown.shape) <= TEXT_CELLS
    traces = [
        go.Heatmap(
            z=z,
            x=cols,
            y=rows,
            text=text,
            texttemplate="%{text}" if small else None,
            textfont={"size": font_size},
            hovertemplate=f"{y_title} %{{y}}<br>{x_title} %{{x}}<br>value %{{text}}<extra></extra>",
            colorbar={"thickness": 12},
            xgap=1,
            ygap=1,
            **colour,
        )
    ]
    if masked.any():
        # Masked cells: a grey layer under the heatmap's gaps and NaNs.
        traces.append(
            go.Heatmap(
                z=np.where(masked, 1.0, np.nan).astype(np.float32),
                x=cols,
                y=rows,
                colorscale=[[0, "#d0d0d0"], [1, "#d0d0d0"]],
                showscale=False,
                hoverinfo="skip",
                text=text,
                texttemplate="%{text}" if small else None,
                textfont={"size": font_size, "color": "#333"},
                xgap=1,
                ygap=1,
            )
        )
    if block > 1:
        title += f" (pooled {block}×{block} for display)"
    # The layout goes to the constructor: update_layout costs about 30 ms a figure.
    layout = {
        "title": {"text": title, "font": {"size": font_size + 2}},
        "xaxis": {"title": {"text": x_title}, "side": "bottom", "type": "category",
                  "tickfont": {"size": font_size}},
        "yaxis": {"title": {"text": y_title}, "autorange": "reversed", "type": "category",
                  "tickfont": {"size": font_size}},
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "height": height or (120 + 3 * font_size * min(len(rows), 14)),
        "font": {"size": font_size},
    }
    return go.Figure(data=traces, layout=layout)
