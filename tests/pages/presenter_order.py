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


def above_first_figure(at: AppTest) -> list:
    """The elements of the main area before its first Plotly chart, in page order."""
    above = []
    for node in _walk(at.main):
        if node.type == "plotly_chart":
            return above
        above.append(node)
    raise AssertionError("the page draws no figure")
