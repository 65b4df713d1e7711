"""Interaction tests for lesson 5, positional encodings (AppTest, no browser)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from conftest import chart_array, chart_spec, open_page, shown_number
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "5_Positional_encoding.py")


def run(**query) -> AppTest:
    return open_page(PAGE, **query)


def markdown(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown)


def number_after(text: str, phrase: str) -> float:
    assert phrase in text, f"{phrase!r} not in {text[:400]!r}"
    return shown_number(text.split(phrase, 1)[1])


def test_shift_error_and_toeplitz_spread_are_rounding_only():
    at = run()
    text = markdown(at)
    assert number_after(text, "the largest error is") < 1e-12
    assert number_after(text, "the largest spread along a diagonal is") < 1e-12


def test_permutation_without_positions_matches_and_with_positions_differs():
    at = run()
    text = markdown(at)
    assert number_after(text, "they match, to a largest difference of") < 1e-12
    assert number_after(text, "they differ by up to") > 1e-3


def causal_difference(at: AppTest, d: int, seed: int = 0) -> float:
    """The shown shuffle's largest output difference under a causal mask and no positions,
    by a loop: output i is the softmax over keys j <= i of q_i·k_j / √d times the values.
    The inputs are built as the lesson builds them (toy embeddings, weights seeded
    [seed, 1]); the shuffle is read from its table (distinct tokens)."""
    from attncore.init import normal_weights
    from attncore.text import toy_embeddings

    table = next(t.value for t in at.table if "shuffled" in t.value.index)
    tokens, shuffled = table.loc["original"].tolist(), table.loc["shuffled"].tolist()
    assert len(set(tokens)) == len(tokens)
    perm = [tokens.index(w) for w in shuffled]
    x = toy_embeddings(tokens, d, decimals=None)
    rng = np.random.default_rng([seed, 1])
    w_q, w_k, w_v = (normal_weights(rng, (d, d)) for _ in range(3))

    def causal(rows):
        q, k, v = rows @ w_q, rows @ w_k, rows @ w_v
        out = []
        for i in range(len(rows)):
            e = np.exp(q[i] @ k[: i + 1].T / math.sqrt(d))
            out.append((e / e.sum()) @ v[: i + 1])
        return np.array(out)

    return float(np.max(np.abs(causal(x[perm]) - causal(x)[perm])))


def test_a_causal_mask_alone_already_sees_the_order():
    # Defaults: "The cat sat on the mat", seed 0, d_model 64; the same shuffle, no
    # positions, a causal mask: the outputs differ by far more than rounding
    at = run()
    text = markdown(at)
    assert "**With a [causal mask](./#glossary-causal-mask)** and still no positions" in text
    shown = number_after(text, "and still no positions they differ by up to")
    assert shown == pytest.approx(causal_difference(at, 64), abs=5e-4) and shown > 1
    assert "Without positions or a mask" in " ".join(h.value for h in at.header)
    # The extreme d_model = 2, on "dog bites man": one sin/cos pair, the mask still sees
    at = run(pe_sentence="dog bites man", pe_dmodel="2")
    shown = number_after(markdown(at), "and still no positions they differ by up to")
    assert shown == pytest.approx(causal_difference(at, 2), abs=5e-4) and shown > 1e-3
    # Equal tokens: a shuffle moves nothing that could be seen, with or without the mask
    said = markdown(run(pe_sentence="a a"))
    assert "no positions they differ by only exactly 0: for this sentence and shuffle, the " \
           "mask changes nothing either." in said


@pytest.mark.parametrize("query", [
    {"pe_len": "512", "pe_dmodel": "512"},
    {"pe_len": "8", "pe_dmodel": "2", "pe_base": "100"},
    {"pe_base": "100000", "pe_offset": "63"},
])
def test_extreme_settings_render(query):
    at = run(**query)
    assert number_after(markdown(at), "the largest error is") < 1e-11


def test_pooled_table_stays_small_on_the_wire():
    at = run(pe_len="512", pe_dmodel="512")
    import json
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        for trace in spec["data"]:
            if trace.get("type") == "heatmap":
                assert len(trace["y"]) <= 64 and len(trace["x"]) <= 64


def test_short_sentence_and_html_are_handled():
    at = run(pe_sentence="one")
    assert "at least two tokens" in " ".join(i.value for i in at.info)
    at = run(pe_sentence="<script>alert(1)</script>")
    table = next(d.value for d in at.table if "shuffled" in d.value.index)
    assert "script" in table.loc["original"].tolist()


def test_alibi_slopes_listed_and_practice_question_checks():
    at = run(pe_heads="4")
    captions = " ".join(c.value for c in at.caption)
    assert "Slopes: 0.25, 0.0625, 0.015625, 0.00390625" in captions  # 4^-1 .. 4^-4
    at.number_input(key="pe_pq1").set_value(0.8415).run()
    assert any("Right" in s.value for s in at.success)


def test_dependent_controls_survive_their_range_shrinking():
    # Regressions found by the fuzzer: a kept slider value above a new, smaller maximum
    # raised StreamlitValueAboveMaxError, and one ALiBi head made min = max = 1.
    at = run()
    at.slider(key="pe_heads").set_value(1).run()
    assert not at.exception
    at.slider(key="pe_len").set_value(512).run()
    at.slider(key="pe_offset").set_value(53).run()
    at.slider(key="pe_len").set_value(8).run()
    assert not at.exception and at.slider(key="pe_offset").value == 7  # clamped to T - 1
    at.slider(key="pe_len").set_value(9).run()
    assert not at.exception and at.slider(key="pe_offset").value == 7


def captions(at: AppTest) -> str:
    return " ".join(c.value for c in at.caption)


def test_positions_are_counted_from_0_on_the_page_and_in_the_practice_question():
    at = run(pe_len="8", pe_dmodel="4")
    spec = chart_spec(at, "pe_fig_table")
    assert spec["data"][0]["y"] == [str(p) for p in range(8)]
    assert spec["layout"]["yaxis"]["title"]["text"] == "position p"
    z = chart_array(at, "pe_fig_table")
    # Row "0" is PE(0): sin 0 = 0 and cos 0 = 1 in every pair.
    assert list(z[0]) == [0.0, 1.0, 0.0, 1.0]
    # Row "1", column 0 is PE(1, 0) = sin(1 · b⁰) = sin 1, the practice question's answer.
    assert abs(z[1, 0] - math.sin(1.0)) < 1e-6  # float32 on the wire
    assert "Positions are counted from 0, as in the formula: p = 0, 1, …, 7" in markdown(at)
    at.number_input(key="pe_pq1").set_value(round(float(z[1, 0]), 4)).run()
    assert any("Right" in s.value for s in at.success)
    shuffled = next(d.value for d in at.table if "shuffled" in d.value.index)
    assert list(shuffled.columns) == [str(p) for p in range(6)]  # "The cat sat on the mat"
    at.radio(key="pe_view").set_value("Chosen pairs").run()
    assert list(chart_array(at, "pe_fig_dims", "x")) == list(range(8))
    # Section 5's figures count from 0 as well: 8 positions here.
    for key in ("pe_fig_learned", "pe_fig_relative", "pe_fig_rope", "pe_fig_alibi"):
        assert chart_spec(at, key)["data"][0]["y"] == [str(p) for p in range(8)], key


def test_one_pair_at_d_model_2_is_said_once_and_not_offered_three_times():
    at = run(pe_dmodel="2", pe_view="Chosen pairs")
    assert "A single pair, pair 0" in captions(at) and "to 6 positions" not in captions(at)
    assert not [m for m in at.multiselect if m.key == "pe_pairs"]
    at = run(pe_dmodel="4", pe_view="Chosen pairs")
    picker = at.multiselect(key="pe_pairs")
    assert picker.value == [0, 1] and len(set(picker.value)) == len(picker.value)


def test_large_table_draws_true_entries_on_a_minus_1_to_1_scale():
    at = run(pe_len="512", pe_dmodel="512", pe_base="10000")
    spec = chart_spec(at, "pe_fig_table")
    trace = spec["data"][0]
    assert (trace["zmin"], trace["zmax"]) == (-1.0, 1.0)
    assert "(1 position in 8 and 1 sin/cos pair in 8 drawn)" in spec["layout"]["title"]["text"]
    assert "pooled" not in spec["layout"]["title"]["text"]
    assert "never an average" in captions(at)
    # Rows: positions p = 0, 8, 16, …; columns: pairs 0, 8, 16, … and each
    # pair's two columns. Each drawn value is the formula's, computed here directly.
    z = chart_array(at, "pe_fig_table")
    rows = [int(y) for y in trace["y"]]
    cols = [int(x) for x in trace["x"]]
    assert rows[:3] == [0, 8, 16] and cols[:4] == [0, 1, 16, 17] and z.shape == (64, 64)
    for i, p in enumerate(rows):
        for j, c in enumerate(cols):
            angle = p / 10000 ** ((c - c % 2) / 512)
            expected = np.sin(angle) if c % 2 == 0 else np.cos(angle)
            assert abs(z[i, j] - expected) < 1e-6  # float32 on the wire
    # The fast columns keep their swing: an average over blocks would bring it near 0.
    assert z[:, 0].max() > 0.9 and z[:, 0].min() < -0.9


def test_large_similarity_maps_draw_true_entries_not_block_averages():
    # d_model = 2: one pair with ω = 1, so PE(p)·PE(p′) = cos(p − p′), which swings between
    # −1 and 1 every few positions; 8 × 8 block averages of it stayed within ±0.03.
    at = run(pe_len="512", pe_dmodel="2")
    spec = chart_spec(at, "pe_fig_similarity")
    assert "(1 position in 8 drawn)" in spec["layout"]["title"]["text"]
    z = chart_array(at, "pe_fig_similarity")
    drawn = np.array([int(y) for y in spec["data"][0]["y"]])  # the formula's p
    expected = np.cos(drawn[:, None] - drawn[None, :])
    np.testing.assert_allclose(z, expected, atol=1e-6)  # float32 on the wire
    assert z.max() > 0.99 and z.min() < -0.99
    at = run(pe_len="512", pe_dmodel="2", pe_view="Wavelengths")
    assert not [c for c in at.get("plotly_chart") if "pe_fig_wavelengths" in c.proto.id]
    assert "A single pair, pair 0: its wavelength is 2π ≈ 6.28 positions" in captions(at)


def figures_shown(at: AppTest) -> str:
    return " ".join(c.proto.id for c in at.get("plotly_chart"))


def test_one_figure_per_view_and_every_view_is_one_click_away():
    # A slider that feeds every view redraws only the one shown (each costs the browser).
    at = run()
    assert "pe_fig_table" in figures_shown(at) and "pe_fig_dims" not in figures_shown(at)
    at.radio(key="pe_view").set_value("Chosen pairs").run()
    assert "pe_fig_dims" in figures_shown(at) and "pe_fig_table" not in figures_shown(at)
    # d_model = 64: pairs 0, 1, 8 and 31 by default, each the formula's sin column.
    assert at.multiselect(key="pe_pairs").value == [0, 1, 8, 31]
    np.testing.assert_allclose(chart_array(at, "pe_fig_dims", "y", trace=2)[:3],
                               np.sin(np.arange(3) / 10000 ** (16 / 64)), atol=1e-6)
    at.radio(key="pe_view").set_value("Wavelengths").run()
    np.testing.assert_allclose(chart_array(at, "pe_fig_wavelengths", "y"),
                               2 * np.pi * 10000 ** (np.arange(32) * 2 / 64), rtol=1e-6)
    at.radio(key="pe_similarity").set_value("Cosine").run()
    assert "pe_fig_cosine" in figures_shown(at)
    assert "pe_fig_similarity" not in figures_shown(at)
    np.testing.assert_allclose(np.diag(chart_array(at, "pe_fig_cosine")), 1.0, atol=1e-6)


def test_the_shuffle_follows_its_seed_not_d_model():
    def shuffled(**query):
        at = run(**query)
        return next(d.value for d in at.table if "shuffled" in d.value.index)
    first = shuffled()
    assert first.loc["shuffled"].tolist() == shuffled(pe_dmodel="16").loc["shuffled"].tolist()
    assert sorted(first.loc["shuffled"]) == sorted(first.loc["original"])


# ---- Sentences that state a result follow the numbers (defaults and an extreme) ----

def notes_text(at: AppTest) -> str:
    """Markdown, captions and the expanders' lists together."""
    return markdown(at) + " " + captions(at)


def cosine_by_hand(k: int, d: int, base: float) -> float:
    """cos(PE(0), PE(k)) from the two rows written out with math.sin and math.cos, a
    second route to attncore.positional.offset_cosine."""
    def row(p):
        out = []
        for i in range(d // 2):
            angle = p / base ** (2 * i / d)
            out += [math.sin(angle), math.cos(angle)]
        return np.array(out)
    a, b = row(0), row(k)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_base_100_sentence_says_far_positions_look_less_alike_at_the_defaults():
    at = run()
    text = notes_text(at)
    low, high = cosine_by_hand(32, 64, 100.0), cosine_by_hand(32, 64, 10000.0)
    assert round(low, 2) == 0.12 and round(high, 2) == 0.61  # the numbers
    assert (f"far positions look less alike: positions 32 apart have cosine {low:.4f} with "
            f"base 100 and {high:.4f} with base 10,000") in text
    assert "start to look alike" not in text


def test_base_100_sentence_follows_the_numbers_at_extremes():
    # d_model = 4, 127 positions: distance 63. Pair 0 turns by 1 either way; pair 1 by 0.1
    # (base 100) or 0.01 (base 10,000): (cos 63 + cos 6.3)/2 > (cos 63 + cos 0.63)/2, since
    # 6.3 is almost one full turn: far positions look MORE alike with base 100 here.
    at = run(pe_len="127", pe_dmodel="4")
    low, high = cosine_by_hand(63, 4, 100.0), cosine_by_hand(63, 4, 10000.0)
    assert low > high
    assert (f"far positions look more alike: positions 63 apart have cosine {low:.4f} with "
            f"base 100 and {high:.4f} with base 10,000") in notes_text(at)
    # d_model = 2: the only pair turns by b⁰ = 1, so the base changes nothing.
    at = run(pe_dmodel="2")
    assert "Set the base to 100 at d_model = 2: nothing changes" in notes_text(at)


def test_how_alike_neighbours_are_is_computed():
    at = run()
    text = notes_text(at)
    near = cosine_by_hand(1, 64, 10000.0)  # ≈ 0.9662, the largest of all distances here
    assert all(cosine_by_hand(k, 64, 10000.0) < near for k in range(2, 64))
    assert f"Neighbours (distance 1) have cosine {near:.4f}, and no two positions" in text
    assert "neighbours are the most alike" in text
    # d_model = 2: the cosine at distance k is cos k; 44 radians is 7.003 turns, so positions
    # 44 apart are more alike than neighbours (cos 1 = 0.5403).
    at = run(pe_dmodel="2")
    text = notes_text(at)
    best = max(range(1, 64), key=math.cos)
    assert best == 44
    assert (f"Neighbours (distance 1) have cosine {math.cos(1):.4f}, but positions 44 apart "
            f"are more alike still (cosine {math.cos(44):.4f})") in text
    assert "neighbours are the most alike" not in text


def test_how_fast_the_pairs_turn_is_said():
    at = run()
    # ω₃₁ = 10000^(−62/64) = 10^(−3.875) = 1.334×10⁻⁴.
    assert "pair 31 by 1.33×10⁻⁴" in markdown(at)
    assert "one pair, turning by ω₀ = b⁰ = 1" in markdown(run(pe_dmodel="2"))


@pytest.mark.parametrize("heads, listed, verdict", [
    # 8 heads: 2^(−h) for h = 1..8, ratio 1/2.
    ("8", "0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625",
     "a geometric sequence, each slope 0.5 = 2^(−8/8) times the one before"),
    # 16 heads: 2^(−h/2), ratio 2^(−1/2) = 0.7071.
    ("16", "0.7071, 0.5, 0.3536", "a geometric sequence, each slope 0.7071 = 2^(−8/16)"),
    # 6 heads: the 4-head slopes 2^(−2h), then 8-head slopes 2^(−1) and 2^(−3).
    ("6", "0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125",
     "not one geometric sequence. 6 is not a power of two, so heads 1 to 4 take the 4-head "
     "slopes 2^(−8h/4) and heads 5 and 6 every other slope of the 8-head sequence, from its "
     "first: 0.5, 0.125"),
    # 5 heads: the 4-head slopes, then the first 8-head slope 2^(−1).
    ("5", "0.25, 0.0625, 0.015625, 0.00390625, 0.5",
     "heads 1 to 4 take the 4-head slopes 2^(−8h/4) and head 5 every other slope"),
    # 1 head: 2^(−8/1).
    ("1", "0.00390625", "one head, one slope, 2^(−8)"),
])
def test_alibi_slopes_are_called_geometric_only_when_they_are(heads, listed, verdict):
    text = captions(run(pe_heads=heads))
    assert f"Slopes: {listed}" in text and verdict in text
    if heads in ("5", "6"):
        assert "a geometric sequence" not in text


def test_alibi_causal_and_symmetric_forms():
    # 8 heads, head 1: slope 2^(−8/8) = 0.5. Query 3, key 0: −0.5·3 = −1.5 in both forms;
    # query 3, key 5: masked in the causal form, −0.5·2 = −1 in the symmetric one.
    at = run()
    assert at.radio(key="pe_alibi_form").value == "Causal (the paper's)"
    z = chart_array(at, "pe_fig_alibi")
    assert z[3, 0] == -1.5 and np.isnan(z[3, 5]) and z[5, 5] == 0.0
    assert np.isnan(z[np.triu_indices(16, k=1)]).all()
    assert any("masked" in e.value for e in at.latex)
    at.radio(key="pe_alibi_form").set_value("Symmetric").run()
    z = chart_array(at, "pe_fig_alibi")
    assert z[3, 0] == -1.5 and z[3, 5] == -1.0
    np.testing.assert_array_equal(z, z.T)
    assert any("|i - j|" in e.value for e in at.latex)


def test_relative_clip_sentence_counts_the_clipped_pairs():
    # 16 positions, C = 4: pairs with |j − i| ≤ 4 are 16 + 2·(15 + 14 + 13 + 12) = 124,
    # so 256 − 124 = 132 are clipped.
    assert "here 132 of the 256 query–key pairs are farther apart than 4" in markdown(run())
    # C = 16: no two of 16 positions are more than 15 apart.
    assert "nothing is clipped" in markdown(run(pe_clip="16"))


def test_rope_formula_and_its_offset_only_claim_are_checked():
    at = run(pe_dmodel="512")
    assert any(r"q^\top R_{p'-p}" in e.value for e in at.latex)
    assert number_after(markdown(at), "every diagonal holds one value, up to rounding: "
                                      "the largest spread along a diagonal is") < 1e-12
    # θ_i = b^(−2i/d_k): RoPE rotates a head's queries and keys, d_k wide (16 here).
    assert any(r"\theta_i = b^{-2i/d_k}" in e.value for e in at.latex)
    assert "(d_k = 16, seed 1)" in markdown(at)


def test_presenter_mode_keeps_the_formulas_and_drops_the_long_text():
    at = run(presenter="true")
    assert not at.exception
    latex = " ".join(e.value for e in at.latex)
    assert r"R_{p'-p}" in latex and r"\mathrm{clip}" in latex and "m_h" in latex
    assert "GPT-2's table" not in markdown(at) and "Practice questions" not in [
        s.value for s in at.subheader]


def test_no_parenthesis_inside_a_parenthesis_around_rounding():
    # "(largest spread: 2.7×10⁻¹⁵ (rounding))" read as a typo; every such sentence is said
    # without the outer parentheses, in the text and in the figures' text alternatives.
    for query in ({}, {"pe_dmodel": "512"}, {"presenter": "true"}):
        at = run(**query)
        assert "(rounding))" not in notes_text(at), query


def test_the_length_of_pe_is_said_exactly_or_approximately_as_it_is():
    # d_model = 64: √32 = 5.6569 is not 5.66, so "≈"; d_model = 8: √4 = 2 exactly.
    text = markdown(run())
    assert "√(d_model / 2) = √32 ≈ 5.657" in text and "divided by 32" in text
    text = markdown(run(pe_dmodel="8"))
    assert "√(d_model / 2) = √4 = 2," in text and "divided by 4" in text


@pytest.mark.parametrize("length, step, words", [
    # 100 positions: 1 row in 2 drawn; pair 0 turns 2 radians between them, more than a
    # quarter turn (π/2 ≈ 1.571): speckle.
    ("100", 2, "which the drawn rows show as a turn of 2.00 radians, more than a quarter "
               "turn from row to row: its columns look speckled."),
    # 384 positions: 1 row in 6; 6 radians is 2π − 6 = 0.2832 short of a full turn, so the
    # drawn rows show a wave every 2π / 0.2832 = 22.19 rows that the encoding does not have.
    ("384", 6, "which the drawn rows show as a turn of 0.28 radians: its columns seem to "
               "wave once every 22.2 drawn rows, an artefact of drawing 1 row in 6"),
    # 448 positions: 1 row in 7; 7 − 2π = 0.7168, a wave every 8.77 rows.
    ("448", 7, "show as a turn of 0.72 radians: its columns seem to wave once every 8.8 "
               "drawn rows"),
])
def test_what_a_sampled_table_looks_like_is_computed(length, step, words):
    text = captions(run(pe_len=length))
    assert f"Pair 0 turns by {step} radians between drawn rows" in text
    assert words in text
    assert ("speckled" in text) == (step == 2)


def test_the_learned_table_length_is_not_written_l():
    # L is the number of layers (glossary); the table's length is T_max.
    at = run()
    assert any(r"T_{\max} \times d_{model}" in e.value for e in at.latex)
    assert "GPT-2's table has T_max = 1,024" in markdown(at)
    assert "L = " not in markdown(at)


def test_chosen_pairs_beyond_six_are_said_not_dropped_silently():
    at = run(pe_view="Chosen pairs")
    assert "are plotted" not in captions(at)  # 4 pairs by default, all drawn
    at.multiselect(key="pe_pairs").set_value([0, 1, 2, 3, 4, 5, 6, 31]).run()
    assert "8 pairs chosen: the first 6 are plotted (pairs 0, 1, 2, 3, 4, 5)" in captions(at)
    assert len(chart_spec(at, "pe_fig_dims")["data"]) == 6


def test_the_learned_table_says_when_it_draws_fewer_dimensions_than_d_model():
    assert "16 dimensions, not d_model = 64, to keep the figure small" in markdown(run())
    text = markdown(run(pe_dmodel="8"))
    assert "for 16 positions and 8 dimensions). " in text  # all of d_model = 8 drawn


def test_similarity_cells_do_not_round_an_off_diagonal_value_to_the_diagonals():
    # d_model = 2, 8 positions: PE(p)·PE(p′) = cos(p − p′); at distance 6 that is
    # cos 6 = 0.9602, which one decimal would print as the diagonal's 1.0.
    at = run(pe_len="8", pe_dmodel="2")
    cells = chart_spec(at, "pe_fig_similarity")["data"][0]["text"]
    assert cells[0][6] == f"{math.cos(6):.2f}" == "0.96" and cells[0][0] == "1.00"
