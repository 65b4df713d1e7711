"""What a figure says to someone who cannot see it: its text alternative and its data.

A text alternative states what a figure shows with its key numbers, computed from the
arrays the figure is drawn from; ``pages.ui.layout.show_figure`` puts it right after the
figure, where a screen reader meets it. One describer per kind of figure:

- :func:`describe_matrix` for ``matrix_heatmap`` (weights, scores, values, masks);
- :func:`describe_grid` for ``heatmap_grid``;
- :func:`describe_heads` for ``head_thumbnails`` (a model view of L × H heads);
- :func:`describe_lines` for ``line_chart`` (and panels of them);
- :func:`describe_bars` for ``bar_chart``;
- :func:`describe_samples` for ``histogram``.

A page may put a sentence of its own in front (the lesson's point, with its numbers).
Token labels are written as :func:`spoken_token` reads them: a token of symbols only
(``##s``, ``Ġ``, ``.``) is said in words, since screen readers skip most punctuation.

:func:`figure_table` turns a figure back into its data (what it draws, as a table), which
``show_figure`` offers as CSV: Plotly's charts cannot be reached by keyboard.
"""

from __future__ import annotations

import html
import re

import numpy as np
import pandas as pd

from ..labels import split_occurrence, unique_labels
from ..numbers import said_number

# Tokens read as words: special tokens of MiniLM and of GPT-style tokenizers, padding,
# and punctuation that screen readers skip or read as a symbol's name.
_SAID = {
    "[CLS]": "[CLS] (start of text)", "[SEP]": "[SEP] (end of text)",
    "[PAD]": "[PAD] (padding)", "[UNK]": "[UNK] (unknown)", "[MASK]": "[MASK]",
    "<pad>": "padding", "<s>": "start of text", "</s>": "end of text",
    "<|endoftext|>": "end of text", "<|im_start|>": "start of a turn",
    "<|im_end|>": "end of a turn",
    ".": "full stop", ",": "comma", ";": "semicolon", ":": "colon", "!": "exclamation mark",
    "?": "question mark", "'": "apostrophe", '"': "quotation mark", "-": "hyphen",
    "–": "dash", "—": "dash", "(": "opening bracket", ")": "closing bracket", "/": "slash",
    "&": "ampersand", "%": "per cent", "#": "hash", "*": "asterisk", "…": "ellipsis",
    "": "empty", " ": "space", "\n": "new line",
}
# GPT-style byte-level tokens write a leading space as "Ġ" and a newline as "Ċ"; lessons
# 10 and 11 show them as "␣" and "↵" (attncore.lm.tokens.readable).
_BYTE_LEVEL = {"Ġ": " ", "Ċ": "\n", "ĉ": "\t", "␣": " ", "↵": "\n", "⇥": "\t"}


def spoken_token(token: str) -> str:
    """A token as a screen reader should say it, in quotes: “cat”, “##s” becomes “s”
    (continuing the word before), “Ġthe” becomes “the” (after a space), “.” full stop. An
    occurrence mark stays with it: “the (2nd)”, and “. (2nd)” is said "full stop (2nd)"."""
    token, mark = split_occurrence(str(token))
    if token in _SAID:
        return _SAID[token] + mark
    if token.startswith("##") and len(token) > 2:
        return f"“{token[2:]}{mark}” (continuing the word before)"
    if token and token[0] in _BYTE_LEVEL and len(token) > 1:
        rest = "".join(_BYTE_LEVEL.get(c, c) for c in token[1:])
        after = {" ": "a space", "\n": "a line break", "\t": "a tab"}[_BYTE_LEVEL[token[0]]]
        return f"“{rest}{mark}” (after {after})"
    plain = "".join(_BYTE_LEVEL.get(c, c) for c in token)
    if plain in _SAID:
        return _SAID[plain] + mark
    return f"“{plain}{mark}”"


def _share(x: float) -> str:
    """A share of 1 as a percentage: 0.642 -> "64%"."""
    return f"{100 * float(x):.0f}%"


def _listed(items: list[str], limit: int) -> str:
    """The first ``limit`` items joined by semicolons, and how many more there are."""
    shown = "; ".join(items[:limit])
    return shown + (f"; and {len(items) - limit} more" if len(items) > limit else "")


def describe_matrix(m, row_labels, col_labels, *, kind: str = "weights",
                    rows: str = "query", cols: str = "key") -> str:
    """The text alternative of a ``matrix_heatmap`` of ``kind``.

    weights: each row's strongest column (up to 6 rows), or a summary of the rows;
    scores and values: the range with where it is reached, and the masked cells;
    mask: how many cells may attend.
    """
    m = np.asarray(m, dtype=np.float64)
    row_labels, col_labels = unique_labels(row_labels), unique_labels(col_labels)
    T_r, T_c = m.shape
    head = f"{T_r} × {T_c} {kind} (rows: {rows}, columns: {cols})"
    if kind == "mask":
        allowed = int(np.count_nonzero(m >= 0.5))
        return (f"{head}: {allowed} of {m.size} cells may attend (✓), "
                f"{m.size - allowed} are masked (✗).")
    if kind == "weights":
        return f"{head}. {_strongest(m, row_labels, col_labels, rows, cols)}"
    finite = np.isfinite(m)
    masked = int(np.count_nonzero(np.isneginf(m)))
    if not finite.any():
        return f"{head}: no finite value" + (f", {masked} cells masked (−∞)." if masked else ".")
    low = np.unravel_index(np.argmin(np.where(finite, m, np.inf)), m.shape)
    high = np.unravel_index(np.argmax(np.where(finite, m, -np.inf)), m.shape)
    text = (f"{head}: from {said_number(m[low])} ({_cell(low, row_labels, col_labels, rows, cols)})"
            f" to {said_number(m[high])} ({_cell(high, row_labels, col_labels, rows, cols)})")
    if masked:
        text += f"; {masked} of {m.size} cells masked (−∞)"
    return text + "."


def _cell(index, row_labels, col_labels, rows: str = "query", cols: str = "key") -> str:
    i, j = index
    return f"{rows} {spoken_token(row_labels[i])}, {cols} {spoken_token(col_labels[j])}"


def _joined(words: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _strongest(w: np.ndarray, row_labels, col_labels, rows: str = "query",
               cols: str = "key", limit: int = 6) -> str:
    """Each row's strongest column (all of them when tied), or for many rows: the
    strongest cell, the mean share of a row's strongest column, and how many rows look
    most at their own label."""
    live = [i for i in range(w.shape[0]) if np.isfinite(w[i]).any() and np.nanmax(w[i]) > 0]
    if not live:
        return f"Every weight is 0 (every {cols} masked)."
    top = {i: int(np.nanargmax(w[i])) for i in live}
    if len(live) <= limit:
        said = []
        for i, j in top.items():
            tied = np.flatnonzero(np.nan_to_num(w[i], nan=-1.0) >= w[i, j] - 1e-12)
            most = _joined([spoken_token(col_labels[k]) for k in tied])
            said.append(f"{rows} {spoken_token(row_labels[i])}: most on {most} "
                        f"({said_number(w[i, j])}{' each' if len(tied) > 1 else ''})")
        return "; ".join(said) + "."
    # A row that could see only one key (row 1 under a causal mask) puts 1 on it by force:
    # the strongest weight is looked for among rows that had a choice, when any did.
    chose = [i for i in live if np.count_nonzero(np.nan_to_num(w[i]) > 0) > 1] or live
    best = max(chose, key=lambda i: w[i, top[i]])
    shares = np.array([w[i, top[i]] for i in live])
    flattest = live[int(np.argmin(shares))]  # the row that is named with the lowest
    text = (f"Largest weight {said_number(w[best, top[best]])}, {rows} "
            f"{spoken_token(row_labels[best])} on {cols} {spoken_token(col_labels[top[best]])}."
            f" A {rows}'s largest weight is {said_number(shares.mean())} on average "
            f"({said_number(shares.min())}, {rows} {spoken_token(row_labels[flattest])}, to "
            f"{said_number(shares.max())}).")
    if list(row_labels) == list(col_labels):
        own = sum(top[i] == i for i in live)
        text += f" {own} of {len(live)} put it on {'itself' if own == 1 else 'themselves'}."
    return text


def describe_grid(mats, titles, row_labels, col_labels, *, kind: str = "weights",
                  limit: int = 6) -> str:
    """The text alternative of a ``heatmap_grid``: one short clause per panel."""
    mats = [np.asarray(m, dtype=np.float64) for m in mats]
    row_labels, col_labels = unique_labels(row_labels), unique_labels(col_labels)
    clauses = []
    for m, title in zip(mats, titles, strict=True):
        if kind == "mask":
            clauses.append(f"{title}: {int(np.count_nonzero(m >= 0.5))} of {m.size} may attend")
        elif kind == "weights":
            # rows that could see one key only (row 1 under a causal mask) left out, if any
            # other row had a choice
            forced = np.count_nonzero(np.nan_to_num(m) > 0, axis=1) <= 1
            pick = m if forced.all() else np.where(forced[:, None], -np.inf, m)
            i, j = np.unravel_index(np.nanargmax(np.where(np.isfinite(pick), pick, -np.inf)),
                                    m.shape)
            clauses.append(f"{title}: strongest {spoken_token(row_labels[i])} looks at "
                           f"{spoken_token(col_labels[j])} with {said_number(m[i, j])}")
        else:
            finite = m[np.isfinite(m)]
            span = (f"from {said_number(finite.min())} to {said_number(finite.max())}"
                    if finite.size else "no finite value")
            clauses.append(f"{title}: {span}")
    T_r, T_c = mats[0].shape
    return f"{len(mats)} maps of {T_r} × {T_c} {kind}. " + _listed(clauses, limit) + "."


def describe_heads(a, labels) -> str:
    """The text alternative of ``head_thumbnails`` (L, H, T, T): which head puts the most
    weight on one key (an attention sink), and how much a head's top key takes on average."""
    a = np.asarray(a, dtype=np.float64)
    labels = unique_labels(labels)
    L, H, T, _ = a.shape
    column_mass = a.mean(axis=2)  # (L, H, T): each key's share of a head's weight
    l, h, j = np.unravel_index(np.argmax(column_mass), column_mass.shape)
    return (f"{L} layers × {H} heads, each a {T} × {T} map of weights. Layer {l + 1}, head "
            f"{h + 1} puts the most on one key: {_share(column_mass[l, h, j])} of its weight "
            f"on {spoken_token(labels[j])}. A head's most attended key takes "
            f"{_share(column_mass.max(axis=-1).mean())} of its weight on average.")


def describe_lines(x, series: dict, *, x_title: str, y_title: str, limit: int = 5) -> str:
    """The text alternative of a ``line_chart``: for each series its first and last point,
    and its highest point when that lies between them."""
    x = np.asarray(x, dtype=np.float64)
    clauses = []
    for name, y in series.items():
        y = np.asarray(y, dtype=np.float64)
        ok = np.flatnonzero(np.isfinite(y))
        if not ok.size:
            clauses.append(f"{name}: no value")
            continue
        first, last = ok[0], ok[-1]
        clause = (f"{name}: {said_number(y[first])} at {x_title} {said_number(x[first])}, "
                  f"{said_number(y[last])} at {said_number(x[last])}")
        peak = ok[np.argmax(y[ok])]
        if peak not in (first, last):
            clause += f" (highest {said_number(y[peak])} at {said_number(x[peak])})"
        clauses.append(clause)
    return f"{y_title} against {x_title}. " + _listed(clauses, limit) + "."


def describe_bars(labels, values, *, what: str, limit: int = 3) -> str:
    """The text alternative of a ``bar_chart``: the largest bars, and the smallest."""
    values = np.asarray(values, dtype=np.float64)
    labels = unique_labels(labels)
    order = [int(k) for k in np.argsort(-values, kind="stable") if np.isfinite(values[k])]
    if not order:
        return f"{what}: no value."
    said = [f"{spoken_token(labels[k])} {said_number(values[k])}" for k in order]
    if len(said) <= limit + 1:
        return f"{what}, largest first: " + "; ".join(said) + "."
    return (f"{what} over {len(values)} bars. Largest: " + "; ".join(said[:limit])
            + f". Smallest: {said[-1]}.")


def describe_samples(samples, *, what: str) -> str:
    """The text alternative of a ``histogram``: count, mean, variance and range."""
    s = np.asarray(samples, dtype=np.float64)
    if s.size == 1:
        return f"Histogram of 1 sample of {what}: {said_number(s[0])}."
    # The sample variance (n − 1), as the lessons' tables give it beside the theory.
    return (f"Histogram of {s.size} samples of {what}: mean {said_number(s.mean())}, "
            f"variance {said_number(s.var(ddof=1))}, from {said_number(s.min())} to "
            f"{said_number(s.max())}.")


# ---- the data behind a figure --------------------------------------------------------

_TAG = re.compile(r"<[^>]+>")


def _plain(text) -> str:
    """A label or title as read: Plotly's escapes undone, its tags (<br>) dropped."""
    return html.unescape(_TAG.sub(" ", str(text))).strip()


def _title_of(axis) -> str:
    return _plain(axis.title.text) if axis is not None and axis.title.text else ""


def _panels(fig) -> dict[str, str]:
    """Panel names by x axis ("x", "x2", ...) when a figure has several panels, each with
    its title as an annotation above it (heatmap_grid, panels.side_by_side)."""
    axes = list(dict.fromkeys(t.xaxis or "x" for t in fig.data))
    notes = [_plain(a.text) for a in fig.layout.annotations]
    return dict(zip(axes, notes, strict=False)) if len(axes) > 1 else {}


def _helper(trace) -> bool:
    """Traces that only help draw: the cell numbers' text layer, the masked cells' layer."""
    return (trace.type == "scatter" and trace.mode == "text") or (
        trace.type == "heatmap" and trace.hoverinfo == "skip")


def figure_table(fig) -> pd.DataFrame:
    """The data a figure draws, as a table.

    One heatmap: its matrix, row labels down and column labels across (−∞ where a cell
    is masked). Several heatmaps (panels, heads): one row per cell, with the panel's
    name. Lines and bars sharing their x values: one column per series; otherwise one
    row per point, with the series' name. Labels as read, values as drawn.
    """
    traces = [t for t in fig.data if not _helper(t)]
    masked = [t for t in fig.data if t.type == "heatmap" and t.hoverinfo == "skip"]
    heatmaps = [t for t in traces if t.type == "heatmap"]
    panels = _panels(fig)
    if heatmaps:
        if len(heatmaps) == 1:
            z = np.asarray(heatmaps[0].z, dtype=np.float64)
            if masked:
                z = np.where(np.isfinite(np.asarray(masked[0].z, dtype=np.float64)), -np.inf, z)
            return pd.DataFrame(z, index=[_plain(y) for y in heatmaps[0].y],
                                columns=[_plain(x) for x in heatmaps[0].x])
        rows = []
        for n, t in enumerate(heatmaps):
            name = _plain(t.name) if t.name else panels.get(t.xaxis or "x", f"panel {n + 1}")
            z = np.asarray(t.z, dtype=np.float64)
            for (i, j), v in np.ndenumerate(z):
                rows.append((name, _plain(t.y[i]), _plain(t.x[j]), v))
        return pd.DataFrame(rows, columns=["panel", "row", "column", "value"])
    x_name = _title_of(fig.layout.xaxis) or "x"
    y_name = _title_of(fig.layout.yaxis) or "y"
    xs = [np.asarray(t.x).tolist() for t in traces]
    if traces and all(x == xs[0] for x in xs) and not panels:
        table = pd.DataFrame({x_name: [_plain(v) if isinstance(v, str) else v for v in xs[0]]})
        for n, t in enumerate(traces):
            table[_plain(t.name) if t.name else (y_name if len(traces) == 1 else
                                                  f"series {n + 1}")] = list(t.y)
        return table
    rows = []
    for n, t in enumerate(traces):
        name = _plain(t.name) if t.name else f"series {n + 1}"
        panel = panels.get(t.xaxis or "x", "")
        for x, y in zip(t.x, t.y, strict=True):
            rows.append((panel, name, _plain(x) if isinstance(x, str) else x, y))
    table = pd.DataFrame(rows, columns=["panel", "series", x_name, y_name])
    return table if panels else table.drop(columns="panel")


def figure_csv(fig) -> str:
    """:func:`figure_table` as CSV text (floats to 7 significant digits, as drawn)."""
    table = figure_table(fig)
    return table.to_csv(index=table.index.dtype == object, float_format="%.7g")
