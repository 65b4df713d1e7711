"""Lesson 6's sentences that depend on its numbers, as plain functions of them.

Each is chosen by what the page computed (which word an alignment found, whether a
nudge flipped the hard choice, which word an untrained output ranks first), so that the
page never states what this sentence pair and seed did not give.
"""

from __future__ import annotations

import numpy as np

from attncore import seq2seq as s2s
from attncore.train.alignment import TrainedAlignment
from pages.ui.glossary import term_link
from pages.ui.labels import md_escape
from pages.ui.numbers import difference_text, number_text, probability_text
from pages.ui.numbers import subscript as sub

#: The trained models' headings, by score.
TRAINED_NAMES = {"additive": "Additive score (Bahdanau's)", "general": "General score (Luong's)"}


def alignment_text(count: s2s.LexiconAlignment, score: str) -> str:
    """How many target words whose translation is in the source (by the toy lexicon) put
    their largest weight on it, in words that say why: alike states for the dot score,
    chance for a random matrix."""
    m, hits = count.findable, count.found
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


def query_text(src: list[str], tgt: list[str], t: int, d: int, d_a: int,
               dot: np.ndarray) -> str:
    """What section 1's query and keys are, and whether the toy built the answer in: a
    target word with a translation in the source reads as that word, so its state and
    the translation's encoder state share an embedding, which a plain dot product (its
    weights ``dot`` over the source) is built to favour."""
    word, read = tgt[t], s2s.read_as([tgt[t]])[0]
    matches = s2s.lexicon_matches(src, [tgt[t]])[0]
    if matches.any():
        found = ", ".join(f"“{md_escape(src[j])}”" for j in np.flatnonzero(matches))
        what = ("its English translation" if read != word else "the same word")
        top = int(np.argmax(dot))
        outcome = (f"here it puts {number_text(dot[top], 3)} on “{md_escape(src[top])}”"
                   if matches[top] else
                   f"here it still puts most weight on “{md_escape(src[top])}”")
        built = (f"built mostly from the embedding of {what} in the source ({found}, read "
                 "through a small lexicon) and a little from its own, while the encoder "
                 f"state of {found} comes from that same embedding: the plain dot score is "
                 f"built to favour {found}, not taught to ({outcome})")
    else:
        built = ("built from that word, which has no translation in the source here, so "
                 "nothing is built in for a score to find")
    return (f"Query: this app's toy {term_link('decoder-state', 'decoder state')} of "
            f"“{md_escape(word)}”, target token {t + 1}, {built}. Keys: the {len(src)} "
            f"encoder states. Each row is a {term_link('softmax', 'softmax')} over the "
            "source (it sums to 1). Tokens, steps and positions are counted from 1. "
            f"d = {d} is the width of the states; the additive score's hidden width d_a "
            f"(the number of components of v) is {d_a}. The general and additive scores "
            "pass the states through random (untrained) matrices, which have learned "
            "nothing; the trained models further down show what training adds.")


def crossing_text(trained: dict[str, TrainedAlignment]) -> str:
    """Whether each trained model puts the largest weight of every moved French word on its
    English word, read from the alignments drawn."""
    first = next(iter(trained.values()))
    if not first.moved:
        return ""
    pairs = ", ".join(f"*{first.french[i]}* → *{first.english[first.order[i]]}*"
                      for i in first.moved)
    moved = len(first.moved)
    if all(res.moved_found == moved for res in trained.values()):
        return (f"In both, each moved word ({pairs}) puts its largest weight on its English "
                "word: the crossings emerged without any alignment labels.")
    said = "; ".join(f"{TRAINED_NAMES[kind].split(' (')[0].lower()}: {res.moved_found} of "
                     f"{moved}" for kind, res in trained.items())
    return f"Moved words ({pairs}) whose largest weight is on their English word: {said}."


def trained_text(trained: dict[str, TrainedAlignment]) -> str:
    """How the two trained models were trained, and what their crossings show."""
    first = trained["additive"]
    return (
        "The random matrices above have learned nothing. These two were **trained** (lesson "
        f"8's model, seed {first.seed}, each for {first.steps} "
        f"{term_link('adamw', 'AdamW')} steps) on a toy "
        "English → French task in which each adjective moves after its noun (as French does "
        "with the toy's adjectives, colours and *heureux*), from the "
        "translation loss alone: encoder state = word + position, decoder state = previous "
        f"French word + position, d = {first.d_model}. With no recurrent network, that "
        "decoder state is the same for both, so the two differ only in their score. "
        + crossing_text(trained) + " Lesson 8 trains it live.")


#: What section 2's toy decoder state is, and how a real one differs.
DECODER_STATE_NOTE = (
    "This app's decoder state is not recurrent: sₜ = tanh(W_enc uₜ), with the "
    "encoder's W_enc (hⱼ = tanh(W_enc xⱼ)), is built from target word t itself: "
    "uₜ is the embedding of the word's English translation in a small lexicon "
    "(of the word itself when it has none) plus 0.3 times an embedding of its own, "
    "so that an untrained dot score has something to find. A real decoder's "
    "state at step t has read only the words before t, and it learns its "
    "alignment from the translation loss, as the trained models below do.")

#: Section 6's closing points, true at every setting.
NOTICE_ITEMS = [
    "Dot and scaled dot have no parameters; general has d², additive d_a(2d + 1).",
    "Bahdanau asks with the previous decoder state, Luong with the current one.",
    "Bahdanau feeds cₜ into the new state sₜ (the GRU's gates and candidate all read it); "
    "Luong combines cₜ with a state already computed, h̃ₜ = tanh(W_c [cₜ; sₜ]), and "
    "predicts from h̃ₜ.",
    "Each α_t is a distribution over the source; the context vector is the average of the "
    "encoder states weighted by it.",
    "Local attention's weights are exactly 0 outside its window; hard attention's choice "
    "has zero gradient almost everywhere, while a sharp (low-temperature) softmax keeps "
    "one, small once it saturates.",
]


#: What both models make of their weights, said before section 2's figures draw it.
CONTEXT_SENTENCE = (
    " In both models, the weights αₜ over the source make the "
    f"{term_link('context-vector', 'context vector')} cₜ that the decoder reads at step t: "
    "the figures below draw αₜ, cₜ and the alignment.")


def model_text(model: str, luong_score: str) -> str:
    """Which decoder state asks the score in the model chosen (section 2), and with which
    score; then what the weights make, the context vector."""
    if model == "Bahdanau":
        return ("**Bahdanau**: additive score, asked with the *previous* decoder state "
                "sₜ₋₁: the decoder computes the context before its new state. Step 1 has "
                "no previous state; this app uses the mean of the encoder states there "
                r"(Bahdanau et al. start from $s_0 = \tanh(W_s \overleftarrow{h}_1)$, the "
                "backward encoder's state at the first source word)." + CONTEXT_SENTENCE)
    concat = " (Luong et al.'s “concat”)" if luong_score == "additive" else ""
    return (f"**Luong**: {luong_score} score{concat}, asked with the *current* decoder "
            "state sₜ (Luong et al. write hₜ for it and h̄ₛ for the encoder's states)."
            + CONTEXT_SENTENCE)


def next_word_intro(tgt: list[str], n: int) -> str:
    """What section 3 shows at step n: the decoder's use of c_n, with untrained weights."""
    return (
        f"Attention gives c{sub(n)}; the decoder must still use it to predict target word "
        f"{n}, “{md_escape(tgt[n - 1])}”. Bahdanau et al. put c{sub(n)} *into* the new state; "
        "Luong et al. combine it with a state computed before. The GRU, Luong's W_c and "
        "both output layers below have random (untrained) weights drawn from the seed: the "
        "figures show where cₜ goes, not what a trained model would predict.")


def bahdanau_text(tgt: list[str], n: int) -> str:
    """Bahdanau's step n: c_n is ready before the new state, which reads it; y_(n−1) is the
    previous target word, or the start mark at step 1."""
    previous = (f"{md_escape(s2s.START)}, a start mark (this app's choice)" if n == 1
                else f"“{md_escape(tgt[n - 2])}”, the previous target word")
    return (
        f"The score was asked with s{sub(n - 1)} (section 2), so c{sub(n)} is ready "
        f"before the state is updated: s{sub(n)} = f(s{sub(n - 1)}, y{sub(n - 1)}, "
        f"c{sub(n)}), a GRU whose gates z{sub(n)}, r{sub(n)} and candidate s̃{sub(n)} all "
        f"read c{sub(n)}; y{sub(n - 1)} is {previous}. The output reads s{sub(n)}, "
        f"y{sub(n - 1)} and c{sub(n)}. This GRU's s{sub(n)} is computed for this panel "
        "only: the scores of sections 1, 2, 4 and 5, Bahdanau's included, ask with the toy "
        "states "
        f"(s{sub(n - 1)} for Bahdanau's score at this step, s{sub(n)} in Luong's panel "
        "below), built from the target words, since the toy has no recurrent network to "
        "carry a GRU's state from step to step.")


def luong_text(n: int) -> str:
    """Luong's step n: the state first, then c_n combined with it."""
    return (
        f"The state s{sub(n)} comes first (Luong et al. write h{sub(n)}); the score asks "
        "with it (here the dot score; section 2 offers the others), then "
        f"h̃{sub(n)} = tanh(W_c [c{sub(n)}; s{sub(n)}]) mixes the two and the output "
        f"reads h̃{sub(n)} alone. With input "
        f"feeding, h̃{sub(n)} also goes into the next step's input, so that the next "
        "state knows what was attended.")


def gate_text(z: np.ndarray, n: int) -> str:
    """What the update gate did at step n, with its smallest and largest entries."""
    return (f"Entry i of s{sub(n)} moves the fraction zᵢ of the way from s{sub(n - 1)} "
            f"towards s̃{sub(n)}, so it lies between the two; here the entries of z{sub(n)} "
            f"run from {probability_text(z.min())} to {probability_text(z.max())}.")


def next_word_text(model: str, probs: np.ndarray, vocab: list[str], word: str, n: int) -> str:
    """Which word a model's untrained output layer ranks first, against target word n."""
    top = int(np.argmax(probs))
    said = (f"{model}'s most probable word is “{md_escape(vocab[top])}” (p = "
            f"{probability_text(probs[top])})")
    mine = next(k for k, v in enumerate(vocab) if v.lower() == word.lower())
    if top == mine:
        return (f"{said}, which is target word {n}: by chance, since these parameters are "
                "random.")
    return (f"{said}, not target word {n}, “{md_escape(word)}” (p = "
            f"{probability_text(probs[mine])}): these parameters are random, so the ranking "
            "means nothing yet.")


def luong_halves_text(lu: s2s.LuongStep, n: int) -> str:
    """The lengths of the two halves of W_c's product that the tanh adds up."""
    return (f"Inside the tanh, W_c's first d columns turn c{sub(n)} into a vector "
            f"of length {number_text(np.linalg.norm(lu.from_context), 3)}, its last "
            f"d turn s{sub(n)} into one of length "
            f"{number_text(np.linalg.norm(lu.from_state), 3)}; h̃{sub(n)} is the tanh "
            "of their sum.")


def vocabulary_text(vocab: list[str]) -> str:
    """The output layer's words, and what a uniform guess would give each."""
    words = [f"“{md_escape(w)}”" for w in vocab[:-1]]
    return (
        f"The vocabulary is the target's {len(words)} distinct "
        f"{'word' if len(words) == 1 else 'words'} ({', '.join(words)}) and the end mark "
        f"{md_escape(s2s.END)}: {len(vocab)} in all (a real model has tens of thousands), so "
        f"a uniform guess would give each word 1/{len(vocab)} = "
        f"{number_text(1 / len(vocab), 3)}. "
        "W_o is each model's output matrix, one row per word of the vocabulary. For the "
        "recurrent version, trained: [lesson 0](./Why_attention) trains a real recurrent "
        "(GRU) encoder-decoder with Bahdanau's additive attention, its decoder state "
        "updated from sₜ₋₁, yₜ₋₁ and cₜ as here.")


def window_note(local: s2s.LocalAttention, half: int, source_len: int) -> str:
    """Said only when the window covers every source position: then local-m attention is
    the global one, local-p the global one times the Gaussian. Empty otherwise."""
    if not local.window.all():
        return ""
    centre = local.p_t + 1  # the core counts source positions from 0, the page from 1
    return (f"The window [p_t − D, p_t + D] = [{centre - half:.2f}, {centre + half:.2f}] "
            f"covers the whole source ({source_len} tokens): local attention is global "
            + ("attention." if local.gaussian is None else "attention times the Gaussian."))


def local_text(local: s2s.LocalAttention, mode: str, word: str, step: int, half: int) -> str:
    """Where the window is centred and why, and what its weights are and sum to: the
    softmax over the window (local-m), times a Gaussian for local-p."""
    centre = local.p_t + 1
    rule = ("Monotonic: p_t = t, the decoding step (at most S, the source's length)"
            if mode == "monotonic"
            else "Predictive: p_t = 1 + S·sigmoid(v_pᵀ tanh(W_p sₜ)), between 1 and S + 1; "
                 "W_p and v_p are random here (untrained), so this centre is arbitrary")
    inside = ("they are the softmax of the scores over the window alone (Luong et al.'s "
              "local-m), so they sum to 1; only the predictive window adds a Gaussian."
              if local.gaussian is None
              else "the softmax over the window is multiplied by a Gaussian centred on p_t "
                   f"with σ = D/2 = {half / 2:g} (Luong et al.'s local-p), so the weights sum "
                   f"to {probability_text(local.weights.sum())} (Luong et al. do not "
                   "renormalise).")
    return (
        f"Query: the decoder state of “{md_escape(word)}”, step {step}. "
        f"{rule}: p_t = {centre:.2f}, a source position counted from 1. Outside "
        f"[p_t − D, p_t + D] the weights are exactly 0; inside, {inside}")


def local_formula(mode: str) -> str:
    """Luong et al.'s local weights in LaTeX: the softmax over the window (local-m), times
    the Gaussian for the predictive window (local-p)."""
    window = (r"a_t(j) = \mathrm{softmax}_{j \in [p_t - D,\, p_t + D]}"
              r"\big(\mathrm{score}(s_t, h_j)\big)")
    if mode == "monotonic":
        return window
    return window + r"\, \exp\!\left(-\frac{(j - p_t)^2}{2\sigma^2}\right),\quad \sigma = D/2"


def soft_and_hard_text(src: list[str], step: int, chosen: int, hard_context: np.ndarray,
                       h: np.ndarray, score: str, formula: str) -> str:
    """Soft attention's blend against hard attention's one state, checked to be it; the
    scores e are Luong's ``score`` (written ``formula`` in q and k), section 4's."""
    return (f"At step {step}, **soft** attention: c = Σ α_j h_j with α = softmax(e), "
            f"a blend of all {len(src)} states; e_j is the score of source state j (Bahdanau "
            f"et al.'s letter: s is the decoder state here), here Luong's "
            f"{score.replace('_', ' ')} score {formula} with q = sₜ and k = h_j, as in section "
            "4, whatever the Model picked in section 2, so α need not peak where that "
            "alignment does. "
            f"**{term_link('hard', 'Hard attention')}**: choose one position and take "
            "its state alone. Xu et al. draw the position from α while "
            f"training; here it is the argmax, “{md_escape(src[chosen])}”, and c is "
            f"h_{chosen + 1} (largest difference "
            f"{difference_text(np.max(np.abs(hard_context - h[chosen])))}).")


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


def illustrative_items(maxout_pairs: int, d: int) -> list[str]:
    """What section 3 simplifies, and how the papers differ: maxout's ``maxout_pairs``
    pairs and the width ``d`` of every state and context vector are this page's."""
    return [
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
        "Their output layer is a deep output: maxout keeps the larger entry of each pair of "
        f"U_o sₜ + V_o E yₜ₋₁ + C_o cₜ ({2 * maxout_pairs} entries, "
        f"{maxout_pairs} pairs), then W_o. Their eq. (4) feeds it yₜ₋₁, sₜ and cₜ, "
        "their appendix U_o sₜ₋₁ instead of U_o sₜ: this page follows eq. (4).",
        "Luong et al. write the output matrix W_s (W_s is Bahdanau's s₀ matrix above) "
        "and hₜ for the decoder state. Their decoder is a stacked LSTM; Bahdanau et "
        "al.'s encoder states are twice the decoder's width (forward and backward). "
        f"Here every state and context vector has d = {d} entries.",
    ]
