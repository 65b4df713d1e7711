"""Finding a lesson's diagrams on a page that AppTest ran, reading their SVG, and running
one section of a page alone (for the tests/pages/test_diagrams_*.py files)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from streamlit.testing.v1.element_tree import Block

from pages.ui.figures.diagrams import WEIGHT_COLOUR

SVG = "{http://www.w3.org/2000/svg}"


def in_page_order(node):
    """``node`` and every block and element under it, in the order the page shows them."""
    yield node
    for _, child in sorted((getattr(node, "children", None) or {}).items()):
        yield from in_page_order(child)


def elements(node) -> list:
    """The elements under ``node``, blocks left out, in the order the page shows them."""
    return [n for n in in_page_order(node) if getattr(n, "children", None) is None]


def is_svg(node) -> bool:
    """Whether ``node`` is a diagram: the inline SVG of pages.ui.layout.show_diagram."""
    return str(getattr(node, "value", "")).startswith("<svg")


def first_index(at, test) -> int:
    """The place, among the main area's elements in page order, of the first for which
    ``test(element)`` is true."""
    return next(i for i, node in enumerate(elements(at.main)) if test(node))


def svgs(at) -> list[str]:
    """The markup of every diagram the page drew."""
    return [m.value for m in at.markdown if m.value.startswith("<svg")]


def one_diagram(at, mark: str) -> str:
    """The markup of the one diagram whose markup holds ``mark`` (asserts there is one)."""
    found = [markup for markup in svgs(at) if mark in markup]
    assert len(found) == 1, f"{len(found)} diagrams holding {mark!r}"
    return found[0]


def diagram_in(at, key: str) -> str:
    """The markup of the diagram in show_diagram's container ``diagram_<key>``."""
    under_root = list(in_page_order(at._tree))[1:]  # the root has no key
    block = next(b for b in under_root if isinstance(b, Block) and b.key == f"diagram_{key}")
    (markdown,) = [m for m in in_page_order(block) if getattr(m, "type", "") == "markdown"]
    assert markdown.value.startswith("<svg")
    return markdown.value


def text_alternative(markup: str) -> str:
    """The diagram's text alternative: its SVG's desc, unescaped."""
    return ET.fromstring(markup).find(f"{SVG}desc").text


def font_size(markup: str) -> str:
    """The font size the diagram's SVG sets for all its text, in px ("20" on a projector)."""
    return ET.fromstring(markup).get("font-size")


def weighted_widths(markup: str) -> list[float]:
    """The widths of the arrows drawn in the weight colour, in drawing order."""
    return [float(line.get("stroke-width")) for line in ET.fromstring(markup).iter(f"{SVG}line")
            if line.get("stroke") == WEIGHT_COLOUR]


def rerun_alone(at, fragment: str, monkeypatch) -> None:
    """Make ``at``'s next runs run the fragment named ``fragment`` alone, as the browser
    does when a widget of that section changes (AppTest reruns the whole script otherwise).
    Private Streamlit API: AppTest's fragment storage and the rerun request its script
    runner builds."""
    from streamlit.testing.v1 import local_script_runner

    (fragment_id,) = at._fragment_storage.resolve_target(fragment)
    rerun = local_script_runner.RerunData
    monkeypatch.setattr(local_script_runner, "RerunData",
                        lambda **kw: rerun(**kw, fragment_id=fragment_id))
