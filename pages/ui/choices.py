"""Choice widgets whose options depend on other controls."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st


def keep_offered(key: str, options: Sequence, default, format_func: Callable = str) -> dict:
    """Put a select widget's kept or linked value back among its options, before drawing it.

    When another control changes the options (the head counts of a d_model), the value
    kept in the session or carried by the link may no longer be offered. Streamlit would
    quietly show its default and leave the old value in the link; here the widget's
    state is set to ``default`` instead, so the link follows.

    Returns the keyword arguments for the widget: ``{"index": ...}`` for ``default``, or
    nothing in the run that sets the state (a widget whose state was just set must not be
    given a default too). The default is passed on every other run, so it stays the same:
    Streamlit leaves a value out of the link when it equals the widget's default, and a
    default that moved would drop a linked choice from the link.
    """
    index = {"index": list(options).index(default)}
    if key in st.session_state:
        if st.session_state[key] not in options:
            st.session_state[key] = default
            return {}
        return index
    linked = st.query_params.get(key)
    if linked is not None and linked not in [format_func(o) for o in options]:
        st.session_state[key] = default
        return {}
    return index


def offered_value(key: str, options: Sequence, default, format_func: Callable = str):
    """The value that the select widget ``key``, drawn later in this run, will show: its
    kept value, else the one its link carries, else ``default`` (whatever is no longer
    offered gives ``default``). For a part of the page drawn above the widget."""
    if key in st.session_state:
        return st.session_state[key] if st.session_state[key] in options else default
    linked = st.query_params.get(key)
    return next((o for o in options if format_func(o) == linked), default)
