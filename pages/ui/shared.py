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
    if not shared:
        store = st.session_state.setdefault("_measured", {})
        if (name, settings) not in store:
            if not (automatic or st.button(label, key=key)):
                st.caption(note)
                return None
            with st.spinner(spinner) if spinner else contextlib.nullcontext():
                _keep(store, name, settings, compute())
        return store[(name, settings)]
    if (name, settings) not in _shared_results() and not (
            automatic or st.button(label, key=key)):
        st.caption(note)
        return None
    return shared_result(name, settings, compute, spinner=spinner)


def shared_result(name: str, settings: tuple, compute, *, spinner: str | None = None):
    """The result ``(name, settings)`` shared by every session of this server: computed by
    ``compute`` unless a session, or the server's start (pages/ui/server_start.py), already
    has. Sessions asking for it at once wait for one computation; ``spinner``, if given,
    is shown while it runs (inside a session)."""
    store = _shared_results()
    entry = (name, settings)
    if entry in store:
        return store[entry]
    with _COMPUTING_GUARD:
        lock = _COMPUTING.setdefault(entry, threading.Lock())
    with lock:
        if entry not in store:  # else computed by another session while this one waited
            with st.spinner(spinner) if spinner else contextlib.nullcontext():
                _keep(store, name, settings, compute())
    with _COMPUTING_GUARD:
        _COMPUTING.pop(entry, None)
    return store[entry]


def _keep(store: dict, name: str, settings: tuple, result) -> None:
    """Store a result; the oldest of its kind go past ``MAX_KEPT``."""
    store[(name, settings)] = result
    same_kind = [e for e in store if e[0] == name]
    for old in same_kind[:-MAX_KEPT]:
        store.pop(old, None)


def measured_when(at: float) -> str:
    """When a shared measurement was made (``time.time()`` then), as a caption's opening
    words."""
    minutes = (time.time() - at) / 60
    if minutes < 1:
        return "Measured on this server under a minute ago"
    ago = f"{minutes:.0f} min" if minutes < 60 else f"{minutes / 60:.0f} h"
    return f"Measured on this server {ago} ago, when these settings were first asked for"
