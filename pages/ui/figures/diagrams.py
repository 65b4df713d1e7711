"""Diagrams of a lesson's model, drawn as inline SVG from the lesson's own numbers.

A diagram is laid out in ``em`` (the width of the diagram's font size), so that the
same layout is drawn at any font size with nothing moving relative to its text: 14 px on
a laptop, 20 px on a projector. Boxes, arrows (their width can carry a weight in 0..1),
labels, highlights (a thicker outline and bold text, never colour alone) and links (the
course map's parts lead to their lessons, each a keyboard-focusable link).

Pure Python, no Streamlit: ``svg()`` returns the markup, ``describe()`` a text
alternative that walks the diagram in the order it was drawn, and ``text_boxes()`` each
text's extent, with which a test checks that no two overlap. Every text is escaped: a
token a student typed is drawn as text, never read as markup.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from .colours import SERIES_COLOURS, TEXT_COLOUR

BOX_FILL = "#F0F2F6"  # Streamlit's secondary background: text on it is 11:1
HIGHLIGHT_FILL = "#FFF1D6"  # a warm tint; TEXT_COLOUR on it is 11:1
HIGHLIGHT_STROKE = "#8A5300"  # 6.5:1 on white: the outline is seen without its colour
DIM_TEXT = "#5A5D66"  # secondary text, 6.4:1 on white and 5.6:1 on BOX_FILL
LINK_COLOUR = "#1C5FB8"  # as the app's focus ring and links: 6.1:1 on white
ARROW_COLOUR = "#4A4D57"
WEIGHT_COLOUR = SERIES_COLOURS[0]  # arrows whose width is a weight: Okabe-Ito's blue

# Text widths are estimated, not measured (no browser here): Streamlit's sans-serif
# averages about 0.55 em a character for mixed text; 0.6 keeps a margin.
CHAR_EM = 0.6
LINE_EM = 1.3
# On a projector (a font of 18 px or more) no text is smaller than this, in px: a smaller
# label (an arrow's, at 0.85 em) is drawn at this size instead, and laid out so.
PROJECTOR_MIN_PX = 19.0
ARROW_LABEL_EM = 0.85


def text_width(text: str) -> float:
    """The estimated width of ``text`` in em."""
    return CHAR_EM * len(text)


@dataclass(frozen=True)
class Box:
    """A box at (x, y) (its top-left corner), w × h, all in em, with lines of text."""

    x: float
    y: float
    w: float
    h: float
    lines: tuple[str, ...]
    highlight: bool = False
    href: str | None = None
    dim: bool = False
    fill: str | None = None
    name: str = ""  # how the text alternative names it (its first line by default)

    @property
    def centre(self) -> tuple[float, float]:
        return self.x + self.w / 2, self.y + self.h / 2

    def edge_towards(self, px: float, py: float) -> tuple[float, float]:
        """Where the segment from the centre towards (px, py) leaves the box."""
        cx, cy = self.centre
        dx, dy = px - cx, py - cy
        if dx == 0 and dy == 0:
            return cx, cy
        sx = (self.w / 2) / abs(dx) if dx else float("inf")
        sy = (self.h / 2) / abs(dy) if dy else float("inf")
        s = min(sx, sy)
        return cx + dx * s, cy + dy * s


@dataclass(frozen=True)
class Arrow:
    """An arrow from one point to another (em), optionally weighted (0..1 → width)."""

    start: tuple[float, float]
    end: tuple[float, float]
    weight: float | None = None
    label: str | None = None
    highlight: bool = False
    dashed: bool = False
    said: str = ""  # what the text alternative says of it


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    text: str
    anchor: str = "middle"  # start, middle or end
    bold: bool = False
    dim: bool = False
    size: float = 1.0  # in em of the diagram's font


@dataclass
class Diagram:
    """A diagram in the making: add boxes, arrows and labels, then draw it.

    ``title`` is read by screen readers and heads the text alternative; ``font`` is the
    font size in px (the page's ``page.font``).
    """

    title: str
    font: int = 14
    frames: list[Box] = field(default_factory=list)  # drawn first, behind everything
    boxes: list[Box] = field(default_factory=list)
    arrows: list[Arrow] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    paths: list[tuple[tuple[tuple[float, float], ...], float]] = field(default_factory=list)
    rects: list[tuple[float, float, float, float, str, str]] = field(default_factory=list)
    order: list[str] = field(default_factory=list)  # what the text alternative walks

    def box(self, x: float, y: float, w: float, h: float, text: str | list[str], *,
            highlight: bool = False, href: str | None = None, dim: bool = False,
            fill: str | None = None, name: str | None = None) -> Box:
        """A box with one or more lines of text, centred; ``highlight`` marks the part the
        page is explaining now; ``href`` makes it a link."""
        lines = tuple(text) if isinstance(text, (list, tuple)) else (text,)
        h = max(h, len(lines) * LINE_EM + 0.5)  # room for every line
        box = Box(x, y, w, h, lines, highlight, href, dim, fill,
                  name if name is not None else " ".join(lines))
        self.boxes.append(box)
        if box.name:  # a part named "" is left to a sentence of the page's own
            self.order.append(box.name + (" (highlighted)" if highlight else ""))
        return box

    def frame(self, x: float, y: float, w: float, h: float, title: str = "") -> Box:
        """A frame around a group of parts (a layer repeated L times), drawn behind them,
        with its title at its top right."""
        frame = Box(x, y, w, h, (), name=title)
        self.frames.append(frame)
        if title:
            self.label(x + w - 0.6, y + 1.3, title, anchor="end", bold=True)
        return frame

    def rect(self, x: float, y: float, w: float, h: float, fill: str,
             stroke: str = "#8C8F99") -> None:
        """A plain filled rectangle with no text (a cell of a small grid)."""
        self.rects.append((x, y, w, h, fill, stroke))

    def line(self, points: list[tuple[float, float]], *, width: float = 1.5,
             said: str = "") -> None:
        """A plain path through ``points`` (a stream that arrows join), no arrowhead."""
        self.paths.append((tuple(points), width))
        if said:
            self.order.append(said)

    def arrow(self, a: Box | tuple[float, float], b: Box | tuple[float, float], *,
              weight: float | None = None, label: str | None = None,
              highlight: bool = False, dashed: bool = False, said: str | None = None
              ) -> Arrow:
        """An arrow from ``a`` to ``b`` (boxes are met at their edges). ``weight`` in 0..1
        sets its width; ``said`` is what the text alternative says of it (by default
        "a → b" with the weight)."""
        pa = a.centre if isinstance(a, Box) else a
        pb = b.centre if isinstance(b, Box) else b
        start = a.edge_towards(*pb) if isinstance(a, Box) else pa
        end = b.edge_towards(*pa) if isinstance(b, Box) else pb
        if weight is not None and not 0 <= weight <= 1 + 1e-9:
            raise ValueError(f"an arrow's weight must be in 0..1, got {weight}")
        if said is None:
            names = [x.name if isinstance(x, Box) else "" for x in (a, b)]
            said = " → ".join(n for n in names if n)
            if weight is not None:
                said += f" (weight {weight:.2f})"
            if label:
                said += f" ({label})"
        arrow = Arrow(start, end, weight, label, highlight, dashed, said)
        self.arrows.append(arrow)
        if said:
            self.order.append(said)
        return arrow

    def label(self, x: float, y: float, text: str, *, anchor: str = "middle",
              bold: bool = False, dim: bool = False, size: float = 1.0,
              said: bool = True) -> Label:
        """A free text whose baseline's middle (or start, or end) is at (x, y)."""
        label = Label(x, y, text, anchor, bold, dim, size)
        self.labels.append(label)
        if said:
            self.order.append(text)
        return label

    # ---- reading it -------------------------------------------------------------------

    def em(self, size: float) -> float:
        """A text's size in em of the font: ``size``, but never under PROJECTOR_MIN_PX on
        a projector."""
        if self.font >= 18:
            return max(size, PROJECTOR_MIN_PX / self.font)
        return size

    def size(self) -> tuple[float, float]:
        """The width and height in em that hold every part, with a margin."""
        parts = self.boxes + self.frames
        right = [b.x + b.w for b in parts] + [max(a.start[0], a.end[0]) for a in self.arrows]
        bottom = [b.y + b.h for b in parts] + [max(a.start[1], a.end[1]) for a in self.arrows]
        for _, (_, _, x1, y1) in self.text_boxes():
            right.append(x1)
            bottom.append(y1)
        return max(right, default=1) + 0.5, max(bottom, default=1) + 0.5

    def text_boxes(self) -> list[tuple[str, tuple[float, float, float, float]]]:
        """Every text drawn, with its estimated extent (x0, y0, x1, y1) in em."""
        found = []
        for box in self.boxes:
            for text, (x, y) in zip(box.lines, _line_positions(box), strict=True):
                w = text_width(text)
                found.append((text, (x - w / 2, y - 0.8, x + w / 2, y + 0.25)))
        for label in self.labels:
            size = self.em(label.size)
            w = text_width(label.text) * size
            x0 = {"start": label.x, "middle": label.x - w / 2, "end": label.x - w}[label.anchor]
            found.append((label.text, (x0, label.y - 0.8 * size, x0 + w,
                                       label.y + 0.25 * size)))
        for arrow in self.arrows:
            if arrow.label:
                x, y = _arrow_label_at(arrow, self.em(ARROW_LABEL_EM))
                w = text_width(arrow.label) * self.em(ARROW_LABEL_EM)
                found.append((arrow.label, (x - w / 2, y - 0.7, x + w / 2, y + 0.2)))
        return found

    def describe(self) -> str:
        """The text alternative: the title, then each part in the order it was drawn."""
        return f"{self.title}. " + "; ".join(self.order) + "."

    def svg(self) -> str:
        """The diagram as one SVG element, sized in px at the diagram's font size (it
        shrinks to fit a narrower column). One line: Markdown keeps it an HTML block."""
        f = self.font
        width, height = self.size()
        px = lambda v: f"{v * f:.1f}"  # noqa: E731
        parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{px(width)}" '
            f'height="{px(height)}" viewBox="0 0 {px(width)} {px(height)}" '
            f'style="max-width:100%;height:auto" font-family="Source Sans Pro, sans-serif" '
            f'font-size="{f}" '
            + ('role="group" ' if any(b.href for b in self.boxes) else 'role="img" ')
            + f'aria-label="{_esc(self.title)}">',
            f"<title>{_esc(self.title)}</title><desc>{_esc(self.describe())}</desc>",
            "<defs>"
            + "".join(
                f'<marker id="{name}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
                f'markerHeight="7" markerUnits="userSpaceOnUse" orient="auto-start-reverse" '
                f'style="overflow:visible"><path d="M0,0 L10,5 L0,10 z" fill="{colour}"/>'
                f"</marker>"
                for name, colour in (("arrow", ARROW_COLOUR), ("arrow-w", WEIGHT_COLOUR),
                                     ("arrow-h", HIGHLIGHT_STROKE)))
            + "</defs>",
        ]
        for frame in self.frames:
            parts.append(
                f'<rect x="{px(frame.x)}" y="{px(frame.y)}" width="{px(frame.w)}" '
                f'height="{px(frame.h)}" rx="{f * 0.4:.1f}" fill="none" '
                f'stroke="{ARROW_COLOUR}" stroke-width="1.25" '
                f'stroke-dasharray="{f * 0.5:.1f},{f * 0.25:.1f}"/>')
        for points, width in self.paths:
            path = " ".join(f"{x * f:.1f},{y * f:.1f}" for x, y in points)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{ARROW_COLOUR}" '
                         f'stroke-width="{width:.2f}"/>')
        for arrow in self.arrows:
            parts.append(_arrow_svg(arrow, f, self.em(ARROW_LABEL_EM)))
        for box in self.boxes:
            parts.append(_box_svg(box, f))
        for x, y, w, h, fill, stroke in self.rects:
            parts.append(f'<rect x="{px(x)}" y="{px(y)}" width="{px(w)}" height="{px(h)}" '
                         f'fill="{fill}" stroke="{stroke}" stroke-width="0.75"/>')
        for label in self.labels:
            colour = DIM_TEXT if label.dim else TEXT_COLOUR
            weight = ' font-weight="700"' if label.bold else ""
            parts.append(
                f'<text x="{px(label.x)}" y="{px(label.y)}" text-anchor="{label.anchor}" '
                f'font-size="{f * self.em(label.size):.1f}" fill="{colour}"{weight}>'
                f"{_esc(label.text)}</text>")
        parts.append("</svg>")
        return "".join(parts)


def _esc(text: str) -> str:
    return html.escape(str(text), quote=True)


def _line_positions(box: Box) -> list[tuple[float, float]]:
    """The baseline centre of each line of a box, the lines centred as a block."""
    n = len(box.lines)
    cx, cy = box.centre
    top = cy - (n - 1) * LINE_EM / 2
    return [(cx, top + i * LINE_EM + 0.35) for i in range(n)]


def _arrow_label_at(arrow: Arrow, size: float = ARROW_LABEL_EM) -> tuple[float, float]:
    (x0, y0), (x1, y1) = arrow.start, arrow.end
    mx, my = (x0 + x1) / 2, (y0 + y1) / 2
    # beside a vertical arrow, above a horizontal or slanted one
    return (mx + 0.4 + text_width(arrow.label or "") * size / 2, my + 0.3) \
        if abs(x1 - x0) < 0.3 * abs(y1 - y0) else (mx, my - 0.35)


def _arrow_svg(arrow: Arrow, f: int, label_em: float) -> str:
    (x0, y0), (x1, y1) = arrow.start, arrow.end
    if arrow.weight is not None:
        colour, marker = WEIGHT_COLOUR, "arrow-w"
        width = 0.75 + 7.0 * arrow.weight  # px: a weight of 1 is ten times a weight of 0
    elif arrow.highlight:
        colour, marker, width = HIGHLIGHT_STROKE, "arrow-h", 3.0
    else:
        colour, marker, width = ARROW_COLOUR, "arrow", 1.5
    dash = f' stroke-dasharray="{f * 0.4:.1f},{f * 0.3:.1f}"' if arrow.dashed else ""
    line = (f'<line x1="{x0 * f:.1f}" y1="{y0 * f:.1f}" x2="{x1 * f:.1f}" y2="{y1 * f:.1f}" '
            f'stroke="{colour}" stroke-width="{width:.2f}"{dash} marker-end="url(#{marker})"/>')
    if not arrow.label:
        return line
    lx, ly = _arrow_label_at(arrow, label_em)
    return line + (f'<text x="{lx * f:.1f}" y="{ly * f:.1f}" text-anchor="middle" '
                   f'font-size="{f * label_em:.1f}" fill="{TEXT_COLOUR}">'
                   f"{_esc(arrow.label)}</text>")


def _box_svg(box: Box, f: int) -> str:
    fill = box.fill or (HIGHLIGHT_FILL if box.highlight else BOX_FILL)
    stroke = HIGHLIGHT_STROKE if box.highlight else (LINK_COLOUR if box.href else ARROW_COLOUR)
    width = 3.5 if box.highlight else 1.25
    dash = f' stroke-dasharray="{f * 0.3:.1f},{f * 0.2:.1f}"' if box.dim else ""
    rect = (f'<rect x="{box.x * f:.1f}" y="{box.y * f:.1f}" width="{box.w * f:.1f}" '
            f'height="{box.h * f:.1f}" rx="{f * 0.3:.1f}" fill="{fill}" stroke="{stroke}" '
            f'stroke-width="{width}"{dash}/>')
    colour = LINK_COLOUR if box.href else (DIM_TEXT if box.dim else TEXT_COLOUR)
    weight = ' font-weight="700"' if box.highlight else ""
    deco = ' text-decoration="underline"' if box.href else ""
    texts = "".join(
        f'<text x="{x * f:.1f}" y="{y * f:.1f}" text-anchor="middle" fill="{colour}"'
        f"{weight}{deco}>{_esc(line)}</text>"
        for line, (x, y) in zip(box.lines, _line_positions(box), strict=True))
    if box.href:
        return (f'<a href="{_esc(box.href)}" target="_self" aria-label="{_esc(box.name)}">'
                f"{rect}{texts}</a>")
    return rect + texts


def overlapping_texts(diagram: Diagram) -> list[tuple[str, str]]:
    """The pairs of texts whose extents overlap (none in a diagram fit to show)."""
    boxes = diagram.text_boxes()
    found = []
    for i, (a, (ax0, ay0, ax1, ay1)) in enumerate(boxes):
        for b, (bx0, by0, bx1, by1) in boxes[i + 1:]:
            if ax0 < bx1 and bx0 < ax1 and ay0 < by1 and by0 < ay1:
                found.append((a, b))
    return found


def texts_outside_boxes(diagram: Diagram) -> list[str]:
    """The lines of text wider than the box that holds them."""
    return [line for box in diagram.boxes for line in box.lines
            if text_width(line) > box.w - 0.2]
