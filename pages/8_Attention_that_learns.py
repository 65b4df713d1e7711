"""Lesson 8: attention that learns — small models trained live, patterns that form."""

import io
from dataclasses import asdict

import numpy as np
import pandas as pd
import streamlit as st

from attncore.analysis import NEARLY_ONE_HOT
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
from attncore.train import alignment as al
from attncore.train import sentiment as sa
from attncore.train.induction import STEP_RATIO, head_scores, loss_drop
from attncore.train.kept import train_code_version
from pages.ui.controls import URL, seed_input
from pages.ui.figures import (
    bar_chart,
    describe_bars,
    describe_lines,
    describe_matrix,
    heatmap_grid,
    line_chart,
    matrix_heatmap,
    said_number,
)
from pages.ui.glossary import term_link
from pages.ui.layout import (
    bullet_list,
    figure_font,
    finish_page,
    lesson_header,
    practice_questions,
    setup_page,
    show_error,
    show_figure,
)
from pages.ui.numbers import number_text
from pages.ui.tables import downloads, to_csv

# Caps: no control starts more than about 30 s of training on this machine.
MAX_STEPS = {"sentiment": 600, "alignment": 600, "induction": 600}
MAX_INPUT_CHARS = 200
NEGATED = sa.DISPLAY.index("the plot was not good")  # the negated example shown

presenter = setup_page("Attention that learns", "🌱")
font = figure_font(presenter)
lesson_header(
    "8 · Attention that learns",
    "train three small models live (NumPy, hand-written gradients) and watch their "
    "attention move from random to meaningful: onto sentiment words, into an alignment "
    "with crossings, into a previous-token head and an "
    f"{term_link('induction-head', 'induction head')}.",
)
if not presenter:
    st.caption(
        f"Caps: at most {MAX_STEPS['induction']} training steps per run; the slowest task "
        "(induction) took about 5 s for that many steps on a quiet machine here and up to "
        "about 30 s on a busy one. Each result is cached on its settings: a class opening the "
        "same link sees it without retraining. Seconds shown are measured on this server."
    )


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


# The trainings at the page's defaults (seed 0, the default number of steps) are kept on
# disk, once per machine and version of the training code: every server process, restart
# and test run reads them (a first visit waits for none of them twice).
TRAINING_CODE = train_code_version()


def at_defaults(name: str, config, compute):
    """``compute()``, kept on disk when ``config`` has the page's default seed and steps."""
    default = type(config)()
    if (config.seed, config.steps) != (default.seed, default.steps):
        return compute()
    return kept(f"lesson8-{name}", asdict(config), TRAINING_CODE, compute)


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
    return kept("lesson8-collapse", {"seed": seed}, TRAINING_CODE,
                lambda: train_collapse(seed))


@st.cache_resource
def trained_settings() -> set:
    """Settings already trained on this server, shared by every session: a slow task
    opened by a link whose settings were trained before shows at once."""
    return set()


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


def settings_form(name: str, default_steps: int, extra=None) -> tuple[dict, bool]:
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


def curves_chart(runs: dict, key: str, title: str, short: dict | None = None) -> None:
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


def words_of(ids) -> list[str]:
    return [sa.VOCAB[i] for i in ids if i != 0]


# ---- sentences computed from the runs (What to notice, Try this, section 4) -------------

def n2(x: float) -> str:
    """Two decimals, or scientific notation for a nonzero number that would show as 0."""
    return number_text(x, 2)


def p_text(p: float) -> str:
    """A probability with three decimals; one that would show as 0.000 in scientific
    notation (B's P(positive) can be 10⁻⁶), so that no student reads a false 0."""
    return number_text(p, 3)


def times_text(ratio: float) -> str:
    """A ratio of paces with one decimal, or more while one decimal would read 1.0 for a
    ratio that is not 1 (1.04 "times the pace" after "faster" must not say 1.0)."""
    for decimals in (1, 2, 3):
        text = f"{ratio:.{decimals}f}"
        if float(text) != 1.0 or ratio == 1.0:
            return text
    return text


def share_text(x: float) -> str:
    """A share as a percentage; never a rounded 100% or 0% that is not exactly so."""
    for decimals in (0, 1, 2):
        text = f"{x:.{decimals}%}"
        if float(text[:-1]) not in (0.0, 100.0) or x in (0.0, 1.0):
            return text
    return text


def state_meaning(state: str) -> str:
    """What a state of collapse.outcome means, with its threshold (section 4's caption
    says the same for every state)."""
    return {
        "nearly one-hot": f"at least {collapse.ONE_HOT_SHARE:.0%} of the rows have a largest "
                          f"weight above {NEARLY_ONE_HOT:g}",
        "nearly uniform": f"normalised entropy at least {collapse.NEARLY_UNIFORM:g}",
        "sharp": f"normalised entropy below {collapse.SHARP:g}",
        "spread": f"normalised entropy from {collapse.SHARP:g} to {collapse.NEARLY_UNIFORM:g}",
    }[state]


def pooling_notice(run) -> str:
    """Where model A's pooling weights start, and when they reach the key words."""
    start = collapse.outcome(run).start
    filler = run.curves["filler_share"]
    reached = sa.first_step_reaching(run.checkpoints, run.scores, 0.5)
    text = (f"Before training model A's pooling weights are {start} (normalised entropy "
            f"{n2(run.curves['pool_entropy'][0])}; {start} here means "
            f"{state_meaning(start)}): on average {n2(run.scores[0])} of a "
            f"held-out sentence's weight is on its sentiment and negation words, "
            f"{n2(filler[0])} on filler. ")
    if reached is None:
        return text + (f"After {run.steps} steps the share on those words is "
                       f"{n2(run.scores[-1])}: it has not yet reached one half.")
    return text + (f"By step {reached} the share on those words reaches one half; at step "
                   f"{run.steps} it is {n2(run.scores[-1])}, and filler's {n2(filler[-1])}.")


def layer_still_off(run) -> bool:
    """Whether B's self-attention layer was never switched on: it adds nothing for the
    first ``pool_first`` updates, so after that many or fewer, B computes what A does."""
    return run.steps <= run.config.pool_first


def negation_notice(runs: dict) -> str:
    """How A and B do on negated sentences, and where B's *not* looks at the end."""
    a, b = runs["pooling only"], runs["self-attention + pooling"]
    if layer_still_off(b):
        return (f"After {a.steps} steps B's self-attention layer is still off (it switches on "
                f"after step {b.config.pool_first}), so B computes what A does: on negated "
                f"held-out sentences both are right {a.curves['negated_accuracy'][-1]:.3f} "
                "of the time (chance: 0.5). Train past that step to see the layer learn.")
    words = sa.DISPLAY[NEGATED].split()
    attn = b.snapshots["attn"][-1, NEGATED, :, : len(words), : len(words)]  # (heads, T, T)
    row, target = words.index("not"), words.index("good")
    on_target = sum(int(np.argmax(head[row])) == target for head in attn)
    return (f"After {a.steps} steps, on negated held-out sentences model A is right "
            f"{a.curves['negated_accuracy'][-1]:.3f} of the time (chance: 0.5) and model B "
            f"{b.curves['negated_accuracy'][-1]:.3f}. In *{sa.DISPLAY[NEGATED]}*, "
            f"{on_target} of B's {len(attn)} heads look from *not* mostly at *good*, the word "
            "it negates.")


def alignment_notice(run) -> str:
    moved = run.curves["moved_score"]
    return ("Trained on the translation loss alone (no one labels which word goes with "
            "which), the alignment puts the largest weight of a moved French word (a noun "
            "moved before its adjective, or the adjective after it) on its own English "
            "word for "
            f"{share_text(moved[0])} of them untrained and {share_text(moved[-1])} at step "
            f"{run.steps}.")


def loss_shape(run) -> str:
    """How the induction model's held-out loss falls: a step after a plateau, or not
    (attncore.train.induction.loss_drop decides), and what the heads do meanwhile."""
    d = loss_drop(run.checkpoints, run.held_out_loss)
    first = run.held_out_loss[0]
    if not d.fell:
        return (f"The held-out loss has not fallen in {run.steps} steps ({n2(first)} at step "
                f"0, {n2(run.held_out_loss[-1])} at step {run.steps}).")
    stretch = f"from {n2(d.loss_from)} at step {d.start} to {n2(d.loss_to)} at step {d.end}"
    k0, k1 = (int(np.flatnonzero(run.checkpoints == s)[0]) for s in (d.start, d.end))
    prev = np.max([v for n, v in run.curves.items() if "previous" in n], axis=0)
    heads = (f" Over that stretch the best layer-2 head's induction score goes from "
             f"{n2(run.scores[k0])} to {n2(run.scores[k1])}, and the best layer-1 head's "
             f"previous-token score from {n2(prev[k0])} to {n2(prev[k1])}.")
    if d.at_start:
        return (f"The held-out loss falls fastest at once, {stretch}, and more slowly after: "
                "no plateau, so no step." + heads)
    if d.is_step:
        before = ("does not fall" if d.slope_before <= 0 else
                  f"falls slowly ({n2(first)} to {n2(d.loss_from)})")
        pace = "" if not np.isfinite(d.ratio) else f", {times_text(d.ratio)} times as fast"
        return (f"The held-out loss falls in a step: it {before} for the first {d.start} "
                f"steps, then drops {stretch}{pace}." + heads)
    if not d.speeds_up:  # a fast start can make the mean before the stretch steeper
        return (f"The held-out loss falls faster on average before step {d.start} "
                f"({n2(first)} at step 0, {n2(d.loss_from)} at step {d.start}) than over the "
                f"steepest stretch of the curve, {stretch} ({times_text(d.ratio)} times that "
                "pace): no plateau, so no step." + heads)
    return (f"The held-out loss falls from the start ({n2(first)} at step 0, "
            f"{n2(d.loss_from)} at step {d.start}), then faster: {stretch}, "
            f"{times_text(d.ratio)} times the earlier pace. That is a steady fall that speeds "
            "up, not a sudden step after a plateau (which would be at least "
            f"{STEP_RATIO:g} times)." + heads)


def collapse_table(runs: dict) -> pd.DataFrame:
    """One row per setting: how its pooling attention started and ended, and where it
    looked."""
    rows = []
    for name, run in runs.items():
        o = collapse.outcome(run)
        rows.append({"setting": name,
                     "at step 0": f"{o.start} (entropy {n2(o.entropy_start)})",
                     f"at step {run.steps}": f"{o.end} (entropy {n2(o.entropy_end)})",
                     "weight on key words": f"{n2(o.key_start)} → {n2(o.key_end)}",
                     "moved onto them": "yes" if o.moved else "no",
                     "held-out accuracy": f"{n2(o.accuracy)}"})
    return pd.DataFrame(rows).set_index("setting")


def collapse_notice(runs: dict, seed: int) -> str:
    """Which settings' attention moved onto the key words, in section 4's runs."""
    said = {}
    for name, run in runs.items():
        o = collapse.outcome(run)
        said[name] = (o.moved, f"*{name}* (starts {o.start}, ends {o.end}; weight on key "
                               f"words {n2(o.key_start)} → {n2(o.key_end)}, accuracy "
                               f"{n2(o.accuracy)})")
    moved = [t for ok, t in said.values() if ok]
    stuck = [t for ok, t in said.values() if not ok]
    text = (f"In section 4 (seed {seed}) the pooling weights moved onto the key words (their "
            f"share rose by at least {collapse.MOVED:g}) under ")
    text += ("; ".join(moved) if moved else "no setting")
    if stuck:
        text += ". They did not under " + "; ".join(stuck)
    return text + "."


def not_bad_notice(runs: dict) -> str:
    """What each trained model says of *the film was not bad*."""
    sentence = "the film was not bad"
    ids = sa.encode(sentence)[0][None, :]
    said = []
    for name, run in runs.items():
        p = float(sa.predict(run.params, ids)["positive"][0])
        said.append(f"model {'A' if name == 'pooling only' else 'B'} gives P(positive) = "
                    f"{p_text(p)} ({verdict(p).replace('**', '')})")
    return f"Type *{sentence}*: " + "; ".join(said) + "."


def verdict(p: float) -> str:
    """The side a P(positive) falls on, and whether it is only a guess (near 0.5)."""
    side = "positive" if p >= 0.5 else "negative"
    if abs(p - 0.5) < sa.GUESS_MARGIN:
        return f"**{side}**, but only just: within {sa.GUESS_MARGIN:g} of 0.5, a guess"
    return f"**{side}**"


# ---- 1 · sentiment ----------------------------------------------------------------------

st.header("1 · Sentiment: attention pooling learns which words matter")
if presenter:  # the short version: the figures must reach the first screen
    st.markdown("A: pooling only. B: one self-attention layer, then pooling.")
else:
    st.markdown(
        "A synthetic corpus: filler words, one sentiment word (*great*, *awful* …), sometimes an "
        "intensifier (*very*) and sometimes a negation (*not*, *never*) that flips the label. "
        "Model A, **pooling only**: word + position vectors → attention pooling with one learned "
        "query → linear classifier. Model B adds **one self-attention layer** "
        f"({SentimentConfig.heads} heads, d = {SentimentConfig.d_model}, residual) before the "
        "pooling; its pooling scores are computed from the layer's input and it pools the "
        "layer's output. Both are trained with Adam on the "
        f"{term_link('cross-entropy', 'cross-entropy loss')} of the label. B learns in two "
        f"stages: for its first {SentimentConfig.pool_first} steps the layer is held off (its "
        "output projection stays 0), so the pooling first looks for the sentiment words, as A "
        "does; then the layer is switched on and trained with the rest."
    )
chosen, _ = settings_form("sentiment", SentimentConfig.steps)
try:
    runs = {
        "pooling only": sentiment_run("pooling", chosen["seed"], chosen["steps"]),
        "self-attention + pooling": sentiment_run("self-attention", chosen["seed"],
                                                  chosen["steps"]),
    }
except ValueError as exc:
    show_error(exc)
    st.stop()
pool_run, attn_run = runs["pooling only"], runs["self-attention + pooling"]
cols = st.columns(4)
cols[0].metric("A: held-out accuracy", f"{pool_run.final_accuracy:.3f}")
cols[1].metric("B: held-out accuracy", f"{attn_run.final_accuracy:.3f}")
cols[2].metric("B: pooling weight on key words", f"{attn_run.attention_score:.3f}")
cols[3].metric("Training time A + B (measured)", f"{pool_run.seconds + attn_run.seconds:.2f} s")
if not presenter:
    st.caption(f"Seed {chosen['seed']}, {chosen['steps']} Adam steps of "
               f"{SentimentConfig.batch} sentences; held-out: "
               f"{SentimentConfig.n_held_out} sentences never trained on, about 40 % negated."
               + (f" B's layer is still off after {chosen['steps']} steps (it switches on "
                  f"after step {SentimentConfig.pool_first}): B's numbers are A's."
                  if layer_still_off(attn_run) else ""))
curves_chart(runs, "learn_fig_sent", "Sentiment",
             short={"pooling only": "A", "self-attention + pooling": "B"})

st.subheader("Where the pooling looks, before and after training")
sentence_index = st.selectbox("Example sentence", range(len(sa.DISPLAY)),
                              format_func=lambda i: sa.DISPLAY[i], key="learn_sent_example",
                              **URL)
words = sa.DISPLAY[sentence_index].split()
T = len(words)
left, right = st.columns(2)
for col, (name, run) in zip((left, right), runs.items(), strict=True):
    pool = run.snapshots["pool"][:, sentence_index, :T]  # (checkpoints, T)
    rows = [f"step {s}" for s in run.checkpoints]
    shown = np.linspace(0, len(rows) - 1, min(len(rows), 6)).round().astype(int)
    with col:
        show_figure(matrix_heatmap(pool[shown], [rows[i] for i in shown], words,
                                   title=f"{name}: pooling weights over training",
                                   x_title="word", y_title="checkpoint", decimals=2,
                                   font_size=font - 2),
                    key=f"learn_fig_pool_{name[:4]}",
                    alt=f"{name}: pooling weights over the words at {len(shown)} checkpoints."
                        " " + describe_matrix(pool[shown], [rows[i] for i in shown], words,
                                              rows="at", cols="word"))
share = {"B: sentiment + negation words": attn_run.scores,
         "B: filler words": attn_run.curves["filler_share"],
         "A: sentiment + negation words": pool_run.scores,
         "A: filler words": pool_run.curves["filler_share"]}
show_figure(line_chart(attn_run.checkpoints, share, title="Share of pooling weight, "
                       "held-out sentences", x_title="step", y_title="share of weight",
                       font_size=font), key="learn_fig_share",
            alt=describe_lines(attn_run.checkpoints, share, x_title="step",
                               y_title="Share of pooling weight on held-out sentences"))
st.caption("A and B start from the same numbers, and B's layer is off for its first "
           f"{SentimentConfig.pool_first} steps, so where a line of B is missing it lies "
           "under A's.")

st.subheader("Negation: what pooling alone cannot do")
neg = {n: r.curves["negated_accuracy"][-1] for n, r in runs.items()}
plain = {n: r.curves["plain_accuracy"][-1] for n, r in runs.items()}
a_low, a_high = pool_run.curves["negated_p_low"][-1], pool_run.curves["negated_p_high"][-1]
a_guesses = max(abs(a_low - 0.5), abs(a_high - 0.5)) < sa.GUESS_MARGIN
st.markdown(
    f"Held-out accuracy on sentences **without** negation: A {plain['pooling only']:.3f}, "
    f"B {plain['self-attention + pooling']:.3f}; **with** negation: A "
    f"{neg['pooling only']:.3f}, B {neg['self-attention + pooling']:.3f}. A weighted average "
    "of word vectors cannot turn *bad* into its opposite: *not* adds the same vector whatever "
    "follows it. "
    + (f"So model A guesses: it gives every negated held-out sentence a P(positive) "
       f"between {p_text(a_low)} and {p_text(a_high)}, all within {sa.GUESS_MARGIN:g} of 0.5. "
       if a_guesses else
       f"Model A gives the negated held-out sentences a P(positive) from {p_text(a_low)} to "
       f"{p_text(a_high)}. ")
    + "Self-attention lets one word's vector depend on another's, so *not* can carry the "
    "flipped meaning of the word it negates."
)


@st.fragment
def negation_heads(attn_run, font: int) -> None:
    """B's self-attention on a negated sentence at one checkpoint. It reruns alone when
    its checkpoint moves (st.fragment): nothing else on the page depends on it."""
    neg_index = NEGATED
    neg_words = sa.DISPLAY[neg_index].split()
    k = checkpoint_slider(attn_run, "learn_sent_checkpoint")
    attn = attn_run.snapshots["attn"][k, neg_index, :, : len(neg_words), : len(neg_words)]
    cols = st.columns(len(attn))  # (heads, T, T)
    for h, col in enumerate(cols):
        with col:
            show_figure(matrix_heatmap(attn[h], neg_words, neg_words, decimals=2,
                                       title=f"B's self-attention, head {h + 1}, step "
                                             f"{attn_run.checkpoints[k]}", font_size=font - 2),
                        key=f"learn_fig_selfattn_{h}",
                        alt=f"B's self-attention, head {h + 1}, step "
                            f"{attn_run.checkpoints[k]}. "
                            + describe_matrix(attn[h], neg_words, neg_words))
    not_row = neg_words.index("not")
    best = [int(np.argmax(a[not_row])) for a in attn]
    st.caption("Row *not*: the word each head's query at *not* attends to most — "
               + ", ".join(f"head {h + 1}: *{neg_words[b]}*" for h, b in enumerate(best)) + ".")


negation_heads(attn_run, font)

st.subheader("Your sentence")
with st.expander("The vocabulary (other words are marked and left out)"):
    for kind, group in sa.GROUPS.items():
        if kind != "pad":
            st.markdown(f"**{kind}:** " + ", ".join(group))
text = st.text_input("A sentence from the vocabulary", "the acting was not very good",
                     max_chars=MAX_INPUT_CHARS, key="learn_sent_text", **URL)
left_out = sa.unknown_words(text)
if left_out:  # marked, as typed (a table shows text as text, never as HTML)
    st.warning(f"{len(left_out)} word(s) not in the vocabulary are left out:")
    st.dataframe(pd.DataFrame({"left out (not in the vocabulary)": left_out}),
                 hide_index=True)
try:
    ids, known, _ = sa.encode(text)  # the words left out are listed above
except ValueError as exc:
    show_error(exc)
else:
    if len(known) == sa.MAX_LEN:
        st.info(f"Only the first {sa.MAX_LEN} known words are used (the models' longest input).")
    cols = st.columns(2)
    for col, (name, run) in zip(cols, runs.items(), strict=True):
        out = sa.predict(run.params, ids[None, :])
        p = float(out["positive"][0])
        with col:
            st.markdown(f"**{name}**: P(positive) = {p_text(p)} → {verdict(p)}")
            show_figure(bar_chart(known, out["pool"][0], title="pooling weights",
                                  x_title="word", y_title="weight", y_range=(0, 1.1),
                                  decimals=2, font_size=font - 2),
                        key=f"learn_fig_yours_{name[:4]}",
                        alt=describe_bars(known, out["pool"][0],
                                          what=f"{name}: pooling weights over your words"))


# ---- 2 · alignment ----------------------------------------------------------------------

st.header("2 · Alignment that emerges from the translation loss")
st.markdown(
    "A toy English → French task: *det [adj] noun verb det [adj] noun*, translated word for "
    "word except that each adjective moves after its noun (*the big dog* → *le chien "
    "grand*). The encoder-decoder sees only sentence pairs: no one tells it which source "
    "word a French word comes from. Decoder state = previous French word + position; "
    f"output from [state; context]; d = {AlignmentConfig.d_model}; AdamW with weight decay "
    f"{AlignmentConfig.weight_decay:g}."
)


def alignment_extra(col) -> dict:
    kind = col.radio("Score", al.KINDS, key="learn_alignment_kind", horizontal=True,
                     format_func=lambda k: {"additive": "Bahdanau (additive)",
                                            "general": "Luong (general)"}[k], **URL)
    return {"kind": kind}


@st.fragment
def show_alignment_checkpoints(align_run, snap: np.ndarray, tgt_labels: list[str],
                               src_labels: list[str], font: int) -> None:
    """The untrained alignment beside the one at a checkpoint; reruns alone when the
    checkpoint moves (st.fragment), and only the second map changes."""
    k = checkpoint_slider(align_run, "learn_align_checkpoint")
    left, right = st.columns(2)
    panels = (("untrained", 0, "untrained (step 0)"),
              ("checkpoint", k, f"step {align_run.checkpoints[k]}"))
    for col, (name, index, label) in zip((left, right), panels, strict=True):
        with col:
            show_figure(matrix_heatmap(snap[index], tgt_labels, src_labels, decimals=2,
                                       title=f"Alignment, {label}", x_title="English (key)",
                                       y_title="French (query)", font_size=font - 2),
                        key=f"learn_fig_align_{name}",
                        alt=f"Alignment, {label}: French rows, English columns. "
                            + describe_matrix(snap[index], tgt_labels, src_labels,
                                              rows="French", cols="English"))


chosen, pressed = settings_form("alignment", AlignmentConfig.steps, alignment_extra)
key = ("alignment", chosen["kind"], chosen["seed"], chosen["steps"])
if key in trained_settings() or pressed:
    align_run = alignment_run(chosen["kind"], chosen["seed"], chosen["steps"])
    trained_settings().add(key)
else:
    align_run = None
    st.info("Press **Train** above to train the encoder-decoder (about 1–5 s).")
if align_run is not None:
    cols = st.columns(4)
    cols[0].metric("Held-out token accuracy", f"{align_run.final_accuracy:.3f}")
    cols[1].metric("Alignment score", f"{align_run.attention_score:.3f}")
    cols[2].metric("…on moved words only", f"{align_run.curves['moved_score'][-1]:.3f}")
    cols[3].metric("Training time (measured)", f"{align_run.seconds:.2f} s")
    st.caption(f"{chosen['kind']} score, seed {chosen['seed']}, {chosen['steps']} steps. "
               "Alignment score: the fraction of held-out French words whose largest attention "
               "weight is on their English word.")
    example = st.selectbox("Sentence", range(len(al.DISPLAY)),
                           format_func=lambda i: al.DISPLAY[i], key="learn_align_example", **URL)
    english = al.DISPLAY[example].split()
    french, _ = al.translate_words(english)
    src_labels, tgt_labels = [*english, al.EOS], [*french, al.EOS]
    snap = align_run.snapshots["alignment"][:, example, : len(tgt_labels), : len(src_labels)]
    show_alignment_checkpoints(align_run, snap, tgt_labels, src_labels, font)
    curves_chart({chosen["kind"]: align_run}, "learn_fig_align", "Translation")


# ---- 3 · induction ----------------------------------------------------------------------

st.header("3 · Induction heads: a two-step algorithm forms")
st.markdown(
    "Sequences are a random segment of distinct tokens repeated (*7 3 9 1 7 3 9 1 7 …*); from "
    "the second copy on, the next token can be found by looking at what followed the current "
    "token last time. A 2-layer, attention-only causal transformer "
    f"({InductionConfig.heads} heads per layer, d = {InductionConfig.d_model}, vocabulary "
    f"{InductionConfig.vocab}, length {InductionConfig.length}, periods "
    f"{InductionConfig.min_period}–{InductionConfig.max_period}) can learn it with a "
    "**previous-token head** in layer 1 (each token looks at the one before it) and an "
    "**induction head** in layer 2 (it finds where the current token occurred before and "
    "looks at the token that followed it). This one trains only when you press Train "
    "(about 5–20 s)."
)


@st.fragment
def induction_heads(ind_run, font: int, presenter: bool) -> None:
    """The four heads on one held-out sequence at a checkpoint, as one figure of four
    panels: moving the checkpoint reruns this alone (st.fragment) and redraws one figure."""
    k = checkpoint_slider(ind_run, "learn_ind_checkpoint")
    ids, period = ind_run.examples["ids"], ind_run.examples["period"]
    labels = [str(t) for t in ids]
    a1, a2 = ind_run.snapshots["L1"][k], ind_run.snapshots["L2"][k]  # (H, T, T) each
    H = a1.shape[0]
    maps = [*a1, *a2]
    names = [f"layer {layer}, head {h + 1}" for layer in (1, 2) for h in range(H)]
    # the text says each head's score on this sequence, as the curves above measure it
    # on the held-out set: the strongest weight of every causal map is row 1's 1 on itself
    s = head_scores(a1[None], a2[None], ids[None], np.array([period]))
    said = [f"layer 1, head {h + 1}: {said_number(s['prev'][h])} on the previous token"
            for h in range(H)]
    said += [f"layer 2, head {h + 1}: {said_number(s['induction'][h])} on the tokens that "
             "followed earlier copies of the current one" for h in range(H)]
    show_figure(heatmap_grid(maps, labels, labels, names, columns=2 if presenter else 4,
                             font_size=font - (2 if presenter else 4),  # 18 px on a projector
                             title=f"Step {ind_run.checkpoints[k]}"),
                key="learn_fig_ind_heads_at",
                alt=f"The {len(maps)} heads at step {ind_run.checkpoints[k]} on one held-out "
                    f"sequence of {len(ids)} token ids (period {period}), mean weights: "
                    + "; ".join(said) + ".")
    st.caption(f"One held-out sequence (period {ind_run.examples['period']}), step "
               f"{ind_run.checkpoints[k]}. A previous-token head is a line just below the "
               "diagonal; an induction head is a line one place to the right of the earlier "
               "copy of each token, i.e. period − 1 below the diagonal.")


chosen, pressed = settings_form("induction", InductionConfig.steps)
key = ("induction", chosen["seed"], chosen["steps"])
if key in trained_settings() or pressed:
    try:
        ind_run = induction_run(chosen["seed"], chosen["steps"])
    except ValueError as exc:
        show_error(exc)
        st.stop()
    trained_settings().add(key)
    cols = st.columns(4)
    cols[0].metric("Held-out accuracy", f"{ind_run.final_accuracy:.3f}",
                   help="Next-token predictions from the second copy of the segment on.")
    cols[1].metric("Layer-2 induction score", f"{ind_run.attention_score:.3f}",
                   help="The best layer-2 head's weight on the tokens that followed earlier "
                        "copies of the current token.")
    prev = max(v[-1] for n, v in ind_run.curves.items() if "previous" in n)
    cols[2].metric("Layer-1 previous-token score", f"{prev:.3f}",
                   help="The best layer-1 head's weight on the token just before.")
    cols[3].metric("Training time (measured)", f"{ind_run.seconds:.1f} s")
    curves_chart({"2-layer attention-only": ind_run}, "learn_fig_ind", "Induction")
    show_figure(line_chart(ind_run.checkpoints, ind_run.curves,
                           title="Each head's score over training", x_title="step",
                           y_title="score (weight on the pattern's key)", font_size=font),
                key="learn_fig_ind_heads",
                alt=describe_lines(ind_run.checkpoints, ind_run.curves, x_title="step",
                                   y_title="Each head's score (weight on its pattern's key)"))
    st.markdown(loss_shape(ind_run))
    induction_heads(ind_run, font, presenter)
else:
    ind_run = None
    st.info("Press **Train** above to train the induction model at these settings.")


# ---- 4 · collapse and over-sparsity -------------------------------------------------------

st.header("4 · When attention goes wrong: collapse and over-sparsity")
st.markdown(
    "Model A trained under settings that may break its attention. The "
    f"{term_link('entropy', 'normalised entropy')} of its pooling weights is 1 for uniform "
    "attention (collapse: nothing picked out) and 0 for "
    f"{term_link('one-hot', 'one-hot')} attention (over-sparse: one word takes all, the "
    f"softmax {term_link('saturation', 'saturates')} and its gradient all but vanishes). "
    "Which settings it recovers from is read off the runs below."
)
with st.form("learn_collapse_form"):
    collapse_seed = seed_input(st, "learn_collapse_seed")
    run_collapse = st.form_submit_button("Train the five settings (about 2–10 s)",
                                         key="learn_collapse_train")
collapse_key = ("collapse", int(collapse_seed))
if run_collapse or collapse_key in trained_settings():
    bad = collapse_runs(int(collapse_seed))
    trained_settings().add(collapse_key)
    steps = next(iter(bad.values())).checkpoints
    left, right = st.columns(2)
    entropies = {n: r.curves["pool_entropy"] for n, r in bad.items()}
    accuracies = {n: r.accuracy for n, r in bad.items()}
    with left:
        show_figure(line_chart(steps, entropies,
                               title="Normalised entropy of the pooling weights",
                               x_title="step", y_title="entropy (0 one-hot, 1 uniform)",
                               font_size=font, height=420), key="learn_fig_entropy",
                    alt=describe_lines(steps, entropies, x_title="step",
                                       y_title="Normalised entropy of the pooling weights"))
    with right:
        show_figure(line_chart(steps, accuracies, title="Held-out accuracy", x_title="step",
                               y_title="accuracy", font_size=font, height=420),
                    key="learn_fig_collapse_acc",
                    alt=describe_lines(steps, accuracies, x_title="step",
                                       y_title="Held-out accuracy"))
    st.table(collapse_table(bad))
    if not presenter:
        st.caption(f"Seed {int(collapse_seed)}, held-out sentences. Nearly one-hot: at least "
                   f"{collapse.ONE_HOT_SHARE:.0%} of the sentences' rows have a largest weight "
                   f"above {NEARLY_ONE_HOT:g}; nearly uniform: normalised entropy at least "
                   f"{collapse.NEARLY_UNIFORM:g}; sharp: entropy below {collapse.SHARP:g}; "
                   f"spread: in between. "
                   "Moved: the weight on sentiment and negation words rose by at least "
                   f"{collapse.MOVED:g}. Chance accuracy is 0.5.")
else:
    bad = None
    st.info("Press the button to train the five settings.")

bullet_list("What to notice", [
    pooling_notice(pool_run),
    negation_notice(runs),
    alignment_notice(align_run) if align_run is not None else
    "Section 2: train the encoder-decoder to see whether its alignment finds the crossings "
    "from the translation loss alone (no one labels which word goes with which).",
    loss_shape(ind_run) if ind_run is not None else
    "Section 3: train the induction model to see how its loss falls as the heads form.",
    collapse_notice(bad, int(collapse_seed)) if bad is not None else
    "Section 4: train the five settings to see which of them attention recovers from.",
])
st.subheader("The formulas")
st.latex(r"\text{pooling: } a = \mathrm{softmax}\!\left(\frac{(X W_k)\, q}{\sqrt{d}\,\tau}\right),"
         r"\quad y = \sum_t a_t h_t \qquad \text{Adam: } \theta \leftarrow \theta - \eta\,"
         r"\frac{\hat m}{\sqrt{\hat v} + \epsilon}")
st.latex(r"\frac{\partial L}{\partial s_j} = a_j\Big(\frac{\partial L}{\partial a_j} - "
         r"\sum_i a_i \frac{\partial L}{\partial a_i}\Big)\quad"
         r"\text{(the softmax's backward pass, used by every attention layer here)}")
if not presenter:
    bullet_list("Try this", [
        "Train with 20 steps: how far have the pooling weights moved from their random start?",
        not_bad_notice(runs),
        "Switch the alignment to Luong (general) and compare its map with Bahdanau's.",
        "Press *Train again with a new seed* a few times: which numbers change, and does B's "
        "*not* still look at the word it negates?",
    ], expanded=False)
    practice_questions("learn", [
        {"q": "Model A's pooling weights on *the plot was not good* are 0.1, 0.1, 0.1, 0.3 and "
              "0.4. What weight do sentiment and negation words get together?",
         "value": 0.7, "tol": 1e-6, "a": "*not* (0.3) + *good* (0.4) = 0.7."},
        {"q": "Why can a weighted average of word vectors not learn that *not bad* is "
              "positive?",
         "a": "Each word adds its own fixed vector times a weight: *not* adds the same "
              "direction before *good* and before *bad*, so it cannot push one up and the "
              "other down. The label depends on the pair (an XOR), which needs an interaction "
              "such as self-attention."},
        {"q": "In a sequence with period 5, at which earlier position does an induction head "
              "at position 12 look? (The nearest one.)",
         "value": 8.0, "tol": 1e-9,
         "a": "Position 12 holds the same token as position 7; the token after it, at "
              "12 − 5 + 1 = 8, is the one to copy. (Position 3, after the first copy at 2, "
              "holds the same token: the head may look there too.)"},
    ])
    st.subheader("Download")
    matrices = {"Sentiment B: checkpoints": curves_table(attn_run),
                "Sentiment A: checkpoints": curves_table(pool_run),
                }
    if align_run is not None:
        matrices["Alignment: checkpoints"] = curves_table(align_run)
        matrices["Alignment (trained)"] = (snap[-1], tgt_labels, src_labels)
    if ind_run is not None:
        matrices["Induction: checkpoints"] = curves_table(ind_run)
    downloads("learn", matrices, {
        "sentiment_loss_A": pool_run.loss, "sentiment_loss_B": attn_run.loss,
        "sentiment_checkpoints": attn_run.checkpoints,
        "sentiment_snapshots": attn_run.snapshots,
    })
    st.download_button("Trained weights of model B (.npz)", lambda: npz_bytes(attn_run.params),
                       file_name="sentiment_model_B.npz", key="learn_dl_npz",
                       on_click="ignore")
    st.download_button("Training loss of model B (CSV)",
                       lambda: to_csv(attn_run.loss[:, None],
                                      [str(s) for s in range(1, len(attn_run.loss) + 1)],
                                      ["loss"]),
                       file_name="sentiment_model_B_loss.csv", key="learn_dl_loss",
                       on_click="ignore")
finish_page()
