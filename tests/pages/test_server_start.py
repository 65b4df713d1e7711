"""What a freshly started server prepares before its first visitor (pages/ui/server_start.py),
and that the pages then use it instead of computing it again (AppTest, no browser)."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import numpy as np
from conftest import assert_no_exception, open_page, text_of
from threadpoolctl import threadpool_info

from attncore import cost, results_cache
from attncore.lm import inference as inf
from pages.ui import server_start, timings
from pages.ui.lessons import LESSONS
from pages.ui.lm import CACHE_PROMPT, CACHE_STEPS
from tests.model_marks import needs_smollm

ROOT = Path(__file__).resolve().parents[2]


def test_the_server_imports_what_every_page_imports():
    found = server_start.page_imports()
    # every module a page imports at its top, read here a second way: each page's own
    # import lines, one page at a time, checked against the modules loaded afterwards
    for name in found:
        importlib.import_module(name)
    for script in [ROOT / "dashboard.py", *sorted((ROOT / "pages").glob("*.py"))]:
        for node in ast.parse(script.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                assert {a.name for a in node.names} <= set(found), script.name
            elif isinstance(node, ast.ImportFrom) and not node.level:
                assert node.module in found, (script.name, node.module)
                for alias in node.names:  # a submodule (lm.inference), or a name in one
                    submodule = f"{node.module}.{alias.name}"
                    assert submodule in found or submodule not in sys.modules, submodule
    # lesson 11's `from attncore.lm import inference as inf`: a submodule, imported too
    assert {"pandas", "attncore.lm.inference", "pages.ui.layout"} <= set(found)
    for name in found:
        importlib.import_module(name)


def test_streamlit_run_finds_the_app_that_prepares():
    # `streamlit run dashboard.py` imports the file as a module named "dashboard" (not
    # "__main__"): it then defines the st.App whose lifespan is the preparation
    import streamlit as st

    dashboard = importlib.import_module("dashboard")
    assert isinstance(dashboard.app, st.App)
    assert dashboard.app._user_lifespan is server_start.lifespan


def made_up_growth(ns, heads, d_k, rounds, rng, progress=None, **_):
    ns = np.asarray(ns)
    seconds = 1e-3 * (ns / ns[0]) ** 2.0  # n² exactly: every round fits 2.00
    return cost.Growth(ns=ns, heads=heads, d_k=d_k, rounds=rounds, seconds=seconds,
                       round_seconds=np.tile(seconds, (rounds, 1)), peak_bytes=ns * 0 + 1,
                       weights_bytes=heads * ns * ns * 8, fit_ns=ns[ns >= 128], exponent=2.0,
                       exponent_low=2.0, exponent_high=2.0)


def made_up_loop(n, heads, d_k, rounds, rng, **_):
    ratios = np.full(rounds, 3.0)  # the vectorised call 3× faster in every round
    return cost.LoopExperiment(n, heads, d_k, rounds, 1e-3, 3e-3, ratios, 0.0)


def refuse(*_, **__):
    raise AssertionError("measured again on a visit: the server's start had measured it")


def test_lesson_7_s_first_visit_shows_the_timings_the_server_measured(monkeypatch):
    monkeypatch.setattr(cost, "measure_growth", made_up_growth)
    monkeypatch.setattr(cost, "loop_experiment", made_up_loop)
    timings.measure_defaults()
    assert len(timings.conclusive_runs()) == 3  # section 1, and section 3's two settings
    monkeypatch.setattr(cost, "measure_growth", refuse)
    monkeypatch.setattr(cost, "loop_experiment", refuse)
    at = open_page(str(ROOT / "pages" / "7_Cost.py"))
    assert_no_exception(at)
    # the made-up loop: 3 ms against 1 ms in every round
    table = next(t.value for t in at.table if "speed-up" in t.value.columns)
    assert list(table["speed-up"]) == [
        "3.00× (rounds: 3.00× to 3.00×; the vectorised call faster in every round)"] * 2


def test_an_inconclusive_timing_at_the_start_is_not_passed_on(monkeypatch):
    def disagreeing_loop(n, heads, d_k, rounds, rng, **_):
        return cost.LoopExperiment(n, heads, d_k, rounds, 1e-3, 1e-3,
                                   np.linspace(0.8, 1.2, rounds), 0.0)

    monkeypatch.setattr(cost, "measure_growth", made_up_growth)
    monkeypatch.setattr(cost, "loop_experiment", disagreeing_loop)
    timings.measure_defaults()
    assert [key[0] for key in timings.conclusive_runs()] == ["growth"]


@needs_smollm
def test_lesson_11_s_first_visit_shows_the_comparison_the_server_measured(monkeypatch):
    said = []
    server_start.prepare(said.append)
    steps = [line.split(":")[0].strip() for line in said[1:-1]]
    assert steps == ["libraries the pages import", "SmolLM2 (lessons 10 to 12)",
                     "all-MiniLM-L6-v2 (lesson 9)",
                     "the kept results' versions (each a hash of its modules' sources)",
                     "lesson 7's timings at its defaults",
                     "lesson 11's KV-cache comparison at its defaults"], said
    assert said[-1].startswith("Attention Lab: ready in ")
    # The versions were read at the start: a visit asking for one parses no source, so
    # no two sessions' threads run Python's parser at once.
    def no_parsing(*args, **kwargs):
        raise AssertionError("a source was parsed after the server's start")

    monkeypatch.setattr(results_cache.ast, "parse", no_parsing)
    assert set(results_cache.versions()) == set(results_cache.RESULTS)
    # one BLAS thread for good: the lessons' one_blas_thread contexts then never set
    # OpenBLAS's thread count under another session's product
    assert {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"} == {1}
    monkeypatch.setattr(inf, "cache_comparison", refuse)
    at = open_page(str(ROOT / "pages" / "11_Inference.py"), timeout=180)
    assert_no_exception(at)
    text = text_of(at)
    # "The capital of France is" is 5 tokens; after 8 steps the cache holds 5 + 7 = 12:
    # 2 · 30 · 3 · 64 · 12 · 4 = 552,960 bytes
    assert (CACHE_PROMPT, CACHE_STEPS) == ("The capital of France is", 8)
    assert "**552,960 bytes** measured on the arrays themselves" in text
    assert "Measured on this server under a minute ago, 8 steps:" in text_of(at, "caption")


def test_a_step_that_fails_is_left_to_its_page(monkeypatch):
    said = []

    def broken():
        raise ValueError("the files fail their checks")

    monkeypatch.setattr(server_start, "_kv_cache_comparison", broken)
    monkeypatch.setattr(server_start, "_cost_timings", lambda: None)
    monkeypatch.setattr(server_start, "_models", lambda say: None)
    server_start.prepare(said.append)
    assert ("  lesson 11's KV-cache comparison at its defaults: skipped (ValueError: the files "
            "fail their checks)") in said
    assert said[-1].startswith("Attention Lab: ready in ")


def test_no_page_relies_on_streamlit_magic():
    # The server runs with magic off (its parser is not safe in two threads at once in
    # CPython 3.11): a bare value on its own line would then show nothing, so no page has
    # one. Calls are never written by magic anyway; docstrings are not shown.
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["runner"]["magicEnabled"] is False
    scripts = [ROOT / "dashboard.py", *sorted((ROOT / "pages").glob("*.py"))]
    bare = []
    for script in scripts:
        for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
            value = getattr(node, "value", None)
            shown = not isinstance(value, ast.Call | ast.Yield) and not (
                isinstance(value, ast.Constant) and isinstance(value.value, str))
            if isinstance(node, ast.Expr) and shown:
                bare.append(f"{script.name}:{node.lineno}")
    assert len(scripts) == len(LESSONS) + 1 and bare == []
