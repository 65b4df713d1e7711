"""A matrix a fragment replaces after the downloads were drawn (pages/ui/latest.py)."""

from __future__ import annotations

import numpy as np

from pages.ui.latest import LatestMatrix
from pages.ui.tables import to_csv


def test_the_csv_carries_the_matrix_set_after_the_download_was_drawn():
    latest = LatestMatrix()
    latest.set(np.ones((2, 2)), ["n=64", "n=128"], ["a", "b"])
    m, rows, cols = latest.entry()  # what downloads() holds from the last full run
    latest.set(np.arange(6.0).reshape(3, 2), ["n=64", "n=128", "n=256"], ["a", "b"])
    assert to_csv(m, rows, cols).splitlines() == [",a,b", "n=64,0,1", "n=128,2,3", "n=256,4,5"]
