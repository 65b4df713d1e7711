"""Boolean attention masks. **True means "may attend"**; rows are queries, columns keys.

What is here: :func:`causal_mask`, :func:`padding_mask`, :func:`window_mask`,
:func:`sliding_window_mask` (a causal window with attention sinks, lesson 11),
:func:`combine_masks`, and :func:`leakage_test`, lesson 3's proof that a causal mask lets
no information flow from later tokens.

Every mask broadcasts to ``(..., Tq, Tk)`` and can be passed as ``mask=`` to
:func:`attncore.attention.scaled_dot_product_attention` or :func:`attncore.softmax.softmax`.

**Positions when Tq ≠ Tk.** The queries are the *last* Tq of the Tk positions (aligned
bottom-right, as PyTorch's ``causal_lower_right``): query i sits at position
i + (Tk − Tq), as when a decoder extends a cached sequence. :func:`query_positions` says
this once; the causal mask, the window mask and
:func:`attncore.positional.relative_positions` all use it, so combining them places
every query at one position.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import as_bool_mask, as_real_array, whole_number
from .attention import scaled_dot_product_attention


def query_positions(t_q: int, t_k: int | None = None) -> np.ndarray:
    """Position of each query among the Tk key positions: i + (Tk − Tq), shape (Tq,).

    For Tq = Tk this is 0..T−1. Tk < Tq is refused: some queries would sit before the
    first key.
    """
    t_q = whole_number(t_q, "t_q", 1)
    t_k = t_q if t_k is None else whole_number(t_k, "t_k", 1)
    if t_k < t_q:
        raise ValueError(
            f"the queries are the last Tq of the Tk positions, so Tk >= Tq; got Tq = {t_q}, "
            f"Tk = {t_k}"
        )
    return np.arange(t_q) + (t_k - t_q)


def _offsets(t_q: int, t_k: int | None) -> np.ndarray:
    """Key position minus query position, j − pos(i), shape (Tq, Tk)."""
    pos = query_positions(t_q, t_k)
    t_k = pos.size if t_k is None else t_k
    return np.arange(t_k)[None, :] - pos[:, None]


def causal_mask(t_q: int, t_k: int | None = None) -> np.ndarray:
    """Causal (look-ahead) mask: query i may attend to keys j <= i.

    Parameters
    ----------
    t_q : int
        Number of queries Tq.
    t_k : int, optional
        Number of keys Tk >= Tq (default Tq); query i sits at position i + (Tk − Tq)
        (see :func:`query_positions`).

    Returns
    -------
    ndarray of bool (Tq, Tk)
        Lower triangular for Tq = Tk.
    """
    return _offsets(t_q, t_k) <= 0


def padding_mask(lengths, t: int, *, queries: bool = False) -> np.ndarray:
    """Padding mask for a batch whose sentence b has ``lengths[b]`` real tokens.

    Parameters
    ----------
    lengths : sequence of int (B,)
        Real (non-padding) tokens per sentence, each from 0 to ``t``.
    t : int
        Padded length T.
    queries : bool
        False: only padding *keys* are masked; shape (B, 1, T), broadcasting
        over queries (padding queries still attend to the real tokens).
        True: padding *queries* are masked as well, so their rows are fully masked
        and get all-zero weights by the softmax policy; shape (B, T, T).

    Returns
    -------
    ndarray of bool
    """
    t = whole_number(t, "t", 1)
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or lengths.size == 0 or not np.issubdtype(lengths.dtype, np.integer):
        raise ValueError(f"lengths must be a 1-D list of whole numbers; got {lengths!r}")
    if np.any(lengths < 0) or np.any(lengths > t):
        raise ValueError(f"every length must lie in 0..{t}; got {lengths.tolist()}")
    real = np.arange(t)[None, :] < lengths[:, None]  # (B, T)
    if not queries:
        return real[:, None, :]  # (B, 1, T)
    return real[:, :, None] & real[:, None, :]  # (B, T, T)


def window_mask(t_q: int, width: int, t_k: int | None = None) -> np.ndarray:
    """Local window: the query at position p may attend to keys j with |j − p| <= width.

    Parameters
    ----------
    t_q : int
    width : int
        0 or more; 0 lets each query see only its own position.
    t_k : int, optional
        Tk >= Tq (default Tq); query i sits at position i + (Tk − Tq)
        (see :func:`query_positions`).

    Returns
    -------
    ndarray of bool (Tq, Tk)
        A band of ``2 * width + 1`` diagonals (clipped at the edges).
    """
    width = whole_number(width, "width", 0)
    return np.abs(_offsets(t_q, t_k)) <= width


def sliding_window_mask(t_q: int, window: int, t_k: int | None = None, sinks: int = 0
                        ) -> np.ndarray:
    """Causal sliding window with attention sinks (StreamingLLM): the query at position p
    may attend to the ``window`` most recent positions p − W + 1 .. p, and to the first
    ``sinks`` positions 0 .. S − 1 (never to a later one).

    Parameters
    ----------
    t_q : int
    window : int
        W >= 1: each query sees itself and the W − 1 positions before it.
    t_k : int, optional
        Tk >= Tq (default Tq); query i sits at position i + (Tk − Tq)
        (see :func:`query_positions`).
    sinks : int
        S >= 0 first positions kept visible to every later query.

    Returns
    -------
    ndarray of bool (Tq, Tk)
        Lower triangular; with W >= Tk and any S, the causal mask.
    """
    window = whole_number(window, "window", 1)
    sinks = whole_number(sinks, "sinks", 0)
    offsets = _offsets(t_q, t_k)  # j − pos(i)
    is_sink = np.arange(offsets.shape[1])[None, :] < sinks
    return (offsets <= 0) & ((offsets > -window) | is_sink)


def combine_masks(*masks) -> np.ndarray:
    """Logical AND of masks (broadcast): a key is allowed only if every mask allows it."""
    if not masks:
        raise ValueError("combine_masks needs at least one mask")
    arrays = [as_bool_mask(m, f"mask {i + 1}") for i, m in enumerate(masks)]
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError as exc:
        shapes = ", ".join(str(a.shape) for a in arrays)
        raise ValueError(f"masks of shapes {shapes} do not broadcast together") from exc
    out = np.ones(shape, dtype=bool)
    for a in arrays:
        out &= a
    return out


@dataclass(frozen=True)
class LeakageTest:
    """Outputs before and after changing one token, with and without a mask.

    Attributes
    ----------
    position : int
        The token that was changed.
    diff_masked, diff_unmasked : ndarray (T,)
        max |Δ output| per position under the mask and without it.
    """

    position: int
    diff_masked: np.ndarray
    diff_unmasked: np.ndarray


def leakage_test(x, x_changed, w_q, w_k, w_v, mask) -> LeakageTest:
    """Self-attention outputs of ``x`` and ``x_changed`` (which differ in one row).

    Under a causal mask, the outputs at positions before the changed one must be
    exactly equal (difference 0.0): no information flows from the future.

    Parameters
    ----------
    x, x_changed : array_like (T, d_model)
    w_q, w_k, w_v : array_like (d_model, d_k), (d_model, d_k), (d_model, d_v)
    mask : array_like of bool (T, T)
    """
    x = as_real_array(x, "x")
    x_changed = as_real_array(x_changed, "x_changed")
    if x.shape != x_changed.shape or x.ndim != 2:
        raise ValueError(f"x and x_changed must be (T, d_model) of one shape; got {x.shape} "
                         f"and {x_changed.shape}")
    rows = np.flatnonzero(np.any(x != x_changed, axis=1))
    if rows.size != 1:
        raise ValueError(f"x_changed must differ from x in exactly one row; differs in "
                         f"{rows.size}")

    def out(inputs, m):
        return scaled_dot_product_attention(inputs @ w_q, inputs @ w_k, inputs @ w_v,
                                            mask=m).output

    return LeakageTest(
        position=int(rows[0]),
        diff_masked=np.max(np.abs(out(x_changed, mask) - out(x, mask)), axis=-1),
        diff_unmasked=np.max(np.abs(out(x_changed, None) - out(x, None)), axis=-1),
    )
