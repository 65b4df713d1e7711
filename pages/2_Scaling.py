"""Lesson 2: why the scores are divided by √d_k."""

import numpy as np
import pandas as pd
import streamlit as st

from attncore import scaling as ex
from attncore.analysis import effective_keys, max_weight
from pages.text.scaling import (
    curves_sentence,
    max_weight_text,
    moments_caption,
    samples_text,
    saturation_reading,
    saturation_text,
    temperature_ends,
    temperature_text,
)
from pages.ui.controls import URL, seed_input
from pages.ui.figures import (
    SERIES_COLOURS,
    bar_chart,
    describe_bars,
    describe_lines,
    describe_samples,
    histogram,
    line_chart,
    said_number,
)
from pages.ui.glossary import term_link
from pages.ui.layout import bad_input_stops_page, bullet_list, practice_questions, show_figure
from pages.ui.live import offer_downloads
from pages.ui.numbers import apart_text, number_text, significant_text
from pages.ui.page import Page, lesson_page
from pages.ui.panels import side_by_side

D_KS = [2**n for n in range(11)]  # 1 .. 1024, the log slider's stops
SAMPLES = [100, 300, 1000, 3000, 10000]
TEMPERATURES = [0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0]
LABEL = ex.SCALING_LABELS
COLOUR = dict(zip(ex.SCALINGS, SERIES_COLOURS, strict=False))
# Section 4's own example, whatever d_k, T_k and σ² are: moving them does not redraw it.
TEMPERATURE_D_K, TEMPERATURE_KEYS = 64, 8


@st.cache_data(max_entries=64, show_spinner=False)
def sample_stats(d_k: int, n: int, sigma2: float, seed: int) -> ex.DotProductStats:
    return ex.dot_product_stats(d_k, n, np.random.default_rng(seed), sigma2)


def normal_density(sd: float):
    """The density of a normal distribution with mean 0 and standard deviation ``sd``."""
    return lambda x: np.exp(-x**2 / (2 * sd**2)) / (sd * np.sqrt(2 * np.pi))


@st.cache_data(max_entries=64, show_spinner=False)
def typical_query(d_k: int, n_keys: int, sigma2: float, seed: int) -> ex.TypicalQuery:
    """Section 2's query: a typical one of those drawn from the seed (not the first drawn,
    which may be far from typical)."""
    return ex.typical_saturation(d_k, n_keys, np.random.default_rng(seed + 1), sigma2)


@st.cache_data(max_entries=16, show_spinner=False)
def variance_curve(sigma2: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Empirical Var[qᵀk] and Var[qᵀk/√d_k] at every d_k stop, 400 samples each."""
    rng = np.random.default_rng(seed)
    stats = [ex.dot_product_stats(d, 400, rng, sigma2) for d in D_KS]
    return np.array([s.var for s in stats]), np.array([s.scaled_var for s in stats])


@st.cache_data(max_entries=16, show_spinner=False)
def curves(n_keys: int, trials: int, sigma2: float, seed: int) -> ex.ScalingCurves:
    return ex.scaling_curves(D_KS, n_keys, trials, np.random.default_rng(seed), sigma2)


@st.fragment
def temperature_section(page: Page, scores: np.ndarray, sweep: np.ndarray,
                        results: dict) -> None:
    """Section 4; moving τ redraws only this section (``sweep`` holds every τ's weights of
    the one query's ``scores``)."""
    n_keys = sweep.shape[1]
    keys = [f"k{j + 1}" for j in range(n_keys)]
    st.header("4 · Temperature τ: from sharp to uniform attention")
    temperature = st.select_slider("Softmax temperature τ", TEMPERATURES, value=1.0,
                                   key="sc_temp", **URL)
    at_t = sweep[TEMPERATURES.index(temperature)]
    left, right = st.columns(2)
    with left:
        show_figure(bar_chart(keys, at_t, title=f"softmax(s / τ) at τ = {temperature:g}",
                              x_title="key", y_title="weight", y_range=(0, 1.1),
                              colour=COLOUR["sqrt_dk"], decimals=2, font_size=page.font),
                    key="sc_fig_temperature_weights",
                    alt=describe_bars(keys, at_t, what=f"Weights of the {n_keys} keys at "
                                                       f"τ = {temperature:g}"))
    with right:
        against_t = {"max weight": max_weight(sweep),
                     "effective keys / T_k": effective_keys(sweep) / n_keys}
        show_figure(line_chart(TEMPERATURES, against_t, title="Against τ (log axis)",
                               x_title="τ", y_title="fraction", log_x=True,
                               font_size=page.font),
                    key="sc_fig_temperature",
                    alt=describe_lines(TEMPERATURES, against_t, x_title="τ",
                                       y_title="Max weight and effective keys / T_k"))
    st.markdown(temperature_text(at_t, temperature, TEMPERATURE_D_K))
    if not page.presenter:
        st.markdown(temperature_ends(scores, sweep, TEMPERATURES))
    results["temperature"] = temperature


@st.fragment
def keys_and_curves(page: Page, d_k: int, sigma2: float, seed: int, results: dict) -> None:
    """Sections 2 and 3: all that depends on the number of keys (and the trials).

    A fragment: moving T_k or the trials redraws these sections only. What they compute
    goes into ``results``, read by the downloads when a button is clicked.
    """
    st.header("2 · Widely spread scores saturate the softmax")
    n_keys = st.slider("Keys T_k", 1, 64, 16, key="sc_nkeys", **URL)
    typical = typical_query(d_k, n_keys, sigma2, seed)
    sat = typical.rows
    st.markdown(saturation_text(d_k, n_keys))
    keys = [f"k{j + 1}" for j in range(n_keys)]
    # Three panels of one figure: T_k and d_k change all three, drawn once.
    show_figure(side_by_side([
        bar_chart(keys, sat[name].weights, title=LABEL[name], x_title="key", y_title="weight",
                  y_range=(0, 1.1), colour=COLOUR[name], decimals=2, font_size=page.font)
        for name in ex.SCALINGS], font_size=page.font), key="sc_fig_saturation",
        alt=" ".join(describe_bars(keys, sat[name].weights, what=f"{LABEL[name]}: weights")
                     for name in ex.SCALINGS))
    st.latex(r"\text{entropy} = -\sum_j w_j \ln w_j \ \text{(nats)}, \qquad "
             r"\text{effective keys} = e^{\text{entropy}}, \qquad "
             r"\left\| \frac{\partial w}{\partial s} \right\|_F "
             r"= \left\| \mathrm{diag}(w) - w\,w^\top \right\|_F")
    if not page.presenter:
        st.markdown(
            "For the weights w of each panel: the largest weight; the "
            f"{term_link('entropy', 'entropy')}, in nats (0 when one key takes all the weight, "
            "ln T_k when it is spread evenly over the T_k keys); the "
            f"{term_link('effective-keys', 'effective number of keys')} (1 to T_k); and the "
            f"norm of the softmax's {term_link('jacobian', 'Jacobian')}.")
    summary = pd.DataFrame(
        # number_text: a saturated entropy of 1e-10 reads 1.000×10⁻¹⁰, never "0.000"
        {LABEL[name]: [max_weight_text(sat[name]),  # never a false 1.000
                       f"{number_text(sat[name].entropy, 3)} of "
                       f"{number_text(sat[name].max_entropy, 3)}",
                       f"{apart_text(sat[name].effective_keys, n_keys)} of {n_keys}",
                       significant_text(sat[name].jacobian_norm, 3)]
         for name in ex.SCALINGS},
        index=["max weight", "entropy (of ln T_k)", "effective keys e^entropy",
               "‖softmax Jacobian‖"],
    )
    st.table(summary)  # static: cheap to redraw
    if reading := saturation_reading(sat, d_k, typical):
        st.markdown(reading)
    if not page.presenter:
        st.caption("The Jacobian norm measures how much the weights move when the scores move. "
                   "During training the gradient from the weights passes through this Jacobian "
                   "to reach the scores: near 0, little gets through. What then reaches q and "
                   "k, and so W_Q and W_K, is also multiplied by the scaling (1, 1/√d_k or "
                   "1/d_k), so whether they get more with the division or without it depends "
                   "on d_k and the query; what 1/√d_k guarantees is scores of the same spread "
                   "at every d_k.")

    st.header("3 · Averaged over many queries, against d_k")
    trials = st.select_slider("Trials per point", [20, 50, 100, 200], value=200, key="sc_trials",
                              **URL)
    with bad_input_stops_page():
        cv = curves(n_keys, trials, sigma2, seed)
    named = lambda d: {LABEL[k]: v for k, v in d.items()}  # noqa: E731
    panels = {  # title: (series, y title, dashed)
        "Mean max weight": (named(cv.max_weight), "max weight", ()),
        "Mean entropy": (named(cv.entropy) | {"ln T_k (uniform)": np.full(
            len(D_KS), cv.max_entropy)}, "nats", ("ln T_k (uniform)",)),
        "Mean ‖softmax Jacobian‖": (named(cv.jacobian_norm), "Frobenius norm", ()),
    }
    # Three panels of one figure, for the same reason; one legend names the scalings.
    show_figure(side_by_side([
        line_chart(D_KS, series, title=title, x_title="d_k", y_title=y_title, log_x=True,
                   dashed=dashed, font_size=page.font)
        for title, (series, y_title, dashed) in panels.items()], font_size=page.font),
        key="sc_fig_curves",
        alt=" ".join(describe_lines(D_KS, series, x_title="d_k", y_title=title)
                     for title, (series, _, _) in panels.items()))
    st.markdown(curves_sentence(cv))
    results |= {"n_keys": n_keys, "trials": trials, "keys": keys, "saturation": sat,
                "typical": typical, "curves": cv}


@st.fragment
def sections_1_to_3(page: Page, results: dict) -> None:
    """The controls and sections 1 to 3, all that depends on d_k, the samples and σ².

    A fragment: moving d_k, the samples or σ² redraws these sections only; the title,
    section 4 and the notes stay as they are. Section 4 draws its own example from the
    seed, so a new seed reruns the whole page. What the sections compute goes into
    ``results`` (read by section 4 and, on a click, by the downloads).
    """
    c1, c2, c3, c4 = st.columns(4)
    d_k = c1.select_slider("d_k (dimension of q and k)", D_KS, value=64, key="sc_dk", **URL)
    n_samples = c2.select_slider("Samples N", SAMPLES, value=1000, key="sc_samples", **URL)
    sigma2 = c3.slider("Component variance σ²", 0.25, 4.0, 1.0, 0.25, key="sc_sigma2",
                       **URL)
    seed = seed_input(c4, "sc_seed")
    if results.get("settings", {}).get("seed", seed) != seed:
        st.rerun()  # this run is the fragment's alone: section 4 needs the new seed too
    offer_downloads(results, None if page.presenter else DOWNLOADS)  # none on a projector

    with bad_input_stops_page():
        stats = sample_stats(d_k, n_samples, sigma2, seed)

    st.header("1 · The spread of qᵀk grows with d_k")
    if not page.presenter:  # in presenter mode the histograms come straight after the controls
        st.markdown(samples_text(d_k, sigma2, n_samples))
    sd_raw, sd_scaled = np.sqrt(stats.theory_var), np.sqrt(stats.theory_scaled_var)
    # Both histograms in one figure: d_k and the samples change both, and one figure is drawn
    # once where two were drawn one after the other.
    show_figure(side_by_side([
        histogram(stats.raw, title=f"qᵀk at d_k = {d_k}", x_title="qᵀk", font_size=page.font,
                  reference_pdf=normal_density(sd_raw)),
        histogram(stats.scaled, title=f"qᵀk / √d_k at d_k = {d_k}", x_title="qᵀk / √d_k",
                  colour=SERIES_COLOURS[1], font_size=page.font,
                  reference_pdf=normal_density(sd_scaled)),
    ], font_size=page.font), key="sc_fig_histograms",
        alt=f"{describe_samples(stats.raw, what=f'qᵀk at d_k = {d_k}')} "
            f"{describe_samples(stats.scaled, what='qᵀk / √d_k')} Dashed: normal densities "
            f"of variance {said_number(stats.theory_var)} and "
            f"{said_number(stats.theory_scaled_var)} (theory).")
    moments = pd.DataFrame(
        {"empirical mean": [stats.mean, stats.scaled_mean], "theory mean": [0.0, 0.0],
         "empirical variance": [stats.var, stats.scaled_var],
         "theory variance": [stats.theory_var, stats.theory_scaled_var]},
        index=["qᵀk", "qᵀk / √d_k"],
    )
    st.table(moments.map(lambda x: number_text(x, 3)))  # static: cheap to redraw
    if not page.presenter:
        for caption in moments_caption(stats):
            st.caption(caption)

    var_raw, var_scaled = variance_curve(sigma2, seed)
    variances = {"Var[qᵀk], sampled": var_raw, "Var[qᵀk/√d_k], sampled": var_scaled,
                 "d_k·σ⁴ (theory)": np.array(D_KS) * sigma2**2,
                 "σ⁴ (theory)": np.full(len(D_KS), sigma2**2)}
    show_figure(line_chart(
        D_KS, variances, title="Variance against d_k (400 samples per point)", x_title="d_k",
        y_title="variance", log_x=True, log_y=True, dashed=("d_k·σ⁴ (theory)", "σ⁴ (theory)"),
        font_size=page.font,
    ), key="sc_fig_variance", alt=describe_lines(D_KS, variances, x_title="d_k",
                                                 y_title="Variance"))

    results |= {"stats": stats, "moments": moments,
                "settings": {"d_k": d_k, "samples": n_samples, "sigma2": sigma2, "seed": seed}}
    keys_and_curves(page, d_k, sigma2, seed, results)


def closing_notes(page: Page) -> None:
    """What to notice, the formulas and, off the projector, things to try and questions."""
    bullet_list("What to notice", [
        "The variance of qᵀk grows in proportion to d_k; dividing by √d_k makes it σ⁴ for "
        "every d_k: the softmax sees scores of the same variance whatever the dimension. "
        "Their distribution's shape still changes with d_k (its excess kurtosis is 6/d_k: 6 "
        "at d_k = 1), and a row's scores share one q, so at small d_k their spread varies "
        "from query to query.",
        "Without scaling, the scores spread out as d_k grows: the weight gathers on one key "
        "and, once the scores are widely spread, the softmax's Jacobian, through which the "
        "gradient reaches the scores, shrinks towards 0 (with many keys it may first rise: "
        "the norm is largest when a few keys share the weight, not one key and not all).",
        "Dividing by d_k over-corrects: for independent q and k the score variance falls like "
        "σ⁴/d_k, so as d_k grows the weights come closer to uniform. (A query that matches a "
        "key, as trained ones can, has qᵀk growing like d_k: there 1/d_k keeps the scores "
        "finite and 1/√d_k sharpens them.)",
    ])
    st.subheader("The formulas")
    st.latex(r"\mathrm{Var}[q^\top k] = \sum_{i=1}^{d_k} \mathrm{Var}[q_i k_i] = d_k\,\sigma^4,"
             r"\qquad \mathrm{Var}\!\left[\frac{q^\top k}{\sqrt{d_k}}\right] = \sigma^4")
    st.latex(r"w = \mathrm{softmax}(s), \qquad \frac{\partial w}{\partial s} = "
             r"\mathrm{diag}(w) - w\,w^\top \;\to\; 0 \text{ as } w \to \text{one-hot}")
    if page.presenter:
        return
    bullet_list("Try this", [
        "Move d_k from 1 to 1,024: the unscaled scores' standard deviation σ²√d_k grows "
        "32-fold. As d_k grows, the mean max weight without scaling tends to 1 and its mean "
        "Jacobian norm to 0 (section 3 draws both), while 1/√d_k keeps the scores' standard "
        "deviation at σ².",
        "Set σ² = 4: the variance of qᵀk/√d_k becomes σ⁴ = 16 (standard deviation 4). "
        "Section 3 draws the same numbers, each component twice as large, so every score is 4 "
        "times larger, and with 2 keys or more its mean max weight with 1/√d_k is higher at "
        "every d_k than at σ² = 1 (section 2 picks its typical query afresh, which may be "
        "another draw): dividing by √d_k corrects for d_k, not for σ². "
        "The scaled scores have variance about 1 only when the components of q and k have "
        "variance about 1. In the original Transformer, and in models such as SmolLM2, "
        f"q = x W_Q and k = x W_K: {term_link('layer-norm', 'LayerNorm')} (or RMSNorm) "
        "normalises the token vector x, not q and k, whose variance comes from W_Q and W_K. "
        f"Weights of variance 1/{term_link('d_model', 'd_model')}, applied to a normalised "
        "x, make it about 1 at initialisation "
        "(PyTorch's default for a linear layer makes it about 1/3), and nothing there keeps "
        "it so during training. QK-norm (Henry et al. 2020; Dehghani et al. 2023) normalises "
        "q and k themselves before their dot product, as OLMo 2, Qwen3 and Gemma 3 do.",
        f"Set τ to {TEMPERATURES[0]:g}, then {TEMPERATURES[-1]:g}: a "
        f"{term_link('sharp', 'sharp')} softmax (the weight gathers on the largest scores, "
        "and it is still differentiable), then weights flattened towards uniform.",
        "Set the keys T_k to 1: with a single key every scaling gives weight 1 and a zero "
        "Jacobian.",
    ], expanded=False)
    practice_questions("sc", [
        {"q": "Why divide by √d_k and not by d_k?",
         "a": "If q and k have independent components of mean 0 and variance σ², qᵀk has "
              "standard deviation σ²√d_k. Dividing by √d_k makes it σ², the same for every "
              "d_k. Dividing by d_k makes it σ²/√d_k, which shrinks towards 0 as d_k grows: "
              "the scores become nearly equal and attention nearly uniform."},
        {"q": "q and k have 64 independent components of mean 0 and variance 1. What is the "
              "variance of qᵀk?",
         "value": 64.0, "tol": 1e-6,
         "a": "d_k·σ⁴ = 64 × 1 = 64 (standard deviation 8)."},
        {"q": "A row of weights is one-hot, w = (1, 0, 0): the limit of a saturated softmax. "
              "What is the softmax's Jacobian there?",
         "a": "diag(w) − w wᵀ = diag(1, 0, 0) − (1, 0, 0)ᵀ(1, 0, 0) = 0: no gradient "
              "reaches the scores."},
    ])


DOWNLOADS = ["Saturation weights (scaling × key)", "Mean max weight (scaling × d_k)",
             "Mean entropy (scaling × d_k)", "Mean Jacobian norm (scaling × d_k)",
             "Samples (qᵀk, qᵀk/√d_k)"]


def download_matrices(results: dict) -> dict:
    """Every matrix of the page, as the sections show them now: name -> (m, rows, cols)."""
    sat, cv, keys = results["saturation"], results["curves"], results["keys"]
    scal = [LABEL[n] for n in ex.SCALINGS]
    stats = results["stats"]
    return dict(zip(DOWNLOADS, [
        (np.stack([sat[n].weights for n in ex.SCALINGS]), scal, keys),
        *((np.stack([curve[n] for n in ex.SCALINGS]), scal, D_KS)
          for curve in (cv.max_weight, cv.entropy, cv.jacobian_norm)),
        (np.stack([stats.raw, stats.scaled], axis=1), list(range(1, stats.raw.size + 1)),
         ["qk", "qk_scaled"])], strict=True))


def download_trace(results: dict) -> dict:
    """The whole computation as the sections show it now, for the JSON download."""
    sat, cv = results["saturation"], results["curves"]
    return {
        "settings": results["settings"] | {"n_keys": results["n_keys"],
                                           "trials": results["trials"]},
        "temperature_sweep": {"d_k": TEMPERATURE_D_K, "n_keys": TEMPERATURE_KEYS,
                              "tau": TEMPERATURES, "weights": results["sweep"]},
        "moments": results["moments"].to_dict(),
        "saturation_query": {"chosen": results["typical"].chosen,
                             "candidates": results["typical"].candidates,
                             "lowest_percentile": results["typical"].lowest,
                             "highest_percentile": results["typical"].highest},
        "saturation": {n: {"scores": sat[n].scores, "weights": sat[n].weights,
                           "max_weight": sat[n].max_weight, "entropy": sat[n].entropy,
                           "jacobian_norm": sat[n].jacobian_norm} for n in ex.SCALINGS},
        "curves": {"d_k": D_KS, "max_weight": cv.max_weight, "entropy": cv.entropy,
                   "jacobian_norm": cv.jacobian_norm},
    }


with lesson_page("sc") as page:
    # Sections 1 to 4 rerun alone when their own controls move (st.fragment; sections 2
    # and 3 also when d_k, the samples or σ² move); what they compute goes into `results`,
    # which the downloads read when a button is clicked.
    results = {}
    sections_1_to_3(page, results)
    seed = results["settings"]["seed"]
    # The weights at every τ of section 4 (the downloads hold them all).
    example = ex.saturation(TEMPERATURE_D_K, TEMPERATURE_KEYS, np.random.default_rng(seed + 2))
    results["sweep"] = ex.temperature_sweep(example["sqrt_dk"].scores, TEMPERATURES)
    temperature_section(page, example["sqrt_dk"].scores, results["sweep"], results)
    closing_notes(page)
    page.downloads(results, download_matrices, download_trace)
