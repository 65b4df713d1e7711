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
  trace      one forward pass saved as .npz: ids, logits (T, V), attentions (L, H, T, T)

Every task takes --model PATH: a GGUF file (llama, qwen2 or gpt2) or a Hugging Face folder
(Llama, Qwen2, Mistral without a sliding window, GPT-2), converted once to float32 into the
disk cache; SmolLM2-135M-Instruct by default.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from . import answer, inference
from .decoder import forward
from .files import ModelNotInstalledError, load_model
from .generation import model_probs
from .heads import induction_test
from .models import model
from .tokens import decode, prompt_ids
from .trace import run


def _model(args):
    """--model's model, or SmolLM2; told on stderr about a first conversion."""
    if not args.model:
        return model()

    def tell(fraction: float, what: str) -> None:
        print(f"{fraction:4.0%} {what}", file=sys.stderr)

    return load_model(args.model, progress=tell)


def _next(args) -> dict:
    m = _model(args)
    start = time.perf_counter()
    trace = run(args.prompt, max_tokens=args.max_tokens, m=m)
    seconds = time.perf_counter() - start
    probs = model_probs(trace.logits[-1])
    top = np.argsort(-probs, kind="stable")[:10]
    return {"task": "next", "prompt": args.prompt, "tokens": len(trace.ids),
            "truncated": trace.truncated,
            "top": [[int(i), decode(m, [i]), float(probs[i])] for i in top],
            "seconds": seconds}


def _induction(args) -> dict:
    start = time.perf_counter()
    test = induction_test(seed=args.seed, segment=args.segment, sequences=args.sequences,
                          n_top=5, draws=args.draws, m=_model(args))
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
    result = inference.cache_comparison(args.prompt, args.steps, m=_model(args))
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
    result = inference.window_perplexities(_text(args), args.window, args.sinks, args.tokens,
                                           m=_model(args))
    return {"task": "window", "window": args.window, "sinks": args.sinks,
            "tokens": result.tokens, "ppl_dense": result.dense,
            "ppl_window": result.window, "ppl_window_sinks": result.window_sinks,
            "seconds": time.perf_counter() - start}


def _mqa(args) -> dict:
    start = time.perf_counter()
    result = inference.merged_kv_perplexity(_text(args), args.tokens, m=_model(args))
    return {"task": "mqa", "tokens": result.tokens, "ppl_gqa": result.gqa,
            "ppl_mqa_merged": result.merged, "seconds": time.perf_counter() - start}


def _patch(args) -> dict:
    m = _model(args)
    start = time.perf_counter()
    result = answer.study_texts(m, args.clean, args.corrupt, args.answer, args.wrong)
    window = args.window or min(answer.KNOCKOUT_WINDOW, m.config.n_layers)
    texts = (args.clean, args.corrupt, args.answer, args.wrong)
    return {"task": "patch", **answer.summary(m, result, texts, window),
            "seconds": time.perf_counter() - start}


def _trace(args) -> dict:
    m = _model(args)
    ids = prompt_ids(m, args.prompt)
    if ids.size == 0:
        raise ValueError("the prompt has no tokens: type at least one character")
    if ids.size > m.config.context_length:
        raise ValueError(f"the prompt has {ids.size} tokens; this model reads at most "
                         f"{m.config.context_length}")
    start = time.perf_counter()
    p = forward(m, ids, record=("weights",), keep_cache=False)
    seconds = time.perf_counter() - start
    arrays = {"ids": ids.astype(np.int64), "logits": p.logits.astype(np.float32),
              "attentions": p.record["weights"].astype(np.float32)}
    try:
        np.savez(args.out, **arrays)
    except OSError as exc:
        raise ValueError(f"cannot write --out {args.out}: {exc}") from exc
    cfg = m.config
    return {"task": "trace", "model": m.name, "family": cfg.family, "sha256": m.sha256,
            "prompt": args.prompt, "tokens": int(ids.size), "ids": ids.tolist(),
            "out": str(args.out), "logits_shape": list(arrays["logits"].shape),
            "attentions_shape": list(arrays["attentions"].shape),
            "config": cfg.describe(), "seconds": seconds}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m attncore.lm", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--model", metavar="PATH",
                        help="a GGUF file or a Hugging Face folder (default: SmolLM2-135M)")
    tasks = p.add_subparsers(dest="task", required=True)

    def task(name: str, **kwargs) -> argparse.ArgumentParser:
        return tasks.add_parser(name, parents=[common], **kwargs)

    nxt = task("next", help="the 10 most likely next tokens")
    nxt.add_argument("--prompt", required=True)
    nxt.add_argument("--max-tokens", type=int, default=256,
                     help="tokens of the prompt read (its first ones; at most 256)")
    ind = task("induction", help="find induction heads and switch them off")
    ind.add_argument("--seed", type=int, default=0)
    ind.add_argument("--segment", type=int, default=25, help="tokens in each random segment")
    ind.add_argument("--sequences", type=int, default=3, help="random segments, each repeated")
    ind.add_argument("--draws", type=int, default=4,
                     help="sets of 5 random heads (in the top heads' layers) switched off")
    cache = task("cache", help="generation with and without the KV cache")
    cache.add_argument("--prompt", required=True)
    cache.add_argument("--steps", type=int, default=32, help="new tokens (greedy)")
    for name, helptext in (("window", "perplexity with a sliding window and sinks"),
                           ("mqa", "perplexity with the KV heads merged into one")):
        t = task(name, help=helptext)
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
    pat = task("patch", help="patching, direct attribution and knockout for a "
                           "clean and a corrupted prompt (lesson 12)")
    pat.add_argument("--clean", required=True, help='the clean prompt ("The capital of '
                     'France is")')
    pat.add_argument("--corrupt", required=True, help="the corrupted prompt: as many tokens, "
                     "a word changed")
    pat.add_argument("--answer", required=True, help='the clean answer, one token, with its '
                     'leading space (" Paris")')
    pat.add_argument("--wrong", required=True, help='the corrupted answer, one token (" Rome")')
    pat.add_argument("--window", type=int, help=f"consecutive layers in each knockout "
                     f"window (default {answer.KNOCKOUT_WINDOW}, at most the model's layers)")
    tr = task("trace", help="one forward pass saved as .npz (ids, logits, attentions)")
    tr.add_argument("--prompt", required=True, help="the text (the BOS token is put first "
                    "when the model adds one)")
    tr.add_argument("--out", required=True, help="the .npz file to write")
    return p


TASKS = {"next": _next, "induction": _induction, "cache": _cache, "window": _window,
         "mqa": _mqa, "patch": _patch, "trace": _trace}


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
