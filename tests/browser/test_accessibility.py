"""WCAG 2.1 AA, audited where students and instructors meet the lab: a filled release notebook Run
All in JupyterLab 4 in Chromium, then everything the lab outputs audited by axe-core (pinned;
the wcag2a, wcag2aa, wcag21a and wcag21aa rules, colour contrast computed by the browser) in
JupyterLab Light, Dark and Dark High Contrast; the diagrams found in Chromium's accessibility tree
with their strides and verdicts. Violations in JupyterLab's own chrome are outside the audit (the
selectors below take the outputs only) and are listed in docs/accessibility.md.

Slow (a JupyterLab server and its kernel, the whole notebook): a few minutes.
"""

from __future__ import annotations

import re

import pytest
import torch
import yaml
from support.chromium import require_chromium, unavailable

from viewcopy.course.assignment import grade_id
from viewcopy.demo.synthetic import next_predictions_source
from viewcopy.display.diagram_style import BADGES
from viewcopy.display.spreadsheet import Spreadsheet
from viewcopy.exercise import catalogue
from viewcopy.exercise.measured import measure_item

pytestmark = [pytest.mark.browser]

require_chromium("VIEWCOPY_REQUIRE_BROWSER")

from playwright.sync_api import expect  # noqa: E402
from support.axe import AXE_SEES_THE_SHELL, axe_problem, described, findings  # noqa: E402
from support.browser_lab import (  # noqa: E402 (after the checks: it imports playwright)
    KERNEL_MS,
    artifacts,
    at,
    cell,
    output_area,
    replace_source,
    run_all,
    wait_idle,
)

if (problem := axe_problem()) is not None:
    unavailable(problem, "VIEWCOPY_REQUIRE_BROWSER")

VIEWPORT = {"width": 1400, "height": 2400}
EVERY_CELL_LAID_OUT = {"@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"}}
"""The notebook lays out every cell, on screen or not: axe sees all the lab outputs."""
THEMES = ("JupyterLab Light", "JupyterLab Dark", "JupyterLab Dark High Contrast")
OUTPUTS = [".jp-OutputArea-output"]
"""What the lab outputs: every output area's content (JupyterLab's chrome is not the lab's)."""


@pytest.fixture(scope="module")
def shots():
    return artifacts("accessibility")


@pytest.fixture(scope="module")
def notebook(filled):
    return filled


@pytest.fixture(scope="module")
def page(student_tab, notebook, shots):
    """The student's tab: the filled release Run All in JupyterLab, NEXT_PREDICTIONS written once
    the next ops are drawn, then every cell below run: all the lab shows, on screen."""
    tab, root = student_tab(notebook, shots, VIEWPORT, settings=EVERY_CELL_LAID_OUT)
    run_all(tab, at(notebook, "lock_next"), KERNEL_MS)  # stops: the next ops are drawn now
    replace_source(tab, at(notebook, "next_predictions"), next_predictions_source("rules", root))
    tab.get_by_role("menuitem", name="Run", exact=True).click()
    tab.get_by_role("menuitem", name="Run Selected Cell and All Below", exact=True).click()
    last = output_area(tab, len(notebook.cells) - 1).locator(".jp-OutputArea-output").first
    expect(last).to_be_attached(timeout=KERNEL_MS)
    wait_idle(tab, KERNEL_MS)
    tab.add_style_tag(content=AXE_SEES_THE_SHELL)
    return tab


def use_theme(page, theme: str) -> None:
    """Use Theme: `theme` from the command palette, as a student picks it; wait until the page
    wears it."""
    page.keyboard.press("Escape")
    page.keyboard.press("Control+Shift+c")
    page.keyboard.insert_text(f"Use Theme: {theme}")
    item = re.compile(f"^Use Theme: {re.escape(theme)}$")
    page.locator(".lm-CommandPalette-item", has_text=item).click()
    expect(page.locator(f'body[data-jp-theme-name="{theme}"]')).to_have_count(1)
    page.wait_for_timeout(1000)  # the theme's stylesheet applied to every output


WHOLE = """selectors => selectors.map(selector =>
    [...document.querySelectorAll(selector)].every(output => {
        const box = output.getBoundingClientRect();
        return box.top >= 0 && box.bottom <= window.innerHeight;
    }))"""
"""For each selector, whether everything it matches is drawn whole in the window."""
CELL_OF = """targets => targets.map(target => {
    const node = document.querySelector(target);
    const cell = node && node.closest('.jp-Notebook-cell');
    return cell ? Number(cell.dataset.windowedListIndex) : null;
})"""
"""The index of the notebook cell holding each of axe's targets (null: none found)."""
NO_CELL = "(a node in no cell)"
"""Where a finding whose node no cell holds is reported: never dropped."""


def outputs_of(index: int) -> str:
    return f'.jp-Notebook-cell[data-windowed-list-index="{index}"] {OUTPUTS[0]}'


def audit_outputs(page, notebook) -> tuple[dict[str, list], dict[str, list]]:
    """Every code cell's outputs audited on screen (colour contrast is computed for what is drawn
    in the window): the first cell not yet audited is scrolled to the top, then axe runs once
    over it and every later one drawn whole in the window with it. Violations and what axe could
    not decide, by grade id."""
    names = {i: grade_id(c) for i, c in enumerate(notebook.cells) if c.cell_type == "code"}
    pending = [i for i in names if page.locator(outputs_of(i)).count()]
    by_cell: dict[str, dict[str, list]] = {"violations": {}, "incomplete": {}}
    while pending:
        cell(page, pending[0]).evaluate("node => node.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(200)
        whole = page.evaluate(WHOLE, [outputs_of(i) for i in pending[1:]])
        batch = [pending[0], *(i for i, drawn in zip(pending[1:], whole, strict=True) if drawn)]
        for kind, rules in findings(page, [outputs_of(i) for i in batch]).items():
            targets = [node["target"] for rule in rules for node in rule["nodes"]]
            where = iter(page.evaluate(CELL_OF, targets))
            for rule in rules:
                nodes: dict[str, list] = {}
                for node in rule["nodes"]:
                    nodes.setdefault(names.get(next(where), NO_CELL), []).append(node)
                for name, held in nodes.items():
                    by_cell[kind].setdefault(name, []).append({**rule, "nodes": held})
        pending = [i for i in pending if i not in batch]
    return by_cell["violations"], by_cell["incomplete"]


@pytest.mark.parametrize("theme", THEMES)
def test_everything_the_lab_outputs_meets_wcag_2_1_aa(page, notebook, theme, shots):
    use_theme(page, theme)
    found, undecided = audit_outputs(page, notebook)
    page.screenshot(path=shots / f"{theme.replace(' ', '-')}.png", full_page=False)
    report = "\n".join(f"[{cell_id}]\n{described(v)}" for cell_id, v in found.items())
    print("undecided:\n" + "\n".join(f"[{c}]\n{described(v)}" for c, v in undecided.items()))
    assert found == {}, report


def images(node: object) -> list[str]:
    """The accessible names of the images in a parsed ARIA snapshot, in the page's order."""
    if isinstance(node, list):
        return [name for child in node for name in images(child)]
    if isinstance(node, dict):
        return [name for pair in node.items() for part in pair for name in images(part)]
    named = re.fullmatch(r'img "(.*)"', node, re.DOTALL) if isinstance(node, str) else None
    return [named.group(1)] if named else []


def test_each_missed_item_s_diagram_is_read_out_with_its_strides_and_verdict(
    page, notebook, fifteen
):
    """What a screen reader reads, from Chromium's accessibility tree: each diagram the graded
    cell draws for a missed item is an image named with its verdict in words and the strides of
    the parent and of the result, all measured here."""
    tree = output_area(page, at(notebook, "score_predictions")).aria_snapshot()
    said = images(yaml.safe_load(tree))
    assert len(said) == len(fifteen.wrong_items), tree
    x = eval(catalogue.PARENT_EXPR, {"torch": torch})
    for item, name in zip(fifteen.wrong_items, said, strict=True):
        verdict = measure_item(item).verdict
        meaning = BADGES[verdict][2]
        assert f"{verdict}: item {item}: {catalogue.op(item).expr}" in name, name
        assert meaning[:1].upper() + meaning[1:] in name, name
        assert f"stride {tuple(x.stride())}" in name, name
        if verdict != "error":
            result = eval(catalogue.op(item).expr, {"x": x, "torch": torch})
            assert f"stride {tuple(result.stride())}" in name, name


def test_the_reveal_s_table_is_a_named_region_the_keyboard_reaches(page, notebook):
    reveal = output_area(page, at(notebook, "reveal"))
    tree = reveal.aria_snapshot()
    assert f'region "{Spreadsheet.table_name}"' in tree and "- table" in tree, tree
    region = reveal.get_by_role("region", name=Spreadsheet.table_name)
    expect(region).to_have_attribute("tabindex", "0")
