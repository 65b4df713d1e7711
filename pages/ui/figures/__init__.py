"""Figure builders: pure functions from arrays to Plotly figures (no Streamlit).

One convention everywhere: rows are queries, columns are keys, token labels on both
axes; weights on a fixed 0..1 sequential colour-blind-safe scale (Viridis); scores
on a diverging scale centred on 0. Small matrices print their numbers in the cells;
every cell shows its number on hover. Larger matrices are average-pooled to at most
``MAX_CELLS`` per side so that a figure stays small on the wire.

A package by concept:

- ``colours``: the colour rules (scales, series colours, a heatmap's colour settings);
- ``look``: the look written into every figure and ``figure``, the fast build;
- ``axes``: category and log axes, and the margins planned in pixels from the labels;
- ``heatmaps``: ``matrix_heatmap``, ``heatmap_grid``, ``head_thumbnails``;
- ``charts``: ``line_chart``, ``bar_chart``, ``histogram``;
- ``access``: what a figure says without being seen: a describer per kind of figure
  (``describe_matrix``, ``describe_grid``, ``describe_heads``, ``describe_lines``,
  ``describe_bars``, ``describe_samples``) for the text alternative that
  ``pages.ui.layout.show_figure`` requires, and ``figure_table`` / ``figure_csv``, the
  data a figure draws.

Builders call ``figure`` through this package (``package.figure``), so that one name is
the figure's only way out: tests/pages/test_figures.py swaps it for Plotly's validated
build and compares what each builder sends.
"""

from __future__ import annotations

# pandas in full before Plotly is used. Streamlit runs each browser session's script in
# its own thread: on a freshly started server one session can still be importing pandas
# while another builds a figure, and Plotly looks pandas up in sys.modules without waiting
# for its import to finish ("partially initialized module 'pandas' has no attribute
# 'Series'"). An import statement waits for the other thread's import; this package is
# the only code that calls Plotly, and any of its modules runs this file first.
# tests/pages/test_first_runs_at_once.py makes the race certain.
import pandas  # noqa: F401  (isort: the first import of the package)

from .access import (
    describe_bars,
    describe_grid,
    describe_heads,
    describe_lines,
    describe_matrix,
    describe_samples,
    figure_csv,
    figure_table,
    said_number,
    spoken_token,
)
from .axes import ALL_LABELS_UP_TO, CHAR_EM, FIGURE_PX, LABEL_CHARS
from .charts import bar_chart, histogram, line_chart, scatter_chart
from .colours import (
    GRID_COLOUR,
    SCORES_SCALE,
    SERIES_COLOURS,
    TEXT_COLOUR,
    VALUES_SCALE,
    WEIGHTS_SCALE,
)
from .heatmaps import (
    GRID_GAP_PX,
    GRID_WIDTH_PX,
    MAX_CELLS,
    MIN_CELL_FONT,
    PRESENTER_MIN_FONT,
    TEXT_CELLS,
    fitting_cell_font,
    head_thumbnails,
    heatmap_grid,
    matrix_heatmap,
    pool_matrix,
)
from .look import LOOK, figure, revision, with_look

__all__ = [
    "ALL_LABELS_UP_TO", "CHAR_EM", "FIGURE_PX", "GRID_COLOUR", "GRID_GAP_PX", "GRID_WIDTH_PX",
    "LABEL_CHARS", "LOOK", "MAX_CELLS", "MIN_CELL_FONT", "PRESENTER_MIN_FONT", "SCORES_SCALE",
    "SERIES_COLOURS", "TEXT_CELLS", "TEXT_COLOUR", "VALUES_SCALE", "WEIGHTS_SCALE",
    "bar_chart", "describe_bars", "describe_grid", "describe_heads", "describe_lines",
    "describe_matrix", "describe_samples", "figure", "figure_csv", "figure_table",
    "fitting_cell_font", "head_thumbnails", "heatmap_grid",
    "histogram", "line_chart", "matrix_heatmap", "pool_matrix", "revision", "said_number",
    "scatter_chart", "spoken_token", "with_look",
]
