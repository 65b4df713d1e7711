"""Benchmark of lesson 12's patching: ``python -m benchmarks.patching``.

Prints, for each preset pair, measured in one run on this machine (one BLAS thread, as
every pass of the model runs): the two recorded runs, the residual grid, the head grid,
the knockout curve (9-layer windows), and what a loop of full unbatched passes would take
for both grids (one full pass over the corrupted prompt, best of 3, times L·T + L·H), with
the ratio loop / batched. The target is both grids within 10 s for a 5-token pair.

A script, not a test: timings depend on the machine and its load; quote the ratios.
"""

from __future__ import annotations

import argparse
import json
import time

from attncore.lm.answer import KNOCKOUT_WINDOW, PRESETS
from attncore.lm.decoder import forward
from attncore.lm.models import model
from attncore.lm.pair import make_pair, run_pair
from attncore.lm.patching import head_patching, knockout, residual_patching
from attncore.measure import best_time


def timed(work) -> tuple[object, float]:
    start = time.perf_counter()
    result = work()
    return result, time.perf_counter() - start


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.patching",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--presets", nargs="*", default=list(PRESETS),
                        help="preset names (default: all)")
    args = parser.parse_args(argv)
    m = model()
    cfg = m.config
    for name in args.presets:
        pair = make_pair(m, *PRESETS[name])
        runs, t_runs = timed(lambda: run_pair(m, pair))  # noqa: B023 (called at once)
        _, t_residual = timed(lambda: residual_patching(m, runs))  # noqa: B023
        _, t_heads = timed(lambda: head_patching(m, runs))  # noqa: B023
        _, t_knockout = timed(lambda: knockout(m, runs, KNOCKOUT_WINDOW))  # noqa: B023
        one_pass = best_time(lambda: forward(m, pair.corrupt, keep_cache=False,  # noqa: B023
                                             last_only=True), repeats=3)
        passes = cfg.n_layers * (pair.n_tokens + cfg.n_heads)
        grids = t_residual + t_heads
        print(json.dumps({
            "preset": name, "tokens": pair.n_tokens,
            "tokens_before_change": int(pair.changed[0]),
            "seconds_runs": round(t_runs, 3), "seconds_residual_grid": round(t_residual, 3),
            "seconds_head_grid": round(t_heads, 3), "seconds_both_grids": round(grids, 3),
            "seconds_knockout": round(t_knockout, 3),
            "seconds_loop_estimate": round(one_pass * passes, 3),
            "loop_over_batched": round(one_pass * passes / grids, 1),
        }))


if __name__ == "__main__":
    main()
