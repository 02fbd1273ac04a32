"""axe-core, pinned, run in Chromium over a page or a part of it: the WCAG 2.1 A and AA rules, with
colour contrast computed by the browser. No viewcopy logic here.

scripts/setup.sh installs the pinned axe-core from npm into .venv (AXE_VERSION there and here).
"""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import Page

AXE_VERSION = "4.14.1"
AXE = Path(__file__).parents[2] / ".venv" / "lib" / "node_modules" / "axe-core" / "axe.min.js"
WCAG21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
AXE_SEES_THE_SHELL = "body { height: 100vh; }"
"""A style for a JupyterLab page before it is audited. JupyterLab's body is 0 px tall with
`overflow: hidden` and its shell absolutely positioned: nothing is clipped on screen, but axe
reads every node as clipped by the body and skips its colour contrast. The body given the
window's height changes nothing drawn."""
RUN = """async ([include, exclude, tags]) => {
    const context = exclude.length ? {include, exclude} : {include};
    const found = await axe.run(context, {runOnly: {type: 'tag', values: tags},
                                          resultTypes: ['violations', 'incomplete']});
    const rules = results => results.map(v => ({
        id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map(n => ({target: n.target.join(' '), summary: n.failureSummary,
                                  html: n.html.slice(0, 300)})),
    }));
    return {violations: rules(found.violations), incomplete: rules(found.incomplete)};
}"""


def axe_problem() -> str | None:
    """Why axe cannot run here (None when it can)."""
    if not AXE.exists():
        return f"no {AXE} (scripts/setup.sh installs axe-core {AXE_VERSION} from npm)"
    version = json.loads((AXE.parent / "package.json").read_text())["version"]
    if version != AXE_VERSION:
        return f"axe-core {version} in .venv, not the pinned {AXE_VERSION}: run scripts/setup.sh"
    return None


def audit(page: Page, include: list[str], exclude: list[str] = ()) -> list[dict]:
    """The WCAG 2.1 A/AA violations axe finds in the page's elements matching the CSS selectors
    `include` (minus `exclude`): each rule with its nodes."""
    return findings(page, include, exclude)["violations"]


def findings(page: Page, include: list[str], exclude: list[str] = ()) -> dict[str, list[dict]]:
    """One run of axe over those elements: its violations, and what it could not decide (a colour
    contrast behind an element it cannot see through, say), each rule with its nodes:
    {"violations": [...], "incomplete": [...]}."""
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    selectors = [[[s] for s in include], [[s] for s in exclude]]
    return page.evaluate(RUN, [*selectors, WCAG21_AA])


def described(violations: list[dict]) -> str:
    """Violations as lines a failing test shows: rule, impact, and each node with its summary."""
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}): {v['help']} — {len(v['nodes'])} node(s)")
        lines += [f"    {n['target']}: {n['summary']}\n      {n['html']}" for n in v["nodes"][:8]]
    return "\n".join(lines)
