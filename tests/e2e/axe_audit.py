"""axe-core's audit and the headings check, shared by the browser tier's tests.

axe-core (bundled by the PyPI package ``axe-playwright-python``: nothing is fetched) runs
every rule tagged WCAG 2.0 or 2.1, level A or AA, on the page as drawn. ``audit(page)``
returns what is wrong, one readable block per rule (its id, impact, help text and every
element it names), and the heading problems (not one h1, or a level skipped). No rule is
switched off: ``RULES_OFF`` would say why one cannot apply.

Where it runs, on every page (one page load serves it and the test it sits in, as a load
costs seconds on 2 cores): at the defaults in ``test_classroom.py``'s nonsense-link test
(the page ignores the link's settings and says so), and in presenter mode at 1280 × 720
after the teacher's link and a moved control in ``test_classroom.py``.
``test_accessibility.py`` shows it can fail.
"""

from __future__ import annotations

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page

WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
# Rule id -> why it cannot apply here. Empty: every rule of the four tags runs.
RULES_OFF: dict[str, str] = {}
AXE_OPTIONS = {
    "runOnly": {"type": "tag", "values": WCAG_TAGS},
    "resultTypes": ["violations"],
    "rules": {rule: {"enabled": False} for rule in RULES_OFF},
}
_AXE = Axe()

# The headings of the main area in document order, as (level, text): hidden ones too (a
# closed expander's), since a screen reader meets them once it is opened.
_HEADINGS_JS = """
() => [...document.querySelectorAll(
  '[data-testid="stMain"] :is(h1, h2, h3, h4, h5, h6)')].map(
  (h) => [Number(h.tagName[1]), h.textContent.trim().slice(0, 60)])
"""


def axe_violations(page: Page) -> list[str]:
    """axe-core's violations on the page as drawn, one readable block per rule."""
    found = _AXE.run(page, options=AXE_OPTIONS).response["violations"]
    report = []
    for rule in found:
        nodes = []
        for node in rule["nodes"]:
            checks = node.get("any", []) + node.get("all", []) + node.get("none", [])
            why = "; ".join(c["message"] for c in checks)
            nodes.append(f"    {' '.join(map(str, node['target']))}\n"
                         f"      {node['html'][:160]}\n      {why[:300]}")
        report.append(f"  {rule['id']} ({rule['impact']}): {rule['help']} "
                      f"[{len(rule['nodes'])} element(s)]\n" + "\n".join(nodes))
    return report


def heading_problems(page: Page) -> list[str]:
    """One h1, and no heading more than one level below the one before it."""
    headings = page.evaluate(_HEADINGS_JS)
    problems = []
    ones = [text for level, text in headings if level == 1]
    if len(ones) != 1:
        problems.append(f"{len(ones)} h1 headings: {ones}")
    for (before, _), (level, text) in zip(headings, headings[1:], strict=False):
        if level > before + 1:
            problems.append(f"h{before} then h{level} ({text!r}): a level skipped")
    return problems


def audit(page: Page) -> list[str]:
    """Everything axe-core and the headings check find wrong on the page as drawn."""
    return axe_violations(page) + [f"  headings: {p}" for p in heading_problems(page)]
