"""Lesson 5's diagram: where each positional scheme enters lesson 1's flow (a table added
to X, a rotation of q and k, a term q·a in QKᵀ, a bias after ÷ √d_k), with the page's T
and d_model and the scheme picked above it highlighted."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import open_page
from diagram_checks import one_diagram
from presenter_order import above_first_figure

from pages.ui.figures.diagrams import overlapping_texts, texts_outside_boxes
from pages.ui.figures.models import SCHEME_ENTRIES, positional_flow

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "5_Positional_encoding.py")
SCHEMES = ["sinusoidal", "learned", "RoPE", "ALiBi", "relative"]
# Each scheme's entry box (its name in the text alternative) and the part of the flow it
# changes, as the lesson says: added to X; q and k rotated; a learned vector added to the
# key, so a term q·a in QKᵀ (Shaw et al.); a bias added after ÷ √d_k (Press et al.: the
# bias joins q·k/√d_k), whose arrow ends on the link to the softmax, no box.
ENTRY = {"sinusoidal": "sinusoidal or learned: a table P", "learned": "sinusoidal or learned",
         "RoPE": "RoPE: each query and key rotated",
         "ALiBi": "ALiBi: a bias by offset", "relative": "relative: a learned vector a"}
CHANGED = {"sinusoidal": ["X"], "learned": ["X"], "RoPE": ["Q = X·W_Q", "K = X·W_K"],
           "ALiBi": [], "relative": ["QKᵀ"]}


def crosses_a_box(d, arrow) -> list[str]:
    """The boxes an arrow runs through (its two ends excepted): points every 0.1 em along
    it, 0.3 em clear of its ends, strictly inside a box."""
    (x0, y0), (x1, y1) = arrow.start, arrow.end
    length = ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5
    steps = max(int(length / 0.1), 1)
    hit = set()
    for i in range(steps + 1):
        t = i / steps
        if t * length < 0.3 or (1 - t) * length < 0.3:
            continue
        x, y = x0 + t * (x1 - x0), y0 + t * (y1 - y0)
        hit |= {b.lines[0] for b in d.boxes if b.x < x < b.x + b.w and b.y < y < b.y + b.h}
    return sorted(hit)


def drawn(at) -> str:
    """The diagram of where position enters, on the page (exactly one)."""
    return one_diagram(at, "Where position enters attention")


# ---- the pure function ------------------------------------------------------------------

@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_chosen_scheme_and_the_part_it_changes_are_highlighted(scheme):
    d = positional_flow(64, 64, scheme, 14)
    entries = [b for b in d.boxes if b.y < 1]  # the row of entries above the flow
    chosen = [b for b in entries if b.highlight]
    assert len(entries) == 4 and len(chosen) == 1
    assert chosen[0].name.startswith(ENTRY[scheme])
    assert chosen[0].lines[1].startswith(scheme)  # the chosen name first, in bold
    flow = [b.lines[0] for b in d.boxes if b.highlight and b not in entries]
    assert flow == CHANGED[scheme]
    assert [a.highlight for a in d.arrows[-4:]] == [b.highlight for b in entries]
    assert f"{ENTRY[scheme]}" in d.describe() and d.title.endswith(f": {scheme}")


def test_the_shapes_follow_t_and_d_model():
    # T = 40 positions of d_model = 10: P is 40 × 10, the scores and their bias 40 × 40,
    # and √d_k = √10 ≈ 3.16 (d_k = d_model: one head).
    said = positional_flow(40, 10, "ALiBi", 14).describe()
    assert "X, 40 tokens × d_model 10" in said and "Q, 40 × 10" in said
    assert "a table P, 40 × 10, added to X" in said
    assert "a bias by offset, 40 × 40, added after ÷ √d_k, before the softmax (highlighted)" \
        in said
    assert "scores QKᵀ, 40 × 40;" in said and "divided by √d_k = √10;" in said


def test_alibi_enters_after_the_scaling_and_relative_inside_the_scores():
    # ALiBi: s = q·k/√d_k − m·(i − j), so its arrow ends between ÷ √d_k and the softmax;
    # relative (Shaw et al.): q·(k + a)/√d_k, so its arrow ends on QKᵀ, before the scaling.
    d = positional_flow(64, 64, "ALiBi", 14)
    box = {b.lines[0]: b for b in d.boxes}
    scale, soft = box["÷ √d_k"], box["softmax"]
    alibi, relative = d.arrows[-1], d.arrows[-2]
    assert scale.x + scale.w < alibi.end[0] < soft.x
    assert scale.y < alibi.end[1] < scale.y + scale.h
    qk = box["QKᵀ"]
    assert qk.x <= relative.end[0] <= qk.x + qk.w and relative.end[1] == qk.y


@pytest.mark.parametrize("font", [14, 20])
@pytest.mark.parametrize("T, d_model", [(64, 64), (8, 2), (512, 512), (8, 512), (512, 2)])
def test_every_setting_the_page_allows_fits_without_overlaps(T, d_model, font):
    for scheme in SCHEMES:
        d = positional_flow(T, d_model, scheme, font)
        assert overlapping_texts(d) == [] and texts_outside_boxes(d) == []
        # Each entry's arrow meets its part of the flow and runs through no other box.
        for arrow in d.arrows[-4:]:
            assert crosses_a_box(d, arrow) == []
        width, height = d.size()
        # About 55 em wide (58 em at 20 px shows at 19.3 px in a 1120 px column), and
        # short enough to stand below the controls on a 720 px projector (16.5 em, 330 px).
        assert width <= 58 and height <= 16.5


def test_an_unknown_scheme_is_refused():
    with pytest.raises(ValueError, match="sinusoidal, learned, RoPE, ALiBi, relative"):
        positional_flow(64, 64, "T5 buckets", 14)


# ---- on the page ------------------------------------------------------------------------

@pytest.mark.parametrize("presenter", [False, True])
def test_the_page_draws_its_model_below_the_controls(presenter):
    at = open_page(PAGE, **({"presenter": "true"} if presenter else {}))
    assert at.radio(key="pe_scheme").options == list(SCHEME_ENTRIES) == SCHEMES
    markup = drawn(at)
    assert "(64 positions, d_model 64): sinusoidal" in markup
    assert "a table P, 64 × 64, added to X (highlighted)" in markup
    above = above_first_figure(at)  # the diagram is the first figure, after the controls
    assert {"pe_len", "pe_dmodel", "pe_base", "pe_scheme"} <= {
        getattr(n, "key", None) for n in above}
    downloads = [b for b in at.get("download_button") if b.label == "This diagram (SVG)"]
    assert len(downloads) == (0 if presenter else 1)


def test_a_changed_control_changes_the_diagram():
    at = open_page(PAGE)
    at.radio(key="pe_scheme").set_value("RoPE").run()
    markup = drawn(at)
    assert "RoPE: each query and key rotated by its position (highlighted)" in markup
    assert "a table P, 64 × 64, added to X;" in markup  # no longer highlighted
    at.slider(key="pe_dmodel").set_value(128).run()
    assert "(64 positions, d_model 128): RoPE" in drawn(at)
    assert "Q, 64 × 128 (highlighted)" in drawn(at)
