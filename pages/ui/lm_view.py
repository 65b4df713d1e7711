"""Presentation helpers of lessons 10 and 11 (the language model and its inference): the
downloads of a prompt's trace, and progress bars around measurements that take seconds."""

from __future__ import annotations

import io

import numpy as np
import streamlit as st

from attncore import lm
from attncore.lm import inference as inf

from .controls import bounded_slider
from .tables import to_csv


def trace_downloads(trace: lm.LMTrace, default_layer: int, note: str) -> None:
    """Lesson 10's downloads: one layer's attention as CSV (the layer chosen here, from
    ``default_layer``); the whole trace as .npz (every array: too big for JSON). ``note``
    says what they hold."""
    cfg, tokens = trace.config, list(trace.tokens)
    L, H, T = cfg.n_layers, cfg.n_heads, len(tokens)
    st.subheader("Download")
    st.markdown(note)

    def trace_npz() -> bytes:
        buffer = io.BytesIO()
        np.savez(buffer, tokens=np.array(tokens), **trace.arrays())
        return buffer.getvalue()

    c1, c2, c3 = st.columns([1, 1, 1])
    with c1:
        layer = bounded_slider(st, "Layer for the CSV", 1, L, default_layer, key="lm_dl_layer")
    rows = [f"layer {layer}, head {n + 1} | {t}" for n in range(H) for t in tokens]
    c2.download_button("CSV", lambda: to_csv(trace.attentions[layer - 1].reshape(H * T, T),
                                             rows, tokens),
                       file_name=f"lm_attention_layer{layer}.csv", mime="text/csv",
                       key="lm_dl_csv", on_click="ignore")
    c3.download_button("Whole trace (.npz)", trace_npz, file_name="lm_trace.npz",
                       mime="application/octet-stream", key="lm_dl_npz", on_click="ignore")


def timed_curve(m: lm.LanguageModel, contexts: tuple[int, ...]) -> inf.TokenTimes:
    """Lesson 11's time of one new token at each context, with a progress bar."""
    bar = st.progress(0.0, text="Timing…")
    result = inf.token_times(contexts, rounds=2,
                             progress=lambda f: bar.progress(f, text="Timing…"), m=m)
    bar.empty()
    return result


def curve_with_progress(m: lm.LanguageModel, text: str, N: int, windows: list[int],
                        sinks: int) -> inf.WindowCurve:
    """Lesson 11's perplexity against the window, with a progress bar."""
    bar = st.progress(0.0, text="Measuring…")
    curve = inf.window_curve(text, windows, sinks, N, progress=lambda f: bar.progress(
        f, text="Measuring…"), m=m)
    bar.empty()
    return curve
