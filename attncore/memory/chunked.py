r"""Causal linear attention at every position, step by step and chunk by chunk.

In training every position t reads its own prefix: :math:`o_t = S_t q_t` with
:math:`S_t = \sum_{s \le t} v_s k_s^\top`. Step by step that is n sequential updates of
S; chunk by chunk (length C) it is a few matrix products per chunk, which is how linear
attention is trained: for the positions of chunk c,

.. math::

    O_c = \underbrace{Q_c S_{c-1}^\top}_{\text{earlier chunks}}
        + \underbrace{\big(\mathrm{tril}(Q_c K_c^\top)\big) V_c}_{\text{this chunk, } s \le t},
    \qquad S_c = S_{c-1} + V_c^\top K_c

(rows are positions; ``tril`` keeps :math:`k_s \cdot q_t` for :math:`s \le t` only). The
two forms agree to rounding. float64 throughout.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import whole_number
from .rules import check_pairs, write_pairs


def _causal_inputs(keys, values, queries):
    keys, values, queries = check_pairs(keys, values, queries)
    n = keys.shape[0]
    if queries.shape[0] != n:
        raise ValueError(f"queries must have shape (n, d_k) = ({n}, {keys.shape[1]}), one "
                         f"per position as keys; got shape {queries.shape}")
    return keys, values, queries


def causal_linear_attention(keys, values, queries) -> np.ndarray:
    r"""Every position's read of its prefix, one write at a time.

    Parameters
    ----------
    keys : array_like (n, d_k)
    values : array_like (n, d_v)
    queries : array_like (n, d_k)
        One query per position.

    Returns
    -------
    ndarray (n, d_v)
        :math:`o_t = S_t q_t = \sum_{s \le t} (k_s \cdot q_t)\, v_s`.

    Examples
    --------
    >>> causal_linear_attention([[1.0], [1.0]], [[1.0], [2.0]], [[1.0], [1.0]]).tolist()
    [[1.0], [3.0]]
    """
    keys, values, queries = _causal_inputs(keys, values, queries)
    ones = np.ones(keys.shape[0])
    states, _, _ = write_pairs(keys, values, ones, ones, correct=False)  # (n, d_v, d_k)
    return (states @ queries[:, :, None])[:, :, 0]  # (n, d_v, d_k) x (n, d_k, 1) -> (n, d_v)


@dataclass(frozen=True)
class ChunkedLinear:
    """Causal linear attention computed chunk by chunk.

    chunk: the chunk length C (the last chunk may be shorter); outputs (n, d_v)
    :math:`o_t = S_t q_t`, the sum of inter (n, d_v), what position t reads from the
    state carried in from earlier chunks, and intra (n, d_v), what it reads from the pairs
    of its own chunk up to itself; chunk_states (number of chunks, d_v, d_k) the state
    after each chunk (the last is :math:`S_n`).
    """

    chunk: int
    outputs: np.ndarray
    inter: np.ndarray
    intra: np.ndarray
    chunk_states: np.ndarray


def chunked_linear_attention(keys, values, queries, chunk: int = 16) -> ChunkedLinear:
    r"""Every position's read of its prefix, computed chunk by chunk.

    Parameters
    ----------
    keys : array_like (n, d_k)
    values : array_like (n, d_v)
    queries : array_like (n, d_k)
    chunk : int
        Positions per chunk, at least 1.

    Returns
    -------
    ChunkedLinear
        ``outputs`` equal to :func:`causal_linear_attention` to rounding.

    Notes
    -----
    .. math:: O_c = Q_c S_{c-1}^\top + \mathrm{tril}(Q_c K_c^\top)\, V_c, \qquad
              S_c = S_{c-1} + V_c^\top K_c
    """
    keys, values, queries = _causal_inputs(keys, values, queries)
    chunk = whole_number(chunk, "chunk", 1)
    n, d_k = keys.shape
    d_v = values.shape[1]
    S = np.zeros((d_v, d_k))
    inter, intra, chunk_states = np.empty((n, d_v)), np.empty((n, d_v)), []
    for start in range(0, n, chunk):
        part = slice(start, start + chunk)
        Kc, Vc, Qc = keys[part], values[part], queries[part]  # (C, d_k), (C, d_v), (C, d_k)
        inter[part] = Qc @ S.T  # (C, d_k) x (d_k, d_v) -> (C, d_v)
        intra[part] = np.tril(Qc @ Kc.T) @ Vc  # (C, C) x (C, d_v) -> (C, d_v)
        S = S + Vc.T @ Kc  # (d_v, C) x (C, d_k) -> (d_v, d_k)
        chunk_states.append(S)
    return ChunkedLinear(chunk, inter + intra, inter, intra, np.stack(chunk_states))
