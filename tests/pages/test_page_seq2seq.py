"""Interaction tests for lesson 6, scoring functions and seq2seq (AppTest, no browser)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import chart_array, chart_spec, open_page, shown_number
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "6_Scoring_and_seq2seq.py")


def run(**query) -> AppTest:
    return open_page(PAGE, **query)


def markdown(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown)


def test_four_scores_with_parameter_counts():
    at = run()
    spec = chart_spec(at, "s2s_fig_scores")  # one figure: a row of weights per score
    assert spec["data"][0]["y"] == ["dot", "scaled dot", "general", "additive"]
    np.testing.assert_allclose(chart_array(at, "s2s_fig_scores").sum(axis=1), 1.0, atol=1e-6)
    # d = 16: general has d² = 256, additive d_a(2d + 1) = 16 × 33 = 528.
    counts = "| dot | qᵀk | 0 |", "| scaled dot | qᵀk / √d | 0 |", "| general | qᵀW k | 256 |"
    assert all(row in markdown(at) for row in counts) and "| 528 |" in markdown(at)


def test_each_section_has_its_own_step():
    # Moving one section's step changes that section only: its figures follow it, the
    # others keep theirs (each section reruns alone, as a fragment).
    at = run(s2s_model="Luong")
    before = {k: chart_spec(at, k) for k in ("s2s_fig_scores", "s2s_fig_alignment",
                                              "s2s_fig_local")}
    at.slider(key="s2s_align_step").set_value(4).run()
    assert chart_spec(at, "s2s_fig_alignment") != before["s2s_fig_alignment"]
    assert chart_spec(at, "s2s_fig_scores") == before["s2s_fig_scores"]
    assert chart_spec(at, "s2s_fig_local") == before["s2s_fig_local"]
    at.slider(key="s2s_step").set_value(4).run()
    assert "Weights of “chats”" in chart_spec(at, "s2s_fig_scores")["layout"]["title"]["text"]


def test_alignment_fills_row_by_row():
    at = run(s2s_model="Luong")
    for step in (1, 3, 4):
        at.slider(key="s2s_align_step").set_value(step).run()
        text = chart_spec(at, "s2s_fig_alignment")["data"][0]["text"]
        filled = [any(cell for cell in row) for row in text]
        assert filled == [r < step for r in range(4)]  # "J'aime les chats": J' aime les chats
        assert f"α_{step} sums to 1.000000" in markdown(at)


@pytest.mark.parametrize("step, source_index", [(1, 0), (2, 1), (4, 2)])
def test_luong_dot_aligns_the_translation(step, source_index):
    # Target J' aime les chats, source I love cats: J' -> I, aime -> love, chats -> cats.
    at = run(s2s_model="Luong")
    at.slider(key="s2s_align_step").set_value(step).run()
    alpha = chart_array(at, "s2s_fig_alpha", "y")
    assert int(np.argmax(alpha)) == source_index


def test_apostrophes_and_hyphens_stay_inside_words_on_the_page():
    at = run(s2s_source="I don't like state-of-the-art cats", s2s_target="L'homme n'aime pas")
    assert chart_spec(at, "s2s_fig_alpha")["data"][0]["x"] == [
        "I", "don't", "like", "state-of-the-art", "cats"]
    assert chart_spec(at, "s2s_fig_alignment")["data"][0]["y"] == [
        "L'", "homme", "n'", "aime", "pas"]


def test_steps_and_window_centre_are_counted_from_1():
    # Monotonic window at step t: the centre is source position t (counted from 1), the
    # same number as the slider, clipped to the source length S = 3.
    for step, centre in [(1, 1), (2, 2), (4, 3)]:
        at = run(s2s_local_step=str(step))
        assert f"p_t = {centre:.2f}" in markdown(at)
        assert chart_spec(at, "s2s_fig_local")["layout"]["title"]["text"].startswith(
            f"Local, p_t = {centre:.2f}")


def test_decoder_state_subscripts_render_without_braces():
    for model in ("Bahdanau", "Luong"):
        at = run(s2s_model=model)
        text = markdown(at)
        assert "_{" not in text and ("sₜ₋₁" in text if model == "Bahdanau" else "sₜ" in text)


def test_local_weights_are_zero_outside_the_window():
    at = run(s2s_window="1", s2s_local_step="1")
    local = chart_array(at, "s2s_fig_local", "y")
    # Step 1: monotonic p_t = 1, D = 1: only source tokens 1 and 2 may be non-zero.
    assert local[2] == 0.0 and local[:2].sum() > 0


def table_number(text: str) -> float:
    """A table's number as significant_text writes it: 0.0932 or 3.39×10⁻⁶."""
    mantissa, _, power = text.partition("×10")
    exponent = power.translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789"))
    return float(mantissa) * 10.0 ** int(exponent or 0)


def test_hard_attention_gradient_is_zero_on_the_page():
    at = run()
    table = next(d.value for d in at.table if "hard ‖dc/de_j‖" in d.value.columns)
    assert (table["hard ‖dc/de_j‖"] == "0").all()
    assert (table["soft ‖dc/de_j‖"].map(table_number) > 0).all()
    # s is the decoder state on this page: a score is e_j (Bahdanau et al.'s letter).
    assert "ds_j" not in markdown(at) and "‖dc/de_j‖ = α_j ‖h_j − c‖" in markdown(at)


@pytest.mark.parametrize("query, message, where", [
    ({"s2s_source": ""}, "Type both a source and a target", "info"),
    ({"s2s_target": "   "}, "Type both a source and a target", "info"),
    ({"s2s_source": " ".join(["word"] * 50)}, "only the first 20 are used", "warning"),
    ({"s2s_window": "20"}, "covers the whole source", "info"),
])
def test_bad_inputs_give_messages(query, message, where):
    at = run(**query)
    assert message in " ".join(e.value for e in getattr(at, where))


def test_html_in_sentences_is_text():
    at = run(s2s_source="<script>alert(1)</script>", s2s_target="<img src=x onerror=alert(1)>")
    source_labels = chart_spec(at, "s2s_fig_alpha")["data"][0]["x"]
    target_labels = chart_spec(at, "s2s_fig_alignment")["data"][0]["y"]
    assert "&lt;" in source_labels and "&lt;" in target_labels
    assert all("<" not in x for x in [*source_labels, *target_labels])


def test_one_token_target_and_shrinking_target_keep_working():
    # Regressions found by the fuzzer: a one-token target made the step slider's
    # min = max = 1, and a kept step beyond a shorter target raised an error.
    at = run(s2s_target="cat")
    assert " ".join(c.value for c in at.caption).count("the only choice") == 4  # four steps
    at = run(s2s_target="a b c d e f")
    steps = ("s2s_step", "s2s_align_step", "s2s_next_step", "s2s_local_step")
    for key in steps:
        at.slider(key=key).set_value(6).run()
    at.text_input(key="s2s_target").set_value("a b").run()
    assert not at.exception
    assert [at.slider(key=k).value for k in steps] == [2, 2, 2, 2]


def latex(at: AppTest) -> str:
    return " ".join(e.value for e in at.latex)


def test_each_model_shows_its_own_formula_and_start():
    at = run()  # Bahdanau: the previous state, and this app's choice of s₀
    assert r"\mathrm{score}(s_{t-1}, h_j) = v^\top \tanh(W_q s_{t-1} + W_k h_j)" in latex(at)
    assert "this app uses the mean of the encoder states" in markdown(at)
    assert r"\overleftarrow{h}_1" in markdown(at)
    at = run(s2s_model="Luong", s2s_luong_score="general")
    assert r"\mathrm{score}(s_t, h_j) = s_t^\top W h_j" in latex(at)
    # section 2's formula (section 3 shows both models' decoders, whatever is chosen here)
    assert "s_{t-1}" not in next(e.value for e in at.latex if r"\alpha_{tj}" in e.value)
    at = run(s2s_model="Luong", s2s_luong_score="additive")
    assert "(Luong et al.'s “concat”)" in markdown(at)


def argmax_rows(at: AppTest) -> list[int]:
    # the alignment filled to its last step; a row's largest weight read from the figure
    return [int(np.argmax(row)) for row in chart_array(at, "s2s_fig_alignment")]


def test_the_alignment_sentence_counts_what_the_figure_shows():
    # J' aime les chats over I love cats: J' -> I, aime -> love, chats -> cats by the toy
    # lexicon, les -> the is not in the source: 3 words can be found, in columns 0, 1, 2.
    expected = {0: 0, 1: 1, 3: 2}
    for query, words in [
        ({"s2s_model": "Luong"}, "With the dot score, over the whole sentence, {} of the 3 "
                                 "target words"),
        ({"s2s_model": "Bahdanau"}, "The additive score's matrices are random (untrained), so "
                                    "its alignment has learned nothing: over the whole "
                                    "sentence, {} of the 3 target words"),
    ]:
        at = run(s2s_align_step="4", **query)
        rows = argmax_rows(at)
        hits = sum(rows[t] == s for t, s in expected.items())
        assert words.format(hits) in markdown(at)
    # Extremes: nothing to find, and one word to find (and found by the dot score: the
    # decoder reads "chat" as "cat", the same word as the source's).
    at = run(s2s_model="Luong", s2s_target="xyz abc")
    assert "No target word here has its translation in the source" in markdown(at)
    at = run(s2s_model="Luong", s2s_source="a cat", s2s_target="chat")
    assert argmax_rows(at) == [1]
    assert "the one target word whose translation is in the source puts its largest" in \
        markdown(at)


def test_the_hard_gradient_sentence_follows_the_measured_gradient(monkeypatch):
    at = run()
    assert "The hard one does not move at all" in markdown(at)

    from attncore import seq2seq as s2s

    def flipping(scores, h, eps=1e-6):  # as if the choice flipped when "love" was nudged
        soft = np.ones(len(scores))
        hard = np.zeros(len(scores))
        hard[1] = 1e5
        return soft, hard

    monkeypatch.setattr(s2s, "context_gradient", flipping)
    at = run()
    assert "The hard one moves only where a nudge flips the choice (here at “love”" in \
        markdown(at)
    assert "does not move at all" not in markdown(at)


def test_hard_and_sharp_keep_their_meanings():
    text = markdown(run())
    assert "[Hard attention](" in text and "#glossary-hard)" in text
    assert "[sharp](" in text and "#glossary-sharp)" in text
    assert "does not make soft attention hard" in text


def test_the_crossing_sentence_follows_the_trained_alignments():
    from attncore.train.alignment import DISPLAY, translate_words

    at = run()
    order = translate_words(DISPLAY[0].split())[1]  # the English word of each French word
    moved = [i for i, j in enumerate(order) if i != j]
    right = [all(int(np.argmax(chart_array(at, f"s2s_fig_trained_{kind}")[i])) == order[i]
                 for i in moved) for kind in ("additive", "general")]
    said = "In both, each moved word (" in markdown(at)
    assert said == all(right)
    assert "d = 32" in markdown(at)  # AlignmentConfig's d_model


def shown_sum(at: AppTest) -> str:
    text = markdown(at)
    assert "so the weights sum to " in text
    return text.split("so the weights sum to ", 1)[1].split(" (Luong", 1)[0]


def test_local_m_is_the_softmax_over_the_window():
    # Defaults: monotonic window (Luong's local-m), step 2, D = 2, S = 3: the window
    # [0, 4] holds the whole source, so the local weights are the global ones, summing to 1
    at = run()
    np.testing.assert_array_equal(chart_array(at, "s2s_fig_local", "y"),
                                  chart_array(at, "s2s_fig_global", "y"))
    assert "over the window alone (Luong et al.'s local-m), so they sum to 1;" in markdown(at)
    assert "times the Gaussian" not in " ".join(i.value for i in at.info)
    assert "exp" not in at.latex[-1].value
    # The extreme: D = 1 at step 1 of a 7-word source: the window [0, 2] holds positions
    # 1 and 2 only; their weights are the global ones divided by their sum (a softmax over
    # the window), the others exactly 0
    at = run(s2s_source="the black cat sat on the mat", s2s_local_step="1", s2s_window="1")
    glob = chart_array(at, "s2s_fig_global", "y").astype(np.float64)
    local = chart_array(at, "s2s_fig_local", "y").astype(np.float64)
    np.testing.assert_allclose(local[:2], glob[:2] / glob[:2].sum(), rtol=1e-6)
    assert np.all(local[2:] == 0.0)


def test_local_weights_sum_is_not_rounded_to_1():
    # Predictive window (local-p) at the other defaults: the sum of the local bars,
    # 3 decimals, below 1 (the Gaussian is not renormalised away).
    at = run(s2s_local_mode="predictive")
    total = float(chart_array(at, "s2s_fig_local", "y").sum())
    assert shown_sum(at) == f"{total:.3f}" and total < 0.999
    assert "exp" in at.latex[-1].value
    # D = 20, the widest: σ = 10 and p_t is 0.09 from the second word, which takes nearly
    # all the weight, so the Gaussian there is exp(−0.09² / 200) ≈ 1 − 4×10⁻⁵ and the sum
    # is 1 − 1.7×10⁻⁴, which 3 decimals would print as a renormalised-looking 1.000.
    at = run(s2s_local_mode="predictive", s2s_window="20")
    said = shown_sum(at)
    assert said.startswith("1 − ") and "1.000" not in said
    gap = float(said[4:].replace("×10", "e").translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")))
    total = float(chart_array(at, "s2s_fig_local", "y").astype(np.float64).sum())
    assert gap == pytest.approx(1 - total, rel=0.05)  # 2 significant digits shown


def test_the_whole_source_note_follows_the_window_not_d_alone():
    # Defaults: S = 3, step 2, monotonic p_t = 2, D = 2: the window [0, 4] holds all three
    # source positions although D < S.
    at = run()
    assert "[p_t − D, p_t + D] = [0.00, 4.00] covers the whole source (3 tokens)" in \
        " ".join(i.value for i in at.info)
    # Step 1, D = 1: [0, 2] leaves out position 3, "cats".
    at = run(s2s_local_step="1", s2s_window="1")
    assert "covers the whole source" not in " ".join(i.value for i in at.info)
    assert chart_array(at, "s2s_fig_local", "y")[2] == 0.0


def test_d_a_is_defined_and_the_general_score_has_one_matrix():
    at = run(s2s_model="Luong", s2s_luong_score="general", s2s_align_step="4")
    text = markdown(at)
    assert "hidden width d_a (the number of components of v) is 16" in text
    assert "The general score's matrix W is random (untrained)" in text
    assert "general score's matrices" not in text


def test_the_toy_decoder_is_described_as_it_is_built():
    captions = " ".join(c.value for c in run().caption)
    assert "not recurrent" in captions and "plus 0.3 times an embedding of its own" in captions
    assert "with the encoder's W" in captions


def test_practice_parameter_count_is_checked():
    # W is d × d = 16 × 16 = 256 entries.
    at = run()
    at.number_input(key="s2s_pq1").set_value(256.0).run()
    assert any("Right" in e.value for e in at.success)


def test_gradient_table_writes_powers_of_ten_as_on_every_page():
    # "black" takes 7.3×10⁻⁷ of the weight at this setting: its soft gradient is a few
    # 10⁻⁶, which the table writes 3.39×10⁻⁶, not 3.39e-06.
    at = run(s2s_seed="18", s2s_source="the black cat", s2s_target="le chat noir",
             s2s_local_step="1")
    table = next(d.value for d in at.table if "soft ‖dc/de_j‖" in d.value.columns)
    black = table.loc["2: black", "soft ‖dc/de_j‖"]
    assert black.endswith("×10⁻⁶") and "e-" not in black
    # α‖h − c‖ ≤ α · 2√16 (states in [−1, 1]^16): at most 8 × 7.3×10⁻⁷ = 5.8×10⁻⁶.
    assert 0 < table_number(black) < 5.9e-6


# --- Section 3: what the decoder does with c_t ------------------------------------------

def number_after(text: str, marker: str) -> float:
    """The number the page writes right after ``marker`` (3 decimals, or 1 − 10⁻ⁿ)."""
    rest = text.split(marker, 1)[1]
    if rest.startswith("1 − "):
        return 1 - shown_number(rest[4:])
    return shown_number(rest)


def test_the_next_word_sentences_follow_the_bars():
    # Defaults (seed 0, step 2): the vocabulary is J', aime, les, chats and </s>; each
    # sentence names the tallest bar of its own chart and its height, and target word 2.
    at = run()
    vocab = ["J'", "aime", "les", "chats", "</s>"]
    for model, key in (("Bahdanau", "s2s_fig_bahdanau_output"),
                       ("Luong", "s2s_fig_luong_output")):
        probs = chart_array(at, key, "y")
        assert chart_spec(at, key)["data"][0]["x"] == [*vocab[:-1], "&lt;/s&gt;"]  # as text
        assert abs(probs.sum() - 1) < 1e-6  # float32 bars
        top = int(np.argmax(probs))
        said = next(m.value for m in at.markdown if m.value.startswith(f"{model}'s most"))
        assert f"most probable word is “{vocab[top]}”" in said
        assert abs(number_after(said, "(p = ") - probs[top]) < 6e-4
        assert ("not target word 2, “aime”" in said) == (top != 1)
    assert "5 in all" in markdown(at) and "1/5 = 0.200" in markdown(at)
    # Seed 0, step 4: Luong's tallest bar is the target word itself, "chats", Bahdanau's
    # is not; the sentence says which, and that it is chance.
    at = run(s2s_next_step="4")
    for model, key in (("Bahdanau", "s2s_fig_bahdanau_output"),
                       ("Luong", "s2s_fig_luong_output")):
        said = next(m.value for m in at.markdown if m.value.startswith(f"{model}'s most"))
        hit = int(np.argmax(chart_array(at, key, "y"))) == vocab.index("chats")
        assert ("which is target word 4: by chance" in said) == hit
        assert ("not target word 4, “chats”" in said) == (not hit)
    assert "which is target word 4: by chance" in markdown(at)  # Luong's, at this seed


def test_the_gru_step_is_drawn_as_computed():
    # Rows of the Bahdanau figure: s₁, c₂, z₂, r₂, s̃₂, s₂. The sentence gives z₂'s range,
    # and every entry of s₂ lies between s₁'s and s̃₂'s (1 − z and z weigh them).
    at = run()
    rows = chart_array(at, "s2s_fig_bahdanau_step")  # (6, 16), float32
    assert chart_spec(at, "s2s_fig_bahdanau_step")["data"][0]["y"] == [
        "s₁", "c₂", "z₂", "r₂", "s̃₂", "s₂"]
    s_prev, z, cand, new = rows[0], rows[2], rows[4], rows[5]
    np.testing.assert_allclose(new, (1 - z) * s_prev + z * cand, atol=1e-6)
    said = next(m.value for m in at.markdown if m.value.startswith("Entry i of s₂"))
    assert abs(number_after(said, "run from ") - z.min()) < 6e-4
    assert abs(number_after(said, " to ") - z.max()) < 6e-4
    # The previous state at step 2 is section 2's Bahdanau query: the toy state of "J'".
    from attncore import seq2seq as s2s
    params = s2s.init_seq2seq(16, np.random.default_rng(0))
    toy = s2s.decoder_states(["J'", "aime", "les", "chats"], params)
    np.testing.assert_allclose(s_prev, toy[0], atol=1e-6)
    assert "y₁ is “J'”, the previous target word" in markdown(at)


def test_step_1_reads_the_start_mark_and_the_mean_of_the_encoder():
    at = run(s2s_next_step="1")
    assert "y₀ is \\<s\\>, a start mark (this app's choice)" in markdown(at)
    assert chart_spec(at, "s2s_fig_bahdanau_step")["data"][0]["y"][0] == "s₀"
    # One target word: 2 in all (the word and </s>), and its only step still works.
    at = run(s2s_target="chat")
    assert "2 in all" in markdown(at) and "“chat”" in markdown(at)
    assert chart_spec(at, "s2s_fig_luong_output")["data"][0]["x"] == ["chat", "&lt;/s&gt;"]


def test_luongs_two_halves_are_measured():
    # h̃₂ = tanh(W_c[:, :16] c₂ + W_c[:, 16:] s₂): the lengths of the two parts, by loops
    # over the same seeded W_c and the vectors the figure draws.
    at = run()
    s_t, c = chart_array(at, "s2s_fig_luong_step")[:2].astype(np.float64)
    from attncore import seq2seq as s2s
    dec = s2s.init_decoder(16, 5, np.random.default_rng([0, 1]))
    part = [[sum(dec.w_c[i][j] * c[j] for j in range(16)) for i in range(16)],
            [sum(dec.w_c[i][16 + j] * s_t[j] for j in range(16)) for i in range(16)]]
    said = next(m.value for m in at.markdown if m.value.startswith("Inside the tanh"))
    assert abs(number_after(said, "of length ") - np.linalg.norm(part[0])) < 1e-3
    assert abs(number_after(said, "one of length ") - np.linalg.norm(part[1])) < 1e-3
    h_tilde = chart_array(at, "s2s_fig_luong_step")[2]
    np.testing.assert_allclose(h_tilde, np.tanh(np.add(*part)), atol=1e-5)


def test_the_next_word_section_reruns_alone_and_links_lesson_0():
    at = run()
    before = {k: chart_spec(at, k) for k in ("s2s_fig_alignment", "s2s_fig_local")}
    at.slider(key="s2s_next_step").set_value(3).run()
    assert chart_spec(at, "s2s_fig_bahdanau_step")["data"][0]["y"][-1] == "s₃"
    assert all(chart_spec(at, k) == v for k, v in before.items())
    text = markdown(at)
    assert "[lesson 0](./Why_attention) trains a real recurrent (GRU) encoder-decoder" in text
    assert "random (untrained) weights" in text
    assert "What is illustrative here" in " ".join(e.label for e in at.expander)
    presenter = run(presenter="true")
    assert "What is illustrative here" not in " ".join(e.label for e in presenter.expander)
    assert chart_spec(presenter, "s2s_fig_luong_output")
