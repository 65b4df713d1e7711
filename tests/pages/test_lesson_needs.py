"""What each lesson needs first: the registry's ``needs``, said on the home page under each
lesson's summary, and the home page's lesson links drawn no smaller than those lines."""

from __future__ import annotations

import re

import pytest
from conftest import open_page

from pages.ui import layout
from pages.ui.lessons import LESSONS, Lesson
from pages.ui.page import fill

BY_NUMBER = {lesson.number: lesson for lesson in LESSONS}


def test_every_lesson_says_what_it_needs_and_needs_only_earlier_lessons():
    for lesson in LESSONS:
        assert lesson.needs, f"lesson {lesson.number} says nothing of what it needs"
        assert all(n < lesson.number for n in lesson.needed_lessons), lesson.number
    assert set(BY_NUMBER[12].needed_lessons) == {9, 10}
    assert BY_NUMBER[0].needed_lessons == ()
    assert any("recurrent networks" in need for need in BY_NUMBER[0].needs)


@pytest.mark.parametrize("needs, said", [
    ((9, 10), "Needs first: lessons 9 and 10."),
    ((1,), "Needs first: lesson 1."),
    ((2, 4, 6), "Needs first: lessons 2, 4 and 6."),
    (("a little about recurrent networks",), "Needs first: a little about recurrent networks."),
    ((0, "some algebra"), "Needs first: lesson 0 and some algebra."),
    ((), ""),
])
def test_the_needs_are_said_in_words(needs, said):
    lesson = Lesson(12, "12_X.py", "X", "x", "🎯", goal="g", summary="s", needs=needs)
    assert lesson.needs_text == said


@pytest.mark.parametrize("needs", [(12,), (13,), (-1,), ("",), (None,)])
def test_a_lesson_can_need_only_an_earlier_lesson_or_a_text(needs):
    with pytest.raises(ValueError):
        Lesson(12, "12_X.py", "X", "x", "🎯", goal="g", summary="s", needs=needs)


def _main_elements(at) -> list[tuple[str, str]]:
    """The home page's main area in order: (kind, text) of page links and captions."""
    found = []

    def walk(node):
        kind = getattr(node, "type", "") or type(node).__name__
        if kind in ("page_link", "PageLink"):
            found.append(("link", node.proto.label))
        elif type(node).__name__ == "Caption":
            found.append(("caption", node.value))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at.main)
    return found


def test_the_home_page_says_under_each_summary_what_the_lesson_needs():
    elements = _main_elements(open_page("dashboard.py"))
    for lesson in LESSONS:
        at = elements.index(("link", lesson.label))
        # the summary, then on the next line (a markdown line break) what it needs
        assert elements[at + 1] == ("caption", f"{fill(lesson.summary)}  \n"
                                               f"{lesson.needs_text}"), lesson.number
    twelve = elements[elements.index(("link", LESSONS[12].label)) + 1][1]
    assert twelve.endswith("  \nNeeds first: lessons 9 and 10.")


def _rem(css: str, selector_part: str) -> float:
    """The font size (in rem) a constant style sheet gives the rule naming ``selector_part``."""
    rule = re.search(re.escape(selector_part) + r"[^{]*\{([^}]*)\}", css)
    assert rule, selector_part
    size = re.search(r"font-size:\s*([\d.]+)rem", rule.group(1))
    assert size, rule.group(1)
    return float(size.group(1))


def test_the_lesson_links_are_not_smaller_than_the_lines_under_them():
    # Streamlit 1.67 draws a caption at its theme's small size, 0.875rem (14 px), and a
    # page link's label at the same 0.875rem in a thinner, darker line; the link is set at
    # body size here, in bold.
    caption_rem = 0.875
    assert _rem(layout._ACCESSIBLE_CSS, '[data-testid="stPageLink"] p') >= caption_rem
    assert layout.PAGE_LINK_REM >= caption_rem
    # on a projector, links 20 px against captions 19 px
    presenter = layout._PRESENTER_CSS
    link = re.search(r'\[data-testid="stPageLink"\] span[^{]*\{\s*font-size:\s*(\d+)px',
                     presenter)
    caption = re.search(r'stCaptionContainer"\] p \{\s*font-size:\s*(\d+)px', presenter)
    assert link and caption and int(link.group(1)) >= int(caption.group(1))
