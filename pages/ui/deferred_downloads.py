"""Downloads whose files are built from what a page section shows at the moment of the click.

``pages.ui.tables.downloads`` binds each matrix when its buttons are drawn. A section that
reruns alone (``st.fragment``) can change a matrix's shape (more keys), which an update in
place (``pages.ui.live.keep``) cannot carry to buttons drawn at the last full run; here
the buttons look the matrix up only when clicked.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from .controls import URL
from .tables import to_csv, to_json


def deferred_downloads(prefix: str, names: list[str], matrices: Callable[[], dict],
                       trace_payload: Callable[[], dict]) -> None:
    """Download any of the matrices ``names`` as CSV, or the whole computation as JSON.

    ``matrices()`` maps a name to ``(matrix, row_labels, col_labels)`` and
    ``trace_payload()`` gives the JSON's dict; both are called when a button is clicked.
    The widgets and file names are those of ``pages.ui.tables.downloads``.
    """
    c1, c2, c3 = st.columns([2, 1, 1])
    choice = c1.selectbox("Matrix to download", names, key=f"{prefix}_dl_matrix", **URL)
    slug = "".join(ch if ch.isalnum() else "_" for ch in choice).strip("_").lower()
    c2.download_button("CSV", lambda: to_csv(*matrices()[choice]),
                       file_name=f"{prefix}_{slug}.csv", mime="text/csv",
                       key=f"{prefix}_dl_csv", on_click="ignore")
    c3.download_button("Whole trace (JSON)", lambda: to_json(trace_payload()),
                       file_name=f"{prefix}_trace.json", mime="application/json",
                       key=f"{prefix}_dl_json", on_click="ignore")
