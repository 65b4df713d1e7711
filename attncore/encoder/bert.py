r"""A real pretrained Transformer, all-MiniLM-L6-v2, run by our own NumPy code.

BERT architecture (6 layers, 12 heads, d_model = 384, d_k = 32, FFN 1536, GELU) with
HF ``BertModel`` semantics, computed in float64 from the float32 weights:

* embeddings: word + position + token type (always 0), then LayerNorm;
* each layer (post-LN): multi-head self-attention, :math:`\mathrm{softmax}(QK^\top/\sqrt{d_k})V`
  per head, concatenated, times :math:`W_O`; residual add; LayerNorm; the feed-forward
  network :math:`\mathrm{GELU}(x W_1 + b_1) W_2 + b_2` with the exact erf GELU; residual
  add; LayerNorm;
* the sentence embedding, as sentence-transformers computes it for this model: the mean
  of the last hidden states over all tokens ([CLS] and [SEP] included), L2-normalised.

Texts longer than ``max_tokens`` WordPieces (256 by default, sentence-transformers'
``max_seq_length`` for this model) are cut to their first ``max_tokens - 1`` pieces
plus [SEP], and the trace says so (``truncated``). A text with no WordPiece at all
(empty, only spaces) is refused with ValueError: [CLS][SEP] alone says nothing about it.

The files are found and checked by :mod:`attncore.encoder.files`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy.special import erf

from .._checks import whole_number
from .._installed import read_only
from ..measure import one_blas_thread
from ..softmax import softmax
from .files import LayerWeights, MiniLM, ModelConfig, model

MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
SPECIAL_TOKENS = ("[CLS]", "[SEP]")


def even_special_share(tokens) -> float:
    """The share of attention [CLS] and [SEP] would get if every query spread its weight
    evenly over the T tokens it sees (all of them: this encoder has no mask): their
    count / T. Against it, a measured share says whether they draw more than their due.

    >>> even_special_share(["[CLS]", "my", "cat", "[SEP]"])
    0.5
    """
    tokens = list(tokens)
    return sum(t in SPECIAL_TOKENS for t in tokens) / len(tokens)


def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    r"""LayerNorm over the last axis: :math:`\gamma \odot (x - \mu)/\sqrt{\sigma^2 + \epsilon}
    + \beta`, with the mean :math:`\mu` and the (biased) variance :math:`\sigma^2` of each row."""
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + eps) + beta


def gelu(x: np.ndarray) -> np.ndarray:
    r"""The exact GELU, :math:`x\,\Phi(x) = \tfrac{x}{2}\,(1 + \mathrm{erf}(x/\sqrt 2))`."""
    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))


def tokenize(text: str, max_tokens: int = MAX_TOKENS, m: MiniLM | None = None
             ) -> tuple[list[str], np.ndarray, int]:
    """WordPieces of ``text`` with [CLS] and [SEP], at most ``max_tokens`` of them.

    Returns the tokens, their ids (T,) and the number of pieces before the cap.
    Raises ValueError for text that is not a string or that has no WordPiece.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string; got {type(text).__name__}")
    m = m or model()
    max_tokens = whole_number(max_tokens, "max_tokens", 3, m.config.max_positions)
    enc = m.tokenizer.encode(text)
    tokens, ids = list(enc.tokens), list(enc.ids)  # [CLS] piece ... piece [SEP]
    if len(tokens) <= 2:
        raise ValueError(f"text has no WordPieces (got {text[:40]!r}); type at least one "
                         "word, number or symbol")
    n_pieces = len(tokens)
    if n_pieces > max_tokens:  # keep [CLS] and the first pieces, end with [SEP] again
        tokens = tokens[:max_tokens - 1] + tokens[-1:]
        ids = ids[:max_tokens - 1] + ids[-1:]
    return tokens, np.array(ids, dtype=np.int64), n_pieces


@dataclass(frozen=True, eq=False)
class PretrainedTrace:
    """Every intermediate of one forward pass. Arrays are read-only.

    Shapes: L layers, H heads, T tokens, d = d_model = 384, d_k = 32, d_ff = 1536.

    Attributes
    ----------
    tokens, ids : the WordPieces ([CLS] first, [SEP] last) and their ids (T,)
    truncated : True when the text had more than ``max_tokens`` pieces (``n_pieces``)
    word_embeddings, position_embeddings, token_type_embeddings : (T, d) each
    embedding_sum : (T, d) their sum, the input of the embedding LayerNorm
    hidden_states : (L + 1, T, d) the embeddings after LayerNorm, then each layer's output
    q, k, v : (L, H, T, d_k) per layer and head
    scores : (L, H, T, T) q kᵀ / √d_k; attentions : (L, H, T, T) softmax of each row
    head_outputs : (L, H, T, d_k) attentions @ v, the attention output before W_O
    attention_output : (L, T, d) heads concatenated, times W_O, plus its bias
    attn_ln_input : (L, T, d) hidden state + attention_output (the first residual add)
    attn_ln_output : (L, T, d) after the first LayerNorm
    ffn_hidden, ffn_activations : (L, T, d_ff) x W_1 + b_1, and its GELU
    ffn_output : (L, T, d) activations W_2 + b_2
    ffn_ln_input : (L, T, d) attn_ln_output + ffn_output; its LayerNorm is hidden_states[l + 1]
    mean_pooled : (d,) mean of hidden_states[-1] over tokens
    sentence_embedding : (d,) mean_pooled / its norm: norm 1
    """

    text: str
    tokens: list[str]  # a list, as the tokenizer gives it, so it compares equal to one
    ids: np.ndarray
    truncated: bool
    n_pieces: int
    max_tokens: int
    config: ModelConfig
    word_embeddings: np.ndarray
    position_embeddings: np.ndarray
    token_type_embeddings: np.ndarray
    embedding_sum: np.ndarray
    hidden_states: np.ndarray
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    scores: np.ndarray
    attentions: np.ndarray
    head_outputs: np.ndarray
    attention_output: np.ndarray
    attn_ln_input: np.ndarray
    attn_ln_output: np.ndarray
    ffn_hidden: np.ndarray
    ffn_activations: np.ndarray
    ffn_output: np.ndarray
    ffn_ln_input: np.ndarray
    mean_pooled: np.ndarray
    sentence_embedding: np.ndarray

    @property
    def scale(self) -> float:
        """The score scale 1/√d_k (1/√32 for this model)."""
        return 1.0 / np.sqrt(self.config.d_k)

    @property
    def residual_stream(self) -> tuple[list[str], np.ndarray]:
        """The hidden state after each step: names and a (2L + 1, T, d) array.

        "embeddings", then per layer "L1 attn" (the stream after the attention sublayer's
        residual add and LayerNorm) and "L1 FFN" (after the feed-forward sublayer's: the
        layer's output). BERT normalises after each residual add (post-LN). The names are
        short enough for a figure's axis to show whole (10 characters).
        """
        names, states = ["embeddings"], [self.hidden_states[0]]
        for n in range(self.config.n_layers):
            names += [f"L{n + 1} attn", f"L{n + 1} FFN"]
            states += [self.attn_ln_output[n], self.hidden_states[n + 1]]
        return names, np.stack(states)

    def arrays(self) -> dict[str, np.ndarray]:
        """Every array of the trace by name, for saving (``np.savez``)."""
        return {name: value for name, value in vars(self).items()
                if isinstance(value, np.ndarray)}


def _embed(m: MiniLM, ids: np.ndarray) -> dict[str, np.ndarray]:
    T = len(ids)
    word = m.word_embeddings[ids].astype(np.float64)  # (T, d)
    position = m.position_embeddings[:T]  # (T, d)
    token_type = np.broadcast_to(m.token_type_embeddings[0], word.shape)  # type 0 everywhere
    total = word + position + token_type
    return {"word_embeddings": word, "position_embeddings": position,
            "token_type_embeddings": np.array(token_type), "embedding_sum": total,
            "hidden": layer_norm(total, m.emb_ln_gamma, m.emb_ln_beta, m.config.layer_norm_eps)}


def _layer(x: np.ndarray, w: LayerWeights, cfg: ModelConfig,
           keep: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """One encoder layer on x (..., T, d), for one text or a batch of copies of it.

    ``keep`` (..., H) of 0/1 switches heads off, as HF's ``head_mask`` does (their
    weights are multiplied by 0).
    """
    *lead, T, d = x.shape
    H, d_k = cfg.n_heads, cfg.d_k

    def heads(y: np.ndarray) -> np.ndarray:
        return y.reshape(*lead, T, H, d_k).swapaxes(-2, -3)  # (..., T, d) -> (..., H, T, d_k)

    q, k, v = heads(x @ w.w_q + w.b_q), heads(x @ w.w_k + w.b_k), heads(x @ w.w_v + w.b_v)
    scores = q @ k.swapaxes(-1, -2) / np.sqrt(d_k)  # (..., H, T, d_k) x (.., d_k, T) -> (.., T, T)
    attentions = softmax(scores, axis=-1)
    if keep is not None:
        attentions = attentions * keep[..., None, None]
    head_outputs = attentions @ v  # (..., H, T, T) x (..., H, T, d_k) -> (..., H, T, d_k)
    concat = head_outputs.swapaxes(-2, -3).reshape(*lead, T, d)  # heads side by side
    attention_output = concat @ w.w_o + w.b_o
    attn_ln_input = x + attention_output  # residual add
    attn_ln_output = layer_norm(attn_ln_input, w.ln1_gamma, w.ln1_beta, cfg.layer_norm_eps)
    ffn_hidden = attn_ln_output @ w.w_in + w.b_in  # (..., T, d_ff)
    ffn_activations = gelu(ffn_hidden)
    ffn_output = ffn_activations @ w.w_out + w.b_out  # (..., T, d)
    ffn_ln_input = attn_ln_output + ffn_output  # residual add
    return {"q": q, "k": k, "v": v, "scores": scores, "attentions": attentions,
            "head_outputs": head_outputs, "attention_output": attention_output,
            "attn_ln_input": attn_ln_input, "attn_ln_output": attn_ln_output,
            "ffn_hidden": ffn_hidden, "ffn_activations": ffn_activations,
            "ffn_output": ffn_output, "ffn_ln_input": ffn_ln_input,
            "hidden": layer_norm(ffn_ln_input, w.ln2_gamma, w.ln2_beta, cfg.layer_norm_eps)}


def _pool(last_hidden: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sentence-transformers' mean pooling (every token counts) and L2 normalisation:
    (..., T, d) -> (..., d) twice."""
    mean = last_hidden.mean(axis=-2)
    norm = np.linalg.norm(mean, axis=-1, keepdims=True)
    return mean, mean / np.maximum(norm, 1e-12)


def _forward(m: MiniLM, ids: np.ndarray, start: int = 0, x: np.ndarray | None = None,
             head_mask: np.ndarray | None = None) -> tuple[dict, list[dict]]:
    """Embeddings and layers ``start`` onward (from hidden state ``x`` when it is given).

    ``head_mask`` is (..., L, H) of 0/1; with leading axes, ``x`` is (..., T, d) too.
    """
    emb = _embed(m, ids) if x is None else {"hidden": x}
    steps, x = [], emb["hidden"]
    with one_blas_thread():  # small products: BLAS threads only spin on a busy machine
        for n in range(start, m.config.n_layers):
            steps.append(_layer(x, m.layers[n], m.config,
                                None if head_mask is None else head_mask[..., n, :]))
            x = steps[-1]["hidden"]
    return emb, steps


# A trace of 64 pieces holds about 27 MB (256 pieces: about 140 MB), so only a few are kept.
@functools.lru_cache(maxsize=8)
def _encode(text: str, max_tokens: int) -> PretrainedTrace:
    m = model()
    tokens, ids, n_pieces = tokenize(text, max_tokens, m)
    emb, steps = _forward(m, ids)
    per_layer = {name: np.stack([s[name] for s in steps]) for name in steps[0]
                 if name != "hidden"}
    hidden_states = np.stack([emb["hidden"]] + [s["hidden"] for s in steps])
    mean_pooled, sentence_embedding = _pool(hidden_states[-1])
    arrays = {name: read_only(a) for name, a in
              {**{k: v for k, v in emb.items() if k != "hidden"}, **per_layer,
               "ids": ids, "hidden_states": hidden_states, "mean_pooled": mean_pooled,
               "sentence_embedding": sentence_embedding}.items()}
    return PretrainedTrace(text=text, tokens=tokens, truncated=n_pieces > max_tokens,
                           n_pieces=n_pieces, max_tokens=max_tokens, config=m.config,
                           **arrays)


def encode(text: str, max_tokens: int = MAX_TOKENS) -> PretrainedTrace:
    """Run all-MiniLM-L6-v2 on ``text`` and return every intermediate (cached per text).

    Parameters
    ----------
    text : str
        Any Unicode text with at least one WordPiece.
    max_tokens : int
        Cap on WordPieces, [CLS] and [SEP] included (3 to 512; 256 by default, as
        sentence-transformers does for this model).

    Returns
    -------
    PretrainedTrace
        Attention rows sum to 1; ``sentence_embedding`` has norm 1.

    Raises
    ------
    ValueError
        For text with no WordPiece, or a bad ``max_tokens``;
        ModelFilesError (a ValueError) when the model files fail their checks.
    ModelNotInstalledError
        When the model package is missing (the message names the install command).
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string; got {type(text).__name__}")
    return _encode(text, whole_number(max_tokens, "max_tokens", 3, 512))


def special_token_mass(trace: PretrainedTrace) -> np.ndarray:
    """Attention on [CLS] and [SEP] (the "attention sinks"), averaged over query rows.

    Returns (L, H, 2): the mean weight each head puts on [CLS] (last axis 0) and on
    [SEP] (1). Each lies in 0..1 and their sum is at most 1.
    """
    cols = [[j for j, t in enumerate(trace.tokens) if t == s] for s in SPECIAL_TOKENS]
    return np.stack([trace.attentions[..., c].sum(axis=-1).mean(axis=-1) for c in cols],
                    axis=-1)


@dataclass(frozen=True)
class HeadAblation:
    """The sentence embedding with head (layer, head) switched off, against the original.

    ``cosine`` is the cosine similarity of the two embeddings (1 = unchanged).
    """

    layer: int
    head: int
    original: np.ndarray
    ablated: np.ndarray
    cosine: float


def ablate_head(text: str, layer: int, head: int, max_tokens: int = MAX_TOKENS
                ) -> HeadAblation:
    """Switch off one head (its attention weights times 0, as HF's ``head_mask``) and
    recompute the sentence embedding. ``layer`` and ``head`` count from 0."""
    trace = encode(text, max_tokens)
    cfg = trace.config
    layer = whole_number(layer, "layer", 0, cfg.n_layers - 1)
    head = whole_number(head, "head", 0, cfg.n_heads - 1)
    head_mask = np.ones((cfg.n_layers, cfg.n_heads))
    head_mask[layer, head] = 0.0
    # Layers before the ablated one are unchanged: start from the trace's hidden state.
    _, steps = _forward(model(), trace.ids, layer, trace.hidden_states[layer], head_mask)
    _, ablated = _pool(steps[-1]["hidden"])
    original = trace.sentence_embedding
    return HeadAblation(layer, head, original, read_only(ablated),
                        float(np.clip(original @ ablated, -1.0, 1.0)))


def ablate_each_head(text: str, layer: int, max_tokens: int = MAX_TOKENS) -> np.ndarray:
    """The cosine of the sentence embedding with each head of ``layer`` (from 0) switched
    off in turn, against the original: (H,) values, 1 = unchanged.

    Same numbers as :func:`ablate_head` head by head, computed as one batch of H copies.
    """
    trace = encode(text, max_tokens)
    cfg = trace.config
    layer = whole_number(layer, "layer", 0, cfg.n_layers - 1)
    head_mask = np.ones((cfg.n_heads, cfg.n_layers, cfg.n_heads))  # (copy, L, H)
    head_mask[np.arange(cfg.n_heads), layer, np.arange(cfg.n_heads)] = 0.0
    x = trace.hidden_states[layer]
    x = np.broadcast_to(x, (cfg.n_heads, *x.shape))  # (copy, T, d)
    _, steps = _forward(model(), trace.ids, layer, x, head_mask)
    _, ablated = _pool(steps[-1]["hidden"])  # (H, d)
    return np.clip(ablated @ trace.sentence_embedding, -1.0, 1.0)


def similarity(text_a: str, text_b: str, max_tokens: int = MAX_TOKENS) -> float:
    """Cosine similarity of two texts' sentence embeddings (their dot product: both
    have norm 1), in -1..1."""
    a = encode(text_a, max_tokens).sentence_embedding
    b = encode(text_b, max_tokens).sentence_embedding
    return float(np.clip(a @ b, -1.0, 1.0))
