"""A tensor's logical grid: which cells to draw within the budget (panels, rows and columns, the
rest elided), each drawn cell labelled with the storage element it reads."""

from __future__ import annotations

import math
from dataclasses import dataclass

from viewcopy.display.diagram_style import CHAR, FILLS, GAP_W, LINE, MUTED, PAD
from viewcopy.display.svg_canvas import Canvas
from viewcopy.engine.layout import Index, Layout, shown_positions

CELL_H = 22


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


def _axis(cells: tuple[int | None, ...], size: float) -> list[tuple[int | None, float, float]]:
    """(index, start, width) of each drawn row or column, gaps narrower."""
    out, at = [], 0.0
    for i in cells:
        width = size if i is not None else GAP_W
        out.append((i, at, width))
        at += width
    return out


def grid(c: Canvas, role: str, layout: Layout, plan: Plan, x0: float, y0: float) -> float:
    """Draw one tensor's logical grid, panel by panel; returns the y below it."""
    labels = [str(layout.storage_index(i)) for i in plan.indices()]
    widest = max([2, *map(len, labels), *(len(str(j)) for j in plan.cols if j is not None)])
    cols = _axis(plan.cols, widest * CHAR + 10)
    rows = _axis(plan.rows, CELL_H)
    if not labels:
        c.text(x0, y0 + 12, "(no elements)", fill=MUTED)
        return y0 + LINE + 6
    rows_w = max(len(str(r)) for r in plan.rows if r is not None) * CHAR + 8
    head = rows_w if plan.ndim >= 2 else 0
    top = y0 + (LINE if plan.ndim > 2 else 0) + (LINE if plan.ndim >= 1 else 0)
    x = x0
    for lead in plan.panels:
        if lead is None:
            c.text(x + GAP_W / 2, top + 15, "…", middle=True, **{"class": "ellipsis"})
            x += GAP_W + PAD
            continue
        if plan.ndim > 2:
            c.text(x, y0 + 12, "[" + ", ".join(map(str, lead)) + ", :, :]", fill=MUTED)
        for j, at, w in cols if plan.ndim >= 1 else ():
            c.text(
                x + head + at + w / 2,
                top - 5,
                "…" if j is None else str(j),
                middle=True,
                fill=MUTED,
            )
        for i, y_at, h in rows:
            y = top + y_at
            if head:
                c.text(
                    x + head - 6,
                    y + 15,
                    "…" if i is None else str(i),
                    fill=MUTED,
                    **{"text-anchor": "end"},
                )
            for j, x_at, w in cols:
                cx = x + head + x_at
                if i is None or j is None:
                    c.text(cx + w / 2, y + 15, "…", middle=True, **{"class": "ellipsis"})
                    continue
                index = plan.index(lead, i, j)
                storage = layout.storage_index(index)
                c.open(
                    **{
                        "class": "cell",
                        "data-index": ",".join(map(str, index)),
                        "data-storage": storage,
                    }
                )
                c.rect(cx, y, w, h, FILLS[role])
                c.text(cx + w / 2, y + 15, str(storage), middle=True)
                c.close()
        x += head + cols[-1][1] + cols[-1][2] + PAD
    return top + rows[-1][1] + rows[-1][2] + 6
