"""Lesson 10's sentences that depend on the model's numbers, as plain functions of them.

Each is chosen by the numbers it is given (a sink is called one only at twice an even
spread's share, copying only when the second copy costs less), so that the page never
states what this prompt, this model or this test did not show. Layers, heads and tokens
count from 1 in the sentences, from 0 in the arrays.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from attncore.analysis import SINK_FACTOR
from attncore.lm import InductionTest, LMConfig, Sampling
from attncore.lm.worked import WorkedHead
from pages.ui.arithmetic import num, shown, sign
from pages.ui.glossary import term_link
from pages.ui.labels import md_escape
from pages.ui.numbers import (
    difference_text,
    number_text,
    percent_text,
    said_number,
    significant_text,
)

#: How a token is drawn from the logits (said off the projector).
SAMPLING = (
    f"The model gives one {term_link('logit', 'logit')} per token of its vocabulary; "
    "their softmax is the next-token distribution. To draw a token: divide the "
    f"logits by the temperature τ (τ = 0 is {term_link('greedy', 'greedy')}: always "
    f"the most likely token); {term_link('top-k', 'top-k')} keeps the k most likely "
    "tokens; top-p keeps the smallest set of tokens whose probabilities (at this τ) "
    "add up to at least p, taken most likely first (after top-k, among the tokens it "
    "kept, their probabilities renormalised); what is kept is renormalised to sum to 1.")

TRY_THIS = [
    "Set τ to 0 and write 20 tokens twice: the same text. Raise τ to 1.5 and write with "
    "a few seeds: how often does the text stay sensible?",
    "Turn on the chat switch: the prompt becomes the user's turn in a conversation. "
    "Does the model answer it, or continue your sentence?",
    "In section 3, change token 2 of a long prompt: the logits before it stay the same "
    "bit for bit; how far do the later ones move?",
    "Type a prompt that repeats a phrase, set section 2's Layer to the layer of the "
    "strongest induction head (section 4) and see where that head's newest token looks.",
]

ONE_TOKEN = ("With a one-token prompt every head's only row attends to that token, its "
             "own, with weight 1: there is no earlier token to prefer and no sink to see. "
             "Type a longer prompt.")


def no_template_text(name: str) -> str:
    """Why the chat switch stays off for a model without a chat template."""
    return (f"{name} has no chat template: it was not trained on conversations (a base "
            "model, as GPT-2 is), so there is nothing to wrap the prompt in, and the "
            "switch stays off. It continues your text.")


TEMPLATE_HELP = ("The template comes from the model's own files (the GGUF's metadata or the "
                 "folder's tokenizer_config.json); its special tokens (such as <|im_start|>) "
                 "are shown as they are.")


def top_rows(tokens: list[str], ids: np.ndarray, probs: np.ndarray, drawn: np.ndarray) -> dict:
    """The table of the most likely next tokens (``ids``, most likely first): the model's
    probability of each and the one it is drawn with ("cut" when the filters drop it)."""
    return {"rank": np.arange(1, len(ids) + 1), "token": tokens, "id": ids,
            "model (τ = 1)": [number_text(p, 4) for p in probs[ids]],
            "drawn from (after τ, top-k, top-p)": [number_text(p, 4) if p else "cut"
                                                   for p in drawn[ids]]}


def generation_rows(steps: list, runner_ups: bool) -> dict:
    """The table of written tokens (``attncore.lm.Step``): each one's probabilities and,
    with ``runner_ups``, the four the model found likeliest after it."""
    rows = {"step": np.arange(1, len(steps) + 1), "token": [s.token for s in steps],
            "drawn with probability": [number_text(s.probability, 3) for s in steps],
            "model's probability": [number_text(s.model_probability, 3) for s in steps]}
    if runner_ups:
        rows["runner-ups (model's probability)"] = [
            " · ".join(f"{t} {number_text(p, 2)}" for t, p in zip(
                s.runner_up_tokens[:4], s.runner_up_probs[:4], strict=True)) for s in steps]
    return rows


def next_token_text(token: str, token_id: int, probs: np.ndarray, drawn: np.ndarray,
                    sampling: Sampling) -> str:
    """The most likely next token, and how many tokens the sampling settings leave to draw
    (``probs`` the model's distribution, ``drawn`` the one drawn from)."""
    return (f"Most likely next token: **{md_escape(token)}** (id {token_id}) with "
            f"probability {number_text(probs[token_id], 3)}. With τ = "
            f"{sampling.temperature:g}, top-k {sampling.top_k or 'off'} and top-p "
            f"{sampling.top_p:g}, {int(np.count_nonzero(drawn)):,} of the {probs.size:,} "
            f"tokens can be drawn; the most likely now has probability "
            f"{number_text(drawn[token_id], 3)}.")


def pass_caption(name: str, n_tokens: int, seconds: float) -> str:
    """What the forward pass over the prompt cost on this machine."""
    return (f"One forward pass of {name} over these {n_tokens} "
            f"token{'s' if n_tokens > 1 else ''} took **{seconds * 1000:,.0f} ms** on this "
            "machine (the pass over the prompt, every intermediate recorded; the check of a "
            "changed token, the induction test and the written tokens below are passes of "
            "their own; wall time, on a machine others may share).")


def generation_caption(seconds: np.ndarray) -> str:
    """The time of each written token: the first reads the whole prompt, the others one
    token with the cache."""
    return (f"Each token is one pass through the model with the "
            f"{term_link('kv-cache', 'KV cache')} (lesson 11): median "
            f"{np.median(seconds) * 1000:.0f} ms a token here, the first (the whole prompt) "
            f"{seconds[0] * 1000:.0f} ms (this run, on a machine others may share).")


def head_map_text(values: np.ndarray, stat: str) -> str:
    """The text alternative of an (L, H) map of one statistic per head."""
    L, H = values.shape
    (hl, hh), (ll, lh) = (np.unravel_index(f(values), values.shape)
                          for f in (np.argmax, np.argmin))
    return (f"{stat} of all {L * H} heads (rows: head, columns: layer): highest "
            f"{said_number(values[hl, hh])} at layer {hl + 1}, head {hh + 1}; lowest "
            f"{said_number(values[ll, lh])} at layer {ll + 1}, head {lh + 1}; mean "
            f"{said_number(values.mean())}.")


def newest_text(cfg: LMConfig, rows: np.ndarray, tokens: list[str]) -> str:
    """How the heads share keys and values, and where each head of one layer looks most
    from the newest token (``rows``: (H, T), each head's weights)."""
    return (sharing_text(cfg) + " Where each head of this layer looks most: "
            + ", ".join(f"H{h + 1} → “{md_escape(tokens[j])}” ({rows[h, j]:.2f})"
                        for h, j in enumerate(np.argmax(rows, axis=1))) + ".")


def sharing_text(cfg: LMConfig) -> str:
    """How the model's query heads share keys and values."""
    H, KV = cfg.n_heads, cfg.n_kv_heads
    if KV == H:
        return (f"Each of the {H} heads has its own keys and values (multi-head attention, "
                "as in lessons 4 and 9): no head shares them; lesson 11 shows what sharing "
                "saves in models that do.")
    if KV == 1:
        return (f"All {H} query heads share one key/value head (multi-query attention): "
                "each compares its own query with the *same* keys and averages the *same* "
                "values.")
    groups = "; ".join(f"KV head {g + 1} serves H{g * cfg.group + 1}–H{(g + 1) * cfg.group}"
                       for g in range(KV))
    return (f"{H} query heads share {KV} key/value heads ({groups}: "
            f"{term_link('gqa', 'grouped-query attention')}): heads of one group "
            "compare their own queries with the *same* keys and average the *same* values.")


def even_share(n_tokens: int) -> float:
    """The mean weight on the first token if each query row 2 .. T spread its weight evenly
    over the tokens it sees (row i sees i tokens): the share no sink is needed for."""
    return float(np.mean(1 / np.arange(2, n_tokens + 1))) if n_tokens > 1 else 1.0


def sink_text(first: np.ndarray, prev: np.ndarray, tokens: list[str]) -> str:
    """Whether the first token takes more than an even spread would give it: ``first`` and
    ``prev`` are each layer's mean weight on the first and on the previous token."""
    if len(tokens) == 1:
        return ONE_TOKEN
    layer, even = int(np.argmax(first)), even_share(len(tokens))
    said = (f"The first token “{md_escape(tokens[0])}” takes up to {percent_text(first.max())} "
            f"of a layer's attention (layer {layer + 1}), against {percent_text(even)} if "
            "every query spread its weight evenly over the tokens it sees")
    times = "twice" if SINK_FACTOR == 2 else f"{SINK_FACTOR} times"
    if first.max() >= SINK_FACTOR * even:
        said += (f": at least {times} that, an {term_link('attention-sink', 'attention sink')}"
                 ", often read as a place where heads park weight they have no use for.")
    else:
        said += f": less than {times} that, too little to call it a sink here."
    return said + (f" Layer 1's heads put {percent_text(prev[0])} of theirs on the previous "
                   f"token (an even spread would give it {percent_text(even)} too).")


def sinks_notice(first_mass: np.ndarray, tokens: list[str]) -> str:
    """How many heads give the first token more than half their weight, on this prompt
    (``first_mass``: each head's mean weight on it, any shape)."""
    if len(tokens) == 1:
        return ONE_TOKEN
    n = int(np.count_nonzero(first_mass > 0.5))
    return (f"On this prompt {n} of the {first_mass.size} heads put more than half of their "
            f"weight on the first token “{md_escape(tokens[0])}” (an even spread would give "
            f"it {percent_text(even_share(len(tokens)))} on average). Lesson 9 measures the "
            "same for [CLS] and [SEP] in an encoder.")


def kv_notice(cfg: LMConfig) -> str:
    """What the number of key/value heads means for the cache."""
    H, KV = cfg.n_heads, cfg.n_kv_heads
    if KV < H:
        return (f"Heads that share a KV head read the same keys and values but ask their own "
                f"questions: {KV} K/V heads take {Fraction(KV, H)} of the cache that {H} "
                "would (lesson 11).")
    return (f"Each of the {H} heads keeps its own keys and values: the cache holds all {H} of "
            "them, where grouped-query models keep a fraction (lesson 11).")


def upper_text(attentions: np.ndarray) -> str:
    """What the weights above the diagonal of every map are (``attentions``: (L, H, T, T),
    every head's weights)."""
    L, H, T = attentions.shape[:3]
    upper = attentions[..., np.triu(np.ones((T, T), dtype=bool), k=1)]
    nonzero = int(np.count_nonzero(upper))
    return (f"**Above the diagonal.** The {L * H} maps hold {upper.size:,} weights above the "
            f"diagonal (a query looking at a later token, which the "
            f"{term_link('causal-mask', 'causal mask')} forbids): "
            + ("every one is exactly 0, as the mask sets their scores to −∞ and e^−∞ = 0."
               if nonzero == 0 else f"{nonzero:,} of them are not 0: the mask leaks."))


def leakage_text(position: int, old: str, new: str, logits: np.ndarray,
                 changed: np.ndarray) -> str:
    """What changing token ``position`` (from 1) from ``old`` to ``new`` did to the logits
    (T, V) before it and after: ``logits`` before the change, ``changed`` after."""
    p, vocab_size = position - 1, logits.shape[1]
    identical = np.array_equal(changed[:p], logits[:p])
    gap_before = float(np.max(np.abs(changed[:p] - logits[:p])))
    gap_after = float(np.max(np.abs(changed[p:] - logits[p:])))
    return (f"Token {position} “{md_escape(old)}” becomes “{md_escape(new)}”. The logits of "
            f"positions 1 to {p} (all {p} × {vocab_size:,} of them) are "
            f"{'**identical, bit for bit**' if identical else '**not identical**'} (largest "
            f"difference {difference_text(gap_before)}); from position {position} on they "
            f"change by up to {gap_after:.3g}.")


def induction_intro(name: str) -> str:
    """What section 4 tests, on the model named ``name``."""
    return ("Lesson 8 grew an induction head in a 2-layer toy: to continue a pattern seen "
            "before, it looks at the token *after* the earlier occurrence of the current "
            f"token. The same test on {name}: random tokens, written twice.")


def sequences_text(segment: int, sequences: int, pieces: list[str]) -> str:
    """The test's random sequences, and how the first begins."""
    return (f"{sequences} sequences of {segment} random tokens, each written twice "
            f"({2 * segment} tokens). The first begins: "
            + " · ".join(md_escape(t) for t in pieces[:8]) + " …")


def stripe_text(segment: int) -> str:
    """Where an induction head's stripe runs in the map of a sequence written twice."""
    return (f"tₙ′ is the second copy of tₙ. An induction head's stripe runs {segment - 1} "
            "cells left of the diagonal, in the lower half: from each token of the second "
            "copy to the token that followed it the first time (from t2′ to t3).")


def induction_map_text(test: InductionTest) -> str:
    """What the map of the best head shows: its own share on the sequence drawn, then the
    score of the ranking, averaged over every sequence."""
    layer, head = test.top_heads[0]
    return (f"Layer {layer + 1}, head {head + 1} on the first sequence: on average "
            f"{percent_text(test.best_map_score)} of a second-copy token's weight goes to the "
            f"token that followed its first occurrence ({percent_text(test.scores[layer, head])} "
            f"over the {len(test.ids)} sequences). ")


def strongest_text(test: InductionTest) -> str:
    """The strongest induction heads and where the best one looks."""
    best = test.scores[test.top_heads[0]]
    return ("The strongest: " + ", ".join(
        f"layer {l + 1} head {h + 1} ({test.scores[l, h]:.2f})" for l, h in test.top_heads)
        + f". The best puts {percent_text(best)} of its attention where an induction head "
        f"should, on average over the second copies of the {len(test.ids)} sequences.")


def induction_loss_text(test: InductionTest, vocab_size: int, n_top: int) -> str:
    """What the random tokens cost the first time, the second, and with heads switched off."""
    guess = np.log(vocab_size)
    return (
        f"Random tokens cost {test.loss_first:.1f} nats each the first time (the "
        f"{term_link('cross-entropy', 'cross-entropy')}; an even guess among "
        f"{vocab_size:,} tokens would cost ln {vocab_size:,} = {guess:.1f}"
        + (": the model gives random tokens less probability than an even guess would, as "
           "it expects text, not noise" if test.loss_first > guess else "")
        + f"), {test.loss_repeat:.1f} the second time"
        + (", less than half: the model copies. " if test.loss_repeat < test.loss_first / 2
           else ", not less than half. ")
        + f"With the {n_top} best induction heads off the second copy costs "
        f"{test.loss_top_off:.1f}; with {n_top} random heads of the same layers off, "
        f"{test.loss_random_off.min():.1f} to {test.loss_random_off.max():.1f}.")


def _draws(n: int) -> str:
    """How many random draws of heads the test made: "4 random draws"."""
    return f"{n} random draw{'' if n == 1 else 's'}"


def induction_notice(test: InductionTest | None, n_layers: int) -> str:
    """What section 4's test found, at the settings it ran with (None: it has not run)."""
    if test is None:
        return ("Section 4's test finds the heads that copy a repeated sequence: press its "
                "button to run it at the settings chosen there.")
    ran = f"In section 4's test (seed {test.seed}, {test.segment} random tokens written twice)"
    layers = sorted({int(layer) + 1 for layer, _ in test.top_heads})
    saved = test.loss_first - test.loss_repeat  # what copying saves, nats a token
    if saved <= 0:
        return f"{ran} the second copy costs no less than the first: the model did not copy."
    lost = (test.loss_top_off - test.loss_repeat) / saved
    lost_random = (test.loss_random_off.max() - test.loss_repeat) / saved
    random_said = (f"take back at most {percent_text(lost_random)}" if lost_random > 0 else
                   "take back nothing (the second copy costs no more with them off)")
    where = ", ".join(map(str, layers[:-1])) + (" and " if len(layers) > 1 else "") + str(
        layers[-1])
    return (f"{ran} the {len(test.top_heads)} strongest induction heads sit in layer"
            f"{'s' if len(layers) > 1 else ''} {where} of {n_layers}. Switching them off takes "
            f"back {percent_text(lost)} of what copying saved on the second copy "
            f"({test.loss_top_off:.1f} nats a token instead of {test.loss_repeat:.1f}); as "
            f"many random heads of those layers, in {_draws(len(test.loss_random_off))}, "
            f"{random_said}.")


def notices(cfg: LMConfig, top_token: str, p_top: float, first_mass: np.ndarray,
            tokens: list[str], test: InductionTest | None) -> list[str]:
    """"What to notice", for this prompt, this model and section 4's test."""
    return [
        "One pass predicts a distribution over the next token at every position; writing "
        f"reads the last position's: here “{md_escape(top_token)}” with "
        f"{percent_text(p_top)}. Writing text is that prediction, repeated, each new token "
        "fed back in.",
        "Temperature reshapes the distribution; top-k and top-p cut its tail. At τ = 0 the "
        "text is always the same.",
        kv_notice(cfg),
        sinks_notice(first_mass, tokens),
        induction_notice(test, cfg.n_layers),
    ]


def practice(cfg: LMConfig) -> list[dict]:
    """The practice questions, with this model's numbers."""
    H, KV, d_k, group = cfg.n_heads, cfg.n_kv_heads, cfg.d_head, cfg.group
    return [
        {"q": f"This model has {H} query heads and {KV} key/value heads. How many query "
              "heads read each key/value head?", "value": float(group), "tol": 0.01,
         "a": f"{H} / {KV} = {group}: "
              + (f"query heads 1–{group} read key/value head 1, the next {group} "
                 "head 2, and so on." if 1 < KV < H else
                 f"all {H} query heads read the one key/value head." if KV == 1 else
                 "each query head reads its own key/value head: nothing is shared.")},
        {"q": f"By what number does each head divide its scores (head size {d_k})?",
         "value": float(np.sqrt(d_k)), "tol": 1e-3,
         "a": f"√d_k = √{d_k} = {np.sqrt(d_k):g}. If q and k had {d_k} independent "
              f"components of mean 0 and variance 1, q·k would have variance {d_k} and "
              f"q·k / √{d_k} variance 1 (lesson 2)."},
        {"q": "Why can changing the last token of a prompt not change the logits at any "
              "earlier position?",
         "a": "Each position's query may only look at keys at or before it (causal mask), and "
              "everything else in a layer works position by position, so nothing flows "
              "from a later token to an earlier one."},
    ]


def download_text(n_heads: int, n_tokens: int) -> str:
    """What the two downloads hold."""
    H, T = n_heads, n_tokens
    return (f"**CSV**: one layer's attention, its {H} maps stacked ({H * T} × {T}: a row per "
            "head and query token, a column per key token). **Whole trace**: every array of "
            "the forward pass (q, k, v, attentions, hidden states, logits) in NumPy's .npz "
            "format (`np.load`).")


# ---- one head by hand: each step as (sentence, formula) ------------------------------------

def norm_step(w: WorkedHead, cfg: LMConfig, token: str) -> tuple[str, str]:
    """The norm before attention, of the query token's stream."""
    stream = (f"The {term_link('residual-stream', 'stream')} of “{md_escape(token)}” "
              f"entering layer {w.layer + 1} has {cfg.d_model} numbers")
    eps = significant_text(cfg.norm_eps, 3)
    if w.norm == "rms":
        return (f"**{term_link('layer-norm', 'RMSNorm')}.** {stream}; their "
                f"root-mean-square (with ε = {eps} added under the root) is {w.root:.4f}. "
                "Each is divided by it and multiplied by the layer's gain (no mean is "
                "subtracted, no shift added, unlike LayerNorm).",
                rf"\hat x = \frac{{x}}{{\sqrt{{\tfrac{{1}}{{{cfg.d_model}}}\sum_c x_c^2 + "
                rf"\epsilon}}}} \odot g,\quad \sqrt{{\cdots}} = {w.root:.4f}")
    return (f"**{term_link('layer-norm', 'LayerNorm')}.** {stream}; their mean is "
            f"μ = {num(w.mean, 4)} and their standard deviation (with ε = {eps} added "
            f"to the variance) {w.root:.4f}. Each has μ subtracted, is divided by that, "
            "multiplied by the layer's gain g and shifted by its bias b (unlike "
            "RMSNorm, which only rescales).",
            rf"\hat x = \frac{{x - \mu}}{{\sqrt{{\tfrac{{1}}{{{cfg.d_model}}}\sum_c "
            rf"(x_c - \mu)^2 + \epsilon}}}} \odot g + b,\quad \mu = {num(w.mean, 4)},\ "
            rf"\sqrt{{\cdots}} = {w.root:.4f}")


def positions_step(w: WorkedHead, cfg: LMConfig, name: str) -> tuple[str, str | None, str]:
    """q and k, and what positions do to them: the sentence, the turned pair's formula
    (None with learned positions) and how well the recomputed numbers match the model's."""
    d_k, head = w.d_k, w.head + 1
    plus = (" + b_Q", " + b_K") if w.qkv_bias else ("", "")
    whose = (f"KV head {w.kv_head + 1} (which heads {w.kv_head * cfg.group + 1}–"
             f"{(w.kv_head + 1) * cfg.group} all read)" if cfg.group > 1 else
             f"head {head} (every head has its own keys)")
    if w.pair is None:
        return (f"**q and k.** q = x̂ W_Q{plus[0]} for head {head}, k = x̂ W_K{plus[1]} "
                f"for {whose}. Nothing is turned: {name} learned one vector for each of "
                f"its {cfg.context_length:,} positions and added it to each token's "
                "embedding before layer 1 (learned absolute positions, as lesson 9's "
                "encoder does), so the stream already carries where each token is.",
                None,
                f"q and k computed here match the model's, all {d_k} numbers of each, to "
                f"{difference_text(w.check)}.")
    layout = ("(2i, 2i + 1) of q and of k (adjacent numbers, as the model's GGUF file, the "
              "format llama.cpp stores models in, lays out W_Q and W_K)"
              if cfg.positions == "rope_pairs" else
              f"(i, i + {d_k // 2}) of q and of k (the two halves, as Hugging Face's "
              "rotate_half pairs them)")
    scaled = ("" if cfg.rope_scaling == "none" else
              f" / fᵢ, fᵢ Llama 3's scaling of long wavelengths (f{w.pair} = "
              f"{w.rope_factor:.4g})")
    a_of, b_of = w.pair_index
    said = (f"**q and k, then {term_link('rope', 'RoPE')}.** q = x̂ W_Q{plus[0]} for "
            f"head {head}, k = x̂ W_K{plus[1]} for {whose}. RoPE turns each pair "
            f"{layout} by the angle (position) × θᵢ, with θᵢ = "
            f"{cfg.rope_base:g}^(−2i/{d_k}){scaled}; pair i = {w.pair}, numbers "
            f"{a_of} and {b_of}, turns by θ = {w.theta:.4g} rad per position. "
            "Positions count from 0.")
    turns = [rf"{what}:\ ({num(t.before[0], 4)},\ {num(t.before[1], 4)})"
             rf"\ \xrightarrow{{\ \phi = {t.position} \times {w.theta:.4g} = {t.angle:.4g}\ }}\ "
             rf"({num(t.after[0], 4)},\ {num(t.after[1], 4)})"
             for what, t in (("q", w.q_turn), ("k", w.k_turn))]
    return (said, r"\begin{gathered}" + r" \\ ".join(turns) + r"\end{gathered}",
            f"The rotated pair matches the model's q and k to {difference_text(w.check)}.")


def _quotient(top: float, bottom: float, result: float, decimals: int = 4) -> int:
    """The fewest decimals (``decimals`` or more, up to 10) to write ``top`` and ``bottom``
    with so that their quotient, worked from the numbers as written, rounds to ``result``
    as written: 1 / 1.00467 gives 0.9954, where 1 / 1.0047 gives 0.9953."""
    target = shown(result, decimals)
    for places in range(decimals, 10):
        if shown(shown(top, places) / shown(bottom, places), decimals) == target:
            return places
    return 10


def score_step(w: WorkedHead) -> tuple[str, str]:
    """The score, the division by √d_k and the softmax over the causal prefix. Each "="
    joins sides equal as written, "≈" a side that was rounded; the numbers in a fraction
    carry enough digits that dividing them as written gives the result as written."""
    query, d_k = w.query + 1, w.d_k
    total = float(w.exps.sum())
    root = float(f"{np.sqrt(d_k):g}")
    score, dot, exp = float(w.scores[w.key]), w.dot, float(w.exps[w.key])
    places = _quotient(dot, root, score)
    dot_written = float(shown(dot, places))
    fraction = _quotient(exp, total, w.weight)
    exp_written, total_written = shown([exp, total], fraction)
    return (f"**Score, √{d_k} and the softmax over the prefix.** Query {query} may look at "
            f"keys 1 to {query} only (the causal mask); m = {num(w.max_score, 4)} is the "
            "largest of their scores, subtracted before e^ so that nothing overflows.",
            rf"s = \frac{{q \cdot k}}{{\sqrt{{{d_k}}}}} "
            rf"{sign([dot, np.sqrt(d_k)], [dot_written, root])} "
            rf"\frac{{{num(dot, places)}}}{{{root:g}}} "
            rf"{sign(dot_written / root, shown(score, 4))} {num(score, 4)},\qquad w = "
            rf"\frac{{e^{{s - m}}}}{{\sum_{{j' \le {query}}} e^{{s_{{j'}} - m}}}} "
            rf"{sign([exp, total], [exp_written, total_written])} "
            rf"\frac{{{num(exp, fraction)}}}{{{num(total, fraction)}}} "
            rf"{sign(exp_written / total_written, shown(w.weight, 4))} {num(w.weight, 4)}")


def model_weight_text(w: WorkedHead, checked: str) -> str:
    """The model's own weight against the one recomputed here."""
    return (f"The model's own weight: {number_text(w.model_weight, 6)} (difference "
            f"{difference_text(w.weight - w.model_weight)}: the model computes in float32, "
            f"this page in float64). {checked}")


def worked_steps(w: WorkedHead, cfg: LMConfig, token: str, name: str
                 ) -> list[tuple[str, str | None]]:
    """The head worked by hand, step by step: (sentence, formula or None) for the norm of
    the query token's stream (``token``), q and k with their positions, the score and the
    softmax, and the model's own weight; ``name`` is the model's."""
    positions, turns, checked = positions_step(w, cfg, name)
    return [norm_step(w, cfg, token), (positions, turns), score_step(w),
            (model_weight_text(w, checked), None)]


# ---- the decoder against lesson 9's encoder ------------------------------------------------

def encoder_decoder_table(cfg: LMConfig, name: str, byte_level: bool, minilm: dict) -> str:
    """A markdown table: lesson 9's encoder (``minilm``, its config.json) against this
    decoder, row by row, the decoder's column from its config's switches."""
    switches = cfg.describe()
    minilm_head = minilm["hidden_size"] // minilm["num_attention_heads"]
    pieces_said = ("byte-level BPE" if byte_level else "SentencePiece BPE (a byte as <0xNN> "
                   "when no piece fits)")
    norm_name = "RMS" if cfg.norm == "rms" else "Layer"
    output = "× the token embedding (tied)" if cfg.tied_output else "× its own output matrix"
    rows = {
        "job": ("a vector for a whole sentence", "the next token, again and again"),
        "mask": ("none: every token sees every token", "causal: only earlier tokens and itself"),
        "positions": (f"learned absolute table ({minilm['max_position_embeddings']} "
                      "positions), added to the input", switches["positions"]),
        "norm": ("LayerNorm *after* each residual add (post-LN)", switches["norm"]),
        "feed-forward": (f"GELU, {minilm['intermediate_size']} hidden units",
                         switches["feed-forward"]),
        "heads": (f"{minilm['num_attention_heads']} heads of {minilm_head}, each with its own "
                  "K and V", switches["attention"]),
        "biases": ("on every linear map and norm", switches["biases"]),
        "layers, d_model": (f"{minilm['num_hidden_layers']}, {minilm['hidden_size']}",
                            f"{cfg.n_layers}, {cfg.d_model}"),
        "tokenizer": (f"WordPiece, {minilm['vocab_size']:,} pieces",
                      f"{pieces_said}, {cfg.vocab_size:,} pieces (never unknown); BOS "
                      "(beginning-of-sequence) token: "
                      f"{switches['BOS token']}"),
        "output": ("mean of the last layer's vectors over the tokens",
                   f"logits = the last token's final state, {norm_name}Norm-normalised, "
                   f"{output}"),
    }
    return (f"| | MiniLM (lesson 9): an encoder | {name} (here): a decoder, "
            f"{md_escape(switches['family'])} family |\n|---|---|---|\n"
            + "\n".join(f"| {row} | {enc} | {dec} |" for row, (enc, dec) in rows.items()))


def formula_note(cfg: LMConfig) -> str:
    """The feed-forward network's activation, defined under the formula that uses it."""
    if cfg.mlp == "swiglu":
        return ("x̂ is the stream entering the feed-forward half, normalised by that half's "
                "own RMSNorm, with its own gain. "
                "SiLU(z) = z·σ(z) = z / (1 + e^(−z)), applied to each number; ⊙ multiplies "
                "two vectors number by number (the gated feed-forward network SwiGLU).")
    return ("x̂ is the stream entering the feed-forward half, normalised by that half's "
            "own LayerNorm, with its own gain and bias. "
            "GELU(z) = z·Φ(z), with Φ the standard normal distribution function, applied to "
            "each number; this model computes it by its tanh approximation, "
            "½z(1 + tanh(√(2/π)(z + 0.044715z³))).")


def decoder_formula(cfg: LMConfig) -> str:
    """The decoder's equations in LaTeX, with the model's own norm, feed-forward network,
    positions and output matrix."""
    norm = r"\mathrm{RMSNorm}" if cfg.norm == "rms" else r"\mathrm{LayerNorm}"
    ffn = (r"W_2\big(\mathrm{SiLU}(W_g \hat x) \odot W_u \hat x\big)" if cfg.mlp == "swiglu"
           else r"W_2\,\mathrm{GELU}(W_1 \hat x + b_1) + b_2")
    formula = ([r"x_t = E[\text{token}_t] + P[t]"] if cfg.positions == "learned" else []) + [
        rf"x \leftarrow x + \mathrm{{Attn}}({norm}(x)),\quad x \leftarrow x + {ffn}",
        rf"p(\text{{next}}) = \mathrm{{softmax}}\big({norm}(x_T)\, "
        + (r"E^\top" if cfg.tied_output else r"W_U") + r" / \tau\big)"]
    # one part a line: on one line even SmolLM2's ran past a projector's width (1280 px)
    return r"\begin{gathered}" + r" \\ ".join(formula) + r"\end{gathered}"
