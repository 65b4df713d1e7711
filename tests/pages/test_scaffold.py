"""Every lesson is written one way: an entry in the registry, a page in the scaffold.

The registry (pages/ui/lessons.py) names each lesson once; the sidebar, the tab, the
heading and the home page are drawn from it, so they cannot disagree. The scaffold
(pages/ui/page.py) sets each page up and always ends with the note about a link's
unused settings, early stops included.
"""

from __future__ import annotations

import ast
import re

import pytest
from conftest import MAIN_SCRIPT, open_page

from pages.ui.lessons import LESSONS, PAGES_DIR, Lesson, lesson

MAX_PAGE_LINES = 450


def _source(lesson: Lesson) -> str:
    return (PAGES_DIR / lesson.script).read_text(encoding="utf-8")


def test_every_page_file_has_a_registry_entry_and_every_entry_a_file():
    on_disk = sorted(p.name for p in PAGES_DIR.glob("*.py"))
    assert on_disk == sorted(lesson.script for lesson in LESSONS)


def test_the_registry_is_in_order_and_names_each_lesson_once():
    assert [lesson.number for lesson in LESSONS] == list(range(len(LESSONS)))
    for field in ("title", "prefix", "script"):
        values = [getattr(lesson, field) for lesson in LESSONS]
        assert len(set(values)) == len(values), field


def test_a_bad_entry_is_refused():
    with pytest.raises(ValueError, match="must be named '3_Name.py'"):
        Lesson(3, "4_Masks.py", "Masks", "mk", "🎭", goal="g", summary="s")
    with pytest.raises(ValueError, match="key prefix"):
        Lesson(3, "3_Masks.py", "Masks", "Mk-", "🎭", goal="g", summary="s")
    with pytest.raises(ValueError, match="no lesson has the key prefix 'zz'"):
        lesson("zz")


@pytest.mark.parametrize("entry", LESSONS, ids=lambda lesson: lesson.script)
def test_every_page_is_written_in_the_scaffold(entry):
    """One ``with lesson_page("<its prefix>")``; no setup, header or stop of its own; no
    module-level presenter or font (they come from the scaffold's ``page``)."""
    source = _source(entry)
    assert len(re.findall(r"with lesson_page\(", source)) == 1
    assert f'lesson_page("{entry.prefix}"' in source
    for call in ("setup_page(", "lesson_header(", "finish_page(", "st.stop("):
        assert call not in source, f"{entry.script} calls {call} itself"
    tree = ast.parse(source)
    module_names = {target.id for node in tree.body if isinstance(node, ast.Assign)
                    for target in node.targets if isinstance(target, ast.Name)}
    assert not module_names & {"presenter", "font"}


@pytest.mark.parametrize("entry", LESSONS, ids=lambda lesson: lesson.script)
def test_no_page_is_long(entry):
    assert len(_source(entry).splitlines()) <= MAX_PAGE_LINES


@pytest.mark.parametrize("entry", LESSONS[:4] + LESSONS[7:8],
                         ids=lambda lesson: lesson.script)
def test_sidebar_tab_heading_and_home_agree_on_the_title(entry):
    """The heading is "N · Title", and the sidebar's link and the home page's link read
    the same (the tab, "Title · Attention Lab", is set by the scaffold from the same
    entry). Five lessons that need no model; the others are drawn by the same code."""
    at = open_page(PAGES_DIR / entry.script)
    assert at.title[0].value == entry.label
    home = open_page(MAIN_SCRIPT)
    home_links = [link.proto.label for link in home.get("page_link")]
    assert entry.label in home_links
    assert home_links.count(entry.label) == 2  # the sidebar's and the home page's list
