"""A tensor's logical grid: the cells that fit the budget, each labelled with its storage index."""

from __future__ import annotations

import math
from dataclasses import dataclass

from viewcopy.display.diagram_style import BASELINE, CHAR, ELIDED_W, FILLS, LINE, MUTED
from viewcopy.display.svg_canvas import MIN_BOX_CHARS, SvgCanvas, box_width
from viewcopy.engine.layout import Index, Layout, shown_positions

CELL_H = 22
"""Height of a grid cell (and of the verdict's badge, drawn as one cell)."""
CELL_BASELINE = 15
"""From a cell's top to the baseline of its label (and of an elided cell's `…`)."""
COLUMN_LABEL_RISE = 5
"""From the grid's top edge up to its column labels' baseline."""
ROW_LABELS_ROOM = 8
"""Width the row labels' column adds to its widest label."""
ROW_LABEL_GAP = 6
"""From a row label's right end to the grid."""
PANEL_GAP = 14
"""Between two panels, and after an elided one."""
BELOW_GRID = 6
"""Space under a grid (or under its `(no elements)`)."""
Axis = list[tuple[int | None, float, float]]
"""(index, start, width) of each drawn row or column; None for an elided run."""


@dataclass(frozen=True)
class Plan:
    """Which logical cells to draw: panels over the leading indices, then rows and columns."""

    ndim: int
    panels: tuple[Index | None, ...]
    rows: tuple[int | None, ...]
    cols: tuple[int | None, ...]

    def index(self, lead: Index, row: int, col: int) -> Index:
        return lead + ((), (col,), (row, col))[min(self.ndim, 2)]

    def indices(self):
        for lead in self.panels:
            for row in self.rows:
                for col in self.cols:
                    if lead is not None and row is not None and col is not None:
                        yield self.index(lead, row, col)


def choose_cells(layout: Layout, max_rows: int, max_cols: int, max_panels: int) -> Plan:
    """The cells of `layout` to draw: at most this many rows, columns and panels of each."""
    shape = layout.shape
    if len(shape) < 2:
        cols = shown_positions(shape[0], max_cols) if shape else [0]
        return Plan(len(shape), ((),), (0,), tuple(cols))
    lead = shape[:-2]
    panels = tuple(
        None if p is None else unravel(p, lead)
        for p in shown_positions(math.prod(lead), max_panels)
    )
    rows = shown_positions(shape[-2], max_rows)
    return Plan(len(shape), panels, tuple(rows), tuple(shown_positions(shape[-1], max_cols)))


def unravel(flat: int, shape: tuple[int, ...]) -> Index:
    """The index of the `flat`-th element of `shape`, counted in row-major order."""
    index = []
    for size in reversed(shape):
        flat, i = divmod(flat, size)
        index.append(i)
    return tuple(reversed(index))


def _axis(cells: tuple[int | None, ...], size: float) -> Axis:
    """(index, start, width) of each drawn row or column, gaps narrower."""
    out, at = [], 0.0
    for i in cells:
        width = size if i is not None else ELIDED_W
        out.append((i, at, width))
        at += width
    return out


@dataclass(frozen=True)
class _Frame:
    """Where every panel of one grid puts its labels and cells, from the panel's left edge."""

    rows: Axis
    cols: Axis
    head: float  # width of the row labels' column: 0 for a grid without rows
    label_y: float  # the baseline of a panel's label (`[i, :, :]`)
    top: float  # the cells' top edge


def grid(c: SvgCanvas, role: str, layout: Layout, plan: Plan, x0: float, y0: float) -> float:
    """Draw one tensor's logical grid, panel by panel; returns the y below it."""
    labels = [str(layout.storage_index(i)) for i in plan.indices()]
    widest = max(
        [MIN_BOX_CHARS, *map(len, labels), *(len(str(j)) for j in plan.cols if j is not None)]
    )
    cols = _axis(plan.cols, box_width(widest))
    rows = _axis(plan.rows, CELL_H)
    if not labels:
        c.text(x0, y0 + BASELINE, "(no elements)", fill=MUTED)
        return y0 + LINE + BELOW_GRID
    rows_w = max(len(str(r)) for r in plan.rows if r is not None) * CHAR + ROW_LABELS_ROOM
    head = rows_w if plan.ndim >= 2 else 0
    top = y0 + (LINE if plan.ndim > 2 else 0) + (LINE if plan.ndim >= 1 else 0)
    frame = _Frame(rows, cols, head, y0 + BASELINE, top)
    x = x0
    for lead in plan.panels:
        if lead is None:
            c.ellipsis(x + ELIDED_W / 2, top + CELL_BASELINE)
            x += ELIDED_W + PANEL_GAP
            continue
        _panel(c, role, layout, plan, frame, lead, x)
        x += head + cols[-1][1] + cols[-1][2] + PANEL_GAP
    return top + rows[-1][1] + rows[-1][2] + BELOW_GRID


def _panel(
    c: SvgCanvas, role: str, layout: Layout, plan: Plan, frame: _Frame, lead: Index, x: float
) -> None:
    """One panel, its left edge at `x`: its label, column and row labels, and its cells."""
    head, top = frame.head, frame.top
    if plan.ndim > 2:
        c.text(x, frame.label_y, "[" + ", ".join(map(str, lead)) + ", :, :]", fill=MUTED)
    for j, at, w in frame.cols if plan.ndim >= 1 else ():
        c.text(
            x + head + at + w / 2,
            top - COLUMN_LABEL_RISE,
            "…" if j is None else str(j),
            middle=True,
            fill=MUTED,
        )
    for i, y_at, h in frame.rows:
        y = top + y_at
        if head:
            c.text(
                x + head - ROW_LABEL_GAP,
                y + CELL_BASELINE,
                "…" if i is None else str(i),
                fill=MUTED,
                **{"text-anchor": "end"},
            )
        for j, x_at, w in frame.cols:
            cx = x + head + x_at
            if i is None or j is None:
                c.ellipsis(cx + w / 2, y + CELL_BASELINE)
                continue
            _cell(c, role, layout, plan.index(lead, i, j), cx, y, w, h)


def _cell(
    c: SvgCanvas, role: str, layout: Layout, index: Index, x: float, y: float, w: float, h: float
) -> None:
    """One cell, labelled with the storage element it reads."""
    storage = layout.storage_index(index)
    c.open(**{"class": "cell", "data-index": ",".join(map(str, index)), "data-storage": storage})
    c.rect(x, y, w, h, FILLS[role])
    c.text(x + w / 2, y + CELL_BASELINE, str(storage), middle=True)
    c.close()
