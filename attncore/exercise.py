"""Checking a student's hand computation of attention, step by step, and what lesson 1's
"Try this" predicts.

The student may fill any cells of any step (blank cells are NaN and are not marked).
Each filled cell is right when it lies within one unit of the last decimal place
asked for (``10**-decimals``) of the exact value, so a typed answer may be rounded to
that many decimals. Intermediate results should carry more: weights rounded to 2
decimals can move an output row by more than 0.01. The first step with a wrong cell is
named, with the likely mistake when it is a common one, said for the trace's own
settings (its scale, its temperature τ and its mask).

:func:`stretch_key` says which queries turn to a key made longer, which turn away and
which are unmoved.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .attention import AttentionTrace
from .softmax import softmax

#: The steps in the order they are computed: (key, name shown to the student).
STEPS = (
    ("scores", "Step 1: scores Q Kᵀ"),
    ("scaled", "Step 2: scaled scores"),
    ("weights", "Step 3: softmax weights"),
    ("output", "Step 4: output W V"),
)


@dataclass(frozen=True)
class StepCheck:
    """The marking of one step.

    Attributes
    ----------
    key, title : str
    expected : ndarray
        The exact values from the trace.
    given : ndarray
        The student's values, NaN where left blank.
    attempted : ndarray of bool
        Cells the student filled.
    correct : ndarray of bool
        Filled cells within tolerance (False where not attempted).
    """

    key: str
    title: str
    expected: np.ndarray
    given: np.ndarray
    attempted: np.ndarray
    correct: np.ndarray

    @property
    def n_attempted(self) -> int:
        return int(self.attempted.sum())

    @property
    def n_wrong(self) -> int:
        return int((self.attempted & ~self.correct).sum())


@dataclass(frozen=True)
class WorkCheck:
    """The marking of all four steps, the first wrong one and why it is wrong."""

    steps: tuple[StepCheck, ...]
    tolerance: float
    first_wrong: str | None
    explanation: str

    @property
    def n_attempted(self) -> int:
        return sum(s.n_attempted for s in self.steps)


def tolerance_for(decimals: int) -> float:
    """One unit in the last place asked for: 0.01 for 2 decimals."""
    if not 0 <= decimals <= 12:
        raise ValueError(f"decimals must lie in 0..12; got {decimals}")
    return 10.0 ** (-decimals)


def expected_steps(trace: AttentionTrace) -> dict[str, np.ndarray]:
    """The exact value of each step of :data:`STEPS` for a trace."""
    return {
        "scores": trace.raw_scores,
        "scaled": trace.scaled_scores,
        "weights": trace.weights,
        "output": trace.output,
    }


def check_work(trace: AttentionTrace, answers: dict, decimals: int = 2) -> WorkCheck:
    """Mark the student's ``answers`` against ``trace``.

    Parameters
    ----------
    trace : AttentionTrace
        An unbatched trace (Q of shape (Tq, d_k)) without dropout.
    answers : dict
        Step key -> array of the step's shape, NaN for blank cells. Missing keys
        count as blank steps.
    decimals : int
        The precision the student works to; sets the tolerance.
    """
    if trace.q.ndim != 2:
        raise ValueError(f"check_work needs an unbatched trace; Q has shape {trace.q.shape}")
    tol = tolerance_for(decimals)
    expected = expected_steps(trace)
    checks = []
    for key, title in STEPS:
        exp = expected[key]
        given = np.asarray(answers.get(key, np.full(exp.shape, np.nan)), dtype=np.float64)
        if given.shape != exp.shape:
            raise ValueError(f"answer for {title} must have shape {exp.shape}; got {given.shape}")
        attempted = ~np.isnan(given)
        correct = attempted & (np.abs(np.where(attempted, given, 0.0) - exp) <= tol)
        checks.append(StepCheck(key, title, exp, given, attempted, correct))
    first = next((c for c in checks if c.n_wrong), None)
    if first is None:
        return WorkCheck(tuple(checks), tol, None, "")
    return WorkCheck(tuple(checks), tol, first.key, _explain(first, trace, tol))


def _matches(check: StepCheck, candidate: np.ndarray, tol: float) -> bool:
    """True when every filled cell agrees with ``candidate`` (a likely mistake)."""
    if candidate.shape != check.given.shape:
        return False
    a = check.attempted
    return bool(np.all(np.abs(check.given[a] - candidate[a]) <= tol))


def _first_wrong_cell(check: StepCheck) -> tuple[int, int]:
    i, j = np.argwhere(check.attempted & ~check.correct)[0]
    return int(i), int(j)


def _explain(check: StepCheck, trace: AttentionTrace, tol: float) -> str:
    i, j = _first_wrong_cell(check)
    cell = (f"Row {i + 1}, column {j + 1}: you wrote {check.given[i, j]:g}, "
            f"the value is {check.expected[i, j]:.6g}.")
    hint = {"scores": _scores_hint, "scaled": _scaled_hint, "weights": _weights_hint,
            "output": _output_hint}[check.key](check, trace, tol, i, j)
    return f"{check.title} is the first step with a mistake. {cell} {hint}"


def _scaling_said(trace: AttentionTrace) -> str:
    """What step 2 does with this trace's scale, in words."""
    d_k, scale = trace.d_k, trace.scale
    if np.isclose(scale, 1.0 / np.sqrt(d_k), rtol=1e-12):
        if d_k == 1:
            return "Step 2 divides by √d_k = √1 = 1, which leaves every score as it is"
        exact = math.isqrt(d_k) ** 2 == d_k  # √4 = 2, but √2 ≈ 1.41421
        root = f"= {math.isqrt(d_k)}" if exact else f"≈ {np.sqrt(d_k):.6g}"
        return f"Step 2 divides every score by √d_k = √{d_k} {root}"
    if scale == 1.0:
        return "Scaling is switched off: step 2 leaves every score as it is (S̃ = S)"
    if np.isclose(scale, 1.0 / d_k, rtol=1e-12):
        return f"Step 2 divides every score by d_k = {d_k}"
    return f"Step 2 multiplies every score by the scale {scale:.6g}"


def _scores_hint(check, trace, tol, i, j) -> str:
    if _matches(check, trace.raw_scores.T, tol):
        return "You computed k_i · q_j: rows are queries and columns are keys, S = Q Kᵀ."
    if trace.scale != 1.0 and _matches(check, trace.scaled_scores, tol):
        return "This step comes before the scaling: just the dot products q_i · k_j."
    return "Each score is a dot product: S[i, j] = q_i · k_j = Σ_d Q[i, d] · K[j, d]."


def _scaled_hint(check, trace, tol, i, j) -> str:
    raw, d_k, said = trace.raw_scores, trace.d_k, _scaling_said(trace)
    if trace.mask is not None and not np.broadcast_to(trace.mask, raw.shape)[i, j]:
        return (f"The mask hides this key from this query (its weight will be 0), but step 2 "
                f"asks for the scaled score before the mask. {said}. Leave a masked cell "
                "blank if you like.")
    if trace.scale != 1.0 and _matches(check, raw, tol):
        return f"You have not scaled the scores yet. {said}."
    wrong_divisions = [(f"√d_k = √{d_k}", raw / np.sqrt(d_k)), (f"d_k = {d_k}", raw / d_k)]
    for name, candidate in wrong_divisions:
        if _matches(check, candidate, tol) and not np.allclose(candidate, trace.scaled_scores):
            return f"You divided by {name}. {said}."
    return f"{said}."


def _weights_hint(check, trace, tol, i, j) -> str:
    mask, tau = trace.mask, trace.temperature
    raw, scaled = trace.raw_scores, trace.scaled_scores
    sums = np.nansum(np.where(check.attempted, check.given, np.nan), axis=-1)
    full_rows = check.attempted.all(axis=-1) & ~trace.fully_masked
    bad_sum = full_rows & (np.abs(sums - 1.0) > tol * check.given.shape[-1])
    if trace.scale != 1.0 and _matches(check, softmax(raw, temperature=tau, mask=mask), tol):
        return "You applied the softmax to the unscaled scores: scale them first (step 2)."
    if tau != 1.0 and _matches(check, softmax(scaled, mask=mask), tol):
        return (f"You left out the temperature: divide each scaled score by τ = {tau:g} "
                "before the exponential.")
    if mask is not None and _matches(check, softmax(scaled, temperature=tau), tol):
        return ("You left out the mask: a key the mask hides gets weight 0, and each row's "
                "softmax runs over the keys it may see.")
    if _matches(check, softmax(scaled, axis=0, temperature=tau, mask=mask), tol):
        return "Normalise each row (over the keys), not each column."
    if bad_sum.any():
        r = int(np.argmax(bad_sum))
        return (f"Each row of weights must sum to 1; your row {r + 1} sums to "
                f"{sums[r]:.6g}. Exponentiate each score, then divide by the row's sum.")
    over = "the keys j′ row i may see" if mask is not None else "the keys j′ of row i"
    return f"w_ij = exp(s̃_ij / τ) / Σ_j′ exp(s̃_ij′ / τ) with τ = {tau:g}, over {over}."


def _output_hint(check, trace, tol, i, j) -> str:
    return "Each output row is a weighted sum of value rows: o_i = Σ_j w_ij v_j, that is O = W V."


@dataclass(frozen=True)
class KeyStretch:
    """What multiplying one key by a factor > 1 does to each query's weight on it.

    Attributes
    ----------
    key : int
        The key made longer (its row of K is multiplied by ``factor``).
    dots : ndarray (Tq,)
        q_i · k_key, before the stretch.
    change : ndarray of int (Tq,)
        +1 where the query's weight on the key rises, -1 where it falls, 0 where the
        query's whole row of weights stays as it is.
    only_key : ndarray of bool (Tq,)
        Queries for which this is the one key they may see (weight 1 whatever its length).
    hidden : ndarray of bool (Tq,)
        Queries the mask hides this key from (weight 0 whatever its length).
    """

    key: int
    dots: np.ndarray
    change: np.ndarray
    only_key: np.ndarray
    hidden: np.ndarray


def stretch_key(trace: AttentionTrace, key: int) -> KeyStretch:
    """Which queries turn to key ``key`` when it is made longer, and which turn away.

    Multiplying k_j by c > 1 multiplies the scores s_ij = q_i · k_j of column j by c
    and leaves every other score alone. So query i's weight on key j rises when
    s_ij > 0, falls when s_ij < 0, and its whole row is unchanged when s_ij = 0, at
    every temperature and either scaling; a query that may see only key j keeps
    weight 1, and one it is hidden from keeps weight 0.

    Parameters
    ----------
    trace : AttentionTrace
        An unbatched trace (Q of shape (Tq, d_k)).
    key : int
        The key's index, 0 to Tk − 1.
    """
    if trace.q.ndim != 2:
        raise ValueError(f"stretch_key needs an unbatched trace; Q has shape {trace.q.shape}")
    n_keys = trace.k.shape[0]
    if not 0 <= key < n_keys:
        raise ValueError(f"key must lie in 0..{n_keys - 1}; got {key}")
    dots = trace.raw_scores[:, key]  # (Tq,)
    allowed = np.broadcast_to(True if trace.mask is None else trace.mask,
                              trace.raw_scores.shape)  # (Tq, Tk)
    hidden = ~allowed[:, key]
    only_key = allowed[:, key] & (allowed.sum(axis=-1) == 1)
    change = np.where(hidden | only_key, 0, np.sign(dots)).astype(int)
    return KeyStretch(key=key, dots=dots, change=change, only_key=only_key, hidden=hidden)
