"""Command line for teachers and checks: ``python -m attncore.lm TASK [options]``.

Each task prints, as its last line, one JSON object. Layers and heads count from 1, as
on the pages (``patch``'s arrays are in model order, layer 0 first, as its issue asks;
their lists of layers and heads count from 1).

  next       the 10 most likely next tokens after --prompt
  induction  the repeated-random-tokens test: best induction heads, losses with them off
  cache      generation with and without the KV cache (lesson 11)
  window     perplexity with a sliding window, with and without attention sinks (lesson 11)
  mqa        perplexity with the 3 KV heads merged into 1 without retraining (lesson 11)
  patch      a clean and a corrupted prompt: patching, attribution, knockout (lesson 12)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from . import answer, inference, patching
from .files import ModelNotInstalledError, model
from .generation import model_probs
from .heads import induction_test
from .tokens import decode
from .trace import run


def _next(args) -> dict:
    start = time.perf_counter()
    trace = run(args.prompt, max_tokens=args.max_tokens)
    seconds = time.perf_counter() - start
    probs = model_probs(trace.logits[-1])
    top = np.argsort(-probs, kind="stable")[:10]
    m = model()
    return {"task": "next", "prompt": args.prompt, "tokens": len(trace.ids),
            "truncated": trace.truncated,
            "top": [[int(i), decode(m, [i]), float(probs[i])] for i in top],
            "seconds": seconds}


def _induction(args) -> dict:
    start = time.perf_counter()
    test = induction_test(seed=args.seed, segment=args.segment, sequences=args.sequences,
                          n_top=5, draws=args.draws)
    seconds = time.perf_counter() - start
    return {"task": "induction", "seed": args.seed, "segment": args.segment,
            "sequences": args.sequences,
            "top_heads": [[layer + 1, head + 1, float(test.scores[layer, head])]
                          for layer, head in test.top_heads],
            "loss_first": test.loss_first, "loss_repeat": test.loss_repeat,
            "loss_ablate_top5": test.loss_top_off,
            "loss_ablate_random5_max": float(test.loss_random_off.max()),
            "loss_ablate_random5": test.loss_random_off.tolist(),
            "seconds": seconds}


def _cache(args) -> dict:
    result = inference.cache_comparison(args.prompt, args.steps)
    return {"task": "cache", "prompt": args.prompt, "steps": args.steps,
            "same_tokens": result.same_tokens, "max_logit_diff": result.max_logit_diff,
            "seconds_cached": result.seconds_cached, "seconds_uncached": result.seconds_uncached,
            "cache_bytes": result.cache_bytes, "cache_bytes_formula": result.cache_bytes_formula,
            "text": result.text}


def _text(args) -> str:
    if args.text_file:
        try:
            return Path(args.text_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"cannot read --text-file {args.text_file}: {exc}") from exc
    return inference.default_text()


def _window(args) -> dict:
    start = time.perf_counter()
    result = inference.window_perplexities(_text(args), args.window, args.sinks, args.tokens)
    return {"task": "window", "window": args.window, "sinks": args.sinks,
            "tokens": result.tokens, "ppl_dense": result.dense,
            "ppl_window": result.window, "ppl_window_sinks": result.window_sinks,
            "seconds": time.perf_counter() - start}


def _mqa(args) -> dict:
    start = time.perf_counter()
    result = inference.merged_kv_perplexity(_text(args), args.tokens)
    return {"task": "mqa", "tokens": result.tokens, "ppl_gqa": result.gqa,
            "ppl_mqa_merged": result.merged, "seconds": time.perf_counter() - start}


def _patch(args) -> dict:
    start = time.perf_counter()
    m = model()
    result = answer.study_texts(m, args.clean, args.corrupt, args.answer, args.wrong)
    windows, probs, p_clean = patching.knockout(m, result.runs, args.window)
    dla = result.attribution
    return {"task": "patch", "clean": args.clean, "corrupt": args.corrupt,
            "answer": args.answer, "wrong": args.wrong, "tokens": result.pair.n_tokens,
            "changed_positions": [int(p) + 1 for p in result.pair.changed],
            "logit_diff_clean": result.ld_clean, "logit_diff_corrupt": result.ld_corrupt,
            "p_answer_clean": result.p_clean, "p_answer_corrupt": result.p_corrupt,
            "head_recovery": result.heads.tolist(),
            "residual_recovery": result.residual.tolist(),
            "dla_heads": dla.heads.tolist(), "dla_ffn": dla.ffn.tolist(),
            "dla_embed": dla.embed, "dla_total": dla.total,
            "knockout_window": args.window, "knockout_p_answer_none": p_clean,
            "knockout": [[first + 1, last + 1, float(p)]
                         for (first, last), p in zip(windows, probs, strict=True)],
            "top_heads": [[layer + 1, head + 1, r] for layer, head, r in result.top_heads()],
            "seconds": time.perf_counter() - start}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m attncore.lm", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    tasks = p.add_subparsers(dest="task", required=True)
    nxt = tasks.add_parser("next", help="the 10 most likely next tokens")
    nxt.add_argument("--prompt", required=True)
    nxt.add_argument("--max-tokens", type=int, default=256,
                     help="tokens of the prompt read (its first ones; at most 256)")
    ind = tasks.add_parser("induction", help="find induction heads and switch them off")
    ind.add_argument("--seed", type=int, default=0)
    ind.add_argument("--segment", type=int, default=25, help="tokens in each random segment")
    ind.add_argument("--sequences", type=int, default=3, help="random segments, each repeated")
    ind.add_argument("--draws", type=int, default=4,
                     help="sets of 5 random heads (in the top heads' layers) switched off")
    cache = tasks.add_parser("cache", help="generation with and without the KV cache")
    cache.add_argument("--prompt", required=True)
    cache.add_argument("--steps", type=int, default=32, help="new tokens (greedy)")
    for name, helptext in (("window", "perplexity with a sliding window and sinks"),
                           ("mqa", "perplexity with the KV heads merged into one")):
        t = tasks.add_parser(name, help=helptext)
        if name == "window":
            t.add_argument("--window", type=int, required=True,
                           help="W: each token sees itself and the W − 1 tokens before it")
            t.add_argument("--sinks", type=int, required=True,
                           help="S: the first S tokens stay visible to every token")
        t.add_argument("--text-file", help="a UTF-8 text file (default: the project's own "
                       "text, attncore/lm/data/prose.txt)")
        t.add_argument("--tokens", type=int, default=inference.DEFAULT_TOKENS,
                       help=f"the text's first N tokens are read (default "
                       f"{inference.DEFAULT_TOKENS}, at most {inference.MAX_TOKENS})")
    pat = tasks.add_parser("patch", help="patching, direct attribution and knockout for a "
                           "clean and a corrupted prompt (lesson 12)")
    pat.add_argument("--clean", required=True, help='the clean prompt ("The capital of '
                     'France is")')
    pat.add_argument("--corrupt", required=True, help="the corrupted prompt: as many tokens, "
                     "a word changed")
    pat.add_argument("--answer", required=True, help='the clean answer, one token, with its '
                     'leading space (" Paris")')
    pat.add_argument("--wrong", required=True, help='the corrupted answer, one token (" Rome")')
    pat.add_argument("--window", type=int, default=answer.KNOCKOUT_WINDOW,
                     help="consecutive layers in each knockout window")
    return p


TASKS = {"next": _next, "induction": _induction, "cache": _cache, "window": _window,
         "mqa": _mqa, "patch": _patch}


def main(argv: list[str] | None = None) -> dict:
    args = parser().parse_args(argv)
    try:
        summary = TASKS[args.task](args)
    except (ValueError, ModelNotInstalledError) as exc:  # said plainly, no traceback
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    print(json.dumps(summary, ensure_ascii=False))
    return summary


if __name__ == "__main__":
    main()
