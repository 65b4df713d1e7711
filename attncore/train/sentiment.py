"""Sentiment with attention pooling: a synthetic corpus, two models and their training.

The corpus is made from a small lexicon: positive and negative words, intensifiers,
negation and neutral filler, in sentences of 3 to 12 words ("the plot was not very
good and the cast"). The label is the sentiment word's polarity, flipped by "not" or
"never".

Two models, both ``x = token + position`` -> ... -> attention pooling -> linear:

* ``"pooling"``: pools ``x`` itself. A weighted average of word vectors cannot turn
  "bad" into its opposite, so it fails on negated sentences, as it must.
* ``"self-attention"``: one self-attention layer (two heads, residual) first,
  ``h = x + SelfAttention(x)``; the pooling scores come from ``x`` (the layer's
  input) while the pooled values are ``h`` (its output), so the pooling weights
  stay on the words that matter while the vectors there carry the negation.

The self-attention model learns in two stages: for its first ``pool_first`` steps the
layer's output projection is held at zero (the layer adds nothing), so the pooling
first learns *where* the sentiment words are, as model A does; then the layer is
switched on and learns *how* negation changes them. Trained all at once, about one seed
in four let the layer copy the sentiment into filler words and the pooling settle on
filler, right for the wrong reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import positive_number, whole_number
from ..analysis import NEARLY_ONE_HOT
from ..text import tokenize
from .attention import pool_backward, pool_forward, self_attention_backward, self_attention_forward
from .layers import (
    cross_entropy_backward,
    cross_entropy_forward,
    embedding_backward,
    embedding_forward,
    init_matrix,
    linear_backward,
    linear_forward,
)
from .run import Measure, TrainingRun, check_run_settings, train

POSITIVE = ("good", "great", "excellent", "wonderful", "brilliant", "fun", "lovely", "superb")
NEGATIVE = ("bad", "awful", "boring", "terrible", "dull", "poor", "weak", "horrible")
INTENSIFIERS = ("very", "really", "so", "truly")
NEGATIONS = ("not", "never")
FILLER = ("the", "movie", "film", "was", "is", "plot", "acting", "story", "this", "it",
          "and", "a", "cast", "music", "ending", "i", "thought", "found", "with", "of")
PAD = "<pad>"
VOCAB = (PAD, *POSITIVE, *NEGATIVE, *INTENSIFIERS, *NEGATIONS, *FILLER)
WORD_ID = {w: i for i, w in enumerate(VOCAB)}
MAX_LEN = 12
GROUPS = {"pad": (PAD,), "positive": POSITIVE, "negative": NEGATIVE,
          "intensifier": INTENSIFIERS, "negation": NEGATIONS, "filler": FILLER}
KINDS = tuple(kind for kind, words in GROUPS.items() for _ in words)  # the kind of each id
# which tokens the attention score counts: sentiment and negation words
KEY_WORD = np.array([k in ("positive", "negative", "negation") for k in KINDS])
MODELS = ("pooling", "self-attention")
#: A P(positive) within this of 0.5 is a guess, not a verdict (the classifier still
#: picks a side).
GUESS_MARGIN = 0.15
DISPLAY = ("the movie was really great", "the plot was not good",
           "this film is not bad and the music", "i thought it was a boring story")


@dataclass(frozen=True)
class SentimentConfig:
    """Settings of one sentiment run; the defaults are the page's defaults."""

    model: str = "self-attention"
    seed: int = 0
    steps: int = 300
    d_model: int = 16
    heads: int = 2
    lr: float = 0.01
    batch: int = 64
    init_scale: float = 1.0
    temperature: float = 1.0
    decay: bool = True
    pool_first: int = 100
    n_train: int = 2000
    n_held_out: int = 500

    def __post_init__(self):
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}; got {self.model!r}")
        check_run_settings(self)
        whole_number(self.pool_first, "pool_first", 0, 5000)
        whole_number(self.n_train, "n_train", 10, 100_000)
        whole_number(self.n_held_out, "n_held_out", 10, 100_000)
        for name in ("lr", "init_scale", "temperature"):
            positive_number(getattr(self, name), name)


def make_corpus(rng: np.random.Generator, n: int):
    """``n`` random sentences: ids (n, MAX_LEN) padded with 0, lengths (n,),
    labels (n,) with 1 = positive, negated (n,) bool.

    Each sentence: 1-5 filler words, "not"/"never" (40%), an intensifier (40%), one
    sentiment word, 0-4 filler words."""
    ids = np.zeros((n, MAX_LEN), dtype=np.int64)
    negated = rng.random(n) < 0.4
    positive = rng.random(n) < 0.5
    intensified = rng.random(n) < 0.4
    first = {kind: WORD_ID[words[0]] for kind, words in GROUPS.items()}
    word = rng.integers(0, len(POSITIVE), n)  # as many positive words as negative ones
    sentiment = np.where(positive, first["positive"], first["negative"]) + word
    negation = first["negation"] + rng.integers(0, len(NEGATIONS), n)
    intensifier = first["intensifier"] + rng.integers(0, len(INTENSIFIERS), n)
    filler = first["filler"] + rng.integers(0, len(FILLER), (n, MAX_LEN))
    before = rng.integers(1, 6, n)
    after = rng.integers(0, 5, n)
    lengths = np.zeros(n, dtype=np.int64)
    for i in range(n):
        core = [negation[i]] * int(negated[i]) + [intensifier[i]] * int(intensified[i])
        core.append(sentiment[i])
        b = min(before[i], MAX_LEN - len(core))
        a = min(after[i], MAX_LEN - len(core) - b)
        row = [*filler[i, :b], *core, *filler[i, b : b + a]]
        ids[i, : len(row)] = row
        lengths[i] = len(row)
    return ids, lengths, (positive != negated).astype(np.int64), negated


def split_words(text: str) -> list[str]:
    """The lower-case tokens of ``text`` (attncore.text.tokenize), commas and full stops
    left out: what :func:`encode` looks up."""
    return [w.lower() for w in tokenize(str(text)) if w not in {",", "."}]


def unknown_words(text: str) -> list[str]:
    """The words of ``text`` the vocabulary does not have (the padding token included), in
    order: what :func:`encode` leaves out."""
    return [w for w in split_words(text) if w not in WORD_ID or w == PAD]


def encode(text: str):
    """Split ``text`` into lower-case words and look them up.

    Returns (ids (T,), words, unknown) where ``unknown`` lists the words not in the
    vocabulary (left out of ids). At most MAX_LEN known words are kept; raises
    ValueError when no known word is left.
    """
    words = split_words(text)
    unknown = unknown_words(text)
    known = [w for w in words if w in WORD_ID and w != PAD][:MAX_LEN]
    if not known:
        raise ValueError(f"text has no word from the vocabulary; got {text!r}")
    return np.array([WORD_ID[w] for w in known]), known, unknown


def init_params(config: SentimentConfig, rng: np.random.Generator) -> dict:
    """Embeddings E (V, D), positions P (MAX_LEN, D), pooling Wk_pool (D, D) and
    q_pool (D,), classifier W_out (D, 2), b_out (2,); with self-attention also
    Wq, Wk, Wv, Wo (D, D)."""
    D, s = config.d_model, config.init_scale
    p = {
        "E": rng.standard_normal((len(VOCAB), D)) * s / np.sqrt(D),
        "P": rng.standard_normal((MAX_LEN, D)) * s / np.sqrt(D),
        "Wk_pool": init_matrix(rng, D, D, s),
        "q_pool": rng.standard_normal(D) * s,
        "W_out": init_matrix(rng, D, 2),
        "b_out": np.zeros(2),
    }
    if config.model == "self-attention":
        for name in ("Wq", "Wk", "Wv", "Wo"):
            p[name] = init_matrix(rng, D, D, s)
        if config.pool_first:
            p["Wo"][:] = 0.0  # the layer adds nothing until it is switched on
    return p


def forward(p: dict, ids: np.ndarray, temperature: float = 1.0, heads: int = 2):
    """Logits (B, 2) for ids (B, T) padded with 0, and every cache the backward needs.

    Returns (logits, caches) with caches["pool"][3] the pooling weights (B, T) and, for
    the self-attention model, caches["attn"][4] its weights (B, 1, T, T).
    """
    B, T = ids.shape
    mask = ids != 0  # (B, T) real tokens
    x, c_emb = embedding_forward(ids, p["E"])  # (B, T, D)
    x = x + p["P"][:T]
    caches = {"emb": c_emb, "T": T}
    h = x
    if "Wq" in p:
        y, caches["attn"] = self_attention_forward(x, p, heads, mask[:, None, None, :])
        h = x + y  # residual
    pooled, caches["pool"] = pool_forward(x, h, p["Wk_pool"], p["q_pool"], mask, temperature)
    logits, caches["out"] = linear_forward(pooled, p["W_out"], p["b_out"])
    return logits, caches


def backward(p: dict, dlogits: np.ndarray, caches: dict) -> dict:
    """Gradients of every parameter, given dlogits (B, 2)."""
    g = {}
    dpooled, g["W_out"], g["b_out"] = linear_backward(dlogits, caches["out"])
    dx, dh, g["Wk_pool"], g["q_pool"] = pool_backward(dpooled, caches["pool"])
    if "attn" in caches:
        dy, attn_grads = self_attention_backward(dh, caches["attn"])
        g.update(attn_grads)
        dx = dx + dh + dy  # h = x + y
    else:
        dx = dx + dh  # h = x
    T = caches["T"]
    g["P"] = np.zeros_like(p["P"])
    g["P"][:T] = dx.sum(axis=0)
    g["E"] = embedding_backward(dx, caches["emb"])
    return g


def predict(p: dict, ids: np.ndarray, temperature: float = 1.0, heads: int = 2) -> dict:
    """Probability of "positive" (B,), pooling weights (B, T) and, for the
    self-attention model, its weights (B, H, T, T)."""
    logits, caches = forward(p, ids, temperature, heads)
    z = logits - logits.max(axis=1, keepdims=True)
    probs = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    out = {"positive": probs[:, 1], "pool": caches["pool"][3]}
    if "attn" in caches:
        out["attn"] = caches["attn"][4]
    return out


def first_step_reaching(checkpoints, values, level: float) -> int | None:
    """The first checkpoint at which ``values`` (one per checkpoint) is at least
    ``level``; None when it never is."""
    at = np.flatnonzero(np.asarray(values, dtype=np.float64) >= level)
    return int(np.asarray(checkpoints)[at[0]]) if at.size else None


def train_sentiment(config: SentimentConfig = SentimentConfig(), progress=None) -> TrainingRun:
    """Train one sentiment model; the score is the held-out pooling weight on
    sentiment and negation words (mean over sentences of their summed weight).

    ``run.curves`` (one value per checkpoint, on the held-out sentences): accuracy on
    negated and on plain sentences, the pooling weight on filler, the mean normalised
    entropy and the mean largest weight of the pooling rows, the share of rows that are
    nearly one-hot (largest weight above NEARLY_ONE_HOT), and the lowest and highest
    P(positive) given to a negated sentence."""
    data_rng = np.random.default_rng([config.seed, 0])
    ids, _, labels, _ = make_corpus(data_rng, config.n_train)
    seen = {row.tobytes() for row in ids}
    h_ids, _, h_labels, h_negated = make_corpus(data_rng, 2 * config.n_held_out)
    fresh = np.array([row.tobytes() not in seen for row in h_ids])
    keep = np.flatnonzero(fresh)[: config.n_held_out]  # held-out sentences never trained on
    h_ids, h_labels, h_negated = h_ids[keep], h_labels[keep], h_negated[keep]
    key_word = KEY_WORD[h_ids]  # (N, T)
    display = np.zeros((len(DISPLAY), MAX_LEN), dtype=np.int64)
    for i, text in enumerate(DISPLAY):
        row = encode(text)[0]
        display[i, : len(row)] = row
    params = init_params(config, np.random.default_rng([config.seed, 2]))
    tau, H = config.temperature, config.heads

    def loss_and_grads(p, rng, step):
        pick = rng.integers(0, len(ids), config.batch)
        logits, caches = forward(p, ids[pick], tau, H)
        loss, c = cross_entropy_forward(logits, labels[pick])
        grads = backward(p, cross_entropy_backward(c), caches)
        if step < config.pool_first and "Wo" in grads:
            grads["Wo"] = np.zeros_like(grads["Wo"])  # the layer stays off: y = 0
        return loss, grads

    def measure(p):
        logits, caches = forward(p, h_ids, tau, H)
        loss, _ = cross_entropy_forward(logits, h_labels)
        right = logits.argmax(axis=1) == h_labels
        a = caches["pool"][3]  # (N, T)
        shown = predict(p, display, tau, H)
        snaps = {"pool": shown["pool"]}
        if "attn" in shown:
            snaps["attn"] = shown["attn"]
        mask = h_ids != 0
        with np.errstate(divide="ignore", invalid="ignore"):
            ent = -np.sum(np.where(a > 0, a * np.log(np.where(a > 0, a, 1.0)), 0.0), axis=1)
        key_share = float(np.mean(np.sum(a * key_word, axis=1)))
        filler = (np.array(KINDS)[h_ids] == "filler") & mask
        # P(positive) of the negated sentences: pooling alone can only guess, near 0.5
        z = logits - logits.max(axis=1, keepdims=True)
        positive = (np.exp(z[:, 1]) / np.exp(z).sum(axis=1))[h_negated]
        return Measure(
            accuracy=float(right.mean()),
            loss=loss,
            score=key_share,
            snapshots=snaps,
            extra={
                "negated_accuracy": float(right[h_negated].mean()),
                "plain_accuracy": float(right[~h_negated].mean()),
                "filler_share": float(np.mean(np.sum(a * filler, axis=1))),
                "pool_entropy": float(np.mean(ent / np.log(mask.sum(axis=1).clip(2)))),
                "max_weight": float(np.mean(a.max(axis=1))),
                "one_hot_share": float(np.mean(a.max(axis=1) > NEARLY_ONE_HOT)),
                "negated_p_low": float(positive.min()) if positive.size else np.nan,
                "negated_p_high": float(positive.max()) if positive.size else np.nan,
            },
        )

    return train("sentiment", config.seed, config, params, loss_and_grads, measure,
                 {"display": DISPLAY, "display_ids": display},
                 steps=config.steps, lr=config.lr, decay=config.decay, progress=progress)
