"""Page setup shared by every page: page config, presenter mode, the sidebar."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import streamlit as st

from .controls import URL

PRESENTER_KEY = "presenter"

# Presenter mode for a projector at 1280 × 720: every text a student reads is at least
# 18 px (the browser test tests/e2e/test_presenter.py measures it), captions are dark, and
# tables drawn on a canvas (st.dataframe) are zoomed. The CSS is ours; no user text ever
# goes through unsafe HTML.
PRESENTER_MIN_PX = 18
_PRESENTER_CSS = """
<style>
[data-testid="stMain"] { font-size: 20px; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMain"] [data-testid="stMarkdownContainer"] li,
[data-testid="stMain"] [data-testid="stMarkdownContainer"] td,
[data-testid="stMain"] [data-testid="stMarkdownContainer"] th,
[data-testid="stMain"] [data-testid="stMarkdownContainer"] code,
[data-testid="stMain"] [data-testid="stTable"] td,
[data-testid="stMain"] [data-testid="stTable"] th,
[data-testid="stMain"] [data-testid="stText"],
[data-testid="stMain"] [data-testid="stCode"] code,
[data-testid="stMain"] [data-testid="stCode"] pre { font-size: 20px !important; }
[data-testid="stMain"] [data-testid="stCaptionContainer"],
[data-testid="stMain"] [data-testid="stCaptionContainer"] p {
  font-size: 19px !important; color: #262730 !important; }
[data-testid="stMain"] h1 { font-size: 2.4rem !important; }
[data-testid="stMain"] h2 { font-size: 1.9rem !important; }
[data-testid="stMain"] h3 { font-size: 1.5rem !important; }
/* Widgets: labels, values, options, tabs, sliders, metrics, expanders, buttons. */
[data-testid="stMain"] [data-testid="stWidgetLabel"],
[data-testid="stMain"] [data-testid="stWidgetLabel"] p,
[data-testid="stMain"] input,
[data-testid="stMain"] textarea,
[data-testid="stMain"] [data-baseweb="select"] *,
[data-testid="stMain"] [data-testid="stSelectbox"] *,
[data-testid="stMain"] [data-testid="stMultiSelect"] *,
[data-testid="stMain"] [data-testid="stRadio"] label p,
[data-testid="stMain"] [data-testid="stCheckbox"] label p,
[data-testid="stMain"] [data-testid="stTab"] p,
[data-testid="stMain"] [data-testid="stSliderThumbValue"],
[data-testid="stMain"] [data-testid="stSliderTickBarMin"],
[data-testid="stMain"] [data-testid="stSliderTickBarMax"],
[data-testid="stMain"] [data-testid="stMetricLabel"] p,
[data-testid="stMain"] [data-testid="stMetricDelta"],
[data-testid="stMain"] [data-testid="stExpander"] summary p,
[data-testid="stMain"] [data-testid="stExpander"] summary span,
[data-testid="stMain"] [data-testid="stPageLink"] p,
[data-testid="stMain"] [data-testid="stPageLink"] span,
[data-testid="stMain"] button p,
[data-testid="stMain"] [data-testid="stAlert"] p { font-size: 20px !important; }
[data-testid="stMain"] [data-testid="stMetricValue"] { font-size: 2.4rem !important; }
[data-testid="stMain"] .katex { font-size: 1.35em !important; }
/* st.dataframe and st.data_editor draw their cells on a canvas at 14 px: zoom them. */
[data-testid="stMain"] [data-testid="stDataFrame"] { zoom: 1.3; }
</style>
"""


PAGES_DIR = Path(__file__).resolve().parents[1]
HOME_SCRIPT = "dashboard.py"
# Titles in the sidebar, by the page's URL name; a page not listed is named from its file
# (``8_Some_lesson.py`` -> "Some lesson"), so a new lesson appears without an edit here.
PAGE_TITLES = {
    "Worked_example": "Worked example",
    "Scaling": "Why divide by √d_k",
    "Masks": "Causal and padding masks",
    "Multi_head": "Multi-head attention",
    "Positional_encoding": "Positional encodings",
    "Scoring_and_seq2seq": "Scoring and seq2seq",
    "Cost": "The cost of attention",
}
_LESSON_FILE = re.compile(r"^(\d+)_(.+)\.py$")


def lessons() -> list[tuple[int, str, str, str]]:
    """Every lesson in ``pages/``, in order: (number, script path for st.page_link, URL
    name, title), found from the files named ``N_Name.py``."""
    found = []
    for script in PAGES_DIR.glob("*.py"):
        match = _LESSON_FILE.match(script.name)
        if match:
            number, name = int(match.group(1)), match.group(2)
            found.append((number, f"pages/{script.name}", name,
                          PAGE_TITLES.get(name, name.replace("_", " "))))
    return sorted(found)


def nav_label(number: int, title: str) -> str:
    """A lesson's name in the sidebar and on the home page: "4 · Multi-head attention"."""
    return f"{number} · {title}"


def _navigation() -> None:
    """Our own page list (Streamlit's is hidden in .streamlit/config.toml): "Home", then
    the lessons numbered."""
    st.page_link(HOME_SCRIPT, label="Home", icon=":material/home:")
    for number, script, _, title in lessons():
        st.page_link(script, label=nav_label(number, title))


def _presenter_requested() -> bool:
    """Presenter mode as this run will set it, known before the switch is drawn.

    The switch's kept value once it exists, else the link's ``presenter=true``: the page
    config (the sidebar's initial state) must be set before any element.
    """
    if PRESENTER_KEY in st.session_state:
        return bool(st.session_state[PRESENTER_KEY])
    return str(st.query_params.get(PRESENTER_KEY, "")).lower() == "true"


def presenter_mode() -> bool:
    """True while presenter mode is on (for helpers that hide secondary material)."""
    return bool(st.session_state.get(PRESENTER_KEY, False))


def setup_page(title: str, icon: str = "🔎") -> bool:
    """Configure the page and draw the shared sidebar; return True in presenter mode.

    Every page calls this first.
    """
    st.set_page_config(page_title=f"{title} · Attention Lab", page_icon=icon, layout="wide",
                       initial_sidebar_state="collapsed" if _presenter_requested() else "auto")
    with st.sidebar:
        _navigation()
        st.divider()
        presenter = st.toggle(
            "Presenter mode",
            key=PRESENTER_KEY,
            help="Large type and figures for a projector; hides secondary material.",
            bind="query-params",
            persist_state="session",
        )
        st.caption(
            "Every number is computed live by `attncore`. The link in the address bar "
            "holds this page's settings: copy it to share the exact view."
        )
    if presenter:
        st.html(_PRESENTER_CSS)
    return bool(presenter)


def figure_font(presenter: bool) -> int:
    """Font size of figure text: larger on a projector."""
    return 20 if presenter else 14


def lesson_header(title: str, goal: str) -> None:
    """The title and the one-line goal of a lesson."""
    st.title(title)
    st.markdown(f"**Goal:** {goal}")


def show_error(exc: ValueError) -> None:
    """Show a core ValueError to the student, kindly, and keep the page working."""
    st.error(f"That input can't be used: {exc}", icon="⚠️")


@contextmanager
def bad_input_stops_page() -> Iterator[None]:
    """Around core calls fed by the student's input: a ValueError is shown, then the page stops.

    The rest of the page depends on what failed, so it is not drawn; the controls above
    stay, and the next change of input reruns the page. Only ValueError (the core's
    "bad input") is caught: any other exception is a bug and must surface.
    """
    try:
        yield
    except ValueError as exc:
        show_error(exc)
        st.stop()


def bullet_list(title: str, items: list[str], *, expanded: bool = True,
                secondary: bool | None = None) -> None:
    """A titled list such as "What to notice" or "Try this".

    Secondary lists are not drawn in presenter mode; by default "Try this" lists are
    secondary (things for a student to do alone), "What to notice" lists are not.
    """
    if secondary is None:
        secondary = title.strip().lower().startswith("try this")
    if secondary and presenter_mode():
        return
    with st.expander(title, expanded=expanded):
        st.markdown("\n".join(f"- {item}" for item in items))


def practice_questions(prefix: str, questions: list[dict]) -> None:
    """2 to 4 practice questions with answers that can be revealed or checked.

    Each question is a dict with ``q`` (text), ``a`` (the answer, markdown) and
    optionally ``value`` (a number the student can type and check) with ``tol``.
    Not drawn in presenter mode: questions are for students working alone.
    """
    if presenter_mode():
        return
    st.subheader("Practice questions")
    for n, item in enumerate(questions, start=1):
        st.markdown(f"**{n}.** {item['q']}")
        if "value" in item:
            guess = st.number_input(
                "Your answer",
                key=f"{prefix}_pq{n}",
                value=None,
                format="%.4f",
                placeholder="type a number",
                **URL,
            )
            if guess is not None:
                if abs(guess - item["value"]) <= item.get("tol", 1e-3):
                    st.success("Right.")
                else:
                    st.warning("Not quite: look again, or reveal the answer below.")
        with st.expander(f"Answer {n}"):
            st.markdown(item["a"])
