"""Command line: ``python -m attncore.train TASK --seed S`` trains one task at the page's
defaults and prints, as its last line, one JSON object with task, seed, steps,
seconds, accuracy (held-out) and attention_score (see :mod:`attncore.train`).

``bottleneck`` (lesson 0) trains both of its models and prints instead lengths (the
tested string lengths), accuracy_attention and accuracy_fixed (greedy token accuracy
at each, same order), train_lengths ([shortest, longest]), chance and seconds.

``recall`` (lesson 13) trains softmax and linear attention on recalling a stored pair and
prints pairs (the tested numbers of pairs), accuracy_softmax and accuracy_linear (at each,
same order), state_numbers_linear (the linear model's d_model x d_k state), chance and
seconds. ``--steps N`` trains any task N steps instead of its default (a quick check)."""

from __future__ import annotations

import argparse
import json

from . import TASKS, train_task
from .recall import RecallConfig, train_recall


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m attncore.train", description=__doc__)
    parser.add_argument("task", choices=sorted([*TASKS, "recall"]))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, help="training steps (default: the task's)")
    parser.add_argument("--kind", choices=("additive", "general"), default="additive",
                        help="alignment only: Bahdanau (additive) or Luong (general) score")
    args = parser.parse_args(argv)
    options = {"kind": args.kind} if args.task == "alignment" else {}
    if args.steps is not None:
        options["steps"] = args.steps
    if args.task == "recall":
        run = train_recall(RecallConfig(seed=args.seed, **options))
    else:
        run = train_task(args.task, args.seed, **options)
    summary = run.summary()
    if args.task == "alignment":
        summary["kind"] = args.kind
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
