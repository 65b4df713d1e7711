"""The glossary: every symbol and term the lessons use, one meaning each.

The home page draws it (``show_glossary``); a lesson links a term where it first uses it
with ``term_link("entropy")``, which opens the home page at that entry in a new tab, so
the student keeps the lesson's settings. A key that is not here raises ``KeyError``: a
page cannot link to a definition that does not exist (``tests/pages/test_glossary.py``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from attncore.analysis import NEARLY_ONE_HOT

from .lessons import HOME_HREF

ANCHOR_PREFIX = "glossary-"


@dataclass(frozen=True)
class Term:
    """One entry: ``key`` (its anchor), the name shown, what it means (markdown), the
    lesson that explains it (None when it belongs to no one lesson), the other lessons that
    use it (``also``), and how the pages write it (``forms``; by default the symbols before
    the name's dash, or the name without its brackets: see :func:`written_forms`)."""

    key: str
    name: str
    meaning: str
    lesson: int | None = None
    also: tuple[int, ...] = ()
    forms: tuple[str, ...] = ()


SYMBOLS = (
    Term("T", "T — number of tokens",
         "The number of tokens in a sequence; $T_q$ and $T_k$ when queries and keys come "
         "from sequences of different lengths (cross-attention). The lessons on cost write "
         "a sequence's length n, as the literature on cost does. Never a temperature: "
         "that is τ.", 1, forms=("T", "T_q", "T_k")),
    Term("B", "B — batch size",
         "The number of sequences processed together (lesson 3's padded batch).", 3),
    Term("tau", "τ — temperature",
         "The number the scores (or a language model's logits, lesson 10) are divided by "
         "before the softmax: "
         "$\\mathrm{softmax}(s/\\tau)$. τ = 1 leaves them as they are; a small "
         "τ sharpens the weights towards the largest scores; a large τ flattens them "
         "towards uniform.", 2),
    Term("H", "H — number of heads",
         "The number of attention heads in a layer. Entropy, which some texts also write "
         "H, is written out as a word here. Lesson 4 numbers a head with an index h "
         "($W_Q^h$, $\\mathrm{head}_h$), not the encoder state $h_j$ of lessons 0 and 6.", 4),
    Term("d_model", "d_model — width of the model",
         "The number of components of each token's vector entering and leaving an attention "
         "layer (its dimension; a vector's length, here, is its norm).", 4),
    Term("d_k", "d_k, d_v — width of a key, of a value",
         "The number of components of a query or key vector ($d_k$: they must match for a "
         "dot product) and of a value vector ($d_v$). In multi-head attention each head has "
         "$d_k = d_v = d_\\text{model} / H$, this app's convention (and the original "
         "Transformer's), not a law.", 1),
    Term("QKV", "Q, K, V — queries, keys, values",
         "Matrices with one row per token: Q ($T_q × d_k$), K ($T_k × d_k$), V "
         "($T_k × d_v$). "
         "A query is compared with every key; the weights mix the values. A row of each is "
         "a query q, a key k, a value v. Lesson 6's additive score $v^\\top \\tanh(\\cdot)$ "
         "uses v for a learned vector of the score, as Bahdanau et al. do (lesson 0 writes "
         "it $v_a$, with $W_a$ and $U_a$, as they do).", 1),
    Term("scores", "S — scores",
         "The matrix $QK^\\top$ of query-key dot products ($\\tilde S$ once divided by "
         "$\\sqrt{d_k}$); a row of it is written s. Rows are queries, columns are keys, as "
         "in every figure here. Where a lesson follows its papers' letters: in lesson 13 S "
         "is the state of linear attention; in lesson 11 S is the number of sink tokens a "
         "sliding window keeps; in lesson 6's local attention S is the source's length "
         "(Luong et al.'s letter); in lessons 0 and 6 $s_t$ is the decoder's "
         "state at output step t (Bahdanau et al.'s letter for the state).", 1),
    Term("weights", "α, w — attention weights",
         "The softmax of a row of scores: non-negative, summing to 1 over the keys a "
         "query may attend to. Lesson 1 writes $w_{ij}$ and the matrix of them W, lessons 0 "
         "and 6 $α_{tj}$ (output step t, source position j; Bahdanau et al. write $α_{ij}$, "
         "with i for the output step). Where a "
         "lesson follows its papers' letters: in lesson 13 $α_t$ is Gated DeltaNet's decay; "
         "in lesson 11 W is the size of a sliding window.", 1),
    Term("L", "L — number of layers", "The number of Transformer blocks in a model.", 9),
    Term("n_KV", "n_KV — number of key/value heads",
         "In grouped-query attention several query heads share one key head and one value "
         "head: n_KV of them per layer (n_KV = H is multi-head, n_KV = 1 multi-query).", 10),
    Term("g", "g — gain (of a norm)",
         "The learned scale, one number per component, by which LayerNorm and RMSNorm "
         "multiply the vector they have normalised: $\\hat x \\odot g$.", 10, also=(12,)),
    Term("rms", "rms — root mean square",
         "Of a vector x of d numbers: $\\sqrt{\\tfrac{1}{d}\\sum_c x_c^2}$. RMSNorm divides "
         "each token's vector by it (with a small ε added under the root).", 12, also=(10,)),
    Term("head-label", "L24 H5 — layer 24, head 5",
         "How the lessons on real models name a head: L and the number of its layer, H and "
         "its number within the layer, both counted from 1; L24 alone is layer 24. Not the "
         "number of layers L nor the number of heads H.", 12, also=(9,),
         forms=("L24 H5", "L24")),
)

TERMS = (
    Term("gru", "GRU (gated recurrent unit)",
         "A recurrent layer: at each step it mixes its previous state with the new input "
         "through two gates, an update gate z and a reset gate r (how much of the old state "
         "the new candidate state reads). Lesson 0 follows PyTorch: z is how much of the old "
         "state to keep; lesson 6 follows Bahdanau et al.: z is how much of the new "
         "candidate to take. The encoders and decoders of lesson 0, and lesson 6's decoding "
         "step, are built from it. In lesson 3, r is a window's radius instead.", 0,
         also=(6,), forms=("GRU",)),
    Term("teacher-forcing", "Teacher forcing",
         "Training a decoder by giving each step the correct previous token, not the one it "
         "wrote itself; when it is tested it reads its own outputs instead (by greedy "
         "decoding in lesson 0).", 0),
    Term("bleu", "BLEU",
         "A score of machine translation against a reference translation: how many of the "
         "output's runs of 1 to 4 words also occur in the reference (a geometric mean of the "
         "four shares), lowered for an output shorter than the reference; 0 to 1, often "
         "written 0 to 100. Higher is better.", 0),
    Term("softmax", "Softmax",
         "$\\mathrm{softmax}(s)_j = e^{s_j} / \\sum_{j'} e^{s_{j'}}$: turns any real scores "
         "into weights that are positive and sum to 1, keeping their order (e is Euler's "
         "number; lesson 0 writes the scores $e_{tj}$, Bahdanau et al.'s $e_{ij}$, and the "
         "exponential "
         "exp).", 1),
    Term("one-hot", "One-hot",
         "A row of weights with 1 on one key and 0 on every other. In exact arithmetic a "
         "softmax of finite scores is never exactly one-hot (in float64 a weight "
         "underflows to exactly 0 once its score is about 745 below the largest); “nearly "
         f"one-hot” here means its largest weight is above {NEARLY_ONE_HOT:g}.", 2),
    Term("sharp", "Sharp (low-temperature) attention",
         "A softmax whose weight is concentrated on the largest scores (a low τ, or scores "
         "far apart: adding the same number to every score changes nothing). Still "
         "smooth and differentiable; keys with tied largest scores share "
         "the weight. Only its limit as τ → 0 is an argmax.", 2),
    Term("hard", "Hard attention",
         "Choosing one position instead of averaging: the output is one value vector, not "
         "a weighted mix. The choice has no gradient, so it is trained by sampling "
         "(REINFORCE), not by plain backpropagation.", 6),
    Term("entropy", "Entropy (in nats)",
         "Of a row of weights α: $-\\sum_j α_j \\ln α_j$, in nats (natural logarithm). 0 "
         "when one key takes all the weight, $\\ln T_k$ when the weight is uniform over "
         "$T_k$ keys. “Normalised entropy” divides by $\\ln T_k$, so it runs from 0 to 1. "
         "Written as a word here: H is the number of heads.", 2),
    Term("effective-keys", "Effective number of keys",
         "$e^{\\text{entropy}}$: how many keys a row's weight is spread over, as if "
         "uniformly. 1 for a one-hot row, $T_k$ for a uniform one.", 2,
         forms=("effective number of keys", "effective keys")),
    Term("jacobian", "Jacobian norm of the softmax",
         "The softmax's Jacobian $\\mathrm{diag}(α) - αα^\\top$ says how the weights move "
         "when the scores move; its (Frobenius) norm bounds how much of the gradient on the "
         "weights passes on to the scores. It tends to 0 when the softmax saturates.", 2,
         forms=("Jacobian",)),
    Term("saturation", "Saturation",
         "A softmax whose largest weight is close to 1 because its scores are far apart: "
         "its Jacobian is close to 0 and learning through it stalls.", 2,
         forms=("saturation", "saturate", "saturates", "saturated", "saturating")),
    Term("mask", "Mask",
         "A boolean matrix (queries × keys) that says which keys each query may attend to. "
         "Here True means “may attend”; libraries differ (lesson 3's pitfalls).", 3),
    Term("causal-mask", "Causal mask",
         "Query i may attend to key j only when $j ≤ i$: itself and the tokens before it, "
         "never a later one. Used when predicting the next token.", 3),
    Term("padding", "Padding",
         "Filler tokens (`<pad>`) added so that sentences of different lengths fit in one "
         "batch; a padding mask stops queries from attending to them.", 3,
         forms=("padding", "padded")),
    Term("projection", "Projection",
         "A learned matrix that maps each token's vector to another space: in attention "
         "W_Q, W_K and W_V make its query, key and value, and W_O maps the heads' joined "
         "outputs back to the model's width. Lesson 8's output projection is one too.", 4,
         also=(0, 7, 8)),
    Term("head", "Head",
         "One attention computation with its own W_Q, W_K, W_V; a layer runs H of them in "
         "parallel and mixes their outputs with W_O (in grouped-query attention, query "
         "heads share W_K and W_V).", 4),
    Term("self-attention", "Self-attention and cross-attention",
         "Self-attention: queries, keys and values all come from one sequence. "
         "Cross-attention: queries from one sequence (a decoder), keys and values from "
         "another (an encoder).", 4, forms=("self-attention", "cross-attention")),
    Term("positional-encoding", "Positional encoding",
         "Information about each token's position, added to the token vectors before the "
         "first layer (sinusoidal, learned) or put into each attention score (relative, "
         "RoPE, ALiBi); without it, and without a causal mask, "
         "self-attention cannot tell word order.", 5),
    Term("rope", "RoPE (rotary position embedding)",
         "Rotates pairs of a query's and a key's components by angles proportional to "
         "their positions, so that the score of a query at position p and a key at "
         "position p′ depends on the positions only through the offset p − p′.", 5,
         forms=("RoPE",)),
    Term("alibi", "ALiBi",
         "Adds $-m \\cdot |i - j|$ to each score, with a fixed slope m per head: nearby "
         "keys are favoured, more steeply in some heads than in others. The paper uses it "
         "with a causal mask (only $j ≤ i$). In lessons 3, 10 and 11 m is instead a row's "
         "largest score, subtracted before a softmax (in lessons 10 and 11 the online "
         "softmax's running maximum).", 5),
    Term("context-vector", "Context vector c_t",
         "In an encoder-decoder, the weighted average of the encoder states that the "
         "decoder uses at output step t: $c_t = \\sum_j α_{tj} h_j$.", 6,
         forms=("context vector", "c_t")),
    Term("decoder-state", "Decoder state s_t, encoder state h_j",
         "In the encoder-decoders of lessons 0 (recurrent) and 6 (a toy, not recurrent), "
         "$h_j$ is the encoder's state at source position j and $s_t$ the decoder's state "
         "at output step t: Bahdanau et al.'s letters, but for the output step, which they "
         "write i ($s_i$, $α_{ij}$) and the lessons t, as Luong et al. do (Luong et al. "
         "write the decoder's state $h_t$ and the encoder's $\\bar h_s$).", 6,
         forms=("decoder state", "encoder state", "s_t", "h_j")),
    Term("adamw", "Adam, AdamW (weight decay)",
         "Adam, the optimiser every model here trains with, moves each parameter θ by "
         "$-\\eta\\,\\hat m / (\\sqrt{\\hat v} + \\epsilon)$: $\\hat m$ and $\\hat v$ are "
         "running means of its gradient and of the gradient's square, η the step size, ε a "
         "small constant. AdamW (Loshchilov and Hutter 2019) also shrinks every parameter by "
         "$\\eta\\lambda\\theta$ at each step, apart from the gradient: λ is the weight "
         "decay.", 6, also=(8,),
         forms=("AdamW", "weight decay")),
    Term("multiply-add", "Multiply-add",
         "One multiplication and one addition, the unit in which this app counts the cost "
         "of matrix products: an (a × b) by (b × c) product takes $a·b·c$ of them.", 7),
    Term("residual-stream", "Residual stream",
         "The vector of a token that runs through a Transformer: each block adds what its "
         "attention and its feed-forward layer compute to it, instead of replacing it. In a "
         "post-LN model such as MiniLM a LayerNorm then rescales the sum; in a pre-LN model "
         "such as SmolLM2 the stream is normalised on its way into each sublayer and, once, by "
         "the final norm before the unembedding; the stream itself is never replaced by a "
         "normalised copy.", 9),
    Term("layer-norm", "LayerNorm and RMSNorm",
         "LayerNorm subtracts the mean of each token's vector and divides by "
         "$\\sqrt{\\text{variance} + ε}$ (ε a small constant, so the variance comes out "
         "just under 1), then applies a learned scale and shift; RMSNorm divides by "
         "$\\sqrt{\\text{mean of squares} + ε}$ and applies a learned scale (the gain "
         "g).", 9, forms=("LayerNorm", "RMSNorm")),
    Term("ffn", "Feed-forward network (FFN)",
         "The two-layer network applied to each token on its own after attention (GELU in "
         "MiniLM, SwiGLU in SmolLM2).", 9, forms=("feed-forward network", "FFN")),
    Term("attention-sink", "Attention sink",
         "A token (often the first) that many heads give much of their weight to, "
         "whatever the query; often read as a place to park attention when nothing else "
         "is relevant.", 9),
    Term("logit", "Logit",
         "A score before the softmax; for a language model, one number per token of the "
         "vocabulary, whose softmax is the next-token distribution.", 10),
    Term("top-k", "Top-k and top-p sampling",
         "Ways to cut the tail of the next-token distribution before drawing: top-k keeps "
         "the k most likely tokens; top-p keeps the smallest set of tokens whose "
         "probabilities (after the temperature τ, and after top-k among the kept tokens, "
         "renormalised) add up to at least p. The rest get probability 0 and the kept "
         "ones are renormalised. Here k is a number of tokens, not a key, and p a share of "
         "probability.", 10, forms=("top-k", "top-p")),
    Term("greedy", "Greedy decoding",
         "Always taking the most likely next token (sampling in the limit τ → 0). Lesson "
         "0's decoders write every letter so when they are tested.", 10, also=(0,),
         forms=("greedy decoding", "greedy")),
    Term("induction-head", "Induction head",
         "A head that finds an earlier occurrence of the current token and attends to the "
         "token that followed it, so that the model can continue a repeated sequence.", 8),
    Term("perplexity", "Perplexity",
         "$e^{\\text{mean cross-entropy}}$ (in nats) of a model's predictions of the "
         "tokens of a text: roughly, as if the model hesitated between that many tokens "
         "at each step. Lower is better; 1 is perfect.", 11),
    Term("cross-entropy", "Cross-entropy (loss)",
         "$-\\ln p(\\text{correct answer})$ (the correct token for a language model, the "
         "correct class for lesson 8's sentiment classifier), averaged over the "
         "predictions, in nats: the "
         "loss that the models of lessons 0 and 8 are trained on, and the language "
         "models were.", 8),
    Term("kv-cache", "KV cache",
         "The keys and values of the tokens already processed, kept so that generating "
         "the next token computes the query, key and value of the new token only, not "
         "those of every token again.", 11),
    Term("gqa", "Grouped-query attention (GQA), MQA",
         "Several query heads share one key/value head (n_KV < H), which shrinks the KV "
         "cache; multi-query attention (MQA) is the case n_KV = 1.", 11,
         forms=("grouped-query attention", "GQA", "multi-query attention", "MQA")),
    Term("sliding-window", "Sliding window",
         "Each token attends only to the W most recent tokens, itself included (lesson "
         "11, causal); lesson 3's local window is symmetric instead: radius r, the r "
         "tokens on each side and itself.", 11),
    Term("logit-difference", "Logit difference (LD)",
         "logit(answer) − logit(wrong answer) at the last position: how much the model "
         "prefers one next token to another. The softmax makes the ratio of two "
         "probabilities $e$ to the power of their logits' difference, so the model's odds "
         "of the answer against the wrong one are $e^{LD}$ : 1 (LD = 2: "
         f"{math.exp(2):.1f} to 1; LD = 0: even). It does not depend on the other tokens' "
         "logits, unlike a probability.", 12, forms=("logit difference", "LD")),
    Term("activation-patching", "Activation patching",
         "Run a corrupted prompt, put back one activation (the stream at a position, a "
         "head's output) from the clean run, and measure the share of the gap between the "
         "clean and the corrupted logit difference that comes back: the recovery, "
         "(patched − corrupted) / (clean − corrupted), 0 for no effect, 1 for all of it.",
         12),
    Term("direct-attribution", "Direct logit attribution",
         "The logit difference split exactly into what each component (the embedding, "
         "each head, each FFN) writes straight into the last position's stream, with the "
         "final norm's scale frozen. It leaves out what a component does through later "
         "layers.", 12),
    Term("knockout", "Attention knockout",
         "Forbid one query to read one key (one entry of the mask closed) in chosen "
         "layers, and see whether the answer survives.", 12),
    Term("logit-lens", "Logit lens",
         "The stream after an intermediate layer, put through the final norm and the "
         "output matrix as if the model stopped there: each layer's guess, a rough "
         "reading (the earlier layers were not trained to be read so).", 12),
    Term("recurrent-state", "State (of a recurrent layer)",
         "What a layer keeps between tokens when it does not keep every token: a vector in "
         "lesson 0's recurrent encoder, one matrix S of d_v × d_k numbers per head in linear "
         "attention and its successors (S is built from keys and values only, so query heads "
         "that share them can share it). Its size does not grow with the text, unlike a KV "
         "cache.", 13, forms=("state of fixed size", "fixed-size state")),
    Term("linear-attention", "Linear attention",
         "Attention with the softmax taken out (Katharopoulos et al. 2020). In its bare form, "
         "as lesson 13 writes it (published models first transform k and q: Schlag et al. "
         "2021 by a feature map of their own, normalised, Yang et al. 2024's DeltaNet by "
         "SiLU and a scaling to unit length), the state "
         "$S_t = S_{t-1} + v_t k_t^\\top$ adds every pair's outer product, and "
         "a query reads $S q = \\sum_t (k_t \\cdot q)\\, v_t$: weights k · q, unnormalised, "
         "that nothing sharpens. Katharopoulos et al. first map q and k by a feature map φ "
         "(elu(x) + 1) and divide by φ(q) · Σ φ(k); other feature maps (Based's Taylor "
         "expansion of exp) can sharpen the weights. Its memory is fixed and its cost per "
         "token does not grow with the text; a read takes in every value whose key overlaps "
         "the query.", 13),
    Term("delta-rule", "Delta rule (DeltaNet)",
         "A write that corrects what the state already says about the key (Schlag et al. "
         "2021; Yang et al. 2024): $S_t = S_{t-1} + \\beta_t (v_t - S_{t-1} k_t) k_t^\\top$, "
         "with a write strength β in [0, 1]. With a unit key and β = 1 the new value "
         "replaces the old one.", 13),
    Term("gated-deltanet", "Gated DeltaNet",
         "The delta rule with a decay α in [0, 1] that multiplies the whole state before "
         "each write, so that old pairs fade (Yang, Kautz and Hatamizadeh 2025): "
         "$S_t = \\alpha_t S_{t-1} + \\beta_t (v_t - \\alpha_t S_{t-1} k_t) k_t^\\top$. "
         "With α = 1 it is the delta rule, which has no decay.", 13),
    Term("hybrid", "Hybrid model",
         "A model that mixes layers of fixed-size memory (Gated DeltaNet, say) with some "
         "layers of full attention: Qwen3-Next has one full-attention layer in four "
         "(full_attention_interval = 4), Kimi Linear too (3:1).", 13),
    Term("associative-recall", "Associative recall",
         "A task: a sequence of (key, value) pairs, then a key; answer the value stored with "
         "it. Its multi-query form (Arora et al. 2023, Zoology) separates models that keep "
         "every pair from those with a state of fixed size.", 13),
)

ALL = {entry.key: entry for entry in SYMBOLS + TERMS}


def written_forms(entry: Term) -> tuple[str, ...]:
    """How the pages write an entry, case as given: its ``forms``, or else a symbol's
    symbols before the name's dash ("d_k, d_v — ..." -> d_k, d_v) or a term's name without
    its brackets, its first letter in lower case unless the name starts with two capitals
    ("Entropy (in nats)" -> entropy; "KV cache" stays). A digit in a form stands for any
    number (L24 H5 is also L3 H1)."""
    if entry.forms:
        return entry.forms
    if entry in SYMBOLS:
        return tuple(entry.name.split(" — ")[0].split(", "))
    name = " ".join(re.sub(r"\([^)]*\)", " ", entry.name).split())
    return (name if name[1:2].isupper() else name[:1].lower() + name[1:],)


def anchor(key: str) -> str:
    """The anchor of a glossary entry on the home page (``KeyError`` if it has none)."""
    return ANCHOR_PREFIX + ALL[key].key.lower()


def term_link(key: str, text: str | None = None) -> str:
    """A markdown link to the glossary entry ``key``, reading ``text`` (by default the
    entry's name before its dash). It opens the home page at the entry in a new tab."""
    entry = ALL[key]
    shown = text if text is not None else entry.name.split(" — ")[0]
    return f"[{shown}]({HOME_HREF}#{anchor(key)})"


def lessons_note(entry: Term) -> str:
    """The lesson that explains an entry and the others that use it: " *(Lesson 10; also
    lesson 0.)*", or "" for an entry of no one lesson."""
    if entry.lesson is None:
        return ""
    also = sorted(entry.also)
    if not also:
        return f" *(Lesson {entry.lesson}.)*"
    others = " and ".join([", ".join(str(n) for n in also[:-1]), str(also[-1])] if len(also) > 1
                          else [str(also[0])])
    return f" *(Lesson {entry.lesson}; also lesson{'s' if len(also) > 1 else ''} {others}.)*"


def show_glossary() -> None:
    """The glossary on the home page: symbols first, then terms in the order the lessons
    introduce them, each a heading with its own anchor (a lesson's link scrolls to it)."""
    import streamlit as st

    st.header("Glossary", anchor="glossary")
    st.markdown("Each symbol and term keeps one meaning throughout the lessons, except where a "
                "lesson follows its paper's own letter for something else: the symbol's entry "
                "then says so, and in which lesson. A link from a lesson opens this list at "
                "its entry.")
    st.html(_COMPACT_CSS)
    entries = list(SYMBOLS) + sorted(TERMS, key=lambda t: (t.lesson is None, t.lesson or 0))
    with st.container(key="glossary_entries"):
        for entry in entries:
            st.subheader(entry.name, anchor=anchor(entry.key))
            st.markdown(entry.meaning + lessons_note(entry))


# Entries as a compact list: a heading each (so that a link can reach it), smaller than a
# section's. Constant CSS, no user text.
_COMPACT_CSS = """
<style>
.st-key-glossary_entries h3 { font-size: 1.2rem !important; }
</style>
"""
