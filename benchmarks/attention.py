"""Benchmark of attention: ``python -m benchmarks.attention``.

Prints, measured in one run on this machine, on one BLAS thread (see :mod:`attncore.measure`):

* NumPy's own float64 matrix-multiply throughput;
* at H heads, T tokens, d_k: the time of :func:`attncore.cost.lean_attention` and its
  GFLOP/s counted as 4·H·T²·d_k (two products of 2·H·T²·d_k each), as a ratio of
  NumPy's; the readable :func:`attncore.scaled_dot_product_attention` and a textbook loop
  over heads timed alongside, as ratios to the lean one; the peak memory of each form
  (tracemalloc) against the size of the weights.

This is a script, not a test: timings depend on the machine and its load, so the
figures worth quoting are the ratios of one run.
"""

from __future__ import annotations

import argparse

import numpy as np

from attncore.attention import scaled_dot_product_attention
from attncore.cost.head_loop import textbook_attention
from attncore.cost.lean import lean_attention
from attncore.measure import best_time, one_blas_thread, peak_memories


def matmul_gflops(n: int, repeats: int) -> float:
    """NumPy float64 matrix-multiply throughput on an (n, n) @ (n, n) product."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    return 2 * n**3 / best_time(lambda: a @ b, repeats) / 1e9


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--tokens", type=int, nargs="+", default=[256, 1024, 2048])
    parser.add_argument("--d-k", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    with one_blas_thread():
        peak_gflops = matmul_gflops(1024, args.repeats)
        print(f"NumPy float64 matmul (1024 x 1024 @ 1024 x 1024, one BLAS thread): "
              f"{peak_gflops:.1f} GFLOP/s")
        for T in args.tokens:
            H, d_k = args.heads, args.d_k
            q, k, v = (rng.standard_normal((H, T, d_k)) for _ in range(3))
            flops = 4 * H * T * T * d_k
            forms = {"lean": lean_attention, "readable": scaled_dot_product_attention,
                     "loop": textbook_attention}
            seconds = {name: best_time(lambda fn=fn, q=q, k=k, v=v: fn(q, k, v),
                                       args.repeats)
                       for name, fn in forms.items()}
            peaks = dict(zip(forms, [peak for _, peak in peak_memories(
                [(fn, (q, k, v)) for fn in forms.values()], keep_results=False)], strict=True))
            weights_bytes = H * T * T * 8
            w, out = lean_attention(q, k, v)
            trace = scaled_dot_product_attention(q, k, v)
            diff = max(np.abs(w - trace.weights).max(), np.abs(out - trace.output).max())
            gflops = flops / seconds["lean"] / 1e9
            print(
                f"H={H} T={T} d_k={d_k} float64: lean {seconds['lean'] * 1e3:.1f} ms, "
                f"{gflops:.1f} GFLOP/s = {gflops / peak_gflops:.2f} of matmul; "
                f"readable {seconds['readable'] / seconds['lean']:.2f}x and loop over heads "
                f"{seconds['loop'] / seconds['lean']:.2f}x the lean time; peak memory / "
                f"weights ({weights_bytes / 2**20:.0f} MiB): lean "
                f"{peaks['lean'] / weights_bytes:.2f}, readable "
                f"{peaks['readable'] / weights_bytes:.2f}, loop "
                f"{peaks['loop'] / weights_bytes:.2f}; max |lean - readable| {diff:.1e}"
            )


if __name__ == "__main__":
    main()
