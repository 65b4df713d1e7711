"""The lessons, each described once: number, page script, title, key prefix, goal, summary.

Everything that names a lesson is generated from ``LESSONS``: the sidebar, the browser
tab, the page heading (``pages.ui.page.lesson_page``), the home page's list, the README's
list (``python -m pages.ui.lessons readme``) and the tests' list of pages. A lesson is
added by adding its entry here and its script in ``pages/`` (docs/adding-a-lesson.md).

A goal or summary is markdown in which ``{key:text}`` links the glossary entry ``key``
with the words ``text`` (``{key}`` alone shows the entry's own name); other fields, such
as lesson 10's ``{model}``, are filled in by the page.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES_DIR = ROOT / "pages"
HOME_SCRIPT = "dashboard.py"
# The address of the home page in a link, relative as Streamlit writes the lessons' own
# ("Masks"): from any page of the app it leads to the app's root.
HOME_HREF = "./"
# The glossary's heading on the home page (pages.ui.glossary draws it).
GLOSSARY_HREF = HOME_HREF + "#glossary"

_SCRIPT = re.compile(r"^(\d+)_([A-Za-z0-9_]+)\.py$")
_PREFIX = re.compile(r"^[a-z][a-z0-9]*$")


@dataclass(frozen=True)
class Lesson:
    """One lesson.

    ``script`` is the file in ``pages/`` (``7_Cost.py``): its number comes first, and the
    rest is the lesson's address (``/Cost``), which links in teachers' slides rely on.
    ``prefix`` starts every widget key of the page (``cost_heads``), and so every
    parameter of its link. ``goal`` is the page's one-line goal, ``summary`` its line on
    the home page and in the README. ``slow_controls`` names the buttons that start work
    taking seconds by design (key without the prefix -> what it does): the fuzz test
    never presses them, and the page's own tests do, at small settings. ``needs`` says
    what to know first: the numbers of the lessons it builds on, and/or a short text
    (shown on the home page; the glossary's terms of those lessons are taken as known).
    """

    number: int
    script: str
    title: str
    prefix: str
    icon: str
    goal: str
    summary: str
    slow_controls: tuple[tuple[str, str], ...] = ()
    needs: tuple[int | str, ...] = ()

    def __post_init__(self) -> None:
        match = _SCRIPT.match(self.script)
        if match is None or int(match.group(1)) != self.number:
            raise ValueError(f"lesson {self.number}: script {self.script!r} must be named "
                             f"'{self.number}_Name.py'")
        if not _PREFIX.match(self.prefix):
            raise ValueError(f"lesson {self.number}: key prefix {self.prefix!r} must be "
                             "lower-case letters and digits")
        for need in self.needs:
            if isinstance(need, int) and not 0 <= need < self.number:
                raise ValueError(f"lesson {self.number} can only need a lesson before it; "
                                 f"got {need}")
            if not isinstance(need, int) and not (isinstance(need, str) and need.strip()):
                raise ValueError(f"lesson {self.number}: a need is a lesson's number or a "
                                 f"short text; got {need!r}")

    @property
    def url_name(self) -> str:
        """The lesson's address after the app's root: ``Cost`` for ``7_Cost.py``."""
        return _SCRIPT.match(self.script).group(2)

    @property
    def page_path(self) -> str:
        """The script as ``st.page_link`` wants it: ``pages/7_Cost.py``."""
        return f"pages/{self.script}"

    @property
    def needed_lessons(self) -> tuple[int, ...]:
        """The numbers of the lessons it builds on, in order."""
        return tuple(sorted(n for n in self.needs if isinstance(n, int)))

    @property
    def needs_text(self) -> str:
        """What to know first, as the home page says it: "Needs first: lessons 9 and 10."
        ("" when it needs nothing)."""
        numbers = self.needed_lessons
        parts = [f"lesson{'s' if len(numbers) > 1 else ''} "
                 + " and ".join(filter(None, [", ".join(map(str, numbers[:-1])),
                                              str(numbers[-1])]))] if numbers else []
        parts += [n for n in self.needs if isinstance(n, str)]
        return f"Needs first: {' and '.join(parts)}." if parts else ""

    @property
    def label(self) -> str:
        """The lesson's name in the sidebar, on the home page and as its heading:
        "4 · Multi-head attention"."""
        return f"{self.number} · {self.title}"


LESSONS: tuple[Lesson, ...] = (
    Lesson(
        0, "0_Why_attention.py", "Why attention exists", "why", "🧭",
        goal="train two recurrent encoder-decoders of the same width to copy strings, one "
             "that must squeeze the whole string into a single vector and one with "
             "attention, and see where the first one fails and why the second does not.",
        summary="the problem attention was invented for: a recurrent encoder-decoder "
                "squeezes a string into one vector and fails as it grows; with attention "
                "it holds over the lengths it was trained on. Both trained live.",
        slow_controls=(("train", "trains two models"),),
        needs=("a little about recurrent networks",)),
    Lesson(
        1, "1_Worked_example.py", "Worked example", "we", "✏️",
        goal="compute softmax(QKᵀ/√d_k)·V for a few tokens, one step at a time, and check "
             "every number yourself.",
        summary="attention for 3 tokens computed step by step, with every number written "
                "out; check your own hand calculation.",
        needs=("vectors and matrix products",)),
    Lesson(
        2, "2_Scaling.py", "Why divide by √d_k", "sc", "📏",
        goal="see that dot products spread out as d_k grows, that unscaled they saturate "
             "the softmax, which then passes little gradient back to the scores, and that "
             "1/√d_k (not 1/d_k) keeps them in a useful range.",
        summary="the spread of dot products grows with d_k; unscaled, a large d_k "
                "saturates the softmax, which then passes little gradient back to the "
                "scores; 1/d_k (for independent q and k) "
                "flattens it towards uniform; 1/√d_k keeps the scores in a useful range.",
        needs=(1,)),
    Lesson(
        3, "3_Masks.py", "Causal and padding masks", "mk", "🎭",
        goal="build a batch {padding:padded} to one length, see which keys each query may "
             "attend to under each {mask:mask}, and check that masked weights are exactly "
             "0 while every row that keeps a key still sums to 1.",
        summary="a padded batch, masks as matrices, the fully masked row, a test that the "
                "causal mask leaks nothing from the future, and common pitfalls shown "
                "live.",
        needs=(1,)),
    Lesson(
        4, "4_Multi_head.py", "Multi-head attention", "mha", "🧠",
        goal="follow the shapes from X to the output, see that each {head:head} has its "
             "own slice of W_Q, W_K, W_V and its own attention weights, and compare "
             "{self-attention:self- with cross-attention}.",
        summary="the shapes step by step, each head's own slice of the projection matrices, "
                "designed "
                "heads, statistics per head, and cross-attention between two sentences.",
        needs=(1, 3)),
    Lesson(
        5, "5_Positional_encoding.py", "Positional encodings", "pe", "📍",
        goal="see how sines and cosines of many wavelengths give every position its own "
             "vector, why attention needs them, and how other schemes encode order.",
        summary="the sinusoidal table, similarity by offset, the shift rotation, why "
                "attention needs positions, and learned, relative, RoPE and ALiBi side by "
                "side.",
        needs=(3, 4)),
    Lesson(
        6, "6_Scoring_and_seq2seq.py", "Scoring and seq2seq", "s2s", "🔤",
        goal="compare the four ways to score a query against keys, then watch a "
             "translation model attend over its source one decoding step at a time: "
             "Bahdanau, Luong, local and hard.",
        summary="dot, scaled dot, general and additive scores; Bahdanau and Luong step by "
                "step; local and hard attention.",
        needs=(0, 1, 2)),
    Lesson(
        7, "7_Cost.py", "The cost of attention", "cost", "⏱️",
        goal="measure on this machine how time and memory grow with the sequence length "
             "n, and see two ways to pay less: computing in chunks and vectorising over "
             "heads.",
        summary="time and memory against n measured live on this machine, chunked "
                "queries, and vectorised heads against a loop.",
        needs=(1, 4)),
    Lesson(
        8, "8_Attention_that_learns.py", "Attention that learns", "learn", "🌱",
        goal="train small models live on three tasks (NumPy, hand-written gradients) and watch "
             "their attention move from random to meaningful: onto sentiment words, into "
             "an alignment with crossings, into a previous-token head and an "
             "{induction-head:induction head}.",
        summary="small models trained live in NumPy: attention pooling finds the "
                "sentiment words, alignment emerges from translation, induction heads "
                "form, and what bad settings do to attention.",
        slow_controls=(*((f"{task}_{button}", "trains a model")
                         for task in ("sentiment", "alignment", "induction")
                         for button in ("train", "again")),
                       ("collapse_train", "trains five models")),
        needs=(2, 4, 6)),
    Lesson(
        9, "9_Pretrained_model.py", "A real pretrained model", "pre", "🛰️",
        goal="open up all-MiniLM-L6-v2, a real 6-layer, 12-head model, on your own "
             "sentence: every head, one head by hand, the block around attention, and "
             "whether attention explains.",
        summary="all-MiniLM-L6-v2's 72 heads run by our own NumPy code on your sentence, "
                "one head by hand, the block around attention, heads switched off, "
                "sentence similarity.",
        needs=(2, 4, 5)),
    Lesson(
        10, "10_Language_model.py", "A real language model writes", "lm", "✍️",
        goal="run {model}, a real decoder, on your own prompt: the next token and how it "
             "is chosen, where the newest token looks, the causal mask checked, the "
             "{induction-head:induction heads} that copy, and one head computed by hand.",
        summary="SmolLM2-135M, a real 30-layer decoder run by our own NumPy code: the next "
                "token and how it is drawn, its 270 heads, the causal mask checked, "
                "induction heads found and switched off, one head by hand.",
        slow_controls=(("generate", "writes up to 32 tokens"),
                       ("ind_run", "six passes through the model")),
        needs=(3, 8, 9)),
    Lesson(
        11, "11_Inference.py", "Attention at inference", "inf", "⚡",
        goal="measure on lesson 10's model what attention costs when it writes, and how "
             "real systems cope: the {kv-cache:KV cache}, shared key/value heads, a "
             "sliding window with attention sinks, and FlashAttention's online softmax.",
        summary="on the same model, measured live: the KV cache, grouped-query heads, a "
                "sliding window with attention sinks, and FlashAttention's online "
                "softmax.",
        slow_controls=tuple((button, "runs the model over hundreds of tokens or times it")
                            for button in ("measure_times", "measure_merge",
                                           "measure_window", "curve", "measure_memory")),
        needs=(7, 10)),
    Lesson(
        12, "12_Attention_for_the_answer.py", "What attention does for the answer", "ans",
        "🎯",
        goal="change one word of a prompt and find, causally, which layers and which heads "
             "carry the answer: the logit lens, the answer split exactly into every "
             "head's part, {activation-patching:activation patching} and attention "
             "knockout, on the real model of lesson 10.",
        summary="change one word and find, causally, which layers and heads carry the "
                "answer: the logit lens, the answer split into every head's part, "
                "activation patching, attention knockout.",
        slow_controls=(("run", "patches every head and position of a pair"),),
        needs=(9, 10)),
    Lesson(
        13, "13_Fixed_size_memory.py", "Attention with a fixed-size memory", "mem", "🧮",
        goal="write pairs into a state of fixed size and read them back: "
             "{linear-attention:linear attention}, the {delta-rule:delta rule} and "
             "{gated-deltanet:Gated DeltaNet}, against softmax attention's growing cache, and "
             "see why released {hybrid:hybrids} keep some full attention.",
        summary="linear attention, the delta rule and Gated DeltaNet keep a state of fixed "
                "size: the KV cache against it, a released hybrid's memory from its config, "
                "three pairs by hand, recall against the pairs stored, and softmax against "
                "linear attention trained live.",
        slow_controls=(("train", "trains two models"),),
        needs=(0, 11)),
)

BY_PREFIX = {lesson.prefix: lesson for lesson in LESSONS}
BY_SCRIPT = {lesson.script: lesson for lesson in LESSONS}


def lesson(prefix: str) -> Lesson:
    """The lesson whose widget keys start with ``prefix``."""
    try:
        return BY_PREFIX[prefix]
    except KeyError:
        raise ValueError(f"no lesson has the key prefix {prefix!r}; the lessons' are "
                         f"{', '.join(BY_PREFIX)}") from None


def readme_list() -> str:
    """The README's list of lessons, one line each, linking each page's script; glossary
    fields are shown as their words (the README has no glossary to link)."""
    plain = re.compile(r"\{([a-z0-9-]+)(?::([^}]*))?\}")
    return "\n".join(
        f"- **{lesson.number} · [{lesson.title}](pages/{lesson.script})**: "
        f"{plain.sub(lambda m: m.group(2) or m.group(1), lesson.summary)}"
        for lesson in LESSONS)


def _check_unique() -> None:
    for field in ("number", "script", "title", "prefix"):
        values = [getattr(lesson, field) for lesson in LESSONS]
        if len(set(values)) != len(values):
            raise ValueError(f"two lessons share a {field}: {values}")


_check_unique()

if __name__ == "__main__":  # python -m pages.ui.lessons readme
    if sys.argv[1:] != ["readme"]:
        sys.exit("usage: python -m pages.ui.lessons readme")
    print(readme_list())
