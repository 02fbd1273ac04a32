"""A storage strip: which elements each tensor reaches and how often, drawn as a row of slots."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from viewcopy.display.diagram_style import (
    BASELINE,
    COLOURS,
    ELIDED_W,
    LINE,
    MARGIN,
    MUTED,
    SLOT_FILL,
)
from viewcopy.display.svg_canvas import MIN_BOX_CHARS, SvgCanvas, box_width
from viewcopy.engine.layout import Layout, reached, shown_positions

REACH_LIMIT = 4096
"""Layouts with at most this many non-broadcast cells get exact highlights over all storage."""

SLOT_H = 26
"""Height of a storage slot."""
SLOT_BASELINE = 17
"""From a slot's top to the baseline of its label (and of an elided run's `…`)."""
LEGEND_GAP = 4
"""Between the strip's legend and its slots."""
BAR_H = 5
"""Height of the bar that marks a slot a tensor reaches."""
BAR_INSET = 1
"""Between a bar and its slot's edges."""
COUNT_RISE = 3
"""From the bottom of a `×k` count's line under the strip up to its baseline."""
BARS = {"parent": "top", "result": "bottom"}
"""Which edge of a slot each role's bar runs along."""


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
    c: SvgCanvas, part: str, caption: str, numel: int, tenants: list[Tenant], budget: int, y: float
) -> float:
    """Draw one storage strip with each tenant's reach and multiplicities; returns y below."""
    slots = _strip_slots(numel, {k for t in tenants for k in t.drawn}, budget)
    shown = [k for k in slots if k is not None]
    many = [t for t in tenants if any(t.counts.get(k, 0) > 1 for k in shown)]
    c.open(**{"data-part": part})
    y = _heading(c, caption, numel, len(shown), tenants, many, y)
    widest = max(
        [
            MIN_BOX_CHARS,
            *(len(str(k)) for k in shown),
            *(len("×" + str(t.counts.get(k, 0))) for t in many for k in shown),
        ]
    )
    width, x = box_width(widest), MARGIN
    for k in slots:
        if k is None:
            c.ellipsis(x + ELIDED_W / 2, y + SLOT_BASELINE)
            x += ELIDED_W
            continue
        _slot(c, k, x, y, width, tenants, many)
        x += width
    c.close()
    return y + SLOT_H + len(many) * LINE + LINE


def _heading(
    c: SvgCanvas,
    caption: str,
    numel: int,
    shown: int,
    tenants: list[Tenant],
    many: list[Tenant],
    y: float,
) -> float:
    """The strip's caption (with what it leaves out) and its legend; returns the slots' top."""
    notes = [caption]
    if shown < numel:
        notes.append(f"{shown} of {numel} elements shown")
    if not all(t.exact for t in tenants):
        notes.append("highlights from drawn cells")
    legend = [f"{BARS[t.role]} bar: reached by the {t.role}" for t in tenants]
    legend += [f"×k on row {n}: k cells of the {t.role} read it" for n, t in enumerate(many, 1)]
    c.text(MARGIN, y + BASELINE, " · ".join(notes), **{"data-part": "caption"})
    c.text(MARGIN, y + BASELINE + LINE, " · ".join(legend), fill=MUTED)
    return y + (2 * LINE + LEGEND_GAP)


def _slot(
    c: SvgCanvas,
    k: int,
    x: float,
    y: float,
    width: float,
    tenants: list[Tenant],
    many: list[Tenant],
) -> None:
    """Storage element `k`'s slot: its index, a bar per tenant reaching it, and under it how many
    cells of each tenant in `many` read it."""
    counts = {f"data-{t.role}": t.counts.get(k, 0) for t in tenants}
    c.open(**{"class": "slot", "data-storage": k, **counts})
    c.rect(x, y, width, SLOT_H, SLOT_FILL)
    c.text(x + width / 2, y + SLOT_BASELINE, str(k), middle=True)
    for t in tenants:
        if t.counts.get(k, 0):
            top = BARS[t.role] == "top"
            bar_y = y + BAR_INSET if top else y + SLOT_H - (BAR_H + BAR_INSET)
            c.rect(
                x + BAR_INSET, bar_y, width - 2 * BAR_INSET, BAR_H, COLOURS[t.role], stroke="none"
            )
    for n, t in enumerate(many, 1):
        if t.counts.get(k, 0) > 1:
            c.text(
                x + width / 2,
                y + SLOT_H + n * LINE - COUNT_RISE,
                f"×{t.counts[k]}",
                middle=True,
                fill=COLOURS[t.role],
                **{"class": "multiplicity"},
            )
    c.close()
