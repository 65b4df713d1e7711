"""Lesson 12's diagram: the clean and the corrupted run as two columns of layers, one
activation copied across (a stream, a head), an edge cut, or LD split into its parts.

The pure function is checked against numbers worked out here by hand, at the page's
defaults and at its extremes (32 tokens, layers 0 and 30, the first and the last head,
windows of 1 and 30 layers); the page (with SmolLM2) against its own study."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from conftest import open_page
from diagram_checks import elements, font_size, one_diagram, svgs
from presenter_order import above_first_figure, is_figure

from pages.ui.figures.diagrams import overlapping_texts, texts_outside_boxes
from pages.ui.figures.models import RUN_MODES, patching_runs
from tests.model_marks import needs_smollm

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "12_Attention_for_the_answer.py")
CLEAN = ["The", "␣capital", "␣of", "␣France", "␣is"]
CORRUPT = ["The", "␣capital", "␣of", "␣Italy", "␣is"]
L, H = 30, 9  # SmolLM2's layers and heads a layer
LD = (7.31, -6.02)


def parts(largest=("head", 23, 4), biases=None):
    """Attribution parts of 0.01 each but one of 3 (where ``largest`` says)."""
    embed, heads, ffn = 0.01, np.full((L, H), 0.01), np.full(L, 0.01)
    kind, layer, head = largest
    if kind == "embedding":
        embed = 3.0
    elif kind == "head":
        heads[layer, head] = 3.0
    elif kind == "ffn":
        ffn[layer] = 3.0
    return embed, heads, ffn, biases


def runs(mode="residual", clean=CLEAN, corrupt=CORRUPT, changed=(3,), font=14, **kw):
    defaults = {"residual": {"layer": 24, "position": len(clean) - 1, "recovery": 1.0},
                "head": {"layer": 23, "head": 4, "recovery": 0.93},
                "knockout": {"window": (20, 28), "p_answer": (0.773, 0.079)},
                "attribution": {"parts": parts()}}[mode]
    return patching_runs(clean, corrupt, changed, font, mode=mode, n_layers=L, n_heads=H,
                         ld=LD, answer="␣Paris", **{**defaults, **kw})


def box_lines(d, highlighted=None) -> list[str]:
    return [line for b in d.boxes for line in b.lines
            if highlighted is None or b.highlight == highlighted]


def rows(d, x: float = 0.5) -> list[str]:
    """The rows of the column whose left edge is at ``x`` (the clean run's by default), top
    to bottom: the boxes as wide as the column."""
    return [" / ".join(b.lines) for b in sorted(d.boxes, key=lambda b: b.y)
            if b.x == x and b.w > 20 and b.lines]


def labels(d) -> list[str]:
    return [label.text for label in d.labels]


def layers_covered(d, column_x: float) -> list[int]:
    """Every layer (from 1) a column's rows name, in order: "layer 25", "⋮ layers 1–24 ⋮",
    "layers 21–29" (a knockout window)."""
    found = []
    texts = [line for b in d.boxes if abs(b.x - column_x) < 1e-9 for line in b.lines]
    texts += [label.text for label in d.labels if label.x < column_x + 1.0]
    for text in texts:
        for a, b in re.findall(r"^(?:⋮ )?layers? (\d+)(?:–(\d+))?(?: ⋮)?(?::.*)?$", text):
            found += list(range(int(a), int(b or a) + 1))
    return sorted(found)


# ---- the pure function -------------------------------------------------------------


def test_the_default_draws_both_prompts_and_copies_the_last_tokens_stream_into_layer_25():
    d = runs()
    # the tokens along the top of both columns, the changed one highlighted in each
    assert box_lines(d, highlighted=True)[:2] == ["␣France", "␣Italy"]
    for token in ("The", "␣capital", "␣of", "␣is"):
        assert box_lines(d).count(token) == 2
    assert "Clean run: “The capital of France is”" in labels(d)
    assert "Corrupted run: “The capital of Italy is”" in labels(d)
    # layer 24 (from 0) is the 25th: the rows are the embedding, layers 1–24 folded, the
    # layer, 26–30 folded, the unembedding: every layer once in each column
    assert rows(d) == ["embedding", "⋮ layers 1–24 ⋮", "layer 25", "⋮ layers 26–30 ⋮",
                       "unembedding → LD = 7.31"]
    assert layers_covered(d, 0.5) == list(range(1, L + 1))
    # patched LD = −6.02 + 1.0 × (7.31 − (−6.02)) = 7.31, by hand
    assert "LD = -6.02 → 7.31 patched" in box_lines(d)
    assert "unembedding → LD = 7.31" in box_lines(d)
    assert labels(d)[-1] == "recovery = (patched − corrupted) / (clean − corrupted) = 1.00"
    text = d.describe()
    assert "the changed token at position 4, ␣France against ␣Italy" in text
    assert "the clean stream at position 5, ␣is, entering layer 25, is copied" in text


def test_the_copy_joins_the_same_position_in_both_runs():
    d = runs(position=3, layer=0)
    marks = [b for b in d.boxes if b.highlight and not b.lines]
    tokens = {b.lines[0]: b for b in d.boxes if b.lines and b.lines[0] in ("␣France", "␣Italy")}
    assert [m.centre[0] for m in marks] == pytest.approx(
        [tokens["␣France"].centre[0], tokens["␣Italy"].centre[0]])
    # entering layer 1: between the embedding and layer 1
    embedding, layer_1 = (next(b for b in d.boxes if b.lines == (t,))
                          for t in ("embedding", "layer 1"))
    assert embedding.y + embedding.h < marks[0].y < marks[0].y + marks[0].h < layer_1.y
    (arrow,) = d.arrows
    assert arrow.start[1] == arrow.end[1] == pytest.approx(marks[0].centre[1])


def test_a_stream_after_the_last_layer_enters_the_unembedding():
    d = runs(layer=L, recovery=0.25)
    assert rows(d)[:2] == ["embedding", "⋮ layers 1–30 ⋮"]
    assert "entering the unembedding" in d.describe()
    # −6.02 + 0.25 × (7.31 − (−6.02)) = −6.02 + 3.3325 = −2.6875, by hand
    assert "LD = -6.02 → -2.69 patched" in rows(d, 30.0)


@pytest.mark.parametrize("head", [0, 4, 8])
def test_a_head_patch_draws_the_layers_heads_and_copies_the_chosen_one(head):
    d = runs("head", head=head)
    picked = box_lines(d, highlighted=True)
    assert picked.count(f"H{head + 1}") == 2  # one in each run
    assert [f"H{h + 1}" for h in range(H)] == [t for t in box_lines(d) if t.startswith("H")][:H]
    assert labels(d).count("layer 24's attention: heads before W_O") == 2
    assert f"head {head + 1} of the 9 of layer 24" in d.describe()
    # −6.02 + 0.93 × 13.33 = 6.3769, by hand
    assert "LD = -6.02 → 6.38 patched" in box_lines(d)


def test_many_heads_are_drawn_as_the_first_the_last_and_the_chosen_ones_neighbours():
    d = patching_runs(CLEAN, CORRUPT, [3], 14, mode="head", n_layers=L, n_heads=32, ld=LD,
                      layer=0, head=15, recovery=0.1)
    heads = [t for t in box_lines(d) if t.startswith("H")][:7]
    assert heads == ["H1", "H2", "H15", "H16", "H17", "H31", "H32"]
    assert labels(d).count("…") >= 4  # two gaps in each run


def test_the_knockout_cuts_the_edge_in_its_window_only_in_the_second_run():
    d = runs("knockout", window=(20, 28))
    assert [a.dashed for a in d.arrows] == [False, True]  # read, then cut
    for arrow in d.arrows:  # from the changed token down to the last one
        assert arrow.start[0] < arrow.end[0] and arrow.start[1] < arrow.end[1]
    assert "layers 21–29: edge cut" in labels(d) and "✕" in labels(d)
    assert layers_covered(d, 0.5) == list(range(1, L + 1))
    assert "p(␣Paris) = 0.773" in box_lines(d)
    assert "p(␣Paris) = 0.079" in box_lines(d, highlighted=True)
    assert labels(d)[-1] == ("In layers 21–29 the last token ␣is may not read ␣France, in every "
                             "head.")


@pytest.mark.parametrize("window", [(0, 0), (0, L - 1), (L - 1, L - 1), (10, 18)])
def test_every_window_is_drawn_with_the_layers_around_it(window):
    d = runs("knockout", window=window)
    assert layers_covered(d, 0.5) == list(range(1, L + 1))


@pytest.mark.parametrize("largest, row", [
    (("embedding", 0, 0), "embedding"), (("head", 0, 2), "layer 1"),
    (("ffn", L - 1, 0), "layer 30"), (("biases", 0, 0), None),
])
def test_the_attribution_highlights_the_largest_part_and_its_rows_add_up(largest, row):
    d = runs("attribution", parts=parts(largest, biases=3.0 if largest[0] == "biases" else None))
    highlighted = box_lines(d, highlighted=True)
    if row is not None:
        assert row in highlighted
    else:
        assert highlighted[-1] == "biases 3.00 · sum = 6.01"
    # the 1 + 270 + 30 parts of the embedding, heads and FFNs are 0.01 but one of 3, or
    # all 0.01 and the biases 3: 3 + 300 × 0.01 = 6.00, or 3 + 301 × 0.01 = 6.01
    total = 6.01 if largest[0] == "biases" else 6.0
    assert f"sum = {total:.2f}" in highlighted[-1] or f"sum = {total:.2f}" in box_lines(d)
    # the rows' parts, as drawn, add up to the sum (each rounded to 2 decimals)
    right = [b for b in d.boxes if b.x > 20 and b.lines and "sum" not in b.lines[0]]
    drawn = sum(float(x) for b in right for x in re.findall(r"(?:embedding|heads|FFNs?) "
                                                            r"(-?\d+\.\d\d)", b.lines[0]))
    assert drawn + (3.0 if largest[0] == "biases" else 0) == pytest.approx(
        total, abs=0.005 * len(right) * 2)
    # the widest arrow comes from the row holding the largest part
    widest = max(d.arrows, key=lambda a: a.weight)
    assert widest.weight == 1.0
    if row == "layer 1":
        assert "largest: L1 H3, 3.00" in highlighted


def test_the_layers_drawn_follow_the_layer_chosen():
    assert runs(layer=3).svg() != runs(layer=4).svg()
    assert "layer 5" in box_lines(runs(layer=4)) and "layer 5" not in box_lines(runs(layer=3))
    assert runs("knockout", window=(3, 5)).svg() != runs("knockout", window=(3, 6)).svg()


LONG = [f"␣token{n:02d}xyz" for n in range(32)]  # 32 tokens of 12 characters, cut to 9
EXTREMES = [
    ("residual", {"layer": 0, "position": 0}), ("residual", {"layer": L, "position": 31}),
    ("head", {"layer": 0, "head": 0}), ("head", {"layer": L - 1, "head": H - 1}),
    ("knockout", {"window": (0, L - 1)}), ("knockout", {"window": (L - 1, L - 1)}),
    ("attribution", {"parts": parts(("ffn", 0, 0), biases=0.5)}),
]


@pytest.mark.parametrize("font", [14, 20])
@pytest.mark.parametrize("mode, kw", [(m, {}) for m in RUN_MODES] + EXTREMES)
@pytest.mark.parametrize("prompt", ["default", "32 tokens", "32 changed", "1 token"])
def test_no_text_overlaps_or_leaves_its_box_at_defaults_and_extremes(mode, kw, prompt, font):
    clean, corrupt, changed = {
        "default": (CLEAN, CORRUPT, [3]),
        "32 tokens": (LONG, LONG[:16] + ["␣other"] + LONG[17:], [16]),
        "32 changed": (LONG, [t.upper() for t in LONG], list(range(32))),
        "1 token": (["Hi"], ["Yo"], [0]),
    }[prompt]
    if "position" in kw:
        kw = {**kw, "position": min(kw["position"], len(clean) - 1)}
    d = runs(mode, clean, corrupt, changed, font, **kw)
    assert overlapping_texts(d) == [] and texts_outside_boxes(d) == []
    width, _ = d.size()
    assert width <= 55.5  # fits 1280 px at 20 px a em
    ET.fromstring(d.svg())  # well-formed
    # the clean prompt is written in full above its column (wrapped)
    title = " ".join(label.text for label in d.labels if label.bold and label.x < 1)
    assert title == "Clean run: “" + "".join(clean).replace("␣", " ").strip() + "”"


def test_with_32_tokens_the_positions_that_matter_are_drawn_and_the_rest_folded():
    corrupt = LONG[:16] + ["␣other"] + LONG[17:]
    d = runs(clean=LONG, corrupt=corrupt, changed=[16], position=5)
    tokens = [t for t in box_lines(d) if t.startswith("␣")]
    assert "␣token16…" in tokens and "␣other" in tokens  # the changed one, cut to 9
    assert "␣token31…" in tokens and "␣token05…" in tokens  # the last and the copied
    assert "…" in labels(d)


@pytest.mark.parametrize("kw, message", [
    ({"layer": L + 1}, "enters layers 0..30"),
    ({"mode": "head", "layer": L}, "layers 0..29 and heads 0..8"),
    ({"mode": "head", "head": H}, "layers 0..29 and heads 0..8"),
    ({"mode": "knockout", "window": (5, L)}, "window is layers"),
    ({"corrupt": CORRUPT[:4]}, "as many tokens"),
    ({"changed": (5,)}, "changed positions"),
])
def test_a_setting_outside_the_model_is_refused(kw, message):
    with pytest.raises(ValueError, match=message):
        runs(**kw)


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="mode must be one of residual, head, knockout"):
        patching_runs(CLEAN, CORRUPT, [3], 14, mode="lens", n_layers=L, ld=LD)


# ---- the page (SmolLM2) ----------------------------------------------------------------


def top_diagram(at) -> str:
    return one_diagram(at, "Clean run: “")


@needs_smollm
def test_the_page_draws_its_runs_from_its_own_study_in_both_modes():
    from attncore import lm
    from attncore.lm import answer

    study = answer.study_texts(lm.model(), *answer.PRESETS["A capital city"])
    for query, font in (({}, 14), ({"presenter": "true"}, 20)):
        at = open_page(PAGE, timeout=120, **query)
        drawn = svgs(at)
        assert len(drawn) == 5, query  # the top, then sections 2, 3 (twice) and 4
        markup = top_diagram(at)
        assert font_size(markup) == str(font)
        # the last token's stream entering the first layer where it restores half or more,
        # found here from the grid
        last = study.residual[:, -1]
        layer = int(np.flatnonzero(last >= 0.5)[0])
        for text in ("Clean run: “The capital of France is”",
                     "Corrupted run: “The capital of Italy is”", f"layer {layer + 1}",
                     f"LD = {study.ld_clean:.2f}",
                     f"= {study.residual[layer, -1]:.2f}</text>"):
            assert text in markup, (query, text)
        # the head diagram copies the grid's largest head
        lh, hh = np.unravel_index(np.argmax(study.heads), study.heads.shape)
        assert any(f"head {hh + 1} of the {study.heads.shape[1]} of layer {lh + 1}" in s
                   for s in drawn)
    # in presenter mode (the last page opened) the pair is the first figure, above the
    # numbers and the sections
    first = next(node for node in elements(at.main) if is_figure(node))
    assert first.value == top_diagram(at)
    assert not any(node.type in ("metric", "header") for node in above_first_figure(at))


@needs_smollm
def test_the_knockout_diagram_follows_the_window_slider():
    from attncore import lm
    from attncore.lm import answer, patching

    m = lm.model()
    study = answer.study_texts(m, *answer.PRESETS["A capital city"])
    at = open_page(PAGE, timeout=120, ans_window="9")  # away from the default, 1
    before = [s for s in svgs(at) if "edge cut" in s]
    at.slider(key="ans_window").set_value(1).run()
    after = [s for s in svgs(at) if "edge cut" in s]
    assert len(before) == len(after) == 1 and before != after
    windows, probs, p_none = patching.knockout(m, study.runs, 1)
    worst = int(np.argmin(probs))
    assert f"layer {worst + 1}: edge cut" in after[0]
    assert f"p(␣Paris) = {probs[worst]:.3f}" in after[0]
    assert f"p(␣Paris) = {p_none:.3f}" in after[0]
