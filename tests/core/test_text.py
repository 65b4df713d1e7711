"""Tokens, padding, toy embeddings, presets and the checking of edited matrices."""

import math

import numpy as np
import pytest

from attncore.attention import scaled_dot_product_attention
from attncore.text import (
    MAX_TOKENS,
    PAD,
    PRESETS,
    check_matrix,
    pad_batch,
    parse_number,
    tokenize,
    toy_embeddings,
    worked_example,
)


@pytest.mark.parametrize("sentence, tokens", [
    ("The cat sat.", ["The", "cat", "sat", "."]),
    ("The cat sat on the mat", ["The", "cat", "sat", "on", "the", "mat"]),
    # A French elision is its own token, apostrophe included; the word it leans on follows.
    ("J'aime les chats", ["J'", "aime", "les", "chats"]),
    ("qu'il voit l’homme", ["qu'", "il", "voit", "l’", "homme"]),
    # Inner apostrophes and hyphens keep a word whole, as a student reads it.
    ("I'm sure it's Jean-Luc's", ["I'm", "sure", "it's", "Jean-Luc's"]),
    ("a state-of-the-art car, aujourd'hui", ["a", "state-of-the-art", "car", ",",
                                             "aujourd'hui"]),
    # Apostrophes and hyphens that join nothing stay single marks.
    ("'quoted' - well-", ["'", "quoted", "'", "-", "well", "-"]),
    ("don't--stop", ["don't", "-", "-", "stop"]),
    ("  spaces   between  ", ["spaces", "between"]),
    ("Hello, world!?", ["Hello", ",", "world", "!", "?"]),
    ("<script>alert(1)</script>", ["<", "script", ">", "alert", "(", "1", ")", "<", "/",
                                   "script", ">"]),
    ("café déjà", ["café", "déjà"]),
    ("", []),
    ("   ", []),
])
def test_tokenize_examples(sentence, tokens):
    assert tokenize(sentence) == tokens


def test_tokenize_loses_no_character_but_spaces():
    # An identity: the tokens joined again give the sentence without its white space.
    sentence = "J'aime l'été, don't-stop: qu'  y a-t-il? '-' <b>x</b>"
    assert "".join(tokenize(sentence)) == "".join(sentence.split())


def test_tokenize_refuses_non_text():
    with pytest.raises(ValueError, match="sentence must be text; got int"):
        tokenize(3)


def test_pad_batch_pads_to_the_longest():
    tokens, lengths = pad_batch(["I love cats", "Hello", "The cat sat on it"])
    assert tokens == [
        ["I", "love", "cats", PAD, PAD],
        ["Hello", PAD, PAD, PAD, PAD],
        ["The", "cat", "sat", "on", "it"],
    ]
    assert PAD == "<pad>"
    assert lengths.tolist() == [3, 1, 5]
    assert np.issubdtype(lengths.dtype, np.integer)


def test_pad_batch_keeps_empty_sentences_as_all_padding():
    tokens, lengths = pad_batch(["a b", ""])
    assert tokens == [["a", "b"], [PAD, PAD]]
    assert lengths.tolist() == [2, 0]


def test_pad_batch_custom_pad():
    tokens, _ = pad_batch(["a b", "c"], pad="_")
    assert tokens == [["a", "b"], ["c", "_"]]


@pytest.mark.parametrize("batch, word", [([], "empty"), (["", "  "], "every sentence is empty")])
def test_pad_batch_errors(batch, word):
    with pytest.raises(ValueError, match=word):
        pad_batch(batch)


def test_toy_embeddings_are_deterministic_and_per_word():
    tokens = ["The", "cat", "sat", "on", "the", "mat", "cat"]
    x = toy_embeddings(tokens, 4)
    assert x.shape == (7, 4) and x.dtype == np.float64
    np.testing.assert_array_equal(x, toy_embeddings(tokens, 4))
    np.testing.assert_array_equal(x[0], x[4])  # "The" and "the": case-insensitive
    np.testing.assert_array_equal(x[1], x[6])  # "cat" twice
    np.testing.assert_array_equal(toy_embeddings(["CAT"], 4)[0], x[1])
    # a word's vector does not depend on its neighbours or position
    np.testing.assert_array_equal(toy_embeddings(["mat"], 4)[0], x[5])
    # distinct words get distinct vectors
    assert len({tuple(row) for row in x}) == 5


def test_toy_embeddings_rounding_and_seed():
    rounded = toy_embeddings(["cat", "dog"], 6)
    exact = toy_embeddings(["cat", "dog"], 6, decimals=None)
    # one decimal: 10 x is a whole number, and rounding moves each entry by at most 0.05
    np.testing.assert_allclose(rounded * 10, np.round(rounded * 10), atol=1e-9)
    assert (np.abs(rounded - exact) <= 0.05 + 1e-12).all()
    assert not np.array_equal(exact, np.round(exact, 1))
    assert not np.array_equal(toy_embeddings(["cat"], 6, seed=1), toy_embeddings(["cat"], 6))


def test_toy_embeddings_bad_size():
    with pytest.raises(ValueError, match="d_model must be >= 1"):
        toy_embeddings(["cat"], 0)


def test_textbook_preset():
    ex = worked_example("textbook", n_tokens=5, d_k=4)  # sizes are ignored
    assert ex.tokens == ("x1", "x2", "x3")
    assert ex.q.tolist() == [[1, 0], [0, 1], [1, 1]]
    assert ex.k.tolist() == [[1, 0], [0, 1], [1, 1]]
    assert ex.v.tolist() == [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert ex.x is None and ex.w_q is None


def test_cat_preset_projects_the_embeddings():
    ex = worked_example("cat", n_tokens=6, d_k=2, d_v=3, seed=1)
    assert ex.tokens == ("The", "cat", "sat", "on", "the", "mat")
    d_model = ex.x.shape[1]
    assert ex.w_q.shape == (d_model, 2) and ex.w_k.shape == (d_model, 2)
    assert ex.w_v.shape == (d_model, 3)
    np.testing.assert_array_equal(ex.x, toy_embeddings(ex.tokens, d_model, seed=1))
    for proj, w in ((ex.q, ex.w_q), (ex.k, ex.w_k), (ex.v, ex.w_v)):
        # Q[i, c] = Σ_m X[i, m] W[m, c]
        expected = [[sum(ex.x[i, m] * w[m, c] for m in range(d_model)) for c in range(w.shape[1])]
                    for i in range(6)]
        np.testing.assert_allclose(proj, expected, rtol=1e-13, atol=1e-15)
    # "The" and "the" share an embedding, hence a query
    np.testing.assert_array_equal(ex.q[0], ex.q[4])


def test_cat_preset_repeats_the_sentence_for_more_tokens():
    ex = worked_example("cat", n_tokens=8)
    assert ex.tokens == ("The", "cat", "sat", "on", "the", "mat", "The", "cat")


def test_uniform_preset_has_zero_queries_and_uniform_weights():
    ex = worked_example("uniform", n_tokens=4, d_k=3, d_v=2)
    assert (ex.q == 0).all() and ex.k.shape == (4, 3) and ex.v.shape == (4, 2)
    # every score 0 -> every weight e^0 / (4 e^0) = 1/4
    weights = scaled_dot_product_attention(ex.q, ex.k, ex.v).weights
    assert (weights == 0.25).all()


def test_random_preset_is_seeded():
    a = worked_example("random", n_tokens=4, d_k=2, d_v=3, seed=7)
    b = worked_example("random", n_tokens=4, d_k=2, d_v=3, seed=7)
    c = worked_example("random", n_tokens=4, d_k=2, d_v=3, seed=8)
    for m in ("q", "k", "v"):
        np.testing.assert_array_equal(getattr(a, m), getattr(b, m))
    assert not np.array_equal(a.q, c.q)
    assert a.q.shape == (4, 2) and a.v.shape == (4, 3)
    assert a.tokens == ("x1", "x2", "x3", "x4")


def test_every_listed_preset_builds():
    for name in PRESETS:
        ex = worked_example(name)
        assert ex.q.shape[0] == ex.k.shape[0] == ex.v.shape[0] == len(ex.tokens)
        assert np.isfinite(ex.q).all() and np.isfinite(ex.k).all() and np.isfinite(ex.v).all()


@pytest.mark.parametrize("kwargs, word", [
    ({"preset": "nope"}, "unknown preset 'nope'"),
    ({"preset": "random", "n_tokens": 0}, "n_tokens must lie in 1..64"),
    ({"preset": "random", "n_tokens": MAX_TOKENS + 1}, "n_tokens"),
    ({"preset": "random", "d_k": 0}, "d_k"),
    ({"preset": "random", "d_v": 513}, "d_v"),
])
def test_worked_example_errors(kwargs, word):
    with pytest.raises(ValueError, match=word):
        worked_example(**kwargs)


def test_check_matrix_accepts_numbers_and_numeric_text():
    out = check_matrix([[1, "2.5"], [" -3 ", 4.0]], "Q", (2, 2))
    assert out.dtype == np.float64
    assert out.tolist() == [[1.0, 2.5], [-3.0, 4.0]]


@pytest.mark.parametrize("cell, message", [
    (None, "Q row 2, column 3 is empty; type a number"),
    ("", "Q row 2, column 3 is empty; type a number"),
    ("  ", "Q row 2, column 3 is empty; type a number"),
    (math.nan, r"Q row 2, column 3 is empty or not a number \(NaN\)"),
    ("abc", "Q row 2, column 3 is not a number: 'abc'"),
    (math.inf, "Q row 2, column 3 is infinite"),
    (-math.inf, "Q row 2, column 3 is infinite"),
    ("1e999", "Q row 2, column 3 is infinite"),
])
def test_check_matrix_names_the_bad_cell(cell, message):
    values = [[1.0, 2.0, 3.0], [4.0, 5.0, cell]]
    with pytest.raises(ValueError, match=message):
        check_matrix(values, "Q", (2, 3))


def test_check_matrix_names_the_first_bad_cell():
    with pytest.raises(ValueError, match="V row 1, column 2"):
        check_matrix([[1.0, "x"], [None, 2.0]], "V", (2, 2))


@pytest.mark.parametrize("values", [[[1.0, 2.0]], [1.0, 2.0], [[1.0], [2.0, 3.0]]])
def test_check_matrix_wrong_shape(values):
    with pytest.raises(ValueError, match=r"K must have shape \(2, 2\)"):
        check_matrix(values, "K", (2, 2))


@pytest.mark.parametrize("typed, number", [
    ("1e300", 1e300), ("1E-3", 0.001), (" \u22122.5 ", -2.5), (".5", 0.5), ("5.", 5.0),
    ("+7", 7.0), (3, 3.0),
])
def test_parse_number_reads_what_was_typed(typed, number):
    assert parse_number(typed, "Q row 1, column 1") == number


@pytest.mark.parametrize("typed, message", [
    ("1_000", "not a number: '1_000'"), ("1,5", "not a number: '1,5'"),
    ("nan", "not a number: 'nan'"), ("infinity", "not a number"), ("1e400", "infinite"),
    ("", "empty"), (None, "empty"), (True, "empty"),
])
def test_parse_number_flags_what_it_cannot_read(typed, message):
    with pytest.raises(ValueError, match=f"Q row 1, column 1 is {message}"):
        parse_number(typed, "Q row 1, column 1")
