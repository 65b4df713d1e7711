"""A day in class, in a real browser: the teacher's link in presenter mode on a 1280 × 720
projector (it holds the settings, the page fits the projector, and the link follows a
moved control), nonsense links (the page opens at its defaults, its downloads match it,
and untrusted text typed there stays text), and values kept across pages; on the way,
axe-core's WCAG 2.1 AA audit of every page at its defaults and after a control moved
(``axe_audit.py``). Each page is loaded twice, once per link, and each load serves every
check that its state allows. Screenshots: ``screenshots/presenter_720_*.png``.

Pages are found as ``test_pages.py`` finds them (``pages/*.py``), and its helpers are
reused: ``_open`` (load a page and wait until its first run is drawn), ``_wait_idle``
(wait for a rerun without racing it), ``_runs_finished`` and ``_assert_no_error``.
Every lesson page needs a row in ``CONTROLS``: a new page without one fails
``test_every_page_has_a_control_table`` with a message saying what to add.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from axe_audit import audit
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from presenter_metrics import MEASURE_JS, describe, projector_problems
from test_exports import CHECKS as EXPORT_CHECKS
from test_pages import (
    NAV_LINKS,
    PAGES,
    _assert_no_error,
    _open,
    _runs_finished,
    _shot_name,
    _wait_idle,
)

from pages.ui.lessons import LESSONS

pytestmark = pytest.mark.e2e

MAIN = '[data-testid="stMain"]'
ERROR_ALERT = '[data-testid="stAlertContentError"]'
URL_TIMEOUT_MS = 30_000
PROJECTOR = {"width": 1280, "height": 720}
EXPAND_SIDEBAR = '[data-testid="stExpandSidebarButton"]'


@dataclass(frozen=True)
class Ctl:
    """One control (or one visible consequence) of a page, as a link sets it.

    ``kind`` says how the page shows it: ``slider`` (the thumb's displayed value),
    ``select`` (a select box's shown label), ``text`` (a text input or area),
    ``radio`` / ``switch`` (checked or not, shown as "on" / "off"), or ``contains``
    (the main area's text contains ``shown``; ``param`` is then None).
    """

    param: str | None
    value: str | None
    kind: str
    label: str
    shown: str
    default: str


@dataclass(frozen=True)
class Move:
    """A control moved with the keyboard (slider) or a click (switch), and the link after."""

    kind: str
    label: str
    key: str
    param: str
    expected: str | None  # None: the parameter leaves the link (back to the default)


DEFAULT_MASKS_TEXT = "The cat sat on the mat\nA dog barked\nBirds sing at dawn"
MHA_SENTENCE = "The cat sat on the mat because the cat was tired"

# Per page: the controls a link sets, how each is seen, its default; a control to move;
# and a link full of nonsense (wrong types, out of range, unknown names).
CONTROLS: dict[str, dict] = {
    "": {
        "controls": [Ctl("presenter", "true", "switch", "Presenter mode", "on", "off")],
        "move": Move("switch", "Presenter mode", "click", "presenter", None),
        "nonsense": {"presenter": "banana", "zzz": "1", "we_tokens": "9"},
    },
    "Worked_example": {
        "controls": [
            Ctl("we_preset", "Random", "select", "Example", "Random", "Textbook"),
            Ctl("we_tokens", "5", "slider", "Tokens", "5", "3"),
            Ctl("we_temp", "2.5", "slider", "Softmax temperature τ", "2.50", "1.00"),
            Ctl("we_causal", "true", "switch", "Causal mask", "on", "off"),
            Ctl(None, None, "contains", "", "Shape: Q (5 × 2)", "Shape: Q (3 × 2)"),
        ],
        "move": Move("slider", "Tokens", "ArrowLeft", "we_tokens", "4"),
        "nonsense": {"we_tokens": "banana", "we_temp": "99999", "zzz": "1", "we_seed": "inf",
                     "we_preset": "Nope", "we_causal": "maybe", "we_dk": "-3",
                     "we_data": "{bad", "we_query": "9", "we_dl_matrix": "Nope"},
    },
    "Scaling": {
        "controls": [
            Ctl("sc_dk", "256", "slider", "d_k (dimension of q and k)", "256", "64"),
            Ctl("sc_nkeys", "8", "slider", "Keys T_k", "8", "16"),
            Ctl("sc_sigma2", "2.0", "slider", "Component variance σ²", "2.00", "1.00"),
            Ctl("sc_temp", "0.2", "slider", "Softmax temperature τ", "0.2", "1.0"),
        ],
        "move": Move("slider", "Keys T_k", "ArrowRight", "sc_nkeys", "9"),
        "nonsense": {"sc_dk": "3", "sc_samples": "-1", "sc_sigma2": "nan", "sc_seed": "1e400",
                     "sc_nkeys": "9999", "sc_temp": "abc", "sc_trials": "0", "zzz": "1"},
    },
    "Masks": {
        "controls": [
            Ctl("mk_text", "one two three\nfour five", "text",
                "Sentences, one per line (1 to 4)", "one two three\nfour five",
                DEFAULT_MASKS_TEXT),
            Ctl("mk_mask", "window", "select", "Mask", "window", "padding+causal"),
            # T = 3 (the longest sentence), so the radius stops at T − 1 = 2.
            Ctl("mk_window", "2", "slider", "Window radius r", "2", "1"),
            Ctl("mk_sentence", "sentence 1", "select", "Sentence", "sentence 1", "sentence 2"),
        ],
        "move": Move("slider", "Window radius r", "ArrowLeft", "mk_window", None),
        "nonsense": {"mk_mask": "evil", "mk_window": "-5", "mk_sentence": "99",
                     "mk_dropout": "7", "mk_block_row": "banana", "mk_pad_queries": "2",
                     "zzz": "1"},
    },
    "Multi_head": {
        "controls": [
            Ctl("mha_sentence", "the cat sat", "text", "Sentence", "the cat sat", MHA_SENTENCE),
            Ctl("mha_dmodel", "64", "slider", "d_model", "64", "32"),
            Ctl("mha_heads", "8", "select", "Heads H", "8", "4"),
            Ctl("mha_weights", "designed", "radio", "designed", "on", "off"),
            Ctl(None, None, "contains", "", "T = 3 tokens, d_model = 64 (",
                "T = 11 tokens, d_model = 32 ("),
        ],
        "move": Move("slider", "d_model", "ArrowRight", "mha_dmodel", "128"),
        "nonsense": {"mha_dmodel": "7", "mha_heads": "3", "mha_weights": "magic",
                     "mha_head": "99", "mha_seed": "-inf", "mha_stat": "nope",
                     "mha_causal": "yes", "zzz": "1"},
    },
    "Positional_encoding": {
        "controls": [
            Ctl("pe_len", "32", "slider", "Positions (max length)", "32", "64"),
            Ctl("pe_dmodel", "16", "slider", "d_model (even)", "16", "64"),
            Ctl("pe_base", "1000", "slider", "Base", "1000", "10000"),
            Ctl("pe_sentence", "a b c d", "text", "Sentence", "a b c d",
                "The cat sat on the mat"),
            Ctl(None, None, "contains", "", "Checked on all 29 positions",
                "Checked on all 61 positions"),
        ],
        "move": Move("slider", "Positions (max length)", "ArrowRight", "pe_len", "33"),
        "nonsense": {"pe_len": "100000", "pe_dmodel": "-4", "pe_base": "7", "pe_offset": "-1",
                     "pe_pairs": "999", "pe_alibi_head": "0", "pe_clip": "x",
                     "pe_heads": "banana", "zzz": "1"},
    },
    "Scoring_and_seq2seq": {
        "controls": [
            Ctl("s2s_source", "the black cat", "text", "Source sentence (encoder)",
                "the black cat", "I love cats"),
            Ctl("s2s_target", "le chat noir", "text", "Target sentence (decoder)",
                "le chat noir", "J'aime les chats"),
            Ctl("s2s_model", "Luong", "radio", "Luong", "on", "off"),
            Ctl("s2s_window", "3", "slider", "Window half-width D", "3", "2"),
            Ctl(None, None, "contains", "", "the decoder state of “chat”",
                "the decoder state of “aime”"),
        ],
        "move": Move("slider", "Window half-width D", "ArrowRight", "s2s_window", "4"),
        "extra_link": {"s2s_step": "2"},
        "nonsense": {"s2s_step": "999", "s2s_model": "Transformer", "s2s_luong_score": "zzz",
                     "s2s_window": "0", "s2s_local_mode": "sideways", "s2s_seed": "NaN",
                     "zzz": "1"},
    },
    "Cost": {
        "controls": [
            Ctl("cost_heads", "2", "slider", "Heads H", "2", "4"),
            Ctl("cost_dk", "32", "slider", "d_k", "32", "64"),
            Ctl("cost_max_n", "256", "slider", "Largest n", "256", "512"),
            Ctl("cost_chunk", "16", "slider", "Chunk (query rows at a time)", "16", "64"),
            Ctl(None, None, "contains", "", "n = 512, H = 2: the full call",
                "n = 512, H = 4: the full call"),
        ],
        "move": Move("slider", "Heads H", "ArrowRight", "cost_heads", "3"),
        "nonsense": {"cost_max_n": "1000000", "cost_heads": "1e9", "cost_dk": "0",
                     "cost_repeats": "-2", "cost_chunk": "banana", "zzz": "1"},
    },
}

CONTROLS["Why_attention"] = {
    # Only the decoding step: any training setting off its default waits for the Train
    # button, and the step slider appears once the models are trained.
    "controls": [Ctl("why_step", "5", "slider", "Output step t", "5", "3")],
    "move": Move("slider", "Output step t", "ArrowRight", "why_step", "6"),
    "nonsense": {"why_width": "banana", "why_steps": "-5", "why_shortest": "inf",
                 "why_longest": "0", "why_step": "99", "why_seed": "1e400", "zzz": "1"},
}
CONTROLS["Attention_that_learns"] = {
    "controls": [
        Ctl("learn_sent_text", "the movie was not bad", "text", "A sentence from the vocabulary",
            "the movie was not bad", "the acting was not very good"),
        # the first checkpoint slider on the page: the sentiment run's, whose 300 default
        # steps are checkpointed every 15 (attncore.train.run.checkpoint_steps)
        Ctl("learn_sent_checkpoint", "105", "slider", "Checkpoint (training step)", "105",
            "300"),
    ],
    "move": Move("slider", "Checkpoint (training step)", "ArrowRight", "learn_sent_checkpoint",
                 "120"),
    "nonsense": {"learn_sentiment_steps": "inf",
                 "learn_induction_seed": "-1", "learn_sent_example": "99", "zzz": "1"},
}
CONTROLS["Pretrained_model"] = {
    "controls": [
        Ctl("pre_layer", "4", "select", "Layer", "4", "1"),
        Ctl("pre_head", "7", "select", "Head", "7", "3"),
        Ctl(None, None, "contains", "", "Head view: layer 4, head 7",
            "Head view: layer 1, head 3"),
    ],
    "move": Move("slider", "Query token (row)", "ArrowRight", "pre_query", "4"),
    "nonsense": {"pre_layer": "99", "pre_head": "banana", "pre_query": "inf",
                 "pre_text": "<script>alert(1)</script>", "zzz": "1"},
}

CONTROLS["Language_model"] = {
    "controls": [
        Ctl("lm_temp", "1.2", "slider", "Temperature τ (0 = always the most likely)", "1.20",
            "0.80"),
        Ctl("lm_layer", "3", "slider", "Layer", "3", "19"),
        Ctl(None, None, "contains", "", "With τ = 1.2,", "With τ = 0.8,"),
    ],
    "move": Move("slider", "Top-k (0 = off)", "ArrowRight", "lm_topk", "1"),
    "nonsense": {"lm_layer": "99", "lm_temp": "banana", "lm_topk": "-5", "lm_ind_len": "1e9",
                 "lm_chat": "maybe", "lm_hand_pair": "-3", "zzz": "1"},
}
CONTROLS["Attention_for_the_answer"] = {
    # The knockout window (its section reruns alone); the presets' grids are kept on disk,
    # and a student's own pair waits for its button.
    "controls": [Ctl("ans_window", "4", "slider", "Layers in each window", "4", "1")],
    "move": Move("slider", "Layers in each window", "ArrowRight", "ans_window", "5"),
    "nonsense": {"ans_preset": "banana", "ans_window": "99", "ans_clean": "<b>x</b>",
                 "ans_answer": "", "ans_dl_matrix": "nope", "zzz": "1"},
}
CONTROLS["Fixed_size_memory"] = {
    # Section 3's stored pairs (the trained comparison waits for its button off the
    # defaults).
    "controls": [
        Ctl("mem_dk", "32", "slider", "Key width d_k (= d_v)", "32", "16"),
        Ctl("mem_pairs", "128", "slider", "Pairs stored n (the diagram)", "128", "64"),
    ],
    "move": Move("slider", "Pairs stored n (the diagram)", "ArrowRight", "mem_pairs", "256"),
    "nonsense": {"mem_dk": "7", "mem_pairs": "banana", "mem_beta": "2", "mem_alpha": "-1",
                 "mem_query": "k9", "mem_scale": "inf", "mem_steps": "1e9", "zzz": "1"},
}
CONTROLS["Inference"] = {
    "controls": [
        Ctl("inf_ctx", "1024", "slider", "Context length (tokens)", "1024", "8192"),
        Ctl("inf_batch", "2", "slider", "Batch (conversations at once)", "2", "8"),
        Ctl(None, None, "contains", "", "At 1,024 tokens and a batch of 2",
            "At 8,192 tokens and a batch of 8"),
    ],
    "move": Move("slider", "Batch (conversations at once)", "ArrowRight", "inf_batch", "3"),
    "nonsense": {"inf_ctx": "7", "inf_window": "-1", "inf_sinks": "banana", "inf_text": "Nope",
                 "inf_fa_bk": "1e9", "inf_steps": "inf", "zzz": "1"},
}

PAGE_PARAMS = [pytest.param(path, id=test_id) for test_id, path in PAGES]


def _spec(path: str) -> dict:
    if path not in CONTROLS:
        pytest.fail(f"/{path} has no row in CONTROLS of {Path(__file__).name}: add the "
                    "controls its link sets, a control to move and a nonsense link")
    return CONTROLS[path]


def _link_query(spec: dict, presenter: bool = False) -> str:
    params = {c.param: c.value for c in spec["controls"] if c.param is not None}
    params |= spec.get("extra_link", {})
    if presenter:
        params["presenter"] = "true"
    return urlencode(params)


def _query(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query, keep_blank_values=True)


def _thumb(page: Page, label: str):
    """A slider's thumb (a range input) by its label.

    Not get_by_role(name=...): the thumb is labelled by itself and by its group, so its
    accessible name is the label twice.
    """
    return _slider_box(page, label).locator(_range_input(label))


def _range_input(label: str) -> str:
    return f'input[type="range"][aria-label={json.dumps(label, ensure_ascii=False)}]'


def _slider_box(page: Page, label: str):
    return page.locator('[data-testid="stSlider"]').filter(has=page.locator(_range_input(label)))


def _shown(page: Page, ctl: Ctl) -> str:
    """What the page shows for ``ctl``, as the user sees it."""
    if ctl.kind == "slider":
        return _slider_box(page, ctl.label).locator(
            '[data-testid="stSliderThumbValue"]').first.inner_text().strip()
    if ctl.kind == "select":
        return page.get_by_role("combobox", name=ctl.label, exact=True).input_value()
    if ctl.kind == "text":
        return page.get_by_role("textbox", name=ctl.label, exact=True).input_value()
    if ctl.kind in ("radio", "switch"):
        box = page.get_by_role(ctl.kind, name=ctl.label, exact=True)
        return "on" if box.is_checked() else "off"
    if ctl.kind == "contains":
        text = page.locator(MAIN).inner_text()
        return ctl.shown if ctl.shown in text else ctl.default if ctl.default in text else (
            f"neither {ctl.shown!r} nor {ctl.default!r} in the page's text")
    raise AssertionError(f"unknown kind {ctl.kind!r}")


def _describe(ctl: Ctl) -> str:
    return f"{ctl.kind} {ctl.label!r}" if ctl.param is None else (
        f"{ctl.param} ({ctl.kind} {ctl.label!r})")


def _assert_no_error_alert(page: Page, what: str, server=None, mark: int = 0) -> None:
    alerts = page.locator(ERROR_ALERT)
    if alerts.count():
        log = f"\n--- server log ---\n{server.log(4_000, since=mark)}" if server else ""
        pytest.fail(f"{what}: error message on screen: {alerts.all_inner_texts()}{log}")


def _move(page: Page, move: Move) -> None:
    """Move a control and wait for the rerun it starts and for the link to follow."""
    before_url, before = page.url, _runs_finished(page)
    if move.kind == "slider":
        thumb = _thumb(page, move.label)
        thumb.scroll_into_view_if_needed()
        thumb.focus()
        page.keyboard.press(move.key)
    elif move.kind == "switch":
        # The input itself is visually hidden; its label is what a user clicks. A switch
        # in the collapsed sidebar (presenter mode collapses it) needs the sidebar opened.
        label = page.get_by_role("switch", name=move.label, exact=True).locator(
            "xpath=ancestor::label[1]")
        _open_sidebar(page)
        label.click()
    else:
        raise AssertionError(f"unknown move {move.kind!r}")

    def moved(url: str) -> bool:
        got = parse_qs(urlsplit(url).query).get(move.param)
        want = None if move.expected is None else [move.expected]
        return url != before_url and (got == want or (want is None and got == ["false"]))

    try:
        page.wait_for_url(moved, timeout=URL_TIMEOUT_MS)
    except PlaywrightTimeoutError:
        pytest.fail(f"after {move.key} on {move.kind} {move.label!r} the link should have "
                    f"{move.param}={move.expected}; it is {page.url}")
    _wait_idle(page, before)


def test_every_page_has_a_control_table():
    missing = [path or "home" for _, path in PAGES if path not in CONTROLS]
    assert not missing, f"pages without a row in CONTROLS: {missing}"


# --------------------------------------------------------------------------------------
# 1 and 7. Links hold the settings; presenter mode on a 1280 × 720 projector
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", PAGE_PARAMS)
def test_teachers_link_on_the_projector(page: Page, streamlit_server, screenshot_dir: Path,
                                        path: str):
    """The teacher's link, with presenter mode, on a 1280 × 720 projector.

    It shows the linked settings (items 1 and 7 of the brief share this page load: a
    load costs seconds on 2 cores): a screenshot, the presenter switch on, every linked
    control showing its value. The page fits the projector: the sidebar is collapsed, no
    text a student reads in the main area is smaller than 18 px, and a Plotly figure
    starts on the first screen (``presenter_metrics.py`` says how text is measured). Then
    a control moved changes the link accordingly and keeps the other settings (presenter
    mode included) in it, and axe-core's WCAG 2.1 AA audit of the page after that
    interaction finds nothing, nor the headings check (``axe_audit.py``).
    """
    spec = _spec(path)
    query = _link_query(spec, presenter=True)
    page.set_viewport_size(PROJECTOR)
    mark = streamlit_server.log_mark()
    _open(page, streamlit_server.url, path, query)
    page.screenshot(path=screenshot_dir / f"presenter_720_{_shot_name(path)}.png")
    _assert_no_error(page, f"/{path}?{query} at 1280x720", streamlit_server, mark)
    assert page.get_by_role("switch", name="Presenter mode", exact=True).is_checked(), (
        f"/{path}?{query}: the presenter switch is off")

    wrong = [(_describe(c), c.shown, _shown(page, c)) for c in spec["controls"]
             if _shown(page, c) != c.shown]
    assert not wrong, f"/{path}?{query}: (control, linked, shown): {wrong}"
    measured = page.evaluate(MEASURE_JS)
    print(f"/{path}: {describe(measured)}")  # shown with -s: the per-page numbers
    problems = projector_problems(measured, PROJECTOR["height"])
    assert not problems, (f"/{path}?{query} at 1280 × 720: " + "; ".join(problems)
                          + f"\n(measured: {describe(measured)})")

    move = spec["move"]
    _move(page, move)
    _assert_no_error(page, f"/{path} after moving {move.label!r}", streamlit_server, mark)
    found = audit(page)  # WCAG 2.1 AA after an interaction (axe_audit.py)
    assert not found, f"/{path} after moving {move.label!r}:\n" + "\n".join(found)
    query_now = _query(page)
    kept = [c.param for c in spec["controls"]
            if c.param and c.param != move.param and c.param not in query_now]
    if move.param != "presenter" and query_now.get("presenter") != ["true"]:
        kept.append("presenter")
    assert not kept, f"/{path}: the move dropped {kept} from the link {page.url}"


# --------------------------------------------------------------------------------------
# 2. Nonsense links open the page with defaults (there: the audit, the downloads and
#    untrusted text, section 4)
# --------------------------------------------------------------------------------------
def _check_nonsense(page: Page, server, path: str, nonsense: dict) -> None:
    spec = _spec(path)
    query = urlencode(nonsense)
    mark = server.log_mark()
    _open(page, server.url, path, query)
    what = f"/{path}?{query}"
    _assert_no_error(page, what, server, mark)
    _assert_no_error_alert(page, what, server, mark)
    wrong = [(_describe(c), c.default, _shown(page, c)) for c in spec["controls"]
             if _shown(page, c) != c.default]
    assert not wrong, f"{what}: not at its defaults (control, default, shown): {wrong}"


@pytest.mark.parametrize("path", PAGE_PARAMS)
def test_nonsense_link_then_downloads_and_untrusted_text(
        page: Page, streamlit_server, screenshot_dir: Path, path: str):
    """A link with nonsense opens the page at its defaults; there, axe-core's WCAG 2.1 AA
    audit finds nothing (``axe_audit.py``), every download is parsed back and compared
    with the page (``test_exports.CHECKS``), and then HTML typed into every text field
    stays text, on the page and in the link it leaves (section 4). One page load serves
    all four, as a load costs seconds on 2 cores; the typing comes last, as it leaves the
    defaults."""
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    mark = streamlit_server.log_mark()
    _check_nonsense(page, streamlit_server, path, _spec(path)["nonsense"])
    page.screenshot(path=screenshot_dir / f"{_shot_name(path)}.png")  # the page at defaults
    found = audit(page)  # WCAG 2.1 AA at the defaults (axe_audit.py)
    assert not found, f"/{path} at its defaults:\n" + "\n".join(found)
    if path:  # every lesson has downloads; the home page has none
        EXPORT_CHECKS[path](page)
        _assert_no_error(page, f"/{path} after the downloads", streamlit_server, mark)
    _assert_inert(page, dialogs, f"/{path} opened from a nonsense link", streamlit_server, mark)
    _check_untrusted_text(page, streamlit_server, path, dialogs, mark)


def test_positional_odd_dmodel_link_says_what_it_uses(page: Page, streamlit_server):
    # The d_model slider steps by 2, but a link can carry 3: the page says it uses 2.
    mark = streamlit_server.log_mark()
    _open(page, streamlit_server.url, "Positional_encoding", "pe_dmodel=3")
    _assert_no_error(page, "/Positional_encoding?pe_dmodel=3", streamlit_server, mark)
    _assert_no_error_alert(page, "/Positional_encoding?pe_dmodel=3", streamlit_server, mark)
    alerts = page.locator('[data-testid="stAlert"]').all_inner_texts()
    assert any("d_model must be even" in text for text in alerts), alerts


# --------------------------------------------------------------------------------------
# 3. Values survive leaving the page through the sidebar and coming back
# --------------------------------------------------------------------------------------
def _open_sidebar(page: Page) -> None:
    """Open the sidebar if it is collapsed (presenter mode collapses it)."""
    if page.locator('[data-testid="stSidebar"][data-collapsed="true"]').count():
        page.locator(EXPAND_SIDEBAR).click()
        page.locator('[data-testid="stSidebar"][data-collapsed="false"]').wait_for()
        page.wait_for_timeout(500)  # the sidebar slides in


def _nav_click(page: Page, path: str) -> None:
    """Click the sidebar's link to ``/path`` (our own page list, see pages/ui/layout.py)."""
    _open_sidebar(page)
    before = _runs_finished(page)
    page.locator(f'{NAV_LINKS}:is([href="{path}"], [href$="/{path}"])').click()
    _wait_idle(page, before)


def test_values_survive_sidebar_navigation(page: Page, streamlit_server):
    mark = streamlit_server.log_mark()
    _open(page, streamlit_server.url, "Scaling")
    keys = Ctl("sc_nkeys", None, "slider", "Keys T_k", "17", "16")
    dk = Ctl("sc_dk", None, "slider", "d_k (dimension of q and k)", "128", "64")
    _move(page, Move("slider", keys.label, "ArrowRight", "sc_nkeys", "17"))
    _move(page, Move("slider", dk.label, "ArrowRight", "sc_dk", "128"))
    assert (_shown(page, keys), _shown(page, dk)) == ("17", "128")

    _nav_click(page, "Masks")
    assert urlsplit(page.url).path == "/Masks", page.url
    _assert_no_error(page, "/Masks reached through the sidebar", streamlit_server, mark)
    assert "sc_nkeys" not in _query(page), f"Scaling's setting leaked into {page.url}"

    _nav_click(page, "Scaling")
    assert urlsplit(page.url).path == "/Scaling", page.url
    _assert_no_error(page, "/Scaling, back through the sidebar", streamlit_server, mark)
    assert (_shown(page, keys), _shown(page, dk)) == ("17", "128"), (
        "Scaling's sliders lost their values after a visit to Masks")
    query = _query(page)
    assert query.get("sc_nkeys") == ["17"] and query.get("sc_dk") == ["128"], (
        f"the link no longer holds the kept values: {page.url}")


def test_home_opens_in_a_new_tab_from_a_lesson(page: Page, streamlit_server):
    """"Home" in the sidebar of a lesson, middle-clicked as a teacher opens a tab for later:
    the new tab is the home page (its address used to be empty: the lesson again). Every
    link, there and on the home page's list of lessons, reads as its label alone."""
    mark = streamlit_server.log_mark()
    _open(page, streamlit_server.url, "Masks", "mk_mask=causal")
    _open_sidebar(page)
    links = page.locator(NAV_LINKS)
    labels = ["Home"] + [lesson.label for lesson in LESSONS]
    with page.context.expect_page() as opened:
        links.filter(has_text="Home").click(button="middle")
    tab = opened.value
    try:
        tab.locator(f"{MAIN} h1").first.wait_for()
        assert urlsplit(tab.url).path == "/", tab.url
        assert tab.locator(f"{MAIN} h1").first.inner_text() == "Attention Lab"
        lesson_links = tab.locator(f'{MAIN} [data-testid="stPageLink-NavLink"]')
        expect(lesson_links).to_have_count(len(labels) - 1)  # the home page is drawn
        assert [t.strip() for t in lesson_links.all_inner_texts()] == labels[1:]
        _assert_no_error(tab, "home opened in a new tab", streamlit_server, mark)
    finally:
        tab.close()
    assert urlsplit(page.url).path == "/Masks", f"the lesson's tab moved: {page.url}"
    assert [t.strip() for t in links.all_inner_texts()] == labels


# --------------------------------------------------------------------------------------
# 4. Untrusted text is shown as text (on the nonsense link's visit, section 2)
# --------------------------------------------------------------------------------------
PAYLOADS = ["<img src=x onerror=alert(1)>", "<script>alert(1)</script>"]
# Token text drawn anywhere: Plotly's SVG labels, the cells of st.dataframe (drawn on a
# canvas, with an accessible table of the same cells in the DOM) and of st.table.
_SHOWN_TEXTS_JS = """
() => [...document.querySelectorAll(
  '.main-svg text, [data-testid="stDataFrame"] td, [data-testid="stDataFrame"] th, '
  + '[data-testid="stTable"] td, [data-testid="stTable"] th'
)].map((e) => e.textContent.trim())
"""
_INJECTED_JS = """
() => ({
  img: document.querySelectorAll('img[src="x"], img[onerror]').length,
  script: [...document.scripts].filter((s) => s.textContent.includes("alert(1)")).length,
})
"""


def _assert_inert(page: Page, dialogs: list[str], what: str, server, mark: int) -> None:
    assert not dialogs, f"{what}: a dialog fired: {dialogs}"
    injected = page.evaluate(_INJECTED_JS)
    assert injected == {"img": 0, "script": 0}, f"{what}: HTML ran: {injected}"
    _assert_no_error(page, what, server, mark)


TEXT_FIELDS = '[data-testid="stTextInput"] input, [data-testid="stTextArea"] textarea'


def _check_untrusted_text(page: Page, server, path: str, dialogs: list[str], mark: int) -> None:
    """HTML typed into each text field of the page as shown (a payload per field, Enter to
    apply) fires nothing and runs nothing, is drawn as text in the figures and tables, and
    the link then holds it; reopening that link, as a student receiving it would, is inert
    too and gives the same fields. ``dialogs`` collects the page's dialogs from its load on.
    A page without a text field has nothing to check."""
    fields = page.locator(TEXT_FIELDS)
    n = fields.count()
    if n == 0:
        return

    typed = []
    for i in range(n):
        field = fields.nth(i)
        payload = PAYLOADS[i % len(PAYLOADS)]
        label = field.get_attribute("aria-label") or f"field {i + 1}"
        area = field.evaluate("e => e.tagName") == "TEXTAREA"
        before = _runs_finished(page)
        field.scroll_into_view_if_needed()
        field.fill(payload)
        field.press("Control+Enter" if area else "Enter")
        _wait_idle(page, before)
        typed.append((label, payload))
        _assert_inert(page, dialogs, f"/{path} after typing {payload!r} into {label!r}",
                      server, mark)

    values = {label: page.get_by_role("textbox", name=label, exact=True).input_value()
              for label, _ in typed}
    assert values == dict(typed), f"/{path}: the fields do not hold what was typed: {values}"
    texts = page.evaluate(_SHOWN_TEXTS_JS)
    assert "<" in texts and "alert" in texts, (
        f"/{path}: the typed tokens '<' and 'alert' are not shown as text in any chart label "
        f"or table cell: {sorted(set(texts))[:60]}")

    # The link now carries the text: opening it is how a student would receive it.
    linked = [v for vs in _query(page).values() for v in vs]
    assert all(payload in linked for _, payload in typed), (
        f"/{path}: the link does not hold the typed text: {page.url}")
    before = _runs_finished(page)
    page.reload(wait_until="domcontentloaded")
    _wait_idle(page, before)
    _assert_inert(page, dialogs, f"/{path} reopened from its link {page.url}", server, mark)
    reopened = {label: page.get_by_role("textbox", name=label, exact=True).input_value()
                for label, _ in typed}
    assert reopened == dict(typed), f"/{path}: reopening the link lost the text: {reopened}"
