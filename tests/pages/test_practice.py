"""Practice questions exist on every lesson, and revealing or checking an answer works."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from conftest import app_scripts, page_at_defaults, run_page, script_id

LESSONS = [p for p in app_scripts() if p.parent.name == "pages"]

# Questions with a number to check: key -> the right answer, worked out by hand.
CHECKED = {
    "why_pq1": 32.0,  # the fixed decoder gets h_n: d = 32 numbers at the default width
    "why_pq3": 1 / 12,  # a random letter of 12 is right once in 12
    "we_pq2": 1 / 3,  # three equal scores: e⁰ / (3 e⁰) = 1/3
    "sc_pq2": 64.0,  # Var[qᵀk] = d_k σ⁴ = 64 · 1
    "mk_pq1": math.e / (math.e + 1),  # e² / (e² + e¹) = e / (e + 1) = 0.7311
    "mha_pq1": 8.0,  # d_k = 64 / 8
    "mha_pq2": 16384.0,  # 4 · 64² = 16,384
    "pe_pq1": math.sin(1.0),  # sin(1 / b⁰) = sin 1 = 0.8415
    "pe_pq4": 0.5,  # 6 ALiBi heads: head 5 takes the first 8-head slope, 2^(−8/8)
    "s2s_pq1": 256.0,  # W is 16 × 16
    "cost_pq1": 64.0,  # 8 · 1024² · 8 bytes = 2²⁹ bytes = 64 · 2²⁰
    "cost_pq2": 9.0,  # (3n)² / n² = 9
    "cost_pq4": 1073741824.0,  # 2 · H · n² · d_k = 2 · 8 · 1024² · 64 = 2³⁰
    "lm_pq1": 3.0,  # 9 query heads / 3 key/value heads
    "lm_pq2": 8.0,  # √64
    "inf_pq1": 46080.0,  # 2 · 30 · 3 · 64 · 4 bytes
    "inf_pq2": 3.0,  # 9 / 3
    "ans_pq1": 0.75,  # (4 − (−2)) / (6 − (−2)) = 6 / 8
    "ans_pq2": 270.0,  # 30 layers · 9 heads
}


@pytest.mark.parametrize("script", LESSONS, ids=script_id)
def test_every_lesson_has_two_to_four_questions_with_answers(script: Path):
    at = page_at_defaults(script)
    assert any(h.value == "Practice questions" for h in at.subheader)
    answers = [e for e in at.expander if e.label.startswith("Answer ")]
    assert 2 <= len(answers) <= 4
    for expander in answers:  # each answer can be revealed and says something
        assert expander.markdown and len(expander.markdown[0].value) > 10


@pytest.mark.parametrize("key, answer", CHECKED.items())
def test_checking_an_answer_marks_it(key: str, answer: float):
    at = run_page(_page_with_key(key))
    at.number_input(key=key).set_value(round(answer, 4)).run()
    assert any("Right" in s.value for s in at.success), key
    at.number_input(key=key).set_value(answer + 1.0).run()
    assert any("Not quite" in w.value for w in at.warning)


def _page_with_key(key: str) -> Path:
    prefix = key.split("_")[0]
    for script in LESSONS:
        if f'"{prefix}_' in script.read_text(encoding="utf-8"):
            return script
    raise AssertionError(f"no page uses the prefix {prefix}_")
