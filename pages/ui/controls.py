"""Controls shared by the pages, each keyed and bound to the link."""

from __future__ import annotations

#: Every lesson control keeps its value in the link and across pages.
URL = {"bind": "query-params", "persist_state": "session"}

MAX_SEED = 9999


def seed_input(container, key: str, label: str = "Seed", **kwargs) -> int:
    """A whole-number seed, 0 to 9999.

    It is a float input shown without decimals: Streamlit 1.67's integer input raises
    OverflowError when a link carries ``inf`` for it, whereas its float input falls
    back to the default for any value that is not finite or out of range.
    """
    value = container.number_input(label, min_value=0.0, max_value=float(MAX_SEED), value=0.0,
                                   step=1.0, format="%.0f", key=key, **URL, **kwargs)
    return int(round(value))
