"""What a lesson shows above its first figure, in page order (for presenter-mode tests)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

#: What may stand above the first figure in presenter mode: the title, the one-line goal,
#: the controls the teacher moves, section headers and one-line notes; "empty" is the
#: slot in which pages.ui.layout tells the teacher about link settings it ignored.
ALLOWED_ABOVE = {"title", "header", "subheader", "caption", "text_input", "text_area",
                 "select_slider", "slider", "selectbox", "radio", "number_input", "toggle",
                 "checkbox", "markdown", "warning", "info", "empty"}


def _walk(node):
    kids = getattr(node, "children", None)
    if kids is None:
        yield node
        return
    for k in sorted(kids) if isinstance(kids, dict) else range(len(kids)):
        yield from _walk(kids[k])


def is_figure(node) -> bool:
    """A Plotly chart, or a diagram of the lesson's model (the inline SVG of
    pages.ui.layout.show_diagram)."""
    return node.type == "plotly_chart" or (
        node.type == "markdown" and str(getattr(node, "value", "")).startswith("<svg"))


def above_first_figure(at: AppTest) -> list:
    """The elements of the main area before its first figure (a Plotly chart or a
    diagram), in page order."""
    above = []
    for node in _walk(at.main):
        if is_figure(node):
            return above
        above.append(node)
    raise AssertionError("the page draws no figure")


def not_allowed_above(at: AppTest, allowed: set[str] = ALLOWED_ABOVE) -> list[str]:
    """What stands above the first figure and is not a control or a heading: elements
    whose type is not in ``allowed``, and any markdown but the one-line goal (which must
    be there). Empty when the figure comes right after the goal and the controls."""
    found, goal = [], False
    for node in above_first_figure(at):
        value = str(getattr(node, "value", ""))
        if node.type == "markdown" and value.startswith("**Goal:**") and not goal:
            goal = True
        elif node.type not in allowed or node.type == "markdown":
            found.append(f"{node.type}: {value[:60]}")
    return found if goal else [*found, "no **Goal:** line"]
