"""Page setup shared by every page: page config, presenter mode, the sidebar."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import streamlit as st

from .controls import URL
from .figures.access import figure_csv
from .labels import md_escape
from .lessons import GLOSSARY_HREF, HOME_HREF, HOME_SCRIPT, LESSONS

__all__ = ["GLOSSARY_HREF", "HOME_HREF"]  # where the glossary and home are, for links

PRESENTER_KEY = "presenter"
ALT_KEY_PREFIX = "alt_"  # the container of a figure's text alternative: alt_<figure key>

# Presenter mode for a projector at 1280 × 720: every text a student reads is at least
# 18 px (tests/e2e/presenter_metrics.py measures it in the browser), captions are dark, and
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
  font-size: 19px !important; color: #262730 !important; opacity: 1 !important; }
/* Less empty space above the title: the first figure must fit on the first screen. */
[data-testid="stMainBlockContainer"] { padding-top: 3rem !important; }
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
/* A figure's text alternative (show_figure) stays for screen readers, out of sight: on a
   projector the figure speaks for itself. */
[data-testid="stMain"] [class*="st-key-alt_"] {
  position: absolute !important; width: 1px !important; height: 1px !important;
  overflow: hidden !important; clip-path: inset(50%) !important;
  white-space: nowrap !important; }
</style>
"""

# Every page, in both modes (WCAG 2.1 AA, checked by tests/e2e/test_accessibility.py):
# - text at least 4.5:1 against its background. Streamlit draws captions at 60% of its
#   text colour (#828180 on white, 3.9:1) and the labels of disabled controls at 40%
#   (#acabaa, 2.3:1); the grey here is 6.3:1 on white and 5.6:1 on the sidebar's grey;
# - a clear focus ring on buttons, links and expanders (Streamlit's is a faint tint of
#   the border) and on the boxes that scroll, made focusable by _SCROLLERS_JS.
# Constant CSS, no user text.
CAPTION_GREY = "#62605d"
# A page link in the page itself (the home page's list of lessons) is drawn in the size of
# body text and bold, never smaller than the grey caption under it (Streamlit draws both
# at 0.875rem, the link in a thinner, darker line).
PAGE_LINK_REM = 1.0
FOCUS_BLUE = "#1c5fb8"  # 6.1:1 on white: a focus ring is seen on any background here
_ACCESSIBLE_CSS = f"""
<style>
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p,
[data-testid="stWidgetLabel"][disabled], [data-testid="stWidgetLabel"][disabled] p,
[data-testid="stSliderThumbValue"][disabled] p {{
  color: {CAPTION_GREY} !important; opacity: 1 !important; }}
[data-scrolls]:focus-visible, [class*="st-key-diagram_"] svg a:focus-visible,
:is([data-testid="stMain"], [data-testid="stSidebar"])
  :is(button, a, summary):focus-visible {{
  outline: 2px solid {FOCUS_BLUE} !important; outline-offset: 2px; }}
[class*="st-key-diagram_"] svg a:focus-visible rect {{
  stroke: {FOCUS_BLUE} !important; stroke-width: 5px !important; }}
[data-testid="stMain"] [data-testid="stPageLink"] p {{
  font-size: {PAGE_LINK_REM}rem; font-weight: 600; }}
</style>
"""
# A box that scrolls (a long table in a box of fixed height, a formula wider than its
# column) can be scrolled with the keyboard only if it can take the focus (WCAG 2.1.1):
# each one that overflows, by a single pixel too (axe-core counts that as scrolling: a
# formula one pixel wider than its column was missed with a pixel of slack), gets
# tabindex 0 and a name that says so, and loses them when it no longer overflows.
# Checked within 100 ms of anything that can change an overflow: content added or
# changed, a box or its content resized with no element added (the sidebar closing, the
# window resized, a font arriving; a check on added elements alone left such a box unmarked, as
# tests/e2e/test_accessibility.py shows), and fonts loading. A constant script, no user
# text.
_SCROLLERS_JS = """
<script>
(() => {
  if (window.__attentionLabScrollers) return;
  window.__attentionLabScrollers = true;
  const boxes = '[data-testid="stMain"] :is(.katex-display, [data-testid="stVerticalBlock"]'
    + '[overflow="auto"], [data-testid="stTable"], pre)';
  const watched = new WeakSet();
  let pending = null;
  const later = () => {  // at most every 100 ms: each check makes the browser lay out
    if (pending === null) pending = setTimeout(() => { pending = null; mark(); }, 100);
  };
  const sizes = new ResizeObserver(later);
  const mark = () => {
    for (const el of document.querySelectorAll(boxes)) {
      if (!watched.has(el)) {
        watched.add(el);
        sizes.observe(el);
        if (el.firstElementChild) sizes.observe(el.firstElementChild);
      }
      const scrolls = el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight;
      if (scrolls && !el.hasAttribute("data-scrolls")) {
        el.setAttribute("data-scrolls", "");
        el.setAttribute("tabindex", "0");
        el.setAttribute("role", "region");
        el.setAttribute("aria-label", el.classList.contains("katex-display")
          ? "Formula, wider than the page: scroll with the arrow keys"
          : "Box that scrolls: scroll with the arrow keys");
      } else if (!scrolls && el.hasAttribute("data-scrolls")) {
        for (const name of ["data-scrolls", "tabindex", "role", "aria-label"]) {
          el.removeAttribute(name);
        }
      }
    }
  };
  new MutationObserver(later).observe(document.body,
    {childList: true, subtree: true, characterData: true});
  window.addEventListener("resize", later);
  if (document.fonts) {
    document.fonts.addEventListener("loadingdone", later);
    document.fonts.ready.then(later);
  }
  mark();
})();
</script>
"""


# The browser's chart library (Plotly, 4.7 MB of JavaScript in Streamlit's bundle) is
# loaded only when the first chart arrives, and evaluating it holds the browser's one
# thread for about 0.85 s on this machine, during which nothing else is drawn. Every page
# but home's text shows charts, so the library is asked for as soon as the page's first
# element arrives, while the server is still computing the rest: the same file, so
# Streamlit's own request later finds it evaluated. The file's name carries a hash that
# changes with Streamlit's version; found on disk here, and the script does nothing when
# it is not there. A constant script, no user text.
def _chart_library_js() -> str:
    static = Path(st.__file__).parent / "static" / "static" / "js"
    found = sorted(p.name for p in static.glob("PlotlyChart.*.js"))
    if len(found) != 1:
        return ""
    return f"""
<script>
(() => {{
  if (window.__attentionLabCharts) return;
  window.__attentionLabCharts = true;
  const index = document.querySelector('script[type="module"][src*="/static/js/index."]');
  if (index) import(new URL("./{found[0]}", index.src).href).catch(() => {{}});
}})();
</script>
"""


_CHART_LIBRARY_JS = _chart_library_js()

def _navigation() -> None:
    """Our own page list (Streamlit's is hidden in .streamlit/config.toml): "Home", then
    the lessons numbered. No icons: a Material icon is drawn from its name, which is text
    in the link ("home Home" when copied or read by a browser)."""
    from streamlit.elements.lib.layout_utils import create_layout_config
    from streamlit.proto.PageLink_pb2 import PageLink
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or Path(ctx.main_script_path).name != HOME_SCRIPT:
        return  # a script run on its own (a test from a string): no app pages to link
    # st.page_link to the main script writes its URL path, "", as the link's address,
    # and a browser resolves "" to the page it is on: "Home" opened in a new tab or
    # copied gave the lesson. So this one link is the element st.page_link would send,
    # with the home page's own address (private Streamlit API: the page tier's
    # test_links_lead_where_they_say checks it).
    home = PageLink(page=HOME_HREF, label="Home",
                    page_script_hash=ctx.pages_manager.main_script_hash)
    st.sidebar._enqueue("page_link", home, layout_config=create_layout_config(width="stretch"))
    for lesson in LESSONS:
        st.page_link(lesson.page_path, label=lesson.label)


# Streamlit keeps a reader's own choice to open the sidebar (in the browser's local
# storage) above the page's initial state: in presenter mode the sidebar is closed again
# once each time a page opens (a constant script, no user text).
_CLOSE_SIDEBAR_JS = """
<script>
setTimeout(() => {
  const doc = document;
  const bar = doc.querySelector('[data-testid="stSidebar"]');
  if (bar && bar.getAttribute("data-collapsed") === "false") {
    const button = doc.querySelector('[data-testid="stSidebarCollapseButton"] button')
      || doc.querySelector('[data-testid="stSidebarCollapseButton"]');
    if (button) button.click();
  }
}, 300);
</script>
"""


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


def setup_page(title: str, icon: str = "🔎", prefix: str | None = None) -> bool:
    """Configure the page and draw the shared sidebar; return True in presenter mode.

    Every page calls this first (a lesson through ``pages.ui.page.lesson_page``, which
    passes its key ``prefix``: a link's parameter with that prefix belongs to the page).
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
    # After the links: evaluating the chart library holds the browser for most of a
    # second, and the sidebar's links must be drawn (and focusable) before it.
    if _CHART_LIBRARY_JS:
        st.sidebar.html(_CHART_LIBRARY_JS, unsafe_allow_javascript=True)
    turned_on = presenter and (_opening_run() or not st.session_state.get("_presenter_before"))
    st.session_state["_presenter_before"] = bool(presenter)
    st.html(_ACCESSIBLE_CSS + (_PRESENTER_CSS if presenter else ""))
    st.sidebar.html(_SCROLLERS_JS, unsafe_allow_javascript=True)
    if turned_on:
        st.sidebar.html(_CLOSE_SIDEBAR_JS, unsafe_allow_javascript=True)
    _watch_link(prefix)
    _rerun_after_reconnect()
    return bool(presenter)


@st.fragment(run_every=3600)
def _rerun_after_reconnect() -> None:
    """Draws nothing; its timer makes a reconnected browser run the page again.

    When its WebSocket reconnects, Streamlit's browser code (1.67) asks for a new run only
    if a fragment of the page reruns on a timer (or a run was under way); otherwise it
    trusts the server to have kept the session. Behind HAProxy (deploy/), a student whose
    server process died reconnects to another process, which never saw that session: the
    page would stay drawn but dead (its downloads failing) until the next click. With a
    timed fragment on every page, the new process runs the page at once, from the link's
    settings and the browser's widget values. The timer reruns this empty fragment once an
    hour, nothing else; ``tests/e2e/test_course.py`` checks the reconnection.
    """


# Settings a link can carry that are not widgets (read with st.query_params), and
# Streamlit's own parameters.
LINK_PARAMS_WITHOUT_WIDGET = {"we_data"}
STREAMLIT_PARAMS = {"embed", "embed_options"}
_LINK_STATE = "_link_check"  # session state: {"page": ..., "link": {...}, "slot": ...}


def _page_id() -> str:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return getattr(ctx, "page_script_hash", "") if ctx else ""


def _in_fragment_run() -> bool:
    """True while a fragment reruns alone: it may not write above itself, and the page's
    opening run, always a full one, has given the link's note."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return bool(ctx and ctx.fragment_ids_this_run)


def _opening_run() -> bool:
    """True on the run that opens a page (a new session, a link, a page change)."""
    state = st.session_state.get(_LINK_STATE)
    return state is None or state["page"] != _page_id()


def _watch_link(prefix: str | None) -> None:
    """On the run that opens a page (a new session, a link, a page change), note the link's
    parameters; ``finish_page`` compares them with what the page used. A slot at the top
    of the page holds the note to the teacher while they stay on the page."""
    page = _page_id()
    state = st.session_state.get(_LINK_STATE)
    if state is None or state["page"] != page:
        link = {k: st.query_params.get_all(k) for k in st.query_params}
        st.session_state[_LINK_STATE] = state = {"page": page, "link": link, "note": None,
                                                 "checked": False, "prefix": prefix}
    st.session_state[_LINK_STATE + "_slot"] = st.empty()
    if state["note"]:
        st.session_state[_LINK_STATE + "_slot"].info(state["note"], icon="🔗")


def _link_value_used(linked: list[str], value) -> bool:
    """Whether a widget's value is what the link asked for (the link's last value)."""
    if not linked:
        return False
    if isinstance(value, (list, tuple)):
        return sorted(map(str, value)) == sorted(linked)
    last = linked[-1]
    if isinstance(value, bool):
        return last.lower() == str(value).lower()
    if isinstance(value, (int, float)):
        try:
            return abs(float(last) - float(value)) <= 1e-9 * max(1.0, abs(float(value)))
        except ValueError:
            return False
    return str(value) == last


def ignored_link_params(link: dict[str, list[str]], now: dict[str, list[str]],
                        is_bound, value_of) -> list[str]:
    """The parameters of ``link`` that the page did not use: not bound to any of its
    widgets (nor a known non-widget setting), or bound but not taken (Streamlit drops a
    value a widget rejects, silently, and shows the default). ``now`` is the link after
    the run; ``is_bound(name)`` and ``value_of(name)`` look at the page's widgets."""
    ignored = []
    for name, linked in link.items():
        if name in STREAMLIT_PARAMS or name in LINK_PARAMS_WITHOUT_WIDGET:
            continue
        refused = now.get(name) != linked and not _link_value_used(linked, value_of(name))
        if not is_bound(name) or refused:
            ignored.append(name)
    return ignored


def finish_page(*, stopped: bool = False) -> None:
    """Tell the teacher which settings of the link the page did not use (unknown names,
    values its controls refused), once per opening: the last line of every page, and
    the step before any early stop (``stop_page``).

    After an early stop (``stopped``) the widgets below the stop were not drawn: a
    parameter of this page's own (its key prefix) that no drawn widget took is not
    judged then, but on the first run that reaches the page's end.
    """
    state = st.session_state.get(_LINK_STATE)
    if not state or state["checked"] or state["page"] != _page_id() or _in_fragment_run():
        return
    from streamlit.runtime.state import get_session_state

    with get_session_state().query_params() as qp:
        bound = {name for name in state["link"] if qp.is_bound(name)}
    now = {k: st.query_params.get_all(k) for k in st.query_params}
    ignored = ignored_link_params(state["link"], now, bound.__contains__,
                                  lambda name: st.session_state.get(name))
    prefix = state.get("prefix")
    undrawn = [name for name in ignored if stopped and name not in bound and prefix
               and name.startswith(prefix + "_")]
    state["checked"] = not undrawn
    ignored = [name for name in ignored if name not in undrawn]
    if not ignored:
        return
    shown = ", ".join(f"{md_escape(name[:40])}={md_escape(state['link'][name][-1][:40])}"
                      for name in ignored[:8])
    more = f" and {len(ignored) - 8} more" if len(ignored) > 8 else ""
    state["note"] = (f"This link has settings this page does not know or could not use: "
                     f"{shown}{more}. They were ignored: the page opened with its defaults "
                     "for them.")
    st.session_state[_LINK_STATE + "_slot"].info(state["note"], icon="🔗")


def stop_page() -> NoReturn:
    """Stop the page here (its input cannot be used, or a result is not there yet): the
    controls drawn so far stay, and the note about the link's unused settings is still
    given. Pages call this, never ``st.stop()`` itself."""
    finish_page(stopped=True)
    st.stop()
    raise AssertionError("st.stop() returned")  # it raises; this line is never reached


def figure_font(presenter: bool) -> int:
    """Font size of figure text: larger on a projector."""
    return 20 if presenter else 14


def show_figure(fig, *, key: str, alt: str) -> None:
    """Draw a figure from pages.ui.figures with its text alternative and, off the
    projector, a download of its data.

    ``key``: the figure's page-prefixed key (``we_fig_weights``); the download button's
    is ``<key>_csv``. ``alt``: what the figure shows, with its key numbers, computed like
    every other number (``pages.ui.figures`` has a describer per kind of figure:
    ``describe_matrix``, ``describe_lines``, ...; a page may put its own sentence first).
    It is written right after the figure, as a caption, where a screen reader meets it
    (in presenter mode out of sight, for screen readers only), always as plain text.
    The data is ``figures.figure_csv(fig)``, built when the button is clicked: Plotly's
    charts cannot be reached by keyboard (plotly.js issue #562), a button can.

    The figure is drawn in the look written into it (figures.with_look): Streamlit's chart
    theme is off, as it would restyle the figure in the browser on every draw, most of a
    redraw's cost on a slow classroom machine. A figure whose JSON is unchanged since the
    last run is not drawn again (Streamlit compares it).
    """
    if not str(alt).strip():
        raise ValueError(f"show_figure({key!r}) needs a text alternative (alt): what the "
                         "figure shows, with its key numbers")
    st.plotly_chart(fig, theme=None, key=key)
    with st.container(key=f"{ALT_KEY_PREFIX}{key}"):
        st.caption(md_escape(alt))
        if not presenter_mode():
            st.download_button(
                "Data of this figure (CSV)", lambda: figure_csv(fig), file_name=f"{key}.csv",
                mime="text/csv", key=f"{key}_csv", on_click="ignore", type="tertiary",
                icon=":material/download:", width="content")


def show_diagram(diagram, *, key: str, alt: str | None = None, download: bool = True) -> None:
    """Draw a diagram of pages.ui.figures.diagrams (inline SVG) with its text alternative
    and, off the projector, a download of it as an SVG file (``download=False``: none, for a
    small copy of a diagram the page already offers).

    Inline SVG through ``st.markdown``: the only way Streamlit draws it as text a screen
    reader can read and a link a keyboard can reach (``st.html`` drops it; ``st.image``
    makes its text an image). Every text in it is escaped by the diagram, and nothing
    from a student reaches the markup otherwise. ``alt`` defaults to the diagram's own
    walk (``diagram.describe()``); a page may put its own sentence first.
    """
    markup = diagram.svg()
    with st.container(key=f"diagram_{key}"):
        st.markdown(markup, unsafe_allow_html=True)
    with st.container(key=f"{ALT_KEY_PREFIX}{key}"):
        st.caption(md_escape(alt or diagram.describe()))
        if download and not presenter_mode():
            st.download_button(
                "This diagram (SVG)", markup, file_name=f"{key}.svg", mime="image/svg+xml",
                key=f"{key}_svg", on_click="ignore", type="tertiary",
                icon=":material/download:", width="content")


def lesson_header(title: str, goal: str) -> None:
    """The title and the one-line goal of a lesson, and (off the projector) where its
    symbols and terms are defined."""
    st.title(title)
    st.markdown(f"**Goal:** {goal}")
    if not presenter_mode():
        st.caption(f"Every symbol and term is defined in the [glossary]({GLOSSARY_HREF}) "
                   "on the home page (it opens in a new tab).")


def install_note(what: str, command: str) -> None:
    """Say that a lesson's model is not installed, and how to install it (every other
    lesson works without it)."""
    st.info(f"This lesson needs {what}. It is not installed. From the project folder, with "
            "the virtual environment active, run:", icon="📦")
    st.code(command, language="bash")
    st.caption("Every other lesson works without it.")


def show_error(exc: ValueError) -> None:
    """Show a core ValueError to the student, kindly, and keep the page working."""
    st.error(f"That input can't be used: {exc}", icon="⚠️")


@contextmanager
def bad_input_stops_page() -> Iterator[None]:
    """Around core calls fed by the student's input: a ValueError is shown, then the page stops.

    The rest of the page depends on what failed, so it is not drawn; the controls above
    stay, and the next change of input reruns the page (or the fragment it is in). Only
    ValueError (the core's "bad input") is caught: any other exception is a bug and must
    surface.
    """
    try:
        yield
    except ValueError as exc:
        show_error(exc)
        stop_page()


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


@st.fragment
def practice_questions(prefix: str, questions: list[dict]) -> None:
    """2 to 4 practice questions with answers that can be revealed or checked; a fragment,
    so typing an answer redraws only the questions.

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
                # Said in full: a screen reader announces the label alone, and a page has
                # several of these.
                f"Your answer to question {n}",
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
