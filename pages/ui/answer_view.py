"""Lesson 12's presentation that does not decide anything: its diagram of the two runs,
which cell of each patching grid that diagram copies, and the closing lists and practice.

The page (pages/12_Attention_for_the_answer.py) computes; this module lays out what it
computed. Every number drawn comes from the page's own study of the pair.
"""

from __future__ import annotations

import numpy as np

from attncore.lm.answer import AnswerStudy

from .figures.models import patching_runs
from .layout import bullet_list, practice_questions, show_diagram
from .page import Page


def handoff_cell(study: AnswerStudy, into: int | None) -> tuple[int, int]:
    """The stream the top diagram copies, as (layer it enters, from 0; position): the last
    token's, entering the first layer where it carries the answer (``into``, from the
    residual grid's runs), else the layer where its patch restores most."""
    last = study.pair.n_tokens - 1
    layer = into if into is not None else int(np.argmax(study.residual[:, last]))
    return layer, last


def carrier_cell(study: AnswerStudy, into: int | None) -> tuple[int, int]:
    """The stream section 3's diagram copies: the changed token's (the one that restores
    most, if several) entering the layer just before the answer moves to the last token;
    without such a move, its embedding (entering layer 1)."""
    layer = into - 1 if into else 0
    changed = study.pair.changed
    return layer, int(changed[np.argmax(study.residual[layer, changed])])


def show_runs(page: Page, study: AnswerStudy, mode: str, name: str, *, layer: int = 0,
              position: int | None = None, head: int = 0,
              window: tuple[int, int] | None = None,
              p_answer: tuple[float, float] = (0.0, 0.0), biases: bool = False,
              prompts: bool = False) -> None:
    """The two runs drawn in ``mode`` (pages.ui.figures.models.patching_runs) from the
    study's own numbers: a residual or head patch's recovery is read from its grid."""
    pair, dla = study.pair, study.attribution
    n_layers, n_heads = study.heads.shape
    recovery = (study.residual[layer, position] if mode == "residual" else
                study.heads[layer, head] if mode == "head" else 0.0)
    diagram = patching_runs(
        pair.clean_tokens, pair.corrupt_tokens, pair.changed, page.font, mode=mode,
        n_layers=n_layers, ld=(study.ld_clean, study.ld_corrupt), layer=layer,
        position=position, head=head, n_heads=n_heads, window=window,
        recovery=float(recovery), p_answer=p_answer, answer=pair.answer_token,
        parts=(dla.embed, dla.heads, dla.ffn, dla.biases if biases else None),
        prompts=prompts)
    show_diagram(diagram, key=page.key(f"runs_{name}"))


def closing_notes(moving: str) -> None:
    """What to notice (``moving``: how many heads move the answer) and what to try."""
    bullet_list("What to notice", [
        moving,
        "The residual grid shows information *moving* between positions, and only attention "
        "can move it: the layer where it moves points to the heads to look at.",
        "Direct attribution and patching answer different questions: what a head writes "
        "into the answer, and what the answer needs from it.",
    ])
    bullet_list("Try this", [
        "Pick another capital: does the same head carry the answer?",
        "Set the knockout window to 1 layer: which single layer's edge matters most?",
        "Make your own pair: swap one name or place, keep the token counts equal, and "
        "compare its head grid with the capital's.",
    ])


def practice(n_layers: int, n_heads: int) -> None:
    L, H = n_layers, n_heads
    practice_questions("ans", [
        {"q": "A clean run gives LD = 6, the corrupted run LD = −2, and a patched run LD = 4. "
              "What is the recovery?",
         "a": "(4 − (−2)) / (6 − (−2)) = 6/8 = 0.75.", "value": 0.75, "tol": 5e-3},
        {"q": f"How many patched runs does the head grid need for this model of {L} layers "
              f"and {H} heads a layer?",
         "a": f"{L} · {H} = {L * H}, one per head; here they run as {L} batches of {H}.",
         "value": float(L * H), "tol": 0.5},
        {"q": "Why is a residual patch before the first changed token always exactly 0?",
         "a": "The model is causal: a position's stream depends only on the tokens up to it, "
              "which are the same in both prompts there. Putting back the same numbers "
              "changes nothing."},
        {"q": "A head's direct part of LD is small, but patching it restores 0.6. How can "
              "that be?",
         "a": "It writes something that later heads or FFNs read and turn into the answer: "
              "its effect is indirect, which direct attribution does not count and patching "
              "does."},
    ])
