"""Benchmark of lesson 0's training: ``python -m benchmarks.bottleneck``.

Times both models' training and the test at the page's defaults, against their budget of
BUDGET_SECONDS, and at the slowest settings the page accepts, against LIMIT_SECONDS. A
script, not a test: timings depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import time

from attncore.train.bottleneck import (
    LIMIT_SECONDS,
    MAX_D_MODEL,
    MAX_LENGTH,
    MODELS,
    BottleneckConfig,
    max_steps,
    train_bottleneck,
)

BUDGET_SECONDS = 15.0  # both models at the defaults


def slowest_configs(seed: int = 0) -> list[BottleneckConfig]:
    """The slowest accepted settings: the most steps allowed at the widest d_model, for
    strings all MAX_LENGTH long and for the default range of lengths."""
    return [BottleneckConfig(seed=seed, d_model=MAX_D_MODEL, min_length=lo, max_length=hi,
                             steps=max_steps(MAX_D_MODEL, lo, hi))
            for lo, hi in ((MAX_LENGTH, MAX_LENGTH), (3, 16))]


def benchmark(seed: int = 0, slowest: bool = True) -> list[dict]:
    """Time :func:`train_bottleneck` at the defaults (and at :func:`slowest_configs`).

    Prints one line per run: wall and process (CPU) seconds of each model's training,
    of the test, of the whole call, and the ratio of the whole to its budget (15 s at the
    defaults, LIMIT_SECONDS at the slowest settings), with the load average, since the
    machine is shared. A script, not a test: timings depend on the machine and its load.
    """
    jobs = [("defaults", BottleneckConfig(seed=seed), BUDGET_SECONDS)]
    if slowest:
        jobs += [("slowest", config, LIMIT_SECONDS) for config in slowest_configs(seed)]
    figures = []
    for name, config, budget in jobs:
        load = os.getloadavg()[0]
        cpu = time.process_time()
        result = train_bottleneck(config)
        cpu = time.process_time() - cpu
        train_s = {m: result.runs[m].seconds for m in MODELS}
        test_s = result.seconds - sum(train_s.values())
        figures.append({"settings": name, "config": config, "seconds": result.seconds,
                        "cpu_seconds": cpu, "budget": budget, "seconds_test": test_s,
                        **{f"seconds_{m}": s for m, s in train_s.items()}, "load": load})
        print(f"{name:<9} d={config.d_model} lengths {config.min_length}-{config.max_length} "
              f"steps {config.steps}: fixed {train_s['fixed']:.2f} s "
              f"({config.steps / train_s['fixed']:.0f} steps/s), attention "
              f"{train_s['attention']:.2f} s ({config.steps / train_s['attention']:.0f} "
              f"steps/s), test {test_s:.2f} s; total {result.seconds:.2f} s wall, "
              f"{cpu:.2f} s CPU = {result.seconds / budget:.2f} of {budget:.0f} s "
              f"(load average {load:.1f})", flush=True)
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bottleneck",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--defaults-only", action="store_true",
                        help="leave out the slowest settings")
    args = parser.parse_args(argv)
    benchmark(args.seed, slowest=not args.defaults_only)


if __name__ == "__main__":
    main()
