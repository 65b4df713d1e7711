"""Each lesson's model, drawn (pages.ui.figures.diagrams) from the numbers it computes.

One function per diagram, from the lesson's settings and results to a ``Diagram``; the
page shows it with ``pages.ui.layout.show_diagram``. Every number drawn is an argument:
a changed control changes the diagram.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import numpy as np

from ..lessons import BY_PREFIX
from ..numbers import number_text, significant_text, subscript
from .colours import TEXT_COLOUR
from .diagrams import CHAR_EM, HIGHLIGHT_FILL, LINE_EM, Diagram, text_width


def _href(prefix: str) -> str:
    return BY_PREFIX[prefix].url_name


def _tag(prefix: str) -> str:
    return f"lesson {BY_PREFIX[prefix].number}"


def course_map(font: int) -> Diagram:
    """The home page's map: one decoder block of a language model, the recurrent
    encoder-decoder with attention and the encoder block, each part a link to its lesson.
    """
    d = Diagram("The course map: where each lesson sits in a Transformer", font)
    d.label(0.5, 1.2, "A decoder-only language model", anchor="start", bold=True)
    tokens = d.box(1.0, 2.0, 25.0, 2.0, "tokens in", name="Tokens in")
    # Positions are added to the embedding (sinusoidal, learned) or, as RoPE in the models
    # of lessons 10 to 12, put into every attention score instead.
    embed = d.box(1.0, 5.2, 25.0, 2.6, ["embedding (+ positions, or RoPE",
                                        f"inside attention: {_tag('pe')})"],
                  href=_href("pe"), name=f"then the embedding, with positions added to it or, "
                                         f"as RoPE, put into attention, {_tag('pe')}")
    d.arrow(tokens, embed, said="")
    d.frame(0.5, 9.2, 36.5, 22.6, "× L layers")
    s = 2.5  # the residual stream runs down this line; each sublayer adds to it
    norm1 = d.box(6.0, 10.6, 7.0, 2.0, "norm", name="in each of L layers: a norm")
    d.arrow((s, 11.6), norm1, said="")
    attention = d.box(6.0, 13.6, 20.0, 3.2, ["attention: softmax(QKᵀ/√d_k)·V",
                                              f"({_tag('we')})"],
                      href=_href("we"), name=f"attention, {_tag('we')}")
    d.arrow((9.5, 12.6), (9.5, 13.6), said="")
    for x, words, prefix in ((6.0, "mask", "mk"), (12.75, "÷ √d_k", "sc"),
                             (19.5, "heads", "mha")):
        part = d.box(x, 18.0, 6.5, 2.8, [words, f"({_tag(prefix)})"], href=_href(prefix),
                     name=f"its {words}, {_tag(prefix)}")
        d.arrow(part, (x + 3.25, 16.8), said="")
    cache = d.box(27.5, 13.6, 9.0, 3.2, ["KV cache", f"({_tag('inf')})"], href=_href("inf"),
                  name=f"beside it the KV cache, {_tag('inf')}")
    d.arrow(cache, attention, said="")
    add1 = d.box(1.5, 21.8, 2.0, 2.0, "+", name="added to the residual stream")
    d.arrow((6.0, 15.6), add1, said="")
    norm2 = d.box(6.0, 24.6, 7.0, 2.0, "norm", name="a norm")
    mlp = d.box(15.0, 24.6, 11.0, 2.0, "MLP", name="the MLP")
    d.arrow((s, 25.6), norm2, said="")
    d.arrow(norm2, mlp, said="")
    add2 = d.box(1.5, 28.6, 2.0, 2.0, "+", name="added to the residual stream")
    d.arrow((15.0, 26.6), add2, said="")
    patch = d.box(27.5, 20.6, 9.0, 5.6, ["patch it:", "which part", "answers?",
                                          f"({_tag('ans')})"],
                  href=_href("ans"),
                  name=f"the residual stream patched to find what answers, {_tag('ans')}")
    d.arrow(patch, (s + 0.1, 20.5), dashed=True, said="")
    d.label(s + 1.4, 33.0, "residual stream", anchor="start", dim=True, said=False)
    d.box(1.0, 34.0, 25.0, 2.6, ["unembedding → next token", f"({_tag('lm')})"],
          href=_href("lm"), name=f"then unembedding to the next token, {_tag('lm')}")
    d.line([(s, 7.8), (s, 21.8)], width=4)
    d.line([(s, 23.8), (s, 28.6)], width=4)
    d.line([(s, 30.6), (s, 34.0)], width=4)

    # Right: the recurrent encoder-decoder with attention, and the encoder block.
    rx = 39.0
    d.label(rx, 1.2, "Before Transformers", anchor="start", bold=True)
    encoder = d.box(rx, 2.0, 18.0, 2.6, ["recurrent encoder h₁ … hₙ", f"({_tag('why')})"],
                    href=_href("why"), name=f"a recurrent encoder, {_tag('why')}")
    scores = d.box(rx, 5.8, 18.0, 2.6, ["scores → α → context c_t", f"({_tag('s2s')})"],
                   href=_href("s2s"),
                   name=f"scores, weights and the context, {_tag('s2s')}")
    decoder = d.box(rx, 9.6, 18.0, 2.0, "recurrent decoder", name="a recurrent decoder")
    d.arrow(encoder, scores, said="")
    d.arrow(scores, decoder, said="")
    d.label(rx, 14.2, "An encoder block, × 6", anchor="start", bold=True)
    block = d.box(rx, 15.0, 18.0, 2.6, ["attention → add & norm", f"({_tag('pre')})"],
                  href=_href("pre"), name=f"an encoder block's attention, {_tag('pre')}")
    ffn = d.box(rx, 18.8, 18.0, 2.0, "FFN → add & norm", name="its feed-forward network")
    d.arrow(block, ffn, said="")
    d.label(rx, 24.0, "Around them all", anchor="start", bold=True)
    d.box(rx, 24.8, 8.5, 2.6, ["cost", f"({_tag('cost')})"], href=_href("cost"),
          name=f"the cost of attention, {_tag('cost')}")
    d.box(rx + 9.5, 24.8, 8.5, 2.6, ["training", f"({_tag('learn')})"], href=_href("learn"),
          name=f"attention that learns, {_tag('learn')}")
    d.box(rx, 28.4, 18.0, 2.6, ["a fixed-size state:", f"linear attention ({_tag('mem')})"],
          href=_href("mem"), name=f"linear attention, a state of fixed size, {_tag('mem')}")
    return d


if __name__ == "__main__":  # python -m pages.ui.figures.models > docs/course_map.svg
    print(course_map(14).svg())


def sub(name: str, index: int) -> str:
    """``h`` and 3 as h₃."""
    return f"{name}{subscript(index)}"


def bottleneck_models(letters: list[str], step: int, weights, font: int) -> Diagram:
    """Lesson 0's two models on the example string: the encoder chain h₁ … hₙ, then the
    fixed-context decoder, which reads hₙ at every step, and the attention decoder, which
    reads every h_j at step ``step`` with the weights α (arrow widths; None before the
    model is trained, drawn as dashed arrows of no width). The states close up as the
    string grows, so that any length the lesson trains on fits in about 55 em."""
    n = len(letters)
    if not 1 <= step <= n:
        raise ValueError(f"the step must be in 1..{n}, got {step}")
    pitch = min(3.4, 52.0 / n)
    w = min(2.8, pitch - 0.5)
    d = Diagram(f"Lesson 0's two models on the example string of {n} letters", font)

    def row(y: float, name: str, chosen: int | None = None, above: list | None = None):
        boxes = []
        for i in range(1, n + 1):
            x = 1.0 + (i - 1) * pitch
            if above:
                d.label(x + w / 2, y - 0.45, above[i - 1], said=False)
            boxes.append(d.box(x, y, w, 2.0, sub(name, i), highlight=i == chosen, name=""))
            if i > 1:
                d.arrow(boxes[-2], boxes[-1], said="")
        return boxes

    last = sub("h", n)
    d.label(0.5, 1.2, f"Fixed context: every decoder step reads {last} alone",
            anchor="start", bold=True, said=False)
    d.order.append(f"Fixed context: an encoder reads the {n} letters "
                   f"{' '.join(letters)} into states h₁ to {last}; the decoder's steps s₁ to "
                   f"{sub('s', n)} all read {last} alone")
    h_n = row(2.9, "h", above=letters)[-1]
    for target in row(7.9, "s"):
        d.arrow(_below(h_n), _above(target), said="")
    top = 10.6
    d.label(0.5, top + 1.2, f"Attention: step {step} reads every h_j, weighted by α",
            anchor="start", bold=True, said=False)
    states = row(top + 2.9, "h", above=letters)
    chosen = row(top + 7.9, "s", chosen=step)[step - 1]
    if weights is None:
        d.order.append(f"Attention: step {step} reads every state (not trained yet: no "
                       "weights to show)")
        for state in states:
            d.arrow(_below(state), _above(chosen), dashed=True, said="")
        legend = "Dashed: the models are not trained yet, so there are no weights to show."
    else:
        alpha = [float(a) for a in weights]
        if len(alpha) != n:
            raise ValueError(f"{n} letters need {n} weights, got {len(alpha)}")
        d.order.append(f"Attention: step {step} reads every state, with weights "
                       + ", ".join(f"{sub('h', s)} {a:.2f}" for s, a in
                                   enumerate(alpha, start=1)))
        for state, a in zip(states, alpha, strict=True):
            d.arrow(_below(state), _above(chosen), weight=min(max(a, 0.0), 1.0), said="")
        legend = f"An arrow's width is its weight α: step {step}'s row of the alignment."
    d.label(0.5, top + 11.3, legend, anchor="start", dim=True, said=False)
    return d


def _below(box) -> tuple[float, float]:
    return box.centre[0], box.y + box.h


def _above(box) -> tuple[float, float]:
    return box.centre[0], box.y


def _shape(rows: int, cols: int) -> str:
    return f"({rows} × {cols})"


def _wide_enough(width: float, *texts: str) -> float:
    """``width`` (em), or wider when one of ``texts`` needs it (large shapes)."""
    return max(width, *(text_width(t) + 0.6 for t in texts))


def attention_flow(T: int, d_k: int, d_v: int, font: int, *, d_model: int | None = None,
                   step: int | None = None, cell: tuple[str, str] | None = None,
                   scaled: bool = True, mask=None, tokens: list[str] | None = None,
                   position: str | None = None, Tk: int | None = None,
                   cell_at: tuple[int, int] | None = None, mask_name: str = "mask",
                   top: float = 0.0) -> Diagram:
    """Scaled dot-product attention as a flow: X → W_Q, W_K, W_V → Q, K, V → QKᵀ → ÷√d_k
    → (mask) → softmax → × V → output, every box with its shape.

    ``d_model``: the width of X (None when Q, K and V are given, not computed from X).
    ``step`` (1 scores, 2 scaling, 3 softmax, 4 weighted sum) is highlighted, and so is
    ``cell`` (query, key) where it is computed. ``mask`` (Tq × Tk booleans, True = may
    attend) is drawn as a small grid entering before the softmax. ``position`` marks
    where a positional scheme enters: "x" (added to X), "qk" (rotating q and k) or
    "scores" (a bias on the scores). ``cell_at`` (row, column), from 0, draws the cell
    ``cell`` names as a marked cell of a small T × Tk grid under QKᵀ (and of the mask).
    ``mask_name`` names the grid ("causal mask"); ``top`` (em) moves the flow down, leaving
    room above it for a lesson's own parts (or up, when negative: the flow's first em is
    empty).
    """
    Tk = T if Tk is None else Tk
    if min(T, Tk, d_k, d_v) < 1:
        raise ValueError(f"shapes must be positive, got T={T}, Tk={Tk}, d_k={d_k}, d_v={d_v}")
    d = Diagram("Attention, step by step, with the shapes of this example", font)
    where = f", cell ({cell[0]}, {cell[1]})" if cell else ""
    y, h, gap = 3.0 + top, 3.8, 1.4
    x = 0.5
    if d_model is not None:
        inputs = d.box(x, y + 3.45 - h / 2, _wide_enough(5.0, _shape(T, d_model)), h,
                       ["X", _shape(T, d_model)],
                       highlight=position == "x", name=f"X, {T} tokens × d_model {d_model}"
                       + (", positions added to it" if position == "x" else ""))
        x += inputs.w + gap
    width = 7.6
    q = d.box(x, y - 1.7, width, 2.6, ["Q = X·W_Q" if d_model else "Q", _shape(T, d_k)],
              highlight=position == "qk", name=f"Q{' = X·W_Q' * bool(d_model)}, {T} × {d_k}")
    k = d.box(x, y + 1.9, width, 2.6, ["K = X·W_K" if d_model else "K", _shape(Tk, d_k)],
              highlight=position == "qk", name=f"K{' = X·W_K' * bool(d_model)}, {Tk} × {d_k}")
    v = d.box(x, y + 6.6, width, 2.6, ["V = X·W_V" if d_model else "V", _shape(Tk, d_v)],
              name=f"V{' = X·W_V' * bool(d_model)}, {Tk} × {d_v}")
    if d_model is not None:
        for target in (q, k, v):
            ty = target.centre[1]
            d.arrow((inputs.x + inputs.w, min(max(ty, inputs.y + 0.6), inputs.y + h - 0.6)),
                    (target.x, ty), said="")
    x += width + gap
    scores = d.box(x, y, _wide_enough(5.2, _shape(T, Tk)), h, ["QKᵀ", _shape(T, Tk)],
                   highlight=step == 1,
                   name=f"scores QKᵀ, {T} × {Tk}" + (where if step == 1 else "")
                   + (", plus a bias by offset" if position == "scores" else ""))
    d.arrow(q, scores, said="")
    d.arrow(k, scores, said="")
    chain = [scores]
    x += scores.w + gap
    if position == "scores":
        bias = d.box(scores.x, y + h + 1.0, 5.2, 2.6, ["+ bias", "by offset"],
                     highlight=True, name="")
        d.arrow(bias, scores, said="")
    label = "÷ √d_k" if scaled else "not scaled"
    root = d_k ** 0.5
    root = f"√{d_k} = {root:.0f}" if root == round(root) else f"√{d_k} ≈ {root:.3g}"
    scale = d.box(x, y, _wide_enough(6.2, root), h, [label, root if scaled else "× 1"],
                  highlight=step == 2, dim=not scaled,
                  name=(f"divided by √d_k = √{d_k}" if scaled else "not scaled")
                  + (where if step == 2 else ""))
    chain.append(scale)
    x += scale.w + gap
    if mask is not None:
        import numpy as np

        grid = np.asarray(mask, dtype=bool)
        size = 4.4
        m = d.box(x, y, size + 0.8, h + 1.6, [""], name="")
        n_r, n_c = grid.shape
        cell_em = size / max(n_r, n_c)
        for r in range(n_r):
            for c in range(n_c):
                d.rect(x + 0.4 + c * cell_em, y + 0.4 + r * cell_em, cell_em, cell_em,
                       "#FFFFFF" if grid[r, c] else "#8C8F99")
        if cell_at is not None:  # outlined, its fill kept: dark when the mask hides it
            _mark_cell(d, x + 0.4, y + 0.4, cell_em, *cell_at, fill=None)
        d.label(x + (size + 0.8) / 2, y + h + 2.9, mask_name, said=False)
        masked = int((~grid).sum())
        d.order.append(f"then the {mask_name}, {n_r} × {n_c}: {masked} of {grid.size} pairs may "
                       "not attend (dark cells), their scores set to −∞")
        chain.append(m)
        x += size + 0.8 + gap
    soft = d.box(x, y, 6.2, h, ["softmax", "by row"], highlight=step == 3,
                 name="softmax along each row" + (where if step == 3 else ""))
    chain.append(soft)
    x += 6.2 + gap
    times_v = d.box(x, y, 4.6, h, "× V", highlight=step == 4,
                    name="times V" + (f", output row {cell[0]}" if cell and step == 4 else ""))
    chain.append(times_v)
    x += 4.6 + gap
    out = d.box(x, y, _wide_enough(5.6, _shape(T, d_v)), h, ["output", _shape(T, d_v)],
                name=f"the output, {T} × {d_v}")
    chain.append(out)
    for a, b in zip(chain, chain[1:], strict=False):
        d.arrow(a, b, said="")
    # V joins the weighted sum from below.
    vy = v.y + v.h / 2
    d.line([(v.x + v.w, vy), (times_v.centre[0], vy)])
    d.arrow((times_v.centre[0], vy), (times_v.centre[0], times_v.y + times_v.h), said="")
    if cell and cell_at is not None and position != "scores":
        i, j = cell_at
        if not (0 <= i < T and 0 <= j < Tk):
            raise ValueError(f"the cell ({i}, {j}) is not in a {T} × {Tk} grid")
        size = 3.0
        em = size / max(T, Tk)
        gx, gy = scores.x + 0.3, y + h + 0.6
        for r in range(T):
            for c in range(Tk):
                d.rect(gx + c * em, gy + r * em, em, em, "#FFFFFF")
        _mark_cell(d, gx, gy, em, i, j)
        d.label(gx + size + 0.5, gy + 1.2, "written out:", anchor="start", dim=True,
                said=False)
        d.label(gx + size + 0.5, gy + 2.5, f"query {i + 1}, key {j + 1}", anchor="start",
                said=False)
        hidden = mask is not None and not bool(mask[i][j])
        d.order.append(f"the cell followed, marked: query {i + 1} ({cell[0]}), key {j + 1} "
                       f"({cell[1]})" + (", hidden by the mask" if hidden else ""))
    elif cell:
        d.label(scores.x, y + h + 1.2 if position != "scores" else y + h + 4.4,
                f"cell ({cell[0]}, {cell[1]}) followed", anchor="start", dim=True,
                said=False)
    del tokens
    return d


def _mark_cell(d: Diagram, x: float, y: float, em: float, row: int, col: int, *,
               fill: str | None = HIGHLIGHT_FILL) -> None:
    """Mark one cell of a grid drawn at (x, y) with cells of ``em``: a thick dark outline
    (seen without its colour) and ``fill`` (None: the grid's own)."""
    x0, y0, t = x + col * em, y + row * em, 0.14  # drawn after the grid, over it
    if fill is not None:
        d.rect(x0, y0, em, em, fill)
    for bx, by, bw, bh in ((x0 - t / 2, y0 - t / 2, em + t, t), (x0 - t / 2, y0 + em - t / 2,
                                                                  em + t, t),
                           (x0 - t / 2, y0 - t / 2, t, em + t), (x0 + em - t / 2, y0 - t / 2,
                                                                  t, em + t)):
        d.rect(bx, by, bw, bh, TEXT_COLOUR, TEXT_COLOUR)


def _block_row(d: Diagram, parts, y: float, gap: float) -> list:
    """A block's parts left to right from x = 0.5 at height ``y``, each box (lines, name)
    as wide as its longest line and 4.4 em high, joined by arrows; the boxes."""
    x, boxes = 0.5, []
    for lines, name in parts:
        w = max(text_width(t) for t in lines) + 1.0
        boxes.append(d.box(x, y, w, 4.4, lines, name=name))
        if len(boxes) > 1:
            d.arrow(boxes[-2], boxes[-1], said="")
        x += w + gap
    return boxes


def _residual_stream(d: Diagram, skips, gap: float, top: float) -> None:
    """The residual stream: for each (source, add), a line that leaves between ``source``
    and the next box, runs above the row at height ``top`` and comes down into ``add``."""
    for source, add in skips:
        fork = source.x + source.w + gap / 2
        d.line([(fork, source.centre[1]), (fork, top), (add.centre[0], top)])
        d.arrow((add.centre[0], top), (add.centre[0], add.y), said="")


def encoder_block(T: int, layer: int, head: int, font: int, *, n_layers: int, n_heads: int,
                  d_model: int, d_ff: int, activation: str) -> Diagram:
    """Lesson 9's encoder block as the loaded model's config has it, post-norm: attention
    → add & norm → feed-forward → add & norm, the shapes for a sentence of ``T`` tokens,
    with layer ``layer`` of ``n_layers`` and head ``head`` of ``n_heads`` highlighted."""
    if min(T, n_layers, n_heads, d_model, d_ff) < 1 or d_model % n_heads:
        raise ValueError(f"an encoder needs positive sizes and d_model divisible by the "
                         f"heads, got T={T}, d_model={d_model}, {n_heads} heads, d_ff={d_ff}")
    if not (1 <= layer <= n_layers and 1 <= head <= n_heads):
        raise ValueError(f"layer {layer} of {n_layers} or head {head} of {n_heads} is not "
                         "in the model")
    d_k, act, tokens = d_model // n_heads, activation.upper(), f"{T} × {d_model}"
    d = Diagram(f"MiniLM's encoder block (post-norm), layer {layer} of {n_layers}, on your "
                f"{T} tokens", font)
    came = "embeddings" if layer == 1 else f"from layer {layer - 1}"
    goes = "to pooling" if layer == n_layers else f"to layer {layer + 1}"
    parts = [
        ([came, tokens], ("in: the embeddings" if layer == 1 else
                          f"in: layer {layer - 1}'s output") + f", {tokens}"),
        (["attention", f"{n_heads} heads, d_k = {d_k}", f"→ {tokens}"],
         f"attention, {n_heads} heads of d_k = {d_k}, back to {tokens}"),
        (["add &", "norm"], "add & norm: plus its input (residual), then LayerNorm"),
        (["feed-forward", f"{T} × {d_ff}, {act}", f"→ {tokens}"],
         f"feed-forward, {T} × {d_ff} hidden, {act}, back to {tokens}"),
        (["add &", "norm"], "add & norm"),
        ([goes, tokens], ("out: to mean pooling (the sentence embedding)" if layer == n_layers
                          else f"out: to layer {layer + 1}") + f", {tokens}"),
    ]
    y, gap, top = 2.6, 1.6, 1.4
    boxes = _block_row(d, parts, y, gap)
    # the residual stream leaves each sublayer's input above it
    _residual_stream(d, ((boxes[0], boxes[2]), (boxes[2], boxes[4])), gap, top)
    d.label((boxes[0].x + boxes[0].w + boxes[2].centre[0] + gap / 2) / 2, top - 0.35,
            "residual", dim=True, size=0.85, said=False)
    attention = boxes[1]
    pitch = min(0.8, (attention.w - 0.4) / n_heads)  # one lane per head under attention
    lane_y, left = y + 5.0, attention.centre[0] - pitch * n_heads / 2
    for n in range(1, n_heads + 1):
        lane = d.box(left + (n - 1 + 0.125) * pitch, lane_y, pitch * 0.75, 1.8, [],
                     highlight=n == head, name="")
    chosen = left + (head - 0.5) * pitch
    d.label(left - 0.4, lane_y + 1.25, "heads", anchor="end", dim=True, said=False)
    lines = [f"head {head} of {n_heads}: q, k, v {T} × {d_k}",
             f"weights softmax(QKᵀ/√{d_k}) {T} × {T}"]
    w, ffn = max(text_width(t) for t in lines) + 1.0, boxes[3]
    callout = d.box(max(0.5, min(chosen - w / 2, ffn.x - 0.6 - w)), lane_y + lane.h + 0.6,
                    w, 3.1, lines,
                    highlight=True, name=f"head {head} of {n_heads}: q, k, v {T} × {d_k}, "
                    f"weights softmax(QKᵀ/√{d_k}) {T} × {T}")
    d.arrow((chosen, lane_y + lane.h), (chosen, callout.y), highlight=True, said="")
    d.label(ffn.x - 0.4, lane_y + 1.25, "layer", anchor="end", dim=True, said=False)
    for n in range(1, n_layers + 1):
        d.box(ffn.x + (n - 1) * 2.4, lane_y, 2.0, 1.8, str(n), highlight=n == layer, name="")
    d.order.append(f"layer {layer} of {n_layers} (highlighted), each layer this block with "
                   "its own weights")
    d.label(ffn.x, lane_y + 3.4, f"× {n_layers} layers, each with its own weights",
            anchor="start", dim=True, said=False)
    return d


def _root_text(n: int) -> str:
    """√n after its sign: "= 2" when whole, "≈ 1.41" when rounded (√2 is not 1.41)."""
    root = n ** 0.5
    return f"= {root:.0f}" if root == round(root) else f"≈ {root:.3g}"


def attention_steps(T: int, d_k: int, d_v: int, step: int, font: int, *, scaled: bool = True,
                    masked: bool = False) -> Diagram:
    """Lesson 1's four steps in one row, step ``step`` (1 to 4) highlighted: S = QKᵀ →
    ÷ √d_k (and the mask, both step 2) → softmax → O = W·V, each with its shape."""
    if not 1 <= step <= 4 or min(T, d_k, d_v) < 1:
        raise ValueError(f"a step in 1..4 and positive shapes, got step {step}, T={T}, "
                         f"d_k={d_k}, d_v={d_v}")
    d = Diagram(f"Step {step} of 4 in the flow of attention", font)
    parts = [(1, f"S = QKᵀ {_shape(T, T)}"),
             (2, f"÷ √{d_k} {_root_text(d_k)}" if scaled else "not scaled")]
    parts += [(2, "causal mask")] if masked else []
    parts += [(3, f"softmax → W {_shape(T, T)}"), (4, f"O = W·V {_shape(T, d_v)}")]
    x, previous = 0.5, None
    for n, text in parts:
        w = text_width(text) + 1.0
        box = d.box(x, 0.5, w, 1.8, text, highlight=n == step, dim=text == "not scaled")
        if previous is not None:
            d.arrow(previous, box, said="")
        previous, x = box, x + w + 1.2
    return d


MAX_LANES = 8  # head lanes drawn; beyond, runs of heads are drawn as one "…" row


def head_lanes(H: int, head: int | None = None) -> list[int | tuple[int, int]]:
    """The heads drawn as lanes (from 0): every head up to MAX_LANES, else the first four,
    the chosen ``head`` and the last, each run of heads between them as (first, last)."""
    if H <= MAX_LANES:
        return list(range(H))
    keep = sorted({0, 1, 2, 3, H - 1} | ({head} if head is not None else set()))
    rows: list[int | tuple[int, int]] = []
    for a, b in zip(keep, [*keep[1:], None], strict=True):
        rows.append(a)
        if b is not None and b > a + 1:
            rows.append((a + 1, b - 1))
    return rows


def multi_head_flow(T: int, d_model: int, H: int, font: int, *, head: int | None = None,
                    causal: bool = False, Tk: int | None = None) -> Diagram:
    """Lesson 4's layer: X → Q, K, V → split into H lanes of d_k = d_model / H → each
    head's attention → concatenation → × W_O → output, with the shapes for ``T`` tokens.
    ``head`` (from 0) is highlighted. With ``Tk``: cross-attention, the queries from the
    target (``T`` tokens), the keys and values from the source (``Tk`` tokens)."""
    if min(T, d_model, H) < 1 or d_model % H or (Tk is not None and Tk < 1):
        raise ValueError(f"d_model must split into H heads, got T={T}, Tk={Tk}, "
                         f"d_model={d_model}, H={H}")
    if head is not None and not 0 <= head < H:
        raise ValueError(f"head {head + 1} is not one of the {H} heads")
    cross, Tk, d_k = Tk is not None, T if Tk is None else Tk, d_model // H
    heads = f"{H} head{'s' * (H > 1)}"
    d = Diagram(f"Cross-attention with {heads}: queries from the target, keys and values "
                "from the source" if cross else f"Self-attention with {heads}: queries, keys "
                "and values all from the same sentence", font)
    rows, pitch, top = head_lanes(H, head), 2.3, 4.6 if cross else 3.4
    # What H and d_k make, top left, above the inputs (centred on the lanes below it).
    notes = [f"{heads} × d_k {d_k}", f"= d_model {d_model}"]
    notes += ["causal mask on"] if causal else []
    for n, text in enumerate(notes):
        d.label(0.5, 1.2 + n * LINE_EM, text, anchor="start", dim=True, said=False)
    stack = 4.05 if cross else 2.85  # half the height of the inputs' column
    mid = max(top + (len(rows) * pitch - 0.5) / 2, 1.2 + len(notes) * LINE_EM + stack)
    xa, wa, wb, wc = 16.7, 7.6, 5.8, 5.0  # the lanes' three columns
    xb, xc = xa + wa + 1.0, xa + wa + wb + 2.0
    if cross:
        src_y = mid - 4.05 + 3.7
        pairs = [(["target", _shape(T, d_model)], ["Q = X·W_Q", _shape(T, d_model)],
                  mid - 4.05, f"The target's {T} tokens × d_model {d_model}",
                  f"its queries Q = X·W_Q, {T} × {d_model}"),
                 (["source", _shape(Tk, d_model)], ["K = X·W_K", "V = X·W_V",
                                                    _shape(Tk, d_model)], src_y,
                  f"the source's {Tk} tokens × d_model {d_model}",
                  f"its keys and values K = X·W_K, V = X·W_V, {Tk} × {d_model} each")]
    else:
        pairs = [(["X", _shape(T, d_model)], ["Q = X·W_Q", "K = X·W_K", "V = X·W_V",
                                              _shape(T, d_model)], mid - 2.85,
                  f"X, {T} tokens × d_model {d_model}",
                  f"Q, K, V = X·W_Q, X·W_K, X·W_V, {T} × {d_model} each")]
    projections = []
    for inp, proj, y, inp_name, proj_name in pairs:
        p = d.box(8.1, y, 6.8, 3.1, proj, name="")
        i = d.box(0.5, p.centre[1] - 1.55, 6.4, 3.1, inp, name=inp_name)
        d.order.append(proj_name)
        d.arrow(i, p, said="")
        projections.append(p)
    # Column titles over the lanes, bold, and the shapes every lane shares under them.
    shapes = [f"Qʰ: {T} × {d_k}", f"Kʰ, Vʰ: {Tk} × {d_k}"] if cross else [
        f"{_shape(T, d_k)} each"]
    for x, w, lines in ((xa, wa, ["Qʰ, Kʰ, Vʰ", *shapes]), (xb, wb, ["weights", _shape(T, Tk)]),
                        (xc, wc, ["head out", _shape(T, d_k)])):
        for n, text in enumerate(lines):
            d.label(x + w / 2, top - 0.7 - (len(shapes) - n) * LINE_EM, text, bold=n == 0,
                    said=False)
    drawn = sum(isinstance(r, int) for r in rows)
    d.order.append(f"split into {heads} of d_k = {d_model} / {H} = {d_k}"
                   + (f", drawn as {H} lane{'s' * (H > 1)}" if drawn == H else
                      f", {drawn} of them drawn as lanes and the rest as “…”")
                   + f"; each head: Qʰ {T} × {d_k}, Kʰ and Vʰ {Tk} × {d_k}, weights "
                   f"softmax(QʰKʰᵀ/√{d_k}{' + causal mask' if causal else ''}) {T} × {Tk}, "
                   f"output {T} × {d_k}")
    ends, lanes = [], []
    for n, row in enumerate(rows):
        y = top + n * pitch
        if isinstance(row, tuple):
            first, last = row
            d.label(xa + (wa + wb + wc + 2.0) / 2, y + 1.2,
                    f"… heads {first + 1} to {last + 1} …", dim=True, said=False)
            d.order.append(f"heads {first + 1} to {last + 1}: {last - first + 1} lanes "
                           "drawn as “…”")
            continue
        chosen = row == head
        a = d.box(xa, y, wa, 1.8, f"head {row + 1}", highlight=chosen,
                  name=f"head {row + 1}")
        b = d.box(xb, y, wb, 1.8, "softmax", highlight=chosen, name="")
        c = d.box(xc, y, wc, 1.8, "· Vʰ", highlight=chosen, name="")
        if cross:  # Q and K, V meet on one line that feeds every head (no crossings)
            d.arrow((xa - 0.9, a.centre[1]), (a.x, a.centre[1]), said="")
        for source in projections[:not cross]:
            sy = min(max(a.centre[1], source.y + 0.6), source.y + source.h - 0.6)
            d.arrow((source.x + source.w, sy), (a.x, a.centre[1]), said="")
        ends.append(c)
        lanes.append(a.centre[1])
        d.arrow(a, b, said="")
        d.arrow(b, c, said="")
    if cross:
        ys = [p.centre[1] for p in projections] + lanes
        d.line([(xa - 0.9, min(ys)), (xa - 0.9, max(ys))])
        for source in projections:
            d.line([(source.x + source.w, source.centre[1]), (xa - 0.9, source.centre[1])])
    concat = d.box(xc + wc + 1.8, mid - 2.85, 7.6, 5.7,
                   ["concat", f"({T} × {H}·{d_k})", "× W_O", _shape(d_model, d_model)],
                   name=f"concatenated, {T} × {H}·{d_k} = {T} × {d_model}, times W_O, "
                   f"{d_model} × {d_model}")
    for c in ends:
        cy = min(max(c.centre[1], concat.y + 0.6), concat.y + concat.h - 0.6)
        d.arrow((c.x + c.w, c.centre[1]), (concat.x, cy), said="")
    out = d.box(concat.x + concat.w + 1.2, mid - 1.55, 6.6, 3.1, ["output", _shape(T, d_model)],
                name=f"the output, {T} × {d_model}")
    d.arrow(concat, out, said="")
    return d


PAD_FILL = "#8C8F99"  # a <pad> position: the grey of a masked cell in the mask's grid


def masked_flow(batch: list[list[str]], lengths, chosen: int, mask, kind: str,
                d_model: int, font: int, *, pad: str = "<pad>",
                radius: int | None = None) -> Diagram:
    """Lesson 3's model: the padded batch, one box per sentence with its tokens and its
    ``pad`` positions (grey cells), the ``chosen`` sentence (from 0) highlighted and taken
    as X, then lesson 1's flow with the ``kind`` mask (T × T, True = may attend) entering
    between the scaling and the softmax (``radius``: the window mask's r)."""
    if not 0 <= chosen < len(batch):
        raise ValueError(f"sentence {chosen + 1} is not in a batch of {len(batch)}")
    T = len(batch[chosen])
    name = "no mask" if kind == "none" else f"{kind} mask" + (
        f", r = {radius}" if radius is not None else "")
    d = attention_flow(T, d_model, d_model, font, d_model=d_model, mask=mask, mask_name=name,
                       top=-1.0)
    d.title = f"Attention with {name} on sentence {chosen + 1}, padded to T = {T}"
    x_box = next(b for b in d.boxes if b.lines[:1] == ("X",))
    flow, corridor = len(d.order), d.size()[1] - 0.1  # 0.4 em below the flow
    top, w = corridor + 0.6, 12.4
    d.order.append(f"The batch: {len(batch)} sentences padded with {pad} to T = {T}")
    for b, (tokens, n) in enumerate(zip(batch, lengths, strict=True)):
        n = int(n)
        words = f"{n} token{'s' if n != 1 else ''}"
        name = f"sentence {b + 1}: {words} and {T - n} {pad}"
        box = d.box(0.5 + b * (w + 1.0), top, w, 3.6, [], highlight=b == chosen,
                    name=name + (f", “{' '.join(tokens[:n])}”, is X" if b == chosen else ""))
        for row, text in ((1.2, f"sentence {b + 1}"), (2.4, f"{words} + {T - n} {pad}")):
            d.label(box.centre[0], top + row, text, bold=b == chosen, said=False)
        cell = min(0.55, (w - 1.0) / T)  # its tokens, then its pads, under the two lines
        for t in range(T):
            d.rect(box.x + (w - cell * T) / 2 + t * cell, top + 2.75, cell, cell,
                   "#FFFFFF" if t < n else PAD_FILL)
        if b == chosen:
            sx, xx = box.centre[0], x_box.centre[0]
            d.line([(sx, top), (sx, corridor), (xx, corridor)])
            d.arrow((xx, corridor), (xx, x_box.y + x_box.h), said="")
    d.order[:] = d.order[flow:] + d.order[:flow]  # the batch first, then the flow
    return d


#: Where each positional scheme enters lesson 1's flow, in lesson 5's order: added to X,
#: rotating q and k, a term q·a inside QKᵀ (relative: a vector a added to the key), or a
#: bias added to the scaled scores, after ÷ √d_k (ALiBi).
SCHEME_ENTRIES = {"sinusoidal": "x", "learned": "x", "RoPE": "qk", "ALiBi": "scaled",
                  "relative": "scores"}


def positional_flow(T: int, d_model: int, scheme: str, font: int) -> Diagram:
    """Lesson 5's model: lesson 1's flow for ``T`` positions of width ``d_model``, and
    above it where each scheme enters: a table P added to X (sinusoidal, learned), a
    rotation of q and k (RoPE), a learned vector per clipped offset added to each key, so
    a term q·a in QKᵀ (relative), a bias by offset added after ÷ √d_k (ALiBi); ``scheme``
    is highlighted, with the part of the flow it changes (for ALiBi, the link from ÷ √d_k
    to the softmax)."""
    if scheme not in SCHEME_ENTRIES:
        raise ValueError(f"the scheme must be one of {', '.join(SCHEME_ENTRIES)}, got {scheme}")
    where = SCHEME_ENTRIES[scheme]
    d = attention_flow(T, d_model, d_model, font, d_model=d_model,
                       position=where if where in ("x", "qk") else None,
                       step=1 if where == "scores" else None, top=3.2)
    d.title = f"Where position enters attention ({T} positions, d_model {d_model}): {scheme}"
    first = {"x": ("X",), "qk": ("Q = X·W_Q",), "scores": ("QKᵀ",), "scaled": ("÷ √d_k",)}
    targets = {key: next(b for b in d.boxes if b.lines[:1] == line)
               for key, line in first.items()}
    scaled = targets["scaled"]
    # ALiBi's arrow ends on the link from ÷ √d_k to the softmax, coming down the gap
    # between them from a corridor above the flow.
    ends = {key: (box.centre[0], box.y) for key, box in targets.items()}
    ends["scaled"] = (scaled.x + scaled.w + 0.7, scaled.centre[1])
    groups = (("x", ("sinusoidal", "learned"), f"+ P {_shape(T, d_model)} to X",
               f"a table P, {T} × {d_model}, added to X"),
              ("qk", ("RoPE",), "rotates q and k", "each query and key rotated by its position"),
              ("scores", ("relative",), "+ q·a in QKᵀ",
               "a learned vector a per clipped offset added to each key, so a term q·a, "
               "by query and offset, in QKᵀ"),
              ("scaled", ("ALiBi",), f"+ bias {_shape(T, T)}",
               f"a bias by offset, {T} × {T}, added after ÷ √d_k, before the softmax"))
    x = 0.5
    for key, names, action, said in groups:
        others = " or ".join(n for n in names if n != scheme)
        shown = (f"{scheme} (or {others})" if others else scheme) if scheme in names \
            else " or ".join(names)
        lines = [action, shown]
        w = max(text_width(t) for t in lines) + 1.2
        box = d.box(x, 0.2, w, 3.1, lines, highlight=scheme in names,
                    name=f"{' or '.join(names)}: {said}")
        if key == "scaled":  # down to the corridor, across, then down the gap
            (gx, gy), corridor = ends[key], (box.y + box.h + scaled.y) / 2
            d.line([_below(box), (box.centre[0], corridor), (gx, corridor)],
                   width=3.0 if scheme in names else 1.5)
            d.arrow((gx, corridor), (gx, gy), highlight=scheme in names, said="")
        else:
            d.arrow(box, ends[key], highlight=scheme in names, said="")
        x += w + 1.0
    return d


# ---- lesson 12: the clean and the corrupted run, one activation copied across ------------

RUN_MODES = ("residual", "head", "knockout", "attribution")
_RUN_COLUMN, _RUN_GAP = 24.5, 5.0  # a run's column and the gap the copy crosses (em)
_RUN_PIECE = 9  # characters of a token drawn; a longer one is cut with "…"
_RUN_DOTS = 1.6  # the width of a "…" that stands for positions not drawn
_RUN_HEAD_ROW = 3.9  # the height of the row of a layer's heads


def _run_piece(token: str) -> str:
    return token if len(token) <= _RUN_PIECE else token[:_RUN_PIECE - 1] + "…"


def _run_layers(first: int, last: int) -> str:
    """Layers ``first`` to ``last`` (from 0), counted from 1: "layer 4", "layers 1–3"."""
    return f"layer {first + 1}" if first == last else f"layers {first + 1}–{last + 1}"


def _run_prompt(tokens: list[str]) -> str:
    """A prompt as its tokens spell it: “The capital of France is”."""
    return "“" + "".join(tokens).replace("␣", " ").strip() + "”"


def _run_lanes(clean: list[str], corrupt: list[str], need: list[int]
               ) -> list[tuple[int | None, float, float]]:
    """The positions a column draws, as (position, or None for a "…"; left; width) in em
    from the column's left: ``need`` first, in that order, then the nearest others while
    the column holds them; the room left over is shared out."""
    T = len(clean)
    widths = [max(2.4, text_width(_run_piece(max(a, b, key=len))) + 0.6)
              for a, b in zip(clean, corrupt, strict=True)]

    def items(shown: set[int]) -> list[int | None]:
        s = sorted(shown)
        out: list[int | None] = [None] if s[0] > 0 else []
        for a, b in zip(s, s[1:] + [T], strict=True):
            out += [a] + ([None] if b > a + 1 else [])
        return out

    def width(shown: set[int]) -> float:
        return sum(_RUN_DOTS if p is None else widths[p] for p in items(shown))

    shown: set[int] = set()
    for p in dict.fromkeys(need + sorted(range(T), key=lambda p: (
            min(abs(p - q) for q in need), p))):
        if len(shown) < 3 or width(shown | {p}) <= _RUN_COLUMN:  # any three fit
            shown.add(p)
    drawn = items(shown)
    extra = (_RUN_COLUMN - width(shown)) / len(drawn)
    lanes, x = [], 0.0
    for p in drawn:
        w = (_RUN_DOTS if p is None else widths[p]) + extra
        lanes.append((p, x, w))
        x += w
    return lanes


def _run_rows(n_layers: int, drawn: set[int], window: tuple[int, int] | None) -> list[tuple]:
    """A column's rows: ("embedding",), ("layer", n) for each drawn layer, ("window", first,
    last), ("layers", first, last) for each run of layers between them, ("unembedding",)."""
    rows: list[tuple] = [("embedding",)]
    layer = 0
    while layer < n_layers:
        if window and layer == window[0]:
            rows.append(("window", *window))
            layer = window[1] + 1
        elif layer in drawn:
            rows.append(("layer", layer))
            layer += 1
        else:
            end = layer
            while (end + 1 < n_layers and end + 1 not in drawn
                   and not (window and end + 1 == window[0])):
                end += 1
            rows.append(("layers", layer, end))
            layer = end + 1
    return rows + [("unembedding",)]


def _largest_ld_part(parts) -> tuple[str, int, int]:
    """The part of LD largest in size (the first of equals, in the order they write):
    ("embedding", 0, 0), ("head", layer, head), ("ffn", layer, 0) or ("biases", 0, 0)."""
    embed, heads, ffn, biases = parts
    heads = np.asarray(heads)
    flat = np.concatenate([[embed], heads.ravel(), np.ravel(ffn),
                           [] if biases is None else [biases]])
    k = int(np.argmax(np.abs(flat))) - 1
    if k < 0:
        return "embedding", 0, 0
    if k < heads.size:
        return "head", k // heads.shape[1], k % heads.shape[1]
    k -= heads.size
    return ("ffn", k, 0) if k < len(ffn) else ("biases", 0, 0)


@dataclass
class _Runs:
    """Two columns of a lesson 12 diagram laid out: their left edges, rows (each with its
    top and height), the positions drawn and where the rows end."""

    d: Diagram
    xs: tuple[float, float]
    rows: list[tuple]
    ys: list[float]
    heights: list[float]
    lanes: list[tuple[int | None, float, float]]
    bottom: float

    def lane_x(self, x: float, position: int) -> float | None:
        return next((x + a + w / 2 for p, a, w in self.lanes if p == position), None)

    def index(self, row: tuple) -> int:
        return next(i for i, r in enumerate(self.rows) if r[:len(row)] == row)

    @property
    def middle(self) -> float:
        return self.xs[0] + _RUN_COLUMN + _RUN_GAP / 2


def _draw_runs(d: Diagram, columns, changed: list[int], lanes, rows: list[tuple],
               heights: list[float], gaps: list[float], chosen: int | None) -> _Runs:
    """Each column's title, its prompt's tokens along the top (the changed ones
    highlighted), the streams running down from them, and its rows of the embedding and
    the layers (row ``chosen`` highlighted); a head's layer, the knockout's window and the
    unembedding are left to the caller."""
    top = max(0.4 + LINE_EM * len(textwrap.wrap(title, width=int(_RUN_COLUMN / CHAR_EM)))
              for _, title, _ in columns)
    ys, y = [], top + 2.1
    for h, gap in zip(heights, gaps, strict=True):
        ys.append(y + gap)
        y += gap + h
    for x, title, tokens in columns:
        for i, line in enumerate(textwrap.wrap(title, width=int(_RUN_COLUMN / CHAR_EM))):
            d.label(x, 1.2 + LINE_EM * i, line, anchor="start", bold=True, said=False)
        if tokens is None:
            continue
        for p, a, w in lanes:
            if p is None:
                d.label(x + a + w / 2, top + 1.55, "…", said=False)
                continue
            d.line([(x + a + w / 2, top + 2.1), (x + a + w / 2, ys[-1])], width=2)
            d.box(x + a + 0.15, top + 0.3, w - 0.3, 1.8, _run_piece(tokens[p]),
                  highlight=p in changed, name="")
        for i, (row, ry, h) in enumerate(zip(rows, ys, heights, strict=True)):
            if row[0] in ("embedding", "layers") or row[0] == "layer" and h != _RUN_HEAD_ROW:
                d.box(x, ry, _RUN_COLUMN, h, "embedding" if row[0] == "embedding" else
                      f"⋮ {_run_layers(row[1], row[2])} ⋮" if row[0] == "layers" else
                      _run_layers(row[1], row[1]), dim=row[0] == "layers", highlight=i == chosen,
                      name="")
    return _Runs(d, (columns[0][0], columns[1][0]), rows, ys, heights, lanes, y)


def _copy_stream(g: _Runs, position: int, layer: int, n_layers: int, token: str) -> float:
    """Mark the stream at ``position`` entering layer ``layer`` + 1 in both runs and copy
    it across; the height of the copy."""
    row = g.index(("layer", layer)) if layer < n_layers else len(g.rows) - 1
    y = g.ys[row] - 0.75  # in the gap above the row
    marks = [g.d.box(g.lane_x(x, position) - 0.6, y - 0.5, 1.2, 1.0, [], highlight=True,
                     name="") for x in g.xs]
    g.d.arrow(*marks, said="")
    where = "the unembedding" if layer == n_layers else _run_layers(layer, layer)
    g.d.order.append(f"the clean stream at position {position + 1}, {token}, entering "
                     f"{where}, is copied into the corrupted run")
    return y


def _copy_head(g: _Runs, layer: int, head: int, n_heads: int) -> float:
    """Draw layer ``layer``'s heads (all of up to 9, else the first two, the last two and
    those beside ``head``) in both runs and copy ``head`` across; the height of the copy."""
    ry = g.ys[g.index(("layer", layer))]
    shown = sorted({0, 1, head - 1, head, head + 1, n_heads - 2, n_heads - 1}
                   & set(range(n_heads))) if n_heads > 9 else list(range(n_heads))
    slots: list[int | None] = []
    for h in shown:
        slots += ([None] if slots and h > slots[-1] + 1 else []) + [h]
    w = (_RUN_COLUMN - 1.0) / len(slots)
    picked = []
    for x in g.xs:
        g.d.box(x, ry, _RUN_COLUMN, _RUN_HEAD_ROW, [], name="")  # hides the streams behind it
        g.d.label(x + 0.6, ry + 1.2, f"{_run_layers(layer, layer)}'s attention: heads before W_O",
                  anchor="start", said=False)
        for k, h in enumerate(slots):
            hx = x + 0.5 + k * w
            if h is None:
                g.d.label(hx + w / 2, ry + 2.95, "…", said=False)
                continue
            box = g.d.box(hx + 0.15, ry + 1.7, w - 0.3, 1.8, f"H{h + 1}", highlight=h == head,
                          name="")
            picked += [box.centre[0]] if h == head else []
    y = ry + _RUN_HEAD_ROW + 0.75  # in the gap below the row
    g.d.line([(picked[0], ry + 3.5), (picked[0], y), (picked[1], y)])
    g.d.arrow((picked[1], y), (picked[1], ry + 3.5), said="")
    g.d.order.append(f"head {head + 1} of the {n_heads} of {_run_layers(layer, layer)}, its output "
                     "before W_O at every position, is copied from the clean run into the "
                     "corrupted run")
    return y


def _run_recovery(g: _Runs, y_copy: float, ld: tuple[float, float], recovery: float) -> None:
    """The copy's label, both runs' LD and the recovery they make."""
    n2 = lambda x: number_text(x, 2)  # noqa: E731
    patched = ld[1] + recovery * (ld[0] - ld[1])
    g.d.label(g.middle, y_copy - 0.35, "copy", size=0.9, said=False)
    g.d.box(g.xs[0], g.ys[-1], _RUN_COLUMN, 1.8, f"unembedding → LD = {n2(ld[0])}", name="")
    g.d.box(g.xs[1], g.ys[-1], _RUN_COLUMN, 1.8, f"LD = {n2(ld[1])} → {n2(patched)} patched",
            name="")
    g.d.label(g.middle, g.bottom + 1.4, "recovery = (patched − corrupted) / (clean − "
              f"corrupted) = {n2(recovery)}", size=0.9, said=False)
    g.d.order.append(f"LD after the clean run {n2(ld[0])}, after the corrupted run {n2(ld[1])}"
                     f", after the patched run {n2(patched)}: recovery {n2(recovery)}")


def _cut_edge(g: _Runs, window: tuple[int, int], changed: list[int], tokens: list[str],
              p_answer: tuple[float, float], answer: str) -> None:
    """The window of layers in both runs, the edges from the changed tokens to the last one
    read in the first and cut in the second, and p(answer) after each."""
    ry, last, span = g.ys[g.index(("window",))], len(tokens) - 1, _run_layers(*window)
    for x, cut in zip(g.xs, (False, True), strict=True):
        g.d.frame(x, ry, _RUN_COLUMN, 3.6)  # the streams run through it
        title = span + (": edge cut" if cut else "")
        g.d.rect(x + 0.3, ry + 0.3, text_width(title) + 0.6, 1.3, "#FFFFFF", "#FFFFFF")
        g.d.label(x + 0.6, ry + 1.2, title, anchor="start", bold=cut, said=False)
        for c in changed:
            if c == last or g.lane_x(x, c) is None:
                continue
            a, b = (g.lane_x(x, c), ry + 1.8), (g.lane_x(x, last), ry + 3.1)
            g.d.arrow(a, b, dashed=cut, said="")
            if cut:
                g.d.label((a[0] + b[0]) / 2, (a[1] + b[1]) / 2 + 0.4, "✕", bold=True,
                          said=False)
    p0, p1 = (number_text(p, 3) for p in p_answer)
    g.d.box(g.xs[0], g.ys[-1], _RUN_COLUMN, 1.8, f"p({answer}) = {p0}", name="")
    g.d.box(g.xs[1], g.ys[-1], _RUN_COLUMN, 1.8, f"p({answer}) = {p1}", highlight=True, name="")
    names = (", ".join(_run_piece(tokens[c]) for c in changed) if len(changed) < 3 else
             f"the {len(changed)} changed tokens")
    g.d.label(g.middle, g.bottom + 1.4, f"In {span} the last token {_run_piece(tokens[last])} "
              f"may not read {names}, in every head.", size=0.9, said=False)
    g.d.order.append(f"in {span} the last token, {tokens[last]}, may not read {names}, in "
                     f"every head: p({answer}) is {p0} with nothing cut, {p1} with the edge "
                     "cut")


def _split_ld(g: _Runs, parts, largest: tuple[str, int, int], ld: float) -> None:
    """Beside each row its part of LD, an arrow as wide as its size into the row; the
    parts' sum beside the unembedding."""
    n2 = lambda x: number_text(x, 2)  # noqa: E731
    embed, heads, ffn, biases = parts
    heads, ffn = np.asarray(heads, dtype=np.float64), np.asarray(ffn, dtype=np.float64)
    kind, layer, head = largest
    sizes = [abs(embed)] + [abs(heads[r[1]:r[-1] + 1].sum() + ffn[r[1]:r[-1] + 1].sum())
                            for r in g.rows[1:-1]]
    said = []
    for row, ry, h, size in zip(g.rows, g.ys, g.heights, sizes, strict=False):
        if row[0] == "embedding":
            lines = [f"embedding {n2(embed)}"]
        else:
            a, b = row[1], row[-1]
            lines = [f"heads {n2(heads[a:b + 1].sum())} · FFN{'s' if b > a else ''} "
                     f"{n2(ffn[a:b + 1].sum())}"]
            if row[0] == "layer":
                lines.append(f"largest: L{a + 1} H{head + 1}, {n2(heads[a, head])}"
                             if kind == "head" else f"largest: FFN {a + 1}, {n2(ffn[a])}")
        said.append(", ".join(lines) if row[0] == "embedding" else
                    f"{_run_layers(row[1], row[-1])}: {', '.join(lines)}")
        box = g.d.box(g.xs[1], ry, _RUN_COLUMN, h, lines, dim=row[0] == "layers", name="",
                      highlight=row[0] == "layer" or kind == row[0] == "embedding")
        g.d.arrow(box, (g.xs[0] + _RUN_COLUMN, ry + h / 2), weight=size / (max(sizes) or 1.0),
                  said="")
    total = float(embed + heads.sum() + ffn.sum() + (biases or 0.0))
    g.d.box(g.xs[0], g.ys[-1], _RUN_COLUMN, 1.8, f"unembedding → LD = {n2(ld)}", name="")
    g.d.box(g.xs[1], g.ys[-1], _RUN_COLUMN, 1.8, ("" if biases is None else
                                             f"biases {n2(biases)} · ") + f"sum = {n2(total)}",
            highlight=kind == "biases", name="")
    g.d.label(g.middle, g.bottom + 1.4, "An arrow's width is the size of its row's part of LD.",
              size=0.9, dim=True, said=False)
    g.d.order.append(f"LD = {n2(ld)} at the last token splits into the parts each row "
                     "writes: " + "; ".join(said) + ("" if biases is None else
                                                     f"; the biases {n2(biases)}")
                     + f"; their sum is {n2(total)}")


def _check_run_args(mode: str, L: int, T: int, T2: int, changed: list[int], layer: int,
                position: int, head: int, n_heads: int, window, parts) -> None:
    if mode not in RUN_MODES:
        raise ValueError(f"the mode must be one of {', '.join(RUN_MODES)}, got {mode!r}")
    if L < 1 or T < 1 or T2 != T:
        raise ValueError(f"two prompts of as many tokens and at least one layer are needed, "
                         f"got {T} and {T2} tokens, {L} layers")
    if not changed or not all(0 <= c < T for c in changed):
        raise ValueError(f"the changed positions must be in 0..{T - 1}, got {changed}")
    if mode == "residual" and not (0 <= layer <= L and 0 <= position < T):
        raise ValueError(f"the stream copied enters layers 0..{L} ({L}: the unembedding) at "
                         f"positions 0..{T - 1}, got layer {layer}, position {position}")
    if mode == "head" and not (0 <= layer < L and 0 <= head < n_heads):
        raise ValueError(f"a head is in layers 0..{L - 1} and heads 0..{n_heads - 1}, got "
                         f"layer {layer}, head {head}")
    if mode == "knockout" and not (window and 0 <= window[0] <= window[1] < L):
        raise ValueError(f"the knockout's window is layers (first, last) in 0..{L - 1}, got "
                         f"{window}")
    if mode == "attribution" and (parts is None or np.shape(parts[1]) != (L, np.shape(
            parts[1])[-1]) or np.shape(parts[2]) != (L,)):
        raise ValueError(f"the parts are (embedding, heads (L, H), FFNs (L,), biases) with "
                         f"L = {L}")


def patching_runs(clean: list[str], corrupt: list[str], changed, font: int, *, mode: str,
                  n_layers: int, ld: tuple[float, float], layer: int = 0,
                  position: int | None = None, head: int = 0, n_heads: int = 1,
                  window: tuple[int, int] | None = None, recovery: float = 0.0,
                  p_answer: tuple[float, float] = (0.0, 0.0), answer: str = "",
                  parts=None, prompts: bool = True) -> Diagram:
    """Lesson 12's runs as two columns of layers, each prompt's tokens along its top (the
    changed ones highlighted), the layers not drawn folded into one row per run of them.

    ``mode`` "residual": the clean stream at ``position`` (the last by default) entering
    layer ``layer`` + 1 (``layer`` from 0; ``n_layers``: entering the unembedding) is
    copied into the corrupted run; "head": head ``head`` of layer ``layer`` (both from 0,
    of ``n_heads``), its output before W_O at every position, is; both with their
    ``recovery``. "knockout": the clean prompt runs twice, the second time with the edges
    from the changed token(s) to the last token cut in the layers ``window`` = (first,
    last), with ``p_answer`` = (p(``answer``) nothing cut, edge cut). "attribution": the
    clean LD split into ``parts`` = (embedding, heads (L, H), FFNs (L,), biases or None).
    ``ld`` is (LD clean, LD corrupted); ``prompts`` writes each prompt in full above it.
    """
    L, T = n_layers, len(clean)
    changed = sorted({int(c) for c in changed})
    position = T - 1 if position is None else int(position)
    _check_run_args(mode, L, T, len(corrupt), changed, layer, position, head, n_heads, window,
                parts)
    largest = _largest_ld_part(parts) if mode == "attribution" else ("", 0, 0)
    drawn = ({layer} if mode == "head" or mode == "residual" and layer < L else
             {largest[1]} if largest[0] in ("head", "ffn") else set())
    rows = _run_rows(L, drawn, window if mode == "knockout" else None)
    copy_row = (rows.index(("layer", layer)) if ("layer", layer) in rows else len(rows) - 1)
    heights = [_RUN_HEAD_ROW if mode == "head" and row[0] == "layer" else 3.6 if row[0] == "window"
               else 3.1 if mode == "attribution" and row[0] == "layer" else 1.8
               for row in rows]
    gaps = [1.5 if (mode, i) in (("residual", copy_row), ("head", copy_row + 1)) else 0.5
            for i in range(len(rows))]
    chosen = (0 if largest[0] == "embedding" else rows.index(("layer", largest[1]))
              if largest[0] in ("head", "ffn") else None)
    patched = mode in ("residual", "head")
    right = {"residual": "Corrupted run", "head": "Corrupted run",
             "knockout": "The clean run again, edge cut",
             "attribution": "Its parts of LD, at the last token"}[mode]
    columns = [(0.5, "Clean run" + (f": {_run_prompt(clean)}" if prompts else ""), clean),
               (0.5 + _RUN_COLUMN + _RUN_GAP, right + (f": {_run_prompt(corrupt)}" if prompts and
                                                   patched else ""),
                corrupt if patched else clean if mode == "knockout" else None)]
    d = Diagram(f"The clean {'and the corrupted ' if patched else ''}run of the model's {L} "
                f"layers{', twice' if mode == 'knockout' else ''}", font)
    g = _draw_runs(d, columns, changed, _run_lanes(clean, corrupt, [position, T - 1,
                                                                   *changed]),
                   rows, heights, gaps, chosen)
    d.order.append(f"{_run_prompt(clean)}, {T} tokens, against {_run_prompt(corrupt)}: the changed "
                   f"token{'s' if len(changed) > 1 else ''} " + ", ".join(
                       f"at position {c + 1}, {clean[c]} against {corrupt[c]}" for c in changed))
    if mode == "residual":
        _run_recovery(g, _copy_stream(g, position, layer, L, clean[position]), ld, recovery)
    elif mode == "head":
        _run_recovery(g, _copy_head(g, layer, head, n_heads), ld, recovery)
    elif mode == "knockout":
        _cut_edge(g, window, changed, clean, p_answer, answer)
    else:
        _split_ld(g, parts, largest, ld[0])
    return d


def _fit(token: str, width: float) -> str:
    """``token`` cut (with …) to fit ``width`` em."""
    most = max(1, int(width / 0.6))
    return token if len(token) <= most else token[:most - 1] + "…"


def _source_states(d: Diagram, tokens: list[str], window, said: str) -> list:
    """The encoder states h₁ … h_S under their tokens (cut to fit), centred over the
    decoder's parts below, and a dashed frame round those inside ``window`` (booleans),
    ``said`` first and then which they are."""
    S = len(tokens)
    pitch = min(3.8, 52.0 / S)
    w, x0 = pitch - 0.5, max(1.0, (49.4 - S * pitch) / 2)
    d.order.append(f"Encoder states h₁ to {sub('h', S)} of the source " + " ".join(tokens))
    states = []
    for s, token in enumerate(tokens, start=1):
        x = x0 + (s - 1) * pitch
        d.label(x + w / 2, 4.1, _fit(token, pitch - 0.3), said=False)
        states.append(d.box(x, 4.5, w, 2.0, sub("h", s), name=""))
    if window is not None and any(window):
        inside = [s for s, flag in enumerate(window, start=1) if flag]
        a, b = states[inside[0] - 1], states[inside[-1] - 1]
        d.frame(a.x - 0.25, 3.0, b.x + b.w - a.x + 0.5, 3.85)
        d.label(0.5, 2.6, f"{said}: {sub('h', inside[0])} to {sub('h', inside[-1])}",
                anchor="start", dim=True)
    return states


def _step_parts(t: int, bahdanau: bool, score: str, d_state: int, alpha: list[float]):
    """Decoding step t's parts in order, each (lines, least width in em, highlighted, name):
    the query, the scores, the softmax, c_t, the update (Bahdanau) or h̃_t (Luong), the
    output; the query and where c_t goes are highlighted."""
    q = sub("s", t - 1 if bahdanau else t)
    c, prev, y_prev = sub("c", t), sub("s", t - 1), sub("y", t - 1)
    which = "previous" if bahdanau else "current"
    return [
        ([f"query {q}", "mean of hⱼ" if bahdanau and t == 1 else which], 6.4, True,
         f"the query: the {which} decoder state {q}"),
        ([f"scores {sub('e', t)}ⱼ", score], 7.0, False, f"{score} scores of {q} against each hⱼ"),
        (["softmax", f"→ {sub('α', t)}"], 6.0, False, f"softmax: the weights {sub('α', t)}"),
        ([f"{c} = Σ α hⱼ", f"d = {d_state}"], 7.4, False,
         f"the context {c}, the weighted sum of the hⱼ, {d_state} numbers: weights "
         + ", ".join(f"{sub('h', s)} {a:.2f}" for s, a in enumerate(alpha, start=1))),
        (["GRU update", f"{sub('s', t)} ← {prev}, {y_prev}, {c}"], 9.6, True,
         f"the GRU update of {sub('s', t)} from {prev}, {y_prev} and {c}") if bahdanau else
        ([f"{sub('h̃', t)} = tanh(", f"W_c [{c}; {q}])"], 9.6, True,
         f"the attentional state {sub('h̃', t)} from {c} and {q}"),
        (["output", f"p({sub('y', t)})"], 5.0, False, f"the output p({sub('y', t)})")]


def decoding_step(tokens: list[str], weights, step: int, model: str, score: str, d_state: int,
                  font: int, *, window=None, centre: float = 0.0, half: int = 1,
                  window_step: int = 1) -> Diagram:
    """Lesson 6's decoding step ``step`` (from 1): the encoder states and the query → the
    scores → α → c_t → (Bahdanau) the decoder's update, or (Luong) the attentional state
    h̃_t → the output. Bahdanau asks with s_{t−1} and feeds c_t into the update; Luong asks
    with s_t and feeds c_t into the output layer. ``weights`` (α_t over the source) are the
    arrow widths into c_t; ``window`` (booleans over the source) is drawn as a dashed frame
    round the states inside Luong's local window, centred on ``centre`` (from 1) at
    ``window_step`` with half-width ``half``."""
    S, t, bahdanau = len(tokens), step, model == "Bahdanau"
    alpha = [float(a) for a in weights]
    if len(alpha) != S or not 1 <= t:
        raise ValueError(f"{S} tokens need {S} weights and a step from 1; got {len(alpha)}, {t}")
    query, goes = sub("s", t - 1 if bahdanau else t), "update" if bahdanau else "output layer"
    d = Diagram(f"{model}'s decoding step {t}, from the encoder states to the output", font)
    d.label(0.5, 1.2, f"{model}, step {t}: the {'previous' if bahdanau else 'current'} state "
            f"{query} asks; {sub('c', t)} feeds the {goes}", anchor="start", bold=True,
            said=False)
    states = _source_states(d, tokens, window, f"Dashed: Luong's local window of section 4 "
                            f"(step {window_step}, D = {half}, p_t = {centre:.2f})")
    x, y, parts = 1.0, 10.5, []
    for lines, width, chosen, name in _step_parts(t, bahdanau, score, d_state, alpha):
        width = max(width, max(text_width(line) for line in lines) + 0.8)  # s₂₀ ← s₁₉, …
        parts.append(d.box(x, y, width, 2.6, lines, highlight=chosen, name=name))
        x += width + 1.2
    for left, right in zip(parts, parts[1:], strict=False):
        d.arrow(left, right, said="")
    xs = parts[1].centre[0]  # every h_j enters the scores, through a comb under them
    for state in states:
        d.line([_below(state), (state.centre[0], 7.3)])
    d.line([(min(xs, states[0].centre[0]), 7.3), (max(xs, states[-1].centre[0]), 7.3)])
    d.arrow((xs, 7.3), _above(parts[1]), said="")
    for state, a in zip(states, alpha, strict=True):
        d.arrow(_below(state), _above(parts[3]), weight=min(max(a, 0.0), 1.0), said="")
    q, u = parts[0].centre[0], parts[4].centre[0]  # the query enters the update or h̃ too
    d.line([(q, y + 2.6), (q, y + 3.8), (u, y + 3.8)])
    d.arrow((u, y + 3.8), _below(parts[4]), said="")
    d.label(q + 0.4, y + 5.0, f"{query} enters the {goes} too", anchor="start", dim=True)
    d.label(0.5, y + 6.6, f"An arrow's width is its weight {sub('α', t)}ⱼ.", anchor="start",
            dim=True, said=False)
    return d


def fixed_state(d_k: int, d_v: int, n: int, overlaps, leak_ratio: float, font: int) -> Diagram:
    """Lesson 13's memory: n pairs written into one state S of d_v × d_k numbers, then the
    first key read back. ``overlaps`` (n,) are k_t · k₁ (an arrow's width is |k_t · k₁|,
    what pair t puts into the read); ``leak_ratio`` is ‖leak‖ / ‖v₁‖. At most four pairs
    are drawn (the first three and the last); the softmax's cache is drawn beside, growing
    with n."""
    sims = np.abs(np.asarray(overlaps, dtype=np.float64))
    if min(d_k, d_v, n) < 1 or sims.shape != (n,):
        raise ValueError(f"n = {n} pairs need {n} overlaps and d_k, d_v >= 1; got "
                         f"{sims.shape[0] if sims.ndim == 1 else sims.shape} overlaps, "
                         f"d_k = {d_k}, d_v = {d_v}")
    d = Diagram(f"{n} pair{'s' * (n > 1)} written into one state of {d_v} × {d_k} numbers, "
                "then the first key read back", font)
    state = d.box(15.0, 2.6, 18.0, 5.2, ["state S", f"d_v × d_k = {d_v} × {d_k}",
                                         f"{d_v * d_k:,} numbers, whatever n",
                                         f"{n} pair{'s' * (n > 1)}, {d_k} key directions"],
                  highlight=True,
                  name=f"one state S of d_v × d_k = {d_v} × {d_k} = {d_v * d_k:,} numbers")
    drawn = list(range(n)) if n <= 4 else [0, 1, 2, n - 1]
    for row, t in enumerate(drawn):
        y = 0.6 + 2.6 * row + (0.9 if n > 4 and row == 3 else 0.0)
        pair = d.box(0.5, y, 8.5, 2.0, f"({sub('k', t + 1)}, {sub('v', t + 1)})", name="")
        d.arrow(pair, state, weight=min(float(sims[t]), 1.0), said="")
    if n > 4:
        d.label(4.75, 8.75, f"⋮ {n - 4} more", said=False)
    others = np.delete(sims, 0)
    d.order.append(f"{n} pair{'s' * (n > 1)} written in, each as v kᵀ"
                   + (f"; the other keys' overlaps with k₁ reach {others.max():.2f}"
                      if others.size else ""))
    query = d.box(38.0, 0.6, 12.0, 2.0, "query q = k₁", name="read with q = k₁")
    read = d.box(38.0, 5.2, 12.0, 3.9, ["read S k₁", "= v₁ + leak", f"‖leak‖ = {leak_ratio:.2f}"
                                        " ‖v₁‖"],
                 name=f"the read S k₁ = v₁ + leak, the leak {leak_ratio:.2f} times as long as v₁")
    d.arrow(query, state, said="")
    d.arrow(state, read, said="")
    cache = d.box(15.0, 10.0, 35.0, 2.0, ["softmax attention keeps every pair instead:",
                                          f"n (d_k + d_v) = {n * (d_k + d_v):,} numbers, "
                                          "growing with n"], dim=True,
                  name=f"softmax attention would keep all {n} pairs, {n * (d_k + d_v):,} "
                       "numbers")
    d.label(0.5, cache.y + cache.h + 1.3, "An arrow's width is |kₜ · k₁|: how much of vₜ the "
            "read of k₁ takes in.", anchor="start", dim=True, said=False)
    return d


# ---- lessons 10 and 11: a language model's decoder block and its KV cache ----------------

def _numbers_drawn(anchors, n: int) -> list[int | None]:
    """Which of 1..n to draw: every anchor in 1..n, a number between two drawn ones when it
    is the only one missing, and None (drawn as "…") for each longer run left out."""
    drawn: list[int | None] = []
    for a in sorted({a for a in anchors if 1 <= a <= n}):
        if drawn and a - drawn[-1] == 2:
            drawn.append(a - 1)
        elif drawn and a - drawn[-1] > 2:
            drawn.append(None)
        drawn.append(a)
    return drawn


LM_NORMS = {"rms": "RMSNorm", "layer": "LayerNorm"}
LM_MLPS = {"swiglu": "SwiGLU", "gelu": "GELU"}


def decoder_block(cfg, T: int, layer: int, head: int, font: int) -> Diagram:
    """Lesson 10's decoder block as the chosen model's config (an ``LMConfig``) has it,
    pre-norm: norm → causal attention → + → norm → MLP → +, every label from the config's
    switches and sizes, the shapes for a prompt of ``T`` tokens, with layer ``layer`` and
    query head ``head`` (from 1) highlighted, and the key/value head that head reads."""
    L, H, KV, dm, dk = cfg.n_layers, cfg.n_heads, cfg.n_kv_heads, cfg.d_model, cfg.d_head
    if T < 1 or not (1 <= layer <= L and 1 <= head <= H):
        raise ValueError(f"layer {layer} of {L} or head {head} of {H} is not in the model, "
                         f"or T = {T} < 1")
    norm, eps = LM_NORMS[cfg.norm], f"ε = {significant_text(cfg.norm_eps, 3)}"
    rope, shape = cfg.uses_rope, f"{T} × {dm}"
    d = Diagram(f"The decoder block of this {cfg.family} model (pre-norm), layer {layer} of "
                f"{L}, on your {T} tokens", font)
    said = cfg.describe()
    parts = [(["embeddings", *([] if rope else ["+ positions"]), shape] if layer == 1 else
              ["from", f"layer {layer - 1}", shape],
              (f"the embeddings of your {T} tokens" + ("" if rope else ", plus learned "
               "positions") if layer == 1 else f"layer {layer}'s input from layer "
               f"{layer - 1}") + f", {shape}"),
             ([norm, eps], f"{said['norm']}, {eps}"),
             (["attention", f"{H} q · {KV} KV heads" if KV < H else f"{H} heads",
               f"d_k = {dk}" + (", RoPE" if rope else "")],
              f"{said['attention']}" + (", RoPE turning q and k" if rope else "")),
             (["+"], "added to the residual stream"),
             ([norm, eps], f"{norm} again, {eps}"),
             ([f"{LM_MLPS[cfg.mlp]} MLP", f"{T} × {cfg.d_ff}", f"→ {shape}"],
              f"the {said['feed-forward']}: {T} × {cfg.d_ff}, back to {shape}"),
             (["+"], "added to the residual stream"),
             (["to", f"layer {layer + 1}" if layer < L else "logits", shape],
              (f"on to layer {layer + 1}" if layer < L else "to the final norm and the "
               "logits") + f", {shape}")]
    y, gap = 2.1, 0.6
    boxes = _block_row(d, parts, y, gap)
    _residual_stream(d, ((boxes[0], boxes[3]), (boxes[3], boxes[6])), gap, 0.8)
    x0, lane_y = boxes[4].x, y + 5.0
    _lm_heads(d, boxes[2].centre[0], (boxes[1].x, boxes[3].x + boxes[3].w), cfg, head,
              lane_y, T)
    d.label(x0, lane_y + 1.1, "layer", anchor="start", dim=True, said=False)
    bw = max(2.0, text_width(str(L)) + 0.8)
    for n, shown in enumerate(_numbers_drawn({1, layer - 1, layer, layer + 1, L}, L)):
        if shown is None:
            d.label(x0 + 3.6 + n * (bw + 0.4) + bw / 2, lane_y + 1.1, "…", said=False)
        else:
            d.box(x0 + 3.6 + n * (bw + 0.4), lane_y, bw, 1.5, str(shown), highlight=shown == layer,
                  name="")
    d.order.append(f"layer {layer} of {L} (highlighted): each of the {L} layers is this "
                   "block, with its own weights")
    for n, text in enumerate([f"× {L} layers, each with its own weights",
                              f"biases: {said['biases']}"]):
        d.label(x0, lane_y + 2.9 + 1.3 * n, text, anchor="start", dim=True, said=n > 0)
    return d


def _lm_heads(d: Diagram, centre: float, span: tuple[float, float], cfg, head: int,
              lane_y: float, T: int) -> None:
    """Under the attention box (its ``centre``; the lanes stay within ``span``): a lane
    per query head, grouped over the key/value head each group reads, ``head`` and its KV
    head highlighted, and what that head computes."""
    H, KV, dk, group = cfg.n_heads, cfg.n_kv_heads, cfg.d_head, cfg.group
    g = cfg.kv_head_of(head - 1) + 1
    space = 0.3 if 1 < KV < H else 0.0  # between groups
    pitch = min(0.9, (span[1] - span[0] - space * (KV - 1)) / H)
    width = pitch * H + space * (KV - 1)
    left = min(max(span[0], centre - width / 2), span[1] - width)
    for n in range(H):
        d.box(left + n * pitch + (n // group) * space + 0.1 * pitch, lane_y, 0.8 * pitch,
              1.5, [], highlight=n + 1 == head, name="")
    for k in range(KV):
        d.box(left + k * (group * pitch + space) + 0.05, lane_y + 1.8,
              group * pitch - 0.1, 0.9, [], highlight=k + 1 == g, name="")
    d.label(left - 0.4, lane_y + 1.1, "query heads", anchor="end", dim=True, said=False)
    d.label(left - 0.4, lane_y + 2.55, "KV heads", anchor="end", dim=True, said=False)
    first = (g - 1) * group + 1
    reads = (f"its own k and v (KV head {g} of {KV})" if KV == H else
             f"k, v from the one KV head (all {H})" if KV == 1 else
             f"k, v from KV head {g} of {KV} (heads {first}–{first + group - 1})")
    lines = [f"head {head} of {H}: q, k, v {T} × {dk}", reads]
    w = max(text_width(t) for t in lines) + 1.0
    chosen = left + (head - 0.5) * pitch + ((head - 1) // group) * space
    callout = d.box(max(0.5, min(chosen - w / 2, span[1] - w)), lane_y + 3.1, w, 3.1, lines,
                    highlight=True, name=f"head {head} of {H}: its q, k and v are {T} × {dk}; "
                    + ("it has its own keys and values" if KV == H else "it reads the keys and "
                       "values of " + reads.split("from ", 1)[1]) + f"; its weights are {T} × "
                    f"{T}, causal")
    d.arrow((chosen, lane_y + 2.7), (chosen, callout.y), highlight=True, said="")


def kv_cache_rows(cfg, T: int, font: int, *, per_token: int, tokens: list[str] | None = None,
                  prompt: int | None = None, window: int | None = None, sinks: int = 0
                  ) -> Diagram:
    """Lesson 11's KV cache of one layer after ``T`` tokens: a row per token, a key and a
    value for each key/value head, the query heads that read each (arrows), and its bytes
    over the ``cfg.n_layers`` layers, ``per_token`` (2 · L · n_KV · d_k · b, the page's
    own count) × T. With ``prompt`` (its first tokens), the rows appended by generation
    follow; with ``window`` and ``sinks``, the rows a sliding window with sinks keeps
    for token T and those it drops. Rows, heads and KV heads are drawn first and last
    with "…" between, so that any model and any length fit."""
    L, KV, dk, group = cfg.n_layers, cfg.n_kv_heads, cfg.d_head, cfg.group
    b, rest = divmod(per_token, 2 * L * KV * dk)
    if T < 1 or rest or b < 1 or (window is not None and window < 1) or sinks < 0:
        raise ValueError(f"a cache of {T} tokens, {per_token} bytes a token, window "
                         f"{window} and {sinks} sinks does not fit this model")
    kept = T if window is None else min(T, sinks + window)
    marks = {1, T} | ({prompt, prompt + 1} if prompt else set()) | (
        {sinks, sinks + 1, T - window, T - window + 1} if window else set())
    rows = _numbers_drawn(range(1, T + 1) if T <= 6 else marks, T)
    d = Diagram(f"The KV cache of one layer after {T} tokens"
                + (f", window {window} with {sinks} sinks" if window else ""), font)
    labels = {r: f"{r} {_kv_piece(tokens[r - 1])}" if tokens else str(r) for r in rows if r}
    x = max([text_width(t) for t in labels.values()] + [text_width("query heads")]) + 1.2
    cols, groups = [], _numbers_drawn({1, 2, KV} if KV > 4 else range(1, KV + 1), KV)
    for k in groups:  # a key column and a value column for each KV head drawn
        heads = None if k is None else _numbers_drawn(
            {(k - 1) * group + 1, k * group} if group > 3 else
            range((k - 1) * group + 1, k * group + 1), k * group)
        qw = 1.6 if k is None else max(text_width(sub("q", h)) + 0.5 for h in heads if h)
        w = 1.6 if k is None else max(4.6, len(heads) * (qw + 0.2) - 0.2)
        cols.append((k, heads, x + (w - 4.6) / 2, w, qw, x))
        x += w + 1.0
    right, top = x - 1.0, 5.3  # the rows start at ``top``
    for k, heads, kx, w, qw, x0 in cols:
        if k is None:
            for y in (1.5, 4.4):
                d.label(x0 + w / 2, y, "…", said=False)
            continue
        pair = [d.box(kx + c * 2.4, 3.2, 2.2, 1.8, sub(what, k), name="")
                for c, what in enumerate("KV")]
        for n, h in enumerate(heads):
            qx = x0 + (w - len(heads) * (qw + 0.2) + 0.2) / 2 + n * (qw + 0.2)
            if h is None:
                d.label(qx + qw / 2, 1.5, "…", said=False)
                continue
            q = d.box(qx, 0.3, qw, 1.8, sub("q", h), name="")
            d.arrow((q.centre[0], q.y + q.h), (min(max(q.centre[0], pair[0].x + 0.4),
                                                   pair[1].x + pair[1].w - 0.4), 3.2), said="")
    d.label(cols[0][5] - 0.6, 1.5, "query heads", anchor="end", dim=True, said=False)
    d.label(cols[0][5] - 0.6, 4.4, "KV heads", anchor="end", dim=True, said=False)
    notes = _kv_notes(T, prompt, window, sinks)
    for n, r in enumerate(rows):
        y = top + 1.2 * n
        if r is None:
            d.label(cols[0][5] - 1.1, y + 0.8, "⋮", anchor="end", said=False)
            continue
        dropped = window is not None and sinks < r <= T - window
        d.label(cols[0][5] - 0.6, y + 0.8, labels[r], anchor="end", bold=r == T,
                dim=dropped, said=False)
        for k, _, kx, _, _, _ in cols:
            for c in range(2 if k else 0):
                d.rect(kx + c * 2.4, y, 2.2, 0.9, "#D0D2D8" if dropped else
                       HIGHLIGHT_FILL if r == T else "#FFFFFF")
        if r == T:  # the newest row: a thick dark outline around its cells
            _kv_outline(d, cols[0][2], y, cols[-1][2] + 4.6)
        if r in notes:
            d.label(right + 0.6, y + 0.8, notes[r], anchor="start", bold=r == T,
                    dim=dropped, said=False)
    rows_held = "T" if kept == T else "rows kept"  # T: the tokens read, each a row
    lines = [f"2 · L · n_KV · d_k · {rows_held} · b", f"= 2 · {L} · {KV} · {dk} · {kept} · {b}",
             f"= {per_token * kept:,} bytes" if kept == T else
             f"= {per_token * kept:,} of {per_token * T:,} bytes"]
    d.box(right + 1.0, 0.3, max(text_width(t) for t in lines) + 1.0, 4.4, lines, name="")
    d.order.append(_kv_said(cfg, T, rows, per_token, kept, b, prompt, window, sinks))
    return d


def _kv_notes(T: int, prompt: int | None, window: int | None, sinks: int) -> dict[int, str]:
    """What the rows hold, said beside the first row of each part: the prompt, the tokens
    written, the sinks, the rows dropped, the window; and the newest row."""
    notes: dict[int, str] = {}
    if prompt:
        notes[1] = f"prompt, rows 1–{prompt}" if prompt > 1 else "prompt, row 1"
        if T > prompt + 1:
            notes[prompt + 1] = f"written, rows {prompt + 1}–{T}"
        notes[T] = f"← newest: appended at step {T - prompt + 1}"
    if window:
        if sinks:
            notes[1] = f"sinks, rows 1–{sinks}: kept" if sinks > 1 else "sink, row 1: kept"
        if T - window > sinks:
            notes[sinks + 1] = f"rows {sinks + 1}–{T - window}: dropped"
        first = max(T - window + 1, 1)
        notes[max(first, sinks + 1)] = f"window, rows {first}–{T}: kept"
        notes[T] = "← newest: the query"
    return notes


def _kv_outline(d: Diagram, x0: float, y: float, x1: float) -> None:
    """A thick dark outline from x0 to x1 around a row of cells 0.9 em tall at y."""
    t, h = 0.14, 0.9
    for x, yy, w, hh in ((x0 - t, y - t, x1 - x0 + 2 * t, t), (x0 - t, y + h, x1 - x0 + 2 * t, t),
                         (x0 - t, y - t, t, h + 2 * t), (x1, y - t, t, h + 2 * t)):
        d.rect(x, yy, w, hh, TEXT_COLOUR, TEXT_COLOUR)


def _kv_span(first: int, last: int) -> str:
    """Rows first to last: "" when there are none, "row 4" or "rows 1 to 4"."""
    return "" if last < first else f"row {first}" if last == first else \
        f"rows {first} to {last}"


def _kv_piece(token: str) -> str:
    """A token's piece cut to 6 characters (with …) beside its row."""
    return token if len(token) <= 6 else token[:5] + "…"


def _kv_said(cfg, T: int, rows: list, per_token: int, kept: int, b: int,
             prompt: int | None, window: int | None, sinks: int) -> str:
    """The cache diagram in words, with every number it draws."""
    H, KV, group = cfg.n_heads, cfg.n_kv_heads, cfg.group
    sharing = (f"each of the {H} query heads reads its own key/value head" if KV == H else
               f"all {H} query heads read the one key/value head" if KV == 1 else
               f"the {H} query heads share {KV} key/value heads, {group} each: "
               + ", ".join(f"q{(k - 1) * group + 1}–q{k * group} read KV {k}"
                           for k in range(1, KV + 1)))
    drawn = [r for r in rows if r]
    each = (f"each a key and a value of d_k = {cfg.d_head} numbers for each of the {KV} "
            "key/value heads")
    held = (f"the cache holds {T} rows, one per token, {each}" if kept == T else
            f"{T} tokens read, a row each, {each}")
    shown = ("every row drawn" if len(drawn) == T else "rows drawn: " + ", ".join(
        map(str, drawn)) + f" (the other {T - len(drawn)} are left out, as ⋮, to fit)")
    if window:
        spans = filter(None, (_kv_span(1, sinks), _kv_span(T - window + 1, T)))
        part = (f"a window of {window} with {sinks} sinks keeps {kept} of them for token {T}"
                + (f" ({' and '.join(spans)}), {T - kept} dropped" if kept < T
                   else ": all of them"))
    else:
        part = (f"{_kv_span(1, prompt)} from the prompt, row {T}, the newest, appended at "
                f"step {T - prompt + 1}" if prompt else f"row {T}, the newest")
    rows_held = "T" if kept == T else "rows kept"
    return (f"{sharing}; {held}; {shown}; {part}; over the {cfg.n_layers} layers 2 · L · "
            f"n_KV · d_k · {rows_held} · b = 2 · {cfg.n_layers} · {KV} · {cfg.d_head} · "
            f"{kept} · {b} = {per_token * kept:,} bytes")
