"""Lesson 13's sentences that depend on its numbers, as plain functions of them.

Each is chosen by the numbers it is given (a read is "exact" only when its leak is 0, a
rule "holds" a count only when its recall is at least GOOD there), so that the page never
states what these settings did not show.
"""

from __future__ import annotations

import numpy as np

from attncore.memory import SOFTMAX_SCALE, RecallCurve
from attncore.memory.by_hand import WorkedMemory
from attncore.memory.hybrid import CacheAgainstState, HybridConfig, HybridMemory
from attncore.memory.leak import LeakCurve
from attncore.memory.rules import Crosstalk
from pages.ui.arithmetic import equals, num, shown, sign
from pages.ui.glossary import term_link
from pages.ui.numbers import (
    bytes_text,
    number_text,
    percent_text,
    ratio_text,
    significant_text,
)

GOOD = 0.9  # a recall of at least 90% counts as holding the pairs
NAMES = {"softmax": "softmax attention", "linear": "linear attention",
         "delta": "the delta rule", "gated_delta": "gated delta"}
SUB = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def sub(name: str, i: int) -> str:
    return f"{name}{str(i).translate(SUB)}"


# --- 1 · Memory that grows against memory that doesn't ---------------------------------------

def state_cache_text(r: CacheAgainstState, model: str, context: int) -> str:
    """The model's cache against a state of the same width, from the numbers drawn."""
    at_context = r.per_token * context
    shared = (f"S is built from keys and values only, so the {r.heads} query heads, which "
              f"share {r.kv_heads} KV heads, share {r.kv_heads} states a layer"
              if r.heads != r.kv_heads else
              f"each of the {r.heads} query heads has its own keys and values, so its own "
              "state")
    return (
        f"{model}'s {term_link('kv-cache', 'KV cache')} (lesson 11's formula) holds "
        f"2 · {r.layers} layers · {r.kv_heads} KV heads · {r.d_head} · {r.bytes_per_number} "
        f"bytes = {r.per_token:,} bytes a token, in float32 as lesson 10 runs it. "
        f"{term_link('linear-attention', 'Linear-attention')} layers with the same heads keep "
        f"one {r.d_head} × {r.d_head} state per KV head: {shared}. All {r.layers} layers "
        f"keep {r.layers} · {r.kv_heads} · "
        f"{r.d_head} · {r.d_head} = {r.state_numbers:,} numbers, {bytes_text(r.state_bytes)}, "
        f"whatever the length. From {r.crossover:,} tokens on the cache is at least as large "
        f"(a token adds 2 · {r.d_head} numbers per KV head, a state holds {r.d_head} · "
        f"{r.d_head}); at the model's longest context, {context:,} tokens, it holds "
        f"{bytes_text(at_context)}, {ratio_text(at_context / r.state_bytes)} times the states "
        "of all its layers.")


def layout_text(c: HybridConfig) -> str:
    """The hybrid's layers, read from its config."""
    every = c.full_attention_interval
    blocks, rest = divmod(c.num_hidden_layers, every)
    pattern = (f"{blocks} × ({every - 1} × Gated DeltaNet + 1 full attention)"
               + (f" + {rest} × Gated DeltaNet" if rest else ""))
    full = [i + 1 for i, kind in enumerate(c.layer_types) if kind == "full_attention"]
    return (f"Layer i (from 0) is full attention when (i + 1) % {every} = 0: layers "
            f"{', '.join(map(str, full[:3]))}, …, {full[-1]} (counted from 1), "
            f"{c.full_layers} of {c.num_hidden_layers}. The layout is {pattern}.")


def hybrid_text(m: HybridMemory) -> str:
    """What the hybrid keeps at each length against full attention in every layer."""
    c = m.config
    parts = []
    for i, t in enumerate(m.tokens):
        parts.append(f"at {t:,} tokens it keeps {bytes_text(m.total_bytes[i])} against "
                     f"{bytes_text(m.everywhere_bytes[i])} with full attention in all "
                     f"{c.num_hidden_layers} layers ({ratio_text(m.saving[i])} times less)")
    return (f"The {c.full_layers} full-attention layers' KV cache holds 2 · {c.full_layers} · "
            f"{c.num_key_value_heads} · {c.head_dim} · {c.bytes_per_number} = "
            f"{c.kv_numbers_per_token * c.bytes_per_number:,} bytes a token; the "
            f"{c.linear_layers} Gated DeltaNet layers' states, {c.linear_layers} · "
            f"{c.linear_num_value_heads} value heads · {c.linear_key_head_dim} · "
            f"{c.linear_value_head_dim} = {c.state_numbers:,} numbers, take "
            f"{bytes_text(m.state_bytes)} at any length. So " + "; ".join(parts) + ".")


def left_out_text(m: HybridMemory) -> str:
    """What the count leaves out, with the part it can compute."""
    c = m.config
    return (f"Counted: batch 1, {c.bytes_per_number} bytes a number ({c.torch_dtype}, as the "
            f"weights). Included, computed: each Gated DeltaNet layer's short convolution "
            f"keeps its last {c.linear_conv_kernel_dim} − 1 inputs of {c.conv_channels:,} "
            f"channels, {bytes_text(m.conv_bytes)} in all. Left out: the weights, the "
            "activations of the pass, and that kernels may keep the states in float32 "
            f"(twice the bytes: {bytes_text(2 * m.state_bytes)}).")


# --- 2 · Write and read, by hand ------------------------------------------------------------

def exact(x: float) -> str:
    """A number of the worked example, which has at most two decimals: as it is (2.6)."""
    return significant_text(float(x), 6)


def exact_matrix(m) -> str:
    """A matrix (or a column, given (d, 1)) of the worked example as a LaTeX bmatrix."""
    rows = [" & ".join(exact(x) for x in row) for row in np.atleast_2d(m)]
    return r"\begin{bmatrix}" + r" \\ ".join(rows) + r"\end{bmatrix}"


def write_latex(w: WorkedMemory, t: int) -> str:
    """Write t (from 0): the outer product and the state after it."""
    a = t + 1
    before = "" if t == 0 else rf"S_{{{t}}} + "
    return (rf"v_{{{a}}} k_{{{a}}}^\top = {exact_matrix(w.values[t][:, None])}"
            rf"{exact_matrix(w.keys[t])} = {exact_matrix(w.outer[t])}, \qquad "
            rf"S_{{{a}}} = {before}v_{{{a}}} k_{{{a}}}^\top = {exact_matrix(w.states[t])}")


def linear_read_latex(w: WorkedMemory) -> list[str]:
    """S q = Σ (k_t · q) v_t, every term written out: the dot products, then the sum."""
    j = w.query + 1
    terms = " + ".join(rf"{exact(s)}\,{exact_matrix(v[:, None])}"
                       for s, v in zip(w.similarities, w.values, strict=True))
    dots = r",\quad ".join(rf"k_{{{t + 1}}}\cdot q = {exact(s)}"
                           for t, s in enumerate(w.similarities))
    return [rf"q = k_{{{j}}}:\qquad {dots}",
            rf"S_3\, q = \textstyle\sum_t (k_t \cdot q)\, v_t = {terms} = "
            rf"{exact_matrix(w.linear_read[:, None])}"]


def softmax_read_latex(w: WorkedMemory) -> list[str]:
    """The scores, their exponentials, the weights and the read, written out."""
    scores = ", ".join(exact(s) for s in w.scores)
    exps = ", ".join(num(e, 3) for e in w.exponentials)
    total = float(np.sum(w.exponentials))
    weights = ", ".join(num(x, 3) for x in w.weights)
    written = shown(w.weights, 3) @ w.values  # (n,) x (n, d_v): the sum as written
    terms = " + ".join(rf"{num(x, 3)}\,{exact_matrix(v[:, None])}"
                       for x, v in zip(w.weights, w.values, strict=True))
    return [
        rf"c\,(k_t \cdot q) = {exact(w.scale)} \times "
        rf"({', '.join(exact(s) for s in w.similarities)}) = ({scores})",
        rf"e^{{c\,k_t \cdot q}} {equals(w.exponentials, 3)} ({exps}), \qquad "
        rf"\textstyle\sum_s e^{{c\,k_s \cdot q}} {equals(total, 3)} {num(total, 3)}",
        rf"w_t = \frac{{e^{{c\,k_t\cdot q}}}}{{\sum_s e^{{c\,k_s\cdot q}}}}:\quad "
        rf"w {equals(w.weights, 3)} ({weights})",
        rf"\textstyle\sum_t w_t v_t {equals(w.weights, 3)} {terms} "
        rf"{sign(written, shown(w.softmax_read, 3))} "
        rf"{exact_matrix(shown(w.softmax_read, 3)[:, None])}",
    ]


def by_hand_text(w: WorkedMemory) -> str:
    """Which read is nearer the stored value, and why, from the numbers."""
    j = w.query + 1
    wanted = f"{sub('v', j)} = ({', '.join(exact(x) for x in w.wanted)})"
    others = [(t + 1, s) for t, s in enumerate(w.similarities) if t != w.query and s != 0]
    if not others:
        linear = (f"Linear attention reads {wanted} exactly: no other key overlaps "
                  f"{sub('k', j)} (every other k · q is 0).")
    else:
        leaks = " + ".join(f"{exact(s)} {sub('v', t)}" for t, s in others)
        linear = (f"Linear attention reads {wanted} plus a leak of {leaks}, "
                  f"of length {significant_text(w.linear_error, 3)}: the other keys that overlap "
                  f"{sub('k', j)} add their values in proportion to the overlap, whatever the "
                  "scale.")
    top = float(np.max(np.delete(w.weights, w.query)))
    soft = (f"Softmax attention's read is {significant_text(w.softmax_error, 3)} away from "
            f"{sub('v', j)}: with c = {exact(w.scale)} its weight on {sub('k', j)} is "
            f"{significant_text(w.weights[w.query], 3)} and on any other key at most "
            f"{significant_text(top, 3)}.")
    if w.softmax_error < w.linear_error:
        verdict = "Here the softmax is nearer the stored value."
    elif w.softmax_error > w.linear_error:
        verdict = ("Here linear attention is nearer: at this c the softmax still spreads "
                   "weight over every key; a larger c sharpens it, and nothing sharpens this "
                   "bare linear read (no feature map, no normaliser).")
    else:
        verdict = "Here the two are as near."
    return f"{linear} {soft} {verdict}"


# --- 3 · How much a fixed state can hold ------------------------------------------------------

def holds_up_to(curve: RecallCurve) -> int | None:
    """The largest count such that every count up to it recalls at least GOOD (None if the
    first does not)."""
    below = np.flatnonzero(curve.mean_recall < GOOD)
    if below.size == 0:
        return int(curve.pair_counts[-1])
    return None if below[0] == 0 else int(curve.pair_counts[below[0] - 1])


def recall_text(curves: dict) -> str:
    """Each rule's recall, said from its curve."""
    first = next(iter(curves.values()))
    last = int(first.pair_counts[-1])
    said = []
    for rule, curve in curves.items():
        holds = holds_up_to(curve)
        at_last = percent_text(float(curve.mean_recall[-1]))
        if holds == last:
            said.append(f"{NAMES[rule]} recalls at least {GOOD:.0%} at every count up to "
                        f"{last} ({at_last} at {last})")
        elif holds is None:
            said.append(f"{NAMES[rule]} recalls under {GOOD:.0%} from "
                        f"{int(curve.pair_counts[0])} pair on ({at_last} at {last})")
        else:
            said.append(f"{NAMES[rule]} recalls at least {GOOD:.0%} up to {holds} "
                        f"pair{'s' * (holds > 1)} and "
                        f"{at_last} at {last}")
    return (f"At d_k = {first.d_k} (a state of {first.d_v} × {first.d_k} = "
            f"{first.d_v * first.d_k:,} numbers), " + "; ".join(said) + ". Softmax attention's "
            f"cache keeps every pair: n ({first.d_k} + {first.d_v}) numbers, "
            f"{last * (first.d_k + first.d_v):,} at {last} pairs." + delta_text(curves))


def delta_text(curves: dict) -> str:
    """The delta rule against linear attention at n = d_k pairs, if both were measured
    there: why correcting can recall less (its writes clear along overlapping keys)."""
    linear, delta = curves.get("linear"), curves.get("delta")
    if linear is None or delta is None or linear.d_k not in linear.pair_counts:
        return ""
    at = int(np.flatnonzero(linear.pair_counts == linear.d_k)[0])
    lin, dlt = float(linear.mean_recall[at]), float(delta.mean_recall[at])
    said = (f" At n = d_k = {linear.d_k} pairs the delta rule (β = {delta.beta:g}) recalls "
            f"{percent_text(dlt)} against linear attention's {percent_text(lin)}")
    if delta.beta == 0:
        return said + ": with β = 0 it writes nothing at all."
    if dlt < lin:
        return said + (": each of its writes first clears what the state held along the new "
                       "key (β of it), and random keys overlap, so it also clears part of the "
                       "earlier pairs. Correcting pays where a key comes back (section 4).")
    return said + "."


def leak_text(leak: LeakCurve, read: Crosstalk, n: int) -> str:
    """The leak of one read and of all reads, against its root-mean-square size."""
    d_k = leak.d_k
    if n == 1:
        one = "With one pair stored, reading k₁ gives v₁ exactly: there is nothing to leak."
    else:
        largest = float(np.max(np.abs(np.delete(read.similarities, 0))))
        one = (f"Reading k₁ after n = {n} pairs, the other {n - 1} keys' overlaps with k₁ "
               f"(at most {significant_text(largest, 2)} in size) add a leak "
               f"{significant_text(read.leak_ratio, 3)} times as long as v₁.")
    at = leak.as_long_at
    measured = (f"Over every read, the mean leak is at least as long as the value from "
                f"n = {at} on, of the counts measured" if at is not None else
                f"Over every read, the mean leak stays shorter than the value at every count "
                f"measured, up to {int(leak.pair_counts[-1])}")
    return (f"{one} {measured}; its root-mean-square size √((n − 1)/d_k) reaches 1 at "
            f"n = d_k + 1 = "
            f"{d_k + 1}. A state has d_k = {d_k} directions for keys: past {d_k} keys no "
            "choice of keys keeps them all orthogonal, and the reads blur.")


# --- 4 · Replace, don't add ----------------------------------------------------------------------

#: The reads of a key written twice are combinations of the three values, found by least
#: squares: exact to about 1e-16, rounded to this many decimals before they are shown.
MIX_DECIMALS = 12


def mix(x: float) -> str:
    """A coefficient of a read on one value, to 2 decimals, least squares' last bits dropped
    (never "-0.00" for a coefficient that is 0)."""
    return number_text(float(np.round(x, MIX_DECIMALS)) + 0.0, 2)


def twice_text(w: dict, alpha: float) -> str:
    """What each rule reads at the key written twice, from the coefficients."""
    lin, delta, gated = w["linear"].at_twice, w["delta"].at_twice, w["gated_delta"].at_twice
    soft = w["softmax"].at_twice
    other = w["gated_delta"].at_other[0]
    text = (f"At k, linear attention reads {mix(lin[1])} v_old + {mix(lin[2])} v_new: it adds, "
            f"and the old value stays. The {term_link('delta-rule', 'delta rule')} (β = 1) "
            f"reads {mix(delta[1])} v_old + {mix(delta[2])} v_new: before writing, it asks the "
            "state what k holds (v_old) and writes only the difference v_new − v_old, so the "
            "new value replaces the old. Softmax attention (its scores times "
            f"{SOFTMAX_SCALE:g}, as in section 3) reads {mix(soft[1])} v_old + "
            f"{mix(soft[2])} v_new: the two copies of k score the same, so it averages them. ")
    if alpha == 1:
        return text + ("With α = 1 gated delta is the delta rule: it reads "
                       f"{mix(gated[2])} v_new, and the other pair is kept whole "
                       f"({mix(other)} v_other).")
    fade = ("forgotten altogether: α = 0 multiplied the state by 0 before each later write"
            if alpha == 0 else
            f"kept at {significant_text(other, 2)} = α² of it: each of the two later writes "
            "multiplied the state by α first")
    return text + (f"{term_link('gated-deltanet', 'Gated delta')} with α = {alpha:g} reads "
                   f"{mix(gated[2])} v_new at k, and the pair written before the two copies is "
                   f"{fade}.")


# --- 5 · Trained ---------------------------------------------------------------------------

def trained_text(result) -> str:
    """The two trained models' recall and memory, from the test."""
    pairs = result.pairs
    soft, lin = result.accuracy["softmax"], result.accuracy["linear"]
    first, last = int(pairs[0]), int(pairs[-1])
    state = int(result.state_numbers["linear"][0])
    cache = int(result.state_numbers["softmax"][-1])
    text = (f"With {first} pairs the softmax model recalls {percent_text(soft[0])} and the "
            f"linear one {percent_text(lin[0])}; with {last} pairs, {percent_text(soft[-1])} "
            f"and {percent_text(lin[-1])} (chance: 1/128, "
            f"{significant_text(100 / 128, 2)}%). ")
    if np.all(np.diff(lin) < 0):
        text += "The linear model's recall falls at every step up in the number of pairs. "
    gap = soft - lin
    if np.all(gap > 0):
        text += "The softmax model is ahead at every number of pairs tested. "
    text += (f"The linear model keeps {state:,} numbers (d_model · d_k) whatever the "
             f"number of pairs; the softmax model's cache keeps {cache:,} at {last} pairs")
    if cache > state:
        text += (f", {ratio_text(cache / state)} times as many. So the test compares a "
                 "memory that grows with a fixed one, not only a softmax with none: recall "
                 "needs room, and Zoology and Based (Arora et al. 2023, 2024) find that "
                 "a recurrent model's recall follows the size of its state.")
    else:
        text += ", no more than the state."
    return text


def conclusion(c: HybridConfig) -> str:
    """The lesson's conclusion, true at every setting: the hybrid's share is its config's."""
    share = c.full_layers / c.num_hidden_layers
    return (f"**What a linear layer buys:** a {term_link('recurrent-state', 'state')} of "
            "fixed size, so memory that does not grow with the text, and a cost per new token "
            "that does not grow either (linear time over a text). **What it loses:** exact "
            "recall of more pairs than it has room for. A state of d_v × d_k numbers holds "
            "about d_k pairs apart; past that every read takes in the others (sections 3 and "
            "5), as lesson 0's fixed-size vector did. Recall needs room: a memory that grows "
            "with the text, as softmax attention's KV cache does, or a larger state (Zoology "
            "and Based, Arora et al. 2023, 2024: recall follows the state's size). "
            f"**So released {term_link('hybrid', 'hybrids')} mix them:** "
            f"{c.name} keeps full attention in {c.full_layers} of its "
            f"{c.num_hidden_layers} layers ({percent_text(share)}, full_attention_interval = "
            f"{c.full_attention_interval}): those layers keep every pair, with a KV cache "
            f"{percent_text(share)} the size of full attention everywhere, and its "
            f"{c.linear_layers} Gated DeltaNet layers carry the rest. Kimi Linear also keeps "
            "one layer in four full, of multi-head latent attention (MLA), and makes the "
            "other three Kimi Delta Attention: Gated DeltaNet with a decay per channel of the "
            "key instead of one α per head.")


# --- The closing notes ----------------------------------------------------------------------

NOTICE = [
    "A KV cache grows by the same number of bytes with every token; a linear-attention, "
    "delta-rule or Gated DeltaNet state keeps d_v × d_k numbers per head whatever the "
    "length.",
    "Linear attention is softmax attention with the softmax taken out. In the bare form this "
    "lesson uses (its equations as the DeltaNet papers write them, without their feature "
    "maps) the weights are the dot products k · q "
    "themselves, unnormalised, and nothing sharpens them; Katharopoulos et al. first pass q "
    "and k through a feature map φ and divide by φ(q) · Σ φ(k), and a feature map such as "
    "Based's Taylor expansion of exp can sharpen the weights.",
    "A read of linear attention is the wanted value plus every other value weighted by its "
    "key's overlap with the query: with more pairs than d_k, keys must overlap.",
    "The delta rule writes β times the difference between the new value and what the state "
    "already says about the key: with β = 1 and a unit-length key, a key written again is "
    "replaced, not added to; with a smaller β the old value is only partly replaced. Gated "
    "delta also "
    "shrinks the whole state by α at each write: old pairs fade.",
]


def trained_notice(result) -> str | None:
    """What to notice in section 5, from the test (None before the models are trained)."""
    if result is None:
        return None
    soft, lin = result.accuracy["softmax"][-1], result.accuracy["linear"][-1]
    last = int(result.pairs[-1])
    said = (f"Trained on the same task, at {last} pairs the softmax model recalls "
            f"{percent_text(soft)} and the linear one {percent_text(lin)}")
    if soft > lin:
        return said + ": the gap hybrids close by keeping some full-attention layers."
    return said + ": at these settings the softmax model is not ahead; train longer."

TRY_THIS = [
    "In section 2, read with q = k₂: its key overlaps no other, and linear attention reads "
    "its value exactly. Then set c to 1: which read is nearer now?",
    "In section 3, set d_k to 64 and to 4: where does linear attention's recall start to "
    "fall, against d_k?",
    "Set β to 0.5, then α to 0.5: what does forgetting do to recall when many pairs are "
    "stored?",
    "In section 4, set α to 0: gated delta forgets everything written before the last "
    "write.",
    "Train with d_k = 2 and with d_k = 16: how does the linear model's recall follow the "
    "size of its state?",
]


def practice(c: HybridConfig) -> list[dict]:
    """The practice questions, with the hybrid's numbers."""
    t = c.max_position_embeddings
    kv = c.kv_numbers_per_token * c.bytes_per_number * t
    per_head = c.linear_key_head_dim * c.linear_value_head_dim
    return [
        {"q": f"How many GB (10⁹ bytes) does {c.name}'s KV cache hold at {t:,} tokens, in its "
              f"{c.full_layers} full-attention layers ({c.num_key_value_heads} KV heads of "
              f"{c.head_dim}, {c.bytes_per_number} bytes a number)?",
         "value": kv / 1e9, "tol": 0.01,
         "a": f"2 · {c.full_layers} · {c.num_key_value_heads} · {c.head_dim} · {t:,} · "
              f"{c.bytes_per_number} = {kv:,} bytes ≈ {kv / 1e9:.2f} GB."},
        {"q": f"One Gated DeltaNet head has d_k = {c.linear_key_head_dim} and d_v = "
              f"{c.linear_value_head_dim}. How many numbers does its state hold after 10,000 "
              "tokens?",
         "value": float(per_head), "tol": 0.5,
         "a": f"{c.linear_key_head_dim} × {c.linear_value_head_dim} = {per_head:,}, after any "
              "number of tokens."},
        {"q": "A key k of length 1 is written with v = (1, 0), then again with v = (0, 1). "
              "What does linear attention read at k? And the delta rule with β = 1?",
         "a": "Linear attention adds: S k = (1, 0) + (0, 1) = (1, 1). The delta rule first "
              "reads S k = (1, 0), writes (0, 1) − (1, 0) = (−1, 1) along k, and reads "
              "(1, 0) + (−1, 1) = (0, 1): the new value."},
        {"q": "With random unit keys in d_k = 16 dimensions, each overlap k_t · k_j has "
              "variance 1/16. At how many pairs n does the leak's root-mean-square length "
              "√((n − 1)/d_k) reach the value's length 1?",
         "value": 17.0, "tol": 0.5, "a": "n − 1 = d_k = 16, so n = 17."},
    ]
