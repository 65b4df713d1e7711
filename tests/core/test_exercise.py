"""Marking a student's hand computation, with answers typed from hand arithmetic."""

import numpy as np
import pytest

from attncore.attention import scaled_dot_product_attention
from attncore.exercise import check_work, stretch_key, tolerance_for
from attncore.masks import causal_mask
from attncore.text import worked_example

NAN = float("nan")

# The textbook example worked by hand to 2 decimals (r = 1/√2 = 0.70711, A = e^r = 2.02811,
# B = e^{2r} = 4.11325):
HAND = {
    # q_i · k_j
    "scores": [[1, 0, 1], [0, 1, 1], [1, 1, 2]],
    # / √2: 1 -> 0.71, 2 -> 1.41
    "scaled": [[0.71, 0, 0.71], [0, 0.71, 0.71], [0.71, 0.71, 1.41]],
    # rows 1-2: [A, 1, A] / (2A + 1) = [0.401, 0.198, 0.401]; row 3: [A, A, B] / (2A + B)
    # = [0.248, 0.248, 0.503]
    "weights": [[0.40, 0.20, 0.40], [0.20, 0.40, 0.40], [0.25, 0.25, 0.50]],
    # o_1 = 0.401 (v1 + v3) + 0.198 v2 = [4, 5, 6]; o_2 = 0.198 v1 + 0.401 (v2 + v3) = 4.610 + c;
    # o_3 = 0.248 (v1 + v2) + 0.503 v3 = 4.766 + c
    "output": [[4.00, 5.00, 6.00], [4.61, 5.61, 6.61], [4.77, 5.77, 6.77]],
}


@pytest.fixture
def textbook():
    ex = worked_example("textbook")
    return scaled_dot_product_attention(ex.q, ex.k, ex.v)


def answers(**changes):
    out = {key: np.array(value, dtype=float) for key, value in HAND.items()}
    out.update({key: np.array(value, dtype=float) for key, value in changes.items()})
    return out


def test_correct_hand_answers_are_all_marked_correct(textbook):
    result = check_work(textbook, answers(), decimals=2)
    assert result.first_wrong is None
    assert result.explanation == ""
    assert result.tolerance == 0.01
    assert result.n_attempted == 4 * 9
    for step in result.steps:
        assert step.correct.all() and step.n_wrong == 0


def test_tolerance_follows_the_decimals(textbook):
    assert tolerance_for(2) == 0.01 and tolerance_for(4) == pytest.approx(1e-4)
    # 0.40 is 0.0011 away from w_11 = 0.40111: right at 2 decimals, wrong at 4
    result = check_work(textbook, {"weights": HAND["weights"]}, decimals=4)
    assert result.first_wrong == "weights"
    # to 4 decimals by hand: [0.4011, 0.1978, 0.4011], [0.2483, 0.2483, 0.5035]
    four = [[0.4011, 0.1978, 0.4011], [0.1978, 0.4011, 0.4011], [0.2483, 0.2483, 0.5035]]
    assert check_work(textbook, {"weights": four}, decimals=4).first_wrong is None
    with pytest.raises(ValueError, match="decimals"):
        tolerance_for(13)


def test_causal_hand_answers_are_marked_correct():
    ex = worked_example("textbook")
    trace = scaled_dot_product_attention(ex.q, ex.k, ex.v, mask=causal_mask(3))
    # row 2 sees keys 1, 2 with scores [0, r]: [1, A] / (1 + A) = [0.330, 0.670];
    # o_2 = v1 + 0.670 × 3 = [3.01, 4.01, 5.01]
    weights = [[1, 0, 0], [0.33, 0.67, 0], [0.25, 0.25, 0.50]]
    output = [[1, 2, 3], [3.01, 4.01, 5.01], [4.77, 5.77, 6.77]]
    result = check_work(trace, {"weights": weights, "output": output})
    assert result.first_wrong is None
    assert result.n_attempted == 18


def test_a_wrong_cell_is_marked_and_its_step_named(textbook):
    weights = np.array(HAND["weights"])
    weights[0, 1] = 0.30
    result = check_work(textbook, answers(weights=weights))
    step = result.steps[2]
    assert step.key == "weights"
    assert not step.correct[0, 1]
    assert step.correct.sum() == 8 and step.n_wrong == 1
    assert result.first_wrong == "weights"
    assert "Step 3: softmax weights is the first step with a mistake" in result.explanation
    assert "Row 1, column 2: you wrote 0.3" in result.explanation
    # the row 0.40 + 0.30 + 0.40 = 1.10 does not sum to 1
    assert "row 1 sums to 1.1" in result.explanation


def test_later_wrong_step_is_named_when_earlier_ones_are_right(textbook):
    output = np.array(HAND["output"])
    output[2, 0] = 5.77
    result = check_work(textbook, answers(output=output))
    assert result.first_wrong == "output"
    assert [s.n_wrong for s in result.steps] == [0, 0, 0, 1]
    assert "Row 3, column 1" in result.explanation
    assert "O = W V" in result.explanation


def test_the_earliest_wrong_step_is_named(textbook):
    scores = np.array(HAND["scores"], dtype=float)
    scores[1, 1] = 2
    output = np.array(HAND["output"])
    output[0, 0] = 1
    result = check_work(textbook, answers(scores=scores, output=output))
    assert result.first_wrong == "scores"
    assert "Step 1" in result.explanation


def test_hint_softmax_of_unscaled_scores(textbook):
    # softmax of [1, 0, 1]: [e, 1, e] / (2e + 1) = [0.42, 0.16, 0.42];
    # of [1, 1, 2]: [e, e, e²] / (2e + e²) = [0.21, 0.21, 0.58]
    unscaled = [[0.42, 0.16, 0.42], [0.16, 0.42, 0.42], [0.21, 0.21, 0.58]]
    result = check_work(textbook, answers(weights=unscaled))
    assert result.first_wrong == "weights"
    assert "softmax to the unscaled scores" in result.explanation


def test_hint_column_softmax(textbook):
    # the scores are symmetric, so normalising columns gives the transpose of the weights
    by_column = np.array(HAND["weights"]).T
    result = check_work(textbook, answers(weights=by_column))
    assert result.first_wrong == "weights"
    assert "not each column" in result.explanation


# The raw scores [[1, 0, 1], [0, 1, 1], [1, 1, 2]] divided by d_k = 2.
HALVES = [[0.5, 0, 0.5], [0, 0.5, 0.5], [0.5, 0.5, 1.0]]


def test_hint_divided_by_dk(textbook):
    result = check_work(textbook, answers(scaled=HALVES))
    assert result.first_wrong == "scaled"
    assert "You divided by d_k = 2." in result.explanation
    assert "divides every score by √d_k = √2 ≈ 1.41421" in result.explanation


def test_hint_follows_scaling_switched_off():
    # Scaling off: step 2 is S itself, so a student who divides by d_k = 2 or by
    # √2 (1/√2 = 0.71, 2/√2 = 1.41) is told that nothing is divided, never "divide by √d_k".
    ex = worked_example("textbook")
    trace = scaled_dot_product_attention(ex.q, ex.k, ex.v, scale="none")
    for typed, divisor in [(HALVES, "d_k = 2"), (HAND["scaled"], "√d_k = √2")]:
        result = check_work(trace, {"scaled": typed})
        assert result.first_wrong == "scaled"
        assert f"You divided by {divisor}." in result.explanation
        assert "Scaling is switched off: step 2 leaves every score as it is" in result.explanation
        assert "divides every score" not in result.explanation
    assert check_work(trace, {"scaled": HAND["scores"]}).first_wrong is None


def test_hint_at_d_k_1_says_the_scores_stay_as_they_are():
    # d_k = 1: 1/√1 = 1, so scaling on or off gives S̃ = S; q = [2], k = [3] -> s = 6.
    trace = scaled_dot_product_attention([[2.0]], [[3.0]], [[1.0]])
    result = check_work(trace, {"scaled": [[3.0]]})
    assert "√d_k = √1 = 1, which leaves every score as it is" in result.explanation


def test_hint_names_the_temperature_tau():
    # τ = 0.5, textbook row 1: logits [2r, 0, 2r] = [1.414, 0, 1.414], e^1.414 = 4.113,
    # Z = 2·4.113 + 1 = 9.227 -> [0.446, 0.108, 0.446]. The τ = 1 weights (HAND, row 1
    # [0.40, 0.20, 0.40]) are what a student who forgot τ types.
    ex = worked_example("textbook")
    trace = scaled_dot_product_attention(ex.q, ex.k, ex.v, temperature=0.5)
    assert check_work(trace, {"weights": [[0.45, 0.11, 0.45]] + [[NAN] * 3] * 2}
                      ).first_wrong is None
    forgot = check_work(trace, {"weights": HAND["weights"]})
    assert "left out the temperature" in forgot.explanation
    assert "τ = 0.5" in forgot.explanation
    other = check_work(trace, {"weights": [[0.3, 0.3, 0.4]] + [[NAN] * 3] * 2})
    assert "exp(s̃_ij / τ)" in other.explanation and "τ = 0.5" in other.explanation
    for result in (forgot, other):  # T is the number of tokens in lesson 1, never τ
        assert "/ T" not in result.explanation and "T =" not in result.explanation


def test_hint_follows_the_causal_mask():
    ex = worked_example("textbook")
    trace = scaled_dot_product_attention(ex.q, ex.k, ex.v, mask=causal_mask(3))
    # Weights without the mask (HAND) where row 1 must be [1, 0, 0].
    result = check_work(trace, {"weights": HAND["weights"]})
    assert "left out the mask" in result.explanation
    # Step 2 asks for s̃ before the mask: s̃12 = (1×0 + 0×1)/√2 = 0, not a large negative.
    masked = check_work(trace, {"scaled": [[0.71, -1e9, NAN]] + [[NAN] * 3] * 2})
    assert "Row 1, column 2" in masked.explanation
    assert "The mask hides this key from this query" in masked.explanation
    assert "Leave a masked cell blank" in masked.explanation


def test_hint_not_scaled(textbook):
    result = check_work(textbook, answers(scaled=HAND["scores"]))
    assert result.first_wrong == "scaled"
    assert "not scaled the scores" in result.explanation


def test_hint_transposed_scores():
    # Q = [[1, 2], [0, 1]], K = [[1, 0], [2, 1]]:
    # q1·k1 = 1, q1·k2 = 1×2 + 2×1 = 4, q2·k1 = 0, q2·k2 = 0×2 + 1×1 = 1 -> [[1, 4], [0, 1]]
    trace = scaled_dot_product_attention([[1, 2], [0, 1]], [[1, 0], [2, 1]], [[1], [2]])
    right = check_work(trace, {"scores": [[1, 4], [0, 1]]})
    assert right.first_wrong is None
    swapped = check_work(trace, {"scores": [[1, 0], [4, 1]]})
    assert swapped.first_wrong == "scores"
    assert "k_i · q_j" in swapped.explanation


def test_blanks_are_not_marked(textbook):
    weights = np.full((3, 3), NAN)
    weights[0] = HAND["weights"][0]
    result = check_work(textbook, {"weights": weights})
    assert result.first_wrong is None
    assert result.n_attempted == 3
    step = result.steps[2]
    assert step.attempted.tolist() == [[True] * 3, [False] * 3, [False] * 3]
    assert step.correct.tolist() == step.attempted.tolist()
    assert [s.n_attempted for s in result.steps] == [0, 0, 3, 0]


def test_nothing_filled_is_nothing_marked(textbook):
    result = check_work(textbook, {})
    assert result.first_wrong is None and result.n_attempted == 0


def test_bad_answer_shape_and_batched_trace_raise(textbook):
    with pytest.raises(ValueError, match=r"Step 3: softmax weights must have shape \(3, 3\)"):
        check_work(textbook, {"weights": [[0.5, 0.5]]})
    q = np.ones((2, 3, 2))
    with pytest.raises(ValueError, match="unbatched"):
        check_work(scaled_dot_product_attention(q, q, q), {})


def test_stretch_key_textbook_by_hand():
    # Key 1 is k1 = [1, 0]: q1·k1 = 1, q2·k1 = 0, q3·k1 = 1.
    ex = worked_example("textbook")
    stretch = stretch_key(scaled_dot_product_attention(ex.q, ex.k, ex.v), 0)
    assert stretch.dots.tolist() == [1.0, 0.0, 1.0]
    assert stretch.change.tolist() == [1, 0, 1]
    # Under the causal mask query 1 sees only key 1: its weight stays 1.
    causal = stretch_key(scaled_dot_product_attention(ex.q, ex.k, ex.v, mask=causal_mask(3)), 0)
    assert causal.only_key.tolist() == [True, False, False]
    assert causal.change.tolist() == [0, 0, 1]
    # Key 3 is hidden from queries 1 and 2 under the causal mask.
    last = stretch_key(scaled_dot_product_attention(ex.q, ex.k, ex.v, mask=causal_mask(3)), 2)
    assert last.hidden.tolist() == [True, True, False]
    with pytest.raises(ValueError, match="key must lie in 0..2"):
        stretch_key(scaled_dot_product_attention(ex.q, ex.k, ex.v), 3)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("scale, tau, causal", [("sqrt_dk", 1.0, False), ("none", 0.3, True),
                                                ("sqrt_dk", 5.0, True)])
def test_stretch_key_agrees_with_attention_recomputed_on_the_longer_key(seed, scale, tau, causal):
    # The second method: multiply the key's row of K by 10 and run attention again.
    ex = worked_example("random", 5, 3, 2, seed)
    mask = causal_mask(5) if causal else None
    before = scaled_dot_product_attention(ex.q, ex.k, ex.v, scale=scale, temperature=tau,
                                          mask=mask)
    for key in range(5):
        k = ex.k.copy()
        k[key] *= 10
        after = scaled_dot_product_attention(ex.q, k, ex.v, scale=scale, temperature=tau,
                                             mask=mask)
        moved = after.weights[:, key] - before.weights[:, key]
        change = stretch_key(before, key).change
        assert np.all(moved[change > 0] > 0) and np.all(moved[change < 0] < 0)
        # Where nothing changes, the whole row of weights is the same.
        np.testing.assert_allclose(after.weights[change == 0], before.weights[change == 0],
                                   atol=1e-15)
