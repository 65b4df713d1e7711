"""Controls shared by the pages, each keyed and bound to the link."""

from __future__ import annotations

import streamlit as st

from attncore.text import tokenize

#: Every lesson control keeps its value in the link and across pages.
URL = {"bind": "query-params", "persist_state": "session"}

MAX_SEED = 9999


def seed_input(container, key: str, label: str = "Seed", **kwargs) -> int:
    """A whole-number seed, 0 to 9999.

    It is a float input shown without decimals: Streamlit 1.67's integer input raises
    OverflowError when a link carries ``inf`` for it, whereas its float input falls
    back to the default for any value that is not finite or out of range. Its default,
    0, is the minimum, given as such: a seed a button sets (lesson 8's "Train again")
    would otherwise make Streamlit log a warning with a stack trace, as for a widget
    given both a default and a value set through session state.
    """
    value = container.number_input(label, min_value=0.0, max_value=float(MAX_SEED), value="min",
                                   step=1.0, format="%.0f", key=key, **URL, **kwargs)
    return int(round(value))


def bounded_slider(container, label: str, low: int, high: int, default: int, key: str,
                   **kwargs) -> int:
    """An integer slider whose upper end depends on other controls (a length, a count).

    Streamlit 1.67 restores a kept (linked or session) value when a slider's range
    changes, even when it no longer fits, and then raises; so the kept value is
    clamped into the new range first. With nothing to choose (high <= low) no slider
    is drawn and ``low`` is returned.
    """
    if high <= low:
        container.caption(f"{label}: {low} (the only choice)")
        return low
    if key in st.session_state:
        st.session_state[key] = min(max(int(st.session_state[key]), low), high)
        return container.slider(label, low, high, key=key, **URL, **kwargs)
    return container.slider(label, low, high, min(max(default, low), high), key=key, **URL,
                            **kwargs)


def capped_tokens(text: str | None, what: str, limit: int) -> list[str]:
    """The tokens of a text box, at most ``limit`` of them, saying so when it cuts."""
    tokens = tokenize(text or "")
    if len(tokens) > limit:
        st.warning(f"The {what} has {len(tokens)} tokens; only the first {limit} are used.")
    return tokens[:limit]
