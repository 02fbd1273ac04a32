"""Stride and storage diagrams as standalone SVG, whole: the verdict, each tensor's logical grid,
PyTorch's message, the storage strips, and `Diagram` for notebooks and files.

Drawing reads layouts (shape, stride, offset), never tensor data, and its cost is bounded by the
cells drawn: a tensor expanded to billions of elements draws as fast as the lab's 24-element `x`.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from pathlib import Path

from viewcopy.display.diagram_style import BADGES, CHAR, COLOURS, LINE, PAD
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
from viewcopy.display.svg_canvas import Canvas, xml_attrs
from viewcopy.display.tensor_grid import CELL_H, choose_cells, grid
from viewcopy.engine.evidence import Evidence


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
    """The SVG document and its text alternative."""
    c = Canvas()
    colour, word, meaning = BADGES.get(evidence.verdict, ("#444", evidence.verdict.upper(), ""))
    said = title(evidence)
    c.open(**{"data-part": "verdict", "data-verdict": evidence.verdict})
    c.rect(PAD, PAD, len(word) * CHAR + 16, CELL_H, colour, stroke="none", rx=4)
    c.text(PAD + 8, PAD + 15, word, fill="#ffffff", **{"font-weight": "bold"})
    c.close()
    c.text(
        PAD + len(word) * CHAR + 26,
        PAD + 15,
        f"{said} · parent {evidence.parent} · {evidence.device} · {evidence.verdict}: {meaning}",
        **{"data-part": "title"},
    )
    y = PAD + CELL_H + LINE
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
        c.open(**{"data-part": role})
        c.text(PAD, y + 12, f"{role} {name}", fill=COLOURS[role], **{"font-weight": "bold"})
        c.text(PAD + (len(role) + len(name) + 3) * CHAR, y + 12, labels_say(evidence, role))
        y = c.lines(PAD, y + 12 + LINE, layout_lines(layout))
        y = grid(c, role, layout, plan, PAD, y) + LINE
        c.close()
    if evidence.verdict == "error":
        c.text(PAD, y + 12, "PyTorch's message:", fill=BADGES["error"][0])
        wrapped = textwrap.wrap(evidence.message or "(no message)", 96, break_on_hyphens=False)
        y = c.lines(PAD, y + 12 + LINE, wrapped, **{"data-part": "message"}) + LINE
    y = _strips(c, evidence, tenants, max_strip, y)
    label = f"{evidence.verdict}: {said} on parent {evidence.parent} ({evidence.device})"
    words = alternative(evidence, tenants.get("result"))
    return c.svg(y + PAD, label, words), words


def _strips(
    c: Canvas, evidence: Evidence, tenants: dict[str, Tenant], budget: int, y: float
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
