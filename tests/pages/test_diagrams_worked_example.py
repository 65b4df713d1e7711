"""Lesson 1's diagrams: the flow of attention at the top (X → W_Q, W_K, W_V → Q, K, V →
QKᵀ → ÷√d_k → mask → softmax → × V → output) with the cell written out in full marked,
and the row of the four steps at each step's header, that step highlighted.

Expected shapes are the page's own sizes (T tokens, d_k, d_v, d_model of X); the marked
cell is found back from the drawn grid's coordinates.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import open_page, page_at_defaults, page_in_presenter_mode
from diagram_checks import diagram_in, elements
from diagram_checks import text_alternative as desc
from presenter_order import above_first_figure, not_allowed_above

from attncore import causal_mask
from attncore.text import PRESETS, worked_example
from pages.ui.figures.colours import TEXT_COLOUR
from pages.ui.figures.diagrams import HIGHLIGHT_FILL, overlapping_texts, texts_outside_boxes
from pages.ui.figures.models import attention_flow, attention_steps

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "1_Worked_example.py")
MAX_EM = 56.5  # 1120 px of a projector's column at 20 px (the flow shrinks < 1 % there)


def texts(d) -> list[str]:
    return [t for t, _ in d.text_boxes()]


def marked_cells(d) -> list[tuple[float, float, float]]:
    """(x, y, size) of every cell drawn with the highlight's fill."""
    return [(x, y, w) for x, y, w, h, fill, _ in d.rects if fill == HIGHLIGHT_FILL]


def grid_origin(d, size: float) -> tuple[float, float]:
    """The top-left corner of the first white grid of cells of ``size`` em."""
    cells = [(x, y) for x, y, w, h, fill, _ in d.rects if fill == "#FFFFFF" and w == size]
    return min(x for x, _ in cells), min(y for _, y in cells)


# ---- the flow: numbers follow the inputs ----------------------------------------------

def test_the_textbook_flow_has_q_k_and_v_given_and_their_shapes():
    # Textbook: Q, K (3 × 2) and V (3 × 3) are given; S = QKᵀ is 3 × 3, O = W V is 3 × 3.
    d = attention_flow(3, 2, 3, 14)
    assert "X" not in texts(d) and "Q = X·W_Q" not in texts(d)
    said = d.describe()
    for part in ("Q, 3 × 2", "K, 3 × 2", "V, 3 × 3", "scores QKᵀ, 3 × 3", "the output, 3 × 3"):
        assert part in said


def test_a_preset_from_embeddings_draws_x_and_its_projections():
    # "The cat sat", 5 tokens, d_k 3, d_v 2: X is 5 × d_model, Q and K 5 × 3, V 5 × 2.
    ex = worked_example("cat", 5, 3, 2, 0)
    d_model = ex.x.shape[1]
    d = attention_flow(5, 3, 2, 14, d_model=d_model)
    assert {"X", f"(5 × {d_model})", "Q = X·W_Q", "K = X·W_K", "V = X·W_V", "(5 × 3)",
            "(5 × 2)"} <= set(texts(d))
    assert f"X, 5 tokens × d_model {d_model}; Q = X·W_Q, 5 × 3" in d.describe()
    # X's three arrows leave its right side and end on the left of Q, K and V
    x_box = next(b for b in d.boxes if b.lines[0] == "X")
    starts = [a for a in d.arrows if a.start[0] == pytest.approx(x_box.x + x_box.w)]
    targets = {b.lines[0]: b for b in d.boxes}
    assert sorted(a.end[1] for a in starts) == sorted(
        targets[n].centre[1] for n in ("Q = X·W_Q", "K = X·W_K", "V = X·W_V"))


@pytest.mark.parametrize("d_k, root", [(1, "√1 = 1"), (2, "√2 ≈ 1.41"), (3, "√3 ≈ 1.73"),
                                       (4, "√4 = 2")])
def test_the_root_of_d_k_is_equal_only_when_whole(d_k, root):
    # √2 = 1.41421…, √3 = 1.73205…: rounded, so "≈"; √1 and √4 are whole.
    assert root in texts(attention_flow(3, d_k, 3, 14))


def test_scaling_off_is_drawn_dim_and_said():
    d = attention_flow(3, 2, 3, 14, scaled=False)
    box = next(b for b in d.boxes if b.lines[0] == "not scaled")
    assert box.dim and "not scaled" in d.describe()


def test_the_causal_mask_is_a_grid_with_the_hidden_pairs_dark():
    # 4 tokens: the pairs j > i are hidden, 3 + 2 + 1 = 6 of 16.
    d = attention_flow(4, 2, 3, 14, mask=causal_mask(4))
    dark = [r for r in d.rects if r[4] == "#8C8F99"]
    assert len(dark) == 6
    assert "6 of 16 pairs may not attend" in d.describe()


@pytest.mark.parametrize("i, j", [(0, 0), (1, 2), (2, 0)])
def test_the_cell_written_out_is_marked_where_it_is(i, j):
    d = attention_flow(3, 2, 3, 14, cell=("x", "y"), cell_at=(i, j))
    (x, y, size), = marked_cells(d)  # one grid (no mask): one marked cell
    x0, y0 = grid_origin(d, size)
    assert ((x - x0) / size, (y - y0) / size) == (pytest.approx(j), pytest.approx(i))
    assert f"query {i + 1}, key {j + 1}" in texts(d)
    assert f"query {i + 1} (x), key {j + 1} (y)" in d.describe()


def test_with_the_mask_the_cell_is_marked_in_it_too_and_said_hidden_when_it_is():
    # Causal, 3 tokens: (0, 2) is a future key (hidden), (2, 0) a past one.
    hidden = attention_flow(3, 2, 3, 14, cell=("a", "c"), cell_at=(0, 2), mask=causal_mask(3))
    seen = attention_flow(3, 2, 3, 14, cell=("c", "a"), cell_at=(2, 0), mask=causal_mask(3))
    # Outlined in the small grid and in the mask (4 bars each); in the mask the cell keeps
    # its own fill, dark when it is hidden, so only the small grid's cell is warm.
    assert len([r for r in hidden.rects if r[4] == TEXT_COLOUR]) == 8
    assert len(marked_cells(hidden)) == 1
    assert "hidden by the mask" in hidden.describe()
    assert "hidden by the mask" not in seen.describe()
    with pytest.raises(ValueError, match="not in a 3 × 3 grid"):
        attention_flow(3, 2, 3, 14, cell=("a", "b"), cell_at=(3, 0))


EXTREMES = [(preset, T, d_k, d_v) for preset in PRESETS for T in (2, 6)
            for d_k, d_v in ((1, 1), (4, 4), (1, 4))]


@pytest.mark.parametrize("font", [14, 20])
@pytest.mark.parametrize("preset, T, d_k, d_v", EXTREMES)
def test_nothing_overlaps_at_the_pages_sizes(preset, T, d_k, d_v, font):
    ex = worked_example(preset, T, d_k, d_v, 0)
    T, d_k, d_v = ex.q.shape[0], ex.q.shape[1], ex.v.shape[1]  # the textbook's own sizes
    d_model = None if ex.x is None else ex.x.shape[1]
    for causal in (False, True):
        for scaled in (True, False):
            d = attention_flow(T, d_k, d_v, font, d_model=d_model, scaled=scaled,
                               mask=causal_mask(T) if causal else None,
                               cell=(ex.tokens[-1], ex.tokens[0]), cell_at=(T - 1, 0))
            assert overlapping_texts(d) == [] and texts_outside_boxes(d) == []
            assert d.size()[0] <= MAX_EM
            for step in range(1, 5):
                s = attention_steps(T, d_k, d_v, step, font, scaled=scaled, masked=causal)
                assert overlapping_texts(s) == [] and texts_outside_boxes(s) == []
                assert s.size()[0] <= 55


# ---- the row of steps ------------------------------------------------------------------

@pytest.mark.parametrize("step, chosen", [(1, ["S = QKᵀ (4 × 4)"]),
                                          (2, ["÷ √2 ≈ 1.41", "causal mask"]),
                                          (3, ["softmax → W (4 × 4)"]),
                                          (4, ["O = W·V (4 × 3)"])])
def test_the_row_of_steps_highlights_its_step_with_the_shapes(step, chosen):
    # T = 4, d_k = 2, d_v = 3: S and W are 4 × 4, O is 4 × 3; the mask belongs to step 2.
    d = attention_steps(4, 2, 3, step, 14, masked=True)
    assert [" ".join(b.lines) for b in d.boxes if b.highlight] == chosen
    assert d.describe().startswith(f"Step {step} of 4")
    with pytest.raises(ValueError):
        attention_steps(4, 2, 3, 5, 14)


# ---- on the page -----------------------------------------------------------------------

KEYS = ["we_diagram_flow", *(f"we_diagram_step{n}" for n in range(1, 5))]


@pytest.mark.parametrize("mode", ["normal", "presenter"])
def test_the_page_draws_the_flow_and_each_steps_row(mode):
    at = page_at_defaults(PAGE) if mode == "normal" else page_in_presenter_mode(PAGE)
    assert not at.exception
    flow = desc(diagram_in(at, "we_diagram_flow"))
    assert "Q, 3 × 2; K, 3 × 2; V, 3 × 3" in flow  # the textbook's sizes
    assert "query 1 (x1), key 3 (x3)" in flow  # the pickers' defaults: row 1, the last key
    for n in range(1, 5):
        assert re.search(rf"^Step {n} of 4", desc(diagram_in(at, f"we_diagram_step{n}")))
    # The flow offers its SVG off the projector; the rows of steps don't.
    downloads = [b.key for b in at.get("download_button")]
    assert ("we_diagram_flow_svg" in downloads) == (mode == "normal")
    assert not any("step" in str(k) for k in downloads)


def test_on_a_projector_the_flow_comes_first_in_the_place_of_the_inputs_story():
    at = page_in_presenter_mode(PAGE)
    above = above_first_figure(at)  # a diagram is a figure
    assert not_allowed_above(at) == []  # the goal and the controls
    assert desc(elements(at.main)[len(above)].value).startswith("Attention, step by step")


def test_the_controls_change_the_diagrams():
    at = open_page(PAGE)
    before = diagram_in(at, "we_diagram_flow")
    at.toggle(key="we_causal").set_value(True).run()
    after = desc(diagram_in(at, "we_diagram_flow"))
    assert diagram_in(at, "we_diagram_flow") != before and "3 of 9 pairs may not attend" in after
    assert "query 1 (x1), key 3 (x3), hidden by the mask" in after
    assert "causal mask (highlighted)" in desc(diagram_in(at, "we_diagram_step2"))
    at.toggle(key="we_scale").set_value(False).run()
    assert "not scaled (highlighted)" in desc(diagram_in(at, "we_diagram_step2"))


def test_a_cell_picked_below_is_marked_at_the_top():
    # The pickers sit in a section that reruns alone; a new cell reruns the page.
    at = open_page(PAGE)
    at.selectbox(key="we_query").set_value(2).run()
    at.selectbox(key="we_key").set_value(1).run()
    assert not at.exception
    assert "query 3 (x3), key 2 (x2)" in desc(diagram_in(at, "we_diagram_flow"))


def test_a_linked_cell_is_marked_on_the_first_run():
    at = open_page(PAGE, we_query="2: x2", we_key="1: x1")
    assert "query 2 (x2), key 1 (x1)" in desc(diagram_in(at, "we_diagram_flow"))


def test_a_preset_with_x_and_a_new_size_redraws_the_flow():
    at = open_page(PAGE, we_preset="The cat sat", we_tokens="6", we_dk="4", we_dv="1")
    ex = worked_example("cat", 6, 4, 1, 0)
    flow = desc(diagram_in(at, "we_diagram_flow"))
    assert f"X, 6 tokens × d_model {ex.x.shape[1]}" in flow
    assert "Q = X·W_Q, 6 × 4" in flow and "the output, 6 × 1" in flow
    # the last key by default: "mat", the sixth token
    assert f"query 1 ({ex.tokens[0]}), key 6 ({ex.tokens[5]})" in flow
    assert all("6 × 6" in desc(diagram_in(at, f"we_diagram_step{n}")) for n in (1, 3))
