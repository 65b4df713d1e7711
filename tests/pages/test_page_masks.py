"""Interaction and bad-input tests for lesson 3, masks (AppTest, no browser)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from conftest import chart_array, chart_spec, open_page
from presenter_order import above_first_figure, not_allowed_above
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "3_Masks.py")


def run(**query) -> AppTest:
    return open_page(PAGE, **query)


def texts(at: AppTest, attr: str = "markdown") -> str:
    return " | ".join(e.value for e in getattr(at, attr))


def test_defaults_show_padding_and_causal_on_the_short_sentence():
    at = run()
    # Default: sentence 2 "A dog barked" padded to 6, mask padding+causal.
    y = chart_spec(at, "mk_fig_weights")["data"][0]["y"]
    # repeated tokens say which occurrence they are, never a number read as a position
    assert y == ["A", "dog", "barked", "&lt;pad&gt;", "&lt;pad&gt; (2nd)", "&lt;pad&gt; (3rd)"]
    w = chart_array(at, "mk_fig_weights")
    assert np.all(w[:, 3:] == 0)  # padding keys: exactly 0
    assert np.all(np.triu(w, 1) == 0)  # the future: exactly 0
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-6)  # float32 on the wire
    assert "the largest is exactly 0." in texts(at)


def test_fully_masked_row_shows_nan_uniform_and_our_policy():
    at = run()
    table = next(t.value for t in at.table if "attncore's policy" in t.value.index)
    assert set(table.loc["fill −∞, plain softmax"]) == {"NaN"}  # written as the text does
    assert set(table.loc["fill −1e9, plain softmax"]) == {f"{1 / 6:.4f}"}
    assert set(table.loc["attncore's policy"]) == {"0.0000"}


def test_the_padding_rows_answer_names_the_policy_that_gives_zero_rows():
    # Section 3's table: a plain −∞ softmax gives NaN, attncore's policy zeros; the answer
    # says zero rows only under that policy.
    at = run()
    table = next(t.value for t in at.table if "attncore's policy" in t.value.index)
    assert set(table.loc["fill −∞, plain softmax"]) == {"NaN"}
    assert set(table.loc["attncore's policy"]) == {"0.0000"}
    answer = next(m.value for m in at.markdown if "padding keys are hidden" in m.value)
    assert "zero rows in attncore, whose softmax gives a fully masked row zero weights" in answer
    assert "a plain −∞ softmax gives NaN, as section 3 shows" in answer


def test_custom_mask_that_masks_everything_is_flagged():
    at = run(mk_mask="custom")
    key = "mk_custom_6"
    at.session_state[key] = {"edited_rows": {i: {str(j + 1): False for j in range(6)}
                                             for i in range(6)},
                             "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception
    assert "Fully masked rows: 1 (A), 2 (dog), 3 (barked)" in texts(at, "warning")
    assert np.all(chart_array(at, "mk_fig_weights") == 0)


# The server's log stays clean: pandas' FutureWarnings (a None written into a bool
# column, a downcast of object columns) become errors here.
@pytest.mark.filterwarnings("error::FutureWarning")
def test_an_emptied_custom_cell_counts_as_not_ticked():
    # A browser's editor can send None for a cleared checkbox. Row 1 of the default
    # (causal) grid ticks only key 1; emptying that cell leaves row 1 with no key, so the
    # page flags that row and no other (rows 2 and 3 keep key 1 and themselves).
    at = run(mk_mask="custom")
    at.session_state["mk_custom_6"] = {"edited_rows": {0: {"1": None}}, "added_rows": [],
                                       "deleted_rows": []}
    at.run()
    assert not at.exception
    assert "Fully masked rows: 1 (A)" in texts(at, "warning")
    assert "Fully masked rows: 1 (A), 2" not in texts(at, "warning")


def test_leakage_shows_exact_zero_before_the_changed_token():
    at = run(mk_sentence="sentence 1")
    text = texts(at)
    assert "Changing token 6" in text and "is **exactly 0**" in text


def test_dropout_row_sums_differ_from_one():
    at = run()
    at.slider(key="mk_dropout").set_value(0.9).run()
    table = next(t.value for t in at.table if "after masking and dropout" in t.value.index)
    assert set(table.loc["after masking"]) == {"1.0000"}
    assert set(table.loc["after masking and dropout"]) != {"1.0000"}


@pytest.mark.parametrize("text, expect, where", [
    ("", "Type at least one sentence", "info"),
    ("     \n   ", "Type at least one sentence", "info"),
    ("one", None, None),
    (" ".join(["word"] * 300), "cut to 24", "warning"),
    ("a\nb\nc\nd\ne\nf", "Only the first 4 sentences", "warning"),
])
def test_bad_batches_give_messages(text, expect, where):
    at = run()
    at.text_area(key="mk_text").set_value(text).run()
    assert not at.exception
    if expect:
        assert expect in texts(at, where)


def test_html_in_a_sentence_is_shown_as_text():
    at = run()
    at.text_area(key="mk_text").set_value("<script>alert(1)</script> hi\nok").run()
    assert not at.exception
    batch = next(d.value for d in at.dataframe if "sentence 1" in d.value.index)
    assert "<" in batch.loc["sentence 1"].tolist()  # the tokenizer keeps "<" as a token
    y = chart_spec(at, "mk_fig_weights")["data"][0]["y"]
    assert all("<" not in label for label in y)  # escaped for Plotly: &lt;


def test_every_mask_kind_renders():
    at = run()
    for kind in ["padding", "causal", "padding+causal", "window", "custom", "none"]:
        at.selectbox(key="mk_mask").set_value(kind).run()
        assert not at.exception, kind
        w = chart_array(at, "mk_fig_weights")
        rows = w.sum(axis=1)
        assert np.all((np.abs(rows - 1) < 1e-6) | (rows == 0)), kind


def test_a_kept_sentence_or_row_that_is_no_longer_offered_moves_to_the_default():
    at = run(mk_sentence="sentence 3")
    at.selectbox(key="mk_block_row").set_value(5).run()  # row 6 of T = 6
    assert at.selectbox(key="mk_sentence").value == 2
    at.text_area(key="mk_text").set_value("one two\nthree").run()  # B = 2, T = 2
    assert not at.exception and not at.error
    assert at.selectbox(key="mk_sentence").value == 1  # the default: sentence 2
    assert at.selectbox(key="mk_block_row").value == 1  # the default: the last row, 2


def test_a_link_naming_a_sentence_that_is_not_there_opens_the_default():
    at = run(mk_sentence="sentence 9", mk_block_row="40: zebra")
    assert not at.exception
    assert at.selectbox(key="mk_sentence").value == 1
    assert at.selectbox(key="mk_block_row").value == 5
    assert "9" not in str(at.query_params.get("mk_sentence"))


@pytest.mark.parametrize("kind", ["padding", "padding+causal"])
def test_masking_padding_query_rows_zeroes_those_rows(kind):
    at = run(mk_mask=kind)  # sentence 2: "A dog barked" + 3 <pad>
    assert not at.toggle(key="mk_pad_queries").disabled
    before = chart_array(at, "mk_fig_weights")
    at.toggle(key="mk_pad_queries").set_value(True).run()
    after = chart_array(at, "mk_fig_weights")
    assert np.all(after[3:] == 0) and np.all(before[3:].sum(axis=1) > 0.99)
    np.testing.assert_array_equal(after[:3], before[:3])  # real queries: unchanged


@pytest.mark.parametrize("kind", ["causal", "window", "custom", "none"])
def test_the_padding_rows_switch_is_offered_only_where_it_acts(kind):
    at = run(mk_mask=kind, mk_pad_queries="true")  # a link may carry it switched on
    assert at.toggle(key="mk_pad_queries").disabled
    assert "acts with the padding masks only" in texts(at, "caption")
    off = run(mk_mask=kind)
    np.testing.assert_array_equal(chart_array(at, "mk_fig_weights"),
                                  chart_array(off, "mk_fig_weights"))


def test_positions_are_counted_from_one_and_symbols_have_one_meaning():
    at = run(mk_mask="window")
    batch = next(d.value for d in at.dataframe if "sentence 1" in d.value.index)
    assert list(batch.columns)[0] == "1"
    rows = at.selectbox(key="mk_block_row")
    assert rows.options[0] == "1: A" and rows.options[-1].startswith("6: ")
    # w is a weight (w_ij in the formula); the window's radius is r.
    assert at.slider(key="mk_window").label == "Window radius r"
    assert "|i − j| ≤ r" in texts(at, "caption")
    assert chart_spec(at, "mk_fig_masked")["layout"]["title"]["text"].startswith("Scores QKᵀ/√d_k")


def test_presenter_mode_shows_the_masks_right_below_the_controls():
    at = run(presenter="true")
    assert not_allowed_above(at) == []  # the goal, the controls, headings
    above = above_first_figure(at)
    assert not any("sentence 1" in d.value.index for d in at.dataframe)  # the batch table
    assert {"mk_text", "mk_sentence", "mk_mask", "mk_window", "mk_pad_queries"} <= {
        n.key for n in above if hasattr(n, "key")}
    normal = run()
    assert any("sentence 1" in d.value.index for d in normal.dataframe)


def test_the_window_radius_stops_where_every_key_is_seen():
    at = run(mk_mask="window", mk_window="20")  # sentence 2, T = 6: r = 5 sees every key
    slider = at.slider(key="mk_window")
    assert slider.max == 5 and slider.value == 1  # a linked radius beyond T − 1: the default
    assert "20" not in str(at.query_params.get("mk_window"))
    at.slider(key="mk_window").set_value(5).run()
    assert np.all(chart_array(at, "mk_fig_weights") > 0)  # no mask left: every weight > 0
    at.slider(key="mk_window").set_value(0).run()
    np.testing.assert_array_equal(chart_array(at, "mk_fig_weights"), np.eye(6))  # r = 0


# ---- Computed sentences: each follows the numbers at the defaults and at an
# extreme. The default view: sentence 2 "A dog barked" + 3 <pad>, T = 6, padding+causal.


def test_the_fully_masked_row_is_said_from_its_numbers():
    text = texts(run())
    # Row 6 masked completely: −∞ − (−∞) is NaN at every key; −1e9 leaves s − m = 0,
    # e⁰ = 1 at 6 keys, so 1/6 = 0.1667 each.
    assert ("each weight of the row is **NaN** (“not a number”) when −∞ fills the masked "
            "scores, **0.1667** when −1e9 does, and **exactly 0** under attncore's policy") in text
    assert "each s − m is NaN (−∞ − (−∞) is undefined)" in text
    assert "NaN / NaN = **NaN**" in text
    assert "the sum is 6.0000 and each weight is **0.1667**" in text
    # The 5 other rows keep a key; on them e^(−1e9 − m) underflows and the fills agree.
    assert "The rows that keep a key** (5 here)" in text
    assert "give the same weights, the largest difference being exactly 0" in text
    assert "underflow to exactly 0 in float64" in text


def test_one_token_has_no_other_row_and_no_earlier_position():
    at = run()
    at.text_area(key="mk_text").set_value("hello").run()  # T = 1
    text = texts(at)
    assert "each weight of the row is **NaN** (“not a number”) when −∞ fills the masked scores, " \
           "**1.0000**" in text
    assert "The rows that keep a key" not in text
    assert "this sentence has no earlier position to check" in text
    assert "the largest change at earlier positions" not in text


def test_the_dropout_sentence_counts_the_rows_its_table_shows():
    at = run()
    table = next(t.value for t in at.table if "after masking and dropout" in t.value.index)
    off = sum(v != "1.0000" for v in table.loc["after masking and dropout"])
    assert f"here {off} of the 6 rows that keep a key are off 1" in texts(at)
    assert at.slider(key="mk_dropout").label == "Attention dropout p_drop"
    at.slider(key="mk_dropout").set_value(0.0).run()
    assert "With p_drop = 0 nothing is dropped" in texts(at)
    assert "no longer 1" not in texts(at)


def test_a_real_query_sees_itself_and_the_real_tokens_before_it():
    notes = texts(run(), "markdown")
    assert "sees only earlier real tokens" not in notes
    assert "a real token's query sees itself and the real tokens before it" in notes


def test_the_window_says_it_is_symmetric_unlike_lesson_11s():
    captions = texts(run(mk_mask="window"), "caption")
    assert "symmetric, r on each side" in captions
    assert "sliding window" in captions and "causal instead: the W most recent" in captions


def pitfall(name: str, **query) -> AppTest:
    return run(mk_pitfall=name, **query)


def test_the_inverted_mask_hides_what_the_mask_allows():
    at = pitfall("inverted mask")
    # Allowed cells of padding+causal, by row: 1, 2, 3, then 3 for each <pad> row: 15 of 36.
    text = texts(at)
    assert "hides the 15 cells it allows and opens the 21 it hides" in text
    assert "The weight left on the keys the mask allows is exactly 0" in text
    wrong = chart_array(at, "mk_fig_pitfall_wrong")
    assert np.all(np.tril(wrong)[:3, :3] == 0)  # query i never sees keys j ≤ i any more
    # The mask "none" allows every cell; read inverted it hides them all.
    assert "no row keeps a key" in texts(pitfall("inverted mask", mk_mask="none"))


def test_the_off_by_one_causal_mask_hides_the_diagonal_and_empties_row_1():
    at = pitfall("off-by-one causal mask")
    text = texts(at)
    assert "are exactly 0. Row 1 (“A”) keeps no key" in text
    # Row 2 keeps key 1 only: its weight there is 1.
    assert "Query 2 (“dog”) can look only at token 1, with weight 1.0000" in text
    wrong = chart_array(at, "mk_fig_pitfall_wrong")
    assert np.all(np.diag(wrong) == 0) and wrong[1, 0] == 1.0
    at.text_area(key="mk_text").set_value("hello").run()  # T = 1: only row 1, empty
    assert "Row 1 (“hello”) keeps no key" in texts(at) and "Query 2" not in texts(at)


def test_the_softmax_over_queries_is_said_from_its_sums():
    at = pitfall("softmax over the wrong axis")
    wrong = chart_array(at, "mk_fig_pitfall_wrong")  # float32 on the wire
    np.testing.assert_allclose(wrong.sum(axis=0), [1, 1, 1, 0, 0, 0], atol=1e-6)
    rows = wrong.sum(axis=1)
    text = texts(at)
    assert "each of the 3 columns that keep a query sums to 1" in text
    low, high = re.search(r"sum to anything from (\d\.\d{4}) to (\d\.\d{4}) instead of 1",
                          text).groups()
    assert abs(float(low) - rows.min()) < 1e-4 and abs(float(high) - rows.max()) < 1e-4
    at.text_area(key="mk_text").set_value("hello").run()
    assert "(one token: its row is its column), so the mistake does not show" in texts(at)


def test_minus_1e9_in_float16_is_minus_infinity():
    at = pitfall("−1e9 in float16")
    table = next(t.value for t in at.table if "the fill, as stored" in t.value.columns)
    assert table.loc["float16, fill −1e9", "largest finite number"] == "65,504"
    assert table.loc["float16, fill −1e9", "the fill, as stored"] == "−∞"
    assert table.loc["float32, fill −1e9", "the fill, as stored"] == "−1.000×10⁹"
    assert table.loc["float16, fill −1e9", "row 6, fully masked: each weight"] == "NaN"
    assert table.loc["float64, fill −1e9", "row 6, fully masked: each weight"] == "0.1667"
    assert "so −1e9 is stored as −∞" in texts(at)
    assert "gets **NaN** as with −∞ in section 3; in float64 it gets 0.1667" in texts(at)


def test_an_empty_custom_mask_leaves_the_wrong_axis_nothing_to_normalise():
    at = pitfall("softmax over the wrong axis", mk_mask="custom")
    at.session_state["mk_custom_6"] = {"edited_rows": {i: {str(j + 1): False for j in range(6)}
                                                       for i in range(6)},
                                       "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception
    assert "nothing to normalise" in texts(at, "info")


def test_presenter_mode_shows_the_pitfalls_briefly():
    at = pitfall("inverted mask", presenter="true")
    text = texts(at)
    assert "nn.MultiheadAttention" not in text  # the conventions in words: off the projector
    assert chart_spec(at, "mk_fig_pitfall_wrong")
    assert "hides the 15 cells it allows" in text


def test_rows_already_fully_masked_are_not_counted_as_keeping_a_key():
    # Padding query rows masked: rows 4–6 are empty already, row 6 is the one blocked, so
    # rows 1–3 are the ones that keep a key.
    at = run(mk_pad_queries="true")
    assert "The rows that keep a key** (3 here)" in texts(at)


def test_in_float16_the_two_fills_do_not_differ_even_on_the_fully_masked_row():
    # float16's largest finite number is 65,504 < 1e9, so −1e9 is stored as −∞: row 6 is
    # then −∞ everywhere, and −∞ − (−∞) = NaN as with the −∞ fill. On the 5 rows that keep
    # a key e^(−1e9 − m) is exactly 0 in float64, so the fills differ only on row 6.
    text = texts(run())
    assert "The two fills differ only on a fully masked row. In float16, which cannot hold " \
           "−1e9, they do not differ even there: −1e9 is stored as −∞ and row 6 " \
           "(“\\<pad\\>”) gets NaN" in text
    assert "differ on a fully masked row, and in float16" not in text  # the old, false claim
    # Extreme: no mask at all. The fills never enter the other rows; row 6 is still NaN.
    text = texts(run(mk_mask="none", mk_block_row="1: A"))
    assert "(No key of theirs is masked, so the fill never enters.) The two fills differ " \
           "only on a fully masked row." in text
    assert "row 1 (“A”) gets NaN" in text


def test_the_conventions_of_the_libraries_are_said_exactly():
    text = texts(run(mk_pitfall="inverted mask"))
    # PyTorch: masked_fill writes where the mask is True; nn.MultiheadAttention's boolean
    # attn_mask and key_padding_mask: True = not allowed; F.scaled_dot_product_attention's
    # boolean attn_mask: True = takes part. Hugging Face's attention_mask: 1 = real token.
    assert 's.masked_fill(mask, float("-inf"))' in text
    assert "`attn_mask` or `key_padding_mask` as True = *not allowed to attend*" in text
    assert "`F.scaled_dot_product_attention` reads a boolean `attn_mask` as True = *may " \
           "attend*" in text
    assert "`attention_mask` marks real tokens with 1 and padding with 0" in text
    text = texts(run(mk_pitfall="−1e9 in float16"))
    assert "NumPy, as here, stores it as −∞" in text
    assert "value cannot be converted to type at::Half without overflow" in text


def test_dropout_with_no_row_keeping_a_key_says_so():
    at = run(mk_mask="custom")
    at.session_state["mk_custom_6"] = {"edited_rows": {i: {str(j + 1): False for j in range(6)}
                                                       for i in range(6)},
                                       "added_rows": [], "deleted_rows": []}
    at.run()
    text = texts(at)
    assert "Dropout zeroes each weight with probability p_drop" in text
    assert "here no row keeps a key." in text and "of the 0 rows" not in text


def test_a_link_with_an_unknown_setting_and_no_sentence_still_gets_its_note():
    # A blank sentence box leaves the lesson with nothing to build; the note about the
    # link's unknown setting is given all the same, first, in its slot near the top. The
    # blank box itself was taken from the link, so it is not named.
    at = run(zz_nonsense="1", mk_text="   ")
    infos = [i.value for i in at.info]
    assert infos[0] == ("This link has settings this page does not know or could not use: "
                        "zz\\_nonsense=1. They were ignored: the page opened with its defaults "
                        "for them.")
    assert "Type at least one sentence (one per line) to build a batch." in infos[1:]
    assert not at.error and not at.exception
