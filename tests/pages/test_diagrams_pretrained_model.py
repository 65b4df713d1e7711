"""Lesson 9's diagram: MiniLM's encoder block drawn from the loaded model's config, the
sentence's token count in its shapes, the chosen layer and head highlighted."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import assert_no_exception, open_page, page_in_presenter_mode
from diagram_checks import first_index, font_size, is_svg, one_diagram

from attncore import encoder as pt
from pages.ui.figures.diagrams import overlapping_texts, texts_outside_boxes
from pages.ui.figures.models import encoder_block
from tests.model_marks import needs_minilm

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "9_Pretrained_model.py")
# all-MiniLM-L6-v2's config.json: 6 layers, 12 heads, hidden 384, intermediate 1536, gelu
MINILM = {"n_layers": 6, "n_heads": 12, "d_model": 384, "d_ff": 1536, "activation": "gelu"}
DEFAULT_T = 12  # "My cat chases moonbeams across the kitchen.": [CLS] my cat chases moon
# ##beam ##s across the kitchen . [SEP]
LONGEST_T = 64  # the page reads at most 64 WordPieces
MAX_WIDTH_EM = 55  # 1100 px at the projector's 20 px: it fits a 1280 px screen


def block(T=DEFAULT_T, layer=1, head=3, font=14, **sizes):
    return encoder_block(T, layer, head, font, **{**MINILM, **sizes})


def texts(d) -> list[str]:
    return [text for text, _ in d.text_boxes()]


def lanes(d) -> list:
    """The head lanes under attention: the boxes without text."""
    return [b for b in d.boxes if b.lines == ()]


def layer_boxes(d) -> list:
    return [b for b in d.boxes if len(b.lines) == 1 and b.lines[0].isdigit()]


def test_the_defaults_draw_minilm_s_sizes_with_the_sentence_s_tokens():
    d = block()
    drawn = texts(d)
    # d_k = 384 / 12 = 32; the feed-forward network is 1536 wide, 4 × 384.
    for text in ("embeddings", "12 × 384", "12 heads, d_k = 32", "→ 12 × 384",
                 "12 × 1536, GELU", "to layer 2", "head 3 of 12: q, k, v 12 × 32",
                 "weights softmax(QKᵀ/√32) 12 × 12", "× 6 layers, each with its own weights"):
        assert text in drawn, text
    # post-norm: attention, add & norm, feed-forward, add & norm, left to right
    main = [b for b in d.boxes if len(b.lines) >= 2 and b.y == d.boxes[0].y]
    assert [b.lines[0] for b in main] == ["embeddings", "attention", "add &", "feed-forward",
                                          "add &", "to layer 2"]
    assert all(a.x + a.w < b.x for a, b in zip(main, main[1:], strict=False))
    assert len(lanes(d)) == 12 and [b.lines[0] for b in layer_boxes(d)] == list("123456")


@pytest.mark.parametrize("font", [14, 20])
@pytest.mark.parametrize("T", [3, DEFAULT_T, LONGEST_T])
def test_no_text_overlaps_or_leaves_its_box_at_any_layer_head_or_length(T, font):
    for layer in range(1, 7):
        for head in range(1, 13):
            d = block(T, layer, head, font)
            where = f"T={T}, layer {layer}, head {head}, font {font}"
            assert overlapping_texts(d) == [], where
            assert texts_outside_boxes(d) == [], where
            assert d.size()[0] <= MAX_WIDTH_EM, where
            # the callout of the chosen head sits below its lane, reached by an arrow
            lane = lanes(d)[head - 1]
            callout = next(b for b in d.boxes if b.lines and b.lines[0].startswith("head "))
            assert callout.x < lane.centre[0] < callout.x + callout.w, where
            assert callout.y > lane.y + lane.h, where


@pytest.mark.parametrize(("layer", "head"), [(1, 1), (1, 3), (4, 7), (6, 12)])
def test_only_the_chosen_layer_and_head_are_highlighted(layer, head):
    d = block(layer=layer, head=head)
    assert [n for n, b in enumerate(lanes(d), start=1) if b.highlight] == [head]
    assert [b.lines[0] for b in layer_boxes(d) if b.highlight] == [str(layer)]
    callout = next(b for b in d.boxes if b.lines and b.lines[0].startswith("head "))
    assert callout.highlight and callout.lines[0].startswith(f"head {head} of 12:")
    # and in the markup: bold text, the highlight's thicker outline
    markup = d.svg()
    assert f'font-weight="700">{layer}</text>' in markup
    assert f'font-weight="700">head {head} of 12: q, k, v 12 × 32</text>' in markup


def test_the_first_and_last_layers_say_where_the_stream_comes_from_and_goes():
    first, middle, last = block(layer=1), block(layer=4), block(layer=6)
    assert "embeddings" in texts(first) and "to layer 2" in texts(first)
    assert "from layer 3" in texts(middle) and "to layer 5" in texts(middle)
    assert "from layer 5" in texts(last) and "to pooling" in texts(last)


def test_the_text_alternative_says_the_numbers():
    said = block(T=20, layer=4, head=7).describe()
    assert said.startswith("MiniLM's encoder block (post-norm), layer 4 of 6, on your 20 "
                           "tokens.")
    # d_k = 384 / 12 = 32; the feed-forward network's width is the config's 1536
    assert said.split(". ", 1)[1] == (
        "in: layer 3's output, 20 × 384; attention, 12 heads of d_k = 32, back to 20 × 384; "
        "add & norm: plus its input (residual), then LayerNorm; feed-forward, 20 × 1536 "
        "hidden, GELU, back to 20 × 384; add & norm; out: to layer 5, 20 × 384; "
        "head 7 of 12: q, k, v 20 × 32, weights softmax(QKᵀ/√32) 20 × 20 (highlighted); "
        "layer 4 of 6 (highlighted), each layer this block with its own weights.")
    assert "in: the embeddings, 20 × 384" in block(T=20, layer=1).describe()
    assert "out: to mean pooling (the sentence embedding), 12 × 384" in block(layer=6).describe()


def test_every_number_follows_the_config_given():
    # another encoder: 4 layers, 8 heads of 512 / 8 = 64, a 2048-wide ReLU network
    d = block(T=5, layer=2, head=8, n_layers=4, n_heads=8, d_model=512, d_ff=2048,
              activation="relu")
    drawn = texts(d)
    for text in ("5 × 512", "8 heads, d_k = 64", "5 × 2048, RELU",
                 "head 8 of 8: q, k, v 5 × 64", "weights softmax(QKᵀ/√64) 5 × 5",
                 "× 4 layers, each with its own weights"):
        assert text in drawn, text
    assert len(lanes(d)) == 8 and len(layer_boxes(d)) == 4
    assert overlapping_texts(d) == [] and texts_outside_boxes(d) == []


@pytest.mark.parametrize(("args", "message"), [
    ({"layer": 0}, "layer 0 of 6"), ({"layer": 7}, "layer 7 of 6"),
    ({"head": 13}, "head 13 of 12"), ({"T": 0}, "positive sizes"),
    ({"d_model": 100}, "divisible"),
])
def test_a_layer_or_head_outside_the_model_is_refused(args, message):
    with pytest.raises(ValueError, match=message):
        block(**args)


# ---- the page -----------------------------------------------------------------------


def drawn_block(at) -> str:
    """The encoder block's SVG markup as the page drew it (exactly one)."""
    return one_diagram(at, "MiniLM&#x27;s encoder block")


def drawn_before_section_1(at) -> bool:
    section_1 = first_index(at, lambda n: getattr(n, "value", "") == "1 · Model view: all 72 heads")
    return first_index(at, is_svg) < section_1


@needs_minilm
def test_the_page_draws_the_block_at_its_top_with_the_loaded_config():
    at = open_page(PAGE)
    markup = drawn_block(at)
    cfg = pt.model().config
    d_k = cfg.d_model // cfg.n_heads  # 384 / 12 = 32
    for text in (f"{DEFAULT_T} × {cfg.d_model}", f"{cfg.n_heads} heads, d_k = {d_k}",
                 f"{DEFAULT_T} × {cfg.d_ff}, GELU", "to layer 2",
                 f"head 3 of {cfg.n_heads}: q, k, v {DEFAULT_T} × {d_k}"):
        assert f">{text}</text>" in markup, text
    assert drawn_before_section_1(at)
    # its text alternative is the caption under it (escaped for Markdown)
    assert any("layer 1 of 6 (highlighted)" in c.value.replace("\\", "") for c in at.caption)


@needs_minilm
def test_presenter_mode_draws_the_block_at_the_projector_s_font():
    at = page_in_presenter_mode(PAGE)
    assert_no_exception(at)
    markup = drawn_block(at)
    assert font_size(markup) == "20"
    assert drawn_before_section_1(at)


@needs_minilm
def test_the_block_follows_the_layer_and_head_pickers_and_the_sentence():
    at = open_page(PAGE)
    at.selectbox(key="pre_layer").set_value(4)
    at.selectbox(key="pre_head").set_value(7)
    at.run()
    assert_no_exception(at)
    markup = drawn_block(at)
    assert ">from layer 3</text>" in markup and ">to layer 5</text>" in markup
    assert 'font-weight="700">4</text>' in markup
    assert 'font-weight="700">head 7 of 12: q, k, v 12 × 32</text>' in markup
    at.text_input(key="pre_text").set_value("hi").run()  # [CLS] hi [SEP]: T = 3
    markup = drawn_block(at)
    assert ">3 × 384</text>" in markup and "softmax(QKᵀ/√32) 3 × 3</text>" in markup
