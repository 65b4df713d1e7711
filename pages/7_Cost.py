"""Lesson 7: the cost of attention, measured live on this machine."""

import numpy as np
import pandas as pd
import streamlit as st

from attncore import cost
from pages.text.cost import (
    arithmetic_text,
    chunk_memory_text,
    growth_text,
    loop_text,
    memory_text,
    projections_text,
    speedup_text,
)
from pages.ui.controls import URL
from pages.ui.figures import describe_lines, line_chart
from pages.ui.layout import bad_input_stops_page, bullet_list, practice_questions, show_figure
from pages.ui.live import keep, offer_downloads
from pages.ui.numbers import difference_text
from pages.ui.page import Page, lesson_page
from pages.ui.timings import (
    DEFAULT_D_K,
    DEFAULT_HEADS,
    DEFAULT_MAX_N,
    DEFAULT_ROUNDS,
    LENGTHS,
    LOOP_N,
    MANY_HEADS,
    growth_run,
    lengths_measured,
    loop_runs,
    timing,
)

CHUNK_N = 512  # sequence length of the chunking experiment
MAX_HEADS, MAX_ROUNDS = 8, 9  # the sliders' ends, stated in the limits caption
MIB = cost.MIB

@st.fragment
def growth_section(page: Page, heads: int, d_k: int, rounds: int, results: dict) -> None:
    """Time and memory against n, measured up to the chosen largest n. It reruns alone when
    that n moves (st.fragment): the other sections do not depend on it."""
    st.header("1 · How time and memory grow with n")
    max_n = st.select_slider("Largest n", LENGTHS[2:], value=DEFAULT_MAX_N, key="cost_max_n",
                             **URL)
    wanted = [n for n in LENGTHS if n <= max_n]
    ns = lengths_measured(max_n, heads)
    if len(ns) < len(wanted):
        st.warning(f"With H = {heads}, n stops at {ns[-1]}: n = {wanted[len(ns)]} would hold "
                   f"{heads * wanted[len(ns)] ** 2:,} weights, over the cap of "
                   f"{cost.MAX_WEIGHT_ELEMENTS:,}. Fewer heads reach a longer n.")
    # "Measure again" is above this section, in the lesson body: pressing it reruns the
    # body, and this section with it.
    force = bool(st.session_state.get("cost_again"))
    progress = st.progress(0.0, text="Measuring…")
    with bad_input_stops_page():
        growth, when = timing(*growth_run(
            ns, heads, d_k, rounds, progress=lambda f: progress.progress(
                f, text=f"Measuring: round {round(f * rounds)} of {rounds}…")), force)
    progress.progress(1.0, text=f"Measured {len(ns)} lengths × {rounds} rounds on this server "
                                f"at {when}.")

    n_arr = growth.ns.astype(float)
    ms = growth.seconds * 1e3
    ref = ms[-1] * (n_arr / n_arr[-1]) ** 2  # an n² line through the last point
    left, right = st.columns(2)
    times = {"measured (best)": ms, "∝ n² (reference)": ref}
    memory = {"peak, measured": growth.peak_bytes / MIB,
              "weights H·n²·8 bytes": growth.weights_bytes / MIB}
    with left:
        show_figure(line_chart(n_arr, times, title="Time of one attention call", x_title="n",
                               y_title="milliseconds", log_x=True, log_y=True,
                               dashed=("∝ n² (reference)",), font_size=page.font),
                    key="cost_fig_time",
                    alt=describe_lines(n_arr, times, x_title="n",
                                       y_title="Time of one call in milliseconds (log axes)"))
    with right:
        show_figure(line_chart(n_arr, memory, title="Memory of one call", x_title="n",
                               y_title="MiB", log_x=True, log_y=True,
                               dashed=("weights H·n²·8 bytes",), font_size=page.font),
                    key="cost_fig_memory",
                    alt=describe_lines(n_arr, memory, x_title="n",
                                       y_title="Memory of one call in MiB (log axes)"))
    table = pd.DataFrame({
        "n": growth.ns,
        "best time (ms)": ms,
        "slowest round's best (ms)": growth.round_seconds.max(axis=0) * 1e3,
        "weights H·n² (MiB)": growth.weights_bytes / MIB,
        "peak measured (MiB)": growth.peak_bytes / MIB,
        "peak / weights": growth.peak_bytes / growth.weights_bytes,
    })
    if not page.presenter:  # the figures show the same numbers on a projector
        # static tables: a canvas grid's redraw cost more than the section's two charts
        st.table(table.style.format({c: "{:.3g}" for c in table.columns if c != "n"})
                 .hide(axis="index"))
    st.markdown(arithmetic_text(growth))
    if growth.conclusive:
        st.markdown(growth_text(growth))
    else:
        fitted = ", ".join(str(n) for n in growth.fit_ns)
        st.warning(
            f"Too noisy to conclude: fitted over n = {fitted} the exponent is "
            f"{growth.exponent:.2f}, but the {rounds} rounds fitted one by one give "
            f"{growth.exponent_low:.2f} to {growth.exponent_high:.2f}, a spread over "
            f"{cost.EXPONENT_SPREAD_LIMIT}. Something disturbed the timings, most likely other "
            "work on this machine; this run is not shared with other visitors. Press "
            "“Measure again” when the machine is quieter.")
    if not page.presenter:
        st.markdown(projections_text(growth))
        st.markdown(memory_text(growth))

    # read by the CSV download when clicked (this section may rerun alone after it was drawn)
    results["measurements"] = (table.to_numpy(), [f"n={n}" for n in growth.ns],
                               list(table.columns))
    # The settings go in with the measurements they produced: a download clicked while
    # the lesson reruns never pairs new timings with old settings.
    for name, value in {
        "machine": "this server", "heads": heads, "d_k": d_k, "rounds": rounds,
        "measured_at": when, "ns": growth.ns, "best_seconds": growth.seconds,
        "round_seconds": growth.round_seconds, "peak_bytes": growth.peak_bytes,
        "weights_bytes": growth.weights_bytes, "fit_ns": growth.fit_ns,
        "exponent": growth.exponent,
        "exponent_range": [growth.exponent_low, growth.exponent_high],
        "conclusive": growth.conclusive}.items():
        keep(results, name, value)


@st.cache_data(max_entries=16, show_spinner=False)
def chunk_result(chunk: int, heads: int, d_k: int) -> cost.ChunkExperiment:
    """Memory is counted, not timed: the same on a busy machine, so it is cached."""
    return cost.chunk_experiment(CHUNK_N, heads, d_k, chunk, np.random.default_rng(0))


@st.fragment
def chunk_section(heads: int, d_k: int, results: dict) -> None:
    """The same attention computed a chunk of query rows at a time. It reruns alone when
    the chunk moves (st.fragment): the timings above are not touched."""
    st.header("2 · Chunks of queries: the same output to rounding, chunk·n weights at a time, "
              "not n²")
    chunk = st.select_slider("Chunk (query rows at a time)", [16, 64, 256, CHUNK_N], value=64,
                             key="cost_chunk", **URL)
    cx = chunk_result(chunk, heads, d_k)
    c1, c2, c3 = st.columns(3)
    c1.metric("Peak memory, all rows", f"{cx.full_peak_bytes / MIB:.3g} MiB")
    c2.metric(f"Peak memory, {chunk} rows at a time", f"{cx.chunk_peak_bytes / MIB:.3g} MiB")
    c3.metric("Largest difference in the output", difference_text(cx.max_difference))
    st.markdown(f"n = {CHUNK_N}, H = {heads}: the full call holds H·n² = "
                f"{heads * CHUNK_N**2:,} weights; a chunk holds H·chunk·n = "
                f"{heads * chunk * CHUNK_N:,}. Each row's softmax needs only that row's "
                "scores, so the rows can be done in any grouping. " + chunk_memory_text(cx))
    # Kept for the downloads at the end (see pages.ui.live.keep).
    keep(results, "chunk", {"size": chunk, "max_difference": cx.max_difference,
                            "full_peak_bytes": cx.full_peak_bytes,
                            "chunk_peak_bytes": cx.chunk_peak_bytes})


DOWNLOADS = ["Measurements"]


def download_matrices(results: dict) -> dict:
    """The measurements section 1 shows now: name -> (table, row labels, column labels)."""
    return {"Measurements": results["measurements"]}


def download_trace(results: dict) -> dict:
    """Every measurement the lesson shows now, for the JSON download."""
    return {k: v for k, v in results.items() if k != "measurements"}


@st.fragment
def lesson(page: Page, results: dict) -> None:
    """The controls and sections 1 to 3.

    A fragment: H, d_k and the rounds rerun the lesson only, not the title, the
    closing notes and the downloads below it. What the sections show goes into
    ``results``, which the download buttons read when clicked.
    """
    c1, c2, c3 = st.columns(3)
    heads = c1.slider("Heads H", 1, MAX_HEADS, DEFAULT_HEADS, key="cost_heads", **URL)
    d_k = c2.select_slider("d_k", [16, 32, 64], value=DEFAULT_D_K, key="cost_dk", **URL)
    rounds = c3.slider("Rounds (interleaved)", 3, MAX_ROUNDS, DEFAULT_ROUNDS, key="cost_rounds",
                       **URL)
    again = st.button("Measure again", key="cost_again")

    # The downloads offer the measurements (none on a projector).
    offer_downloads(results, None if page.presenter else DOWNLOADS)
    growth_section(page, heads, d_k, rounds, results)
    chunk_section(heads, d_k, results)

    st.header("3 · Vectorised against a loop over heads")
    with bad_input_stops_page():
        (here, _), (many, _) = (timing(key, measure, again)
                                for key, measure in loop_runs(heads, d_k, rounds))

    loop_table = pd.DataFrame({
        "setting": [f"your settings: n = {LOOP_N}, H = {heads}, d_k = {d_k}",
                    "many small heads: n = {n}, H = {heads}, d_k = {d_k}".format(**MANY_HEADS)],
        "loop over heads (ms)": [here.loop_seconds * 1e3, many.loop_seconds * 1e3],
        "vectorised (ms)": [here.vectorised_seconds * 1e3, many.vectorised_seconds * 1e3],
        "speed-up": [speedup_text(here), speedup_text(many)],
        "largest difference": [here.max_difference, many.max_difference],
    })
    st.table(loop_table.style.format({"loop over heads (ms)": "{:.3g}", "vectorised (ms)": "{:.3g}",
                                      "largest difference": difference_text})
             .hide(axis="index"))
    st.markdown(loop_text(here, many))
    results.update({
        "loop_vs_vectorised": [  # each entry says its own n, H and d_k
            {"n": lx.n, "heads": lx.heads, "d_k": lx.d_k, "loop_seconds": lx.loop_seconds,
             "vectorised_seconds": lx.vectorised_seconds, "round_ratios": lx.ratios,
             "max_difference": lx.max_difference} for lx in (here, many)]})


def closing_notes(page: Page) -> None:
    """What to notice, the formulas and, off the projector, things to try and questions."""
    bullet_list("What to notice", [
        "Doubling n quadruples the weights, H·n²·8 bytes in float64; the peak memory is at "
        "least that (the lean function measured keeps one n × n array per head, a textbook "
        "one several).",
        "Attention's arithmetic is 2·H·n²·d_k multiply-adds; a layer's four projections add "
        "4·n·d_model² and, with d_model = H·d_k, cost more while n < 2·d_model.",
        "Chunking changes the memory, not the answer: the difference is rounding (or 0).",
        "Vectorising over heads removes a fixed cost per head; the arithmetic is the same, "
        "so it matters most where heads are small and many.",
        "A timing is a measurement: the page says how much its rounds disagreed, which is "
        "the noise within one measurement. The same call measured at another moment can "
        "differ by more: other work on the machine comes and goes.",
    ])
    st.subheader("The formulas")
    st.latex(r"\text{multiply-adds} = \underbrace{2\, H\, n^2 d_k}_{Q K^\top \text{ and "
             r"weights} \times V} + \underbrace{4\, n\, d_{\text{model}}^2}_{\text{projections}}")
    st.latex(r"\text{memory of the weights} = H\, n^2 \times 8 \text{ bytes}, \qquad "
             r"\text{with chunks: } H \cdot \text{chunk} \cdot n \times 8")
    if not page.presenter:
        bullet_list("Try this", [
            "Set the largest n to 2048 with H = 1 and read the fitted exponent.",
            "Set the chunk to 16 and to 512: the difference stays at rounding level.",
            "Set H = 1: with one head there is nothing to vectorise over, and the loop and "
            "the single call do the same work.",
            "Set d_k = 16 and read where the projections stop costing more than attention.",
        ], expanded=False)
        mib_8_heads = 8 * 1024**2 * 8 / MIB
        practice_questions("cost", [
            {"q": "How many MiB (2²⁰ bytes) do the float64 weights of 8 heads at n = 1024 take?",
             "value": mib_8_heads, "tol": 0.01,
             "a": f"8 × 1024² × 8 bytes = {8 * 1024**2 * 8:,} bytes = {mib_8_heads:g} MiB."},
            {"q": "By what factor does the memory of the weights grow when n triples?",
             "value": 3.0**2, "tol": 1e-9, "a": "n² grows by 3² = 9."},
            {"q": "Why does chunking not change the output?",
             "a": "Each output row depends only on its own row of scores and on all keys and "
                  "values; computing rows in groups performs the same operations on the same "
                  "numbers. Only the order in which the matrix library adds up a product may "
                  "change with its shape, so the difference is 0 or a rounding error."},
            {"q": "How many multiply-adds do Q Kᵀ and the weights times V take together for "
                  "H = 8 heads, n = 1024 tokens and d_k = 64?",
             "value": float(cost.attention_multiply_adds(1024, 8, 64)), "tol": 0.5,
             "a": f"Each is H·n²·d_k = 8 × 1024² × 64 = {8 * 1024**2 * 64:,}; together "
                  f"2·H·n²·d_k = {2 * 8 * 1024**2 * 64:,}."},
        ])


def limits_caption() -> None:
    """What the controls may reach, and how the timings are taken."""
    st.caption(f"Limits on the controls that keep the server safe: n ≤ {LENGTHS[-1]}, "
               f"H ≤ {MAX_HEADS}, H·n² ≤ {cost.MAX_WEIGHT_ELEMENTS:,} weights "
               f"({cost.MAX_WEIGHT_ELEMENTS * 8 / MIB:.0f} MiB of float64) per call, at most "
               f"{MAX_ROUNDS} rounds (section 3's fixed row of many small heads, "
               f"H = {MANY_HEADS['heads']}, keeps to the weight cap). Timings run on one BLAS "
               "thread, warm up first, interleave the lengths and keep the best of each. H "
               "and d_k feed all three sections, the rounds sections 1 and 3: a setting not "
               "measured before is "
               "measured; the largest n (in section 1) feeds section 1 only.")


with lesson_page("cost") as page:
    if not page.presenter:  # on a projector the figures come first; the warnings stay
        limits_caption()
    results = {}
    lesson(page, results)
    closing_notes(page)
    page.downloads(results, download_matrices, download_trace)
