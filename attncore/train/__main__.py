"""Command line: ``python -m attncore.train TASK --seed S`` trains one task at the page's
defaults and prints, as its last line, one JSON object with task, seed, steps,
seconds, accuracy (held-out) and attention_score (see :mod:`attncore.train`).

``bottleneck`` (lesson 0) trains both of its models and prints instead lengths (the
tested string lengths), accuracy_attention and accuracy_fixed (greedy token accuracy
at each, same order), train_lengths ([shortest, longest]), chance and seconds."""

from __future__ import annotations

import argparse
import json

from . import TASKS, train_task


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m attncore.train", description=__doc__)
    parser.add_argument("task", choices=sorted(TASKS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kind", choices=("additive", "general"), default="additive",
                        help="alignment only: Bahdanau (additive) or Luong (general) score")
    args = parser.parse_args(argv)
    options = {"kind": args.kind} if args.task == "alignment" else {}
    run = train_task(args.task, args.seed, **options)
    summary = run.summary()
    if args.task == "alignment":
        summary["kind"] = args.kind
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
