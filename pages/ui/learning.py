"""Lesson 8's training under the page: runs cached on their settings, the Train forms that
start them, and the charts and sliders every trained task shares."""

from __future__ import annotations

import io
from dataclasses import asdict

import numpy as np
import streamlit as st

from attncore.results_cache import kept
from attncore.train import (
    AlignmentConfig,
    InductionConfig,
    SentimentConfig,
    collapse,
    train_alignment,
    train_induction,
    train_sentiment,
)
from pages.ui.controls import URL, seed_input
from pages.ui.figures import describe_lines, line_chart
from pages.ui.layout import show_figure

# Caps: no control starts more than about 30 s of training on this machine.
MAX_STEPS = {"sentiment": 600, "alignment": 600, "induction": 600}
#: Seconds the slowest task (induction) took for its cap of steps, measured on a quiet
#: machine here and on a busy one.
INDUCTION_CAP_SECONDS = (5.0, 30.0)


def induction_seconds(steps: int) -> tuple[float, float]:
    """About how long training the induction model for ``steps`` steps takes, on a quiet
    machine and on a busy one: the measured time of the cap, in proportion to the steps
    (every step does the same work)."""
    share = steps / MAX_STEPS["induction"]
    return INDUCTION_CAP_SECONDS[0] * share, INDUCTION_CAP_SECONDS[1] * share


# ---- cached training (small arguments only) ---------------------------------------------
# The progress bar is made inside each cached function: on a cache hit Streamlit replays
# it (created, filled, removed) in an instant instead of training again.

def train_with_bar(label: str, trainer, config):
    """Run ``trainer(config, progress)`` under a progress bar that goes away after."""
    bar = st.progress(0.0, text=label)

    def progress(step, steps):
        bar.progress(step / steps, text=f"{label}: step {step} of {steps}")

    result = trainer(config, progress)
    bar.empty()
    return result


def at_defaults(name: str, config, compute):
    """``compute()``, kept on disk when ``config`` has the page's default seed and steps:
    once per machine and version of the training code, so that every server process,
    restart and test run reads it (a first visit waits for none of them twice)."""
    default = type(config)()
    if (config.seed, config.steps) != (default.seed, default.steps):
        return compute()
    return kept(f"lesson8-{name}", asdict(config), f"attncore.train.{name}", compute)


@st.cache_data(max_entries=32, show_spinner=False)
def sentiment_run(model: str, seed: int, steps: int):
    config = SentimentConfig(model=model, seed=seed, steps=steps)
    return at_defaults("sentiment", config, lambda: train_with_bar(
        f"Training the {model} model", train_sentiment, config))


@st.cache_data(max_entries=32, show_spinner=False)
def alignment_run(kind: str, seed: int, steps: int):
    config = AlignmentConfig(kind=kind, seed=seed, steps=steps)
    return at_defaults("alignment", config, lambda: train_with_bar(
        "Training the encoder-decoder", train_alignment, config))


@st.cache_data(max_entries=16, show_spinner=False)
def induction_run(seed: int, steps: int):
    config = InductionConfig(seed=seed, steps=steps)
    return at_defaults("induction", config, lambda: train_with_bar(
        "Training the 2-layer transformer", train_induction, config))


def train_collapse(seed: int) -> dict:
    bar = st.progress(0.0, text="Training five pooling models")
    runs = {}
    for n, name in enumerate(collapse.SETTINGS):
        runs[name] = collapse.train_setting(name, seed)
        bar.progress((n + 1) / len(collapse.SETTINGS), text=f"Trained: {name}")
    bar.empty()
    return runs


@st.cache_data(max_entries=16, show_spinner=False)
def collapse_runs(seed: int):
    if seed != 0:
        return train_collapse(seed)
    return kept("lesson8-collapse", {"seed": seed}, collapse,
                lambda: train_collapse(seed))


@st.cache_resource
def trained_settings() -> set:
    """Settings already trained on this server, shared by every session: a slow task
    opened by a link whose settings were trained before shows at once."""
    return set()


# ---- the Train forms ----------------------------------------------------------------------

def committed(name: str, current: dict) -> dict:
    """The settings of a section as last submitted by its Train button; on a session's
    first run, the values the link gave the controls (or their defaults)."""
    key = f"learn_{name}_committed"
    if key not in st.session_state:
        st.session_state[key] = current
    return st.session_state[key]


def commit(name: str, values: dict) -> None:
    st.session_state[f"learn_{name}_committed"] = values


def new_seed(name: str, seed_key: str) -> None:
    """'Train again': the next seed, committed at once."""
    seed = (int(st.session_state.get(seed_key) or 0) + 1) % 10000
    st.session_state[seed_key] = float(seed)
    values = dict(st.session_state[f"learn_{name}_committed"])
    values["seed"] = seed
    commit(name, values)


def settings_form(presenter: bool, name: str, default_steps: int,
                  extra=None) -> tuple[dict, bool]:
    """Seed and steps (and ``extra`` controls) in a form: nothing trains until Train.

    Returns the settings to train with (see :func:`committed`) and whether a Train
    button was pressed in this run."""
    # on a projector the settings fold away so that the figures reach the first screen
    box = st.expander("Training settings") if presenter else st.container()
    with box, st.form(f"learn_{name}_form", border=True):
        cols = st.columns(3)
        seed = seed_input(cols[0], f"learn_{name}_seed")
        # a float input shown as a whole number, as seed_input does: Streamlit 1.67's
        # integer input raises OverflowError on a link carrying "inf"
        steps = cols[1].number_input(
            f"Training steps (1 to {MAX_STEPS[name]})", 1.0, float(MAX_STEPS[name]),
            float(default_steps), step=10.0, format="%.0f", key=f"learn_{name}_steps", **URL)
        current = {"seed": int(seed), "steps": int(round(steps)),
                   **(extra(cols[2]) if extra else {})}
        pressed = st.form_submit_button("Train", key=f"learn_{name}_train", type="primary")
        if pressed:
            commit(name, current)
    again = box.button("Train again with a new seed", key=f"learn_{name}_again",
                      on_click=new_seed, args=(name, f"learn_{name}_seed"))
    return committed(name, current), bool(pressed or again)


# ---- what every trained task shows ----------------------------------------------------------

def curves_chart(font: int, runs: dict, key: str, title: str, short: dict | None = None) -> None:
    """Held-out accuracy at the checkpoints of each run, and the loss: the training loss of
    each step's batch and the held-out loss at the checkpoints, on one axis of steps done
    (the batch of step s is scored with the parameters after s updates, as the
    checkpoint at s is). ``short``: a short name per run for the loss chart's legend."""
    left, right = st.columns(2)
    first = next(iter(runs.values()))
    accuracy = {n: r.accuracy for n, r in runs.items()}
    steps = np.arange(first.steps + 1)
    loss = {}
    for n, r in runs.items():
        held_out = np.full(steps.size, np.nan)
        held_out[r.checkpoints] = r.held_out_loss
        name = f"{(short or {}).get(n, n)} " if len(runs) > 1 else ""
        loss[f"{name}training"] = np.append(r.loss, np.nan)
        loss[f"{name}held-out"] = held_out
    with left:
        show_figure(line_chart(first.checkpoints, accuracy,
                               title=f"{title}: held-out accuracy", x_title="step",
                               y_title="accuracy", font_size=font), key=f"{key}_acc",
                    alt=describe_lines(first.checkpoints, accuracy, x_title="step",
                                       y_title=f"{title}: held-out accuracy"))
    with right:
        figure = line_chart(steps, loss, title=f"{title}: loss (training batch, held-out)",
                            x_title="step", y_title="cross-entropy", font_size=font)
        figure.update_traces(connectgaps=True)  # held-out points: at the checkpoints only
        show_figure(figure, key=f"{key}_loss",
                    alt=describe_lines(steps, loss, x_title="step",
                                       y_title=f"{title}: loss of each training batch and "
                                               "held-out loss at the checkpoints"))


def checkpoint_slider(run, key: str) -> int:
    """A slider over the checkpoints, kept in the link; returns the checkpoint's index.

    It opens at the last checkpoint, and goes back there when a new run has other
    checkpoints (another number of steps): the end of the training just asked for. A
    kept step would otherwise stay, and as the default (the last step) moved, the link
    would no longer say which step is shown."""
    steps = [int(s) for s in run.checkpoints]
    default = {"value": steps[-1]}
    drawn_with = f"_{key}_steps"
    if key in st.session_state and st.session_state.get(drawn_with, steps) != steps:
        st.session_state[key] = steps[-1]
        default = {}  # a widget whose state was just set takes no default in that run
    st.session_state[drawn_with] = steps
    step = st.select_slider("Checkpoint (training step)", steps, key=key, **default, **URL)
    return steps.index(int(step))


def curves_table(run) -> tuple:
    """Checkpoint measures as (matrix, row labels, column labels) for a CSV."""
    names = ["accuracy", "held-out loss", "attention score", "seconds", *run.curves]
    cols = [run.accuracy, run.held_out_loss, run.scores, run.seconds_at, *run.curves.values()]
    return np.column_stack(cols), [str(s) for s in run.checkpoints], names


def npz_bytes(params: dict) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **params)
    return buffer.getvalue()
