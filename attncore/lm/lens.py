r"""Reading the residual stream of the clean run: the logit lens and direct logit attribution.

The stream at the last position after the last layer is a sum: the token's embedding,
what every head wrote (its output times its slice of W_O) and what every FFN wrote. The
final RMSNorm divides that sum by its root-mean-square and multiplies by a gain g; the
output matrix then gives the logits. With the RMS *frozen* at the clean run's value,
everything after the sum is linear, so the logit difference splits exactly:

.. math::
    LD = \sum_c \frac{c}{\mathrm{rms}} \odot g \cdot (W_U[\mathrm{answer}] - W_U[\mathrm{wrong}])

over the components c. A model whose final norm is a LayerNorm (GPT-2) also subtracts
the mean and adds a bias b: with the centring and the scale σ frozen, each component
counts as :math:`(c - \bar c)/\sigma \odot g`, and b, with the attention layers' own
output biases, is one more part (``biases``). This is *direct* attribution: a head
whose output only changes what later layers do gets nothing here (patching,
:mod:`attncore.lm.patching`, sees it).

The *logit lens* puts the stream after each layer through the final norm and the output
matrix, as if the model stopped there: a rough reading, since the earlier layers were never
trained to be read this way (the tuned lens, Belrose et al. 2023, trains one map a layer
for this reason).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .decoder import norm
from .files import LanguageModel
from .pair import PairRuns


@dataclass(frozen=True, eq=False)
class Lens:
    """The logit lens at the last position, for the stream entering each layer and after
    the last: L + 1 rows (row 0 the embedding, row L the model's own output).

    ``rank`` of the answer (1: the most likely), ``p_answer`` its probability, ``top`` the
    most likely token's id and ``p_top`` its probability.
    """

    rank: np.ndarray
    p_answer: np.ndarray
    top: np.ndarray
    p_top: np.ndarray


def logit_lens(m: LanguageModel, runs: PairRuns) -> Lens:
    """The clean run's stream at the last position after each layer, through the model's
    final norm (RMSNorm, or GPT-2's LayerNorm) and the output matrix."""
    cfg, w = m.config, m.weights
    states = runs.clean["hidden_states"][:, -1]  # (L + 1, d)
    logits = (norm(states, w.output_norm, w.output_norm_bias, cfg) @ w.output
              ).astype(np.float64)
    probs = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    answer = logits[:, runs.pair.answer]
    top = logits.argmax(axis=-1)
    return Lens(rank=1 + (logits > answer[:, None]).sum(axis=-1),
                p_answer=probs[:, runs.pair.answer], top=top,
                p_top=probs[np.arange(len(top)), top])


@dataclass(frozen=True, eq=False)
class Attribution:
    """The clean logit difference split into the embedding's part (with the position's, for
    learned positions), each head's (L, H) and each FFN's (L), and ``biases``: what the
    attention layers' output biases and the final norm's bias add (0 for Llama, SmolLM2
    and Qwen2, which have none); ``total`` is their sum and ``ld`` the run's own logit
    difference."""

    embed: float
    heads: np.ndarray
    ffn: np.ndarray
    ld: float
    biases: float = 0.0

    @property
    def total(self) -> float:
        return float(self.embed + self.heads.sum() + self.ffn.sum() + self.biases)


def direct_attribution(m: LanguageModel, runs: PairRuns) -> Attribution:
    r"""Each component's direct part of the clean LD at the last position:
    :math:`(c / \mathrm{rms}) \odot g \cdot (W_U[\mathrm{answer}] - W_U[\mathrm{wrong}])`,
    rms and g the final RMSNorm's of the clean run; for a LayerNorm,
    :math:`((c - \bar c) / \sigma) \odot g \cdot \ldots`, with σ the clean run's. In float64,
    from the float32 parts.

    Centring a component is the same as centring the direction it is read along:
    :math:`(c - \bar c) \cdot u = c \cdot (u - \bar u)`, so a LayerNorm's parts are the
    components read along the centred direction."""
    cfg, w = m.config, m.weights
    H, d_k = cfg.n_heads, cfg.d_head
    final = runs.clean["hidden_states"][-1, -1].astype(np.float64)  # (d,)
    pair = runs.pair
    unembed = (w.output[:, pair.answer].astype(np.float64)
               - w.output[:, pair.wrong].astype(np.float64))  # (d,)
    if cfg.norm == "rms":
        scale = np.sqrt(np.mean(final * final) + cfg.norm_eps)
    else:  # LayerNorm: its centring and its scale σ, frozen at the clean run's
        scale = np.sqrt(np.var(final) + cfg.norm_eps)
    direction = w.output_norm.astype(np.float64) / scale * unembed  # (d,)
    if cfg.norm == "layer":
        direction -= direction.mean()
    heads_out = runs.clean["head_outputs"][:, :, -1].astype(np.float64)  # (L, H, d_k)
    w_o = w.attn_output.astype(np.float64).reshape(cfg.n_layers, H, d_k, cfg.d_model)
    written = np.einsum("lhk,lhkd->lhd", heads_out, w_o)  # what each head adds, (L, H, d)
    embed = w.token_embd[pair.clean[-1]].astype(np.float64)
    if w.pos_embd is not None:  # learned positions: the last position's vector too
        embed = embed + w.pos_embd[pair.n_tokens - 1]
    ffn = runs.clean["ffn_output"][:, -1].astype(np.float64)  # (L, d)
    biases = 0.0
    if w.attn_output_bias is not None:  # b_O of every layer, written by no one head
        biases += float(w.attn_output_bias.astype(np.float64).sum(axis=0) @ direction)
    if w.output_norm_bias is not None:  # added after the norm: read as it is
        biases += float(w.output_norm_bias.astype(np.float64) @ unembed)
    return Attribution(embed=float(embed @ direction), heads=written @ direction,
                       ffn=ffn @ direction, ld=runs.ld_clean, biases=biases)
