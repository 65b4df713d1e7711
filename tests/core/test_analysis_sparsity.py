"""Sparsity relative to the uniform weight: a uniform row is never sparse."""
import numpy as np
import pytest

from attncore import analysis


@pytest.mark.parametrize("T", [2, 4, 10, 11, 50])
def test_uniform_row_scores_zero_at_every_length(T):
    # Every key gets 1/T, not below 1/(2T): no key counts. (At T = 11 an absolute 0.1
    # would count all eleven, since 1/11 < 0.1.)
    assert analysis.sparsity(np.full((T, T), 1.0 / T)).tolist() == [0.0] * T


@pytest.mark.parametrize("T", [2, 5, 11])
def test_one_hot_row_scores_all_but_one_key(T):
    assert analysis.sparsity(np.eye(T)).tolist() == pytest.approx([(T - 1) / T] * T)


def test_threshold_is_half_the_uniform_weight():
    # T = 4: threshold 0.5/4 = 0.125. Row [0.12, 0.13, 0.25, 0.5]: only 0.12 is below, 1/4.
    row = np.array([[0.12, 0.13, 0.25, 0.5]])
    assert analysis.sparsity(row).tolist() == [0.25]
    # fraction = 1: threshold 1/4 = 0.25; 0.12 and 0.13 below, 2/4.
    assert analysis.sparsity(row, fraction=1.0).tolist() == [0.5]


def test_head_statistics_names_the_relative_threshold():
    stats = analysis.head_statistics(np.full((2, 11, 11), 1.0 / 11))
    assert stats["sparsity (< 1/(2T))"].tolist() == [0.0, 0.0]
