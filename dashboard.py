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
from pages.ui.glossary import show_glossary
from pages.ui.layout import figure_font, finish_page, lessons, nav_label, setup_page, show_figure
from pages.ui.numbers import difference_text


def home() -> None:
    """The home page."""
    presenter = setup_page("Home", "🔎")

    st.title("Attention Lab")
    st.markdown(
        "**Attention** lets each token of a sequence look at the tokens it may see (all of "
        "them, itself included; under a causal mask, itself and the tokens before it) and "
        "decide how much of each to take in. Each token asks a question (its **query** q), "
        "offers a label (its **key** k) and carries content (its **value** v). A query is "
        "compared with every key it may see; the scores become weights with a softmax; the "
        "output is the weighted average of the values."
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
    # What each lesson covers, by its URL name; a lesson added to pages/ appears here by itself
    # (named from its file) until it gets a line.
    WHAT = {
        "Why_attention": "the problem attention was invented for: a recurrent encoder-decoder "
                         "squeezes a string into one vector and fails as it grows; with attention "
                         "it holds. Both trained live.",
        "Worked_example": "attention for 3 tokens computed step by step, with every number "
                          "written out; check your own hand calculation.",
        "Scaling": "the spread of dot products grows with d_k; unscaled, a large d_k saturates "
                   "the softmax, which then passes little gradient back; 1/d_k flattens it "
                   "towards uniform; 1/√d_k keeps the scores in a useful range.",
        "Masks": "a padded batch, masks as matrices, the fully masked row, a test that the "
                 "causal mask leaks nothing from the future, and common pitfalls shown live.",
        "Multi_head": "the shapes step by step, each head's own slice of the weights, designed "
                      "heads, statistics per head, and cross-attention between two sentences.",
        "Positional_encoding": "the sinusoidal table, similarity by offset, the shift rotation, "
                               "why attention needs positions, and learned, relative, RoPE and "
                               "ALiBi side by side.",
        "Scoring_and_seq2seq": "dot, scaled dot, general and additive scores; Bahdanau and Luong "
                               "step by step; local and hard attention.",
        "Cost": "time and memory against n measured live on this machine, chunked queries, and "
                "vectorised heads against a loop.",
        "Attention_that_learns": "small models trained live in NumPy: attention pooling finds the "
                                 "sentiment words, alignment emerges from translation, induction "
                                 "heads form, and what bad settings do to attention.",
        "Pretrained_model": "all-MiniLM-L6-v2's 72 heads run by our own NumPy code on your "
                            "sentence, one head by hand, the block around attention, heads "
                            "switched off, sentence similarity.",
        "Language_model": "SmolLM2, a real 30-layer decoder run by our own NumPy code: the next "
                          "token and how it is drawn, its 270 heads, the causal mask checked, "
                          "induction heads found and switched off, one head by hand.",
        "Inference": "on the same model, measured live: the KV cache, grouped-query heads, a "
                     "sliding window with attention sinks, and FlashAttention's online softmax.",
        "Attention_for_the_answer": "change one word and find, causally, which layers and heads "
                                    "carry the answer: the logit lens, the answer split into "
                                    "every head's part, activation patching, attention knockout.",
    }
    for number, script, name, title in lessons():
        st.page_link(script, label=nav_label(number, title))
        if name in WHAT:
            st.caption(WHAT[name])

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
