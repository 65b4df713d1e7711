"""Lesson 11's diagram: the KV cache of one layer as it grows (a row per token, a key and a
value for each key/value head, the newest row highlighted), the query heads that share each
KV head, the cache's bytes by the lesson's formula, and the rows a sliding window with sinks
keeps and drops; rows and heads capped so that any model and any length fit."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import assert_no_exception, open_page
from diagram_checks import first_index, font_size, is_svg, one_diagram
from released_configs import GPT2, RELEASED, SMOLLM2

from attncore.lm.config import LMConfig
from pages.text.inference import per_token_bytes
from pages.ui.figures.diagrams import HIGHLIGHT_FILL, overlapping_texts, texts_outside_boxes
from pages.ui.figures.models import kv_cache_rows
from tests.model_marks import needs_smollm

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "11_Inference.py")
MAX_WIDTH_EM = 55  # 1100 px at the projector's 20 px: it fits a 1280 px screen
MQA = LMConfig(n_layers=4, n_heads=8, n_kv_heads=1, d_model=256, d_ff=512, vocab_size=300,
               context_length=256, norm_eps=1e-5, rope_base=1e4)
CONFIGS = {**RELEASED, "one KV head": MQA}
# 2 · L · n_KV · d_k · b for SmolLM2 in float32: 2 · 30 · 3 · 64 · 4 = 46,080 bytes a token
SMOLLM2_TOKEN = 46_080
DROPPED = "#D0D2D8"  # the fill of a dropped row's cells
PROMPT = ["The", "␣capital", "␣of", "␣France", "␣is"]


def texts(d) -> list[str]:
    return [text for text, _ in d.text_boxes()]


def row_labels(d) -> list[str]:
    """The rows drawn, top to bottom, by their labels ("12 ␣is"), "⋮" for the rows left out."""
    return [t.text for t in d.labels if t.anchor == "end" and (t.text == "⋮"
                                                              or t.text[0].isdigit())]


def cache(T=12, *, cfg=SMOLLM2, font=14, tokens=None, **kw):
    return kv_cache_rows(cfg, T, font, per_token=per_token_bytes(cfg), tokens=tokens, **kw)


def test_the_page_s_count_of_bytes_a_token_is_the_formula():
    assert per_token_bytes(SMOLLM2) == SMOLLM2_TOKEN
    assert per_token_bytes(GPT2) == 2 * 12 * 12 * 64 * 4  # every head its own: 73,728


def test_the_cache_after_generation_holds_the_prompt_and_the_written_tokens():
    # "The capital of France is" (5 tokens) and 8 steps: the cache holds 5 + 8 - 1 = 12
    tokens = [*PROMPT, "␣Paris", ".", "␣It", "␣is", "␣the", "␣largest", "␣city"]
    d = cache(12, tokens=tokens, prompt=5)
    drawn = texts(d)
    for text in ("2 · L · n_KV · d_k · T · b", "= 2 · 30 · 3 · 64 · 12 · 4",
                 f"= {12 * SMOLLM2_TOKEN:,} bytes", "prompt, rows 1–5", "written, rows 6–12",
                 "← newest: appended at step 8"):
        assert text in drawn, text
    assert 12 * SMOLLM2_TOKEN == 552_960
    # the first row, the prompt's last, the first written, the newest; "⋮" for the rest
    assert row_labels(d) == ["1 The", "⋮", "5 ␣is", "6 ␣Paris", "⋮", "12 ␣city"]
    newest = next(t for t in d.labels if t.text == "12 ␣city")
    assert newest.bold
    # each drawn row has a key and a value cell for each of the 3 KV heads; the newest's
    # are highlighted
    cells = [r for r in d.rects if r[4] != "#31333F"]
    assert len(cells) == 4 * 3 * 2
    assert sum(r[4] == HIGHLIGHT_FILL for r in cells) == 3 * 2
    said = d.describe()
    assert "rows drawn: 1, 5, 6, 12 (the other 8 are left out, as ⋮, to fit)" in said
    assert "row 12, the newest, appended at step 8" in said
    assert "2 · 30 · 3 · 64 · 12 · 4 = 552,960 bytes" in said


def test_a_short_cache_draws_every_row():
    d = cache(6, tokens=PROMPT + ["␣Paris"], prompt=5)
    # a piece longer than 6 characters is cut to 5 and "…"
    assert row_labels(d) == ["1 The", "2 ␣capi…", "3 ␣of", "4 ␣Fran…", "5 ␣is", "6 ␣Paris"]
    assert "every row drawn" in d.describe()


@pytest.mark.parametrize(("name", "groups"), [
    ("SmolLM2", {1: [1, 2, 3], 2: [4, 5, 6], 3: [7, 8, 9]}),  # 9 query heads, 3 each
    ("Qwen2", {1: [1, 7], 2: [8, 14]}),  # 7 each: the first and last of each drawn
    ("GPT-2", {1: [1], 2: [2], 12: [12]}),  # its own each: KV heads 1, 2, …, 12 drawn
    ("Llama 3.2", {1: [1, 4], 2: [5, 8], 8: [29, 32]}),
    ("one KV head", {1: [1, 8]})])
def test_each_query_head_s_arrow_ends_on_the_kv_head_it_reads(name, groups):
    d = cache(cfg=CONFIGS[name])
    sub = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
    queries = {int(b.lines[0][1:].translate(sub)): b for b in d.boxes
               if b.lines and b.lines[0].startswith("q")}
    keys = {int(b.lines[0][1:].translate(sub)): b for b in d.boxes
            if b.lines and b.lines[0].startswith("K")}
    values = {int(b.lines[0][1:].translate(sub)): b for b in d.boxes
              if b.lines and b.lines[0].startswith("V")}
    assert keys.keys() == values.keys() == groups.keys()
    assert sorted(queries) == sorted(h for heads in groups.values() for h in heads)
    for kv, heads in groups.items():
        for h in heads:
            q = queries[h]
            arrow = next(a for a in d.arrows if a.start == (q.centre[0], q.y + q.h))
            # the arrow ends on top of KV head kv's key and value boxes
            assert keys[kv].x <= arrow.end[0] <= values[kv].x + values[kv].w, (h, kv)
            assert arrow.end[1] == keys[kv].y
    assert len(d.arrows) == len(queries)


def test_the_text_alternative_says_which_heads_share_which_kv_head():
    assert ("the 9 query heads share 3 key/value heads, 3 each: q1–q3 read KV 1, q4–q6 read "
            "KV 2, q7–q9 read KV 3") in cache().describe()
    assert "each of the 12 query heads reads its own key/value head" in cache(
        cfg=GPT2).describe()
    assert "all 8 query heads read the one key/value head" in cache(cfg=MQA).describe()


def test_a_window_with_sinks_keeps_the_sinks_and_the_last_w_rows():
    # 256 tokens, W = 32, S = 4: rows 1-4 and 225-256 kept (36), rows 5-224 dropped (220)
    d = cache(256, window=32, sinks=4)
    drawn = texts(d)
    for text in ("= 2 · 30 · 3 · 64 · 36 · 4",
                 f"= {36 * SMOLLM2_TOKEN:,} of {256 * SMOLLM2_TOKEN:,} bytes",
                 "sinks, rows 1–4: kept", "rows 5–224: dropped", "window, rows 225–256: kept",
                 "← newest: the query"):
        assert text in drawn, text
    assert (36 * SMOLLM2_TOKEN, 256 * SMOLLM2_TOKEN) == (1_658_880, 11_796_480)
    assert row_labels(d) == ["1", "⋮", "4", "5", "⋮", "224", "225", "⋮", "256"]
    dropped = {t.text for t in d.labels if t.dim and t.text in row_labels(d)}
    assert dropped == {"5", "224"}
    # 2 dropped rows drawn, a key and a value for each of 3 KV heads
    assert sum(r[4] == DROPPED for r in d.rects) == 2 * 3 * 2
    said = d.describe()
    assert ("a window of 32 with 4 sinks keeps 36 of them for token 256 (rows 1 to 4 and rows "
            "225 to 256), 220 dropped") in said
    assert "rows drawn: 1, 4, 5, 224, 225, 256 (the other 250 are left out, as ⋮, to fit)" in said


def test_without_sinks_the_first_rows_are_dropped_and_a_long_window_keeps_everything():
    d = cache(64, window=4, sinks=0)
    assert "rows 1–60: dropped" in texts(d) and "window, rows 61–64: kept" in texts(d)
    assert "keeps 4 of them for token 64 (rows 61 to 64), 60 dropped" in d.describe()
    whole = cache(64, window=64, sinks=16)  # the window alone reaches token 1
    assert not any(r[4] == DROPPED for r in whole.rects)
    assert "keeps 64 of them for token 64: all of them" in whole.describe()
    assert f"= {64 * SMOLLM2_TOKEN:,} bytes" in texts(whole)


LONG = ["<script>alert(1)</script>", "␣supercalifragilistic", "↵", "\\xE2"] * 400


@pytest.mark.parametrize("font", [14, 20])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_nothing_overlaps_at_the_page_s_largest_settings(name, font):
    """Section 1: a prompt of up to 300 characters and 24 steps (a few hundred tokens);
    section 3: up to 256 tokens, W from 4 to N, S from 0 to 16."""
    cfg = CONFIGS[name]
    settings = [dict(T=T, prompt=T - steps + 1) for T in (2, 7, 12, 600)
                for steps in (2, min(T, 24))]
    settings += [dict(T=N, window=W, sinks=S) for N in (64, 256) for W in (4, 32, N)
                 for S in (0, 1, 16)]
    for s in settings:
        d = cache(cfg=cfg, font=font, tokens=LONG[:s["T"]], **s)
        where = f"{name}, {s}, font {font}"
        assert overlapping_texts(d) == [], where
        assert texts_outside_boxes(d) == [], where
        assert d.size()[0] <= MAX_WIDTH_EM, where
        assert len(row_labels(d)) <= 9, where  # rows capped: at most 9 lines, "⋮" among them
    # a token is drawn as text, never as markup, cut to fit beside its row
    markup = cache(4, tokens=LONG[:4], prompt=3).svg()
    assert "<script>" not in markup and "1 &lt;scri…" in markup


def test_a_size_that_does_not_fit_the_model_is_refused():
    with pytest.raises(ValueError, match="does not fit"):
        kv_cache_rows(SMOLLM2, 12, 14, per_token=SMOLLM2_TOKEN + 1, prompt=5)
    with pytest.raises(ValueError, match="does not fit"):
        kv_cache_rows(SMOLLM2, 0, 14, per_token=SMOLLM2_TOKEN)


# ---- the page -----------------------------------------------------------------------


def titled(at, title: str) -> str:
    """The SVG markup of the diagram whose title starts so (exactly one)."""
    return one_diagram(at, f'aria-label="{title}')


@needs_smollm
def test_the_page_draws_the_cache_as_it_grows_and_the_window_at_its_settings():
    at = open_page(PAGE, timeout=180, inf_steps="3")
    # "The capital of France is" is 5 tokens; after 3 steps the cache holds 5 + 2 = 7 rows:
    # 7 · 46,080 = 322,560 bytes, what the page measures on the arrays
    grown = titled(at, "The KV cache of one layer after 7 tokens")
    for text in ("= 2 · 30 · 3 · 64 · 7 · 4", "= 322,560 bytes", "prompt, rows 1–5",
                 "← newest: appended at step 3", "1 The", "5 ␣is"):
        assert f">{text}</text>" in grown, text
    assert "**322,560 bytes** measured on the arrays" in " ".join(m.value for m in at.markdown)
    # the cache comes before the first figure of section 1
    assert first_index(at, is_svg) < first_index(at, lambda n: n.type == "plotly_chart")
    # section 3 at its defaults: 256 tokens, W = 32, S = 4
    window = titled(at, "The KV cache of one layer after 256 tokens, window 32 with 4 sinks")
    assert ">= 1,658,880 of 11,796,480 bytes</text>" in window
    assert ">rows 5–224: dropped</text>" in window
    # the sinks slider redraws it: without sinks, the window's 32 rows alone
    at.slider(key="inf_sinks").set_value(0).run()
    assert_no_exception(at)
    window = titled(at, "The KV cache of one layer after 256 tokens, window 32 with 0 sinks")
    assert f">= {32 * SMOLLM2_TOKEN:,} of 11,796,480 bytes</text>" in window  # 1,474,560
    assert ">rows 1–224: dropped</text>" in window


@needs_smollm
def test_presenter_mode_draws_both_at_the_projector_s_font():
    at = open_page(PAGE, timeout=180, presenter="true", inf_steps="4")
    for title in ("The KV cache of one layer after 8 tokens",  # 5 + 4 - 1
                  "The KV cache of one layer after 256 tokens, window 32 with 4 sinks"):
        assert font_size(titled(at, title)) == "20"
    captions = " ".join(c.value.replace("\\", "") for c in at.caption)
    # rows 1, 5 (the prompt's last), 6 (the first written) and 8, the newest; row 7 alone
    # between two drawn rows is drawn too
    assert "rows drawn: 1, 5, 6, 7, 8 (the other 3 are left out, as ⋮, to fit)" in captions
