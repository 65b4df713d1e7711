"""Token labels made safe and distinct for display."""

from __future__ import annotations

import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")
_OCCURRENCE = re.compile(r" \(\d+(?:st|nd|rd|th)\)$")  # " (2nd)", as unique_labels writes it


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, ..., 21st, 22nd, 101st, 111th."""
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def unique_labels(labels) -> list[str]:
    """Make labels distinct (Plotly and pandas merge equal names), the same way everywhere.

    A repeated token is marked by which occurrence it is: "the", "cat", "the (2nd)",
    never "the (2)", which a student reads as a position. The mark reads the same on a
    figure's axis, in a table or a CSV header, and aloud ("the second"). A label that
    already looks like a mark ("a (2nd)" typed as a token) still gets a distinct one.

    >>> unique_labels(["the", "cat", "the", "<pad>", "<pad>", "<pad>"])
    ['the', 'cat', 'the (2nd)', '<pad>', '<pad> (2nd)', '<pad> (3rd)']
    """
    labels = [str(label) for label in labels]
    taken = set(labels)
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        n = seen.get(label, 0) + 1
        shown = label
        if n > 1:
            shown = f"{label} ({ordinal(n)})"
            while shown in taken:  # the token list itself holds this text
                n += 1
                shown = f"{label} ({ordinal(n)})"
            taken.add(shown)
        seen[label] = n
        out.append(shown)
    return out


def split_occurrence(label: str) -> tuple[str, str]:
    """A label as (token, occurrence mark), the mark as :func:`unique_labels` writes it:
    ``"the (2nd)"`` -> ``("the", " (2nd)")``, ``"cat"`` -> ``("cat", "")``. A shortened
    label keeps its mark: without it two occurrences would read the same."""
    match = _OCCURRENCE.search(label)
    if match is None or match.start() == 0:
        return label, ""
    return label[:match.start()], match.group(0)


def md_escape(text: str) -> str:
    """Escape user text for st.markdown, so it shows as typed: never HTML, links or maths."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def token_code(piece: str) -> str:
    """A token in markdown, as code (escaped instead when it holds a backtick, which would
    end the code span)."""
    return f"`{piece}`" if "`" not in piece else md_escape(piece)


def plotly_safe(text: str) -> str:
    """Plotly reads a few HTML tags in labels; escape angle brackets so text stays text."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
