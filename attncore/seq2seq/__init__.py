"""Encoder-decoder attention as in the first neural translation models (lesson 6).

* ``alignment``: the toy encoder and decoder states, the scores, Bahdanau's and Luong's
  attention over the source, local and hard attention;
* ``decoding``: what the decoder then does with the context vector c_t, in each model.
"""

from .alignment import (
    LEXICON,
    LOCAL_MODES,
    LUONG_SCORES,
    Alignment,
    LexiconAlignment,
    LocalAttention,
    Seq2SeqParams,
    bahdanau,
    context_gradient,
    decoder_states,
    encode,
    hard_attention,
    init_seq2seq,
    lexicon_alignment,
    lexicon_matches,
    local_attention,
    luong,
    monotonic_position,
    predictive_position,
    read_as,
    score,
    score_weights,
    word_embeddings,
)
from .decoding import (
    END,
    START,
    BahdanauStep,
    DecoderParams,
    LuongStep,
    bahdanau_step,
    init_decoder,
    luong_step,
    next_word_steps,
    target_vocabulary,
)

__all__ = [
    "END", "LEXICON", "LOCAL_MODES", "LUONG_SCORES", "START", "Alignment", "BahdanauStep",
    "DecoderParams", "LexiconAlignment", "LocalAttention", "LuongStep", "Seq2SeqParams", "bahdanau",
    "bahdanau_step", "context_gradient", "decoder_states", "encode", "hard_attention",
    "init_decoder", "init_seq2seq", "lexicon_alignment", "lexicon_matches",
    "local_attention", "luong", "luong_step", "monotonic_position", "next_word_steps",
    "predictive_position", "read_as", "score", "score_weights", "target_vocabulary",
    "word_embeddings",
]
