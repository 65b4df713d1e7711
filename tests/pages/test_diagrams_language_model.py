"""Lesson 10's diagram: the chosen model's decoder block drawn from its config (its norm, ε,
positions, heads, key/value heads, d_model, d_k, MLP and layers), the prompt's token count
in its shapes, the chosen layer and query head highlighted with the KV head it reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import assert_no_exception, open_page
from diagram_checks import first_index, font_size, is_svg, one_diagram
from released_configs import GPT2, QWEN2, RELEASED, SMOLLM2

from attncore import lm
from attncore.lm.config import LMConfig
from attncore.lm.hf_files import read_config
from pages.ui.figures.diagrams import HIGHLIGHT_STROKE, overlapping_texts, texts_outside_boxes
from pages.ui.figures.models import decoder_block
from tests.core import tiny_models as tiny
from tests.model_marks import needs_smollm

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "10_Language_model.py")
MAX_WIDTH_EM = 55  # 1100 px at the projector's 20 px: it fits a 1280 px screen
LONGEST_T = 96  # the page reads at most 96 prompt tokens


@pytest.fixture(scope="module")
def tiny_configs(tmp_path_factory) -> dict[str, LMConfig]:
    """The tiny test models' configs, read from their config.json as a folder's would be."""
    found = {}
    for family in ("llama", "qwen2", "gpt2"):
        folder = tmp_path_factory.mktemp(family)
        (folder / "config.json").write_text(json.dumps(tiny.hf_config(family)))
        found[family] = read_config(folder)[0]
    return found


def texts(d) -> list[str]:
    return [text for text, _ in d.text_boxes()]


def main_row(d) -> list:
    return [b for b in d.boxes if b.y == d.boxes[0].y]


def lanes(d) -> tuple[list, list]:
    """The query-head lanes and the key/value-head lanes under attention (boxes without
    text, the query heads' row first)."""
    empty = [b for b in d.boxes if b.lines == ()]
    top = min(b.y for b in empty)
    return [b for b in empty if b.y == top], [b for b in empty if b.y != top]


def layer_boxes(d) -> list:
    return [b for b in d.boxes if len(b.lines) == 1 and b.lines[0].isdigit()]


def test_smollm2_s_block_is_drawn_from_its_config():
    d = decoder_block(SMOLLM2, 5, 19, 7, 14)
    drawn = texts(d)
    # d_k = 576 / 9 = 64; head 7 is in the third group of 9 / 3 = 3 heads: 7, 8, 9
    for text in ("from", "layer 18", "5 × 576", "RMSNorm", "ε = 1×10⁻⁵", "attention",
                 "9 q · 3 KV heads", "d_k = 64, RoPE", "SwiGLU MLP", "5 × 1536", "→ 5 × 576",
                 "to", "layer 20", "head 7 of 9: q, k, v 5 × 64",
                 "k, v from KV head 3 of 3 (heads 7–9)",
                 "× 30 layers, each with its own weights", "biases: none"):
        assert text in drawn, text
    # pre-norm: the norm comes before each sublayer, and each sublayer's "+" after it
    assert [b.lines[0] for b in main_row(d)] == ["from", "RMSNorm", "attention", "+",
                                                 "RMSNorm", "SwiGLU MLP", "+", "to"]
    row = main_row(d)
    assert all(a.x + a.w < b.x for a, b in zip(row, row[1:], strict=False))
    queries, kv = lanes(d)
    assert len(queries) == 9 and len(kv) == 3
    # layers 1, 18, 19 and 20 around the chosen one, 30: the rest as "…"
    assert [b.lines[0] for b in layer_boxes(d)] == ["1", "18", "19", "20", "30"]
    assert drawn.count("…") == 2


def test_gpt2_s_block_has_layernorm_learned_positions_gelu_and_biases():
    d = decoder_block(GPT2, LONGEST_T, 1, 12, 14)
    drawn = texts(d)
    # d_k = 768 / 12 = 64, no RoPE: the positions are added to the embeddings at layer 1
    for text in ("embeddings", "+ positions", "96 × 768", "LayerNorm", "ε = 1×10⁻⁵",
                 "12 heads", "d_k = 64", "GELU MLP", "96 × 3072", "→ 96 × 768", "layer 2",
                 "head 12 of 12: q, k, v 96 × 64", "its own k and v (KV head 12 of 12)",
                 "biases: on every linear map and norm"):
        assert text in drawn, text
    assert not any("RoPE" in t for t in drawn)
    queries, kv = lanes(d)
    assert len(queries) == len(kv) == 12  # every head its own keys and values


def test_qwen2_s_block_has_biases_on_q_k_and_v_only():
    d = decoder_block(QWEN2, 20, 24, 8, 14)
    drawn = texts(d)
    # head 8 of 14 sharing 2: groups of 7, heads 8 to 14 read KV head 2
    for text in ("14 q · 2 KV heads", "ε = 1×10⁻⁶", "d_k = 64, RoPE", "20 × 4864",
                 "logits", "k, v from KV head 2 of 2 (heads 8–14)",
                 "biases: on Q, K and V only"):
        assert text in drawn, text
    assert "to the final norm and the logits, 20 × 896" in d.describe()


def test_the_tiny_models_of_every_family_are_drawn_from_their_config_files(tiny_configs):
    # tiny_models.SIZES: 2 layers, d_model 32, 4 heads of d_k 8, 2 KV heads (Llama, Qwen2)
    for family, heads, norm, mlp in (("llama", "4 q · 2 KV heads", "RMSNorm", "SwiGLU MLP"),
                                     ("qwen2", "4 q · 2 KV heads", "RMSNorm", "SwiGLU MLP"),
                                     ("gpt2", "4 heads", "LayerNorm", "GELU MLP")):
        cfg = tiny_configs[family]
        d = decoder_block(cfg, 7, 2, 3, 20)
        drawn = texts(d)
        for text in (heads, norm, mlp, "7 × 32", "7 × 64", "layer 1", "logits",
                     "head 3 of 4: q, k, v 7 × 8", "× 2 layers, each with its own weights"):
            assert text in drawn, (family, text)
        assert overlapping_texts(d) == [] and texts_outside_boxes(d) == []


CONFIGS = RELEASED


@pytest.mark.parametrize("font", [14, 20])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_no_text_overlaps_or_leaves_its_box_at_any_setting(name, font):
    cfg = CONFIGS[name]
    for T in (1, 5, LONGEST_T):
        for layer in sorted({1, 2, cfg.n_layers // 2, cfg.n_layers - 1, cfg.n_layers}):
            for head in sorted({1, cfg.group, cfg.group + 1, cfg.n_heads}):
                d = decoder_block(cfg, T, layer, head, font)
                where = f"{name}, T={T}, layer {layer}, head {head}, font {font}"
                assert overlapping_texts(d) == [], where
                assert texts_outside_boxes(d) == [], where
                assert d.size()[0] <= MAX_WIDTH_EM, where
                # the chosen head's callout sits below its lane, reached by an arrow
                lane = lanes(d)[0][head - 1]
                callout = next(b for b in d.boxes if b.lines and b.lines[0].startswith("head "))
                assert callout.x < lane.centre[0] < callout.x + callout.w, where
                assert callout.y > lane.y + lane.h, where


@pytest.mark.parametrize(("name", "layer", "head", "kv"), [
    ("SmolLM2", 1, 1, 1), ("SmolLM2", 19, 7, 3), ("SmolLM2", 30, 6, 2),  # 3 heads a KV head
    ("Qwen2", 12, 7, 1), ("Qwen2", 12, 8, 2),  # 7 heads a KV head
    ("Llama 3.2", 16, 32, 8), ("GPT-2", 5, 5, 5)])  # 4 heads a KV head; 1
def test_only_the_chosen_layer_head_and_its_kv_head_are_highlighted(name, layer, head, kv):
    d = decoder_block(CONFIGS[name], 5, layer, head, 14)
    queries, kvs = lanes(d)
    assert [n for n, b in enumerate(queries, start=1) if b.highlight] == [head]
    assert [n for n, b in enumerate(kvs, start=1) if b.highlight] == [kv]
    assert [b.lines[0] for b in layer_boxes(d) if b.highlight] == [str(layer)]
    # a query head's lane lies over the lane of the KV head it reads
    chosen, shared = queries[head - 1], kvs[kv - 1]
    assert shared.x <= chosen.centre[0] <= shared.x + shared.w
    markup = d.svg()
    assert f'font-weight="700">{layer}</text>' in markup
    assert markup.count(f'stroke="{HIGHLIGHT_STROKE}"') >= 4  # head, KV head, layer, callout


def test_the_text_alternative_says_the_numbers():
    said = decoder_block(SMOLLM2, 5, 19, 7, 14).describe()
    assert said.startswith("The decoder block of this llama model (pre-norm), layer 19 of 30, "
                           "on your 5 tokens.")
    for part in ("layer 19's input from layer 18, 5 × 576",
                 "RMSNorm (no mean, no bias), before each block (pre-LN), ε = 1×10⁻⁵",
                 "causal, grouped-query: 9 query heads, 3 key/value heads of d_k = 64, RoPE",
                 "d_ff = 1536: 5 × 1536, back to 5 × 576", "on to layer 20, 5 × 576",
                 "head 7 of 9: its q, k and v are 5 × 64; it reads the keys and values of KV "
                 "head 3 of 3 (heads 7–9); its weights are 5 × 5, causal (highlighted)",
                 "layer 19 of 30 (highlighted)", "biases: none"):
        assert part in said, part
    assert "plus learned positions, 3 × 768" in decoder_block(GPT2, 3, 1, 1, 14).describe()


@pytest.mark.parametrize(("args", "message"), [
    ((5, 0, 1), "layer 0 of 30"), ((5, 31, 1), "layer 31 of 30"),
    ((5, 1, 10), "head 10 of 9"), ((0, 1, 1), "T = 0")])
def test_a_layer_or_head_outside_the_model_is_refused(args, message):
    with pytest.raises(ValueError, match=message):
        decoder_block(SMOLLM2, *args, 14)


# ---- the page -----------------------------------------------------------------------


def drawn_block(at) -> str:
    """The decoder block's SVG markup as the page drew it (exactly one)."""
    return one_diagram(at, "The decoder block of this")


def drawn_before_the_first_figure(at) -> bool:
    """The block comes after the prompt and before the top-10 chart."""
    return (first_index(at, lambda n: n.type == "text_area") < first_index(at, is_svg)
            < first_index(at, lambda n: n.type == "plotly_chart"))


@needs_smollm
def test_the_page_draws_the_model_s_block_and_follows_the_head_worked_by_hand():
    at = open_page(PAGE, timeout=120)
    markup = drawn_block(at)
    cfg = lm.model().config
    T = len(lm.run("The capital of France is", max_tokens=96).tokens)  # 5 tokens
    d_k = cfg.d_model // cfg.n_heads  # 576 / 9 = 64
    # the head worked by hand opens at head 7, layer round(19/30 · 30) = 19
    for text in (f"{T} × {cfg.d_model}", f"{cfg.n_heads} q · {cfg.n_kv_heads} KV heads",
                 f"d_k = {d_k}, RoPE", f"{T} × {cfg.d_ff}", "layer 18", "layer 20",
                 f"head 7 of 9: q, k, v {T} × {d_k}", "k, v from KV head 3 of 3 (heads 7–9)"):
        assert f">{text}</text>" in markup, text
    assert 'font-weight="700">19</text>' in markup
    assert drawn_before_the_first_figure(at)
    alt = next(c.value.replace("\\", "") for c in at.caption if "decoder block" in c.value)
    assert alt.startswith("Layer 19 and head 7 are those worked by hand in section 5. The "
                          "decoder block of this llama model")
    assert "layer 19 of 30 (highlighted)" in alt
    # the head-by-hand pickers, in section 5, move the block's highlight at the top
    at.selectbox(key="lm_hand_head").set_value(2)
    at.slider(key="lm_hand_layer").set_value(1)
    at.run()
    assert_no_exception(at)
    markup = drawn_block(at)
    assert ">embeddings</text>" in markup and 'font-weight="700">1</text>' in markup
    assert f'font-weight="700">head 2 of 9: q, k, v {T} × {d_k}</text>' in markup
    assert ">k, v from KV head 1 of 3 (heads 1–3)</text>" in markup


@needs_smollm
def test_presenter_mode_draws_the_block_at_the_projector_s_font_before_the_first_figure():
    at = open_page(PAGE, timeout=120, presenter="true", lm_prompt="Hi there")
    markup = drawn_block(at)
    assert font_size(markup) == "20"
    T = len(lm.run("Hi there", max_tokens=96).tokens)
    assert f">{T} × 576</text>" in markup
    assert drawn_before_the_first_figure(at)
