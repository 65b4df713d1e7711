"""Lesson 12's presentation that does not decide anything: its diagram of the two runs,
which cell of each patching grid that diagram copies, and the closing lists and practice.

The page (pages/12_Attention_for_the_answer.py) computes; this module lays out what it
computed. Every number drawn comes from the page's own study of the pair.
"""

from __future__ import annotations

import numpy as np

from attncore.lm.answer import AnswerStudy

from .figures import said_number, scatter_chart
from .figures.models import patching_runs
from .layout import bullet_list, practice_questions, show_diagram, show_figure
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


#: The scatter's plot area, about, in pixels (the page's column less the axes' room): what
#: label placement assumes to keep labels apart.
PLOT_PX = (650, 250)
#: Where a label may sit from its point (Plotly's ax, ay, in pixels; ay down), in order.
OFFSETS = [(45, -22), (-45, -22), (45, 22), (-45, 22), (0, -32), (0, 32), (70, -44),
           (-70, -44), (70, 44), (-70, 44)]


def label_offsets(x: np.ndarray, y: np.ndarray, texts: list[str], spans: tuple, font: int
                  ) -> list[tuple[int, int]]:
    """Where each label sits from its point (ax, ay): the first of OFFSETS, trying first
    the side away from the middle of the x range, whose box (estimated from the text's
    length and the font) stays in the plot and meets no label placed before nor any of the
    labelled points. ``spans``: the plot's (x_min, x_max, y_min, y_max)."""
    x0, x1, y0, y1 = spans
    width, height = PLOT_PX
    px = (x - x0) / ((x1 - x0) or 1.0) * width
    py = (y1 - y) / ((y1 - y0) or 1.0) * height  # down, as Plotly's ay
    boxes: list[tuple[float, float, float, float]] = []
    chosen = []
    for i, text in enumerate(texts):
        w, h = 0.6 * font * len(text) + 6, 1.4 * font
        right_first = px[i] <= width / 2
        tries = sorted(OFFSETS, key=lambda o: (o[0] < 0) == right_first)  # stable
        for ax, ay in [*tries, OFFSETS[0]]:
            cx, cy = px[i] + ax, py[i] + ay
            box = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
            inside = box[0] >= -20 and box[2] <= width + 20 and box[1] >= -20
            clear = not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3]
                            for b in boxes)
            no_point = not any(box[0] <= u <= box[2] and box[1] <= v <= box[3]
                               for u, v in zip(px, py, strict=True))
            if inside and clear and no_point:
                break
        boxes.append(box)
        chosen.append((ax, ay))
    return chosen


def looks_figure(page: Page, study: AnswerStudy, top: list[tuple[int, int, float]],
                 named: list[tuple[int, int]], what: str) -> None:
    """Section 5's scatter: each head's attention from the last token to the changed
    token(s) against its patching recovery, the heads of ``top`` (layer, head, recovery)
    marked apart and the ``named`` ones (layer, head, from 0) labelled. ``what``: the
    changed tokens, quoted."""
    looks, heads = study.looks, study.heads
    L, H = heads.shape
    labels = np.array([f"L{layer + 1} H{head + 1}" for layer in range(L) for head in range(H)])
    is_top = np.zeros((L, H), dtype=bool)
    for layer, head, _ in top:
        is_top[layer, head] = True
    fig = scatter_chart(
        {"other heads": (looks[~is_top], heads[~is_top], labels[~is_top.ravel()].tolist()),
         f"the {len(top)} heads that restore most": (looks[is_top], heads[is_top],
                                                    labels[is_top.ravel()].tolist())},
        title=f"Where each head looks against what patching it does ({L * H} heads)",
        x_title=f"attention from the last token to {what}", y_title="recovery",
        font_size=page.font)
    x = np.array([looks[cell] for cell in named])
    y = np.array([heads[cell] for cell in named])
    texts = [f"L{layer + 1} H{head + 1}" for layer, head in named]
    spans = (looks.min(), looks.max(), heads.min(), heads.max())
    for text, xi, yi, (ax, ay) in zip(texts, x, y, label_offsets(x, y, texts, spans, page.font),
                                      strict=True):
        fig.add_annotation(x=xi, y=yi, text=text, ax=ax, ay=ay, showarrow=True, arrowhead=0,
                           arrowwidth=1, font={"size": page.font})
    best_l, best_h, _ = top[0]
    said = "; ".join(f"L{layer + 1} H{head + 1} looks {said_number(looks[layer, head])}, "
                     f"recovery {said_number(heads[layer, head])}" for layer, head in named)
    show_figure(fig, key="ans_fig_looks", alt=(
        f"{L * H} heads: attention from the last token to the changed token against head "
        f"patching recovery. The head that restores most, L{best_l + 1} H{best_h + 1}, puts "
        f"{said_number(looks[best_l, best_h])} of its attention there. Named: {said}."))


def closing_notes(moving: str) -> None:
    """What to notice (``moving``: how many heads move the answer) and what to try."""
    bullet_list("What to notice", [
        moving,
        "The residual grid shows information *moving* between positions, and only attention "
        "can move it: the layers where it moves point to the heads to look at.",
        "Direct attribution, patching and the knockout answer different questions: what a "
        "head writes into the answer; whether a part's clean output, patched alone into the "
        "corrupted run, is enough to restore it; and what the clean run needs: how far "
        "knocking a part out lowers p(answer).",
    ])
    bullet_list("Try this", [
        "Pick another capital: does the same head carry the answer?",
        "Widen the knockout window: do more windows halve p(answer), and which layers do "
        "they all include?",
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
