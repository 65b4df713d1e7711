"""Checking a student's hand computation of attention, step by step.

The student may fill any cells of any step (blank cells are NaN and are not marked).
Each filled cell is right when it lies within one unit of the last decimal place
asked for (``10**-decimals``) of the exact value: that allows the student to round
intermediate results to the same precision as the page shows them. The first step
with a wrong cell is named, with the likely mistake when it is a common one.
"""

from __future__ import annotations

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
    raw = trace.raw_scores
    d_k = trace.d_k
    if check.key == "scores":
        if _matches(check, raw.T, tol):
            hint = "You computed k_i · q_j: rows are queries and columns are keys, S = Q Kᵀ."
        elif _matches(check, trace.scaled_scores, tol):
            hint = "This step comes before the scaling: just the dot products q_i · k_j."
        else:
            hint = "Each score is a dot product: S[i, j] = q_i · k_j = Σ_d Q[i, d] · K[j, d]."
    elif check.key == "scaled":
        if trace.scale != 1.0 and _matches(check, raw, tol):
            hint = f"You have not scaled the scores yet: multiply them by {trace.scale:.6g}."
        elif _matches(check, raw / d_k, tol) and trace.scale != 1.0 / d_k:
            hint = f"Divide by √d_k = √{d_k} = {np.sqrt(d_k):.6g}, not by d_k = {d_k}."
        else:
            hint = f"Multiply every score by the scale {trace.scale:.6g}."
    elif check.key == "weights":
        mask, temp = trace.mask, trace.temperature
        sums = np.nansum(np.where(check.attempted, check.given, np.nan), axis=-1)
        full_rows = check.attempted.all(axis=-1) & ~trace.fully_masked
        bad_sum = full_rows & (np.abs(sums - 1.0) > tol * check.given.shape[-1])
        if trace.scale != 1.0 and _matches(check, softmax(raw, temperature=temp, mask=mask), tol):
            hint = "You applied the softmax to the unscaled scores: scale them first (step 2)."
        elif _matches(check, softmax(trace.scaled_scores, axis=0, temperature=temp, mask=mask),
                      tol):
            hint = "Normalise each row (over the keys), not each column."
        elif bad_sum.any():
            r = int(np.argmax(bad_sum))
            hint = (f"Each row of weights must sum to 1; your row {r + 1} sums to "
                    f"{sums[r]:.6g}. Exponentiate each score, then divide by the row's sum.")
        else:
            hint = "w_ij = exp(s_ij / T) / Σ_k exp(s_ik / T), over the keys k of row i."
    else:
        hint = ("Each output row is a weighted sum of value rows: "
                "o_i = Σ_j w_ij v_j, that is O = W V.")
    return f"{check.title} is the first step with a mistake. {cell} {hint}"
