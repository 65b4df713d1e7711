"""Lesson 3's diagram: the padded batch, the chosen sentence taken as X, and lesson 1's
flow with the chosen mask entering between the scaling and the softmax, drawn from the
page's own batch and mask, right below the controls."""

from __future__ import annotations

import ast
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import open_page
from diagram_checks import one_diagram
from presenter_order import above_first_figure

from pages.ui.figures.diagrams import overlapping_texts, text_width, texts_outside_boxes
from pages.ui.figures.models import PAD_FILL, masked_flow

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "3_Masks.py")
SVG_MARK = "Attention with"  # the diagram's title starts so


def default_batch() -> tuple[list[list[str]], list[int]]:
    """The page's default batch, written out by hand: three sentences padded to 6."""
    pad = "<pad>"
    batch = [["The", "cat", "sat", "on", "the", "mat"],
             ["A", "dog", "barked", pad, pad, pad],
             ["Birds", "sing", "at", "dawn", pad, pad]]
    return batch, [6, 3, 4]


def padding_and_causal(length: int, T: int) -> np.ndarray:
    """Query i may see key j when j ≤ i and j is a real token, built cell by cell."""
    return np.array([[j <= i and j < length for j in range(T)] for i in range(T)])


def grid_drawn(d, T: int) -> np.ndarray:
    """The mask's grid as drawn: the T × T cells inside the mask's box, True where white."""
    box = next(b for b in d.boxes if b.lines == ("",))
    cells = [r for r in d.rects if box.x < r[0] < box.x + box.w and box.y < r[1] < box.y + box.h]
    assert len(cells) == T * T
    cells.sort(key=lambda r: (round(r[1], 6), r[0]))
    return np.array([r[4] == "#FFFFFF" for r in cells]).reshape(T, T)


def check_layout(d) -> None:
    assert overlapping_texts(d) == [] and texts_outside_boxes(d) == []
    # The batch's texts are labels in their sentence's box: each fits inside one.
    sentences = [b for b in d.boxes if b.name.startswith("sentence ")]
    for label in d.labels:
        if label.text.startswith("sentence ") or "<pad>" in label.text:
            half = text_width(label.text) / 2
            assert any(b.x + 0.1 <= label.x - half and label.x + half <= b.x + b.w - 0.1
                       and b.y < label.y < b.y + b.h for b in sentences), label.text
    width, height = d.size()
    # About 55 em wide: 58 em at 20 px is 1160 px, which the 1120 px column of a 1280 px
    # projector shows at 19.3 px, above 18; and short enough to stand below the controls
    # on its 720 px (17.5 em = 350 px).
    assert width <= 58 and height <= 17.5


def drawn(at) -> str:
    """The diagram of the masked flow on the page (exactly one)."""
    return one_diagram(at, SVG_MARK)


# ---- the pure function ------------------------------------------------------------------

def test_the_default_view_draws_the_chosen_sentence_its_padding_and_its_mask():
    batch, lengths = default_batch()
    mask = padding_and_causal(3, 6)
    d = masked_flow(batch, lengths, 1, mask, "padding+causal", 8, 14)
    said = d.describe()
    # Allowed cells: rows 1..3 see 1, 2, 3 keys, the three <pad> rows see the 3 real keys:
    # 1 + 2 + 3 + 3·3 = 15 of 36, so 21 pairs are masked.
    assert "then the padding+causal mask, 6 × 6: 21 of 36 pairs may not attend" in said
    assert "sentence 2: 3 tokens and 3 <pad>, “A dog barked”, is X (highlighted)" in said
    assert "sentence 1: 6 tokens and 0 <pad>;" in said and "sentence 3: 4 tokens and 2" in said
    assert "X, 6 tokens × d_model 8" in said and "the output, 6 × 8" in said
    assert said.index("The batch: 3 sentences") < said.index("X, 6 tokens")  # batch first
    np.testing.assert_array_equal(grid_drawn(d, 6), mask)
    # The pads of the batch, grey: 0 + 3 + 2 cells outside the mask's grid.
    assert sum(r[4] == PAD_FILL for r in d.rects) - int((~mask).sum()) == 5
    assert [b.name.split(":")[0] for b in d.boxes if b.highlight] == ["sentence 2"]
    assert {lab.text for lab in d.labels if lab.bold} == {"sentence 2", "3 tokens + 3 <pad>"}
    check_layout(d)


@pytest.mark.parametrize("kind, radius, name", [("causal", None, "causal mask"),
                                                ("window", 3, "window mask, r = 3"),
                                                ("none", None, "no mask")])
def test_the_mask_is_named_as_the_page_chose_it(kind, radius, name):
    batch, lengths = default_batch()
    mask = np.tril(np.ones((6, 6), dtype=bool)) if kind == "causal" else np.ones((6, 6), bool)
    d = masked_flow(batch, lengths, 0, mask, kind, 8, 20, radius=radius)
    assert name in [lab.text for lab in d.labels]
    assert d.title.startswith(f"Attention with {name} on sentence 1")
    # causal: the 15 cells above the diagonal of 6 × 6 (6·5/2); none: nothing masked
    assert f"{15 if kind == 'causal' else 0} of 36 pairs" in d.describe()
    check_layout(d)


@pytest.mark.parametrize("font", [14, 20])
def test_the_largest_batch_and_the_smallest_fit_without_overlaps(font):
    # 4 sentences (the page's most) cut at 24 tokens (its longest), one of them 1 token.
    T = 24
    lengths = [24, 1, 5, 2]
    batch = [[f"w{t}" if t < n else "<pad>" for t in range(T)] for n in lengths]
    d = masked_flow(batch, lengths, 3, np.ones((T, T), bool), "padding", 8, font)
    assert "sentence 2: 1 token and 23 <pad>" in d.describe()  # one token: singular
    check_layout(d)
    single = masked_flow([["hi"]], [1], 0, np.ones((1, 1), bool), "causal", 8, font)
    assert "X, 1 tokens × d_model 8" in single.describe()
    check_layout(single)


def test_a_sentence_outside_the_batch_is_refused():
    batch, lengths = default_batch()
    with pytest.raises(ValueError, match="sentence 4 is not in a batch of 3"):
        masked_flow(batch, lengths, 3, np.ones((6, 6), bool), "causal", 8, 14)


def test_drawing_it_is_cheap():
    T, lengths = 24, [24, 20, 10, 3]
    batch = [[f"w{t}" if t < n else "<pad>" for t in range(T)] for n in lengths]
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        masked_flow(batch, lengths, 2, np.tril(np.ones((T, T), bool)), "causal", 8, 20).svg()
        best = min(best, time.perf_counter() - start)
    assert best < 0.05


def test_no_two_functions_of_the_models_module_share_a_name():
    """Several lessons append to pages/ui/figures/models.py: a second ``def`` of a name
    replaces the first for every caller."""
    tree = ast.parse((ROOT / "pages" / "ui" / "figures" / "models.py").read_text())
    names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    assert sorted({n for n in names if names.count(n) > 1}) == []


# ---- on the page ------------------------------------------------------------------------

@pytest.mark.parametrize("presenter", [False, True])
def test_the_page_draws_its_model_below_the_controls(presenter):
    at = open_page(PAGE, **({"presenter": "true"} if presenter else {}))
    markup = drawn(at)
    assert "padding+causal mask" in markup and "sentence 2" in markup
    assert "padded to T = 6" in markup
    # The first figure, right after the controls: section 1's masks come below it.
    above = above_first_figure(at)
    assert "mk_mask" in {getattr(n, "key", None) for n in above}
    assert not [n for n in above if n.type == "header"]
    downloads = [b for b in at.get("download_button") if b.label == "This diagram (SVG)"]
    assert len(downloads) == (0 if presenter else 1)


def test_a_changed_control_changes_the_diagram():
    at = open_page(PAGE)
    before = drawn(at)
    at.selectbox(key="mk_mask").set_value("causal").run()
    causal = drawn(at)
    assert causal != before and "causal mask" in causal and "padding+causal" not in causal
    at.selectbox(key="mk_sentence").set_value(0).run()
    first = drawn(at)
    assert "on sentence 1, padded to T = 6" in first
    # causal on 6 tokens: 15 masked pairs
    assert "15 of 36 pairs may not attend" in first
