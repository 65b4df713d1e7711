"""The trained alignment lesson 6 shows (attncore.train.alignment.trained_alignment): its
labels, and which moved words it finds, counted by hand."""

import numpy as np

from attncore.train.alignment import DISPLAY, TrainedAlignment, trained_alignment


def made_up(weights: np.ndarray) -> TrainedAlignment:
    # "the black dog sees a red cat" -> "le chien noir voit un chat rouge": adjectives move
    # after their nouns, so French words 1, 2, 5 and 6 come from English words 2, 1, 6, 5.
    return TrainedAlignment(
        kind="additive", weights=weights,
        french=("le", "chien", "noir", "voit", "un", "chat", "rouge", "</s>"),
        english=("the", "black", "dog", "sees", "a", "red", "cat", "</s>"),
        order=(0, 2, 1, 3, 4, 6, 5), accuracy=1.0, score=1.0, steps=1, seed=0, d_model=32)


def test_the_moved_words_and_how_many_are_found():
    order = [0, 2, 1, 3, 4, 6, 5, 7]
    exact = made_up(np.eye(8)[order])  # every French word on its English word
    assert exact.moved == (1, 2, 5, 6) and exact.moved_found == 4
    diagonal = made_up(np.eye(8))  # every word on the same place: no crossing found
    assert diagonal.moved_found == 0


def test_a_short_training_gives_the_display_sentences_alignment():
    res = trained_alignment("general", steps=2)
    english = DISPLAY[0].split()
    assert res.english == (*english, "</s>") and len(res.french) == len(english) + 1
    assert res.order == (0, 2, 1, 3, 4, 6, 5) and res.moved == (1, 2, 5, 6)
    assert res.weights.shape == (8, 8) and (res.steps, res.seed, res.kind) == (2, 0, "general")
    np.testing.assert_allclose(res.weights.sum(axis=1), 1.0, atol=1e-5)  # float32 rows
