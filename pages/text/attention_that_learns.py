"""Lesson 8's sentences that depend on its trained runs, as plain functions of them.

Each says what the runs it is given did (a step in the loss only when the loss has one,
the settings attention recovered from only when their weights moved), so that the page
never states what this training did not show.
"""

from __future__ import annotations

import numpy as np

from attncore.analysis import NEARLY_ONE_HOT
from attncore.train import alignment as al
from attncore.train import collapse
from attncore.train import sentiment as sa
from attncore.train.induction import STEP_RATIO, loss_drop
from pages.ui.glossary import term_link
from pages.ui.numbers import (
    apart_text,
    number_text,
    percent_text,
    probability_text,
    ratio_text,
)

NEGATED = sa.DISPLAY.index("the plot was not good")  # the negated example shown
NOT_BAD = "the film was not bad"  # the sentence "Try this" asks for
A, B = "pooling only", "self-attention + pooling"  # the two sentiment models' names


def n2(x: float) -> str:
    """A measure with two decimals (scientific for a nonzero one that would read 0)."""
    return number_text(x, 2)


def p_text(p: float) -> str:
    """A probability with three decimals, in scientific notation where that would read
    0.000 (B's P(positive) can be 10⁻⁶), as 1 minus a power of ten where it would read
    1.000 (0.9996 is "1 − 4.0×10⁻⁴"), and with more decimals where it would read as the
    0.5 that separates the verdicts (0.5002): no student reads a false 0, 1 or 0.5."""
    if p != 0.5 and number_text(p, 3) == "0.500":
        return apart_text(p, 0.5, 3)
    return probability_text(p, 3)


def training_estimate(steps: int, quiet: float, busy: float) -> str:
    """About how long ``steps`` steps of training take, ``quiet`` to ``busy`` seconds
    (an estimate from the caps' measured time): whole seconds, or "under 1 s"."""
    def about(seconds: float) -> str:
        return f"about {seconds:.0f} s" if seconds >= 0.5 else "under 1 s"
    return (f"{about(quiet)} for {steps} {'step' if steps == 1 else 'steps'} on a quiet "
            f"machine here, up to {about(busy)} on a busy one")


def share(x: float, decimals: int = 2) -> str:
    """A share of the weight, with two decimals by default, never a false 1.00 (0.9957 is
    "1 − 4.3×10⁻³") nor a false 0.00."""
    return probability_text(x, decimals)


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


def layer_still_off(run) -> bool:
    """Whether B's self-attention layer was never switched on: it adds nothing for the
    first ``pool_first`` updates, so after that many or fewer, B computes what A does."""
    return run.steps <= run.config.pool_first


def sentiment_caption(run) -> str:
    """The settings of section 1's runs (``run`` is B's), and whether B's layer is on."""
    cfg = run.config
    return (f"Seed {cfg.seed}, {cfg.steps} Adam steps of {cfg.batch} sentences; held-out: "
            f"{cfg.n_held_out} sentences never trained on, about 40 % negated."
            + (f" B's layer is still off after {cfg.steps} steps (it switches on after step "
               f"{cfg.pool_first}): B's numbers are A's." if layer_still_off(run) else ""))


def pooling_notice(run) -> str:
    """Where model A's pooling weights start, and when they reach the key words."""
    start = collapse.outcome(run).start
    filler = run.curves["filler_share"]
    reached = sa.first_step_reaching(run.checkpoints, run.scores, 0.5)
    text = (f"Before training model A's pooling weights are {start} (normalised entropy "
            f"{n2(run.curves['pool_entropy'][0])}; {start} here means "
            f"{state_meaning(start)}): on average {share(run.scores[0])} of a "
            f"held-out sentence's weight is on its sentiment and negation words, "
            f"{share(filler[0])} on filler. ")
    if reached is None:
        return text + (f"After {run.steps} steps the share on those words is "
                       f"{share(run.scores[-1])}: it has not yet reached one half.")
    return text + (f"By step {reached} the share on those words reaches one half; at step "
                   f"{run.steps} it is {share(run.scores[-1])}, and filler's {share(filler[-1])}.")


def negation_text(runs: dict) -> str:
    """Both models' accuracy with and without negation, and whether A only guesses on the
    negated sentences (every P(positive) within GUESS_MARGIN of 0.5)."""
    a = runs[A]
    neg = {n: r.curves["negated_accuracy"][-1] for n, r in runs.items()}
    plain = {n: r.curves["plain_accuracy"][-1] for n, r in runs.items()}
    low, high = a.curves["negated_p_low"][-1], a.curves["negated_p_high"][-1]
    guesses = max(abs(low - 0.5), abs(high - 0.5)) < sa.GUESS_MARGIN
    return (
        f"Held-out accuracy on sentences **without** negation: A {plain[A]:.3f}, "
        f"B {plain[B]:.3f}; **with** negation: A {neg[A]:.3f}, B {neg[B]:.3f}. A weighted "
        "average of word vectors cannot turn *bad* into its opposite: *not* adds the same "
        "vector whatever follows it. "
        + (f"So model A guesses: it gives every negated held-out sentence a P(positive) "
           f"between {p_text(low)} and {p_text(high)}, all within {sa.GUESS_MARGIN:g} of 0.5. "
           if guesses else
           f"Model A gives the negated held-out sentences a P(positive) from {p_text(low)} "
           f"to {p_text(high)}. ")
        + "Self-attention lets one word's vector depend on another's, so *not* can carry the "
        "flipped meaning of the word it negates.")


def strongest_keys_text(attn: np.ndarray, words: list[str], word: str = "not") -> str:
    """The word each head's query at ``word`` attends to most; ``attn`` is (heads, T, T)."""
    row = words.index(word)
    best = [int(np.argmax(a[row])) for a in attn]
    return (f"Row *{word}*: the word each head's query at *{word}* attends to most — "
            + ", ".join(f"head {h + 1}: *{words[b]}*" for h, b in enumerate(best)) + ".")


def negation_notice(runs: dict) -> str:
    """How A and B do on negated sentences, and where B's *not* looks at the end."""
    a, b = runs[A], runs[B]
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


def verdict(p: float) -> str:
    """The side a P(positive) falls on, and whether it is only a guess (near 0.5)."""
    side = "positive" if p >= 0.5 else "negative"
    if abs(p - 0.5) < sa.GUESS_MARGIN:
        return f"**{side}**, but only just: within {sa.GUESS_MARGIN:g} of 0.5, a guess"
    return f"**{side}**"


def not_bad_notice(runs: dict) -> str:
    """What each trained model says of *the film was not bad*."""
    ids = sa.encode(NOT_BAD)[0][None, :]
    said = []
    for name, run in runs.items():
        p = float(sa.predict(run.params, ids)["positive"][0])
        said.append(f"model {'A' if name == A else 'B'} gives P(positive) = "
                    f"{p_text(p)} ({verdict(p).replace('**', '')})")
    return f"Type *{NOT_BAD}*: " + "; ".join(said) + "."


def alignment_notice(run) -> str:
    """How often the alignment's largest weight of a moved French word is on its own
    English word, untrained and at the end."""
    moved = run.curves["moved_score"]
    return ("Trained on the translation loss alone (no one labels which word goes with "
            "which), the alignment puts the largest weight of a moved French word (a noun "
            "moved before its adjective, or the adjective after it) on its own English "
            "word for "
            f"{percent_text(moved[0])} of them untrained and {percent_text(moved[-1])} at step "
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
        pace = "" if not np.isfinite(d.ratio) else f", {ratio_text(d.ratio)} times as fast"
        return (f"The held-out loss falls in a step: it {before} for the first {d.start} "
                f"steps, then drops {stretch}{pace}." + heads)
    if not d.speeds_up:  # a fast start can make the mean before the stretch steeper
        return (f"The held-out loss falls faster on average before step {d.start} "
                f"({n2(first)} at step 0, {n2(d.loss_from)} at step {d.start}) than over the "
                f"steepest stretch of the curve, {stretch} ({ratio_text(d.ratio)} times that "
                "pace): no plateau, so no step." + heads)
    return (f"The held-out loss falls from the start ({n2(first)} at step 0, "
            f"{n2(d.loss_from)} at step {d.start}), then faster: {stretch}, "
            f"{ratio_text(d.ratio)} times the earlier pace. That is a steady fall that speeds "
            "up, not a sudden step after a plateau (which would be at least "
            f"{STEP_RATIO:g} times)." + heads)


def collapse_rows(runs: dict) -> list[dict]:
    """One row per setting: how its pooling attention started and ended, and where it
    looked (the cells of section 4's table)."""
    rows = []
    for name, run in runs.items():
        o = collapse.outcome(run)
        rows.append({"setting": name,
                     "at step 0": f"{o.start} (entropy {n2(o.entropy_start)})",
                     f"at step {run.steps}": f"{o.end} (entropy {n2(o.entropy_end)})",
                     "weight on sentiment and negation words":
                         f"{share(o.key_start)} → {share(o.key_end)}",
                     "moved onto them": "yes" if o.moved else "no",
                     "held-out accuracy": f"{n2(o.accuracy)}"})
    return rows


def collapse_caption(seed: int) -> str:
    """What section 4's table calls each state, and what moved means."""
    return (f"Seed {seed}, held-out sentences. Nearly one-hot: at least "
            f"{collapse.ONE_HOT_SHARE:.0%} of the sentences' rows have a largest weight "
            f"above {NEARLY_ONE_HOT:g}; nearly uniform: normalised entropy at least "
            f"{collapse.NEARLY_UNIFORM:g}; sharp: entropy below {collapse.SHARP:g}; "
            f"spread: in between. Moved: the weight on sentiment and negation words rose by "
            f"at least {collapse.MOVED:g}. Chance accuracy is 0.5.")


def collapse_notice(runs: dict, seed: int) -> str:
    """Which settings' attention moved onto the key words, in section 4's runs."""
    said = {}
    for name, run in runs.items():
        o = collapse.outcome(run)
        said[name] = (o.moved, f"*{name}* (starts {o.start}, ends {o.end}; weight on those "
                               f"words {share(o.key_start)} → {share(o.key_end)}, accuracy "
                               f"{n2(o.accuracy)})")
    moved = [t for ok, t in said.values() if ok]
    stuck = [t for ok, t in said.values() if not ok]
    text = (f"In section 4 (seed {seed}) the pooling weights moved onto the sentiment and "
            f"negation words (their "
            f"share rose by at least {collapse.MOVED:g}) under ")
    text += ("; ".join(moved) if moved else "no setting")
    if stuck:
        text += ". They did not under " + "; ".join(stuck)
    return text + "."


def collapse_intro() -> str:
    """What section 4 measures, and why a one-hot softmax harms a run at its start (true of
    every run: which settings start one-hot, and what follows, is read off the runs)."""
    return (
        "Model A trained under settings that may break its attention. The "
        f"{term_link('entropy', 'normalised entropy')} of its pooling weights is 1 for uniform "
        "attention (nothing picked out) and 0 for "
        f"{term_link('one-hot', 'one-hot')} attention (one word takes all the weight); what "
        "Zhai et al. (ICML 2023) call “entropy collapse” is this one-hot extreme, not the "
        "uniform one. Ending "
        "near 0 is no failure in itself: a model that has found the words that matter may "
        "give them all the weight. Starting near 0 is the danger: a one-hot softmax is "
        f"{term_link('saturation', 'saturated')}, its gradient all but vanishes, and the "
        "weights can stay on the words chance gave them. Which settings it recovers from is "
        "read off the runs below.")


def sparsity_text(runs: dict) -> str:
    """Where section 4's runs were one-hot: how the sensible run ends, and what became of
    the runs that started nearly one-hot (collapse.outcome of each)."""
    outcomes = {name: collapse.outcome(run) for name, run in runs.items()}
    steps = next(iter(runs.values())).steps
    good = outcomes[collapse.SENSIBLE]
    best = max(o.accuracy for o in outcomes.values())
    text = (f"The sensible run ends {good.end} (normalised entropy {n2(good.entropy_end)}), "
            f"with {share(good.key_end, 3)} of its weight on the sentiment and negation words "
            f"and a held-out accuracy of {n2(good.accuracy)}"
            + (f", the best of the {len(runs)} settings" if good.accuracy == best else
               f" (the best: {n2(best)})") + ".")
    if good.end == "nearly one-hot" and good.key_end > 0.5:
        text += " Nearly one-hot at the end, on those words, is what it learnt."
    started = {name: o for name, o in outcomes.items() if o.start == "nearly one-hot"}
    if not started:
        return text + " No setting starts nearly one-hot at this seed."
    stuck = []
    for name, o in started.items():
        where = (f"The run *{name}* starts nearly one-hot (entropy {n2(o.entropy_start)}), "
                 f"with {share(o.key_start, 3)} of its weight on those words")
        if o.moved:
            text += f" {where}, and moves onto them ({share(o.key_end, 3)} at step {steps})."
        else:
            stuck.append(o)
            text += (f" {where}, and does not move onto them ({share(o.key_end, 3)} at step "
                     f"{steps}; accuracy {n2(o.accuracy)}).")
    if stuck and all(o.key_start < 0.5 for o in stuck):
        text += (" What fails there is not one-hot attention but being one-hot from the "
                 "start, mostly on other words: the saturated softmax passes almost no "
                 "gradient, and the weights stay where chance put them.")
    return text


def _temperatures() -> str:
    """The pooling temperatures section 4 sets, other than the models' own."""
    return " and ".join(f"{v['temperature']:g}" for v in collapse.SETTINGS.values()
                        if "temperature" in v)


#: Under the formulas: every symbol they use.
FORMULA_NOTE = (
    "X: the token vectors (embedding plus position), one row x_t per token; the scores read "
    "X. h_t is what is pooled: x_t itself in model A, x_t plus the self-attention layer's "
    "output in model B. τ is the pooling's temperature: "
    f"{sa.SentimentConfig.temperature:g}, except in section 4's {_temperatures()}. η, m̂, v̂ "
    "and ε are Adam's step size, its running means of the gradient and of its square, and "
    "a small constant. Every model here trains with Adam but section 2's encoder-decoder, "
    "which uses AdamW: it also subtracts ηλθ at each step, λ the weight decay "
    f"({al.AlignmentConfig.weight_decay:g}).")


def alignment_intro() -> str:
    """Section 2's task and model, with an example phrase translated by the task's rule."""
    phrase = al.DISPLAY[0].split()[:3]  # det adj noun
    config = al.AlignmentConfig
    return ("A toy English → French task: *det [adj] noun verb det [adj] noun*, translated "
            "word for word except that each adjective moves after its noun, as French does "
            f"with these adjectives (*{' '.join(phrase)}* → "
            f"*{' '.join(al.translate_words(phrase)[0])}*). The encoder-decoder sees only "
            "sentence pairs: no one tells it which source word a French word comes from. "
            "Decoder state = previous French word + position; output from [state; context]; "
            f"d = {config.d_model}; {term_link('adamw', 'AdamW')} with weight decay "
            f"{config.weight_decay:g}.")
