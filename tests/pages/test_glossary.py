"""The glossary: one entry per symbol and term, reachable from every lesson, and every link
a page makes to it leads to an entry that exists."""

from __future__ import annotations

import re

import pytest
from conftest import PAGES_DIR, ROOT, open_page

from attncore.analysis import NEARLY_ONE_HOT, nearly_one_hot
from pages.ui import glossary
from pages.ui.lessons import GLOSSARY_HREF, HOME_HREF, LESSONS

# term_link("key") and term_link("key", "text") as the pages write them.
_LINK_CALL = re.compile(r"""term_link\(\s*["']([^"']+)["']""")


def _page_sources() -> dict[str, str]:
    scripts = [ROOT / "dashboard.py", *sorted(PAGES_DIR.glob("*.py")),
               *sorted((PAGES_DIR / "ui").rglob("*.py"))]
    return {path.name: path.read_text(encoding="utf-8") for path in scripts}


def test_every_link_a_page_writes_names_an_entry():
    """A page that linked a term the glossary lacks would raise KeyError on the projector;
    this finds it without running the page."""
    linked = {(name, key) for name, text in _page_sources().items()
              for key in _LINK_CALL.findall(text)}
    assert [pair for pair in linked if pair[1] not in glossary.ALL] == []


def test_entries_have_distinct_keys_and_anchors():
    entries = glossary.SYMBOLS + glossary.TERMS
    assert len({e.key for e in entries}) == len(entries)
    assert len({glossary.anchor(e.key) for e in entries}) == len(entries)
    assert all(re.fullmatch(r"glossary-[a-z0-9_-]+", glossary.anchor(e.key)) for e in entries)


def test_a_link_opens_the_home_page_at_its_entry():
    assert glossary.term_link("entropy", "entropy") == (
        f"[entropy]({HOME_HREF}#glossary-entropy)")
    assert glossary.term_link("tau") == f"[τ]({HOME_HREF}#glossary-tau)"
    with pytest.raises(KeyError):
        glossary.term_link("no such term")


def test_the_home_page_draws_every_entry_under_its_anchor():
    at = open_page("dashboard.py")
    anchors = {h.proto.anchor for h in at.subheader}
    assert {glossary.anchor(e.key) for e in glossary.SYMBOLS + glossary.TERMS} <= anchors
    assert "glossary" in {h.proto.anchor for h in at.header}


def test_the_glossary_stays_off_the_projector():
    at = open_page("dashboard.py", presenter="true")
    assert not [h for h in at.header if h.proto.anchor == "glossary"]


def test_one_hot_means_what_the_pages_compute():
    """The glossary's "nearly one-hot" is the threshold attncore tests rows against."""
    assert f"above {NEARLY_ONE_HOT:g}" in glossary.ALL["one-hot"].meaning
    # softmax([5, 0]) = 1 / (1 + e^-5) = 0.99331 > 0.99; softmax([4, 0]) = 0.98201 < 0.99.
    assert nearly_one_hot([[0.99331, 0.00669], [0.98201, 0.01799]]).tolist() == [True, False]


@pytest.mark.parametrize("script", [lesson.page_path for lesson in LESSONS][:3])
def test_a_lesson_links_the_glossary_under_its_goal(script):
    text = " ".join(element.value for element in open_page(script).caption)
    assert f"]({GLOSSARY_HREF})" in text
