"""pages.ui.layout.bad_input_stops_page: the core's ValueError is shown and stops the page;
any other exception is a bug and surfaces."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

PAGE = """
import streamlit as st
from pages.ui.layout import bad_input_stops_page

st.markdown("controls")
with bad_input_stops_page():
    raise {error}("d_k must be a whole number from 1 to 4; got 2.5")
st.markdown("the rest of the page")
"""


def run(error: str) -> AppTest:
    return AppTest.from_string(PAGE.format(error=error)).run()


def test_a_value_error_is_shown_and_the_rest_of_the_page_is_not_drawn():
    at = run("ValueError")
    assert not at.exception
    assert [e.value for e in at.error] == [
        "That input can't be used: d_k must be a whole number from 1 to 4; got 2.5"]
    assert [m.value for m in at.markdown] == ["controls"]


def test_any_other_exception_is_not_caught():
    at = run("TypeError")
    assert [e.message for e in at.exception] == [
        "d_k must be a whole number from 1 to 4; got 2.5"]
    assert not at.error
