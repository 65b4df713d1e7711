"""Lesson 7: the cost of attention, measured live on this machine."""

import numpy as np
import pandas as pd
import streamlit as st

from attncore import experiments as ex
from attncore import scaled_dot_product_attention
from pages.ui.controls import URL
from pages.ui.figures import line_chart
from pages.ui.layout import (
    bullet_list,
    figure_font,
    lesson_header,
    practice_questions,
    setup_page,
    show_error,
)
from pages.ui.tables import downloads

MAX_NS = [256, 512, 1024, 2048]
CHUNK_N = 512  # sequence length of the chunking experiment

presenter = setup_page("The cost of attention", "⏱️")
font = figure_font(presenter)
lesson_header(
    "7 · The cost of attention",
    "measure on this machine how time and memory grow with the sequence length n, and see "
    "two ways to pay less: computing in chunks and vectorising over heads.",
)
st.caption(f"Limits that keep the server safe: n ≤ {MAX_NS[-1]}, H ≤ 8, H·n² ≤ "
           f"{ex.MAX_WEIGHT_ELEMENTS:,} weights ({ex.MAX_WEIGHT_ELEMENTS * 8 / 2**20:.0f} MB of "
           "float64) per call, at most 3 repeats. Results are kept for the same settings; "
           "“Measure again” repeats them.")

c1, c2, c3, c4 = st.columns(4)
max_n = c1.select_slider("Largest n", MAX_NS, value=512, key="cost_max_n", **URL)
heads = c2.slider("Heads H", 1, 8, 4, key="cost_heads", **URL)
d_k = c3.select_slider("d_k", [16, 32, 64], value=64, key="cost_dk", **URL)
repeats = c4.slider("Repeats (best of)", 1, 3, 2, key="cost_repeats", **URL)
if st.button("Measure again", key="cost_again"):
    st.session_state["cost_run"] = st.session_state.get("cost_run", 0) + 1
run = st.session_state.get("cost_run", 0)


@st.cache_data(max_entries=256, show_spinner=False)
def measure(n: int, heads: int, d_k: int, repeats: int, run: int) -> ex.CostPoint:
    """One measurement, cached on its settings (``run`` forces a new one)."""
    return ex.cost_point(n, heads, d_k, repeats, np.random.default_rng(n))


ns = [n for n in (64, 128, 256, 512, 1024, 2048) if n <= max_n]
points = []
progress = st.progress(0.0, text="Measuring…")
try:
    for i, n in enumerate(ns):
        if heads * n * n > ex.MAX_WEIGHT_ELEMENTS:
            st.warning(f"n = {n} with H = {heads} would hold {heads * n * n:,} weights, over "
                       f"the cap: stopped at n = {ns[i - 1] if i else 0}.")
            break
        progress.progress((i + 0.5) / len(ns), text=f"Measuring n = {n}…")
        points.append(measure(n, int(heads), int(d_k), int(repeats), run))
except ValueError as exc:
    show_error(exc)
    st.stop()
progress.progress(1.0, text=f"Measured {len(points)} lengths on this machine.")

st.header("1 · Time and memory grow like n²")
n_arr = np.array([p.n for p in points], dtype=float)
secs = np.array([p.seconds for p in points])
peak = np.array([p.peak_bytes for p in points], dtype=float)
weights_mb = np.array([p.weights_bytes for p in points], dtype=float) / 2**20
ref = secs[-1] * (n_arr / n_arr[-1]) ** 2  # an n² line through the last point
left, right = st.columns(2)
with left:
    st.plotly_chart(line_chart(n_arr, {"measured": secs * 1e3, "∝ n² (reference)": ref * 1e3},
                               title="Time of one attention call", x_title="n",
                               y_title="milliseconds", log_x=True, log_y=True,
                               dashed=("∝ n² (reference)",), font_size=font),
                    key="cost_fig_time")
with right:
    st.plotly_chart(line_chart(n_arr, {"peak, measured": peak / 2**20,
                                       "weights H·n²·8 bytes": weights_mb},
                               title="Memory of one call", x_title="n", y_title="MB",
                               log_x=True, log_y=True, dashed=("weights H·n²·8 bytes",),
                               font_size=font), key="cost_fig_memory")
table = pd.DataFrame({
    "n": [p.n for p in points],
    "time (ms)": secs * 1e3,
    "weights H·n² (MB)": weights_mb,
    "peak measured (MB)": peak / 2**20,
    "peak / weights": peak / np.array([p.weights_bytes for p in points]),
})
st.dataframe(table.style.format({"time (ms)": "{:.2f}", "weights H·n² (MB)": "{:.2f}",
                                 "peak measured (MB)": "{:.2f}", "peak / weights": "{:.2f}"}),
             hide_index=True, width="stretch")
if len(points) >= 2:
    growth = secs[-1] / secs[-2]
    st.markdown(f"Doubling n from {points[-2].n} to {points[-1].n} multiplied the time by "
                f"{growth:.1f} (n² predicts 4) and the weights by 4. At small n fixed costs "
                "dominate; at large n the n² terms take over.")

st.header("2 · Chunks of queries: the same output, a fraction of the memory")
chunk = st.select_slider("Chunk (query rows at a time)", [16, 64, 256, CHUNK_N], value=64,
                         key="cost_chunk", **URL)


@st.cache_data(max_entries=16, show_spinner=False)
def chunk_experiment(chunk: int, heads: int, d_k: int, run: int) -> dict:
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((heads, CHUNK_N, d_k)) for _ in range(3))
    full, full_peak = ex.peak_memory(lambda: scaled_dot_product_attention(q, k, v).output)
    parts, part_peak = ex.peak_memory(lambda: ex.chunked_attention(q, k, v, chunk))
    return {"diff": float(np.max(np.abs(full - parts))), "full_peak": full_peak,
            "chunk_peak": part_peak}


cx = chunk_experiment(int(chunk), int(heads), int(d_k), run)
c1, c2, c3 = st.columns(3)
c1.metric("Peak memory, all rows", f"{cx['full_peak'] / 2**20:.1f} MB")
c2.metric(f"Peak memory, {chunk} rows at a time", f"{cx['chunk_peak'] / 2**20:.1f} MB")
c3.metric("Largest difference in the output", f"{cx['diff']:.1e}")
st.markdown(f"n = {CHUNK_N}, H = {heads}: the full call holds H·n² = {heads * CHUNK_N**2:,} "
            f"weights; a chunk holds H·chunk·n = {heads * chunk * CHUNK_N:,}. Each row's "
            "softmax needs only that row's scores, so the rows can be done in any grouping.")

st.header("3 · Vectorised against a loop over heads")


@st.cache_data(max_entries=16, show_spinner=False)
def loop_experiment(heads: int, d_k: int, repeats: int, run: int) -> dict:
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((heads, 512, d_k)) for _ in range(3))
    vec = ex.best_time(lambda: scaled_dot_product_attention(q, k, v), repeats)
    loop = ex.best_time(lambda: ex.textbook_attention(q, k, v), repeats)
    diff = float(np.max(np.abs(scaled_dot_product_attention(q, k, v).output
                               - ex.textbook_attention(q, k, v)[1])))
    return {"vectorised": vec, "loop": loop, "diff": diff}


lx = loop_experiment(int(heads), int(d_k), int(repeats), run)
c1, c2, c3 = st.columns(3)
c1.metric("Loop over heads", f"{lx['loop'] * 1e3:.1f} ms")
c2.metric("Vectorised (attncore)", f"{lx['vectorised'] * 1e3:.1f} ms")
c3.metric("Speed-up", f"{lx['loop'] / lx['vectorised']:.2f}×")
st.caption(f"n = 512, H = {heads}, d_k = {d_k}; largest difference {lx['diff']:.1e}. The "
           "speed-up is modest on a CPU, where one big matrix product is already efficient; "
           "on a GPU the loop would also launch H times as many small kernels.")

bullet_list("What to notice", [
    "Doubling n quadruples the weights: memory is exactly H·n²·8 bytes for float64.",
    "Chunking changes the memory, not the answer: the difference is rounding (or 0).",
    "Vectorising over heads removes Python overhead; the arithmetic is the same.",
])
st.subheader("The formulas")
st.latex(r"\text{time} \propto H\, n^2 d_k, \qquad \text{memory of } W = H\, n^2 \times "
         r"8 \text{ bytes}, \qquad \text{with chunks: } H \cdot \text{chunk} \cdot n \times 8")
if not presenter:
    bullet_list("Try this", [
        "Set the largest n to 2048 with H = 2 and compare the last two points with n².",
        "Set the chunk to 16 and to 1024: the difference stays at rounding level.",
        "Set H = 1: vectorising over heads can't help, and the speed-up drops to about 1.",
    ], expanded=False)
    practice_questions("cost", [
        {"q": "How many megabytes (2²⁰ bytes) do the float64 weights of 8 heads at n = 1024 "
              "take?", "value": 64.0, "tol": 0.01,
         "a": "8 × 1024² × 8 bytes = 67,108,864 bytes = 64 MB."},
        {"q": "By what factor does the memory of the weights grow when n triples?",
         "value": 9.0, "tol": 1e-9, "a": "n² grows by 3² = 9."},
        {"q": "Why does chunking not change the output?",
         "a": "Each output row depends only on its own row of scores and on all keys and "
              "values; computing rows in groups performs the same arithmetic."},
    ])
    st.subheader("Download")
    downloads("cost", {"Measurements": (table.to_numpy(), [f"n={p.n}" for p in points],
                                        list(table.columns))},
              {"machine": "this server", "heads": heads, "d_k": d_k, "repeats": repeats,
               "points": [p.__dict__ for p in points], "chunk": {"size": chunk, **cx},
               "loop_vs_vectorised": lx})
