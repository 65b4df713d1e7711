"""Lesson 0's table: a recurrent layer against a self-attention layer."""

from __future__ import annotations

import pytest

from attncore.recurrence import compare_layers


def test_the_counts_by_hand():
    c = compare_layers(16, 32)
    assert (c.rnn_steps, c.attention_steps) == (16, 1)
    assert (c.rnn_path, c.attention_path) == (15, 1)  # 15 updates from token 1 to token 16
    assert c.gru_multiply_adds == 6 * 16 * 32 * 32 == 98_304  # 3 gates × (input + state)
    assert c.attention_multiply_adds == 2 * 16 * 16 * 32 == 16_384  # QKᵀ and weights·V
    assert c.projection_multiply_adds == 4 * 16 * 32 * 32 == 65_536


def test_attention_overtakes_the_gru_when_n_passes_3d():
    # 2 n² d > 6 n d²  <=>  n > 3 d.
    at, past = compare_layers(96, 32), compare_layers(97, 32)
    assert at.attention_multiply_adds == at.gru_multiply_adds
    assert past.attention_multiply_adds > past.gru_multiply_adds


def test_one_token_has_no_path_to_cross():
    assert (compare_layers(1, 8).rnn_path, compare_layers(1, 8).attention_path) == (0, 0)


@pytest.mark.parametrize("n, d", [(0, 8), (8, 0), (2.5, 8)])
def test_bad_sizes_are_refused(n, d):
    with pytest.raises(ValueError):
        compare_layers(n, d)
