"""The home page's live example (AppTest)."""

from __future__ import annotations

import numpy as np
from conftest import open_page

from attncore import scaled_dot_product_attention
from attncore.text import worked_example


def test_the_row_sums_deviation_reads_exactly_zero_not_0e00():
    example = worked_example("textbook")
    weights = scaled_dot_product_attention(example.q, example.k, example.v).weights
    # The textbook rows sum to 1 exactly in float64 (checked here, independently of the
    # page): the page must say so in words, not "0.0e+00".
    assert np.max(np.abs(weights.sum(axis=1) - 1)) == 0
    text = " ".join(m.value for m in open_page("dashboard.py").markdown)
    assert "Each row sums to 1: the largest deviation here is exactly 0." in text
    assert "e+00" not in text
