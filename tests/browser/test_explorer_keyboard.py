"""The diagram explorer with the keyboard alone, in JupyterLab 4 in Chromium: the filled release
notebook up to its explorer cell Run All, then Tab from the cell into the explorer. Each control
is named in Chromium's accessibility tree and reached in order with a visible focus outline;
changing the item, device and parent and typing an expression (Enter) redraws the diagram and
says what it shows through a polite live region; axe finds nothing in the explorer's output.

Slow (a JupyterLab server and its kernel, the twenty measured by the reveal): about a minute.
"""

from __future__ import annotations

import re

import nbformat
import pytest
import torch
from support.chromium import require_chromium, unavailable

from viewcopy.engine.devices import available_devices
from viewcopy.engine.measure import measure
from viewcopy.exercise import catalogue

pytestmark = [pytest.mark.browser]

require_chromium("VIEWCOPY_REQUIRE_BROWSER")

from playwright.sync_api import expect  # noqa: E402
from support.axe import AXE_SEES_THE_SHELL, audit, axe_problem, described  # noqa: E402
from support.browser_lab import KERNEL_MS, artifacts, at, cell, output_area, run_all  # noqa: E402

REDRAW_MS = 120_000  # one op measured by a busy two-core machine's kernel
VIEWPORT = {"width": 1400, "height": 1200}
CONTROLS = ("item", "device", "parent", "expression")
"""The explorer's controls, in the order Tab reaches them."""
ROLES = {"item": "combobox", "device": "combobox", "parent": "combobox", "expression": "textbox"}
MOST_TABS = 8
"""Tabs from the explorer's cell to its first control (JupyterLab's cell toolbar comes first)."""
FOCUSED = """() => { const e = document.activeElement;
    return e && e.labels && e.labels.length ? e.labels[0].textContent : null; }"""
OUTLINE = """e => { const s = getComputedStyle(e);
    let back = e.parentElement;
    while (back && getComputedStyle(back).backgroundColor === 'rgba(0, 0, 0, 0)')
        back = back.parentElement;
    return {style: s.outlineStyle, width: parseFloat(s.outlineWidth), colour: s.outlineColor,
            behind: back ? getComputedStyle(back).backgroundColor : 'rgb(255, 255, 255)'}; }"""


@pytest.fixture(scope="module")
def shots():
    return artifacts("explorer_keyboard")


@pytest.fixture(scope="module")
def notebook(filled):
    """The release filled as the synthetic student `fifteen` did, up to the explorer cell."""
    cut = nbformat.from_dict(filled)
    cut.cells = cut.cells[: at(cut, "explorer") + 1]
    return cut


@pytest.fixture(scope="module")
def page(student_tab, notebook, shots):
    """The student's tab after Run All: the explorer's cell is the active one, and has focus."""
    tab, _ = student_tab(notebook, shots, VIEWPORT)
    run_all(tab, at(notebook, "explorer"), KERNEL_MS)
    explorer_cell = cell(tab, at(notebook, "explorer"))
    assert explorer_cell.evaluate("node => node === document.activeElement")
    return tab


@pytest.fixture(scope="module")
def explorer(page, notebook):
    """The explorer widget in its cell's output."""
    widget = output_area(page, at(notebook, "explorer")).locator(".widget-vbox.viewcopy-explorer")
    expect(widget).to_be_visible()
    return widget


def focused(page) -> str | None:
    """The label of the control that has the keyboard focus (None: not a labelled control)."""
    return page.evaluate(FOCUSED)


def reach(page, control: str) -> None:
    """Press Tab (Shift+Tab back from a later control) until `control` has the focus."""
    now = focused(page)
    back = now in CONTROLS and CONTROLS.index(now) > CONTROLS.index(control)
    for _ in range(MOST_TABS):
        if focused(page) == control:
            return
        page.keyboard.press("Shift+Tab" if back else "Tab")
    assert focused(page) == control, f"{MOST_TABS} Tabs did not reach {control!r}"


def choose_next(page) -> None:
    """In the focused list: Space opens it, ArrowDown moves to the next option, Enter picks it.
    (On a closed list JupyterLab takes the arrow keys to move between cells: ipywidgets#3912.)"""
    page.keyboard.press("Space")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")


def luminance(css: str, behind: tuple[float, ...] = (255, 255, 255)) -> float:
    """WCAG relative luminance of a CSS rgb()/rgba() colour laid over `behind`."""
    r, g, b, *alpha = (float(v) for v in re.findall(r"[\d.]+", css))
    a = alpha[0] if alpha else 1.0
    mixed = [a * c + (1 - a) * k for c, k in zip((r, g, b), behind, strict=True)]
    linear = [
        (c / 255) / 12.92 if c <= 10.31 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in mixed
    ]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(colour: str, behind: str) -> float:
    back = tuple(float(v) for v in re.findall(r"[\d.]+", behind)[:3])
    lighter, darker = sorted((luminance(colour, back), luminance(behind)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def shown(parent: str, expr: str, device: str) -> tuple[str, str]:
    """What torch and the engine say the explorer must announce: the result's shape and stride,
    and the verdict."""
    x = eval(catalogue.parent_expr(parent), {"torch": torch})
    result = eval(expr, {"torch": torch, "x": x})
    verdict = measure(expr, catalogue.parent_expr(parent), device, parent_name=parent).verdict
    return f"shape {tuple(result.shape)}, stride {result.stride()}", verdict


def announced(explorer, parent: str, expr: str, device: str, head: str) -> None:
    """The live region says `head`, the verdict, the result's layout as torch has it, and the
    drawn diagram's own text alternative (its `<desc>`)."""
    said = explorer.locator('[aria-live="polite"]')
    layout, verdict = shown(parent, expr, device)
    expect(said).to_contain_text(f"{head} on parent {parent} ({device}): {verdict.upper()}.")
    expect(said).to_contain_text(f"{expr}: {layout}")
    desc = explorer.locator("svg desc").text_content()
    expect(said).to_contain_text(desc)


def test_every_control_has_a_name_in_the_accessibility_tree(explorer):
    tree = explorer.aria_snapshot()
    for control, role in ROLES.items():
        assert f'{role} "{control}"' in tree, tree
        expect(explorer.get_by_role(role, name=control, exact=True)).to_have_count(1)


def test_tab_reaches_each_control_in_order_with_a_visible_focus(page, explorer, shots):
    reach(page, CONTROLS[0])
    for i, control in enumerate(CONTROLS):
        if i:
            page.keyboard.press("Tab")
        assert focused(page) == control
        ring = explorer.get_by_label(control, exact=True).evaluate(OUTLINE)
        assert ring["style"] == "solid" and ring["width"] >= 2, (control, ring)
        assert contrast(ring["colour"], ring["behind"]) >= 3, (control, ring)
        others = [c for c in CONTROLS if c != control]
        for other in others:
            assert explorer.get_by_label(other, exact=True).evaluate(OUTLINE)["style"] == "none"
        explorer.screenshot(path=shots / f"focus-{control}.png")
    for control in reversed(CONTROLS[:-1]):
        page.keyboard.press("Shift+Tab")
        assert focused(page) == control


def test_each_change_from_the_keyboard_redraws_and_is_announced_politely(page, explorer):
    title = explorer.locator('svg [data-part="title"]')
    said = explorer.locator('[aria-live="polite"]')
    expect(said).to_have_count(1)
    expect(said).to_have_attribute("role", "status")
    item, device, parent = catalogue.OPS[1], available_devices()[-1], catalogue.PARENTS[1]

    reach(page, "item")
    choose_next(page)
    expect(title).to_contain_text(f"item {item.item}: {item.expr} · parent x", timeout=REDRAW_MS)
    announced(explorer, "x", item.expr, "cpu", f"Diagram of item {item.item}, {item.expr}")
    assert focused(page) == "item"

    reach(page, "device")
    page.keyboard.press("End")  # the last device: on a machine with only a CPU, nothing changes
    expect(title).to_contain_text(f"· {device} ·", timeout=REDRAW_MS)

    reach(page, "parent")
    choose_next(page)
    expect(title).to_contain_text(f"parent {parent} · {device}", timeout=REDRAW_MS)
    announced(explorer, parent, item.expr, device, f"item {item.item}, {item.expr}")

    reach(page, "expression")
    typed = "x[::2, 1:]"
    page.keyboard.type(typed)
    page.keyboard.press("Enter")
    expect(title).to_contain_text(f"{typed} · parent {parent}", timeout=REDRAW_MS)
    announced(explorer, parent, typed, device, f"Diagram of {typed}")
    assert focused(page) == "expression"


def test_a_typo_is_announced_and_the_diagram_is_kept(page, explorer):
    title = explorer.locator('svg [data-part="title"]')
    said = explorer.locator('[aria-live="polite"]')
    before = title.text_content()
    reach(page, "expression")
    page.keyboard.press("Control+a")
    page.keyboard.type("x.(")
    page.keyboard.press("Enter")
    expect(said).to_contain_text("not a valid Python expression", timeout=REDRAW_MS)
    expect(said).to_contain_text("the last one drawn")
    assert title.text_content() == before


def test_axe_finds_nothing_in_the_explorer(page, notebook):
    if (problem := axe_problem()) is not None:
        unavailable(problem, "VIEWCOPY_REQUIRE_BROWSER")
    page.add_style_tag(content=AXE_SEES_THE_SHELL)
    index = at(notebook, "explorer")
    found = audit(page, [f'.jp-Notebook-cell[data-windowed-list-index="{index}"] .jp-OutputArea'])
    assert found == [], described(found)
