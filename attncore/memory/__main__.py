"""Command line: ``python -m attncore.memory --in FILE.npz --rule RULE --out OUT.npz``.

FILE.npz holds ``keys`` (n, d_k), ``values`` (n, d_v) and ``queries`` (m, d_k), and
optionally ``beta`` and ``alpha`` (a number or (n,), each in [0, 1], default 1) and
``scale`` (a number, default 1/√d_k; the softmax rule's). OUT.npz gets ``read`` (m, d_v)
and, for the three recurrent rules, ``state`` (d_v, d_k), the state after the last write.
Bad input (a missing file or array, shapes that do not agree, NaN or inf, β or α outside
[0, 1]) is said in one line on stderr, with exit status 2.
"""

from __future__ import annotations

import argparse
import sys
import zipfile

import numpy as np

from .rules import RULES, check_pairs, check_rate, write_and_read

REQUIRED = ("keys", "values", "queries")
OPTIONAL = ("beta", "alpha", "scale")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not argparse's usage block
        raise ValueError(message)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m attncore.memory", description=__doc__,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--in", dest="source", required=True, help="the .npz file to read")
    p.add_argument("--rule", required=True, choices=RULES)
    p.add_argument("--out", required=True, help="the .npz file to write")
    return p


def read_arrays(path: str) -> dict:
    """The arrays of FILE.npz by name; ValueError naming a missing file or array."""
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
    except FileNotFoundError:
        raise ValueError(f"no file {path!r}") from None
    except (OSError, ValueError, zipfile.BadZipFile):
        raise ValueError(f"{path!r} is not a .npz file of arrays (np.savez writes one)"
                         ) from None
    missing = [name for name in REQUIRED if name not in arrays]
    if missing:
        raise ValueError(f"{path!r} holds no array {missing[0]!r}; it needs {REQUIRED} "
                         f"and may hold {OPTIONAL}; it holds {sorted(arrays)}")
    return arrays


def run(source: str, rule: str, out: str) -> dict:
    """Read ``source``, write and read with ``rule``, save to ``out``; the saved arrays."""
    arrays = read_arrays(source)
    keys, values, queries = check_pairs(arrays["keys"], arrays["values"], arrays["queries"])
    n = keys.shape[0]
    beta = check_rate(arrays.get("beta", 1.0), "beta", n)  # checked for every rule
    alpha = check_rate(arrays.get("alpha", 1.0), "alpha", n)
    scale = arrays.get("scale")
    if scale is not None:
        if np.ndim(scale) != 0:
            raise ValueError(f"scale must be one number; got shape {np.shape(scale)}")
        scale = scale.item()
    result = write_and_read(rule, keys, values, queries, beta=beta, alpha=alpha, scale=scale)
    saved = {"read": result.reads}
    if rule != "softmax":
        saved["state"] = result.state
    try:
        np.savez(out, **saved)
    except OSError as exc:
        raise ValueError(f"cannot write {out!r} ({exc.strerror or exc})") from None
    return saved


def main(argv: list[str] | None = None) -> int:
    try:
        args = parser().parse_args(argv)
        run(args.source, args.rule, args.out)
    except ValueError as exc:  # said plainly, no traceback
        text = " ".join(str(exc).split())
        print(f"python -m attncore.memory: error: {text}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
