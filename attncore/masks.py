"""Boolean attention masks. **True means "may attend"**; rows are queries, columns keys.

Every mask broadcasts to ``(..., Tq, Tk)`` and can be passed as ``mask=`` to
:func:`attncore.attention.scaled_dot_product_attention` or :func:`attncore.softmax.softmax`.
"""

from __future__ import annotations

import numbers

import numpy as np

from ._checks import as_bool_mask


def _length(value, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}; got {value!r}")
    return int(value)


def causal_mask(t_q: int, t_k: int | None = None) -> np.ndarray:
    """Causal (look-ahead) mask: query i may attend to keys j <= i.

    Parameters
    ----------
    t_q : int
        Number of queries Tq.
    t_k : int, optional
        Number of keys Tk (default Tq). When Tk > Tq the queries are taken to be
        the last Tq positions, so query i sits at position i + (Tk - Tq).

    Returns
    -------
    ndarray of bool (Tq, Tk)
        Lower triangular for Tq = Tk.
    """
    t_q = _length(t_q, "t_q")
    t_k = t_q if t_k is None else _length(t_k, "t_k")
    return np.tri(t_q, t_k, k=t_k - t_q, dtype=bool)


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
    t = _length(t, "t")
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
    """Local window: query i may attend to keys j with |i - j| <= width.

    Returns
    -------
    ndarray of bool (Tq, Tk)
        A band of ``2 * width + 1`` diagonals (clipped at the edges).
    """
    t_q = _length(t_q, "t_q")
    t_k = t_q if t_k is None else _length(t_k, "t_k")
    width = _length(width, "width", minimum=0)
    distance = np.abs(np.arange(t_q)[:, None] - np.arange(t_k)[None, :])
    return distance <= width


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
