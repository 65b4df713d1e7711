"""Lesson 11's sentences that depend on its measurements, as plain functions of them.

Each is chosen by the numbers it is given (the cached time is called nearly flat only when
every round's fit says so, the sinks are said to take more than, about as much as or less
than token 1 held by comparing the two shares), so that the page never states what this run
did not measure.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from attncore import cost
from attncore.lm import LMConfig
from attncore.lm import inference as inf
from pages.ui.glossary import term_link
from pages.ui.labels import md_escape
from pages.ui.numbers import bytes_text, difference_text, number_text, percent_text, said_number

#: Bytes of one number in the cache the model here keeps (float32).
FLOAT32 = 4

#: Two shares of weight within this fraction of each other are "about as much".
ABOUT_THE_SAME = 0.1

TRY_THIS = [
    "Set the context to 131,072 tokens and the batch to 64: which published models' "
    "caches fit in 80 GB, and which of them were trained on that length?",
    "Set S to 0, then 1: how much does one sink token give back?",
    "Make the window as large as the text: the window is the causal mask again.",
    "Set the keys per block to 1: the online softmax becomes a running sum, one key at "
    "a time.",
]

SLIDING_WINDOW = (
    f"A {term_link('sliding-window', 'sliding window')} here is causal, of size W: each token "
    "sees itself and the W − 1 tokens before it, never a later one (lesson 3's local window "
    "is symmetric instead: radius r on both sides). Sinks S are the first tokens, kept "
    f"visible to every later token (an {term_link('attention-sink', 'attention sink')}, "
    "measured below).")

WHERE_TILING_PAYS = (
    "**Where tiling pays off.** On a CPU the caches are managed by the hardware and BLAS "
    "already works in blocks, so the n × n matrix costs memory but little time; and NumPy "
    "runs each tile as a separate call from Python. FlashAttention pays off on a GPU, where "
    "one fused kernel keeps each tile in the fast on-chip memory and the slow memory's "
    "bandwidth is the limit: it moves far fewer numbers (the chart above), and it lets n "
    "grow where the n × n matrix would not fit.")

DOWNLOADS_NOTE = (
    "**CSV**: the online softmax's running maximum m of every query row (a row per token) "
    "after each key block (a column per block), for the head and blocks of section 4. "
    "**Whole trace**: every measurement the page shows (the cache comparison, the merged "
    "heads, the window, the online softmax's states and output), as JSON.")


def per_token_bytes(cfg: LMConfig) -> int:
    """Bytes the cache holds for one token here: 2 · L · n_KV · d_k · 4 (float32)."""
    return 2 * cfg.n_layers * cfg.n_kv_heads * cfg.d_head * FLOAT32


# ---- 1. the KV cache ----------------------------------------------------------------------

def written_text(result: inf.CacheComparison, written: str) -> str:
    """What was written with the cache and without, and how far their logits differ."""
    steps = len(result.ids_cached)
    apart = next((n for n, (a, b) in enumerate(zip(result.ids_cached, result.ids_uncached,
                                                     strict=True), start=1) if a != b), None)
    return (f"Written with the cache: **{md_escape(written)}**. Without it: "
            + ("**the same tokens**" if result.same_tokens else
               f"**other tokens from step {apart} on**")
            + f" (the largest difference of any logit over the {steps} steps: "
            f"{difference_text(result.max_logit_diff)}"
            + ("; the two runs add the same float32 numbers in other orders, so they differ "
               "by rounding only)." if result.max_logit_diff and result.same_tokens else ")."))


def cache_intro(cfg: LMConfig) -> str:
    """What the cache holds, for the formula below it."""
    return (f"The KV cache holds, for each of the {cfg.n_layers} layers, a key and a value "
            f"vector of d_k = {cfg.d_head} numbers per "
            f"{term_link('n_KV', 'key/value head')} (n_KV = {cfg.n_kv_heads}) and for each of "
            "the T tokens, each number of b bytes:")


def cache_latex(cfg: LMConfig, tokens: int, formula: int) -> str:
    """The cache's size after ``tokens`` tokens, by the formula."""
    return (rf"2 \cdot L \cdot n_{{KV}} \cdot d_k \cdot T \cdot b = 2 \cdot {cfg.n_layers} "
            rf"\cdot {cfg.n_kv_heads} \cdot {cfg.d_head} \cdot {tokens} \cdot {FLOAT32} = "
            rf"{formula:,}\ \text{{bytes}}")


def held_text(result: inf.CacheComparison, cfg: LMConfig) -> str:
    """The bytes the cache holds after the last step, measured against the formula."""
    held, formula = result.cache_bytes, result.cache_bytes_formula
    return (f"After the last step the cache holds the keys and values of "
            f"{int(result.contexts[-1])} tokens: **{held:,} bytes** measured on the arrays "
            "themselves, " + ("equal to the formula." if held == formula else
                              f"against {formula:,} from the formula.")
            + f" That is {per_token_bytes(cfg):,} bytes per token, in float32.")


def cache_caption(when: str, result: inf.CacheComparison) -> str:
    """When the comparison was timed (``when``: a caption's opening words) and its times."""
    return (f"{when}, {len(result.ids_cached)} steps: {result.seconds_cached:.2f} s with the "
            f"cache, {result.seconds_uncached:.2f} s without (wall time on this machine, which "
            "others share: another run will differ).")


def held_intro(result: inf.CacheComparison, cfg: LMConfig, newest: str) -> str:
    """What the table of the cache's rows holds, and why a token "from step t" is a row the
    diagram says was appended at step t + 1: a token written at step t enters the cache when
    it is fed back in at step t + 1 (``newest``: the last row's readable piece)."""
    held, prompt, steps = int(result.contexts[-1]), result.prompt_tokens, len(result.ids_cached)
    written = held - prompt  # tokens written whose keys and values the cache holds
    said = (f"The {held} tokens whose keys and values the cache holds, "
            f"{per_token_bytes(cfg):,} bytes each:")
    if written < 1:
        return said
    return ("A token written at step t enters the cache when it is fed back in, at step "
            f"t + 1: row {held} “{md_escape(newest)}”, from step {written}, was appended at "
            f"step {written + 1}, the newest row of the diagram above"
            + (f"; the token written at step {steps} is not in it yet. " if steps > written
               else ". ") + said)


def held_rows(result: inf.CacheComparison, cfg: LMConfig, tokens: list[str]) -> dict:
    """The table of the tokens whose keys and values the cache holds after the last step
    (``tokens``: their readable pieces), where each came from and the bytes held up to it."""
    held, per_token, prompt = int(result.contexts[-1]), per_token_bytes(cfg), result.prompt_tokens
    return {"position": np.arange(1, held + 1), "token": tokens,
            "from": ["prompt"] * prompt + [f"step {n}" for n in range(1, held - prompt + 1)],
            "bytes held up to here": [f"{per_token * n:,}" for n in range(1, held + 1)]}


def timing_text(times: inf.TokenTimes, cfg: LMConfig, weights_bytes: int, outweighs: int,
                served: int) -> str:
    """The time of one new token against the context, fitted per round, and from what
    context the cache outweighs the weights a step reads (``weights_bytes``; from
    ``outweighs`` tokens for one conversation; ``served`` conversations at once)."""
    lo_c, hi_c = times.cached_exponents.min(), times.cached_exponents.max()
    lo_u, hi_u = times.uncached_exponents.min(), times.uncached_exponents.max()
    longest, per_token = int(times.contexts.max()), per_token_bytes(cfg)
    return (
        f"Fitted growth, time ∝ context^k, one fit per round: with the cache k = "
        f"{number_text(lo_c, 2)} to {number_text(hi_c, 2)}"
        + (" (nearly flat here: every k below 0.2)" if hi_c < 0.2 else "")
        + f", without k = {number_text(lo_u, 2)} to {number_text(hi_u, 2)} (each step runs "
        "the whole context through the model again). "
        + ("A k below 1 without the cache comes from the fixed part of a pass (reading the "
           f"weights, the {cfg.vocab_size:,} logits), which short contexts do not hide; the "
           "attention part alone grows as context². " if lo_u < 1 else "")
        + f"With the cache each step runs one new token through the model, but its "
        f"attention still reads the keys and values of every earlier token: {per_token:,} "
        f"bytes a token of context, a part that grows linearly with it. At {longest} tokens "
        f"that is {per_token * longest / weights_bytes:.1%} of the "
        f"{weights_bytes / 1e6:.0f} MB of weights each step reads, hidden by them; from "
        f"{outweighs:,} tokens on the cache outweighs the weights, and reading it dominates a "
        "step whose speed is set by memory, as generation's usually is"
        + (f". That is longer than the {cfg.context_length:,} tokens this model was trained "
           f"for, but a server writing for {served} conversations at once reads {served} "
           f"caches and the weights once a step: the caches outweigh the weights from "
           f"{-(-outweighs // served):,} tokens on" if outweighs > cfg.context_length else "")
        + ". That is why grouped-query heads (section 2) matter.")


# ---- 2. grouped-query attention -----------------------------------------------------------

def sharing_text(cfg: LMConfig, context: int, batch: int) -> str:
    """This model's cache at ``context`` tokens and ``batch`` conversations, in fp16,
    against what it would take with other numbers of key/value heads."""
    H, KV = cfg.n_heads, cfg.n_kv_heads
    gqa, mha, mqa = (bytes_text(inf.cache_bytes(cfg, context, batch, kv, 2))
                     for kv in (KV, H, 1))
    if KV == H:
        said = (f"{mha} in fp16: each of its {H} heads has its own keys and values "
                f"(multi-head attention), so there is nothing shared. "
                f"{term_link('gqa', 'Grouped-query attention')} would let several query heads "
                f"read one key/value head; with one for all {H} (multi-query) the cache "
                f"would take {mqa}, {H}× less.")
    elif KV == 1:
        said = (f"{gqa} in fp16 with its one KV head, which all {H} query heads read "
                f"({term_link('gqa', 'multi-query attention')}), against {mha} if each had "
                f"its own ({H}× more).")
    else:
        said = (f"{gqa} in fp16 with its {KV} KV heads, against {mha} if each of its "
                f"{H} query heads had its own ({H // KV}× more: "
                f"{term_link('gqa', 'grouped-query attention')} shares each key/value head "
                f"among {H // KV} query heads).")
    return f"At {context:,} tokens and a batch of {batch}, this model's cache takes {said}"


def cache_rows(cfg: LMConfig, name: str, context: int, batch: int) -> list[dict]:
    """The cache table: the model ``name`` as trained and as it would be with every head
    its own K and V (MHA) or one K and V for all (MQA), then the published models; ✱ marks
    a rolling cache (a sliding window), † a context longer than the model was trained for."""
    H, KV, L, d_k = cfg.n_heads, cfg.n_kv_heads, cfg.n_layers, cfg.d_head
    kinds = {H: "multi-head (MHA)", **({KV: "grouped-query (GQA)"} if 1 < KV < H else {}),
             1: "multi-query (MQA)"}
    rows = [{"model": f"{name}, {kind}" + (", as trained" if kv == KV else ""),
             "KV heads": kv, "layers": L, "head size": d_k,
             "bytes a token (fp16)": 2 * L * kv * d_k * 2,
             "cache (fp16)": bytes_text(inf.cache_bytes(cfg, context, batch, kv, 2)),
             "cache (float32, as here)": bytes_text(inf.cache_bytes(cfg, context, batch, kv,
                                                                    FLOAT32)),
             "context it was trained for": f"{cfg.context_length:,}"
             + (" †" if context > cfg.context_length else "")} for kv, kind in kinds.items()]
    return rows + [
        {"model": f"{c.name} ({c.kind})", "KV heads": c.kv_heads, "layers": c.layers,
         "head size": c.head_size, "bytes a token (fp16)": 2 * c.layers * c.kv_heads
         * c.head_size * 2,
         "cache (fp16)": bytes_text(c.cache_bytes(context, batch))
         + (" ✱" if c.tokens_held(context) < context else ""),
         "cache (float32, as here)": "—",
         "context it was trained for": f"{c.context:,}" + (" †" if context > c.context else "")}
        for c in inf.PUBLISHED]


def published_note(cfg: LMConfig, context: int) -> str:
    """Where the published rows come from, which keep a rolling cache at ``context``
    tokens (✱), and what a context longer than a model was trained for means (†, when a
    row of :func:`cache_rows` is marked)."""
    rolling = [c for c in inf.PUBLISHED if c.tokens_held(context) < context]
    beyond = context > min(cfg.context_length, *(c.context for c in inf.PUBLISHED))
    return ("The published rows are from each model's config.json (layers, attention "
            "heads, key/value heads, head size, "
            f"{term_link('sliding-window', 'sliding window')}), and the context each was "
            "trained on is from its paper or model card; caches are in fp16 (2 bytes a "
            "number), as models are usually served."
            + "".join(f" ✱ {c.name} attends through a sliding window of {c.window:,} tokens: "
                      f"its rolling cache keeps only the last {c.window:,}, so it stops "
                      f"growing there." for c in rolling)
            + (" † The context is longer than the model was trained for: its cache is what "
               "that length would take, not a length the model handles well."
               if beyond else ""))


def kv_notice(cfg: LMConfig) -> str:
    """"What to notice" about this model's key/value heads."""
    H, KV = cfg.n_heads, cfg.n_kv_heads
    return ((f"This model stores {KV} key/value head{'s' if KV > 1 else ''} for {H} query "
             f"heads: {Fraction(KV, H)} of the cache multi-head attention would need."
             if KV < H else
             f"This model stores a key and a value head for each of its {H} heads (multi-head "
             "attention): grouped-query models keep a fraction of that.")
            + (" Averaging heads after training is not the same thing: section 2 measures "
               "what it costs." if KV > 1 else " It was trained that way: sharing has to be "
               "learnt."))


def perplexity_caption(n_tokens: int, most: int, page_tokens: int, name: str,
                       cfg: LMConfig) -> str:
    """What the perplexities measure and why the page reads at most ``most`` tokens
    (``page_tokens``, or the context ``name`` was trained on when shorter)."""
    return (f"{term_link('perplexity', 'Perplexity')} = e^(mean "
            f"{term_link('cross-entropy', 'cross-entropy')}) of the model's prediction of "
            f"each of tokens 2 to {n_tokens}: how many tokens it is, on average, as unsure "
            f"between. Every measurement is one pass over the {n_tokens} tokens (about a "
            f"second for SmolLM2 here); the page reads at most {most} tokens, "
            + (f"to keep a shared server free (the command line reads up to "
               f"{inf.MAX_TOKENS})." if most == page_tokens else
               f"the context {name} was trained on"
               + ("." if cfg.uses_rope else " (its learned positions stop there).")))


def merge_text(merged: inf.MergedResult, cfg: LMConfig) -> str:
    """What averaging the KV heads into one did to perplexity."""
    KV, ratio = cfg.n_kv_heads, merged.merged / merged.gqa
    return (f"Averaging each layer's {KV} key heads (and {KV} value heads) into one is how "
            "the GQA paper starts converting a multi-head model"
            + (" such as this one" if KV == cfg.n_heads else "") + ", and it then *trains "
            f"further*. Without that training, perplexity goes from {merged.gqa:.1f} to "
            f"{merged.merged:,.1f}, {said_number(ratio)} times as high"
            + (": the model falls apart. The heads learnt different "
               "keys; sharing has to be learnt." if ratio >= 10 else
               ". The heads learnt different keys, and averaging them costs what they learnt "
               "apart; sharing has to be learnt." if ratio > 1 else "."))


# ---- 3. sliding window and sinks ----------------------------------------------------------

def way_back(result: inf.WindowResult) -> str:
    """How much of what the window cost in perplexity the sinks give back."""
    lost = result.window - result.dense
    if result.window_sinks <= result.dense:
        return ", as good as full attention or better."
    if lost <= 0:
        return ": the window alone costs nothing on this text."
    log_lost = np.log(result.window) - np.log(result.dense)  # the same on the loss's scale
    in_loss = (np.log(result.window) - np.log(result.window_sinks)) / log_lost
    return (f", {percent_text((result.window - result.window_sinks) / lost)} of the way back "
            f"in perplexity ({percent_text(in_loss)} in the loss, its logarithm).")


def window_text(result: inf.WindowResult, cfg: LMConfig) -> str:
    """The three perplexities: full attention, the window, the window with sinks."""
    return (f"Perplexity with full attention: {result.dense:.1f}. Each token seeing only "
            f"itself and the {result.window_size - 1} before it: {result.window:.1f}. The same "
            f"window plus the first {result.sinks} tokens: {result.window_sinks:.1f}"
            + way_back(result)
            + (" The tokens keep their own positions (RoPE still sees the true distances); "
               "StreamingLLM also renumbers the positions inside its cache." if cfg.uses_rope
               else " The tokens keep their own positions (each its own learned position "
               "vector)."))


def window_share(maps: np.ndarray, layer: int, rows: np.ndarray, window: int) -> float:
    """The mean weight a query row puts on its window's tokens (itself and the W − 1 before
    it), in one layer's head-averaged map (T, T)."""
    back = np.arange(window)
    return float(maps[layer][rows[:, None], rows[:, None] - back].sum(axis=1).mean())


def shift_text(result: inf.WindowResult) -> str:
    """Where the weight of token 1 goes once the window masks it out, in the layer where
    full attention puts most on it, and how much the sinks take back."""
    s, sinks, window, n_tokens = result.shift, result.sinks, result.window_size, result.tokens
    top = int(np.argmax(s.dense_first))
    gained = s.window_oldest[top] - s.dense_oldest[top]  # what the oldest kept token gained
    rows = np.arange(n_tokens - s.rows, n_tokens)  # the queries that lost the first tokens
    held = window_share(s.maps[0], top, rows, window)  # full attention, on the window
    first, on_sinks = s.dense_first[top], s.sinks_on_sinks[top]
    return (
        f"For the {s.rows} queries whose window has lost the first tokens: with full "
        f"attention layer {top + 1} puts {percent_text(first)} of its weight on token 1. "
        "Masked out, "
        + moved_text(gained, first, s.dense_oldest[top], s.window_oldest[top], held)
        + ("Set S above 0 to give the first tokens back." if not sinks else
           f"Give the first {sinks} back and they take {percent_text(on_sinks)} of the weight, "
           + sinks_against_first(on_sinks, first)))


def moved_text(gained: float, first: float, before: float, after: float,
               held: float) -> str:
    """Where token 1's weight (``first``) goes once masked out: how much the oldest token
    the window keeps gains (``gained``, from ``before`` to ``after``), in percentage points
    and as a share of what moved ("most" from half of it on, "only" below half, "none" when
    it gains nothing), the rest spreading over the window's tokens, which held ``held`` of
    the query's weight with full attention."""
    points, share = 100 * gained, gained / first if first > 0 else 0.0
    where = f"the oldest token the window keeps (from {before:.1%} to {after:.1%})"
    spread = (f"spreads over the window, onto tokens that held {percent_text(held)} of the "
              "query's weight with full attention. ")
    if round(points, 1) <= 0:
        return f"none of it moves to {where}: it all " + spread
    said = f"{points:.1f} percentage points ({percent_text(share)} of that weight)"
    if gained >= first / 2:
        return f"most of it, {said}, moves to {where}: it takes token 1's place. "
    return f"only {said} move to {where}: the rest " + spread


def sinks_against_first(on_sinks: float, first: float) -> str:
    """What the sinks take (``on_sinks``) against what token 1 held with full attention
    (``first``): more than, about as much as (within :data:`ABOUT_THE_SAME` of it) or less
    than it; the sinks are called the sink unless they take less than half of it."""
    held = f"the {percent_text(first)} token 1 held"
    if on_sinks < first / 2:
        return f"less than half of {held}."
    if abs(on_sinks - first) <= ABOUT_THE_SAME * first:
        compared = f"about as much as {held}"
    elif on_sinks > first:
        compared = f"more than {held}"
    else:
        compared = f"less than {held} but more than half of it"
    return (f"{compared}: they take its place as the "
            f"{term_link('attention-sink', 'attention sink')}, often read as a place to put "
            "weight the model has no use for.")


def distance_text(layer: int, window: int, full_share: float, windowed: float) -> str:
    """The weight on the window's tokens in ``layer`` (from 1), with full attention and
    under the window."""
    return (f"In layer {layer} the window's {window} tokens get {percent_text(full_share, 1)} "
            f"of a query's weight with full attention and {percent_text(windowed, 1)} under the "
            f"window: {100 * (windowed - full_share):.1f} percentage points more, "
            f"{said_number(windowed / full_share)} times as much, spread over them: the "
            "weight that had no other place to go.")


def window_notice(result: inf.WindowResult | None) -> str:
    """What section 3 measured (the window and sinks it measured with), for What to notice."""
    if result is None:
        return ("A model trained with full attention leans on its first tokens: section 3 "
                "measures what a sliding window costs it and what a few sinks give back.")
    said = (f"On section 3's text a window of {result.window_size} takes perplexity from "
            f"{result.dense:.1f} (full attention) to {result.window:.1f}")
    if not result.sinks:
        return said + "; with S = 0 no sink is kept: set S above 0 to see what sinks give back."
    return (said + f"; keeping the first {result.sinks} tokens visible brings it to "
            f"{result.window_sinks:.1f}" + way_back(result))


# ---- 4. FlashAttention's online softmax ---------------------------------------------------

def tiling_text(layer: int, head: int, kv_head: int, n_tokens: int,
                tiled: cost.OnlineSoftmaxTrace, block_k: int, block_q: int) -> str:
    """Where q, k and v come from, and how many scores a tile holds against the whole
    matrix (``layer``, ``head`` and ``kv_head`` from 1)."""
    T, blocks = n_tokens, tiled.key_blocks
    rows_tile = min(block_q, T)
    sizes = sorted({b - a for a, b in blocks}, reverse=True)
    blocks_said = (f"{len(blocks)} block{'s' if len(blocks) > 1 else ''} of {block_k}"
                   + (f" (the last of {sizes[-1]})" if len(sizes) > 1 else ""))
    tile = rows_tile * sizes[0]
    return (f"Layer {layer}, head {head}, on the first {T} tokens of the story: q, k and v as "
            f"the model computed them (k and v are KV head {kv_head}'s). The keys arrive in "
            f"{blocks_said}; each tile holds at most {rows_tile} × {sizes[0]} = {tile:,} scores"
            + (f", never the whole {T} × {T} matrix ({T * T:,} scores)." if tile < T * T else
               f": with both blocks as long as the text, one tile is the whole {T} × {T} "
               "matrix, and nothing is saved. Make a block smaller to see the tiling."))


def sram_label(number_bytes: int) -> str:
    """The label of the on-chip memory slider: M in KB of ``number_bytes``-byte numbers."""
    return f"On-chip memory M (KB of {number_bytes}-byte fp16 numbers) for the paper's count"


def sram_help(number_bytes: int) -> str:
    """What M counts: FlashAttention's count takes M in numbers, here of ``number_bytes``
    bytes (fp16, as in a GPU's on-chip SRAM), not the float32 numbers the rest of the page
    computes with."""
    single = np.dtype(np.float32).itemsize
    return (f"The paper counts M in numbers: 1 KB of on-chip memory holds "
            f"{1024 // number_bytes} numbers of {number_bytes} bytes (fp16, as in a GPU's "
            f"SRAM), so M KB hold M · {1024 // number_bytes} of them. The rest of this page "
            f"computes in float32 ({single} bytes a number), which would fit "
            f"{1024 // single} in 1 KB.")


def block_rows(tiled: cost.OnlineSoftmaxTrace, row: int) -> dict:
    """The table of one query row (from 0), block by block: the running maximum m, the
    factor e^(m_old − m) that rescales the sum so far ("—" before any key is seen), the
    denominator ℓ and the first number of the output so far."""
    m_row, l_row = tiled.running_max[:, row], tiled.denominator[:, row]
    prev_m = np.concatenate([[-np.inf], m_row[:-1]])
    with np.errstate(invalid="ignore"):
        rescale = np.where(np.isfinite(prev_m), np.exp(prev_m - np.where(
            np.isfinite(m_row), m_row, 0)), np.nan)
    return {"block": np.arange(1, len(tiled.key_blocks) + 1),
            "keys": [f"{a + 1}–{b}" for a, b in tiled.key_blocks],
            "m (running max)": [number_text(x, 4) for x in m_row],
            "e^(m_old − m)": ["—" if not np.isfinite(x) else number_text(x, 4)
                              for x in rescale],
            "ℓ (denominator)": [number_text(x, 4) for x in l_row],
            "o/ℓ, first number": [number_text(x, 4) for x in tiled.partial_output[:, row, 0]]}


def rescale_step(tiled: cost.OnlineSoftmaxTrace, row: int) -> tuple[str, str] | None:
    """The last block that raised query row ``row``'s maximum (after a key was seen), as a
    formula and a caption; None when no block did."""
    m_row, l_row = tiled.running_max[:, row], tiled.denominator[:, row]
    changed = [b for b in range(1, len(tiled.key_blocks)) if np.isfinite(m_row[b - 1])
               and m_row[b] > m_row[b - 1]]
    if not changed:
        return None
    b = changed[-1]
    return (rf"m' = \max({m_row[b - 1]:.4f},\ \max_j s_j) = {m_row[b]:.4f},\quad "
            rf"\ell' = e^{{{m_row[b - 1]:.4f} - {m_row[b]:.4f}}}\cdot {l_row[b - 1]:.4f}"
            rf" + \sum_j e^{{s_j - m'}} = {l_row[b]:.4f}",
            f"Block {b + 1} raised the maximum, so the sum so far, taken against the old "
            "maximum, is rescaled by e^(m_old − m) before the new terms are added; the output "
            "is rescaled the same way.")


def flash_text(gap: float, model_gap: float, n_tokens: int, d_k: int) -> str:
    """The tiled result against plain attention and against the model's own weights."""
    return (f"The tiled result against plain attention, both in float64: largest difference "
            f"{difference_text(gap)} over all {n_tokens} × {d_k} outputs (the same sums in "
            f"another order). Against the model's own float32 weights times v: "
            f"{difference_text(model_gap)}.")


def memory_text(memory: cost.TiledMemory, mib: int) -> str:
    """Peak memory of plain and tiled attention at the longest n, and their times."""
    ratio = memory.tiled_seconds / memory.plain_seconds
    return (f"At n = {memory.ns[-1]:,}: plain {memory.plain_peak[-1] / mib:.1f} MiB, tiled "
            f"{memory.tiled_peak[-1] / mib:.2f} MiB; largest difference of the outputs "
            f"{difference_text(memory.max_difference)}. Time, tiled / plain, this run: "
            + ", ".join(f"n = {n}: {r:.2f}" for n, r in zip(memory.ns, ratio, strict=True))
            + ".")


# ---- the closing notes --------------------------------------------------------------------

def notices(cfg: LMConfig, window: inf.WindowResult | None) -> list[str]:
    """"What to notice", with section 3's measurement when there is one."""
    return [
        "The KV cache changes the work, not the arithmetic: on the same tokens it gives the "
        "same logits up to rounding, but each step runs one new token through the model "
        "instead of the whole text (its attention still reads every earlier key and value), "
        "and memory grows by the same number of bytes a token.",
        kv_notice(cfg),
        window_notice(window),
        "FlashAttention's online softmax computes the same numbers as plain attention in "
        "exact arithmetic; in floating point they agree up to rounding (section 4 measures "
        "the difference), as it only changes the order of the sums, rescaling as a larger "
        "maximum arrives.",
    ]


def practice(cfg: LMConfig) -> list[dict]:
    """The practice questions, with this model's numbers."""
    L, H, KV, d_k = cfg.n_layers, cfg.n_heads, cfg.n_kv_heads, cfg.d_head
    return [
        {"q": f"How many bytes does this model's KV cache hold per token, in float32 ({L} "
              f"layers, {KV} KV heads of {d_k})?", "value": float(per_token_bytes(cfg)),
         "tol": 0.5, "a": f"2 · {L} · {KV} · {d_k} · 4 = {per_token_bytes(cfg):,} bytes."},
        {"q": f"With {H} KV heads instead of {KV}, how many times larger would the cache be?",
         "value": float(H // KV), "tol": 0.01,
         "a": f"{H} / {KV} = {H // KV}: the cache holds one key and one value vector per KV "
              "head, layer and token."} if KV < H else
        {"q": f"With 1 KV head shared by all {H} heads (multi-query) instead of {KV}, how many "
              "times smaller would the cache be?", "value": float(H), "tol": 0.01,
         "a": f"{H} / 1 = {H}: the cache holds one key and one value vector per KV head, layer "
              "and token."},
        {"q": "Why does the online softmax multiply its running sum by e^(m − m′)?",
         "a": "The terms so far were computed as e^(s − m) with the old maximum m; a new "
              "maximum m′ needs them as e^(s − m′) = e^(s − m) · e^(m − m′). The factor "
              "rescales them without going back to the old keys."},
    ]

