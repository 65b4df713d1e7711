"""Attention Lab, the home page: what attention is, the formula, the map of lessons.

``streamlit run dashboard.py`` first reads this file for ``app`` and imports it as a module
(``__name__`` is then "dashboard"): the server it starts prepares the lessons before it
takes its first visitor (pages/ui/server_start.py). Each visit then runs the file as the
home page (``__name__`` is "__main__").
"""

import numpy as np
import streamlit as st

from attncore import scaled_dot_product_attention
from attncore.text import worked_example
from pages.ui import server_start
from pages.ui.figures import describe_matrix, matrix_heatmap
from pages.ui.figures.models import course_map
from pages.ui.glossary import show_glossary, term_link
from pages.ui.layout import figure_font, finish_page, setup_page, show_diagram, show_figure
from pages.ui.lessons import LESSONS
from pages.ui.numbers import difference_text
from pages.ui.page import fill


def home() -> None:
    """The home page."""
    presenter = setup_page("Home", "🔎")

    st.title("Attention Lab")
    st.markdown(
        "**Attention** lets each token of a sequence look at the tokens it may see (all of "
        f"them, itself included; under a {term_link('causal-mask', 'causal mask')}, itself "
        "and the tokens before it) and decide how much of each to take in. Each token asks a "
        "question (its **query** q), offers a label (its **key** k) and carries content (its "
        "**value** v). A query is compared with every key it may see; the scores become "
        f"weights with a {term_link('softmax', 'softmax')}; the output is the weighted "
        "average of the values. Stacked as rows, the queries, keys and values of all the "
        f"tokens make the matrices {term_link('QKV', 'Q, K and V')}, and "
        f"{term_link('d_k', 'd_k')} is the number of components of a query or key:"
    )
    st.latex(r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}"
             r"\right) V")

    # A live example, computed here like every number in the app.
    example = worked_example("textbook")
    trace = scaled_dot_product_attention(example.q, example.k, example.v)
    left, right = st.columns([1, 1] if presenter else [3, 2])
    with left:
        st.markdown(
            f"For the textbook example of lesson 1 (3 tokens, d_k = {trace.d_k}), these are the "
            "weights: row i says how much query i takes from each key. Each row sums to 1: "
            "the largest deviation here is "
            f"{difference_text(np.max(np.abs(trace.weights.sum(axis=1) - 1)), rounding=True)}."
        )
    with right:
        show_figure(
            matrix_heatmap(trace.weights, example.tokens, example.tokens,
                           title="Attention weights, textbook example", decimals=3,
                           font_size=figure_font(presenter)),
            key="home_fig_weights",
            alt="Attention weights of the textbook example. " + describe_matrix(
                trace.weights, example.tokens, example.tokens),
        )

    st.header("The lessons")
    st.markdown("Where each lesson sits in a Transformer; every part that has a lesson links "
                "to it.")
    show_diagram(course_map(figure_font(presenter)), key="home_diagram_map")
    for lesson in LESSONS:
        st.page_link(lesson.page_path, label=lesson.label)
        # what the lesson needs first, on its own line under the summary
        st.caption("  \n".join(filter(None, [fill(lesson.summary), lesson.needs_text])))

    if not presenter:  # for the teacher preparing a class, not for the screen
        st.header("Using it in class")
        st.markdown(
            "- **Presenter mode** (switch in the sidebar, or `?presenter=true` in a link) enlarges "
            "type and figures for a projector, closes the sidebar and hides secondary material.\n"
            "- **Links hold the settings**: every setting is stored in the address bar. Set up a "
            "view the night before, copy the link into your slides, and it opens exactly so.\n"
            "- **Exports**: every lesson downloads the data of its figures as CSV, and its "
            "computation as JSON (lessons 9 and 10 the model's whole trace as `.npz` instead).\n"
            "- **Offline**: nothing is fetched from the internet; every number is computed on this "
            "machine by `attncore`, our small NumPy package."
        )
    if not presenter:
        show_glossary()
    finish_page()


if __name__ == "__main__":  # a visit: Streamlit runs this file as the page
    home()
else:  # `streamlit run dashboard.py` importing this file to find the app
    app = st.App(__file__, lifespan=server_start.lifespan)
