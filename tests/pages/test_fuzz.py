"""Every page survives its own controls at random and extreme values, and nonsense links:
no exception and no traceback on screen.

The machinery (values for each kind of control, data-editor edits, failure reports with
a replay) is in fuzzing.py, which also lists the environment variables (FUZZ_ROUNDS,
FUZZ_SEED, FUZZ_MAX_SECONDS). Widgets listed in conftest.NOT_FUZZED are left alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import (
    NOT_FUZZED,
    app_scripts,
    assert_no_exception,
    page_at_defaults,
    run_page,
    script_id,
)
from fuzzing import (
    EXTREMES,
    NONSENSE_PARAMS,
    RUN_TIMEOUT,
    controls,
    fuzz,
    linked_keys,
    open_link,
    push_to_extremes,
    replay,
    undriven,
)

SCRIPTS = app_scripts()
SCRIPT_IDS = [script_id(p) for p in SCRIPTS]


@pytest.mark.parametrize("script", SCRIPTS, ids=SCRIPT_IDS)
def test_random_settings(script: Path) -> None:
    """Round after round of random allowed values and cell edits: no exception, no
    traceback, no timeout (and, with FUZZ_MAX_SECONDS, no slow run)."""
    at = run_page(script, timeout=RUN_TIMEOUT)
    assert_no_exception(at, f"{script.name} at defaults")
    failures = fuzz(at, script)
    assert not failures, "\n\n=====\n\n".join(failures)


@pytest.mark.parametrize("script", SCRIPTS, ids=SCRIPT_IDS)
def test_extremes(script: Path) -> None:
    """For each case of EXTREMES, from the defaults: all controls of one kind at one end
    together, including those this reveals. Every case is tried and every failing one
    reported; one test per page, so that its first run fills the page's caches and the
    other cases start from the defaults in a fraction of it."""
    failures = []
    for case in EXTREMES:
        at = run_page(script, timeout=RUN_TIMEOUT)
        assert_no_exception(at, f"{script.name} at defaults")
        try:
            for done in push_to_extremes(at, case):
                assert_no_exception(at, f"{script.name}, {case}:\n{replay(done)}")
        except AssertionError as exc:
            failures.append(str(exc))
    assert not failures, "\n\n=====\n\n".join(failures)


@pytest.mark.parametrize("script", SCRIPTS, ids=SCRIPT_IDS)
def test_nonsense_query_params(script: Path) -> None:
    """A link with nonsense in every query parameter still opens the page: each value of
    NONSENSE_PARAMS in turn, every failing one reported (one test per page, as above)."""
    keys = linked_keys(script)
    failures = []
    for param in NONSENSE_PARAMS:
        at = open_link(script, dict.fromkeys(keys, param))
        try:
            assert_no_exception(at, f"{script.name} opened with ?{'&'.join(keys)} = {param!r}")
        except AssertionError as exc:
            failures.append(str(exc))
    assert not failures, "\n\n=====\n\n".join(failures)


@pytest.mark.parametrize("script", SCRIPTS, ids=SCRIPT_IDS)
def test_fuzzer_drives_every_control(script: Path) -> None:
    """The fuzzer knows every kind of control a page shows: a new kind needs a picker in
    fuzzing.py (or its key in NOT_FUZZED, with the reason) before the page is covered."""
    assert undriven(page_at_defaults(script)) == []


def test_not_fuzzed_widgets_are_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key in NOT_FUZZED is never set, even when everything else goes to an end."""
    monkeypatch.setitem(NOT_FUZZED, "mha_dmodel", "this test")
    at = run_page("pages/4_Multi_head.py", timeout=RUN_TIMEOUT)
    assert "mha_dmodel" not in {w.key for w in controls(at)}
    for _ in push_to_extremes(at, "everything_at_min"):
        pass
    assert at.select_slider(key="mha_dmodel").value == 32  # the page's default
    assert at.selectbox(key="mha_heads").value == 1  # while its neighbour moved
