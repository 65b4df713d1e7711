"""pages.ui.live.keep: a section's latest results reach download buttons drawn earlier."""

import numpy as np

from pages.ui.live import keep


def test_an_array_of_the_same_shape_is_overwritten_in_place():
    results = {}
    keep(results, "rotation", np.eye(2))
    held = results["rotation"]  # what a download button drawn at the full run holds
    keep(results, "rotation", np.array([[0.0, -1.0], [1.0, 0.0]]))  # the section reran
    assert results["rotation"] is held
    np.testing.assert_array_equal(held, [[0.0, -1.0], [1.0, 0.0]])


def test_other_values_replace_the_entry_of_the_same_dict():
    results = {"pe": "kept"}
    keep(results, "rotation", np.eye(2))
    keep(results, "rotation", np.eye(3))  # a new shape cannot be written in place
    keep(results, "offset", 3)
    keep(results, "offset", 4)
    assert results["rotation"].shape == (3, 3) and results["offset"] == 4
    assert results["pe"] == "kept"
