r"""What attention costs, counted rather than timed: multiply-adds, and the weights a
measurement may hold at once (:data:`MAX_WEIGHT_ELEMENTS`, checked by
:func:`check_cost_size`)."""

from __future__ import annotations

#: Largest H·n² (weights held at once) a measurement may ask for: 4 heads of 1024².
MAX_WEIGHT_ELEMENTS = 4 * 1024 * 1024

MIB = 2**20


def attention_multiply_adds(n: int, heads: int, d_k: int) -> int:
    r"""Multiply-adds of attention itself on n tokens: :math:`2 H n^2 d_k`.

    Per head, Q Kᵀ is an (n × d_k)(d_k × n) product and the weights times V an
    (n × n)(n × d_k) one: n²·d_k multiply-adds each. The softmax adds H·n² exponentials;
    the four projections are counted by :func:`projection_multiply_adds`.

    >>> attention_multiply_adds(512, 4, 64)  # 2 · 4 · 512² · 64
    134217728
    """
    return 2 * heads * n * n * d_k


def projection_multiply_adds(n: int, d_model: int) -> int:
    r"""Multiply-adds of an attention layer's four projections on n tokens:
    :math:`4 n d_{\text{model}}^2`.

    Q, K and V from the tokens' vectors and the output through W_O are each an
    (n × d_model)(d_model × d_model) product. Against attention's 2·n²·d_model (with
    H·d_k = d_model) they cost more while n < 2·d_model: on short sequences a layer's time
    grows nearly linearly in n.

    >>> projection_multiply_adds(512, 256)  # 4 · 512 · 256²
    134217728
    """
    return 4 * n * d_model * d_model


def check_cost_size(n: int, heads: int) -> None:
    """Refuse H·n² above :data:`MAX_WEIGHT_ELEMENTS` with a message that says the cap."""
    if heads * n * n > MAX_WEIGHT_ELEMENTS:
        raise ValueError(
            f"H·n² = {heads * n * n:,} weights exceeds the cap of {MAX_WEIGHT_ELEMENTS:,} "
            f"({MAX_WEIGHT_ELEMENTS * 8 / MIB:.0f} MiB); use fewer heads or a shorter n"
        )
