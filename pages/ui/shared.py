"""Long results computed once per setting and shared by the sessions of a server.

Lessons 0, 10 and 11 run work of several seconds (a training, passes through the language
model) whose result depends only on its settings: the first session to ask computes it,
and every other session, now or later, is shown it at once.
"""

from __future__ import annotations

import contextlib
import threading
import time

import streamlit as st


@st.cache_resource
def _shared_results() -> dict:
    """Results of long deterministic runs (trainings, perplexities), shared by every
    session."""
    return {}


MAX_KEPT = 8  # results of one kind kept per store (a window result holds 24 MB of maps)
_COMPUTING: dict[tuple, threading.Lock] = {}  # one lock per shared result being computed
_COMPUTING_GUARD = threading.Lock()


def measured(name: str, settings: tuple, compute, *, automatic: bool, label: str, key: str,
             note: str, shared: bool = True, spinner: str | None = None):
    """The result of a run of several seconds, computed once per setting.

    Shown at once when it was computed before: by any session of this server when
    ``shared`` (deterministic numbers such as perplexities, and lesson 11's KV-cache
    comparison, whose caption then says when its times were measured), by this session
    only otherwise (timings that are shown as this visitor's own). Sessions asking for the
    same shared result at once wait for one computation. Computed at once when
    ``automatic`` (a page's defaults, so that it tells its story without a click); else a
    button labelled ``label`` starts it, and ``note`` says what it will take. ``spinner``,
    if given, is shown while it runs. None until there is a result. The last
    ``MAX_KEPT`` results of each ``name`` are kept, the oldest go first.
    """
    store = _shared_results() if shared else st.session_state.setdefault("_measured", {})
    entry = (name, settings)
    if entry in store:
        return store[entry]
    if not (automatic or st.button(label, key=key)):
        st.caption(note)
        return None
    if shared:
        with _COMPUTING_GUARD:
            lock = _COMPUTING.setdefault(entry, threading.Lock())
    with lock if shared else contextlib.nullcontext():
        if entry in store:  # computed by another session while this one waited
            return store[entry]
        with st.spinner(spinner) if spinner else contextlib.nullcontext():
            result = compute()
        store[entry] = result
        same_kind = [e for e in store if e[0] == name]
        for old in same_kind[:-MAX_KEPT]:
            store.pop(old, None)
    if shared:
        with _COMPUTING_GUARD:
            _COMPUTING.pop(entry, None)
    return result


def measured_when(at: float) -> str:
    """When a shared measurement was made (``time.time()`` then), as a caption's opening
    words."""
    minutes = (time.time() - at) / 60
    if minutes < 1:
        return "Measured on this server under a minute ago"
    ago = f"{minutes:.0f} min" if minutes < 60 else f"{minutes / 60:.0f} h"
    return f"Measured on this server {ago} ago, when these settings were first asked for"
