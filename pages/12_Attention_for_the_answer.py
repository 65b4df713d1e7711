"""Lesson 12: what attention does for the answer — the logit lens, direct logit
attribution, activation patching and attention knockout on SmolLM2 (or a model the server's
operator lists)."""

import numpy as np
import pandas as pd
import streamlit as st

from attncore import lm
from attncore.lm import answer, pair, patching
from attncore.lm.kept import lm_code_version
from attncore.results_cache import is_kept, kept
from pages.ui.controls import URL, bounded_slider
from pages.ui.figures import (
    bar_chart,
    describe_bars,
    describe_lines,
    describe_matrix,
    line_chart,
    matrix_heatmap,
    said_number,
    scatter_chart,
    spoken_token,
)
from pages.ui.glossary import term_link
from pages.ui.labels import md_escape
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
from pages.ui.lm import load_language_model, model_name, model_note, token_code
from pages.ui.numbers import difference_text, number_text, significant_text
from pages.ui.shared import measured
from pages.ui.tables import downloads, scrolled_table

OWN = "Your own pair"
HALF = 0.5  # "carries the answer": a patch that restores at least half of it
SMALL = 0.05  # "does not matter": a patch that moves less than 5% of the way
LOOKS = 0.5  # "looks at": at least half the last token's attention
LARGEST = 12  # components shown in the attribution chart

presenter = setup_page("What attention does for the answer", "🎯")
font = figure_font(presenter)
lesson_header(
    "12 · What attention does for the answer",
    "change one word of a prompt and find, causally, which layers and which heads carry "
    "the answer: the logit lens, the answer split exactly into every head's part, "
    f"{term_link('activation-patching', 'activation patching')} and attention knockout, on "
    "the real model of lesson 10.",
)
m = load_language_model()
if m is None:
    st.stop()
cfg = m.config
L, H = cfg.n_layers, cfg.n_heads
name = md_escape(model_name(m))
FINAL_NORM = "RMSNorm" if cfg.norm == "rms" else "LayerNorm"
# The knockout window opens at the prototype's 9 of SmolLM2's 30 layers, and at the same
# share of another model's.
WINDOW = max(1, round(L * answer.KNOCKOUT_WINDOW / 30))
model_note(m, presenter)

if not presenter:
    st.markdown(
        "Lessons 9 and 10 show where every head *looks*. Does that explain what the model "
        "*answers*? The test here is causal. Run a **clean** prompt (\"The capital of France "
        "is\") and a **corrupted** one that differs in one word (\"... Italy is\"). Measure "
        "how much the model prefers the clean answer by the "
        f"{term_link('logit-difference', 'logit difference')} "
        "LD = logit(answer) − logit(wrong answer) at the last position. Then run the "
        "corrupted prompt again with one piece of the clean run put back, and see how much "
        "of the clean LD returns.")

# ---- the pair --------------------------------------------------------------------------
box = st.expander("The prompts") if presenter else st.container()
with box:
    choice = st.selectbox("Pair of prompts", [*answer.PRESETS, OWN], key="ans_preset",
                          help="Presets are computed once on this machine and kept; your "
                               "own pair runs on request.", **URL)
    texts = answer.PRESETS.get(choice, answer.PRESETS["A capital city"])
    if choice == OWN:
        c1, c2 = st.columns(2)
        clean_text = c1.text_input("Clean prompt", texts[0], key="ans_clean", max_chars=200,
                                   **URL)
        corrupt_text = c2.text_input("Corrupted prompt (as many tokens, a word changed)",
                                     texts[1], key="ans_corrupt", **URL, max_chars=200)
        c3, c4 = st.columns(2)
        answer_text = c3.text_input("Answer (one token; a leading space if it follows a "
                                    "word)", texts[2], key="ans_answer", **URL, max_chars=40)
        wrong_text = c4.text_input("Wrong answer (the corrupted prompt's answer)", texts[3],
                                   key="ans_wrong", max_chars=40, **URL)
        texts = (clean_text, corrupt_text, answer_text, wrong_text)

try:
    the_pair = pair.make_pair(m, *texts)
except ValueError as exc:  # the core's refusal, said kindly; the controls above stay
    show_error(exc)
    if choice != OWN:
        st.info(f"The presets are written for SmolLM2's tokenizer, and {name} splits this "
                "one otherwise. Choose “Your own pair” and type a pair whose two prompts "
                "have as many tokens, and whose answers are one token each, for this model.")
    finish_page()
    st.stop()
T = the_pair.n_tokens
changed = [int(p) for p in the_pair.changed]
tokens = [f"{n + 1}:{t}" for n, t in enumerate(the_pair.clean_tokens)]  # unique labels
ans, wrong = the_pair.answer_token, the_pair.wrong_token
changed_names = ", ".join(f"'{the_pair.clean_tokens[p]}'" for p in changed)


def strip(pieces: list[str]) -> str:
    return " · ".join(f"**{token_code(t)}**" if n in changed else token_code(t)
                      for n, t in enumerate(pieces))


if not presenter:
    st.markdown(f"Clean ({T} tokens): {strip(the_pair.clean_tokens)}  \n"
                f"Corrupted: {strip(the_pair.corrupt_tokens)}  \n"
                f"Answer {token_code(ans)} against {token_code(wrong)}; the changed "
                f"position{'s are' if len(changed) > 1 else ' is'} in bold.")
if not texts[2].startswith(" ") and not texts[0].endswith(" "):
    st.caption(f"The answer {token_code(ans)} has no leading space: the model would write it "
               "glued to the last word. Most words after a word are tokens that start with a "
               "space.")


def compute(progress_text: str) -> answer.AnswerStudy:
    bar = st.progress(0.0, text=progress_text)
    result = answer.study(m, the_pair, lambda done, what: bar.progress(
        min(done, 1.0), text=f"{progress_text}: {what}"))
    bar.empty()
    return result


STUDY = ("lesson12-study", lm_code_version())
settings = {"texts": list(texts), "model": m.sha256}


def study_of_preset() -> answer.AnswerStudy:
    """A preset's study, computed once per machine and version of the code, kept beside
    the model's cache (every server process and restart reads it)."""
    return kept(STUDY[0], settings, STUDY[1],
                lambda: compute("Once on this machine: computing the preset"))


is_preset = choice != OWN
# The first preset is computed at once (the page's story); the others at once when this
# machine has kept them, else on a click, as a student's own pair is.
automatic = is_preset and (choice == next(iter(answer.PRESETS))
                           or is_kept(STUDY[0], settings, STUDY[1]))
study = measured(
    "answer", (m.sha256, *texts),
    study_of_preset if is_preset else (lambda: compute("Patching your pair")),
    automatic=automatic, label="Patch this pair", key="ans_run",
    note=f"Patching runs the model about {L * (H + T)} times on {T} tokens: a few seconds "
         "here, longer for longer prompts; a bar shows how far it is. Press the button"
         + (" once: this preset is then kept for every student of this machine." if is_preset
            else "."),
)
if study is None:
    finish_page()
    st.stop()
ld_clean, ld_corrupt = study.ld_clean, study.ld_corrupt
if not presenter:
    st.caption(f"Both runs, the lens and both patching grids took {study.seconds:.1f} s when "
               "this server first computed them (one batch of patched runs a layer, each "
               "starting at the layer it changes).")

if presenter:  # the token strips are not shown: say what LD compares
    st.markdown(f"LD = logit({token_code(ans)}) − logit({token_code(wrong)}) at the last position.")
c1, c2, c3 = st.columns(3)
c1.metric("LD, clean prompt", number_text(ld_clean, 2))
c2.metric("LD, corrupted prompt", number_text(ld_corrupt, 2))
c3.metric(f"p({token_code(ans)}): clean → corrupted",
          f"{number_text(study.p_clean, 3)} → {significant_text(study.p_corrupt, 2)}")
gap = ld_clean - ld_corrupt
if gap <= 0:
    st.warning(f"The corrupted prompt prefers {token_code(ans)} at least as much as the clean "
               f"one (LD {number_text(ld_corrupt, 2)} against {number_text(ld_clean, 2)}): "
               "recovery below reads backwards. Swap the prompts or the answers.")
elif gap < 1:
    st.warning(f"The two prompts' LDs differ by only {number_text(gap, 2)}: recovery divides "
               "by that difference, so small changes look large. Read it with care.")

# ---- 1. the logit lens --------------------------------------------------------------------
st.header("1 · The logit lens: each layer's guess")
layers_axis = np.arange(L + 1)
rank, p_answer = study.lens.rank, study.lens.p_answer
first_top = int(np.argmax(rank == 1)) if (rank == 1).any() else None
stays_top = first_top is not None and bool((rank[first_top:] == 1).all())
late = L - 3 if L > 4 else None  # a layer a few before the last, in a model deep enough
if not presenter:
    st.markdown(
        f"The {term_link('logit-lens', 'logit lens')} puts the "
        f"{term_link('residual-stream', 'stream')} at the last position through the final "
        f"{FINAL_NORM} and the output matrix after every layer, as if the model stopped there. "
        f"Row 0 is the token's embedding; after layer {L} this is the model's own answer.")
show_figure(line_chart(layers_axis, {f"rank of {ans}": rank}, title=f"Rank of {ans} "
                       "after each layer (1 = the top guess)", x_title="after layer",
                       y_title="rank", log_y=True, font_size=font),
            key="ans_fig_lens",
            alt=describe_lines(layers_axis, {f"rank of {spoken_token(ans)}": rank},
                               x_title="after layer", y_title="rank"))
if first_top is None:
    top_text = f"never ranks 1st, not even after the last layer, {L}"
elif first_top == L:
    top_text = f"ranks 1st only after the last layer, {L}"
else:
    top_text = (f"first ranks 1st after layer {first_top}"
                + (" and stays there" if stays_top else ", but not at every later layer"))
st.markdown(
    f"{token_code(ans)} ranks {rank[0]:,} after the embedding, "
    + (f"{rank[late]:,} after layer {late}, " if late is not None else "")
    + f"and {top_text}. " + (
        "In a small model the plain lens is a rough instrument: the earlier layers "
        "were never trained to be read through the last layer's norm and output matrix "
        "(the tuned lens, Belrose et al. 2023, trains a map per layer for this reason). "
        "Patching, below, asks the causal question instead." if not presenter else ""))
if not presenter:
    tops = lm.pieces(m, study.lens.top)
    scrolled_table(pd.DataFrame({
        "after layer": layers_axis, "top token": tops, "p(top)": study.lens.p_top,
        f"rank of {ans}": rank, f"p({ans})": p_answer}), height=260)

# ---- 2. direct logit attribution ------------------------------------------------------------
st.header("2 · The answer, split exactly")
dla = study.attribution
has_biases = cfg.biases  # GPT-2: the attention layers' b_O and the final norm's bias
names = (["embedding"] + [f"L{layer + 1} H{head + 1}" for layer in range(L) for head in range(H)]
         + [f"FFN {layer + 1}" for layer in range(L)] + (["biases"] if has_biases else []))
parts = np.concatenate([[dla.embed], dla.heads.ravel(), dla.ffn]
                       + ([[dla.biases]] if has_biases else []))
order = np.argsort(-np.abs(parts), kind="stable")[:LARGEST]
if not presenter:
    embedding = ("the token's embedding plus its position's (learned positions)"
                 if cfg.positions == "learned" else "the token's embedding")
    biases_said = (", and the attention layers' output biases, which no one head writes"
                   if has_biases else "")
    frozen = ("Freeze the final RMSNorm's scale at the clean run's value, and everything "
              "after the sum is linear" if cfg.norm == "rms" else
              "Freeze the final LayerNorm's scale σ at the clean run's value (its centring, "
              "subtracting the mean, is linear already), and everything after the sum is "
              "linear; the norm's own bias adds a part of its own, counted with the biases")
    st.markdown(
        f"The clean stream at the last position after layer {L} is a sum: {embedding}, "
        f"what each of the {L * H} heads wrote (its output times its slice of "
        f"W_O) and what each of the {L} FFNs wrote{biases_said}. {frozen}, so LD splits "
        "exactly into one part per component "
        f"({term_link('direct-attribution', 'direct logit attribution')}):")
    u = r"\big(W_U[\text{answer}] - W_U[\text{wrong}]\big)"
    st.latex(rf"LD = \sum_c \frac{{c}}{{\mathrm{{rms}}}} \odot g \cdot {u}" if cfg.norm == "rms"
             else rf"LD = \sum_c \frac{{c - \bar c}}{{\sigma}} \odot g \cdot {u} + b \cdot {u}")
show_figure(bar_chart([names[k] for k in order], parts[order],
                      title=f"The {LARGEST} largest parts of LD = {number_text(ld_clean, 2)}",
                      x_title="component", y_title="part of LD", decimals=2, font_size=font),
            key="ans_fig_dla",
            alt=describe_bars([names[k] for k in order], parts[order],
                              what=f"The {LARGEST} largest direct parts of the logit "
                                   "difference"))
heads_sum, ffn_sum = float(dla.heads.sum()), float(dla.ffn.sum())
st.markdown(
    f"Embedding {number_text(dla.embed, 3)} + {L * H} heads {number_text(heads_sum, 3)} + "
    f"{L} FFNs {number_text(ffn_sum, 3)}"
    + (f" + biases {number_text(dla.biases, 3)}" if has_biases else "")
    + f" = **{number_text(dla.total, 4)}**; the clean LD is "
    f"**{number_text(dla.ld, 4)}**: they differ by {difference_text(dla.total - dla.ld)} "
    "(the model adds its parts in float32; they are summed here in float64).")
top_part = int(order[0])
if not presenter:
    st.caption("Direct means what a component writes straight into the answer. A head whose "
               "output only changes what later layers compute gets nothing here; patching "
               f"sees it. The largest part here is {names[top_part]}'s, "
               f"{number_text(parts[top_part], 2)}.")

# ---- 3. activation patching -----------------------------------------------------------------
st.header("3 · Activation patching: where the answer travels")
if not presenter:
    st.markdown(
        "Run the corrupted prompt, but put back one activation from the clean run, and "
        "measure how much of the clean LD returns:")
    st.latex(r"\text{recovery} = \frac{LD_\text{patched} - LD_\text{corrupted}}"
             r"{LD_\text{clean} - LD_\text{corrupted}}")
    st.markdown("0: the patch changes nothing; 1: the patched run prefers the answer as "
                "much as the clean one (more than 1, or below 0, happen too).")

residual = study.residual
layer_names = [str(n + 1) for n in range(L)]  # the grids' columns: layers, left to right


def carrier(layer: int) -> str:
    """Which position carries the answer into ``layer``: "changed", "last", a token, or
    "" when no single position restores half of it."""
    best = int(np.argmax(residual[layer]))
    if residual[layer, best] < HALF:
        return ""
    if best in changed:
        return "changed"
    return "last" if best == T - 1 else tokens[best]


runs = []  # (first layer, last layer, carrier), from 0
for layer in range(L):
    who = carrier(layer)
    if runs and runs[-1][2] == who:
        runs[-1] = (runs[-1][0], layer, who)
    else:
        runs.append((layer, layer, who))


def where(who: str) -> str:
    return {"changed": f"the changed token{'s' if len(changed) > 1 else ''} "
                       f"({changed_names})",
            "last": f"the last token ('{the_pair.clean_tokens[-1]}')",
            "": "no single position (none restores half)"}.get(who, f"'{who}'")


def runs_of(numbers: list[int]) -> list[tuple[int, int]]:
    """Consecutive runs of sorted whole numbers: [12, 16, 17, 18] -> [(12, 12), (16, 18)]."""
    found: list[tuple[int, int]] = []
    for n in numbers:
        if found and n == found[-1][1] + 1:
            found[-1] = (found[-1][0], n)
        else:
            found.append((n, n))
    return found


def span(first: int, last: int) -> str:
    return f"layer {first + 1}" if first == last else f"layers {first + 1}–{last + 1}"


story = "; ".join(f"entering {span(a, b)}: {where(who)}" for a, b, who in runs)
left, right = st.container(), st.container()  # the grid is wide: the list goes below
with left:
    show_figure(matrix_heatmap(residual.T, tokens, layer_names, kind="values", decimals=2,
                               title="Recovery: the clean stream at one position, entering "
                                     "one layer", x_title="stream entering layer",
                               y_title="position patched", font_size=font),
                key="ans_fig_residual",
                alt="Residual-stream patching. Which position carries the answer, "
                    f"{story}. " + describe_matrix(residual.T, tokens, layer_names,
                                                   kind="values", rows="position",
                                                   cols="stream entering layer"))
with right:
    st.markdown(f"**Where the answer's information sits** (the position whose patch "
                f"restores at least {HALF:g} of it):")
    st.markdown("\n".join(f"- entering {span(a, b)}: {where(who)}" for a, b, who in runs))
    moved = [(a, b) for (a, _, x), (b, _, y) in zip(runs, runs[1:], strict=False)
             if x == "changed" and y == "last"]
    if the_pair.changed[0] > 0 and not presenter:
        st.caption("Positions before the first changed token are exactly 0 and were not "
                   "run: a causal model's stream there is the same in both runs (lesson 10's "
                   "check), so putting it back changes nothing.")
    if len(changed) == 1 and not presenter:
        back = residual[0, changed[0]]
        st.caption(f"Putting back the changed token's own embedding (entering layer 1) makes "
                   f"the corrupted run the clean one: recovery {significant_text(back, 9)}, "
                   f"1 up to float32 rounding ({difference_text(back - 1)}: the patched runs "
                   "go in batches, and BLAS rounds a row differently with the batch's size).")
    if moved:
        _, into = moved[0]
        st.markdown(
            f"The information moves from {changed_names} to the last token inside layer "
            f"{into}: only attention moves information between positions, so heads of "
            f"layer {into} must move it. The head grid below looks for them.")

heads = study.heads
head_names = [f"H{h + 1}" for h in range(H)]
top = study.top_heads(5)
show_figure(matrix_heatmap(heads.T, head_names, layer_names, kind="values", decimals=2,
                           title="Recovery: one head's clean output (before W_O) at every "
                                 "position", x_title="layer", y_title="head patched",
                           font_size=font),
            key="ans_fig_heads",
            alt="Head patching. " + describe_matrix(heads.T, head_names, layer_names,
                                                    kind="values", rows="head", cols="layer"))
said = [f"L{layer + 1} H{head + 1} ({number_text(r, 2)})" for layer, head, r in top]
pushing = int(np.count_nonzero(heads < -SMALL))
st.markdown(
    f"Patching **{said[0]}** alone restores the most; then {', '.join(said[1:])}. "
    f"{pushing} head{'s' if pushing != 1 else ''} push the other way (below "
    f"−{SMALL:g}). The {L * H} single-head recoveries add up to "
    f"{number_text(heads.sum(), 2)}: effects through later layers do not simply add.")
if moved and top[0][0] + 1 == moved[0][1]:
    st.success(f"The head that restores most sits in layer {top[0][0] + 1}, the layer where "
               "the residual grid showed the information move.")

# ---- 4. attention knockout --------------------------------------------------------------------
st.header("4 · Attention knockout: cut one edge in a window of layers")


@st.fragment
def knockout_section(study: answer.AnswerStudy, texts: tuple, changed_names: str, ans: str
                     ) -> None:
    """Section 4: the window slider reruns this section only."""
    if not presenter:
        st.markdown(
            f"{term_link('knockout', 'Attention knockout')}: run the clean prompt, but "
            f"forbid the last token to read {changed_names} in a "
            "window of consecutive layers (in every head: that one entry of the mask is "
            f"closed), and watch p({token_code(ans)}).")
    window = bounded_slider(st, "Layers in each window", 1, L, WINDOW, key="ans_window")
    windows, probs, p_none = measured(
        "knockout", (m.sha256, texts, int(window)),
        lambda: patching.knockout(m, study.runs, int(window)), automatic=True,
        label="Knock out", key="ans_knock", note="")
    show_figure(line_chart(np.arange(len(windows)) + 1,
                           {f"p({ans}), edge cut": probs,
                            "nothing cut": np.full(len(windows), p_none)},
                           title=f"p({ans}) with the last token blind to {changed_names} in "
                                 f"{window} layer{'s' if window > 1 else ''}",
                           x_title="first layer of the window", y_title=f"p({ans})",
                           dashed=("nothing cut",), font_size=font),
                key="ans_fig_knockout",
                alt=describe_lines(np.arange(len(windows)) + 1,
                                   {f"p of {spoken_token(ans)}, edge cut": probs},
                                   x_title="first layer of the window",
                                   y_title=f"p of {spoken_token(ans)}"))
    worst = int(np.argmin(probs))
    harmful = [w for w, p in zip(windows, probs, strict=True) if p < p_none / 2]
    text = (f"With nothing cut p({token_code(ans)}) is {number_text(p_none, 3)}. Cutting the "
            f"edge in {span(*windows[worst])} leaves {number_text(probs[worst], 3)}, the lowest. ")
    if harmful:
        shared = set(range(harmful[0][0], harmful[0][1] + 1))
        for a, b in harmful[1:]:
            shared &= set(range(a, b + 1))
        starts = ", ".join(span(a, b).removeprefix("layers ").removeprefix("layer ")
                           for a, b in runs_of([first for first, _ in harmful]))
        text += (f"{len(harmful)} of the {len(windows)} windows at least halve it (those "
                 f"starting at layer{'s' if len(harmful) > 1 else ''} {starts})" + (
                     f"; all of them include {span(min(shared), max(shared))}."
                     if shared and len(harmful) > 1 else "."))
    else:
        text += "No window halves it."
    st.markdown(text)


knockout_section(study, texts, changed_names, ans)

# ---- 5. is attention an explanation? ----------------------------------------------------------
st.header("5 · Is attention an explanation?")
looks = study.looks
first_token = study.runs.clean["weights"][:, :, -1, 0].astype(np.float64)  # (L, H)
head_labels = [f"L{layer + 1} H{head + 1}" for layer in range(L) for head in range(H)]
is_top = np.zeros((L, H), dtype=bool)
for layer, head, _ in top:
    is_top[layer, head] = True
show_figure(scatter_chart(
    {"other heads": (looks[~is_top], heads[~is_top],
                     [n for n, t in zip(head_labels, is_top.ravel(), strict=True) if not t]),
     "the 5 heads that restore most": (looks[is_top], heads[is_top],
                                       [n for n, t in zip(head_labels, is_top.ravel(),
                                                          strict=True) if t])},
    title=f"Where each head looks against what patching it does ({L * H} heads)",
    x_title=f"attention from the last token to {changed_names}", y_title="recovery",
    font_size=font), key="ans_fig_looks",
    alt=(f"{L * H} heads: attention from the last token to the changed token against head "
         f"patching recovery. The head that restores most, {said[0]}, puts "
         f"{said_number(looks[top[0][0], top[0][1]])} of its attention there."))
lookers = looks >= LOOKS
idle = lookers & (np.abs(heads) < SMALL)
sinks = first_token >= LOOKS
best_l, best_h, best_r = top[0]
r = float(np.corrcoef(looks.ravel(), heads.ravel())[0, 1]) if looks.std() > 0 else 0.0
lines = [
    f"L{best_l + 1} H{best_h + 1}, the head that restores most, puts "
    f"{number_text(looks[best_l, best_h], 2)} of the last token's attention on "
    f"{changed_names}.",
    f"{int(lookers.sum())} heads put at least {LOOKS:g} of it there; of these, "
    f"{int(idle.sum())} change the answer by less than {SMALL:g} when patched: they look "
    "and do not matter here.",
]
if 0 not in changed:
    lines.append(
        f"{int(sinks.sum())} heads put at least {LOOKS:g} on the first token, the attention "
        "sink of lessons 10 and 11" + (
            f"; their recoveries lie between {number_text(heads[sinks].min(), 2)} and "
            f"{number_text(heads[sinks].max(), 2)}." if sinks.any() else "."))
lines.append(f"Across all {L * H} heads the correlation between looking and mattering is "
             f"r = {number_text(r, 2)}.")
st.markdown("\n".join(f"- {line}" for line in lines))
if not presenter:
    st.markdown(
        "Our source texts say attention weights give \"insights into the model's "
        "decision-making process\". This page tests that claim: a weight says where a head "
        "reads, not what it writes, nor whether later layers use it. Lesson 9 made the same "
        "point by switching heads off: a clear pattern does not say how much a head changes "
        "the result. Attention is evidence about the answer; patching is the test.")

moving = int(np.count_nonzero(np.abs(heads) >= SMALL))
bullet_list("What to notice", [
    f"Here {moving} of the {L * H} heads move the answer by at least {SMALL:g} of the way "
    "when patched alone; each of the others moves it by less.",
    "The residual grid shows information *moving* between positions, and only attention "
    "can move it: the layer where it moves points to the heads to look at.",
    "Direct attribution and patching answer different questions: what a head writes into "
    "the answer, and what the answer needs from it.",
])
bullet_list("Try this", [
    "Pick another capital: does the same head carry the answer?",
    "Set the knockout window to 1 layer: which single layer's edge matters most?",
    "Make your own pair: swap one name or place, keep the token counts equal, and compare "
    "its head grid with the capital's.",
])
if not presenter:
    st.subheader("Download")
    head_rows = [f"layer {n + 1}" for n in range(L)]

    def trace_payload() -> dict:
        """The command line's JSON for this pair (python -m attncore.lm patch)."""
        return answer.summary(m, study, texts, WINDOW)

    downloads("ans", {
        "head recovery (layer × head)": (heads, head_rows, head_names),
        "residual recovery (layer × position)": (residual, head_rows, tokens),
        "direct attribution of each head": (dla.heads, head_rows, head_names),
        "attention from the last token to the changed token": (looks, head_rows, head_names),
    }, trace_payload)

practice_questions("ans", [
    {"q": "A clean run gives LD = 6, the corrupted run LD = −2, and a patched run LD = 4. "
          "What is the recovery?",
     "a": "(4 − (−2)) / (6 − (−2)) = 6/8 = 0.75.", "value": 0.75, "tol": 5e-3},
    {"q": f"How many patched runs does the head grid need for this model of {L} layers and "
          f"{H} heads a layer?",
     "a": f"{L} · {H} = {L * H}, one per head; here they run as {L} batches of {H}.",
     "value": float(L * H), "tol": 0.5},
    {"q": "Why is a residual patch before the first changed token always exactly 0?",
     "a": "The model is causal: a position's stream depends only on the tokens up to it, "
          "which are the same in both prompts there. Putting back the same numbers changes "
          "nothing."},
    {"q": "A head's direct part of LD is small, but patching it restores 0.6. How can that "
          "be?",
     "a": "It writes something that later heads or FFNs read and turn into the answer: its "
          "effect is indirect, which direct attribution does not count and patching does."},
])
finish_page()
