"""The scaffold every lesson page is written in: ``with lesson_page("cost") as page:``.

It sets the page up from the lesson's entry in ``pages.ui.lessons`` (tab title, sidebar,
presenter mode, the heading and the goal), hands the page what its functions need
(``page.presenter``, ``page.font``) instead of module-level globals, offers one way to
make downloads, and ends with the note about the link's unused settings. A page that
must stop early calls ``stop_page()`` (``pages.ui.layout``), which gives that note too.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from .glossary import term_link
from .layout import figure_font, finish_page, lesson_header, setup_page
from .lessons import Lesson, lesson
from .live import lesson_downloads


class _GlossaryLinks(string.Formatter):
    """Fills a goal: ``{key:text}`` becomes a link to the glossary entry ``key`` reading
    ``text``; any other field is taken from the page's own values."""

    def __init__(self, values: dict) -> None:
        self.values = values

    def get_value(self, key, args, kwargs):
        return self.values[key] if key in self.values else _Term(key)

    def format_field(self, value, format_spec):
        if isinstance(value, _Term):
            return term_link(value.key, format_spec or None)
        return format(value, format_spec)


@dataclass(frozen=True)
class _Term:
    key: str


def fill(text: str, **values) -> str:
    """A registry text (goal or summary) as markdown, its glossary fields as links and its
    other fields (``{model}``) from ``values``."""
    return _GlossaryLinks(values).format(text)


@dataclass(frozen=True)
class Page:
    """What a lesson's functions take from the page: its entry, presenter mode and the
    figures' font size."""

    lesson: Lesson
    presenter: bool
    font: int

    def key(self, name: str) -> str:
        """A widget key of this page: ``page.key("heads")`` is ``cost_heads``."""
        return f"{self.lesson.prefix}_{name}"

    def downloads(self, results: dict, matrices: Callable[[dict], dict],
                  trace: Callable[[dict], dict], note: str = "") -> None:
        """The page's "Download" section, for what its sections kept in ``results``
        (``pages.ui.live.keep`` and ``offer_downloads``): ``matrices(results)`` gives name
        -> (matrix, row labels, column labels) for the CSV, ``trace(results)`` the JSON;
        ``note``, if given, says what they hold. Built when a button is clicked, from what
        the page shows at that moment."""
        lesson_downloads(self.lesson.prefix, results, matrices, trace, note)


@contextmanager
def lesson_page(prefix: str, *, header: bool = True) -> Iterator[Page]:
    """Set up the lesson whose key prefix is ``prefix``, run the page's body, then give
    the note about the link's unused settings.

    ``header=False`` leaves the heading and goal to the page (``write_header``), for a goal
    with fields of its own that a control decides (lesson 10's ``{model}``).
    """
    entry = lesson(prefix)
    presenter = setup_page(entry.title, entry.icon, prefix=entry.prefix)
    page = Page(entry, presenter, figure_font(presenter))
    if header:
        lesson_header(entry.label, fill(entry.goal))
    yield page
    finish_page()


def write_header(page: Page, **goal_values) -> None:
    """The heading and goal, for a page whose goal has fields of its own: call it once
    they are known, inside a container made before them so that it is drawn first."""
    lesson_header(page.lesson.label, fill(page.lesson.goal, **goal_values))
