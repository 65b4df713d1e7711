"""Lesson 8: attention that learns — small models trained live, patterns that form."""

import numpy as np
import pandas as pd
import streamlit as st

from attncore.train import AlignmentConfig, InductionConfig, SentimentConfig
from attncore.train import alignment as al
from attncore.train import sentiment as sa
from attncore.train.induction import head_scores
from pages.text import attention_that_learns as say
from pages.ui import learning
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
    bad_input_stops_page,
    bullet_list,
    practice_questions,
    show_error,
    show_figure,
)
from pages.ui.live import offer_downloads
from pages.ui.page import Page, lesson_page
from pages.ui.tables import to_csv

MAX_INPUT_CHARS = 200


def limits_caption() -> None:
    quiet, busy = learning.INDUCTION_CAP_SECONDS
    st.caption(
        f"Caps: at most {learning.MAX_STEPS['induction']} training steps per run; the slowest "
        f"task (induction) took about {quiet:.0f} s for that many steps on a quiet machine "
        f"here and up to about {busy:.0f} s on a busy one. Each result is cached on its "
        "settings: a class opening the same link sees it without retraining. Seconds shown "
        "are measured on this server.")


# ---- 1 · sentiment ----------------------------------------------------------------------

def sentiment_section(page: Page) -> dict:
    """Models A and B trained at the form's settings: their curves and where they pool.
    Returns the two runs by name."""
    st.header("1 · Sentiment: attention pooling learns which words matter")
    if page.presenter:  # the short version: the figures must reach the first screen
        st.markdown("A: pooling only. B: one self-attention layer, then pooling.")
    else:
        st.markdown(
            "A synthetic corpus: filler words, one sentiment word (*great*, *awful* …), "
            "sometimes an intensifier (*very*) and sometimes a negation (*not*, *never*) that "
            "flips the label. Model A, **pooling only**: word + position vectors → attention "
            "pooling with one learned query → linear classifier. Model B adds **one "
            f"self-attention layer** ({SentimentConfig.heads} heads, d = "
            f"{SentimentConfig.d_model}, residual) before the pooling; its pooling scores are "
            "computed from the layer's input and it pools the layer's output. Both are trained "
            f"with Adam on the {term_link('cross-entropy', 'cross-entropy loss')} of the label. "
            f"B learns in two stages: for its first {SentimentConfig.pool_first} steps the "
            "layer is held off (its output projection stays 0), so the pooling first looks for "
            "the sentiment words, as A does; then the layer is switched on and trained with "
            "the rest.")
    chosen, _ = learning.settings_form(page.presenter, "sentiment", SentimentConfig.steps)
    with bad_input_stops_page():
        runs = {name: learning.sentiment_run(model, chosen["seed"], chosen["steps"])
                for name, model in (("pooling only", "pooling"),
                                    ("self-attention + pooling", "self-attention"))}
    pool_run, attn_run = runs.values()
    cols = st.columns(4)
    cols[0].metric("A: held-out accuracy", f"{pool_run.final_accuracy:.3f}")
    cols[1].metric("B: held-out accuracy", f"{attn_run.final_accuracy:.3f}")
    cols[2].metric("B: pooling weight on sentiment and negation words",
                   f"{attn_run.attention_score:.3f}")
    cols[3].metric("Training time A + B (measured)",
                   f"{pool_run.seconds + attn_run.seconds:.2f} s")
    if not page.presenter:
        st.caption(say.sentiment_caption(attn_run))
    learning.curves_chart(page.font, runs, "learn_fig_sent", "Sentiment",
                          short={"pooling only": "A", "self-attention + pooling": "B"})

    st.subheader("Where the pooling looks, before and after training")
    example = st.selectbox("Example sentence", range(len(sa.DISPLAY)),
                           format_func=lambda i: sa.DISPLAY[i], key="learn_sent_example", **URL)
    words = sa.DISPLAY[example].split()
    for col, (name, run) in zip(st.columns(2), runs.items(), strict=True):
        pool = run.snapshots["pool"][:, example, :len(words)]  # (checkpoints, T)
        rows = [f"step {s}" for s in run.checkpoints]
        shown = np.linspace(0, len(rows) - 1, min(len(rows), 6)).round().astype(int)
        at = [rows[i] for i in shown]
        with col:
            show_figure(matrix_heatmap(pool[shown], at, words,
                                       title=f"{name}: pooling weights over training",
                                       x_title="word", y_title="checkpoint", decimals=2,
                                       font_size=page.font - 2),
                        key=f"learn_fig_pool_{name[:4]}",
                        alt=f"{name}: pooling weights over the words at {len(shown)} "
                            "checkpoints. " + describe_matrix(pool[shown], at, words,
                                                              rows="at", cols="word"))
    share = {"B: sentiment + negation words": attn_run.scores,
             "B: filler words": attn_run.curves["filler_share"],
             "A: sentiment + negation words": pool_run.scores,
             "A: filler words": pool_run.curves["filler_share"]}
    show_figure(line_chart(attn_run.checkpoints, share, title="Share of pooling weight, "
                           "held-out sentences", x_title="step", y_title="share of weight",
                           font_size=page.font), key="learn_fig_share",
                alt=describe_lines(attn_run.checkpoints, share, x_title="step",
                                   y_title="Share of pooling weight on held-out sentences"))
    st.caption("A and B start from the same numbers, and B's layer is off for its first "
               f"{SentimentConfig.pool_first} steps, so where a line of B is missing it lies "
               "under A's.")
    st.subheader("Negation: what pooling alone cannot do")
    st.markdown(say.negation_text(runs))
    negation_heads(attn_run, page.font)
    return runs


@st.fragment
def negation_heads(attn_run, font: int) -> None:
    """B's self-attention on a negated sentence at one checkpoint. It reruns alone when
    its checkpoint moves (st.fragment): nothing else on the page depends on it."""
    words = sa.DISPLAY[say.NEGATED].split()
    k = learning.checkpoint_slider(attn_run, "learn_sent_checkpoint")
    attn = attn_run.snapshots["attn"][k, say.NEGATED, :, :len(words), :len(words)]  # (heads, T, T)
    step = attn_run.checkpoints[k]
    for h, col in enumerate(st.columns(len(attn))):
        with col:
            title = f"B's self-attention, head {h + 1}, step {step}"
            show_figure(matrix_heatmap(attn[h], words, words, decimals=2, title=title,
                                       font_size=font - 2),
                        key=f"learn_fig_selfattn_{h}",
                        alt=f"{title}. " + describe_matrix(attn[h], words, words))
    st.caption(say.strongest_keys_text(attn, words))


def your_sentence(page: Page, runs: dict) -> None:
    """What both models say of a sentence the student types, and where they pool."""
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
        return
    if len(known) == sa.MAX_LEN:
        st.info(f"Only the first {sa.MAX_LEN} known words are used (the models' longest input).")
    for col, (name, run) in zip(st.columns(2), runs.items(), strict=True):
        out = sa.predict(run.params, ids[None, :])
        p = float(out["positive"][0])
        with col:
            st.markdown(f"**{name}**: P(positive) = {say.p_text(p)} → {say.verdict(p)}")
            show_figure(bar_chart(known, out["pool"][0], title="pooling weights",
                                  x_title="word", y_title="weight", y_range=(0, 1.1),
                                  decimals=2, font_size=page.font - 2),
                        key=f"learn_fig_yours_{name[:4]}",
                        alt=describe_bars(known, out["pool"][0],
                                          what=f"{name}: pooling weights over your words"))


# ---- 2 · alignment ----------------------------------------------------------------------

def alignment_extra(col) -> dict:
    kind = col.radio("Score", al.KINDS, key="learn_alignment_kind", horizontal=True,
                     format_func=lambda k: {"additive": "Bahdanau (additive)",
                                            "general": "Luong (general)"}[k], **URL)
    return {"kind": kind}


@st.fragment
def alignment_checkpoints(align_run, snap: np.ndarray, tgt_labels: list[str],
                          src_labels: list[str], font: int) -> None:
    """The untrained alignment beside the one at a checkpoint; reruns alone when the
    checkpoint moves (st.fragment), and only the second map changes."""
    k = learning.checkpoint_slider(align_run, "learn_align_checkpoint")
    panels = (("untrained", 0, "untrained (step 0)"),
              ("checkpoint", k, f"step {align_run.checkpoints[k]}"))
    for col, (name, index, label) in zip(st.columns(2), panels, strict=True):
        with col:
            show_figure(matrix_heatmap(snap[index], tgt_labels, src_labels, decimals=2,
                                       title=f"Alignment, {label}", x_title="English (key)",
                                       y_title="French (query)", font_size=font - 2),
                        key=f"learn_fig_align_{name}",
                        alt=f"Alignment, {label}: French rows, English columns. "
                            + describe_matrix(snap[index], tgt_labels, src_labels,
                                              rows="French", cols="English"))


def alignment_section(page: Page):
    """The encoder-decoder, once trained: its metrics, its alignment at a checkpoint and
    its curves. Returns the run and the trained alignment (matrix, rows, columns) of the
    sentence shown, or (None, None) before Train."""
    st.header("2 · Alignment that emerges from the translation loss")
    st.markdown(say.alignment_intro())
    chosen, pressed = learning.settings_form(page.presenter, "alignment",
                                             AlignmentConfig.steps, alignment_extra)
    key = ("alignment", chosen["kind"], chosen["seed"], chosen["steps"])
    if key not in learning.trained_settings() and not pressed:
        st.info("Press **Train** above to train the encoder-decoder (about 1–5 s).")
        return None, None
    run = learning.alignment_run(chosen["kind"], chosen["seed"], chosen["steps"])
    learning.trained_settings().add(key)
    cols = st.columns(4)
    cols[0].metric("Held-out token accuracy", f"{run.final_accuracy:.3f}")
    cols[1].metric("Alignment score", f"{run.attention_score:.3f}")
    cols[2].metric("…on moved words only", f"{run.curves['moved_score'][-1]:.3f}")
    cols[3].metric("Training time (measured)", f"{run.seconds:.2f} s")
    st.caption(f"{chosen['kind']} score, seed {chosen['seed']}, {chosen['steps']} steps. "
               "Alignment score: the fraction of held-out French words whose largest attention "
               "weight is on their English word.")
    example = st.selectbox("Sentence", range(len(al.DISPLAY)),
                           format_func=lambda i: al.DISPLAY[i], key="learn_align_example", **URL)
    english = al.DISPLAY[example].split()
    french, _ = al.translate_words(english)
    src_labels, tgt_labels = [*english, al.EOS], [*french, al.EOS]
    snap = run.snapshots["alignment"][:, example, :len(tgt_labels), :len(src_labels)]
    alignment_checkpoints(run, snap, tgt_labels, src_labels, page.font)
    learning.curves_chart(page.font, {chosen["kind"]: run}, "learn_fig_align", "Translation")
    return run, (snap[-1], tgt_labels, src_labels)


# ---- 3 · induction ----------------------------------------------------------------------

@st.fragment
def induction_heads(ind_run, font: int, presenter: bool) -> None:
    """The four heads on one held-out sequence at a checkpoint, as one figure of four
    panels: moving the checkpoint reruns this alone (st.fragment) and redraws one figure."""
    k = learning.checkpoint_slider(ind_run, "learn_ind_checkpoint")
    ids, period = ind_run.examples["ids"], ind_run.examples["period"]
    labels = [str(t) for t in ids]
    a1, a2 = ind_run.snapshots["L1"][k], ind_run.snapshots["L2"][k]  # (H, T, T) each
    H = a1.shape[0]
    names = [f"layer {layer}, head {h + 1}" for layer in (1, 2) for h in range(H)]
    # the text says each head's score on this sequence, as the curves above measure it
    # on the held-out set: the strongest weight of every causal map is row 1's 1 on itself
    s = head_scores(a1[None], a2[None], ids[None], np.array([period]))
    said = [f"layer 1, head {h + 1}: {said_number(s['prev'][h])} on the previous token"
            for h in range(H)]
    said += [f"layer 2, head {h + 1}: {said_number(s['induction'][h])} on the tokens that "
             "followed earlier copies of the current one" for h in range(H)]
    step = ind_run.checkpoints[k]
    show_figure(heatmap_grid([*a1, *a2], labels, labels, names, columns=2 if presenter else 4,
                             font_size=font - (2 if presenter else 4),  # 18 px on a projector
                             title=f"Step {step}"),
                key="learn_fig_ind_heads_at",
                alt=f"The {2 * H} heads at step {step} on one held-out sequence of {len(ids)} "
                    f"token ids (period {period}), mean weights: " + "; ".join(said) + ".")
    st.caption(f"One held-out sequence (period {period}), step {step}. A previous-token head "
               "is a line just below the diagonal; an induction head is a line one place to "
               "the right of the earlier copy of each token, i.e. period − 1 below the "
               "diagonal.")


def induction_section(page: Page):
    """The 2-layer transformer, once trained: its scores, curves and heads (None before)."""
    cfg = InductionConfig
    st.header("3 · Induction heads: a two-step algorithm forms")
    st.markdown(
        "Sequences are a random segment of distinct tokens repeated (*7 3 9 1 7 3 9 1 7 …*); "
        "from the second copy on, the next token can be found by looking at what followed the "
        "current token last time. A 2-layer, attention-only causal transformer "
        f"({cfg.heads} heads per layer, d = {cfg.d_model}, vocabulary {cfg.vocab}, length "
        f"{cfg.length}, periods {cfg.min_period}–{cfg.max_period}) can learn it with a "
        "**previous-token head** in layer 1 (each token looks at the one before it) and an "
        "**induction head** in layer 2 (it finds where the current token occurred before and "
        "looks at the token that followed it). This one trains only when you press Train.")
    chosen, pressed = learning.settings_form(page.presenter, "induction", cfg.steps)
    key = ("induction", chosen["seed"], chosen["steps"])
    if key not in learning.trained_settings() and not pressed:
        steps = chosen["steps"]
        st.info("Press **Train** above to train the induction model at these settings "
                f"({say.training_estimate(steps, *learning.induction_seconds(steps))}).")
        return None
    with bad_input_stops_page():
        run = learning.induction_run(chosen["seed"], chosen["steps"])
    learning.trained_settings().add(key)
    cols = st.columns(4)
    cols[0].metric("Held-out accuracy", f"{run.final_accuracy:.3f}",
                   help="Next-token predictions from the second copy of the segment on.")
    cols[1].metric("Layer-2 induction score", f"{run.attention_score:.3f}",
                   help="The best layer-2 head's weight on the tokens that followed earlier "
                        "copies of the current token.")
    prev = max(v[-1] for n, v in run.curves.items() if "previous" in n)
    cols[2].metric("Layer-1 previous-token score", f"{prev:.3f}",
                   help="The best layer-1 head's weight on the token just before.")
    cols[3].metric("Training time (measured)", f"{run.seconds:.1f} s")
    learning.curves_chart(page.font, {"2-layer attention-only": run}, "learn_fig_ind",
                          "Induction")
    show_figure(line_chart(run.checkpoints, run.curves, title="Each head's score over training",
                           x_title="step", y_title="score (weight on the pattern's key)",
                           font_size=page.font), key="learn_fig_ind_heads",
                alt=describe_lines(run.checkpoints, run.curves, x_title="step",
                                   y_title="Each head's score (weight on its pattern's key)"))
    st.markdown(say.loss_shape(run))
    induction_heads(run, page.font, page.presenter)
    return run


# ---- 4 · too uniform and too sharp ---------------------------------------------------------

def collapse_section(page: Page):
    """Model A under five settings, once trained: returns (runs or None, seed)."""
    st.header("4 · When attention goes wrong: too uniform and too sharp")
    st.markdown(say.collapse_intro())
    with st.form("learn_collapse_form"):
        seed = int(seed_input(st, "learn_collapse_seed"))
        pressed = st.form_submit_button("Train the five settings (about 2–10 s)",
                                        key="learn_collapse_train")
    if not pressed and ("collapse", seed) not in learning.trained_settings():
        st.info("Press the button to train the five settings.")
        return None, seed
    bad = learning.collapse_runs(seed)
    learning.trained_settings().add(("collapse", seed))
    steps = next(iter(bad.values())).checkpoints
    curves = {"learn_fig_entropy": ("Normalised entropy of the pooling weights",
                                    "entropy (0 one-hot, 1 uniform)",
                                    {n: r.curves["pool_entropy"] for n, r in bad.items()}),
              "learn_fig_collapse_acc": ("Held-out accuracy", "accuracy",
                                         {n: r.accuracy for n, r in bad.items()})}
    for col, (key, (title, y_title, lines)) in zip(st.columns(2), curves.items(), strict=True):
        with col:
            show_figure(line_chart(steps, lines, title=title, x_title="step", y_title=y_title,
                                   font_size=page.font, height=420), key=key,
                        alt=describe_lines(steps, lines, x_title="step", y_title=title))
    st.table(pd.DataFrame(say.collapse_rows(bad)).set_index("setting"))
    st.markdown(say.sparsity_text(bad))
    if not page.presenter:
        st.caption(say.collapse_caption(seed))
    return bad, seed


def closing_notes(page: Page, runs: dict, align_run, ind_run, bad, seed: int) -> None:
    """What to notice and the formulas; off the projector, things to try and questions."""
    bullet_list("What to notice", [
        say.pooling_notice(runs["pooling only"]),
        say.negation_notice(runs),
        say.alignment_notice(align_run) if align_run is not None else
        "Section 2: train the encoder-decoder to see whether its alignment finds the "
        "crossings from the translation loss alone (no one labels which word goes with which).",
        say.loss_shape(ind_run) if ind_run is not None else
        "Section 3: train the induction model to see how its loss falls as the heads form.",
        say.collapse_notice(bad, seed) if bad is not None else
        "Section 4: train the five settings to see which of them attention recovers from.",
    ])
    st.subheader("The formulas")
    st.latex(r"\text{pooling: } a = \mathrm{softmax}\!\left(\frac{(X W_k)\, q}{\sqrt{d}\,\tau}"
             r"\right),\quad y = \sum_t a_t h_t \qquad \text{Adam: } \theta \leftarrow \theta "
             r"- \eta\,\frac{\hat m}{\sqrt{\hat v} + \epsilon}")
    st.caption(say.FORMULA_NOTE)
    # ℒ, the loss: L is the number of layers (the glossary's one meaning)
    st.latex(r"\frac{\partial \mathcal{L}}{\partial s_j} = a_j\Big(\frac{\partial \mathcal{L}}"
             r"{\partial a_j} - \sum_i a_i \frac{\partial \mathcal{L}}{\partial a_i}\Big)")
    st.caption("The softmax's backward pass for a loss ℒ (s_j the scores), used by every "
               "attention layer here.")
    if page.presenter:
        return
    bullet_list("Try this", [
        "Train with 20 steps: how far have the pooling weights moved from their random start?",
        say.not_bad_notice(runs),
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


def download_results(page: Page, runs: dict, align_run, alignment, ind_run) -> dict:
    """What the downloads offer (none on a projector): each run's checkpoints, the trained
    alignment shown and the sentiment models' losses."""
    pool_run, attn_run = runs.values()
    matrices = {"Sentiment B: checkpoints": learning.curves_table(attn_run),
                "Sentiment A: checkpoints": learning.curves_table(pool_run)}
    if align_run is not None:
        matrices["Alignment: checkpoints"] = learning.curves_table(align_run)
        matrices["Alignment (trained)"] = alignment
    if ind_run is not None:
        matrices["Induction: checkpoints"] = learning.curves_table(ind_run)
    results = {"matrices": matrices, "sentiment_loss_A": pool_run.loss,
               "sentiment_loss_B": attn_run.loss, "sentiment_checkpoints": attn_run.checkpoints,
               "sentiment_snapshots": attn_run.snapshots}
    offer_downloads(results, None if page.presenter else list(matrices))
    return results


def model_b_downloads(attn_run) -> None:
    """Model B's trained weights and training loss, beside the matrices and the trace."""
    st.download_button("Trained weights of model B (.npz)",
                       lambda: learning.npz_bytes(attn_run.params),
                       file_name="sentiment_model_B.npz", key="learn_dl_npz", on_click="ignore")
    st.download_button("Training loss of model B (CSV)",
                       lambda: to_csv(attn_run.loss[:, None],
                                      [str(s) for s in range(1, len(attn_run.loss) + 1)],
                                      ["loss"]),
                       file_name="sentiment_model_B_loss.csv", key="learn_dl_loss",
                       on_click="ignore")


with lesson_page("learn") as page:
    if not page.presenter:
        limits_caption()
    runs = sentiment_section(page)
    your_sentence(page, runs)
    align_run, alignment = alignment_section(page)
    ind_run = induction_section(page)
    bad, collapse_seed = collapse_section(page)
    closing_notes(page, runs, align_run, ind_run, bad, collapse_seed)
    results = download_results(page, runs, align_run, alignment, ind_run)
    page.downloads(results, lambda r: r["matrices"],
                   lambda r: {k: v for k, v in r.items() if k != "matrices"})
    if not page.presenter:
        model_b_downloads(runs["self-attention + pooling"])
