"""Token labels made safe and distinct for display."""

from __future__ import annotations

import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def unique_labels(labels) -> list[str]:
    """Make labels distinct (Plotly and pandas merge equal names): 'the', 'the (2)'."""
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        label = str(label)
        n = seen.get(label, 0) + 1
        seen[label] = n
        out.append(label if n == 1 else f"{label} ({n})")
    return out


def md_escape(text: str) -> str:
    """Escape user text for st.markdown, so it shows as typed: never HTML, links or maths."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def plotly_safe(text: str) -> str:
    """Plotly reads a few HTML tags in labels; escape angle brackets so text stays text."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
