"""The diagrams: drawn as SVG from the numbers given, every text escaped and none
overlapping another, highlights not by colour alone, links to the lessons."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pages.ui.figures.diagrams import (
    HIGHLIGHT_STROKE,
    Diagram,
    overlapping_texts,
    texts_outside_boxes,
)
from pages.ui.figures.models import course_map
from pages.ui.lessons import LESSONS

SVG = "{http://www.w3.org/2000/svg}"


def parse(diagram: Diagram) -> ET.Element:
    return ET.fromstring(diagram.svg())


def test_a_token_is_drawn_as_text_never_as_markup():
    d = Diagram("<script>alert(1)</script> & co", 14)
    d.box(0, 0, 30, 2, "<b>bold</b> & <script>x</script>")
    markup = d.svg()
    assert "<script>" not in markup and "<b>" not in markup
    root = ET.fromstring(markup)  # well-formed XML: the escaping held
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert texts == ["<b>bold</b> & <script>x</script>"]
    assert root.find(f"{SVG}title").text == "<script>alert(1)</script> & co"


def test_a_highlight_is_an_outline_and_bold_text_not_a_colour_alone():
    d = Diagram("t", 14)
    d.box(0, 0, 10, 2, "plain")
    d.box(0, 3, 10, 2, "chosen", highlight=True)
    rects = parse(d).findall(f"{SVG}rect")
    plain, chosen = (float(r.get("stroke-width")) for r in rects)
    assert chosen >= 2.5 * plain
    assert rects[1].get("stroke") == HIGHLIGHT_STROKE
    bold = [t.get("font-weight") for t in parse(d).iter(f"{SVG}text")]
    assert bold == [None, "700"]


def test_an_arrows_width_follows_its_weight():
    d = Diagram("t", 14)
    a, b, c = d.box(0, 0, 4, 2, "a"), d.box(10, 0, 4, 2, "b"), d.box(10, 4, 4, 2, "c")
    d.arrow(a, b, weight=0.0)
    d.arrow(a, c, weight=1.0)
    widths = [float(line.get("stroke-width")) for line in parse(d).iter(f"{SVG}line")]
    # 0.75 px + 7 px × weight: 0.75 for 0, 7.75 for 1
    assert widths == [0.75, 7.75]
    with pytest.raises(ValueError, match="weight must be in 0..1"):
        d.arrow(a, b, weight=1.5)


def test_the_layout_scales_with_the_font_and_nothing_moves_against_the_text():
    small, large = (parse(course_map(font)) for font in (14, 20))
    assert float(large.get("width")) / float(small.get("width")) == pytest.approx(20 / 14,
                                                                                  rel=1e-3)


def test_the_text_alternative_walks_the_diagram_in_order_with_its_numbers():
    d = Diagram("Two steps", 14)
    x = d.box(0, 0, 8, 2, "X (3 × 4)")
    y = d.box(12, 0, 8, 2, "Y")
    d.arrow(x, y, weight=0.25)
    assert d.describe() == "Two steps. X (3 × 4); Y; X (3 × 4) → Y (weight 0.25)."


def test_the_course_map_links_every_lesson_and_its_texts_do_not_overlap():
    d = course_map(20)
    assert overlapping_texts(d) == [] and texts_outside_boxes(d) == []
    hrefs = {a.get("href") for a in parse(d).iter(f"{SVG}a")}
    assert hrefs == {lesson.url_name for lesson in LESSONS}
    # a link is named for the keyboard and the screen reader
    assert all(a.get("aria-label") for a in parse(d).iter(f"{SVG}a"))


def test_overlapping_texts_are_found():
    d = Diagram("t", 14)
    d.label(5, 5, "a long label here")
    d.label(6, 5.2, "another")
    assert overlapping_texts(d) == [("a long label here", "another")]


def test_the_markup_is_one_html_block_for_markdown():
    """A blank line or a line indented by four spaces would end Markdown's HTML block."""
    markup = course_map(14).svg()
    assert "\n" not in markup
    assert re.match(r"^<svg [^>]*>", markup)


def test_the_readme_shows_the_course_map_as_the_home_page_draws_it():
    """docs/course_map.svg is written by `python -m pages.ui.figures.models`."""
    drawn = (Path(__file__).resolve().parents[2] / "docs" / "course_map.svg").read_text()
    assert drawn.strip() == course_map(14).svg()
