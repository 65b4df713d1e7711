"""Benchmark of lesson 8's three default training runs: ``python -m benchmarks.training``.

For each task at the page's defaults (seed 0, or ``--seeds``) it prints the measured
training time, the steps per second, and the step and seconds at which the held-out
accuracy and the attention score first reached the thresholds the lesson promises
(measured at the checkpoints, so "to threshold" is rounded up to the next checkpoint).
A script, not a test: timings depend on the machine and its load.
"""

from __future__ import annotations

import argparse

import numpy as np

from attncore.train import train_task

#: task -> (least held-out accuracy, least attention score) promised at the defaults
THRESHOLDS = {"sentiment": (0.95, 0.6), "alignment": (0.9, 0.9), "induction": (0.95, 0.8)}


def to_threshold(run, accuracy: float, score: float) -> tuple[int | None, float | None]:
    """The first checkpoint (step, seconds) at which both figures reach their thresholds."""
    reached = np.flatnonzero((run.accuracy >= accuracy) & (run.scores >= score))
    if reached.size == 0:
        return None, None
    i = int(reached[0])
    return int(run.checkpoints[i]), float(run.seconds_at[i])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.training", description=__doc__)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    args = parser.parse_args(argv)
    print(f"{'task':<22}{'seed':>6}{'steps':>7}{'seconds':>9}{'steps/s':>9}"
          f"{'accuracy':>10}{'score':>8}{'step to thr.':>14}{'s to thr.':>11}")
    jobs = [("sentiment", {}), ("alignment", {}), ("alignment", {"kind": "general"}),
            ("induction", {})]
    for task, options in jobs:
        name = task + (f" ({options['kind']})" if options else "")
        for seed in args.seeds:
            run = train_task(task, seed, **options)
            step, seconds = to_threshold(run, *THRESHOLDS[task])
            print(f"{name:<22}{seed:>6}{run.steps:>7}{run.seconds:>9.2f}"
                  f"{run.steps / run.seconds:>9.1f}{run.final_accuracy:>10.3f}"
                  f"{run.attention_score:>8.3f}{step if step is not None else '—':>14}"
                  f"{seconds if seconds is not None else float('nan'):>11.2f}")


if __name__ == "__main__":
    main()
