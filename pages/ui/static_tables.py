"""Small read-only tables drawn as plain HTML (``st.table``), for sections that redraw often.

``st.dataframe`` draws on a canvas grid, which costs a noticeable part of a redraw each
time its numbers change; a table of a few rows and columns does not need scrolling,
sorting or resizing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from .labels import unique_labels
from .numbers import number_text


def show_small_matrix(m, row_labels, col_labels, decimals: int) -> None:
    """A matrix as a static table, each number written by ``number_text`` to ``decimals``."""
    m = np.asarray(m, dtype=np.float64)
    cells = [[number_text(x, decimals) for x in row] for row in m]
    st.table(pd.DataFrame(cells, index=unique_labels(row_labels),
                          columns=unique_labels(col_labels)))
