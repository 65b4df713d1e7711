"""Benchmark of the language model: ``python -m benchmarks.language_model``.

Prints, measured in one run on this machine, on one BLAS thread:

* a restart: the time to check the GGUF's hash and memory-map the cached arrays;
* a forward pass over ``--tokens`` tokens returning the logits and every attention (what
  the reference returns), and the whole trace lesson 10's page keeps (q, k, v, hidden
  states too), best of ``--repeats``; with ``--reference-python PY``, the same pass by
  Hugging Face's Llama in PyTorch eager mode (one thread, float32, the same GGUF) run by
  that other interpreter (``benchmarks/lm_reference.py``), the rounds interleaved, with
  the ratio ours / reference of each round and the largest differences of the logits and
  attentions;
* one generated token with the KV cache (the median over ``--steps`` tokens after a
  ``--tokens``-token prompt), beside the memory-bandwidth limit: the bytes a token reads
  (every weight but the embedding table) divided by the read bandwidth measured here
  (a float32 dot product of a 512 MiB vector with itself). Both on one BLAS thread, and
  measured one after the other in each of ``--rounds`` rounds: the bandwidth a shared
  machine gives swings (16 to 33 GB/s seen here), so each round's ratio compares a token
  with the bandwidth of the same moment, and the median of the rounds is the figure.

A script, not a test: timings depend on the machine and its load; quote the ratios.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from attncore.lm import files
from attncore.lm.decoder import forward
from attncore.lm.inference import default_text, text_ids
from attncore.measure import best_time, one_blas_thread

REFERENCE_SCRIPT = Path(__file__).resolve().with_name("lm_reference.py")


def read_bandwidth(n_bytes: int = 512 * 2**20, repeats: int = 5) -> float:
    """Bytes a second one thread reads: a float32 vector dotted with itself."""
    a = np.ones(n_bytes // 4, dtype=np.float32)
    with one_blas_thread():
        return a.nbytes / best_time(lambda: a @ a, repeats)


def reference_times(python: str, ids: np.ndarray, repeats: int, save: str | None) -> dict:
    request = {"gguf": str(files.locate_gguf()), "ids": [ids.tolist()], "repeats": repeats,
               "save": save}
    done = subprocess.run([python, str(REFERENCE_SCRIPT)], input=json.dumps(request),
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--reference-python", help="an interpreter with torch and transformers")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    m = files.load_model()  # not the process's cached one: a restart, with the cache warm
    print(f"restart (hash check and memory map of the cached arrays): "
          f"{time.perf_counter() - start:.2f} s")
    ids = text_ids(m, default_text(), args.tokens)

    ours, whole, theirs = [], [], []
    for r in range(args.rounds):
        forward(m, ids, record=True, keep_cache=False)  # warm-up
        # what the reference returns (the logits and every attention), and the lesson's
        # whole trace (q, k, v, hidden states and the rest too)
        ours.append(best_time(lambda: forward(m, ids, record=("weights",), keep_cache=False),
                              args.repeats))
        whole.append(best_time(lambda: forward(m, ids, record=True, keep_cache=False),
                               args.repeats))
        if args.reference_python:
            with tempfile.TemporaryDirectory() as tmp:
                save = str(Path(tmp) / "ref.npz") if r == 0 else None
                result = reference_times(args.reference_python, ids, args.repeats, save)
                theirs.append(result["seconds"][0])
                if save:
                    ref = np.load(save)
                    p = forward(m, ids, record=True, keep_cache=False)
                    logit_gap = float(np.max(np.abs(ref["logits_0"] - p.logits)))
                    attn_gap = float(np.max(np.abs(ref["attentions_0"] - p.record["weights"])))
        line = (f"round {r + 1}: forward of {ids.size} tokens with every attention, ours "
                f"{ours[-1] * 1000:.0f} ms (the whole trace {whole[-1] * 1000:.0f} ms)")
        if theirs:
            line += (f", PyTorch eager {theirs[-1] * 1000:.0f} ms, ratio "
                     f"{ours[-1] / theirs[-1]:.2f} ({whole[-1] / theirs[-1]:.2f})")
        print(line)
    if theirs:
        ratios = np.array(ours) / np.array(theirs)
        traces = np.array(whole) / np.array(theirs)
        print(f"ours / reference: {ratios.min():.2f} to {ratios.max():.2f} (median "
              f"{np.median(ratios):.2f}) over {args.rounds} rounds, the whole trace "
              f"{traces.min():.2f} to {traces.max():.2f} (median {np.median(traces):.2f}); "
              f"PyTorch {result['torch']}; largest differences: logits {logit_gap:.1e}, "
              f"attention weights {attn_gap:.1e}")

    new = np.asarray(text_ids(m, default_text(), args.tokens + args.steps)[args.tokens:])
    ratios = []
    for r in range(args.rounds):
        with one_blas_thread():
            step = float(np.median(token_times(m, ids, new)))
        bandwidth = read_bandwidth()
        limit = m.weights.bytes_per_token / bandwidth
        ratios.append(step / limit)
        print(f"round {r + 1}: one token with the KV cache (median of {new.size} after "
              f"{ids.size}): {step * 1000:.1f} ms; read bandwidth {bandwidth / 1e9:.1f} GB/s, "
              f"so reading the {m.weights.bytes_per_token / 1e6:.0f} MB of weights takes at "
              f"least {limit * 1000:.1f} ms: {ratios[-1]:.2f} × the limit")
    print(f"one token with the KV cache: {np.median(ratios):.2f} × the memory-bandwidth limit "
          f"(median of {args.rounds} rounds; {min(ratios):.2f} to {max(ratios):.2f})")


def token_times(m, ids: np.ndarray, new: np.ndarray) -> list[float]:
    """Seconds of each pass that writes one token with the KV cache, after ``ids``."""
    cache, times = forward(m, ids).cache, []
    for token in new:
        start = time.perf_counter()
        p = forward(m, np.array([token]), cache=cache, last_only=True)
        times.append(time.perf_counter() - start)
        cache = p.cache
    return times


if __name__ == "__main__":
    main()
