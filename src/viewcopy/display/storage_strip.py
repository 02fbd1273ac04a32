"""A storage strip: which storage elements each tensor reaches and how many of its cells read
each, drawn as a row of slots with a bar per tensor and the counts under them."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from viewcopy.display.diagram_style import CHAR, COLOURS, GAP_W, LINE, MUTED, PAD, SLOT
from viewcopy.display.svg_canvas import Canvas
from viewcopy.engine.layout import Layout, reached, shown_positions

REACH_LIMIT = 4096
"""Layouts with at most this many non-broadcast cells get exact highlights over all storage."""

SLOT_H = 26
BARS = {"parent": "top", "result": "bottom"}


@dataclass(frozen=True)
class Tenant:
    """A tensor reaching into a storage strip, with its per-element counts."""

    role: str
    counts: dict[int, int]
    drawn: Counter[int]
    exact: bool


def reach(layout: Layout, drawn: Counter[int]) -> tuple[dict[int, int], bool]:
    """Storage element -> logical cells reaching it, and whether that covers the whole tensor.

    Stride-0 dimensions only multiply the counts, so they are dropped before counting; when the
    rest is still too big, the counts come from the drawn cells only (and are not exact).
    """
    kept = [(n, s) for n, s in zip(layout.shape, layout.stride, strict=True) if s != 0 or n == 0]
    core = replace(layout, shape=tuple(n for n, _ in kept), stride=tuple(s for _, s in kept))
    counts = reached(core, REACH_LIMIT)
    if counts is None:
        return dict(drawn), False
    factor = layout.broadcast_factor()
    return {k: n * factor for k, n in counts.items()}, True


def _strip_slots(numel: int, marks: set[int], budget: int) -> list[int | None]:
    """Storage elements to draw: all, or the marked ones and their neighbours, None for gaps."""
    if numel <= budget:
        return list(range(numel))
    keep = sorted({0, numel - 1} | {m for m in marks if 0 <= m < numel})
    if len(keep) > budget:
        keep = [keep[p] for p in shown_positions(len(keep), budget) if p is not None]
    chosen = set(keep)
    radius = 1
    while len(chosen) < budget:
        for k in keep:
            for j in (k - radius, k + radius):
                if 0 <= j < numel and len(chosen) < budget:
                    chosen.add(j)
        radius += 1
    slots: list[int | None] = []
    for k in sorted(chosen):
        if slots and k != slots[-1] + 1:
            slots.append(None)
        slots.append(k)
    return slots


def strip(
    c: Canvas, part: str, caption: str, numel: int, tenants: list[Tenant], budget: int, y: float
) -> float:
    """Draw one storage strip with each tenant's reach and multiplicities; returns y below."""
    slots = _strip_slots(numel, {k for t in tenants for k in t.drawn}, budget)
    shown = [k for k in slots if k is not None]
    notes = [caption]
    if len(shown) < numel:
        notes.append(f"{len(shown)} of {numel} elements shown")
    if not all(t.exact for t in tenants):
        notes.append("highlights from drawn cells")
    many = [t for t in tenants if any(t.counts.get(k, 0) > 1 for k in shown)]
    legend = [f"{BARS[t.role]} bar: reached by the {t.role}" for t in tenants]
    legend += [f"×k on row {n}: k cells of the {t.role} read it" for n, t in enumerate(many, 1)]
    c.open(**{"data-part": part})
    c.text(PAD, y + 12, " · ".join(notes), **{"data-part": "caption"})
    c.text(PAD, y + 12 + LINE, " · ".join(legend), fill=MUTED)
    y += 2 * LINE + 4
    widest = max(
        [
            2,
            *(len(str(k)) for k in shown),
            *(len(str(t.counts.get(k, 0))) + 1 for t in many for k in shown),
        ]
    )
    width, x = widest * CHAR + 10, PAD
    for k in slots:
        if k is None:
            c.text(x + GAP_W / 2, y + 17, "…", middle=True, **{"class": "ellipsis"})
            x += GAP_W
            continue
        counts = {f"data-{t.role}": t.counts.get(k, 0) for t in tenants}
        c.open(**{"class": "slot", "data-storage": k, **counts})
        c.rect(x, y, width, SLOT_H, SLOT)
        c.text(x + width / 2, y + 17, str(k), middle=True)
        for t in tenants:
            if t.counts.get(k, 0):
                bar_y = y + 1 if BARS[t.role] == "top" else y + SLOT_H - 6
                c.rect(x + 1, bar_y, width - 2, 5, COLOURS[t.role], stroke="none")
        for n, t in enumerate(many, 1):
            if t.counts.get(k, 0) > 1:
                c.text(
                    x + width / 2,
                    y + SLOT_H + n * LINE - 3,
                    f"×{t.counts[k]}",
                    middle=True,
                    fill=COLOURS[t.role],
                    **{"class": "multiplicity"},
                )
        c.close()
        x += width
    c.close()
    return y + SLOT_H + len(many) * LINE + LINE
