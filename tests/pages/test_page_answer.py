"""Lesson 12, what attention does for the answer (AppTest). A preset's study is computed
once per machine and kept on disk; the tests read the same study through the core and
check what the page says against it."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from conftest import (
    NOT_FUZZED,
    assert_no_exception,
    chart_array,
    chart_spec,
    open_page,
    text_of,
)

from attncore import lm
from attncore.lm import answer, patching
from tests.model_marks import needs_smollm

pytestmark = needs_smollm
PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "12_Attention_for_the_answer.py")
CAPITAL = answer.PRESETS["A capital city"]
DRINK = "Who gets the drink"  # the preset whose move to the last token is spread over layers


@pytest.fixture(scope="module")
def study() -> answer.AnswerStudy:
    return answer.study_texts(lm.model(), *CAPITAL)


def two(x: float) -> str:
    return f"{x:.2f}"


def test_the_patching_button_is_never_fuzzed():
    assert "ans_run" in NOT_FUZZED


def test_the_defaults_show_the_studys_numbers_and_say_what_they_mean(study):
    at = open_page(PAGE, timeout=120)
    assert_no_exception(at, "defaults")
    metrics = {m.label: m.value for m in at.metric}
    assert two(study.ld_clean) in metrics.values() and two(study.ld_corrupt) in metrics.values()
    # drawn with layers across: the transposes of the (L, H) and (L, T) grids
    np.testing.assert_allclose(chart_array(at, "ans_fig_heads"), study.heads.T, atol=1e-6)
    np.testing.assert_allclose(chart_array(at, "ans_fig_residual"), study.residual.T,
                               atol=1e-6)
    text = text_of(at)
    # The top head, found here independently of the page's sort: the grid's largest cell.
    layer, head = np.unravel_index(np.argmax(study.heads), study.heads.shape)
    assert f"Patching **L{layer + 1} H{head + 1} ({two(study.heads.max())})** alone" in text
    # The split adds up: the page's sum is the parts' sum, beside the run's own LD.
    parts = study.attribution.embed + study.attribution.heads.sum() + study.attribution.ffn.sum()
    assert f"= **{parts:.4f}**; the clean LD is **{study.ld_clean:.4f}**" in text
    # Where the information sits: the residual grid's own runs of layers, read here from it.
    at_france = np.flatnonzero(study.residual[:, 3] >= 0.5)
    at_last = np.flatnonzero(study.residual[:, 4] >= 0.5)
    assert f"entering layers 1–{at_france.max() + 1}: the changed token ('␣France')" in text
    assert f"entering layers {at_last.min() + 1}–30: the last token ('␣is')" in text
    # The lens: " Paris" is top-1 after the last layer and after no earlier one (this model,
    # this prompt), so the page must say "only after the last layer".
    ranks = study.lens.rank
    assert ranks[-1] == 1 and (ranks[:-1] > 1).all()
    assert "ranks 1st only after the last layer, 30" in text


def captions(at) -> str:
    return " ".join(str(c.value).replace("\\", "") for c in at.caption)


def test_the_knockout_starts_at_one_layer_and_says_its_lowest_point(study):
    at = open_page(PAGE, timeout=120)
    assert at.slider(key="ans_window").value == 1
    windows, probs, p_none = patching.knockout(lm.model(), study.runs, 1)
    np.testing.assert_allclose(chart_array(at, "ans_fig_knockout", "y"), probs, atol=1e-6)
    worst = int(np.argmin(probs))
    # one layer alone halves p(Paris) here: the dip the default window shows
    assert (probs < p_none / 2).sum() == 1
    text = text_of(at)
    # a one-layer window is named "layer n", not "layers n"
    assert f"Cutting the edge in layer {worst + 1} leaves {probs[worst]:.3f}" in text
    assert "It is the only window that halves it." in text
    # the chart's text alternative gives the minimum, which is the finding
    low = f"{probs[worst]:.3g}"  # 3 significant digits, as said_number (0.0738)
    assert f"lowest {low}, for layer {worst + 1}" in captions(at)
    assert "The window starts at 1 layer, the narrowest" in captions(at)


def test_the_knockout_window_redraws_its_section_with_its_own_numbers(study):
    at = open_page(PAGE, timeout=120)
    at.slider(key="ans_window").set_value(9).run()
    assert_no_exception(at, "window of 9")
    windows, probs, p_none = patching.knockout(lm.model(), study.runs, 9)
    np.testing.assert_allclose(chart_array(at, "ans_fig_knockout", "y"), probs, atol=1e-6)
    worst = int(np.argmin(probs))
    first, last = worst + 1, worst + 9
    assert f"Cutting the edge in layers {first}–{last} leaves {probs[worst]:.3f}" in text_of(at)
    assert f"With nothing cut p(`␣Paris`) is {p_none:.3f}" in text_of(at)


def test_the_model_note_counts_each_weight_once():
    m = lm.model()
    at = open_page(PAGE, timeout=120)
    note = " ".join(str(i.value) for i in at.info)
    # a second count: every array held, less the output matrix (the tied embedding's
    # transposed copy) and RoPE's fixed factors, which are not parameters
    arrays = m.weights.arrays()
    n = sum(a.size for name, a in arrays.items() if name not in ("output", "rope_factors"))
    assert n == 134_515_008  # SmolLM2-135M's parameters
    assert f"{4 * n / 1e6:.0f} MB for {n:,} parameters" in note  # 538 MB
    assert f"a copy of {arrays['output'].size * 4 / 1e6:.0f} MB more" in note  # 113 MB
    assert f"{m.weights.nbytes / 1e6:.0f} MB" not in note  # 651 MB counts it twice


def test_ld_is_said_as_odds_and_the_lens_first_row_is_explained(study):
    m = lm.model()
    at = open_page(PAGE, timeout=120)
    text = text_of(at)
    odds = math.exp(study.ld_clean)  # e^7.31: 1,500
    assert f"LD of {study.ld_clean:.2f} is odds of {float(f'{odds:.3g}'):,.0f} : 1" in text
    assert f"odds of 1 : {float(f'{math.exp(-study.ld_corrupt):.3g}'):,.0f}." in text
    # Row 0 of the lens is the last token's embedding; read through the tied output matrix
    # it scores itself highest. Its logits, a second way: the final RMSNorm by hand, then
    # the dot product with every row of the embedding table.
    w, token = m.weights, int(study.pair.clean[-1])
    x = w.token_embd[token].astype(np.float64)
    normed = x / np.sqrt(np.mean(x * x) + m.config.norm_eps) * w.output_norm
    logits = w.token_embd.astype(np.float64) @ normed
    top, second = np.argsort(-logits)[:2]
    assert top == token
    said = captions(at)
    assert (f"`␣is` scores {logits[top]:.1f}, the runner-up `{lm.pieces(m, [second])[0]}` "
            f"{logits[second]:.1f}") in said
    # its probability, 1 − e^−gap at most, is never shown as 0.99999…
    table = at.table[0].value
    assert str(table["p(top)"].iloc[0]).startswith("1 − ")
    assert "0.9999" not in said and not any("0.9999" in str(v) for v in table["p(top)"])


def test_the_scatter_names_its_key_heads(study):
    at = open_page(PAGE, timeout=120)
    named = {a["text"] for a in chart_spec(at, "ans_fig_looks")["layout"]["annotations"]}
    heads, looks = study.heads, study.looks
    H = heads.shape[1]
    # the 5 largest recoveries, the most negative one, the idle head that looks most
    expected = {f"L{i // H + 1} H{i % H + 1}" for i in np.argsort(-heads, axis=None)[:5]}
    low = int(np.argmin(heads))
    expected.add(f"L{low // H + 1} H{low % H + 1}")
    idle = np.where((looks >= 0.5) & (np.abs(heads) < 0.05), looks, -1).argmax()
    expected.add(f"L{idle // H + 1} H{idle % H + 1}")
    assert named >= expected and "L24 H5" in named and "L17 H1" in named


def test_a_move_in_one_layer_is_named_and_a_spread_one_is_not():
    """At the defaults the last token's recovery jumps from near 0 to 1 inside one layer;
    in the drink preset it climbs over several, and no one layer is named."""
    at = open_page(PAGE, timeout=120)
    capital = answer.study_texts(lm.model(), *CAPITAL).residual[:, -1]
    k = int(np.flatnonzero(capital >= 0.5)[0])  # the stream entering layer k + 1
    assert abs(capital[k - 1]) < 0.1  # near 0 entering layer k: a jump inside layer k
    assert f"to the last token inside layer {k}, where its recovery jumps" in text_of(at)

    at = open_page(PAGE, timeout=300, ans_preset=DRINK)
    at.button(key="ans_run").click().run()
    assert_no_exception(at, DRINK)
    study = answer.study_texts(lm.model(), *answer.PRESETS[DRINK])
    last = study.residual[:, -1]
    k = int(np.flatnonzero(last >= 0.5)[0])
    first = int(np.flatnonzero(np.abs(last[:k]) < 0.1)[-1]) + 1  # entering it: near 0
    assert first < k  # a spread move: 0.12, 0.33, 0.36, 0.38 before 0.92
    text = text_of(at)
    assert f"over layers {first}–{k}, not inside one layer" in text
    assert f"then {', '.join(f'{r:.2f}' for r in last[first:k])} and {last[k]:.2f} entering " \
           f"layers {first + 1} to {k + 1}" in text
    assert "inside layer" not in text and "must move it" not in text
    # the one-layer knockout: its lowest point, and no layer halves p(Mary)
    windows, probs, p_none = patching.knockout(lm.model(), study.runs, 1)
    worst = int(np.argmin(probs))
    assert f"Cutting the edge in layer {worst + 1} leaves {probs[worst]:.3f}" in text
    assert probs.min() > p_none / 2 and "No window halves it." in text


def test_presenter_mode_shows_the_pair_and_the_definitions_of_its_numbers():
    at = open_page(PAGE, timeout=120, presenter="true")
    assert_no_exception(at, "presenter mode")
    text = text_of(at)
    for shown in ("Clean run: “The capital of France is”",  # the top diagram's two prompts
                  "Corrupted run: “The capital of Italy is”",
                  "recovery = (patched − corrupted) / (clean − corrupted)",
                  "LD = logit(`␣Paris`) − logit(`␣Rome`) at the last position",
                  "forbid the last token to read '␣France' in a window of consecutive "
                  "layers"):
        assert shown in text, shown


@pytest.mark.parametrize("clean, corrupt, answer_text, wrong, message", [
    ("The capital of France is", "The capital of Italy is now", " Paris", " Rome",
     "the clean prompt has 5 tokens and the corrupted one 6"),
    ("The capital of France is", "The capital of Italy is", " Parisian", " Rome",
     "is 2 tokens ('␣Paris' | 'ian')"),
    ("The capital of France is", "The capital of France is", " Paris", " Rome",
     "the same tokens"),
    ("The capital of France is", "The capital of Italy is", "", " Rome", "the answer is empty"),
])
def test_a_bad_pair_is_refused_with_a_message_naming_the_problem(clean, corrupt, answer_text,
                                                                  wrong, message):
    at = open_page(PAGE, ans_preset="Your own pair", ans_clean=clean, ans_corrupt=corrupt,
                   ans_answer=answer_text, ans_wrong=wrong)
    assert_no_exception(at, message)
    assert any(message in e.value for e in at.error), [e.value for e in at.error]
    assert not at.metric  # nothing computed from a bad pair


def test_an_own_pair_waits_for_the_button_then_shows_its_grids():
    pair = ("The capital of Japan is", "The capital of China is", " Tokyo", " Beijing")
    at = open_page(PAGE, timeout=120, ans_preset="Your own pair", ans_clean=pair[0],
                   ans_corrupt=pair[1], ans_answer=pair[2], ans_wrong=pair[3])
    assert_no_exception(at, "own pair")
    assert any("Press the button" in c.value for c in at.caption)
    assert not at.metric
    at.button(key="ans_run").click().run()
    assert_no_exception(at, "own pair patched")
    expected = answer.study_texts(lm.model(), *pair)
    np.testing.assert_allclose(chart_array(at, "ans_fig_heads"), expected.heads.T, atol=1e-6)
