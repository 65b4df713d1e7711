r"""Alignment that emerges: a toy English -> French attention encoder-decoder.

The task: ``det [adj] noun verb det [adj] noun`` in English becomes the French word
for word, except that each adjective follows its noun ("the black dog sees a cat" ->
"le chien noir voit un chat"), as these adjectives (colours, a feeling) do in French; the
nouns are masculine and begin with a consonant, so no article changes form. About a third
of the target words are moved, so the alignment has crossings. The model is trained on
the translation loss alone; nothing tells it which source word a target word comes from.

Model (d = ``d_model``):
encoder state :math:`h_j = E_{src}[x_j] + P_{src}[j]`; decoder state
:math:`s_t = E_{tgt}[y_{t-1}] + P_{tgt}[t]` (the previous target word and the
position); the attention over the source gives :math:`c_t = \sum_j a_{tj} h_j` with
the Bahdanau (additive) or Luong (general) score; the output is
:math:`\mathrm{softmax}([s_t; c_t] W + b)`. With no recurrent network the "previous"
state of Bahdanau and the "current" state of Luong are the same :math:`s_t`, so the
two models differ only in their score.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import positive_number, whole_number
from .attention import cross_attention_backward, cross_attention_forward
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

DICTIONARY = {
    "the": "le", "a": "un", "this": "ce", "my": "mon",
    "black": "noir", "white": "blanc", "grey": "gris", "red": "rouge", "green": "vert",
    "happy": "heureux",
    "cat": "chat", "dog": "chien", "duck": "canard", "boy": "garçon", "fish": "poisson",
    "horse": "cheval", "wolf": "loup",
    "sees": "voit", "eats": "mange", "likes": "aime", "follows": "suit", "finds": "trouve",
    "wants": "veut",
}
DETS, ADJS = ("the", "a", "this", "my"), ("black", "white", "grey", "red", "green", "happy")
NOUNS = ("cat", "dog", "duck", "boy", "fish", "horse", "wolf")
VERBS = ("sees", "eats", "likes", "follows", "finds", "wants")
PAD, BOS, EOS = "<pad>", "<s>", "</s>"
SOURCE_VOCAB = (PAD, EOS, *DICTIONARY)
TARGET_VOCAB = (PAD, BOS, EOS, *DICTIONARY.values())
SOURCE_ID = {w: i for i, w in enumerate(SOURCE_VOCAB)}
TARGET_ID = {w: i for i, w in enumerate(TARGET_VOCAB)}
MAX_LEN = 8  # 7 words and the end mark
KINDS = ("additive", "general")
DISPLAY = (
    "the black dog sees a red cat",
    "my grey horse likes the fish",
    "a cat eats this white duck",
)


@dataclass(frozen=True)
class AlignmentConfig:
    """Settings of one alignment run; the defaults are the page's defaults."""

    kind: str = "additive"
    seed: int = 0
    steps: int = 250
    d_model: int = 32
    lr: float = 0.015
    weight_decay: float = 0.1
    batch: int = 64
    n_train: int = 4000
    n_held_out: int = 250

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}; got {self.kind!r}")
        check_run_settings(self, heads=False)
        whole_number(self.n_train, "n_train", 10, 100_000)
        whole_number(self.n_held_out, "n_held_out", 10, 100_000)
        positive_number(self.lr, "lr")
        if not (0 <= self.weight_decay < 1):
            raise ValueError(f"weight_decay must lie in [0, 1); got {self.weight_decay!r}")


def translate_words(english: list[str]) -> tuple[list[str], list[int]]:
    """The French words and, for each, the index of its English word (the alignment)."""
    order, i = [], 0
    while i < len(english):
        if english[i] in ADJS and i + 1 < len(english) and english[i + 1] in NOUNS:
            order += [i + 1, i]  # noun first, then its adjective
            i += 2
        else:
            order.append(i)
            i += 1
    return [DICTIONARY[english[j]] for j in order], order


def encode_pair(english: list[str]):
    """Source ids, decoder input ids, target ids and the alignment, each (MAX_LEN,)
    padded with 0; the alignment of the end mark is the source end mark, of padding -1."""
    french, order = translate_words(english)
    n = len(english)
    src = np.zeros(MAX_LEN, dtype=np.int64)
    src[: n + 1] = [SOURCE_ID[w] for w in english] + [SOURCE_ID[EOS]]
    tgt = np.zeros(MAX_LEN, dtype=np.int64)
    tgt[: n + 1] = [TARGET_ID[w] for w in french] + [TARGET_ID[EOS]]
    dec = np.zeros(MAX_LEN, dtype=np.int64)
    dec[: n + 1] = [TARGET_ID[BOS]] + [TARGET_ID[w] for w in french]
    align = np.full(MAX_LEN, -1)
    align[: n + 1] = order + [n]
    return src, dec, tgt, align


def make_pairs(rng: np.random.Generator, n: int):
    """``n`` random sentence pairs as arrays (n, MAX_LEN): src, dec, tgt, align.

    Each noun phrase has an adjective with probability 1/2."""
    det = rng.integers(0, len(DETS), (n, 2))
    adj = rng.integers(0, len(ADJS), (n, 2))
    has_adj = rng.random((n, 2)) < 0.5
    noun = rng.integers(0, len(NOUNS), (n, 2))
    verb = rng.integers(0, len(VERBS), n)
    rows = []
    for i in range(n):
        words = []
        for j in range(2):
            adjective = [ADJS[adj[i, j]]] if has_adj[i, j] else []
            words += [DETS[det[i, j]], *adjective, NOUNS[noun[i, j]]]
            words += [VERBS[verb[i]]] * int(j == 0)
        rows.append(encode_pair(words))
    return tuple(np.stack(col) for col in zip(*rows, strict=True))


def init_params(config: AlignmentConfig, rng: np.random.Generator) -> dict:
    """Embeddings and positions of both sides (D wide), the score's parameters
    (W1, W2 (D, D/2), v (D/2,) for additive; W (D, D) for general) and the output W_out
    (2D, V_tgt), b_out (V_tgt,)."""
    D = config.d_model
    p = {
        "E_src": rng.standard_normal((len(SOURCE_VOCAB), D)) / np.sqrt(D),
        "P_src": rng.standard_normal((MAX_LEN, D)) / np.sqrt(D),
        "E_tgt": rng.standard_normal((len(TARGET_VOCAB), D)) / np.sqrt(D),
        "P_tgt": rng.standard_normal((MAX_LEN, D)) / np.sqrt(D),
        "W_out": init_matrix(rng, 2 * D, len(TARGET_VOCAB)),
        "b_out": np.zeros(len(TARGET_VOCAB)),
    }
    if config.kind == "additive":
        A = D // 2  # the additive score's hidden width
        p.update(W1=init_matrix(rng, D, A), W2=init_matrix(rng, D, A))
        p["v"] = init_matrix(rng, A, 1)[:, 0]
    else:
        p["W"] = init_matrix(rng, D, D)
    return p


def forward(p: dict, src: np.ndarray, dec: np.ndarray, kind: str):
    """Logits (B, Tt, V_tgt) and caches; caches["attn"][3] is the alignment (B, Tt, Ts)."""
    B, T = src.shape
    h, c_src = embedding_forward(src, p["E_src"])
    h = h + p["P_src"][:T]  # (B, Ts, D)
    s, c_tgt = embedding_forward(dec, p["E_tgt"])
    s = s + p["P_tgt"][:T]  # (B, Tt, D)
    context, c_attn = cross_attention_forward(s, h, p, kind, (src != 0)[:, None, :])
    z = np.concatenate([s, context], axis=-1)  # (B, Tt, 2D)
    logits, c_out = linear_forward(z, p["W_out"], p["b_out"])
    return logits, {"src": c_src, "tgt": c_tgt, "attn": c_attn, "out": c_out, "T": T}


def backward(p: dict, dlogits: np.ndarray, caches: dict) -> dict:
    """Gradients of every parameter, given dlogits (B, Tt, V_tgt)."""
    g = {}
    dz, g["W_out"], g["b_out"] = linear_backward(dlogits, caches["out"])
    D = dz.shape[-1] // 2
    ds, dh, attn_grads = cross_attention_backward(dz[..., D:], caches["attn"])
    g.update(attn_grads)
    ds = ds + dz[..., :D]
    T = caches["T"]
    g["E_src"] = embedding_backward(dh, caches["src"])
    g["E_tgt"] = embedding_backward(ds, caches["tgt"])
    g["P_src"] = np.zeros_like(p["P_src"])
    g["P_src"][:T] = dh.sum(axis=0)
    g["P_tgt"] = np.zeros_like(p["P_tgt"])
    g["P_tgt"][:T] = ds.sum(axis=0)
    return g


def alignment_score(weights: np.ndarray, align: np.ndarray, tgt: np.ndarray) -> float:
    """Fraction of target words (not the end mark, not padding) whose largest weight
    falls on their source word. weights (B, Tt, Ts), align and tgt (B, Tt)."""
    words = (tgt != 0) & (tgt != TARGET_ID[EOS])
    return float(np.mean(weights.argmax(axis=-1)[words] == align[words]))


def train_alignment(config: AlignmentConfig = AlignmentConfig(), progress=None) -> TrainingRun:
    """Train one encoder-decoder. Accuracy: held-out target tokens (end mark included)
    predicted right given the correct previous words; score: :func:`alignment_score`."""
    data_rng = np.random.default_rng([config.seed, 0])
    src, dec, tgt, _ = make_pairs(data_rng, config.n_train)
    h_src, h_dec, h_tgt, h_align = make_pairs(data_rng, config.n_held_out)
    shown = [encode_pair(text.split()) for text in DISPLAY]
    d_src, d_dec, d_tgt, d_align = (np.stack(col) for col in zip(*shown, strict=True))
    params = init_params(config, np.random.default_rng([config.seed, 2]))
    kind = config.kind

    def loss_and_grads(p, rng, step):
        pick = rng.integers(0, len(src), config.batch)
        logits, caches = forward(p, src[pick], dec[pick], kind)
        V = logits.shape[-1]
        target = tgt[pick].ravel()
        loss, c = cross_entropy_forward(logits.reshape(-1, V), target, target != 0)
        return loss, backward(p, cross_entropy_backward(c).reshape(logits.shape), caches)

    def measure(p):
        logits, caches = forward(p, h_src, h_dec, kind)
        V = logits.shape[-1]
        real = h_tgt != 0
        loss, _ = cross_entropy_forward(logits.reshape(-1, V), h_tgt.ravel(), real.ravel())
        a = caches["attn"][3]
        moved = (h_align != np.arange(MAX_LEN)) & real & (h_tgt != TARGET_ID[EOS])
        shown_logits, shown_caches = forward(p, d_src, d_dec, kind)
        return Measure(
            accuracy=float(np.mean((logits.argmax(-1) == h_tgt)[real])),
            loss=loss,
            score=alignment_score(a, h_align, h_tgt),
            snapshots={"alignment": shown_caches["attn"][3]},
            extra={"moved_score": float(np.mean(a.argmax(-1)[moved] == h_align[moved]))},
        )

    examples = {"display": DISPLAY, "src": d_src, "dec": d_dec, "tgt": d_tgt, "align": d_align}
    return train("alignment", config.seed, config, params, loss_and_grads, measure, examples,
                 steps=config.steps, lr=config.lr, weight_decay=config.weight_decay,
                 progress=progress)


@dataclass(frozen=True)
class TrainedAlignment:
    """The alignment a trained model gives the first :data:`DISPLAY` sentence.

    ``weights`` (T, T): the French words and the end mark (rows, ``french``) over the
    English words and the end mark (columns, ``english``), each row summing to 1;
    ``order[i]`` is the English word of French word i (:func:`translate_words`).
    ``accuracy`` and ``score`` are the held-out token accuracy and alignment score
    (:func:`alignment_score`) after ``steps`` steps from ``seed``, at width ``d_model``.
    """

    kind: str
    weights: np.ndarray
    french: tuple[str, ...]
    english: tuple[str, ...]
    order: tuple[int, ...]
    accuracy: float
    score: float
    steps: int
    seed: int
    d_model: int

    @property
    def moved(self) -> tuple[int, ...]:
        """The French words (rows) that are not in their English word's place."""
        return tuple(i for i, j in enumerate(self.order) if i != j)

    @property
    def moved_found(self) -> int:
        """How many of the moved words put their largest weight on their English word."""
        return sum(int(np.argmax(self.weights[i])) == self.order[i] for i in self.moved)


def trained_alignment(kind: str, steps: int, seed: int = 0) -> TrainedAlignment:
    """Train the ``kind`` model for ``steps`` steps from ``seed`` (the other settings
    :class:`AlignmentConfig`'s defaults) and read its alignment of the first
    :data:`DISPLAY` sentence."""
    run = train_alignment(AlignmentConfig(kind=kind, steps=steps, seed=seed))
    english = DISPLAY[0].split()
    french, order = translate_words(english)
    n = len(english) + 1  # the words and the end mark
    return TrainedAlignment(
        kind=kind, weights=run.snapshots["alignment"][-1, 0, :n, :n].copy(),
        french=(*french, EOS), english=(*english, EOS), order=tuple(order),
        accuracy=run.final_accuracy, score=run.attention_score, steps=run.steps,
        seed=run.seed, d_model=run.config.d_model)
