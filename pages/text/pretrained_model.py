"""Lesson 9's sentences that depend on the model's numbers, as plain functions of them.

Each is chosen by the numbers it is given (sinks only well above an even spread, "the
same weights" only when they are), so that the page never states what this sentence
did not show.
"""

from __future__ import annotations

import numpy as np

from attncore.analysis import SINK_FACTOR
from attncore.encoder import MAX_TOKENS
from attncore.encoder.worked import WorkedHead
from pages.ui.arithmetic import num
from pages.ui.glossary import term_link
from pages.ui.labels import md_escape
from pages.ui.numbers import (
    difference_text,
    percent_text,
    significant_latex,
    significant_sign,
    significant_text,
)

#: float64 computations that agree to this differ only by rounding
ROUNDING = 1e-12
DIGITS = 6  # significant digits of the numbers worked out by hand

# What each statistic is, said under its map: each is averaged over the T query rows, but
# the previous-token mass over the T − 1 rows that have a token before.
MEANING = {
    "entropy / ln T (0 = one key, 1 = uniform)":
        f"each query row's {term_link('entropy', 'entropy')} (in nats) divided by ln T, its "
        "largest possible value, averaged over the rows",
    "previous-token mass": "the weight each query puts on the token just before it, averaged "
                           "over the rows that have one (all but the first, [CLS])",
    "mass on [CLS]": "the weight each query puts on [CLS], averaged over the rows",
    "mass on [SEP]": "the weight each query puts on [SEP], averaged over the rows",
    "mass on [CLS] + [SEP]": "the weight each query puts on [CLS] and [SEP] together, "
                             "averaged over the rows",
}


def tex(x: float) -> str:
    """A number worked out by hand, for LaTeX: tiny weights stay visible (3.2 × 10⁻⁵)."""
    return significant_latex(x, DIGITS)


def eq(*xs: float) -> str:
    """= before numbers written exactly by :func:`tex`, ≈ when one of them is rounded."""
    return significant_sign(*xs, digits=DIGITS)


def truncation_text(n_pieces: int, T: int) -> str:
    """What a text longer than the page reads is cut to: its first T − 1 WordPieces and
    [SEP] (``n_pieces``: all of them, [CLS] and [SEP] included)."""
    return (f"With [CLS] and [SEP] the text makes {n_pieces} WordPieces; this page reads the "
            f"first {T - 1} ([CLS] included) and [SEP], {T} in all. sentence-transformers "
            f"reads up to {MAX_TOKENS}.")


def grid_caption(L: int, H: int, T: int, cells: int) -> str:
    """How to read the model view, whose small maps are pooled to ``cells`` a side when
    the sentence has more tokens."""
    pooled = "" if T <= cells else (f" With {T} tokens each small map is average-pooled to "
                                    f"at most {cells} × {cells} cells.")
    return (f"Rows {term_link('head-label', f'L1–L{L}')} are layers, columns H1–H{H} heads; "
            "each small map is T × T "
            "(queries down, keys across), on the same 0–1 colour scale. Hover for tokens "
            "and weights; section 2 draws one head large." + pooled)


# Before the chart of the share on [CLS] and [SEP] (its title names them).
SINK_TEXT = (f"An {term_link('attention-sink', 'attention sink')} is a token that many heads "
             "give much of their weight to, whatever the query; the chart “Attention sinks” "
             "measures, layer by layer, how much of it lands on [CLS] and [SEP].")


def block_intro(n_layers: int) -> str:
    """Above the encoder block's diagram: what one block does, LayerNorm named."""
    return (f"The diagram follows one of the model's {n_layers} encoder blocks (the layer and "
            "head picked for sections 2 to 4): attention, then a feed-forward layer, each "
            "followed by “add & norm”, which adds the sublayer's input back and applies "
            f"{term_link('layer-norm', 'LayerNorm')} (each token's vector re-centred and "
            "rescaled).")


def heads_put(heads: int, total: int) -> str:
    """“No head puts”, “1 of the 72 heads puts”, “46 of the 72 heads each put”: a subject
    and verb for “… more than half of its weight”."""
    if heads == 0:
        return "No head puts"
    return (f"1 of the {total} heads puts" if heads == 1
            else f"{heads} of the {total} heads each put")


def sinks_text(layer_sink: np.ndarray, n_special: int, T: int, even: float,
               sinking: bool) -> str:
    """The share of all attention on [CLS] and [SEP] per layer (``layer_sink``: (L, 2),
    averaged over heads and rows), against ``even``, their share if every query spread
    its weight evenly; called sinks only when ``sinking`` (SINK_FACTOR times that)."""
    per_layer = layer_sink.sum(axis=1)
    shares = ", ".join(f"L{r + 1} {s:.0%}" for r, s in enumerate(per_layer))
    link = term_link("attention-sink", "attention sinks")
    return (f"Share of all attention that lands on [CLS] or [SEP], per layer (averaged over "
            f"heads and query rows): {shares}. {n_special} tokens out of {T} get up to "
            f"{per_layer.max():.0%} of it, against {even:.0%} if every query spread its "
            "weight evenly"
            + (f": they act as {link}." if sinking
               else f": less than {SINK_FACTOR} times that, too little to call them {link} "
                    "on this sentence."))


def sink_notice(mass: np.ndarray, layer_sink: np.ndarray, even: float, sinking: bool) -> str:
    """How many heads, and which layers, put more than half of their weight on [CLS] and
    [SEP] on this sentence (``mass``: (L, H), averaged over query rows); read as sinks
    only when they take at least SINK_FACTOR times what an even spread would give them
    (``sinking``, as :func:`sinks_text` says)."""
    layers = [f"L{r + 1}" for r in range(mass.shape[0]) if layer_sink[r].sum() > 0.5]
    where = (f"; in {', '.join(layers)} more than half of all attention lands there" if layers
             else "; in no layer does more than half of all attention land there")
    reading = ("A common reading of such sinks: a place to put weight when a head has "
               "nothing to read." if sinking else
               f"An even spread would give them {even:.0%}: too little above it to call them "
               "sinks on this sentence.")
    return (f"{heads_put(int(np.sum(mass > 0.5)), mass.size)} more than half of its weight "
            f"on [CLS] or [SEP] on this sentence{where}. {reading}")


def previous_notice(mass: np.ndarray, T: int) -> str:
    """The heads that put more than half of their weight on the token just before
    (``mass``: (L, H), averaged over the T − 1 query rows that have one, as section 2's
    caption measures it)."""
    l, h = np.unravel_index(int(np.argmax(mass)), mass.shape)
    return (f"{heads_put(int(np.sum(mass > 0.5)), mass.size)} more than half of its weight "
            "on the previous token (a bright line just "
            f"below the diagonal) on this sentence; the most: layer {l + 1}, head {h + 1}, "
            f"{percent_text(float(mass[l, h]))} on average over the {T - 1} rows that have a "
            "token before.")


def head_shares_text(layer: int, head: int, w: np.ndarray, tokens: list[str]) -> str:
    """One head's share of attention on [CLS] and [SEP] (over every query row) and on the
    token just before (over the rows that have one: all but the first), and where the two
    count the same weight: a row whose token before is [CLS] or [SEP]."""
    T = len(tokens)
    special = [j for j, t in enumerate(tokens) if t in ("[CLS]", "[SEP]")]
    sink = float(w[:, special].sum(axis=-1).mean())
    text = (f"Layer {layer}, head {head} puts {percent_text(sink)} of its attention on [CLS] "
            f"and [SEP] (averaged over all {T} rows)")
    if T < 2:
        return text + "; no row has a token before it."
    previous = float(np.mean([w[i, i - 1] for i in range(1, T)]))
    text += (f", {percent_text(previous)} on the token just before (averaged over the "
             f"{T - 1} rows that have one)")
    both = [i for i in range(1, T) if tokens[i - 1] in ("[CLS]", "[SEP]")]
    if not both:
        return text + "."
    rows = " and ".join(f"“{tokens[i]}”'s" for i in both)
    before = " or ".join(dict.fromkeys(tokens[i - 1] for i in both))
    return text + (f"; the two shares overlap where the token before is {before} ({rows} "
                   f"row{'s' if len(both) > 1 else ''}: its weight on {before} counts in both).")


def head_setup_text(w: WorkedHead, tokens: list[str]) -> str:
    """The head's width and scale, and the worked query and key."""
    return (f"This model has {term_link('d_model', 'd_model')} = {w.d_model} and {w.n_heads} "
            f"heads, so each head works in {term_link('d_k', 'd_k')} = {w.d_model} / "
            f"{w.n_heads} = {w.d_k} dimensions and divides by √{w.d_k} ≈ {w.root:.4f} "
            f"(BERT-base, with 768 / 12 = 64, divides by 8). Query {w.query + 1} is "
            f"“{md_escape(tokens[w.query])}”, key {w.key + 1} is “{md_escape(tokens[w.key])}”.")


def score_latex(w: WorkedHead) -> list[str]:
    """The worked weight's lines: the score as a sum of products, its value, scaled, and
    the softmax. Each number has DIGITS significant digits, after = when that is exact and
    ≈ when it is rounded; the first line's factors are rounded to 3 decimals, so ≈."""
    q, k = w.q, w.k
    terms = " + ".join(f"({num(a, 3)})({num(b, 3)})" for a, b in zip(q[:2], k[:2], strict=True))
    return [
        rf"s = q \cdot k = \sum_{{c=1}}^{{{w.d_k}}} q_c\, k_c \approx {terms} + \cdots + "
        rf"({num(q[-1], 3)})({num(k[-1], 3)})",
        rf"s {eq(w.score)} {tex(w.score)}\quad\text{{(the sum of all {w.d_k} products)}}",
        rf"\tilde s = \frac{{s}}{{\sqrt{{{w.d_k}}}}} {eq(w.score, w.root)} "
        rf"\frac{{{tex(w.score)}}}{{{tex(w.root)}}} {eq(w.scaled_score)} {tex(w.scaled_score)}",
        rf"w = \frac{{e^{{\tilde s - m}}}}{{\sum_{{j'}} e^{{\tilde s_{{j'}} - m}}}} "
        rf"{eq(w.exp, w.total)} \frac{{{tex(w.exp)}}}{{{tex(w.total)}}} "
        rf"{eq(w.weight)} {tex(w.weight)}\quad (m {eq(w.shift)} {tex(w.shift)},\ "
        r"\text{the row maximum})",
    ]


def output_latex(w: WorkedHead) -> str:
    """The row's output, its first four numbers and its last, rounded to 3 decimals."""
    return (r"o = \sum_j w_j\, v_j \approx \begin{bmatrix}"
            + " & ".join(num(x, 3) for x in w.output[:4])
            + rf" & \cdots & {num(w.output[-1], 3)}\end{{bmatrix}}\quad"
            rf" ({w.d_k}\text{{ numbers}})")


def recomputation_text(w: WorkedHead) -> str:
    """The model's weight against the one worked out, and lesson 1's function on the
    whole head: "the same weights" only when they are, "up to rounding" within
    ROUNDING."""
    d = w.recomputed_difference
    same = ("the same weights" if d == 0 else "the same weights up to rounding"
            if d <= ROUNDING else "weights that differ from the model's")
    return (f"The model's own weight is {w.model_weight:.6f} (difference "
            f"{difference_text(w.weight_difference)}). Lesson 1's attention function on this "
            f"head's q, k, v gives {same} (largest difference {difference_text(d)}).")


def output_text(w: WorkedHead) -> str:
    return (f"The head's output for row {w.query + 1} against the model's: largest difference "
            f"{difference_text(w.output_difference)}.")


def cosine_text(moved: float) -> str:
    """A cosine of 1 − ``moved`` to 5 decimals, or as 1 − moved when 5 decimals would round
    it to an exact-looking 1.00000."""
    if moved == 0:
        return "1 (unchanged)"
    return f"{1 - moved:.5f}" if moved >= 5e-6 else f"1 − {difference_text(moved)}"


def ablation_text(layer: int, moved: np.ndarray, focus: np.ndarray) -> str:
    """Which head of the layer moves the sentence embedding most when switched off
    (``moved``: 1 − cosine per head), and whether it is the one that attends most sharply
    (``focus``: mean largest weight per head)."""
    most, sharpest = int(np.argmax(moved)), int(np.argmax(focus))
    return (f"In layer {layer} the head whose removal moves the embedding most is "
            f"H{most + 1} (1 − cosine {difference_text(moved.max())}); the one that attends "
            "most sharply is " + (f"H{sharpest + 1}, another head." if sharpest != most
                                  else "the same head here: one layer and one sentence, "
                                       "not a rule."))


def update_share_text(attn_norm: np.ndarray, ffn_norm: np.ndarray) -> str:
    """The feed-forward update's size beside attention's, per layer (mean norms per
    token)."""
    share = ffn_norm / (attn_norm + ffn_norm)
    return ("How large the feed-forward update is beside the attention update, per layer: "
            "‖FFN‖ / (‖attention‖ + ‖FFN‖) of their mean norms per token, "
            + ", ".join(f"L{r + 1} {s:.0%}" for r, s in enumerate(share)) + ". (Two vectors' "
            "norms do not add up to the norm of their sum: this compares sizes, not shares "
            "of one change.)")


def block_text(cfg, T: int) -> str:
    """The steps of the encoder as a markdown table, shapes for ``T`` tokens, and what
    repeats in each layer (``cfg``: the model's configuration)."""
    H, d_k, d, d_ff = cfg.n_heads, cfg.d_k, cfg.d_model, cfg.d_ff
    block = [  # (step, what happens, shape); every row after the first is one layer's
        ("embeddings", "word + position + token type, then LayerNorm", f"({T}, {d})"),
        ("attention", f"{H} heads: softmax(Q Kᵀ / √{d_k}) V each", f"({H}, {T}, {d_k})"),
        ("W_O", "heads concatenated, times W_O", f"({T}, {d})"),
        ("residual + LayerNorm", "x + attention, then LayerNorm", f"({T}, {d})"),
        ("feed-forward", f"GELU(x W₁ + b₁) W₂ + b₂, {d_ff} hidden units",
         f"({T}, {d_ff}) → ({T}, {d})"),
        ("residual + LayerNorm", "x + feed-forward, then LayerNorm", f"({T}, {d})"),
    ]
    return ("| step | what happens | shape |\n|---|---|---|\n"
            + "".join(f"| {step} | {what} | {shape} |\n" for step, what, shape in block)
            + f"\nThe last {len(block) - 1} rows repeat in each of the {cfg.n_layers} layers. "
            f"Each layer adds to the {term_link('residual-stream', 'residual stream')} (x + …) "
            f"and then normalises it ({term_link('layer-norm', 'LayerNorm')}, after the "
            f"addition in BERT); the {term_link('ffn', 'feed-forward network')} works on each "
            "token on its own.")


def layer_norm_latex(mu: float, var: float) -> str:
    """LayerNorm's steps, with the mean and variance of the vector it receives."""
    return (rf"\mu {eq(mu)} {tex(mu)},\ \sigma^2 {eq(var)} {tex(var)} \;\to\; z = "
            r"\frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}} \;\to\; y = \gamma \odot z + \beta")


def layer_norm_text(z: np.ndarray, var: float, eps: float) -> str:
    """z's mean (0 to rounding) and its variance σ²/(σ² + ε), just under 1."""
    return (f"z has mean {difference_text(z.mean(), 1, rounding=True)} and variance "
            f"σ²/(σ² + ε) ≈ 1 − {difference_text(eps / (var + eps))}, not quite 1: "
            f"ε = {significant_text(eps, 3)} only guards against dividing by 0.")


def scale_notice(d_k: int) -> str:
    return f"d_k = {d_k} here, so scores are divided by √{d_k} ≈ {np.sqrt(d_k):.2f}."


def stream_notice(names: list[str], stream_norm: np.ndarray) -> str:
    """How little the residual stream's size changes from step to step (each step is a
    LayerNorm's output)."""
    return ("Every step of the residual stream drawn in section 5 is a LayerNorm's output "
            "(mean 0 and variance just under 1 before γ and β), so its size is set anew at "
            "each step instead of growing with each update added: its mean norm per token "
            f"stays between {stream_norm.min():.1f} and {stream_norm.max():.1f} across all "
            f"{len(names)} steps.")


def downloads_text(L: int, H: int, T: int) -> str:
    """What the two downloads hold, for ``L`` layers of ``H`` heads on ``T`` tokens."""
    return (f"**CSV**: every head's attention, the {L * H} maps stacked (a row per layer, "
            f"head and query token, a column per key token: {L * H * T} × {T}). **Whole "
            "trace**: every array of the forward pass and the tokens, in NumPy's .npz "
            "format (`np.load`).")


def model_caption(cfg) -> str:
    """Where the model comes from and its size (``cfg``: its configuration)."""
    return (f"Model: all-MiniLM-L6-v2 (Apache-2.0), from the pinned package, sha256-checked; "
            f"run here in NumPy (float64). {cfg.n_layers} layers × {cfg.n_heads} heads, "
            f"d_model {cfg.d_model}.")


#: What to try on the page (off the projector).
TRY_THIS = [
    "Type a sentence with a rare word and find the ## pieces in the head view.",
    "Find a head in layer 1 or 2 whose largest weights sit just below the diagonal.",
    "Paste some HTML or an emoji: it is shown as text, and a word the vocabulary "
    "cannot spell (an emoji, or a word with one in it) becomes one [UNK].",
    "Change the paraphrase until its cosine drops below the unrelated sentence's.",
]


def practice(cfg) -> list[dict]:
    """The practice questions, their answers from the model's sizes (``cfg``)."""
    L, H, d_k = cfg.n_layers, cfg.n_heads, cfg.d_k
    root = float(np.sqrt(d_k))  # what every score of this model is divided by
    return [
        {"q": f"The model has d_model = {cfg.d_model} and {H} heads. By what number are the "
              "scores divided?", "value": root, "tol": 5e-3,
         "a": f"√d_k = √({cfg.d_model} / {H}) = √{d_k} ≈ {root:.4f}."},
        {"q": "How many attention maps does one sentence produce in this model?",
         "value": float(L * H), "tol": 0.5, "a": f"{L} layers × {H} heads = {L * H}."},
        {"q": "A head puts 0.9 of every row on [SEP]. Does switching it off have to change "
              "the sentence embedding much?",
         "a": "No. Its output is mostly [SEP]'s value vector, which may be small or ignored "
              "later; the ablation chart measures the effect instead of guessing it."},
    ]
