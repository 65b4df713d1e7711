"""Benchmark of lesson 13: ``python -m benchmarks.fixed_memory``.

Times each recall figure's data (:func:`attncore.memory.recall_curve` at the page's
settings, and :func:`attncore.memory.write_twice`) against FIGURE_BUDGET, and the trained
comparison (:func:`attncore.train.recall.train_recall`, both models) at each seed against
TRAINING_BUDGET, and prints whether its accuracies are where the lesson says: softmax
holds at 64 pairs, linear attention recalls a few pairs and falls by 64. A script, not a
test: timings depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from attncore import memory
from attncore.train.recall import RecallConfig, train_recall

FIGURE_BUDGET = 0.3  # seconds for one figure's data
TRAINING_BUDGET = 15.0  # seconds for both trainings at the defaults
FIGURES = {  # name -> (rule, settings)
    "softmax": ("softmax", {"scale": 8.0}),
    "linear": ("linear", {}),
    "delta": ("delta", {"beta": 1.0}),
    "gated_delta": ("gated_delta", {"beta": 1.0, "alpha": 0.9}),
}


def figures(repeats: int = 5) -> dict:
    """Best-of-``repeats`` seconds and mean recall of each rule's curve (d_k = 16)."""
    found = {}
    for name, (rule, settings) in FIGURES.items():
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            curve = memory.recall_curve(16, rule=rule, **settings)
            times.append(time.perf_counter() - start)
        found[name] = (min(times), curve)
        print(f"recall {name:<12} {min(times) * 1000:6.1f} ms (budget "
              f"{FIGURE_BUDGET * 1000:.0f}): pairs {curve.pair_counts.tolist()} recall "
              f"{np.round(curve.mean_recall, 2).tolist()} cosine "
              f"{np.round(curve.mean_cosine, 2).tolist()}", flush=True)
    start = time.perf_counter()
    for rule in memory.RULES:
        memory.write_twice(rule, beta=1.0, alpha=0.5)
    print(f"write_twice, every rule: {(time.perf_counter() - start) * 1000:.1f} ms", flush=True)
    return found


def training(seeds=(0, 1)) -> list[dict]:
    """Both trainings at the defaults per seed: wall and CPU seconds, accuracies, checks."""
    rows = []
    for seed in seeds:
        load, cpu = os.getloadavg()[0], time.process_time()
        result = train_recall(RecallConfig(seed=seed))
        cpu = time.process_time() - cpu
        s = result.summary()
        at = dict(zip(s["pairs"], zip(s["accuracy_softmax"], s["accuracy_linear"], strict=True),
                      strict=True))
        ok = at[64][0] >= 0.9 and at[64][1] <= 0.5 and at[4][1] >= 0.85
        print(f"seed {seed}: softmax {s['accuracy_softmax']} linear {s['accuracy_linear']} at "
              f"pairs {s['pairs']}; {'as expected' if ok else 'NOT as expected'}; "
              f"{result.seconds:.2f} s wall ({s['seconds_softmax']:.2f} + "
              f"{s['seconds_linear']:.2f} training), {cpu:.2f} s CPU, budget "
              f"{TRAINING_BUDGET:.0f} s (load average {load:.1f})", flush=True)
        rows.append({**s, "cpu_seconds": cpu, "load": load, "as_expected": ok})
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fixed_memory",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--figures-only", action="store_true")
    args = parser.parse_args(argv)
    figures()
    if not args.figures_only:
        training(args.seeds)


if __name__ == "__main__":
    main()
