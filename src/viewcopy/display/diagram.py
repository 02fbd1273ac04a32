"""The whole stride/storage diagram as standalone SVG, and `Diagram` for notebooks and files."""

from __future__ import annotations

import textwrap
from collections import Counter
from pathlib import Path

from viewcopy.display.diagram_style import (
    BADGE_WORD,
    BADGES,
    BASELINE,
    CHAR,
    COLOURS,
    LINE,
    MARGIN,
    OTHER_BADGE,
)
from viewcopy.display.diagram_words import (
    alternative,
    labels_say,
    layout_lines,
    new_storage,
    shares_parent_elements,
    storage_size,
    title,
)
from viewcopy.display.storage_strip import Tenant, reach, strip
from viewcopy.display.svg_canvas import SvgCanvas, xml_attrs
from viewcopy.display.tensor_grid import CELL_BASELINE, CELL_H, Plan, choose_cells, grid
from viewcopy.engine.evidence import Evidence
from viewcopy.engine.layout import Layout

BADGE_INSET = 8
"""From the verdict badge's left edge to its word, and from its word to its right edge."""
BADGE_RADIUS = 4
"""Radius of the badge's corners."""
TITLE_GAP = 10
"""Between the badge and the title beside it."""
HEADING_GAP_CHARS = 2
"""Characters between a tensor's name and what its cells' numbers index."""
MESSAGE_CHARS = 96
"""Characters per line of PyTorch's message."""


def render_svg(evidence: Evidence, **budget: int) -> str:
    """One standalone SVG document drawing `evidence`: grids, storage strips and the verdict."""
    return _drawn(evidence, **budget)[0]


def _drawn(
    evidence: Evidence,
    *,
    max_rows: int = 8,
    max_cols: int = 12,
    max_panels: int = 4,
    max_strip: int = 48,
) -> tuple[str, str]:
    """The SVG document and its text alternative: the verdict, each tensor's grid, PyTorch's
    message, the storage strips.

    Drawing reads layouts (shape, stride, offset), never tensor data, and its cost is bounded by
    the cells drawn: a tensor expanded to billions of elements draws as fast as the lab's
    24-element `x`.
    """
    c = SvgCanvas()
    _verdict(c, evidence)
    y = MARGIN + CELL_H + LINE
    tenants: dict[str, Tenant] = {}
    tensors = (
        ("parent", evidence.parent, evidence.parent_layout),
        ("result", evidence.op, evidence.result_layout),
    )
    for role, name, layout in tensors:
        if layout is None:
            continue
        plan = choose_cells(layout, max_rows, max_cols, max_panels)
        drawn = Counter(layout.storage_index(i) for i in plan.indices())
        counts, exact = reach(layout, drawn)
        tenants[role] = Tenant(role, counts, drawn, exact)
        y = _tensor(c, evidence, role, name, layout, plan, y)
    if evidence.verdict == "error":
        y = _message(c, evidence, y)
    y = _strips(c, evidence, tenants, max_strip, y)
    label = f"{evidence.verdict}: {title(evidence)} on parent {evidence.parent} ({evidence.device})"
    words = alternative(evidence, tenants.get("result"))
    return c.svg(y + MARGIN, label, words), words


def _verdict(c: SvgCanvas, evidence: Evidence) -> None:
    """The verdict's badge in the top-left corner, and the title beside it."""
    badge = (OTHER_BADGE, evidence.verdict.upper(), "")
    colour, word, meaning = BADGES.get(evidence.verdict, badge)
    c.open(**{"data-part": "verdict", "data-verdict": evidence.verdict})
    width = len(word) * CHAR + 2 * BADGE_INSET
    c.rect(MARGIN, MARGIN, width, CELL_H, colour, stroke="none", rx=BADGE_RADIUS)
    word_at = MARGIN + BADGE_INSET
    c.text(word_at, MARGIN + CELL_BASELINE, word, fill=BADGE_WORD, **{"font-weight": "bold"})
    c.close()
    c.text(
        MARGIN + len(word) * CHAR + (2 * BADGE_INSET + TITLE_GAP),
        MARGIN + CELL_BASELINE,
        f"{title(evidence)} · parent {evidence.parent} · {evidence.device} · "
        f"{evidence.verdict}: {meaning}",
        **{"data-part": "title"},
    )


def _tensor(
    c: SvgCanvas, evidence: Evidence, role: str, name: str, layout: Layout, plan: Plan, y: float
) -> float:
    """One tensor from `y` down: its name, what its cells' numbers index, its layout in lines and
    its grid; returns the y below it."""
    c.open(**{"data-part": role})
    heading = f"{role} {name}"
    c.text(MARGIN, y + BASELINE, heading, fill=COLOURS[role], **{"font-weight": "bold"})
    says_at = MARGIN + (len(heading) + HEADING_GAP_CHARS) * CHAR
    c.text(says_at, y + BASELINE, labels_say(evidence, role))
    y = c.lines(MARGIN, y + BASELINE + LINE, layout_lines(layout))
    y = grid(c, role, layout, plan, MARGIN, y) + LINE
    c.close()
    return y


def _message(c: SvgCanvas, evidence: Evidence, y: float) -> float:
    """PyTorch's message for an op it refused, wrapped; returns the y below it."""
    c.text(MARGIN, y + BASELINE, "PyTorch's message:", fill=BADGES["error"][0])
    message = evidence.message or "(no message)"
    wrapped = textwrap.wrap(message, MESSAGE_CHARS, break_on_hyphens=False)
    return c.lines(MARGIN, y + BASELINE + LINE, wrapped, **{"data-part": "message"}) + LINE


def _strips(
    c: SvgCanvas, evidence: Evidence, tenants: dict[str, Tenant], budget: int, y: float
) -> float:
    """The parent's storage strip, and the result's own one when it is new or re-typed."""
    parent, result = evidence.parent_layout, evidence.result_layout
    shared = shares_parent_elements(evidence)
    if parent is not None:
        on_it = [tenants["parent"], *([tenants["result"]] if shared else [])]
        caption = f"storage of the parent: {storage_size(parent)}"
        y = strip(c, "storage", caption, parent.storage_numel, on_it, budget, y)
    if result is None or shared:
        return y
    size = storage_size(result)
    if evidence.verdict == "copy":
        part, caption = "new-storage", f"{new_storage(evidence, result)} · {size}"
    else:
        part, caption = "retyped-storage", f"the same storage read as {result.dtype}: {size}"
    return strip(c, part, caption, result.storage_numel, [tenants["result"]], budget, y)


class Diagram:
    """A drawn `Evidence`: SVG text, inline HTML for notebooks, and a file when saved;
    `description` is what it shows in words (its `<desc>`)."""

    def __init__(self, evidence: Evidence, **budget: int) -> None:
        self.evidence = evidence
        self.svg, self.description = _drawn(evidence, **budget)

    def html(self) -> str:
        """The SVG inline in a scrolling region that the keyboard reaches (Tab, then the arrow
        keys scroll it): static, so it survives feedback HTML and Colab."""
        e = self.evidence
        name = {"aria-label": f"diagram of {title(e)} on parent {e.parent}"}
        return (
            f'<div class="viewcopy-diagram" role="region" tabindex="0"{xml_attrs(name)}'
            f' style="overflow-x:auto">{self.svg}</div>'
        )

    def _repr_html_(self) -> str:
        return self.html()

    def _repr_svg_(self) -> str:
        return self.svg

    def save(self, path: str | Path) -> Path:
        """Write the SVG to `path` and return it."""
        path = Path(path)
        path.write_text(self.svg, encoding="utf-8")
        return path
