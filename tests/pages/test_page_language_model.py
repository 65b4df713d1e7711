"""Interaction tests for lesson 10, a real language model (AppTest, no browser)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import assert_no_exception, chart_array, chart_spec, new_app, open_page, text_of
from streamlit.testing.v1 import AppTest

from attncore import lm
from pages.ui.labels import md_escape
from tests.model_marks import needs_smollm

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "10_Language_model.py")
DEFAULT = "The capital of France is"



def run(**query) -> AppTest:
    return open_page(PAGE, timeout=120, **query)


@needs_smollm
def test_defaults_show_the_next_token_and_its_probability():
    at = run()
    trace = lm.run(DEFAULT, max_tokens=96)
    p = trace.next_token_probs()
    # Independently of the page's sort: the ten largest probabilities, largest first
    np.testing.assert_allclose(chart_array(at, "lm_fig_top", "y"), np.sort(p)[::-1][:10],
                               atol=1e-12)
    assert "Most likely next token: **␣Paris**" in text_of(at)
    assert "5 tokens" in text_of(at)
    assert "quantised to 4 bits" in text_of(at, "info")
    # top-p 0.95 at τ = 0.8 (the defaults): the fewest most likely tokens whose tempered
    # probabilities reach 0.95, counted here from the sorted probabilities
    tempered = np.sort(p ** (1 / 0.8) / np.sum(p ** (1 / 0.8)))[::-1]
    kept = int(np.argmax(np.cumsum(tempered) >= 0.95)) + 1
    assert f"{kept} of the 49,152 tokens can be drawn" in text_of(at)
    # the sink: rows 2..5 see 2..5 tokens, an even spread gives the first token
    # (1/2 + 1/3 + 1/4 + 1/5) / 4 = 32%; the model's layer mean reaches far more
    first = trace.attentions[..., 1:, 0].mean(axis=(1, 2))  # (layers,)
    assert f"takes up to {first.max():.0%} of a layer's attention" in text_of(at)
    assert "against 32% if every query spread" in text_of(at) and first.max() > 0.64
    assert "at least twice that, an [attention sink]" in text_of(at)  # the threshold, said
    # the induction test ran at its defaults: the notice reads its heads and losses
    test = lm.induction_test(seed=0, segment=25, sequences=3, n_top=5, draws=4)
    saved = test.loss_first - test.loss_repeat
    assert (f"takes back {(test.loss_top_off - test.loss_repeat) / saved:.0%} of what "
            "copying saved") in text_of(at)
    # the map drawn is the first sequence: its caption gives that map's share, each
    # second-copy query t = 25..49 on key t − 24, next to the mean of the 3 sequences
    drawn = chart_array(at, "lm_fig_ind_map")
    np.testing.assert_allclose(drawn, test.best_attention, atol=1e-6)
    share = np.mean([drawn[t, t - 24] for t in range(25, 50)])
    layer, head = test.top_heads[0]
    caption = text_of(at, "caption")  # captions are escaped Markdown
    assert md_escape(f"Layer {layer + 1}, head {head + 1} on the first sequence: on average "
                     f"{share:.0%} of a second-copy token's weight") in caption
    assert md_escape(f"({test.scores[layer, head]:.0%} over the 3 sequences)") in caption


@needs_smollm
def test_a_one_token_prompt_has_no_sink_to_show():
    # One token: the only row attends to itself with weight 1, as an even spread would;
    # there is no previous token, so nothing is said of one (it read "0%, an even spread
    # would give it 100%")
    assert lm.encode(lm.model(), "Hello").size == 1
    at = run(lm_prompt="Hello")
    assert "no sink to see" in text_of(at) and "previous token" not in text_of(at)
    assert "heads put more than half" not in text_of(at)


@needs_smollm
def test_temperature_zero_leaves_one_token_to_draw():
    at = run(lm_temp="0.0")
    assert "1 of the 49,152 tokens can be drawn" in text_of(at)
    assert "q·k / √64 variance 1" in text_of(at)  # the practice answer: 64 components


@needs_smollm
def test_writing_greedily_gives_the_core_s_tokens():
    at = run(lm_temp="0.0", lm_new="6")
    at.button(key="lm_generate").click().run()
    assert_no_exception(at)
    expected = lm.generate(DEFAULT, 6, lm.Sampling(temperature=0.0, top_k=0, top_p=0.95))
    written = lm.decode(lm.model(), expected.ids).replace("\n", " ↵ ")
    assert f"**Written:** {md_escape(written)}" in text_of(at)
    # the table lists every step; moving a sampling slider asks to write again
    steps = [t.value for t in at.table if "drawn with probability" in t.value.columns]
    assert len(steps) == 1 and len(steps[0]) == 6
    at.slider(key="lm_temp").set_value(1.0).run()
    assert "press the button to write again" in text_of(at, "caption")


@needs_smollm
def test_the_chat_switch_wraps_the_prompt_in_the_template():
    at = run(lm_chat="true")
    assert "<|im_start|>" in text_of(at)
    assert "<|im_end|>" in text_of(at)


@needs_smollm
def test_the_newest_token_map_follows_the_layer():
    at = run(lm_layer="3")
    trace = lm.run(DEFAULT, max_tokens=96)
    np.testing.assert_allclose(chart_array(at, "lm_fig_newest"), trace.attentions[2, :, -1, :],
                               atol=1e-6)
    assert chart_spec(at, "lm_fig_newest")["layout"]["title"]["text"].startswith("Layer 3")


@needs_smollm
def test_the_model_view_maps_every_head_skipping_the_first_row():
    at = run()
    trace = lm.run(DEFAULT, max_tokens=96)
    # Independently: each head's weight on key 0, averaged over query rows 2..T
    expected = trace.attentions[..., 1:, 0].mean(axis=-1).T  # (heads, layers) as drawn
    np.testing.assert_allclose(chart_array(at, "lm_fig_stats"), expected, atol=1e-6)


@needs_smollm
def test_the_causal_check_and_a_changed_token():
    at = run(lm_change_pos="3", lm_change_to=" blue")
    assert "every one is exactly 0" in text_of(at)
    assert "**identical, bit for bit**" in text_of(at)
    assert "Token 3 “␣of” becomes “␣blue”" in text_of(at)


@needs_smollm
def test_the_induction_section_names_the_heads_and_losses():
    at = run(lm_ind_len="40", lm_ind_seed="2")  # the longest segment the slider allows
    assert_no_exception(at)
    assert "press to run the test" in text_of(at, "caption")  # not the defaults: on request
    at.button(key="lm_ind_run").click().run()
    assert_no_exception(at)
    test = lm.induction_test(seed=2, segment=40, sequences=3, n_top=5, draws=4)
    layer, head = test.top_heads[0]
    assert f"layer {layer + 1} head {head + 1} ({test.scores[layer, head]:.2f})" in text_of(at)
    # the map's caption: its own first sequence, queries t = 40..79 on keys t − 39
    share = np.mean([test.best_attention[t, t - 39] for t in range(40, 80)])
    assert md_escape(f"on the first sequence: on average {share:.0%} of a") in \
        text_of(at, "caption")
    np.testing.assert_allclose(chart_array(at, "lm_fig_ind_loss", "y"),
                               [test.loss_first, test.loss_repeat, test.loss_top_off,
                                test.loss_random_off.max()], atol=1e-9)


@needs_smollm
def test_the_head_by_hand_matches_the_model():
    at = run(lm_hand_layer="2", lm_hand_head="4", lm_hand_query="5", lm_hand_key="2")
    weight = lm.run(DEFAULT, max_tokens=96).attentions[1, 3, 4, 1]
    assert f"The model's own weight: {weight:.6f}" in text_of(at)
    assert "KV head 2" in text_of(at)  # head 4 reads KV head 4 // 3 + 1 = 2


@needs_smollm
@pytest.mark.parametrize("prompt", ["<script>alert(1)</script>", "🙂", "   x", "1e300"])
def test_odd_prompts_are_shown_as_text(prompt):
    at = run(lm_prompt=prompt)
    assert_no_exception(at)
    assert not at.error


@needs_smollm
def test_an_empty_prompt_asks_for_one():
    at = new_app(PAGE, timeout=120)
    at.query_params["lm_prompt"] = ""
    at.run()
    assert_no_exception(at)
    assert "Type a prompt" in text_of(at, "info")


@pytest.mark.parametrize("page", [PAGE, PAGE.replace("10_Language_model", "11_Inference")],
                         ids=["lesson 10", "lesson 11"])
def test_without_the_model_package_the_page_says_how_to_install_it(monkeypatch, page):
    def missing(progress=None):
        raise lm.ModelNotInstalledError("not installed")

    monkeypatch.setattr(lm, "model", missing)
    monkeypatch.setattr(lm, "model_is_loaded", lambda: False)
    at = new_app(page).run()
    assert_no_exception(at)
    assert "not installed" in text_of(at, "info")
    assert lm.INSTALL_COMMAND in " ".join(c.value for c in at.code)
