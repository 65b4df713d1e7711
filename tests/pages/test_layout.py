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


# --------------------------------------------------------------------------------------
# Links with settings a page does not use: the teacher is told which were ignored.
# --------------------------------------------------------------------------------------
LINKED_PAGE = """
import streamlit as st
from pages.ui.controls import URL
from pages.ui.layout import finish_page, setup_page

setup_page("Test")
st.slider("Tokens", 2, 8, 3, key="t_tokens", **URL)
st.toggle("Causal", key="t_causal", **URL)
finish_page()
"""


def linked(**params) -> AppTest:
    at = AppTest.from_string(LINKED_PAGE)
    for name, value in params.items():
        at.query_params[name] = value
    return at.run()


def test_a_link_the_page_understands_gives_no_note():
    # 5 and true are taken; 3 is the default, which Streamlit leaves out of the link.
    at = linked(t_tokens="5", t_causal="true")
    assert not at.exception and not at.info
    assert not linked(t_tokens="3").info


def test_unknown_names_and_refused_values_are_named_once():
    at = linked(t_tokens="banana", zzz="1", t_causal="true")
    assert not at.exception
    assert [i.value for i in at.info] == [
        "This link has settings this page does not know or could not use: t\\_tokens=banana, "
        "zzz=1. They were ignored: the page opened with its defaults for them."]
    assert at.slider(key="t_tokens").value == 3 and at.toggle(key="t_causal").value
    # The note stays while the teacher works on the page.
    at.slider(key="t_tokens").set_value(4).run()
    assert len(at.info) == 1


def test_ignored_link_params_compares_with_what_the_widgets_hold():
    from pages.ui.layout import ignored_link_params

    link = {"a": ["5"], "b": ["x"], "c": ["TRUE"], "d": ["2", "9"], "e": ["1"], "f": ["7"]}
    now = {"a": ["5"]}  # a kept; the others dropped from the link by Streamlit
    values = {"a": 5, "b": "y", "c": True, "d": 9, "e": 2.0}
    bound = {"a", "b", "c", "d", "e"}  # f is no widget of the page
    # b: "x" refused (the widget holds "y"); c: TRUE is True; d: the last value 9 is used;
    # e: 1 is not 2.0; f: unknown.
    assert ignored_link_params(link, now, bound.__contains__, values.get) == ["b", "e", "f"]
