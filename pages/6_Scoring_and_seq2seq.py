"""Lesson 6: scoring functions and encoder-decoder attention (Bahdanau, Luong, local, hard)."""

import numpy as np
import pandas as pd
import streamlit as st

from attncore import seq2seq as s2s
from attncore.results_cache import kept
from attncore.scores import SCORE_LABELS, SCORE_NAMES, score_parameter_count
from attncore.softmax import softmax
from attncore.text import SENTENCES
from attncore.train.kept import train_code_version
from pages.ui.controls import URL, bounded_slider, capped_tokens, seed_input
from pages.ui.figures import (
    SERIES_COLOURS,
    bar_chart,
    describe_bars,
    describe_matrix,
    matrix_heatmap,
    spoken_token,
)
from pages.ui.glossary import term_link
from pages.ui.labels import md_escape, plotly_safe
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
from pages.ui.live import keep
from pages.ui.numbers import difference_text, number_text, significant_text
from pages.ui.tables import downloads

MAX_TOKENS = 20
D = 16  # size of the toy encoder and decoder states

presenter = setup_page("Scoring and seq2seq", "🔤")
font = figure_font(presenter)
lesson_header(
    "6 · Scoring functions and encoder-decoder attention",
    "compare the four ways to score a query against keys, then watch a translation model "
    "attend over its source one decoding step at a time: Bahdanau, Luong, local and hard.",
)


c1, c2, c3 = st.columns([2, 2, 1])
source = c1.text_input("Source sentence (encoder)", SENTENCES["translation_source"],
                       key="s2s_source", max_chars=400, **URL)
target = c2.text_input("Target sentence (decoder)", SENTENCES["translation_target"],
                       key="s2s_target", max_chars=400, **URL)
seed = seed_input(c3, "s2s_seed")
src = capped_tokens(source, "source", MAX_TOKENS)
tgt = capped_tokens(target, "target", MAX_TOKENS)
if not src or not tgt:
    st.info("Type both a source and a target sentence (at least one word each).")
    st.stop()
params = s2s.init_seq2seq(D, np.random.default_rng(seed))
with bad_input_stops_page():
    h = s2s.encode(src, params)
    s = s2s.decoder_states(tgt, params)

# Each section is a fragment with its own decoding step: moving a control redraws only
# its own section's figures (st.fragment), never the whole page. What a section computes
# is kept in `results` for the downloads at the end (see pages.ui.live.keep).
results = {"source": src, "target": tgt}
FORMULAS = {"dot": "qᵀk", "scaled_dot": "qᵀk / √d", "general": "qᵀW k",
            "additive": "vᵀ tanh(W_q q + W_k k)"}


@st.fragment
def scores_section(h: np.ndarray, s: np.ndarray, params: s2s.Seq2SeqParams, src: list[str],
                   tgt: list[str], font: int, results: dict) -> None:
    """The four scores of one decoder state against every encoder state, as one figure."""
    st.header("1 · Four ways to score a query against keys")
    t = bounded_slider(st, "Decoding step t (the query is the toy decoder state of target token t)",
                       1, len(tgt), 2, key="s2s_step") - 1
    weights = {name: softmax(s2s.score(name, s[t:t + 1], h, params))[0]
               for name in SCORE_NAMES}
    counts = params.parameter_counts()
    left, right = st.columns([3, 2])
    by_score = np.stack(list(weights.values()))
    score_labels = [SCORE_LABELS[n] for n in weights]
    with left:
        show_figure(matrix_heatmap(by_score, score_labels, src,
                                   title=f"Weights of “{plotly_safe(tgt[t])}” over the source",
                                   decimals=2, x_title="source token (key)",
                                   y_title="score", font_size=font),
                    key="s2s_fig_scores",
                    alt=f"Weights of {spoken_token(tgt[t])} over the source, one row per "
                        "scoring function. " + describe_matrix(by_score, score_labels, src,
                                                              rows="score", cols="source"))
    with right:
        st.markdown("| score | formula | parameters |\n|---|---|---|\n" + "\n".join(
            f"| {SCORE_LABELS[n]} | {FORMULAS[n]} | {counts[n]:,} |" for n in SCORE_NAMES))
    st.markdown(f"Query: this app's toy {term_link('decoder-state', 'decoder state')} of "
                f"“{md_escape(tgt[t])}”, target token {t + 1}, built from that word; keys: "
                f"the {len(src)} encoder "
                f"states. Each row is a {term_link('softmax', 'softmax')} over the source (it "
                "sums to 1). Tokens, steps and positions are counted from 1. "
                f"d = {D} is the width of the states; the additive score's hidden width d_a "
                f"(the length of v) is {params.v.shape[0]}. The general and additive scores "
                "use random (untrained) matrices.")
    keep(results, "step", t + 1)
    keep(results, "weights_by_score", weights)


scores_section(h, s, params, src, tgt, font, results)


# Each score written with the query q (s_{t-1} or s_t) and the encoder state h_s.
SCORE_TEX = {"dot": r"{q}^\top h_s", "general": r"{q}^\top W h_s",
             "additive": r"v^\top \tanh(W_q {q} + W_k h_s)"}


def alignment_text(src: list[str], tgt: list[str], weights: np.ndarray, score: str) -> str:
    """How many target words whose translation is in the source (by the toy lexicon) put
    their largest weight on it, in words that say why: alike states for the dot score,
    chance for a random matrix."""
    matches = s2s.lexicon_matches(src, tgt)  # (T, S)
    has = matches.any(axis=1)
    found = matches[np.arange(len(tgt)), weights.argmax(axis=1)] & has
    m, hits = int(has.sum()), int(found.sum())
    if m == 0:
        return ("No target word here has its translation in the source (by this app's toy "
                "lexicon), so there is no alignment to find.")
    if m == 1:
        counted = ("over the whole sentence, the one target word whose translation is in the "
                   "source "
                   + ("puts" if hits else "does not put") + " its largest weight on it")
    else:
        verb = "puts its" if hits == 1 else "put their"
        counted = (f"over the whole sentence, {hits} of the {m} target words whose "
                   f"translation is in the source {verb} largest weight on it")
    if score == "dot":
        return (f"With the dot score, {counted}: the toy decoder reads each word through a "
                "small lexicon, so a word and its translation get alike states.")
    parts = "matrix W is" if score == "general" else "matrices are"
    return (f"The {score} score's {parts} random (untrained), so its alignment has "
            f"learned nothing: {counted}, by chance.")


@st.fragment
def alignment_section(h: np.ndarray, s: np.ndarray, params: s2s.Seq2SeqParams,
                      src: list[str], tgt: list[str], font: int, results: dict) -> None:
    """Bahdanau or Luong attention at every step, the alignment filled up to step t."""
    T = len(s)
    st.header("2 · Encoder-decoder attention, step by step")
    c1, c2, c3 = st.columns([2, 2, 3])
    model = c1.radio("Model", ["Bahdanau", "Luong"], horizontal=True, key="s2s_model", **URL)
    luong_score = c2.selectbox("Luong's score", list(s2s.LUONG_SCORES), key="s2s_luong_score",
                               disabled=model != "Luong", **URL)
    with c3:
        t = bounded_slider(st, "Decoding step t (fills the alignment row by row)", 1, T, 2,
                           key="s2s_align_step") - 1
    if model == "Bahdanau":
        align = s2s.bahdanau(h, s, params)
        st.markdown("**Bahdanau**: additive score, asked with the *previous* decoder state "
                    "sₜ₋₁: the decoder computes the context before its new state. Step 1 has "
                    "no previous state; this app uses the mean of the encoder states there "
                    r"(Bahdanau et al. start from $s_0 = \tanh(W_s \overleftarrow{h}_1)$, the "
                    "backward encoder's state at the first source word).")
        score_used, query = "additive", r"s_{t-1}"
    else:
        align = s2s.luong(h, s, params, luong_score)
        concat = " (Luong et al.'s “concat”)" if luong_score == "additive" else ""
        st.markdown(f"**Luong**: {luong_score} score{concat}, asked with the *current* decoder "
                    "state sₜ (Luong et al. write hₜ for it and h̄ₛ for the encoder's states).")
        score_used, query = luong_score, "s_t"
    filled = np.where(np.arange(T)[:, None] <= t, align.weights, np.nan)
    left, right = st.columns(2)
    with left:
        show_figure(bar_chart(src, align.weights[t], title=f"α_{t + 1} over the source",
                              x_title="source token", y_title="weight", y_range=(0, 1.1),
                              colour=SERIES_COLOURS[0], decimals=2, font_size=font),
                    key="s2s_fig_alpha",
                    alt=describe_bars(src, align.weights[t],
                                      what=f"Weights α_{t + 1} over the source tokens"))
        show_figure(bar_chart([f"{i + 1}" for i in range(D)], align.contexts[t],
                              title=f"Context vector c_{t + 1} = Σ α h_s", x_title="dimension",
                              y_title="value", colour=SERIES_COLOURS[1], decimals=2,
                              font_size=font), key="s2s_fig_context",
                    alt=describe_bars([f"dimension {i + 1}" for i in range(D)],
                                      align.contexts[t],
                                      what=f"Context vector c_{t + 1}, {D} dimensions"))
    with right:
        show_figure(matrix_heatmap(filled, tgt, src, title=f"Alignment after step {t + 1}",
                                   decimals=2, x_title="source", y_title="target",
                                   font_size=font), key="s2s_fig_alignment",
                    alt=f"Alignment filled up to step {t + 1}, target rows and source columns."
                        " " + describe_matrix(align.weights[:t + 1], tgt[:t + 1], src,
                                              rows="target", cols="source"))
    st.markdown(f"α_{t + 1} sums to {align.weights[t].sum():.6f}, and the "
                f"{term_link('context-vector', 'context vector')} c_{t + 1} is the average of "
                f"the encoder states weighted by it. Move the step slider to fill the alignment "
                "matrix row by row. " + alignment_text(src, tgt, align.weights, score_used))
    if not presenter:
        st.caption("This app's decoder state is not recurrent: sₜ = tanh(W_enc uₜ), with the "
                   "encoder's W_enc (hₛ = tanh(W_enc xₛ)), is built from target word t itself: "
                   "uₜ is the embedding of the word's English translation in a small lexicon "
                   "(of the word itself when it has none) plus 0.3 times an embedding of its own, "
                   "so that an untrained dot score has something to find. A real decoder's "
                   "state at step t has read only the words before t, and it learns its "
                   "alignment from the translation loss, as the trained models below do.")
    st.latex(rf"\alpha_{{ts}} = \frac{{\exp \mathrm{{score}}({query}, h_s)}}{{\sum_{{s'}} "
             rf"\exp \mathrm{{score}}({query}, h_{{s'}})}},\quad \mathrm{{score}}({query}, h_s) "
             rf"= {SCORE_TEX[score_used].format(q=query)},\quad c_t = \sum_s \alpha_{{ts}}\, "
             "h_s")
    for name, value in (("model", model), ("luong_score", luong_score),
                        ("alignment", align.weights), ("scores", align.scores),
                        ("contexts", align.contexts)):
        keep(results, name, value)


alignment_section(h, s, params, src, tgt, font, results)


TRAINED_STEPS = 100  # accuracy 1.0 by step ~40


@st.cache_data(show_spinner="Training both scores on lesson 8's toy translation task (once "
                            "on this machine)…")
def trained_alignments() -> dict:
    """Lesson 8's encoder-decoder trained with each score for 100 steps: the trained
    alignment of its first example sentence, its labels and its held-out figures. Computed
    once per machine and kept on disk (attncore.results_cache), keyed by the training
    code's version: a fresh server reads it."""
    return kept("lesson6-trained-alignments", {"steps": TRAINED_STEPS}, train_code_version(),
                _train_alignments)


def _train_alignments() -> dict:
    from attncore.train import AlignmentConfig, train_alignment  # only this section needs it
    from attncore.train.alignment import DISPLAY, EOS, translate_words
    english = DISPLAY[0].split()
    found = {}
    for kind in ("additive", "general"):
        run = train_alignment(AlignmentConfig(kind=kind, steps=TRAINED_STEPS))
        n = len(english) + 1  # the words and the end mark
        french, order = translate_words(english)  # order[i]: the English word of French i
        found[kind] = {"weights": run.snapshots["alignment"][-1, 0, :n, :n],
                       "french": [*french, EOS], "english": [*english, EOS], "order": order,
                       "accuracy": run.final_accuracy, "score": run.attention_score,
                       "steps": run.steps, "seed": run.seed, "d": run.config.d_model}
    return found


st.subheader("Bahdanau and Luong scores after training")
trained = trained_alignments()
names = {"additive": "Additive score (Bahdanau's)", "general": "General score (Luong's)"}
cols = st.columns(2)
for col, (kind, res) in zip(cols, trained.items(), strict=True):
    with col:
        show_figure(matrix_heatmap(res["weights"], res["french"], res["english"],
                                   title=f"{names[kind]}, trained", decimals=2,
                                   x_title="English", y_title="French", font_size=font - 2),
                    key=f"s2s_fig_trained_{kind}",
                    alt=f"{names[kind]}, trained: French rows, English columns. "
                        + describe_matrix(res["weights"], res["french"], res["english"],
                                          rows="French", cols="English"))
        st.caption(f"On held-out sentences: token accuracy {res['accuracy']:.3f}; alignment "
                   f"score {res['score']:.3f} (the share of target words whose largest weight "
                   "is on their source word).")


def crossing_text(trained: dict) -> str:
    """Whether each trained model puts the largest weight of every moved French word on its
    English word, read from the alignments drawn above."""
    first = next(iter(trained.values()))
    order, french, english = first["order"], first["french"], first["english"]
    moved = [i for i, j in enumerate(order) if i != j]
    if not moved:
        return ""
    pairs = ", ".join(f"*{french[i]}* → *{english[order[i]]}*" for i in moved)
    right = {kind: sum(int(np.argmax(res["weights"][i])) == order[i] for i in moved)
             for kind, res in trained.items()}
    if all(r == len(moved) for r in right.values()):
        return (f"In both, each moved word ({pairs}) puts its largest weight on its English "
                "word: the crossings emerged without any alignment labels.")
    said = "; ".join(f"{names[kind].split(' (')[0].lower()}: {r} of {len(moved)}"
                     for kind, r in right.items())
    return (f"Moved words ({pairs}) whose largest weight is on their English word: {said}.")


first = trained["additive"]
st.markdown(
    "The random matrices above have learned nothing. These two were **trained** (lesson 8's "
    f"model, seed {first['seed']}, each for {first['steps']} AdamW steps) on a toy "
    "English → French task in which each adjective moves after its noun, from the "
    "translation loss alone: encoder state = word + position, decoder state = previous "
    f"French word + position, d = {first['d']}. With no recurrent network, that decoder "
    "state is the same for both, so the two differ only in their score. "
    + crossing_text(trained) + " Lesson 8 trains it live."
)


def total_text(x: float) -> str:
    """A number at most 1 (a sum of weights, a gate, a probability), with 3 decimals
    unless they would round it to 1: 0.9999994 is "1 − 6.3×10⁻⁷", not "1.000"."""
    if x == 1.0:
        return "exactly 1"
    if number_text(x, 3) == "1.000":
        return f"1 − {difference_text(1.0 - x)}"
    return number_text(x, 3)


SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def sub(n: int) -> str:
    """A step as a subscript, as the page writes sₜ: 12 -> ₁₂."""
    return str(n).translate(SUBSCRIPTS)


def gate_text(z: np.ndarray, n: int) -> str:
    """What the update gate did at step n, with its smallest and largest entries."""
    return (f"Entry i of s{sub(n)} moves the fraction zᵢ of the way from s{sub(n - 1)} "
            f"towards s̃{sub(n)}, so it lies between the two; here the entries of z{sub(n)} "
            f"run from {total_text(z.min())} to {total_text(z.max())}.")


def next_word_text(model: str, probs: np.ndarray, vocab: list[str], word: str, n: int) -> str:
    """Which word a model's untrained output layer ranks first, against target word n."""
    top = int(np.argmax(probs))
    said = (f"{model}'s most probable word is “{md_escape(vocab[top])}” (p = "
            f"{total_text(probs[top])})")
    mine = next(k for k, v in enumerate(vocab) if v.lower() == word.lower())
    if top == mine:
        return (f"{said}, which is target word {n}: by chance, since these weights are "
                "random.")
    return (f"{said}, not target word {n}, “{md_escape(word)}” (p = "
            f"{total_text(probs[mine])}): these weights are random, so the ranking means "
            "nothing yet.")


@st.fragment
def next_word_section(h: np.ndarray, s: np.ndarray, params: s2s.Seq2SeqParams, seed: int,
                      src: list[str], tgt: list[str], font: int, results: dict) -> None:
    """One decoding step after attention: Bahdanau's GRU update and output from c_t,
    Luong's attentional state and output, with random (untrained) weights."""
    st.header("3 · What the decoder does with cₜ")
    t = bounded_slider(st, "Decoding step t (the target word to predict)", 1, len(tgt), 2,
                       key="s2s_next_step") - 1
    n, vocab = t + 1, s2s.target_vocabulary(tgt)
    dec = s2s.init_decoder(D, len(vocab), np.random.default_rng([seed, 1]))
    bah, lu = s2s.next_word_steps(h, s, tgt, t, params, dec)
    st.markdown(
        f"Attention gives c{sub(n)}; the decoder must still use it to predict target word "
        f"{n}, “{md_escape(tgt[t])}”. Bahdanau et al. put c{sub(n)} *into* the new state; "
        "Luong et al. combine it with a state computed before. The GRU, Luong's W_c and "
        "both output layers below have random (untrained) weights drawn from the seed: the "
        "figures show where cₜ goes, not what a trained model would predict.")
    previous = (f"{md_escape(s2s.START)}, a start mark (this app's choice)" if t == 0
                else f"“{md_escape(tgt[t - 1])}”, the previous target word")
    words = [f"“{md_escape(w)}”" for w in vocab[:-1]]
    left, right = st.columns(2)
    with left:
        st.subheader("Bahdanau: cₜ goes into the state")
        st.markdown(
            f"The score was asked with s{sub(n - 1)} (section 2), so c{sub(n)} is ready "
            f"before the state is updated: s{sub(n)} = f(s{sub(n - 1)}, y{sub(n - 1)}, "
            f"c{sub(n)}), a GRU whose gates z{sub(n)}, r{sub(n)} and candidate s̃{sub(n)} all "
            f"read c{sub(n)}; y{sub(n - 1)} is {previous}. The output reads s{sub(n)}, "
            f"y{sub(n - 1)} and c{sub(n)}.")
        rows = [f"s{sub(n - 1)}", f"c{sub(n)}", f"z{sub(n)}", f"r{sub(n)}", f"s̃{sub(n)}",
                f"s{sub(n)}"]
        vectors = np.stack([bah.s_prev, bah.context, bah.z, bah.r, bah.candidate, bah.state])
        show_vectors(vectors, rows, f"Bahdanau's step {n}", "s2s_fig_bahdanau_step", font)
        st.markdown(gate_text(bah.z, n))
        show_output(bah.probs, vocab, f"Bahdanau: p(y{sub(n)}) = g(y{sub(n - 1)}, s{sub(n)}, "
                    f"c{sub(n)})", "s2s_fig_bahdanau_output", SERIES_COLOURS[0], font)
        st.markdown(next_word_text("Bahdanau", bah.probs, vocab, tgt[t], n))
        st.latex(r"\begin{aligned}"
                 r"z_t &= \mathrm{sigmoid}(W_z E y_{t-1} + U_z s_{t-1} + C_z c_t)\\"
                 r"r_t &= \mathrm{sigmoid}(W_r E y_{t-1} + U_r s_{t-1} + C_r c_t)\\"
                 r"\tilde s_t &= \tanh\big(W_{\tilde s} E y_{t-1} + U_{\tilde s}(r_t \circ "
                 r"s_{t-1}) + C_{\tilde s} c_t\big)\\"
                 r"s_t &= (1 - z_t) \circ s_{t-1} + z_t \circ \tilde s_t\\"
                 r"p(y_t) &= \mathrm{softmax}\big(W_o\, \mathrm{maxout}(U_o s_t + V_o E y_{t-1}"
                 r" + C_o c_t)\big)"
                 r"\end{aligned}")
    with right:
        st.subheader("Luong: cₜ is combined with the state")
        st.markdown(
            f"The state s{sub(n)} comes first (Luong et al. write h{sub(n)}); the score asks "
            "with it (here the dot score; section 2 offers the others), then "
            f"h̃{sub(n)} = tanh(W_c [c{sub(n)}; s{sub(n)}]) mixes the two and the output "
            f"reads h̃{sub(n)} alone. With input "
            f"feeding, h̃{sub(n)} also goes into the next step's input, so that the next "
            "state knows what was attended.")
        vectors = np.stack([lu.state, lu.context, lu.attentional])
        show_vectors(vectors, [f"s{sub(n)}", f"c{sub(n)}", f"h̃{sub(n)}"],
                     f"Luong's step {n}", "s2s_fig_luong_step", font)
        st.markdown(f"Inside the tanh, W_c's first d columns turn c{sub(n)} into a vector "
                    f"of length {number_text(np.linalg.norm(lu.from_context), 3)}, its last "
                    f"d turn s{sub(n)} into one of length "
                    f"{number_text(np.linalg.norm(lu.from_state), 3)}; h̃{sub(n)} is the tanh "
                    "of their sum.")
        show_output(lu.probs, vocab, f"Luong: p(y{sub(n)}) = softmax(W_o h̃{sub(n)})",
                    "s2s_fig_luong_output", SERIES_COLOURS[2], font)
        st.markdown(next_word_text("Luong", lu.probs, vocab, tgt[t], n))
        st.latex(r"\begin{aligned}\tilde h_t &= \tanh(W_c [c_t; s_t])\\"
                 r"p(y_t) &= \mathrm{softmax}(W_o\, \tilde h_t)\end{aligned}")
    st.markdown(
        f"The vocabulary is the target's {len(words)} distinct "
        f"{'word' if len(words) == 1 else 'words'} ({', '.join(words)}) and the end mark "
        f"{md_escape(s2s.END)}: K = {len(vocab)} (a real model has tens of thousands), so "
        f"a uniform guess would give each word 1/K = {number_text(1 / len(vocab), 3)}. "
        "W_o is each model's output matrix, one row per word of the vocabulary. For the "
        "recurrent version, trained: [lesson 0](./Why_attention) trains a real recurrent "
        "(GRU) encoder-decoder with Bahdanau's additive attention, its decoder state "
        "updated from sₜ₋₁, yₜ₋₁ and cₜ as here.")
    if not presenter:
        bullet_list("What is illustrative here, and how it differs from the papers", [
            "Bahdanau's sₜ is the GRU's new state; the toy sₜ that the other sections ask "
            "with is built from word t itself, so the two differ. A real decoder would ask "
            "step t + 1's score with the GRU's state. Luong's sₜ here is that toy state, "
            "which has read word t itself; a real decoder's state has read only the words "
            "before t.",
            "E yₜ₋₁ is the previous word's embedding (E the embedding matrix, y one-hot): "
            "here the toy embedding the decoder state adds 0.3 times. ∘ multiplies entry by "
            "entry; [cₜ; sₜ] stacks the two vectors.",
            "Bahdanau et al. write the candidate's matrices W, U and C; W is the general "
            "score's matrix on this page, hence W_s̃, U_s̃ and C_s̃. Their z weights the "
            "candidate: Cho et al.'s GRU and PyTorch's write it the other way round, z "
            "keeping the old state.",
            "Their output g is a deep output: maxout keeps the larger entry of each pair of "
            f"U_o sₜ + V_o E yₜ₋₁ + C_o cₜ ({2 * len(bah.maxout)} entries, "
            f"{len(bah.maxout)} pairs), then W_o. Their eq. (4) writes g(yₜ₋₁, sₜ, cₜ), "
            "their appendix U_o sₜ₋₁: this page follows eq. (4).",
            "Luong et al. write the output matrix W_s (W_s is Bahdanau's s₀ matrix above) "
            "and hₜ for the decoder state. Their decoder is a stacked LSTM; Bahdanau et "
            "al.'s encoder states are twice the decoder's width (forward and backward). "
            f"Here every state and context vector has d = {D} entries.",
        ], expanded=False)
    keep(results, "next_word", {
        "step": n, "vocabulary": vocab,
        "bahdanau": {"s_prev": bah.s_prev, "Ey_prev": bah.ey_prev, "context": bah.context,
                     "z": bah.z, "r": bah.r, "candidate": bah.candidate, "state": bah.state,
                     "probs": bah.probs},
        "luong": {"state": lu.state, "context": lu.context, "attentional": lu.attentional,
                  "probs": lu.probs}})


def show_vectors(vectors: np.ndarray, rows: list[str], title: str, key: str,
                 font: int) -> None:
    """A stack of d-wide vectors as a heatmap, one row per vector."""
    dims = [f"{i + 1}" for i in range(vectors.shape[1])]
    show_figure(matrix_heatmap(vectors, rows, dims, title=title, kind="values", decimals=2,
                               x_title="dimension", y_title="vector", font_size=font),
                key=key, alt=f"{title}: " + describe_matrix(vectors, rows, dims, kind="values",
                                                           rows="vector", cols="dimension"))


def show_output(probs: np.ndarray, vocab: list[str], title: str, key: str, colour: str,
                font: int) -> None:
    """The output distribution over the vocabulary, as bars."""
    show_figure(bar_chart(vocab, probs, title=title, x_title="word", y_title="probability",
                          y_range=(0, 1.1), colour=colour, decimals=2, font_size=font),
                key=key, alt=describe_bars(vocab, probs, what=f"{title}, random weights"))


next_word_section(h, s, params, seed, src, tgt, font, results)


def hard_gradient_text(src: list[str], hard_grad: np.ndarray) -> str:
    """What nudging the scores did to the soft and the hard context, as measured."""
    soft = ("Nudge any score e_j by ±10⁻⁶ and measure how the context moves. The soft context "
            "moves with every score whose state differs from c: ‖dc/de_j‖ = α_j ‖h_j − c‖. ")
    moved = np.flatnonzero(hard_grad)
    if moved.size == 0:
        hard = ("The hard one does not move at all: its gradient is 0 almost everywhere (and "
                "undefined where the choice flips). ")
    else:
        where = ", ".join(f"“{md_escape(src[j])}”" for j in moved)
        hard = (f"The hard one moves only where a nudge flips the choice (here at {where}: "
                "two scores within 10⁻⁶ of each other), and there it jumps: its gradient is 0 "
                "almost everywhere and undefined at a flip. ")
    return soft + hard + ("Backpropagation gets no signal, so hard attention is trained with "
                          "sampling estimators such as REINFORCE instead.")



@st.fragment
def local_and_hard_sections(h: np.ndarray, s: np.ndarray, params: s2s.Seq2SeqParams,
                            src: list[str], tgt: list[str], font: int, results: dict) -> None:
    """Global against Luong's local attention in a window around p_t, then soft against
    hard attention, for the dot scores of one decoding step."""
    S = len(h)
    st.header("4 · Global against local attention")
    c1, c2, c3 = st.columns([3, 2, 2])
    with c1:
        t = bounded_slider(st, "Decoding step t (the query of sections 4 and 5)", 1, len(s),
                           2, key="s2s_local_step") - 1
    half = c2.slider("Window half-width D", 1, MAX_TOKENS, 2, key="s2s_window", **URL)
    mode = c3.radio("Window centre p_t", ["monotonic", "predictive"], horizontal=True,
                    key="s2s_local_mode", **URL)
    dot_scores = s2s.score("dot", s[t:t + 1], h, params)[0]  # (S,)
    p_t = (s2s.monotonic_position(t, S) if mode == "monotonic"
           else s2s.predictive_position(s[t], params, S))
    local = s2s.local_attention(dot_scores, h, p_t, half)
    centre = p_t + 1  # the core counts source positions from 0, the page from 1
    if local.window.all():
        st.info(f"The window [p_t − D, p_t + D] = [{centre - half:.2f}, {centre + half:.2f}] "
                f"covers the whole source ({S} tokens): local attention is global attention "
                "times the Gaussian.")
    left, right = st.columns(2)
    with left:
        show_figure(bar_chart(src, softmax(dot_scores),
                              title=f"Global (dot score), step {t + 1}",
                              x_title="source token", y_title="weight", y_range=(0, 1.1),
                              colour=SERIES_COLOURS[0], decimals=2, font_size=font),
                    key="s2s_fig_global",
                    alt=describe_bars(src, softmax(dot_scores),
                                      what=f"Global weights at step {t + 1}"))
    with right:
        show_figure(bar_chart(src, local.weights,
                              title=f"Local, p_t = {centre:.2f}, D = {half}",
                              x_title="source token", y_title="weight", y_range=(0, 1.1),
                              colour=SERIES_COLOURS[2], decimals=2, font_size=font),
                    key="s2s_fig_local",
                    alt=describe_bars(src, local.weights,
                                      what=f"Local weights around p_t = {centre:.2f}, D = "
                                           f"{half}"))
    rule = ("Monotonic: p_t = t, the decoding step (at most S)" if mode == "monotonic"
            else "Predictive: p_t = 1 + S·sigmoid(v_pᵀ tanh(W_p sₜ)), between 1 and S + 1; W_p and "
                 "v_p are random here (untrained), so this centre is arbitrary")
    st.markdown(
        f"Query: the decoder state of “{md_escape(tgt[t])}”, step {t + 1}. "
        f"{rule}: p_t = {centre:.2f}, a source position counted from 1. Outside "
        "[p_t − D, p_t + D] the weights are exactly 0; inside, the "
        f"softmax is multiplied by a Gaussian with σ = D/2 = {half / 2:g}, so the weights sum "
        f"to {total_text(local.weights.sum())} (Luong et al. do not renormalise)."
    )
    st.latex(r"a_t(s) = \mathrm{softmax}_{s \in [p_t - D,\, p_t + D]}\big(\mathrm{score}(s_t, h_s)"
             r"\big)\, \exp\!\left(-\frac{(s - p_t)^2}{2\sigma^2}\right),\quad \sigma = D/2")
    keep(results, "local", {"step": t + 1, "p_t_from_1": centre, "D": half,
                            "weights": local.weights})

    st.header("5 · Soft against hard attention")
    chosen, hard_context = s2s.hard_attention(dot_scores, h)
    soft_grad, hard_grad = s2s.context_gradient(dot_scores, h)
    left, right = st.columns(2)
    with left:
        st.markdown(f"At step {t + 1}, **soft** attention: c = Σ α_j h_j with α = softmax(e), "
                    f"a blend of all {S} states; e_j is the score of source state j (Bahdanau "
                    f"et al.'s letter: s is the decoder state here). "
                    f"**{term_link('hard', 'Hard attention')}**: choose one position and take "
                    "its state alone. Xu et al. draw the position from α while "
                    f"training; here it is the argmax, “{md_escape(src[chosen])}”, and c is "
                    f"h_{chosen + 1} (largest difference "
                    f"{difference_text(np.max(np.abs(hard_context - h[chosen])))}).")
        grads = pd.DataFrame({"soft ‖dc/de_j‖": soft_grad, "hard ‖dc/de_j‖": hard_grad},
                             index=[f"{j + 1}: {w}" for j, w in enumerate(src)])
        # a static table: this section reruns with the window's controls, and a data grid
        # (drawn on a canvas) would be drawn again on each of them
        st.table(grads.map(lambda x: significant_text(x, 3)))  # 3.39×10⁻⁶, not 3.39e-06
    with right:
        st.markdown(hard_gradient_text(src, hard_grad))
        if not presenter:
            st.markdown(f"A low temperature τ (lessons 1 and 2) does not make soft "
                        f"attention hard: it makes it {term_link('sharp', 'sharp')}, its "
                        "weight concentrated on "
                        "the largest scores but still smooth, with a gradient everywhere. Only "
                        "its limit is the argmax.")
    keep(results, "hard", {"step": t + 1, "chosen_from_1": chosen + 1,
                           "soft_gradient": soft_grad, "hard_gradient": hard_grad})


local_and_hard_sections(h, s, params, src, tgt, font, results)

bullet_list("What to notice", [
    "Dot and scaled dot have no parameters; general has d², additive d_a(2d + 1).",
    "Bahdanau asks with the previous decoder state, Luong with the current one.",
    "Bahdanau feeds cₜ into the new state sₜ (the GRU's gates and candidate all read it); "
    "Luong combines cₜ with a state already computed, h̃ₜ = tanh(W_c [cₜ; sₜ]), and "
    "predicts from h̃ₜ.",
    "Each α_t is a distribution over the source; the context vector is the average of the "
    "encoder states weighted by it.",
    "Local attention's weights are exactly 0 outside its window; hard attention's choice has "
    "zero gradient almost everywhere, while a sharp (low-temperature) softmax keeps one.",
])
if not presenter:
    bullet_list("Try this", [
        "Type “Le chat noir” as the target and “the black cat” as the source with Luong dot.",
        "Set D = 1 with a monotonic window and step through the sentence.",
        "Make the source much longer than the target, then try the predictive window.",
        "Switch Bahdanau and Luong and compare the alignment matrices.",
    ], expanded=False)
    practice_questions("s2s", [
        {"q": f"How many parameters has Luong's general score when d = {D}?",
         "value": float(score_parameter_count("general", D, D)), "tol": 0.5,
         "a": f"W is d × d = {D} × {D} = {score_parameter_count('general', D, D)}."},
        {"q": "Why can't hard attention be trained by plain backpropagation?",
         "a": "Its output is one chosen state; a small change of the scores does not change "
              "the choice, so the derivative is 0 (and undefined where the choice flips)."},
        {"q": "Which decoder state does Bahdanau attention use at step t, and which does "
              "Luong's?",
         "a": "Bahdanau: the previous state sₜ₋₁ (attention feeds the new state). Luong: "
              "the current state sₜ (attention is computed after the state)."},
        {"q": f"How many entries has Luong's W_c when d = {D}?",
         "value": float(D * 2 * D), "tol": 0.5,
         "a": f"W_c maps [cₜ; sₜ], {2 * D} numbers, to h̃ₜ, {D}: it is d × 2d = {D} × "
              f"{2 * D} = {D * 2 * D}."},
    ])
    st.subheader("Download")
    dims = [f"{i + 1}" for i in range(D)]
    downloads("s2s", {
        "Alignment (target × source)": (results["alignment"], tgt, src),
        "Scores": (results["scores"], tgt, src),
        "Context vectors": (results["contexts"], tgt, dims),
        "Encoder states": (h, src, dims),
        "Decoder states": (s, tgt, dims),
    }, results)
finish_page()
