"""What a projector shows of a page: measured in the browser, shared by the teacher's-link
test (``test_classroom.py``, which opens every page in presenter mode at 1280 × 720) and by
anyone measuring by hand (``python tests/e2e/presenter_metrics.py``).

``MEASURE_JS`` returns, for the page as drawn:

- ``sidebar``: whether the sidebar is collapsed (``data-collapsed`` of ``stSidebar`` is
  "true", or it lies left of the window), and its visible width in px;
- ``smallest``: the visible text elements of the main area with the smallest computed
  font size, smallest first (size, tag, a selector-ish path and the text);
- ``first_figure_top``: the top of the first figure, a Plotly chart or a diagram of the
  model (inline SVG), in px from the top of the page (None if the page has neither),
  and ``height``, the page's height.

What counts as text a student reads, in the main area (``stMain``) only:

- every element with a non-blank text node of its own, including Plotly's SVG text
  (titles, ticks, legends, colour bars, cell numbers) and KaTeX;
- the values shown in inputs and text areas (an input's text is no text node);
- each st.dataframe / st.data_editor: its cells are drawn on a canvas (glide data
  grid), so their size is the grid's own font setting (its ``--gdg-base-font-style``
  variable) times the CSS zoom applied to the grid.

Left out, because no student reads them as text: elements not rendered (display none,
closed expanders, zero size, visibility hidden, opacity 0); the glide grid's DOM table,
an off-screen copy of the canvas for screen readers (measured through the canvas as
above); Plotly's hover layer (empty until a pointer hovers) and mode bar (icons);
KaTeX's sub- and superscripts and the limits of sums (``.msupsub``, ``.sizing``), which
maths sets smaller than the line on purpose (and KaTeX's MathML copy for screen
readers); and Material icons, drawn as ligature text ("keyboard_arrow_down").
"""

from __future__ import annotations

MEASURE_JS = r"""
() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const skip = [
    '[data-testid="stDataFrame"]', '[data-testid="stDataFrameResizable"]',
    '.hoverlayer', '.katex-mathml', '.modebar', '.modebar-container', '.msupsub',
    '.katex .sizing',
    '[data-testid="stIconMaterial"]', '.material-icons', '.material-symbols-rounded',
    'style', 'script', 'noscript',
  ].join(',');
  const shown = (el) => {
    if (!el.getClientRects().length) return false;
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) return false;
    for (let e = el; e && e !== document.body; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.visibility === 'hidden' || cs.display === 'none' || cs.opacity === '0') {
        return false;
      }
    }
    return true;
  };
  const zoom = (el) => {
    let z = 1;
    for (let e = el; e; e = e.parentElement) {
      const v = parseFloat(getComputedStyle(e).zoom);
      if (v > 0) z *= v;
    }
    return z;
  };
  const path = (el) => {
    const parts = [];
    for (let e = el; e && e !== main && parts.length < 4; e = e.parentElement) {
      const id = e.getAttribute && e.getAttribute('data-testid');
      parts.unshift(id ? `[${id}]` : (e.getAttribute && e.getAttribute('class')
        ? `${e.tagName.toLowerCase()}.${String(e.getAttribute('class')).split(' ')[0]}`
        : e.tagName.toLowerCase()));
      if (id) break;
    }
    return parts.join(' > ');
  };
  const found = [];
  const note = (el, size, text) => found.push({
    size: Math.round(size * 10) / 10, tag: el.tagName.toLowerCase(), path: path(el),
    text: text.trim().slice(0, 40)});
  if (main) {
    const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
    const seen = new Set();
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!/[^\s\u200b]/.test(n.textContent) || !el || seen.has(el)) continue;
      seen.add(el);
      if (el.closest(skip) || !shown(el)) continue;
      note(el, parseFloat(getComputedStyle(el).fontSize) * zoom(el), n.textContent);
    }
    for (const el of main.querySelectorAll(
        'input:not([type="range"]):not([type="checkbox"]):not([type="radio"]), textarea')) {
      if (!shown(el) || !(el.value || el.placeholder)) continue;
      note(el, parseFloat(getComputedStyle(el).fontSize) * zoom(el), el.value || el.placeholder);
    }
    for (const grid of main.querySelectorAll('[data-testid="stDataFrame"]')) {
      if (!shown(grid)) continue;
      const holder = grid.querySelector('[style*="--gdg-base-font-style"]') || grid;
      const style = getComputedStyle(holder).getPropertyValue('--gdg-base-font-style');
      const px = parseFloat((style.match(/([\d.]+)px/) || [])[1]);
      if (px > 0) note(grid, px * zoom(holder), `(table cells) ${style.trim()}`);
    }
  }
  found.sort((a, b) => a.size - b.size);
  const bar = document.querySelector('[data-testid="stSidebar"]');
  const box = bar ? bar.getBoundingClientRect() : null;
  const visibleWidth = box ? Math.max(0, Math.min(box.right, innerWidth) - Math.max(box.left, 0))
                           : 0;
  // The main area scrolls, not the window: positions are taken from the top of its content.
  const scroller = main || document.documentElement;
  const origin = scroller.getBoundingClientRect().top - scroller.scrollTop;
  const figs = [...(main ? main.querySelectorAll(
      '[data-testid="stPlotlyChart"], [class*="st-key-diagram_"] svg') : [])]
    .filter(shown).map((e) => e.getBoundingClientRect().top - origin);
  return {
    sidebar: {collapsed: !bar || bar.getAttribute('data-collapsed') === 'true'
                         || visibleWidth < 2, width: Math.round(visibleWidth)},
    smallest: found.slice(0, 8),
    count: found.length,
    first_figure_top: figs.length ? Math.round(Math.min(...figs)) : null,
    height: Math.round(scroller.scrollHeight),
  };
}
"""


# Every Plotly chart drawn and no lazy-loading placeholder left.
DRAWN_JS = """
() => !document.querySelector('[data-testid="stSkeleton"]') &&
  [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
    .every((el) => el.querySelector(".main-svg"))
"""


MIN_TEXT_PX = 18


def projector_problems(measured: dict, height: int) -> list[str]:
    """What keeps a page in presenter mode from fitting a projector ``height`` px tall: the
    sidebar open, no text found, text a student reads below 18 px, or no figure (a chart
    or a diagram) starting on the first screen."""
    problems = []
    if not measured["sidebar"]["collapsed"]:
        problems.append(f"the sidebar is open ({measured['sidebar']['width']} px wide)")
    if measured["count"] == 0:
        problems.append("no text found in the main area")
    small = [s for s in measured["smallest"] if s["size"] < MIN_TEXT_PX]
    if small:
        problems.append(f"text below {MIN_TEXT_PX} px: " + "; ".join(
            f"{s['size']} px in {s['path']} ({s['text']!r})" for s in small))
    top = measured["first_figure_top"]
    if top is None:
        problems.append("no figure on the page")
    elif top >= height:
        problems.append(f"the first figure starts at {top} px, below the first screen "
                        f"({height} px)")
    return problems


def describe(measured: dict) -> str:
    """One line per measurement, for failure messages and reports."""
    small = measured["smallest"][:4]
    fonts = "; ".join(f"{s['size']} px {s['path']} {s['text']!r}" for s in small)
    return (f"sidebar {'collapsed' if measured['sidebar']['collapsed'] else 'OPEN'} "
            f"(visible {measured['sidebar']['width']} px); smallest text: {fonts}; "
            f"first figure top {measured['first_figure_top']} px of "
            f"{measured['height']} px")


if __name__ == "__main__":  # pragma: no cover - a hand tool
    import argparse
    import json

    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="e.g. http://localhost:8604")
    parser.add_argument("paths", nargs="+", help="URL paths, '' for home")
    parser.add_argument("--query", default="presenter=true")
    parser.add_argument("--height", type=int, default=720)
    parser.add_argument("--shots", default="", help="folder for screenshots")
    args = parser.parse_args()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        page = browser.new_page(viewport={"width": 1280, "height": args.height})
        for p in args.paths:
            page.goto(f"{args.base}/{p}?{args.query}")
            page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]'
                                   ' [data-testid="stMain"] h1', timeout=60_000)
            page.wait_for_function(DRAWN_JS, timeout=60_000)
            page.wait_for_timeout(2000)
            measured = page.evaluate(MEASURE_JS)
            print(p or "home", json.dumps(measured, ensure_ascii=False))
            if args.shots:
                page.screenshot(path=f"{args.shots}/{p or 'home'}.png", full_page=True)
        browser.close()
