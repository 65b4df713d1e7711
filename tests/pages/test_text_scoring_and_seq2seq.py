"""Lesson 6's sentences (pages/text/scoring_and_seq2seq.py) as plain functions of made-up
results: each branch chosen by the numbers given."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from attncore import seq2seq as s2s
from attncore.train.alignment import TrainedAlignment
from pages.text import scoring_and_seq2seq as text

Count = s2s.LexiconAlignment


def test_the_alignment_sentence_counts_and_says_why():
    assert text.alignment_text(Count(0, 0), "dot").startswith(
        "No target word here has its translation in the source")
    assert ("the one target word whose translation is in the source puts its largest weight "
            "on it") in text.alignment_text(Count(1, 1), "dot")
    assert "the one target word whose translation is in the source does not put its" in \
        text.alignment_text(Count(1, 0), "dot")
    assert "1 of the 3 target words whose translation is in the source puts its largest" in \
        text.alignment_text(Count(3, 1), "dot")
    assert "2 of the 3 target words whose translation is in the source put their largest" in \
        text.alignment_text(Count(3, 2), "dot")
    # Why: alike states for the dot score, chance for a random matrix (one, or several).
    assert "get alike states" in text.alignment_text(Count(3, 2), "dot")
    assert text.alignment_text(Count(3, 2), "general").startswith(
        "The general score's matrix W is random (untrained), so its alignment has learned "
        "nothing: over the whole sentence, 2 of the 3")
    assert text.alignment_text(Count(3, 2), "additive").startswith(
        "The additive score's matrices are random")
    assert text.alignment_text(Count(3, 2), "additive").endswith("by chance.")


def trained(kind: str, weights: np.ndarray) -> TrainedAlignment:
    # "the black dog" -> "le chien noir": French words 1 and 2 come from English 2 and 1.
    return TrainedAlignment(kind=kind, weights=weights, french=("le", "chien", "noir", "</s>"),
                            english=("the", "black", "dog", "</s>"), order=(0, 2, 1, 3),
                            accuracy=0.99, score=0.9, steps=100, seed=0, d_model=32)


def test_the_crossing_sentence_follows_which_moved_words_are_found():
    right = np.eye(4)[[0, 2, 1, 3]]
    both = {"additive": trained("additive", right), "general": trained("general", right)}
    said = text.crossing_text(both)
    assert said == ("In both, each moved word (*chien* → *dog*, *noir* → *black*) puts its "
                    "largest weight on its English word: the crossings emerged without any "
                    "alignment labels.")
    one = {"additive": trained("additive", right), "general": trained("general", np.eye(4))}
    assert text.crossing_text(one) == (
        "Moved words (*chien* → *dog*, *noir* → *black*) whose largest weight is on their "
        "English word: additive score: 2 of 2; general score: 0 of 2.")
    paragraph = text.trained_text(both)
    assert "seed 0, each for 100 [AdamW](./#glossary-adamw) steps" in paragraph
    assert "d = 32" in paragraph
    assert paragraph.endswith(said + " Lesson 8 trains it live.")
    unmoved = TrainedAlignment("additive", np.eye(2), ("le", "</s>"), ("the", "</s>"), (0, 1),
                               1.0, 1.0, 1, 0, 32)
    assert text.crossing_text({"additive": unmoved}) == ""


def test_the_gate_and_next_word_sentences_never_round_to_a_false_1():
    said = text.gate_text(np.array([0.25, 0.9999997]), 2)
    assert said.startswith("Entry i of s₂ moves the fraction zᵢ of the way from s₁ towards s̃₂")
    assert "the entries of z₂ run from 0.250 to 1 − 3.0×10⁻⁷." in said
    vocab = ["Le", "chat", "</s>"]
    probs = np.array([0.2, 0.7, 0.1])
    hit = text.next_word_text("Luong", probs, vocab, "chat", 2)
    assert hit == ("Luong's most probable word is “chat” (p = 0.700), which is target word 2: "
                   "by chance, since these parameters are random.")
    miss = text.next_word_text("Bahdanau", probs, vocab, "le", 1)  # case-insensitive: "Le"
    assert "not target word 1, “le” (p = 0.200): these parameters are random" in miss


def test_the_step_sentences_name_the_previous_word_or_the_start_mark():
    tgt = ["J'", "aime"]
    assert "y₀ is \\<s\\>, a start mark (this app's choice)" in text.bahdanau_text(tgt, 1)
    assert "y₁ is “J'”, the previous target word" in text.bahdanau_text(tgt, 2)
    # The GRU's state of the panel is not the toy state the other sections query with.
    assert ("This GRU's s₂ is computed for this panel only: the scores of sections 1, 2, "
            "4 and 5, Bahdanau's included, ask with the toy states (s₁ for Bahdanau's score "
            "at this step, s₂ in Luong's panel below)") in text.bahdanau_text(tgt, 2)
    assert "predict target word 2, “aime”" in text.next_word_intro(tgt, 2)
    assert text.luong_text(3).startswith("The state s₃ comes first (Luong et al. write h₃)")


def test_the_halves_of_luongs_product_are_their_lengths():
    # (3, 4) has length 5 and (0, 0.5) length 0.5, by hand.
    lu = SimpleNamespace(from_context=np.array([3.0, 4.0]), from_state=np.array([0.0, 0.5]))
    said = text.luong_halves_text(lu, 2)
    assert "turn c₂ into a vector of length 5.000" in said
    assert "turn s₂ into one of length 0.500" in said


def test_the_vocabulary_sentence_counts_the_words_and_the_end_mark():
    one = text.vocabulary_text(["chat", "</s>"])
    assert "the target's 1 distinct word (“chat”) and the end mark \\</s\\>: 2 in all" in one
    assert "1/2 = 0.500" in one
    three = text.vocabulary_text(["J'", "aime", "chats", "</s>"])
    assert "3 distinct words (“J'”, “aime”, “chats”)" in three and "1/4 = 0.250" in three


def local(weights, window, p_t: float, gaussian: bool = True) -> s2s.LocalAttention:
    weights = np.array(weights)
    return s2s.LocalAttention(p_t, np.array(window), np.ones(len(weights)) if gaussian else None,
                              weights, np.zeros(2))


def test_the_window_sentences_follow_the_window_and_the_sum():
    # Centre 1.00 (p_t = 0 counted from 0), D = 2: [-1.00, 3.00] covers 3 tokens.
    whole = local([0.5, 0.3, 0.1], [True, True, True], 0.0)
    assert text.window_note(whole, 2, 3) == (
        "The window [p_t − D, p_t + D] = [-1.00, 3.00] covers the whole source (3 tokens): "
        "local attention is global attention times the Gaussian.")
    # local-m has no Gaussian: over the whole source it is global attention itself
    plain = local([0.6, 0.3, 0.1], [True, True, True], 0.0, gaussian=False)
    assert text.window_note(plain, 2, 3).endswith("local attention is global attention.")
    part = local([0.5, 0.3, 0.0], [True, True, False], 0.0)
    assert text.window_note(part, 1, 3) == ""
    monotonic = text.local_text(plain, "monotonic", "chat", 1, 2)
    assert monotonic.startswith("Query: the decoder state of “chat”, step 1. Monotonic: p_t = t")
    assert "p_t = 1.00, a source position counted from 1" in monotonic
    assert monotonic.endswith("inside, they are the softmax of the scores over the window "
                              "alone (Luong et al.'s local-m), so they sum to 1; only the "
                              "predictive window adds a Gaussian.")
    assert "σ" not in monotonic
    # local-p: 0.5 + 0.3 + 0.1 = 0.9, shown as it is, not renormalised
    predictive = text.local_text(whole, "predictive", "chat", 1, 2)
    assert "Predictive: p_t = 1 + S·sigmoid" in predictive
    assert "centred on p_t with σ = D/2 = 1 (Luong et al.'s local-p), so the weights sum to " \
        "0.900 (Luong" in predictive
    one = text.local_text(local([1.0], [True], 0.0), "predictive", "chat", 1, 1)
    assert "σ = D/2 = 0.5" in one and "the weights sum to exactly 1 (Luong" in one


def test_the_local_formula_has_the_gaussian_for_the_predictive_window_only():
    assert "exp" not in text.local_formula("monotonic")
    assert text.local_formula("predictive").startswith(text.local_formula("monotonic"))
    assert r"2\sigma^2" in text.local_formula("predictive")


def test_the_soft_and_hard_sentences_follow_the_measured_gradient():
    src, h = ["I", "love", "cats"], np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    said = text.soft_and_hard_text(src, 2, 1, h[1].copy(), h, "dot", "qᵀk")
    assert "a blend of all 3 states" in said and "the argmax, “love”, and c is h_2" in said
    # The score is named, so that an argmax other than section 2's Bahdanau peak is explained.
    assert "here Luong's dot score qᵀk with q = sₜ and k = h_j, as in section 4, whatever " \
        "the Model picked in section 2" in said
    assert "Luong's scaled dot score" in text.soft_and_hard_text(src, 2, 1, h[1], h,
                                                                 "scaled_dot", "qᵀk / √d")
    assert "(largest difference exactly 0)" in said and "#glossary-hard)" in said
    still = text.hard_gradient_text(src, np.zeros(3))
    assert "The hard one does not move at all" in still
    flipped = text.hard_gradient_text(src, np.array([0.0, 1e5, 1e5]))
    assert "The hard one moves only where a nudge flips the choice (here at “love”, “cats”" in \
        flipped and "does not move at all" not in flipped
    assert flipped.endswith("sampling estimators such as REINFORCE instead.")


def test_the_model_sentence_names_which_state_asks_and_luongs_concat():
    assert text.model_text("Bahdanau", "dot").startswith(
        "**Bahdanau**: additive score, asked with the *previous* decoder state sₜ₋₁")
    assert text.model_text("Luong", "dot").startswith(
        "**Luong**: dot score, asked with the *current* decoder state sₜ")
    assert "“concat”" in text.model_text("Luong", "additive")
    assert "“concat”" not in text.model_text("Luong", "general")


def test_both_models_link_the_context_vector_before_the_figures_draw_it():
    link = "[context vector](./#glossary-context-vector) cₜ"
    for model in ("Bahdanau", "Luong"):
        assert link in text.model_text(model, "dot")


def test_bahdanaus_output_layer_is_not_written_g():
    # g is the gain of a norm (lessons 10 and 12): Bahdanau's output is named in words.
    items = " ".join(text.illustrative_items(maxout_pairs=4, d=16))
    assert "Their output layer is a deep output" in items
    assert "g(" not in items and "output g" not in items


def test_the_query_says_when_the_toy_built_the_answer_in():
    src = ["I", "love", "cats"]
    # "aime" reads as "love" through the lexicon: built in, and the dot weights follow it.
    said = text.query_text(src, ["J'", "aime"], 1, 16, 16, np.array([0.1, 0.8, 0.1]))
    assert ("built mostly from the embedding of its English translation in the source "
            "(“love”, read through a small lexicon)") in said
    assert "built to favour “love”, not taught to (here it puts 0.800 on “love”)" in said
    # The dot weights may still fall elsewhere: said so.
    said = text.query_text(src, ["J'", "aime"], 1, 16, 16, np.array([0.1, 0.2, 0.7]))
    assert "(here it still puts most weight on “cats”)" in said
    # "zzz" has no translation and is not in the source: nothing built in.
    said = text.query_text(src, ["zzz"], 0, 16, 16, np.array([0.3, 0.3, 0.4]))
    assert "which has no translation in the source here, so nothing is built in" in said
