"""Lesson 2: why the scores are divided by √d_k."""

import numpy as np
import pandas as pd
import streamlit as st

from attncore import scaling as ex
from attncore.analysis import effective_keys, entropy, max_weight
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
from pages.ui.layout import (
    bad_input_stops_page,
    bullet_list,
    figure_font,
    finish_page,
    lesson_header,
    practice_questions,
    setup_page,
    show_figure,
)
from pages.ui.numbers import number_text
from pages.ui.panels import side_by_side
from pages.ui.tables import downloads

D_KS = [2**n for n in range(11)]  # 1 .. 1024, the log slider's stops
SAMPLES = [100, 300, 1000, 3000, 10000]
TEMPERATURES = [0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0]
LABEL = ex.SCALING_LABELS
COLOUR = dict(zip(ex.SCALINGS, SERIES_COLOURS, strict=False))
# Section 4's own example, whatever d_k, n and σ² are: moving them does not redraw it.
TEMPERATURE_D_K, TEMPERATURE_KEYS = 64, 8

presenter = setup_page("Why divide by √d_k", "📏")
font = figure_font(presenter)
lesson_header(
    "2 · Why divide the scores by √d_k?",
    "see that dot products grow with d_k, that an unscaled softmax saturates and stops "
    "passing gradient, and that 1/√d_k (not 1/d_k) keeps it in a useful range.",
)

@st.cache_data(max_entries=64, show_spinner=False)
def sample_stats(d_k: int, n: int, sigma2: float, seed: int) -> ex.DotProductStats:
    return ex.dot_product_stats(d_k, n, np.random.default_rng(seed), sigma2)


def normal_density(sd: float):
    """The density of a normal distribution with mean 0 and standard deviation ``sd``."""
    return lambda x: np.exp(-x**2 / (2 * sd**2)) / (sd * np.sqrt(2 * np.pi))


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
def temperature_section(sweep: np.ndarray, results: dict) -> None:
    """Section 4; moving τ redraws only this section (``sweep`` holds every τ's weights)."""
    n_keys = sweep.shape[1]
    keys = [f"k{j + 1}" for j in range(n_keys)]
    st.header("4 · Temperature τ: from hard to uniform attention")
    temperature = st.select_slider("Softmax temperature τ", TEMPERATURES, value=1.0,
                                   key="sc_temp", **URL)
    at_t = sweep[TEMPERATURES.index(temperature)]
    left, right = st.columns(2)
    with left:
        show_figure(bar_chart(keys, at_t, title=f"softmax(s / τ) at τ = {temperature:g}",
                              x_title="key", y_title="weight", y_range=(0, 1.1),
                              colour=COLOUR["sqrt_dk"], decimals=2, font_size=font),
                    key="sc_fig_temperature_weights",
                    alt=describe_bars(keys, at_t, what=f"Weights of the {n_keys} keys at "
                                                       f"τ = {temperature:g}"))
    with right:
        against_t = {"max weight": max_weight(sweep),
                     "effective keys / n": effective_keys(sweep) / n_keys}
        show_figure(line_chart(TEMPERATURES, against_t, title="Against τ (log axis)",
                               x_title="τ", y_title="fraction", log_x=True, font_size=font),
                    key="sc_fig_temperature",
                    alt=describe_lines(TEMPERATURES, against_t, x_title="τ",
                                       y_title="Max weight and effective keys / n"))
    st.markdown(
        f"One query against {n_keys} keys at d_k = {TEMPERATURE_D_K} (σ² = 1), its scores "
        f"scaled by 1/√d_k as in section 2, then divided by τ. At τ = {TEMPERATURES[0]} the "
        f"largest score takes most of the weight ({max_weight(sweep[0]):.3f}; as τ → 0 it "
        f"tends to 1, hard attention); at τ = {TEMPERATURES[-1]:g} the weights are nearly "
        f"uniform (entropy {entropy(sweep[-1]):.3f} of log n = {np.log(n_keys):.3f})."
    )
    results["temperature"] = temperature


@st.fragment
def keys_and_curves(d_k: int, sigma2: float, seed: int, results: dict) -> None:
    """Sections 2 and 3: all that depends on the number of keys (and the trials).

    A fragment: moving n or the trials redraws these sections only. What they compute
    goes into ``results``, read by the downloads when a button is clicked.
    """
    st.header("2 · Large scores saturate the softmax")
    n_keys = st.slider("Keys n", 1, 64, 16, key="sc_nkeys", **URL)
    sat = ex.saturation(d_k, n_keys, np.random.default_rng(seed + 1), sigma2)
    st.markdown(f"One query against {n_keys} keys at d_k = {d_k}: the same scores under the "
                "three scalings.")
    keys = [f"k{j + 1}" for j in range(n_keys)]
    # Three panels of one figure: n and d_k change all three, drawn once.
    show_figure(side_by_side([
        bar_chart(keys, sat[name].weights, title=LABEL[name], x_title="key", y_title="weight",
                  y_range=(0, 1.1), colour=COLOUR[name], decimals=2, font_size=font)
        for name in ex.SCALINGS], font_size=font), key="sc_fig_saturation",
        alt=" ".join(describe_bars(keys, sat[name].weights, what=f"{LABEL[name]}: weights")
                     for name in ex.SCALINGS))
    summary = pd.DataFrame(
        # number_text: a saturated entropy of 1e-10 reads 1.000×10⁻¹⁰, never "0.000"
        {LABEL[n]: [number_text(sat[n].max_weight, 3),
                    f"{number_text(sat[n].entropy, 3)} of {number_text(sat[n].max_entropy, 3)}",
                    f"{number_text(sat[n].effective_keys, 2)} of {n_keys}",
                    f"{sat[n].jacobian_norm:.3g}"]
         for n in ex.SCALINGS},
        index=["max weight", "entropy H (of log n)", "effective keys e^H", "‖softmax Jacobian‖"],
    )
    st.table(summary)  # static: cheap to redraw
    if not presenter:
        st.caption("The Jacobian norm measures how much the weights move when the scores move: "
                   "the gradient signal that reaches Q and K during training.")

    st.header("3 · Averaged over many queries, against d_k")
    trials = st.select_slider("Trials per point", [20, 50, 100, 200], value=50, key="sc_trials",
                              **URL)
    with bad_input_stops_page():
        cv = curves(n_keys, trials, sigma2, seed)
    named = lambda d: {LABEL[k]: v for k, v in d.items()}  # noqa: E731
    panels = {  # title: (series, y title, dashed)
        "Mean max weight": (named(cv.max_weight), "max weight", ()),
        "Mean entropy": (named(cv.entropy) | {"log n (uniform)": np.full(
            len(D_KS), cv.max_entropy)}, "nats", ("log n (uniform)",)),
        "Mean ‖softmax Jacobian‖": (named(cv.jacobian_norm), "Frobenius norm", ()),
    }
    # Three panels of one figure, for the same reason; one legend names the scalings.
    show_figure(side_by_side([
        line_chart(D_KS, series, title=title, x_title="d_k", y_title=y_title, log_x=True,
                   dashed=dashed, font_size=font)
        for title, (series, y_title, dashed) in panels.items()], font_size=font),
        key="sc_fig_curves",
        alt=" ".join(describe_lines(D_KS, series, x_title="d_k", y_title=title)
                     for title, (series, _, _) in panels.items()))
    st.markdown(
        f"Without scaling the mean max weight climbs from {cv.max_weight['none'][0]:.2f} to "
        f"{cv.max_weight['none'][-1]:.2f} and the gradient signal falls from "
        f"{cv.jacobian_norm['none'][0]:.3g} to {cv.jacobian_norm['none'][-1]:.3g}; with 1/d_k the "
        f"weights flatten (max weight {cv.max_weight['dk'][-1]:.3f}, uniform is "
        f"{1 / n_keys:.3f}); with 1/√d_k they stay where they were at d_k = 1."
    )
    results |= {"n_keys": n_keys, "trials": trials, "keys": keys, "saturation": sat,
                "curves": cv}


@st.fragment
def sections_1_to_3(results: dict) -> None:
    """The controls and sections 1 to 3, all that depends on d_k, the samples and σ².

    A fragment: moving d_k, the samples or σ² redraws these sections only; the title,
    section 4 and the notes stay as they are. Section 4 draws its own example from the
    seed, so a new seed reruns the whole page. What the sections compute goes into
    ``results`` (read by section 4 and, on a click, by the downloads).
    """
    c1, c2, c3, c4 = st.columns(4)
    d_k = c1.select_slider("d_k (dimension of q and k)", D_KS, value=64, key="sc_dk", **URL)
    n_samples = c2.select_slider("Samples", SAMPLES, value=1000, key="sc_samples", **URL)
    sigma2 = c3.slider("Component variance σ²", 0.25, 4.0, 1.0, 0.25, key="sc_sigma2",
                       **URL)
    seed = seed_input(c4, "sc_seed")
    if results.get("settings", {}).get("seed", seed) != seed:
        st.rerun()  # this run is the fragment's alone: section 4 needs the new seed too

    with bad_input_stops_page():
        stats = sample_stats(d_k, n_samples, sigma2, seed)

    st.header("1 · Dot products grow with d_k")
    if not presenter:  # in presenter mode the histograms come straight after the controls
        st.markdown(
            f"Draw q and k with {d_k} independent components, each with mean 0 and variance "
            f"σ² = {sigma2:g}, and compute qᵀk, {n_samples} times. The spread of qᵀk grows like "
            "√d_k; dividing by √d_k brings it back to σ²."
        )
    sd_raw, sd_scaled = np.sqrt(stats.theory_var), np.sqrt(stats.theory_scaled_var)
    # Both histograms in one figure: d_k and the samples change both, and one figure is drawn
    # once where two were drawn one after the other.
    show_figure(side_by_side([
        histogram(stats.raw, title=f"qᵀk at d_k = {d_k}", x_title="qᵀk", font_size=font,
                  reference_pdf=normal_density(sd_raw)),
        histogram(stats.scaled, title=f"qᵀk / √d_k at d_k = {d_k}", x_title="qᵀk / √d_k",
                  colour=SERIES_COLOURS[1], font_size=font,
                  reference_pdf=normal_density(sd_scaled)),
    ], font_size=font), key="sc_fig_histograms",
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
    if not presenter:
        st.caption("Theory: Var[qᵀk] = d_k·σ⁴ and Var[qᵀk/√d_k] = σ⁴; the dashed curves are "
                   "the normal densities with those variances (the sum of many products is "
                   "nearly normal). The empirical values wobble by about ±"
                   f"{100 * np.sqrt(2 / (n_samples - 1)):.0f}% at {n_samples} samples.")

    var_raw, var_scaled = variance_curve(sigma2, seed)
    variances = {"Var[qᵀk], sampled": var_raw, "Var[qᵀk/√d_k], sampled": var_scaled,
                 "d_k·σ⁴ (theory)": np.array(D_KS) * sigma2**2,
                 "σ⁴ (theory)": np.full(len(D_KS), sigma2**2)}
    show_figure(line_chart(
        D_KS, variances, title="Variance against d_k (400 samples per point)", x_title="d_k",
        y_title="variance", log_x=True, log_y=True, dashed=("d_k·σ⁴ (theory)", "σ⁴ (theory)"),
        font_size=font,
    ), key="sc_fig_variance", alt=describe_lines(D_KS, variances, x_title="d_k",
                                                 y_title="Variance"))

    results |= {"stats": stats, "moments": moments,
                "settings": {"d_k": d_k, "samples": n_samples, "sigma2": sigma2, "seed": seed}}
    keys_and_curves(d_k, sigma2, seed, results)


def closing_notes() -> None:
    """What to notice, the formulas and, off the projector, things to try and questions."""
    bullet_list("What to notice", [
        "The variance of qᵀk grows in proportion to d_k; dividing by √d_k makes it σ⁴ for "
        "every d_k: the softmax sees scores of the same size whatever the dimension.",
        "Unscaled scores at large d_k put almost all the weight on one key, and the softmax's "
        "Jacobian, the gradient that reaches the scores, shrinks towards 0.",
        "Dividing by d_k over-corrects: the score variance falls like σ⁴/d_k and every query "
        "attends almost uniformly, whatever it asks.",
    ])
    st.subheader("The formulas")
    st.latex(r"\mathrm{Var}[q^\top k] = \sum_{i=1}^{d_k} \mathrm{Var}[q_i k_i] = d_k\,\sigma^4,"
             r"\qquad \mathrm{Var}\!\left[\frac{q^\top k}{\sqrt{d_k}}\right] = \sigma^4")
    st.latex(r"\frac{\partial\, \mathrm{softmax}(s)}{\partial s} = \mathrm{diag}(p) - p\,p^\top"
             r"\;\to\; 0 \text{ as } p \to \text{one-hot}")
    if presenter:
        return
    bullet_list("Try this", [
        "Move d_k to 1024 with scaling off and watch the max weight approach 1.",
        "Set σ² = 4: the variance of qᵀk/√d_k becomes σ⁴ = 16, and the scaled softmax "
        "saturates too. Scaling assumes unit-variance components (hence layer norm).",
        "Set τ to 0.05, then 20: hard attention, then uniform attention.",
        "Set n = 1: with a single key every scaling gives weight 1 and a zero Jacobian.",
    ], expanded=False)
    practice_questions("sc", [
        {"q": "Why divide by √d_k and not by d_k?",
         "a": "qᵀk has standard deviation σ²√d_k. Dividing by √d_k makes it σ², the same for "
              "every d_k. Dividing by d_k makes it σ²/√d_k, which shrinks to 0: the scores "
              "all become nearly equal and attention nearly uniform."},
        {"q": "q and k have 64 independent components of variance 1. What is the variance "
              "of qᵀk?",
         "value": 64.0, "tol": 1e-6,
         "a": "d_k·σ⁴ = 64 × 1 = 64 (standard deviation 8)."},
        {"q": "A softmax row is one-hot, p = (1, 0, 0). What is its Jacobian?",
         "a": "diag(p) − p pᵀ = diag(1,0,0) − e₁e₁ᵀ = 0: no gradient reaches the scores."},
    ])


def download_matrices(results: dict) -> dict:
    """Every matrix of the page, as the sections show them now: name -> (m, rows, cols)."""
    sat, cv, keys = results["saturation"], results["curves"], results["keys"]
    scal = [LABEL[n] for n in ex.SCALINGS]
    stats = results["stats"]
    return {
        "Saturation weights (scaling × key)": (
            np.stack([sat[n].weights for n in ex.SCALINGS]), scal, keys),
        "Mean max weight (scaling × d_k)": (np.stack([cv.max_weight[n] for n in ex.SCALINGS]),
                                            scal, D_KS),
        "Mean entropy (scaling × d_k)": (np.stack([cv.entropy[n] for n in ex.SCALINGS]),
                                         scal, D_KS),
        "Mean Jacobian norm (scaling × d_k)": (
            np.stack([cv.jacobian_norm[n] for n in ex.SCALINGS]), scal, D_KS),
        "Samples (qᵀk, qᵀk/√d_k)": (np.stack([stats.raw, stats.scaled], axis=1),
                                   list(range(1, stats.raw.size + 1)), ["qk", "qk_scaled"]),
    }


def download_trace(results: dict) -> dict:
    """The whole computation as the sections show it now, for the JSON download."""
    sat, cv = results["saturation"], results["curves"]
    return {
        "settings": results["settings"] | {"n_keys": results["n_keys"],
                                           "trials": results["trials"]},
        "temperature_sweep": {"d_k": TEMPERATURE_D_K, "n_keys": TEMPERATURE_KEYS,
                              "tau": TEMPERATURES, "weights": results["sweep"]},
        "moments": results["moments"].to_dict(),
        "saturation": {n: {"scores": sat[n].scores, "weights": sat[n].weights,
                           "max_weight": sat[n].max_weight, "entropy": sat[n].entropy,
                           "jacobian_norm": sat[n].jacobian_norm} for n in ex.SCALINGS},
        "curves": {"d_k": D_KS, "max_weight": cv.max_weight, "entropy": cv.entropy,
                   "jacobian_norm": cv.jacobian_norm},
    }


# Sections 1 to 4 rerun alone when their own controls move (st.fragment; sections 2 and 3
# also when d_k, the samples or σ² move); what they compute goes into `results`, which
# the downloads read when a button is clicked.
results = {}
sections_1_to_3(results)
seed = results["settings"]["seed"]
# The weights at every τ of section 4 (the downloads hold them all).
example = ex.saturation(TEMPERATURE_D_K, TEMPERATURE_KEYS, np.random.default_rng(seed + 2))
results["sweep"] = ex.temperature_sweep(example["sqrt_dk"].scores, TEMPERATURES)
temperature_section(results["sweep"], results)
closing_notes()
if not presenter:
    st.subheader("Download")
    downloads("sc", lambda: download_matrices(results), lambda: download_trace(results))

finish_page()
