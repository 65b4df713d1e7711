"""Matrices as tables: editable inputs, rounded displays, CSV and JSON downloads."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import streamlit as st

from attncore.text import parse_number

from .controls import URL
from .labels import unique_labels
from .numbers import number_text, significant_text


def editor_key(prefix: str, *parts) -> str:
    """Key of a data editor whose rows and columns depend on the settings.

    Edits are stored by row and column number, so a table of another shape (or of
    another preset) needs a new key: old edits would point at other cells.
    """
    return f"{prefix}_{'_'.join(str(p) for p in parts)}"


def linked_editor(base: pd.DataFrame, key: str, settings: list, *, link: str,
                  column_config: dict, width: str | int = "stretch") -> pd.DataFrame:
    """A fixed-size data editor whose edits are kept in the link; returns the edited table.

    ``base`` is the table before any edit and ``settings`` the (JSON) values that its
    rows and columns depend on. An edited table goes into the query parameter ``link``
    with ``settings``, so a shared URL reproduces the edits too; a link saved under other
    settings, or holding a table of another shape, is ignored and ``base`` is shown. The
    editor's key is ``editor_key(key, *settings)``: edits of one table never land on
    another. ``width`` is the editor's (Streamlit's "stretch", "content" or pixels).
    """
    settings = list(settings)
    saved = _table_from_link(st.query_params.get(link), base, settings)
    # An emptied cell is null: marked "empty", where Streamlit would write "None".
    table = st.data_editor(base if saved is None else saved, key=editor_key(key, *settings),
                           hide_index=True, num_rows="fixed", column_config=column_config,
                           placeholder="empty", width=width)
    if table.astype(str).equals(base.astype(str)):
        st.query_params.pop(link, None)
    else:
        cells = table.astype(object).where(table.notna(), None)  # a cleared cell is null
        st.query_params[link] = json.dumps({"settings": settings, "rows": cells.values.tolist()},
                                           separators=(",", ":"))
    return table


def _table_from_link(raw: str | None, base: pd.DataFrame, settings: list) -> pd.DataFrame | None:
    """The table saved in a link, if it belongs to these settings and has base's shape."""
    try:
        saved = json.loads(raw or "null")
        if saved["settings"] != settings:
            return None
        table = pd.DataFrame(saved["rows"], columns=base.columns)
    except (TypeError, ValueError, KeyError):  # not JSON, not our dict, or rows of bad width
        return None
    if table.shape != base.shape:
        return None
    # Text columns stay text: a number saved by an older link is shown as typed.
    text = [c for c in base.columns if base[c].dtype == object]
    table[text] = table[text].map(lambda c: c if c is None or isinstance(c, str) else f"{c:.17g}")
    return table


def typed_text(m) -> np.ndarray:
    """A matrix as the text an editor shows and a student would type: ``0.23``, ``-1``.

    Up to 12 significant digits, so the parsed text is the number computed with, and
    float noise (0.23000000000000004) is not shown.
    """
    m = np.asarray(m, dtype=float) + 0.0  # + 0.0 turns -0.0 (np.round(-0.04, 1)) into 0.0
    return np.vectorize(lambda x: f"{x:.12g}", otypes=[object])(m)


def typed_answers(frame, what: str) -> tuple[np.ndarray, list[str]]:
    """The numbers of an editor of text cells, NaN where blank, and what couldn't be read.

    A cell that isn't a number as typed (``1,5``, ``abc``) is left NaN and named in the
    list ("Step 3: softmax weights: row 1, column 2 is not a number: '1,5'"), never altered.
    """
    cells = pd.DataFrame(frame).to_numpy(dtype=object)
    out = np.full(cells.shape, np.nan)
    unread = []
    for (i, j), cell in np.ndenumerate(cells):
        if cell is None or (isinstance(cell, str) and not cell.strip()) or (
                isinstance(cell, float) and np.isnan(cell)):
            continue
        try:
            out[i, j] = parse_number(cell, f"{what}: row {i + 1}, column {j + 1}")
        except ValueError as exc:
            unread.append(str(exc))
    return out, unread


def matrix_frame(m, row_labels, col_labels) -> pd.DataFrame:
    """A matrix as a DataFrame with token labels (rows) and column names."""
    m = np.asarray(m, dtype=np.float64)
    return pd.DataFrame(m, index=unique_labels(row_labels), columns=unique_labels(col_labels))


def show_matrix(m, row_labels, col_labels, decimals: int) -> None:
    """A read-only table of a matrix, each number written by ``number_text`` to
    ``decimals`` (scientific notation when it doesn't fit in fixed notation).

    A static table (``st.table``), never clipped: Glide's canvas grid cut a 6-token
    table after its fifth column, showed 1386281.6 as "138628", and cost a noticeable
    part of every redraw of a section whose numbers change.
    """
    m = np.asarray(m, dtype=np.float64)
    cells = [[number_text(x, decimals) for x in row] for row in m]
    st.table(pd.DataFrame(cells, index=unique_labels(row_labels),
                          columns=unique_labels(col_labels)))


def scrolled_table(frame: pd.DataFrame, height: int = 300, digits: int = 5) -> None:
    """A long table in a box ``height`` px tall that scrolls, its decimals to ``digits``
    significant digits (a power of ten written ×10ⁿ), its index hidden (give the row
    numbers a column of their own).

    A static table (``st.table``) rather than Glide's grid (``st.dataframe``): a section
    that redraws it whenever a slider moves stays within the 0.5 s a redraw may take.
    """
    decimals = frame.select_dtypes("float").columns
    st.container(height=height).table(
        frame.style.format(lambda x: significant_text(x, digits), subset=decimals)
        .hide(axis="index"))


def to_csv(m, row_labels, col_labels) -> str:
    """CSV text of a matrix with labels, full precision (repr of each float)."""
    return matrix_frame(m, row_labels, col_labels).to_csv(float_format="%.17g")


def to_json(payload: dict) -> str:
    """JSON text of a dict of arrays, numbers and strings (−∞ written as null)."""
    def convert(x):
        if isinstance(x, np.ndarray):
            return [convert(v) for v in x.tolist()] if x.ndim else convert(x.item())
        if isinstance(x, (list, tuple)):
            return [convert(v) for v in x]
        if isinstance(x, dict):
            return {str(k): convert(v) for k, v in x.items()}
        if isinstance(x, (float, np.floating)):
            return float(x) if np.isfinite(x) else None
        if isinstance(x, np.integer):
            return int(x)
        if isinstance(x, np.bool_):
            return bool(x)
        return x

    return json.dumps(convert(payload), indent=1, ensure_ascii=False)


def downloads(prefix: str, matrices, trace_payload) -> None:
    """Download any shown matrix as CSV, or the whole computation as JSON.

    ``matrices`` maps a name to ``(matrix, row_labels, col_labels)``, and
    ``trace_payload`` is the JSON's dict; either may instead be a function returning it.
    The files are built only when a button is clicked, and then from what the page shows
    at that moment: a section that reruns alone (``st.fragment``) after the buttons were
    drawn, and changes a matrix (even its shape), passes a function that reads its
    latest results (the matrices' function is also called on each run, for their names).
    """
    current = matrices if callable(matrices) else lambda: matrices
    payload = trace_payload if callable(trace_payload) else lambda: trace_payload
    names = list(current())
    c1, c2, c3 = st.columns([2, 1, 1])
    choice = c1.selectbox("Matrix to download", names, key=f"{prefix}_dl_matrix", **URL)
    slug = "".join(ch if ch.isalnum() else "_" for ch in choice).strip("_").lower()
    c2.download_button("CSV", lambda: to_csv(*current()[choice]),
                       file_name=f"{prefix}_{slug}.csv", mime="text/csv",
                       key=f"{prefix}_dl_csv", on_click="ignore")
    c3.download_button("Whole trace (JSON)", lambda: to_json(payload()),
                       file_name=f"{prefix}_trace.json", mime="application/json",
                       key=f"{prefix}_dl_json", on_click="ignore")
