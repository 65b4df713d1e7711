"""Read once, understood: on every page, the first use of each glossary term is a link to
its entry or sits in the sentence that defines it.

What is read. Each page at its defaults (AppTest), in the order a student meets it:
headings (title, headers, expander labels), prose (markdown, captions, alerts), formulas
(LaTeX), the words of its figures (titles, panel titles, axis titles, from the Plotly
specs) and of its tables (column and row headers, text cells). Left out: the sidebar (the
same on every page), diagram markup (its text alternative is a caption, and is read),
and controls' labels and metrics, which this test does not judge. On the home page the
glossary itself is left out: it is the list of definitions.

What is looked for. Each entry's written forms (pages.ui.glossary.written_forms), as
whole words (a letter, digit, "_" or "-" next to a form makes it another word:
"cross-entropy" is not "entropy"), in the case the glossary gives, a first lower-case
letter also capitalised (a sentence may start with it), with a plural "s" for a word. A
digit in a form stands for any number (L24 H5). A form inside a longer form of another
entry belongs to that entry ("mask" in "causal mask"). Subscript letters are read as
"_x" ("hⱼ" is h_j). Words in “curly quotes” or `code` are tokens or labels quoted from
the page's data, not terms, and are skipped. A one-letter Latin symbol (T, B, H, L, Q,
K, V, S, w, g) counts only in a formula, inside its own link, or next to a sign of
arithmetic (= × · / ^ _ < > ≤ ≥ − + √ ∑ ∘ ⊙): "model B", "(K, 0.43)" and the letters of
a copied string are not symbols.

Which terms are judged. Those the page's student has not met: a term is taken as known
when the lesson that explains it (its entry's ``lesson``) is one the page builds on,
the registry's ``needs`` followed back (lesson 12 needs 9 and 10, so every term of
lessons 9 and 10, and of the lessons they need, is known there). On the home page none.

The rule. The first occurrence passes when it is
- inside a glossary link to its entry (markdown ``[text](./#glossary-key)``), or
- named next to its meaning: right after its gloss or another of its forms, in any kind
  of text ("temperature τ", "the logit difference LD"), or
- in a prose sentence that defines it: "X is/are/means/denotes …", "X: …", "X = …" with
  words (not a bare number) or a count with its unit ("H = 4 heads"), "X, the …" or
  "X the <its gloss>", "X (two words or more)" not a pointer ("(lesson 3)"),
  "… (X)" after three words or more, or "**X**" (a term set in bold as it is
  introduced), or
- in a formula, on the left of its "=" (the formula defines it), or explained by the
  prose just before or after the formula (a link, a defining sentence, or, for a
  symbol, the words of its gloss: "multiplied by the layer's gain" explains g).
A label (a figure's or a table's words) defines nothing by itself: a term first met in
a label fails unless a gloss sits next to it. A heading, a lesson's goal and, on the
home page, a lesson's summary or needs under its link, and the course map's text
announce what comes: a term met first there is judged at its next use elsewhere (and
passes if it has none).

Known gaps on pages owned by others are marked ``xfail(strict=True)`` one by one in
``GAPS`` with what is wrong: when a page is fixed its case passes, strict xfail fails,
and its line is removed here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from conftest import app_scripts, assert_no_exception, page_at_defaults, script_id
from streamlit.testing.v1.element_tree import Block

from pages.ui import glossary
from pages.ui.lessons import BY_SCRIPT, LESSONS, Lesson
from tests.model_marks import needs_minilm, needs_smollm

SCRIPTS = app_scripts()
HOME = "dashboard.py"
# The model each lesson reads (the marks their own page tests use).
MODEL_MARKS = {"9_Pretrained_model.py": needs_minilm, "10_Language_model.py": needs_smollm,
               "11_Inference.py": needs_smollm, "12_Attention_for_the_answer.py": needs_smollm}

ANNOUNCING = {"heading", "goal", "announcement"}  # judged at the next use
PROSE = {"prose"}
MATHS = set("=×·/^_<>≤≥−+√∑∘⊙")
_SUBSCRIPTS = dict(zip("₀₁₂₃₄₅₆₇₈₉₋ₐₑₒₓₕₖₗₘₙₚₛₜⱼ", "0123456789-aeoxhklmnpstj", strict=True))
_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)\)")


# ---- what the student reads -------------------------------------------------------------

@dataclass(frozen=True)
class Text:
    """One element's text: ``kind`` is heading, goal, announcement, prose, formula, figure
    or table."""

    kind: str
    text: str


def _figure_words(spec: dict) -> list[str]:
    layout = spec.get("layout", {})
    words = [layout.get("title", {}).get("text", "")]
    words += [a.get("text", "") for a in layout.get("annotations", [])]
    for name, axis in layout.items():
        if re.fullmatch(r"[xy]axis\d*", name) and isinstance(axis, dict):
            words.append(axis.get("title", {}).get("text", ""))
    return [w for w in words if w]


def page_texts(at) -> list[Text]:
    """The page's text in order, as described in the module's docstring."""
    texts: list[Text] = []

    def add(kind: str, text) -> None:
        if str(text).strip():
            texts.append(Text(kind, str(text)))

    def walk(node, under_link: bool = False) -> None:
        kind = type(node).__name__
        if isinstance(node, Block) and node.key == "glossary_entries":
            return  # the home page's glossary: the definitions themselves
        if isinstance(node, Block) and str(node.key or "").startswith("alt_home_diagram"):
            for child in node.children.values():  # the course map's text alternative
                if type(child).__name__ == "Caption":
                    add("announcement", _unescaped(child.value))
            return
        if kind in ("Title", "Header", "Subheader"):
            add("heading", node.value)
        elif kind == "Expander":
            add("heading", node.label)
        elif kind == "Markdown":
            if not node.value.lstrip().startswith("<svg"):  # a diagram: its caption is read
                add("goal" if node.value.startswith("**Goal:**") else "prose", node.value)
        elif kind == "Caption":
            add("announcement" if under_link else "prose", _unescaped(node.value))
        elif kind in ("Info", "Warning", "Success", "Error"):
            add("prose", node.value)
        elif kind == "Latex":
            add("formula", node.value)
        elif kind in ("Table", "Dataframe"):
            frame = node.value
            add("table", " | ".join(map(str, frame.columns)))
            if not isinstance(frame.index, pd.RangeIndex):
                add("table", " | ".join(map(str, frame.index)))
            add("table", " | ".join(v for v in frame.to_numpy().ravel() if isinstance(v, str)))
        elif kind == "UnknownElement" and getattr(node, "type", "") == "plotly_chart":
            for words in _figure_words(json.loads(node.proto.spec)):
                add("figure", words)
        children = list(getattr(node, "children", {}).values())
        after_link = False
        for child in children:
            name = type(child).__name__
            if name == "PageLink" or getattr(child, "type", "") == "page_link":
                after_link = True  # the captions under a lesson's link on the home page
                continue
            after_link = after_link and name == "Caption"
            walk(child, after_link)

    walk(at.main)
    return texts


def _unescaped(markdown: str) -> str:
    """A caption as written (md_escape puts a backslash before markdown's signs)."""
    return re.sub(r"\\(.)", r"\1", markdown)


# ---- the forms and where they occur ----------------------------------------------------

def _plain(text: str) -> tuple[str, list[tuple[int, int, str]]]:
    """``text`` with links reduced to their words, subscripts as "_x", and each link's
    span in the result with its address."""
    text = re.sub(r"(?<=[A-Za-zα-ω])([₀-₉₋ₐₑₒₓₕₖₗₘₙₚₛₜⱼ]+)",
                  lambda m: "_" + "".join(_SUBSCRIPTS[c] for c in m.group(1)), text)
    out, spans, pos, length = [], [], 0, 0
    for match in _LINK.finditer(text):
        out.append(text[pos:match.start()])
        length += match.start() - pos
        out.append(match.group(1))
        spans.append((length, length + len(match.group(1)), match.group(2)))
        length += len(match.group(1))
        pos = match.end()
    out.append(text[pos:])
    return "".join(out), spans


def _latex_words(tex: str) -> str:
    """A formula's symbols and words: commands dropped, "x_{tj}" as x_tj, and the
    separators between its equations (\\quad, ",", "\\\\") as ";"."""
    tex = re.sub(r"\\(q?quad|\\)|,", ";", tex)
    tex = re.sub(r"\\mathcal\{(\w)\}", r"calligraphic_\1", tex)  # ℒ is not L
    tex = re.sub(r"\\(alpha|tau)\b", lambda m: {"alpha": "α", "tau": "τ"}[m.group(1)], tex)
    tex = re.sub(r"\\[A-Za-z]+", " ", tex)
    tex = re.sub(r"_\{([^{}]*)\}", r"_\1", tex)
    return re.sub(r"[{}$]", " ", tex)


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]


def _form_pattern(form: str) -> re.Pattern:
    body = re.sub(r"\\?\d+", r"\\d+", re.escape(form))  # a digit stands for any number
    if len(form) > 1 and form[0].islower() and "_" not in form:
        body = f"[{form[0]}{form[0].upper()}]" + body[len(re.escape(form[0])):]
    plural = "s?" if len(form) > 2 and form[-1].isalpha() and "_" not in form else ""
    return re.compile(rf"(?<![\w\-]){body}{plural}(?![\w\-])")


def _quoted(sentence: str, start: int) -> bool:
    """Whether ``start`` lies inside “curly quotes” or `code`."""
    before = sentence[:start]
    return before.count("“") > before.count("”") or before.count("`") % 2 == 1


def _one_letter(form: str) -> bool:
    return len(form) == 1 and form.isascii() and form.isalpha()


def _by_arithmetic(sentence: str, start: int, end: int) -> bool:
    left, right = sentence[:start].rstrip()[-1:], sentence[end:].lstrip()[:1]
    return left in MATHS or right in MATHS


def _gloss(entry: glossary.Term) -> str:
    """A symbol's meaning as the glossary names it ("temperature" for τ), brackets out."""
    if " — " not in entry.name:
        return ""
    return " ".join(re.sub(r"\([^)]*\)", " ", entry.name.split(" — ", 1)[1]).split())


def _neighbours(entry: glossary.Term) -> list[str]:
    """What may stand right before a form to name it: its gloss, its other forms."""
    names = [_gloss(entry), *glossary.written_forms(entry)]
    return [n for n in names if n and not _one_letter(n)]


@dataclass(frozen=True)
class Use:
    """One occurrence of an entry: where (the text's index and kind), the plain sentence,
    the form's span in it, and whether it lies inside a link to the entry."""

    index: int
    kind: str
    sentence: str
    start: int
    end: int
    linked: bool


def uses(texts: list[Text], entry: glossary.Term) -> list[Use]:
    """Every occurrence of ``entry`` on the page, in order (the first of each sentence)."""
    forms = glossary.written_forms(entry)
    patterns = [(form, _form_pattern(form)) for form in forms]
    longer = [_form_pattern(other) for e in glossary.ALL.values() if e.key != entry.key
              for other in glossary.written_forms(e)
              if any(form in other and form != other for form in forms)]
    anchor = "#" + glossary.anchor(entry.key)
    found = []
    for index, text in enumerate(texts):
        raw = _latex_words(text.text) if text.kind == "formula" else text.text
        for sentence in _sentences(raw):
            plain, spans = _plain(sentence)
            inside_longer = [m.span() for p in longer for m in p.finditer(plain)]
            hits = []
            for form, pattern in patterns:
                for m in pattern.finditer(plain):
                    linked = any(a <= m.start() and m.end() <= b and href.endswith(anchor)
                                 for a, b, href in spans)
                    if _quoted(plain, m.start()) and not linked:
                        continue
                    if any(a <= m.start() and m.end() <= b for a, b in inside_longer):
                        continue
                    if (_one_letter(form) and text.kind != "formula" and not linked
                            and not _by_arithmetic(plain, m.start(), m.end())):
                        continue
                    hits.append(Use(index, text.kind, plain, m.start(), m.end(), linked))
            if hits:
                found.append(min(hits, key=lambda use: use.start))
    return found


# ---- is it explained where it is first met? ----------------------------------------------

_DEFINES_AFTER = re.compile(
    r"^(\s+(is|are|means|denotes|stands for|counts)\b|:\s+\w"
    r"|\s*=\s*(?![\d−\-.])\S|\s*=\s*[\d.,]+\s+[a-z]\w*s\b)")
_APPOSITIVE = re.compile(r"^,?\s+(the|a|an|its|their|which|one|each)\b")
_POINTER = re.compile(r"^\((lessons?|see|section|figure|sections?|\d)", re.I)


def _named_next_to(use: Use, entry: glossary.Term) -> bool:
    """Right after its gloss or another of its forms: "temperature τ"."""
    before = use.sentence[:use.start].rstrip()
    return any(re.search(rf"(?<![\w\-]){re.escape(n)}s?$", before, re.I)
               for n in _neighbours(entry) if n.lower() != use.sentence[use.start:use.end]
               .lower())


def _defines(use: Use, entry: glossary.Term) -> bool:
    """A prose sentence that defines the entry where this use stands."""
    s, a, b = use.sentence, use.start, use.end
    after, before = s[b:], s[:a]
    if _DEFINES_AFTER.search(after):
        return True
    appositive = _APPOSITIVE.match(after)
    if appositive and (after.startswith(",") or any(
            g.lower() in after.lower()[:40] for g in filter(None, [_gloss(entry)]))):
        return True
    bracket = re.match(r"^\s*(\([^()]*\))", after)
    if bracket and len(bracket.group(1).split()) >= 2 and not _POINTER.match(bracket.group(1)):
        return True
    if before.endswith("(") and after.startswith(")") and len(before.split()) >= 3:
        return True
    return before.endswith("**") and after.startswith("**")


def _formula_defines(use: Use) -> bool:
    """On the left of an "=" of the formula: "c_t = Σ α h_j" defines c_t."""
    before = use.sentence[:use.start].rstrip()
    return re.match(r"^\s*=", use.sentence[use.end:]) is not None and (
        before == "" or before.endswith(";"))


def _prose_explains(texts: list[Text], index: int, entry: glossary.Term) -> bool:
    """Whether the prose right before or after text ``index`` links or defines the entry,
    or, for a symbol, uses the words of its gloss."""
    around = [i for i in (index - 1, index + 1) if 0 <= i < len(texts)
              and texts[i].kind in PROSE]
    gloss = _gloss(entry).replace("-", " ").lower()
    for i in around:
        near = [Text(texts[i].kind, texts[i].text)]
        if any(use.linked or _defines(use, entry) for use in uses(near, entry)):
            return True
        words = _plain(texts[i].text)[0].replace("-", " ").lower()
        if gloss and re.search(rf"\b{re.escape(gloss)}\b", words):
            return True
    return False


def explained(texts: list[Text], use: Use, entry: glossary.Term) -> bool:
    """Whether this use, where it stands, is a link to the entry or explains it."""
    if use.linked or _named_next_to(use, entry):
        return True
    if use.kind in PROSE:
        return _defines(use, entry)
    if use.kind == "formula":
        return _formula_defines(use) or _prose_explains(texts, use.index, entry)
    return False


def first_use_problem(texts: list[Text], entry: glossary.Term) -> str | None:
    """None when the entry's first use (announcements aside) is explained; else what and
    where it is."""
    for use in uses(texts, entry):
        if explained(texts, use, entry):
            return None
        if use.kind in ANNOUNCING:
            continue  # a heading or a goal announces: the next use is judged
        return (f"first met in a {use.kind}, neither linked nor defined: "
                f"{use.sentence.strip()[:300]!r}")
    return None


def known_lessons(lesson: Lesson | None) -> set[int]:
    """The lessons a page builds on, its registry needs followed back (none for home)."""
    by_number = {entry.number: entry for entry in LESSONS}
    known, todo = set(), list(lesson.needed_lessons if lesson else ())
    while todo:
        number = todo.pop()
        if number not in known:
            known.add(number)
            todo += by_number[number].needed_lessons
    return known


# ---- the cases ---------------------------------------------------------------------------

# (page, entry key): what is wrong there today. Each is removed when its page is fixed.
GAPS = {
}


def _cases():
    for script in SCRIPTS:
        for key in glossary.ALL:
            marks = [MODEL_MARKS[script.name]] if script.name in MODEL_MARKS else []
            if (script.name, key) in GAPS:
                marks.append(pytest.mark.xfail(strict=True, reason=GAPS[script.name, key]))
            yield pytest.param(script, key, marks=marks, id=f"{script_id(script)}-{key}")


@pytest.mark.parametrize(("script", "key"), list(_cases()))
def test_the_first_use_of_a_term_is_linked_or_defined(script: Path, key: str) -> None:
    lesson = BY_SCRIPT.get(script.name)
    entry = glossary.ALL[key]
    if entry.lesson is not None and entry.lesson in known_lessons(lesson):
        return  # met in a lesson this one builds on
    at = page_at_defaults(script)
    assert_no_exception(at, f"{script.name} at its defaults")
    problem = first_use_problem(page_texts(at), entry)
    assert problem is None, f"{script.name}, {entry.name}: {problem}"


# ---- the rule itself, on texts written here ----------------------------------------------

def _problem(key: str, *texts: tuple[str, str]) -> str | None:
    return first_use_problem([Text(kind, text) for kind, text in texts], glossary.ALL[key])


def test_a_link_or_a_defining_sentence_passes_and_a_bare_use_fails():
    link = glossary.term_link("entropy", "entropy")
    assert _problem("entropy", ("prose", f"The {link} of a row is small.")) is None
    assert _problem("entropy", ("prose", "Its entropy is 0 when one key takes all.")) is None
    assert _problem("entropy", ("prose", "Compare the entropy of both rows."))
    # a later link does not excuse an earlier bare use
    assert _problem("entropy", ("prose", "Compare the entropy."), ("prose", f"The {link}."))


@pytest.mark.parametrize("sentence", [
    "In training each step reads the correct previous letter (teacher forcing).",
    "Teacher forcing: each step reads the correct previous letter.",
    "With **teacher forcing** each step reads the correct previous letter.",
    "Teacher forcing (each step reads the correct letter) trains it.",
])
def test_the_defining_patterns(sentence):
    assert _problem("teacher-forcing", ("prose", sentence)) is None


def test_a_label_defines_nothing_and_a_pointer_is_no_definition():
    assert _problem("greedy", ("figure", "token accuracy (greedy)"),
                    ("prose", "Greedy decoding: always the most likely token."))
    assert _problem("bleu", ("prose", "They lose BLEU (lesson 0) as sentences grow."))


def test_a_heading_announces_and_the_next_use_is_judged():
    assert _problem("hard", ("heading", "5 · Soft against hard attention"),
                    ("prose", "Hard attention is choosing one position.")) is None
    assert _problem("hard", ("heading", "5 · Soft against hard attention"),
                    ("figure", "hard attention, step 2"))


def test_formulas_define_on_the_left_or_by_the_prose_around_them():
    assert _problem("context-vector", ("formula", r"c_t = \sum_j \alpha_{tj} h_j")) is None
    assert _problem("g", ("prose", "Each is multiplied by the layer's gain."),
                    ("formula", r"\hat x = \frac{x}{r} \odot g")) is None
    assert _problem("g", ("prose", "Freeze the final norm's scale."),
                    ("formula", r"LD = \sum_c \frac{c}{\mathrm{rms}} \odot g"))
    assert _problem("rms", ("prose", "Freeze the final norm's scale."),
                    ("formula", r"LD = \sum_c \frac{c}{\mathrm{rms}} \odot g"))


def test_short_symbols_count_only_as_symbols():
    # the letters of a copied string, a model's name, a quoted token: not the symbols
    for text in ("This string: F K F C J E H F A J B C.", "Model B adds a layer.",
                 "Largest: “2·K” 0.433."):
        assert [u.sentence for key in ("H", "B", "QKV")
                for u in uses([Text("prose", text)], glossary.ALL[key])] == []
    assert _problem("H", ("prose", "H = 4 heads, each of width 8.")) is None  # its unit
    assert _problem("H", ("prose", "Each head has d_model / H numbers."))
    assert _problem("tau", ("heading", "Temperature τ: sharp to uniform")) is None


def test_a_nested_form_belongs_to_the_longer_term_and_subscripts_read_as_underscores():
    causal = glossary.term_link("causal-mask", "causal mask")
    assert uses([Text("prose", f"Under a {causal} it sees the past.")],
                glossary.ALL["mask"]) == []
    link = glossary.term_link("decoder-state", "the states hⱼ and sₜ")
    assert _problem("decoder-state", ("prose", f"A decoder ({link}) writes.")) is None


def test_known_terms_come_from_the_lessons_a_page_builds_on():
    by_number = {entry.number: entry for entry in LESSONS}
    assert known_lessons(by_number[12]) >= {9, 10}
    assert known_lessons(by_number[2]) == {1}
    assert known_lessons(None) == set()
