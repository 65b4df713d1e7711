"""The latest results of page sections that rerun alone (``st.fragment``), for downloads."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import streamlit as st

from pages.ui.tables import downloads

# Keys of ``results`` that belong to the downloads, not to a section.
_OFFERED = "_downloads_offered"  # the matrix names the lesson body would offer now
_DRAWN = "_downloads_drawn"  # the names the page's buttons offer (set on a full run)


def keep(results: dict, name: str, value) -> None:
    """Record a section's latest ``value`` under ``name`` in ``results``.

    A section inside ``st.fragment`` reruns alone when its own controls move; the
    download buttons at the end of the page are not redrawn then. Buttons drawn by
    ``lesson_downloads`` look ``results`` up when clicked; the others (lessons 1 and 6)
    build their files from the objects they were given at the last full run. So
    ``results`` is updated, never replaced, and an array already kept with the same
    shape and type is overwritten in place: a download always carries what the page
    shows.
    """
    old = results.get(name)
    if (isinstance(old, np.ndarray) and isinstance(value, np.ndarray)
            and old.shape == value.shape and old.dtype == value.dtype):
        old[...] = value
    else:
        results[name] = value


def offer_downloads(results: dict, names: list[str] | None) -> None:
    """Say, from a lesson body that reruns alone (``st.fragment``), which matrices its
    downloads offer now: their names, or None for no downloads (nothing computed, or
    presenter mode).

    The body's controls rerun the body only: the closing notes and the download buttons
    below it stay as the last full run drew them, and the buttons read ``results`` when
    clicked. When the body would now offer other matrices than the buttons do (other
    heads, or none), the whole page reruns, so that the choice of matrix is never stale.
    Call it once per run, as soon as the body knows whether it can show its results
    (input read and computed) and before drawing them: the rerun starts over.
    """
    if _DRAWN in results and results[_DRAWN] != names:
        st.rerun()
    results[_OFFERED] = names


def lesson_downloads(prefix: str, results: dict, matrices: Callable[[dict], dict],
                     trace: Callable[[dict], dict], note: str = "") -> None:
    """The "Download" section after a lesson body, for the matrices the body offered
    (``offer_downloads``), with ``note`` (markdown, if any) saying what the files hold. The
    files are built when a button is clicked, by ``matrices(results)`` (name -> (matrix,
    row labels, column labels)) and ``trace(results)`` (the JSON's dict), from what the
    body shows at that moment."""
    names = results.get(_OFFERED)
    results[_DRAWN] = names
    if not names:
        return
    st.subheader("Download")
    if note:
        st.markdown(note)
    downloads(prefix, lambda: matrices(results), lambda: {
        name: value for name, value in trace(results).items() if name not in (_OFFERED, _DRAWN)})
