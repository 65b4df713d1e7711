"""Lessons 10, 11 and 12 on a teacher's own model (AppTest, no browser).

Two tiny random models, written by these tests with tests/core/tiny_models.py (a Llama as a
GGUF, a GPT-2 as a Hugging Face folder: 2 layers, 4 heads, 64 positions, a 261-token
vocabulary), are listed through ATTNLAB_MODELS as a server's operator would list them. Each
lesson opened with the picker on each model must run, and say that model's numbers, never
SmolLM2's (30 layers, 9 query heads sharing 3, 270 heads, 49,152 tokens).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import assert_no_exception, chart_array, open_page, page_at_defaults, text_of

from attncore.lm import models
from tests.core import tiny_models as tiny
from tests.model_marks import needs_smollm

PAGES = Path(__file__).resolve().parents[2] / "pages"
LESSON = {10: str(PAGES / "10_Language_model.py"), 11: str(PAGES / "11_Inference.py"),
          12: str(PAGES / "12_Attention_for_the_answer.py")}
#: What the model note says of each (from tiny_models.SIZES and the families' switches).
HEADS = {"tiny-llama": "4 query heads sharing 2 key/value heads",
         "tiny-gpt2": "4 heads, each with its own keys and values"}
#: SmolLM2's name and numbers, as a page would write them (270 alone: "All 270 heads").
SMOLLM2_SAYS = re.compile(r"SmolLM2-135M|30 layers|9 query heads|(?<![\d,.])270(?![\d,.])|"
                          r"49,152")
#: A pair the toy tokenizer splits alike: 5 tokens each, one changed, one-token answers.
PAIR = {"ans_preset": "Your own pair", "ans_clean": "the the he", "ans_corrupt": "the t he",
        "ans_answer": " t", "ans_wrong": "he"}


@pytest.fixture(scope="module")
def model_files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("own_models")
    llama = tiny.write_gguf(folder / "llama.gguf", "llama", tiny.draw("llama", seed=21))
    gpt2 = tiny.write_hf(folder / "gpt2", "gpt2", tiny.draw("gpt2", seed=22),
                         tiny.hf_config("gpt2"))
    return {"tiny-llama": llama, "tiny-gpt2": gpt2, "cache": folder / "cache"}


@pytest.fixture()
def listed(model_files, monkeypatch) -> dict[str, Path]:
    """The two tiny models and one broken entry listed by the operator, converted into a
    cache of the tests' own; SmolLM2, if this process loaded it, stays loaded."""
    monkeypatch.setenv("ATTNLAB_MODELS", f"tiny-llama = {model_files['tiny-llama']}; "
                                         f"tiny-gpt2 = {model_files['tiny-gpt2']}; "
                                         f"broken = {model_files['cache'].parent / 'none.gguf'}")
    monkeypatch.setenv("ATTNLAB_CACHE_DIR", str(model_files["cache"]))
    monkeypatch.setattr(models, "MODELS_FILE", model_files["cache"].parent / "absent.txt")
    monkeypatch.setattr(models, "_MODELS", {k: v for k, v in models._MODELS.items()
                                           if k == models.DEFAULT_NAME})
    return model_files


def escaped(name: str) -> str:
    """A model's name as the page writes it in markdown (md_escape)."""
    return name.replace("-", "\\-")


def says_its_own_numbers(at, model: str) -> None:
    note = text_of(at, "info")
    assert f"**{escaped(model)}**" in note and "2 layers, d_model 32" in note
    assert HEADS[model] in note and "a 261-token vocabulary" in note
    shown = " ".join(text_of(at, kind) for kind in ("markdown", "info", "caption", "latex"))
    theirs = SMOLLM2_SAYS.findall(shown)
    assert not theirs, f"{model}'s page says {theirs}, SmolLM2's"


@pytest.mark.parametrize("model", ["tiny-llama", "tiny-gpt2"])
def test_lesson_10_runs_on_the_chosen_model_and_says_what_it_is(listed, model):
    at = open_page(LESSON[10], lm_model=model)
    assert at.selectbox(key="lm_model").value == model
    says_its_own_numbers(at, model)
    text, captions = text_of(at), text_of(at, "caption")
    assert f"One forward pass of {escaped(model)} over these" in captions
    assert "Listed but not usable: **broken**" in captions
    # no chat template: the switch is off, and the page says why
    assert at.toggle(key="lm_chat").disabled and "has no chat template" in captions
    if model == "tiny-gpt2":  # LayerNorm with its mean and bias, learned positions
        assert "**[LayerNorm](" in text and "Nothing is turned" in text
        assert "| positions | learned absolute table (512 positions), added to the input | " \
               "learned absolute positions" in text
        assert "Each of the 4 heads has its own keys and values" in text
    else:  # RMSNorm, RoPE on the GGUF's adjacent pairs, 2 KV heads of 2 query heads each
        assert "**[RMSNorm](" in text and "RoPE turns each pair (2i, 2i + 1)" in text
        assert "KV head 1 serves H1–H2; KV head 2 serves H3–H4" in text
    assert "The rotated pair matches" in text or "q and k computed here match" in text


@pytest.mark.parametrize("model", ["tiny-llama", "tiny-gpt2"])
def test_lesson_11_runs_on_the_chosen_model(listed, model):
    at = open_page(LESSON[11], lm_model=model)
    says_its_own_numbers(at, model)
    text = text_of(at)
    kv = 4 if model == "tiny-gpt2" else 2
    assert rf"2 \cdot 2 \cdot {kv} \cdot 8" in text_of(at, "latex")  # 2 · L · n_KV · d_k
    table = next(t.value for t in at.table if "KV heads" in t.value.columns)
    assert f"{model}, " in table["model"].iloc[0]
    assert (table["KV heads"].iloc[:2].tolist() == [4, 1] if model == "tiny-gpt2"
            else table["KV heads"].iloc[:3].tolist() == [4, 2, 1])
    if model == "tiny-gpt2":
        assert "each of its 4 heads has its own keys and values" in text
    # 64 positions: the perplexities read the first 64 tokens, and say why
    assert "Its first N tokens: 64 (the only choice)" in text_of(at, "caption")
    assert "Perplexity with full attention" in text  # the window ran at the defaults


@pytest.mark.parametrize("model", ["tiny-llama", "tiny-gpt2"])
def test_lesson_12_refuses_a_preset_the_model_splits_and_patches_its_own_pair(listed, model):
    at = open_page(LESSON[12], lm_model=model)
    assert at.error and "patching puts each position" in at.error[0].value
    assert "Choose “Your own pair”" in text_of(at, "info")
    at = open_page(LESSON[12], lm_model=model, **PAIR)
    at.button(key="ans_run").click().run()
    assert_no_exception(at, f"patching {PAIR} on {model}")
    says_its_own_numbers(at, model)
    assert chart_array(at, "ans_fig_heads").shape == (4, 2)  # heads down, layers across
    text = text_of(at)
    norm = "LayerNorm" if model == "tiny-gpt2" else "RMSNorm"
    assert f"through the final {norm}" in text
    assert ("+ biases" in text) == (model == "tiny-gpt2")  # GPT-2's b_O and final norm bias
    assert "the clean LD is" in text  # the split adds up to it (tests/core checks the sum)


def test_the_choice_carries_to_the_next_lesson(listed):
    at = open_page(LESSON[10], lm_model="tiny-gpt2")
    at.switch_page("pages/11_Inference.py").run()
    assert_no_exception(at, "lesson 11 after lesson 10 on tiny-gpt2")
    assert at.selectbox(key="lm_model").value == "tiny-gpt2"
    says_its_own_numbers(at, "tiny-gpt2")


@needs_smollm
def test_with_only_smollm2_there_is_no_picker(monkeypatch):
    monkeypatch.delenv("ATTNLAB_MODELS", raising=False)
    assert not models.MODELS_FILE.is_file() and [e.name for e in models.available_models()] \
        == [models.DEFAULT_NAME]
    at = page_at_defaults(LESSON[10])
    assert not [s for s in at.selectbox if s.key == "lm_model"]
    assert "This is **SmolLM2-135M-Instruct**" in text_of(at, "info")

