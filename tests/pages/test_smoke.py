"""Smoke tests over every app script: a new page is covered the day it is added.

The tests that only read a page share one run of it at its defaults
(``conftest.page_at_defaults``) and one in presenter mode (``page_in_presenter_mode``)."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest
from conftest import (
    PRESENTER_KEY,
    app_scripts,
    assert_no_exception,
    page_at_defaults,
    page_in_presenter_mode,
    script_id,
)
from streamlit.testing.v1.element_tree import Button, Dataframe, DownloadButton, Widget

SCRIPTS = app_scripts()
every_script = pytest.mark.parametrize("script", SCRIPTS, ids=[script_id(p) for p in SCRIPTS])


def keyed_widgets(at) -> list:
    """Every widget on the page, data editors included (they are widgets too)."""
    return [
        node
        for node in at
        if isinstance(node, Widget)
        or (isinstance(node, Dataframe) and node.editing_mode != "read_only")
    ]


def describe(widget) -> str:
    label = getattr(widget, "label", "") or ""
    return f"{widget.type} {label!r}"


@every_script
def test_renders_at_defaults(script: Path) -> None:
    at = page_at_defaults(script)
    assert_no_exception(at, f"{script.name} at defaults")


@every_script
def test_has_a_title(script: Path) -> None:
    at = page_at_defaults(script)
    assert_no_exception(at, f"{script.name} at defaults")
    titles = [t.value for t in at.title]
    assert titles, f"{script.name} has no st.title"
    assert all(str(t).strip() for t in titles), f"{script.name} has an empty title: {titles}"


def key_prefixes(widgets: list) -> dict[str, list[str]]:
    """Keys by their prefix (the part before the first "_"), the presenter switch left out."""
    by_prefix: dict[str, list[str]] = defaultdict(list)
    for w in widgets:
        if w.key == PRESENTER_KEY:
            continue
        prefix, sep, rest = (w.key or "").partition("_")
        by_prefix[prefix if sep and prefix and rest else "<no prefix>"].append(w.key)
    return dict(by_prefix)


@every_script
def test_every_widget_has_a_page_prefixed_key(script: Path) -> None:
    """A stable key per widget (also its URL parameter), one prefix per page."""
    at = page_at_defaults(script)
    assert_no_exception(at, f"{script.name} at defaults")
    widgets = keyed_widgets(at)

    unkeyed = [describe(w) for w in widgets if not w.key]
    assert not unkeyed, f"{script.name}: widgets without a key: {unkeyed}"

    by_prefix = key_prefixes(widgets)
    assert "<no prefix>" not in by_prefix, (
        f"{script.name}: keys without a 'prefix_' part: {by_prefix['<no prefix>']}"
    )
    assert len(by_prefix) <= 1, (
        f"{script.name}: widget keys do not share one page prefix: {by_prefix}"
    )


@every_script
def test_presenter_mode_renders(script: Path) -> None:
    at = page_in_presenter_mode(script)
    assert_no_exception(at, f"{script.name} with presenter mode on")
    assert at.toggle(key=PRESENTER_KEY).value is True


def test_pages_have_distinct_titles_and_prefixes() -> None:
    """Each script shows its own page (a wrong page switch would show the home page),
    and no two pages share a key prefix: keys are session state and URL parameters,
    so a shared prefix could share a value by accident across pages."""
    titles: dict[str, list[str]] = defaultdict(list)
    owners: dict[str, list[str]] = defaultdict(list)
    for path in SCRIPTS:
        at = page_at_defaults(path)
        assert_no_exception(at, f"{path.name} at defaults")
        titles[" / ".join(t.value for t in at.title)].append(path.name)
        for prefix in key_prefixes(keyed_widgets(at)):
            owners[prefix].append(path.name)
    same_title = {title: names for title, names in titles.items() if len(names) > 1}
    assert not same_title, f"pages show the same title: {same_title}"
    shared = {prefix: names for prefix, names in owners.items() if len(names) > 1}
    assert not shared, f"pages share a key prefix: {shared}"


@every_script
def test_every_control_is_in_the_link(script: Path) -> None:
    """Every control is bound to the URL, so a teacher's link reopens the view.
    Buttons act rather than hold a value; data editors keep their edits in the link
    through pages.ui.tables.linked_editor, and are not Widgets here."""
    at = page_at_defaults(script)
    assert_no_exception(at, f"{script.name} at defaults")
    unbound = [f"{describe(w)} ({w.key})" for w in at if isinstance(w, Widget)
               and not isinstance(w, (Button, DownloadButton)) and not w.proto.query_param_key]
    assert not unbound, f"{script.name}: controls not in the link: {unbound}"


# An exact zero in programmer's notation ("0.0e+00", "-0e-00"): it reads as a rounded
# number, where the page means 0 exactly.
ZERO_IN_E_NOTATION = re.compile(r"(?<![\d.])-?0(?:\.0+)?e[+-]?0+(?!\d)")


@every_script
def test_no_exact_zero_is_written_as_0e00(script: Path) -> None:
    at = page_at_defaults(script)
    assert_no_exception(at, f"{script.name} at defaults")
    texts = [e.value for kind in ("markdown", "caption", "info", "success", "warning")
             for e in getattr(at, kind)] + [str(m.value) for m in at.metric]
    found = [t for t in texts if ZERO_IN_E_NOTATION.search(t)]
    assert not found, f"{script.name} writes an exact 0 as e-notation: {found}"
