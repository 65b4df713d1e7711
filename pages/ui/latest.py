"""A matrix whose shape a page section (``st.fragment``) may change after the downloads
at the end of the page were drawn."""

from __future__ import annotations

import numpy as np


class LatestMatrix:
    """``(matrix, row labels, column labels)`` for :func:`pages.ui.tables.downloads` that a
    fragment updates with :meth:`set`.

    The download buttons keep the objects they were given at the last full run, and build
    their file only when clicked (NumPy reads the matrix then, through ``__array__``). So a
    section that reruns alone and measures, say, one more length can replace the matrix
    and its labels, of another shape, and the CSV still carries what the page shows.
    (:func:`pages.ui.live.keep` covers arrays whose shape does not change.)
    """

    def __init__(self) -> None:
        self.matrix = np.zeros((0, 0))
        self.rows: list[str] = []
        self.cols: list[str] = []

    def set(self, matrix, rows, cols) -> None:
        self.matrix = np.asarray(matrix, dtype=np.float64)
        self.rows[:] = list(rows)  # in place: the download holds these very lists
        self.cols[:] = list(cols)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        return np.asarray(self.matrix, dtype=dtype)

    def entry(self) -> tuple:
        """The ``(matrix, rows, cols)`` triple to put in downloads' dict."""
        return self, self.rows, self.cols
