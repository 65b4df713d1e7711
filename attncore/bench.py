"""Benchmark of scaled dot-product attention: ``python -m attncore.bench``.

Prints, measured in one run on this machine:

* the time of :func:`attncore.scaled_dot_product_attention` (weights returned) at
  H heads, T tokens, d_k, float64, and its GFLOP/s counted as 4·H·T²·d_k
  (two matrix products of 2·H·T²·d_k each);
* NumPy's own float64 matrix-multiply throughput, and the ratio of the two;
* the speed-up over a textbook loop over heads timed alongside;
* the peak memory of one call (tracemalloc) against the size of the weights array.

This is a script, not a test: timings depend on the machine and its load, so the
figures worth quoting are the ratios of one run.
"""

from __future__ import annotations

import argparse

import numpy as np

from .attention import scaled_dot_product_attention
from .experiments import best_time, peak_memory, textbook_attention


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
    peak_gflops = matmul_gflops(1024, args.repeats)
    print(f"NumPy float64 matmul (1024 x 1024 @ 1024 x 1024): {peak_gflops:.1f} GFLOP/s")
    for T in args.tokens:
        H, d_k = args.heads, args.d_k
        q, k, v = (rng.standard_normal((H, T, d_k)) for _ in range(3))
        flops = 4 * H * T * T * d_k
        t_core = best_time(lambda q=q, k=k, v=v: scaled_dot_product_attention(q, k, v),
                           args.repeats)
        t_loop = best_time(lambda q=q, k=k, v=v: textbook_attention(q, k, v),
                           max(1, args.repeats // 2))
        trace, peak = peak_memory(lambda q=q, k=k, v=v: scaled_dot_product_attention(q, k, v))
        w_loop, o_loop = textbook_attention(q, k, v)
        diff = max(np.abs(trace.weights - w_loop).max(), np.abs(trace.output - o_loop).max())
        gflops = flops / t_core / 1e9
        weights_mb = trace.weights.nbytes / 2**20
        print(
            f"H={H} T={T} d_k={d_k} float64: attncore {t_core * 1e3:.1f} ms, "
            f"{gflops:.1f} GFLOP/s (4·H·T²·d_k = {flops / 1e9:.2f} GFLOP), "
            f"ratio to matmul {gflops / peak_gflops:.2f}; textbook loop {t_loop * 1e3:.0f} ms, "
            f"speed-up {t_loop / t_core:.1f}x; peak memory {peak / 2**20:.0f} MB for "
            f"{weights_mb:.0f} MB of weights ({peak / trace.weights.nbytes:.2f}x); "
            f"max |difference| {diff:.1e}"
        )


if __name__ == "__main__":
    main()
