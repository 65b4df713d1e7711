"""Each lesson's model, drawn (pages.ui.figures.diagrams) from the numbers it computes.

One function per diagram, from the lesson's settings and results to a ``Diagram``; the
page shows it with ``pages.ui.layout.show_diagram``. Every number drawn is an argument:
a changed control changes the diagram.
"""

from __future__ import annotations

from ..lessons import BY_PREFIX
from .diagrams import Diagram


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
    embed = d.box(1.0, 5.2, 25.0, 2.6, ["embedding + positions", f"({_tag('pe')})"],
                  href=_href("pe"), name=f"then embedding plus positions, {_tag('pe')}")
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
    return d


if __name__ == "__main__":  # python -m pages.ui.figures.models > docs/course_map.svg
    print(course_map(14).svg())
