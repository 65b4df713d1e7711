"""The page links (sidebar and home page): each leads where it says, opened in place, in a
new tab or copied, and reads as its label alone."""

from __future__ import annotations

from urllib.parse import urljoin

import pytest
from conftest import run_page

from pages.ui.lessons import LESSONS

APP = "http://classroom.local:8501/"  # any address of the app: links are relative to it
WHERE = {"Home": APP} | {lesson.label: urljoin(APP, lesson.url_name)
                         for lesson in LESSONS}


@pytest.mark.parametrize("script, url", [("dashboard.py", APP),
                                         ("pages/3_Masks.py", urljoin(APP, "Masks"))])
def test_links_lead_where_they_say(script, url):
    """A browser resolves each link's address against the page it is on (an empty one
    gives that page again, which "Home" did on every lesson)."""
    at = run_page(script)
    links = at.get("page_link")
    assert links, f"{script} draws no page links"
    went = {link.proto.label: urljoin(url, link.proto.page) for link in links}
    assert went == {label: WHERE[label] for label in went}
    assert "Home" in went and set(WHERE) - {"Home"} <= set(went)


@pytest.mark.parametrize("script", ["dashboard.py", "pages/3_Masks.py"])
def test_a_link_reads_as_its_label_alone(script):
    """No Material icon: one is drawn from its name, which is text in the link ("home
    Home" when copied, "school 1 · Worked example" on the home page)."""
    at = run_page(script)
    assert [link.proto.label for link in at.get("page_link") if link.proto.icon] == []
