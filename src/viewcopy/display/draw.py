"""Stride and storage diagrams as standalone SVG: logical grids over storage strips, each with a
text alternative (its `<title>` and `<desc>`) that says in words what it draws.

Drawing reads layouts (shape, stride, offset), never tensor data, and its cost is bounded by the
cells drawn: a tensor expanded to billions of elements draws as fast as the lab's 24-element `x`.
"""

from __future__ import annotations

import math
import re
import secrets
import textwrap
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from viewcopy.engine.evidence import Evidence
from viewcopy.engine.layout import Index, Layout, reached, shown_positions

REACH_LIMIT = 4096
"""Layouts with at most this many non-broadcast cells get exact highlights over all storage."""
READ_ORDER = 12
"""The text alternative names the storage elements of this many of the result's first cells."""
RUNS = 16
"""The text alternative names this many runs of the storage elements a result reads."""

FONT = 12
CHAR = 7.3  # advance of one monospace character at FONT px
LINE = 17
CELL_H = 22
SLOT_H = 26
GAP_W = 18  # width of an elided row, column, panel or storage run
PAD = 14
INK = "#1b1b1b"  # text, unless drawn in a role's colour: the diagram carries its own white
MUTED = "#555"  # index labels and legends: 7.5:1 on white, 7:1 on a storage slot
SLOT = "#f7f7f7"
COLOURS = {"parent": "#1f5f9e", "result": "#b4430f"}
FILLS = {"parent": "#dce9f7", "result": "#fbe2d3"}
BARS = {"parent": "top", "result": "bottom"}
BADGES = {
    "view": ("#2e7d32", "VIEW", "the result reads the parent's storage"),
    "copy": ("#8a4b00", "COPY", "the result owns new storage"),
    "error": ("#b71c1c", "ERROR", "PyTorch refused this op on this parent"),
}
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: object) -> str:
    """Text made safe for XML: escaped, without the control characters XML forbids."""
    return escape(_CONTROL.sub("\N{REPLACEMENT CHARACTER}", str(text)))


def _attrs(attrs: dict[str, object]) -> str:
    return "".join(
        f" {key}={quoteattr(_CONTROL.sub('?', str(value)))}" for key, value in attrs.items()
    )


def _bytes(n: int) -> str:
    text = "1 byte" if n == 1 else f"{n} bytes"
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2)):
        if n >= size:
            return f"{text} ({n / size:.1f} {unit})"
    return text


def _elements(layout: Layout) -> str:
    return (
        f"{layout.storage_numel} × {layout.itemsize}-byte elements = {_bytes(layout.storage_bytes)}"
    )


class _Canvas:
    """SVG elements in drawing order, and the width they cover."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.width = 0.0

    def open(self, **attrs: object) -> None:
        self.parts.append(f"<g{_attrs(attrs)}>")

    def close(self) -> None:
        self.parts.append("</g>")

    def rect(self, x: float, y: float, w: float, h: float, fill: str, **attrs: object) -> None:
        attrs = {"stroke": "#666", **attrs}
        self.parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{fill}"'
            f"{_attrs(attrs)}/>"
        )
        self.width = max(self.width, x + w)

    def text(self, x: float, y: float, text: str, *, middle: bool = False, **attrs: object) -> None:
        anchor = ' text-anchor="middle"' if middle else ""
        self.parts.append(
            f'<text x="{x:.1f}" y="{y:.1f}"{anchor}{_attrs(attrs)}>{_clean(text)}</text>'
        )
        self.width = max(self.width, x + len(text) * CHAR * (0.5 if middle else 1))

    def lines(self, x: float, y: float, lines: list[str], **attrs: object) -> float:
        """One text element of several lines; returns the y below it."""
        spans = "".join(
            f'<tspan x="{x:.1f}" dy="{0 if i == 0 else LINE}">{_clean(line)}</tspan>'
            for i, line in enumerate(lines)
        )
        self.parts.append(f'<text x="{x:.1f}" y="{y:.1f}"{_attrs(attrs)}>{spans}</text>')
        self.width = max(self.width, x + max((len(s) for s in lines), default=0) * CHAR)
        return y + LINE * len(lines)

    def svg(self, height: float, label: str, desc: str) -> str:
        """The document: an image named by its `<title>` and `<desc>` (ids unique on any page),
        over its own white background, so its colours hold in any theme."""
        width = math.ceil(self.width + PAD)
        height = math.ceil(height)
        key = f"viewcopy-{secrets.token_hex(6)}"
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"'
            f' viewBox="0 0 {width} {height}" role="img"'
            f' aria-labelledby="{key}-title {key}-desc" fill="{INK}"'
            ' font-family="ui-monospace, SFMono-Regular, Menlo, Consolas, monospace"'
            f' font-size="{FONT}">'
            f'<title id="{key}-title">{_clean(label)}</title>'
            f'<desc id="{key}-desc">{_clean(desc)}</desc>'
            f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>'
            + "".join(self.parts)
            + "</svg>"
        )


@dataclass(frozen=True)
class _Plan:
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


def _plan(layout: Layout, max_rows: int, max_cols: int, max_panels: int) -> _Plan:
    shape = layout.shape
    if len(shape) < 2:
        cols = shown_positions(shape[0], max_cols) if shape else [0]
        return _Plan(len(shape), ((),), (0,), tuple(cols))
    lead = shape[:-2]
    panels = tuple(
        None if p is None else _unravel(p, lead)
        for p in shown_positions(math.prod(lead), max_panels)
    )
    rows = shown_positions(shape[-2], max_rows)
    return _Plan(len(shape), panels, tuple(rows), tuple(shown_positions(shape[-1], max_cols)))


def _unravel(flat: int, shape: tuple[int, ...]) -> Index:
    index = []
    for size in reversed(shape):
        flat, i = divmod(flat, size)
        index.append(i)
    return tuple(reversed(index))


def _reach(layout: Layout, drawn: Counter[int]) -> tuple[dict[int, int], bool]:
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


def _describe(layout: Layout) -> list[str]:
    contiguous = "yes" if layout.is_contiguous() else "no"
    ndim = len(layout.shape)
    roles = (["panels"] * max(0, ndim - 2) + ["rows", "cols"])[max(0, 2 - ndim) :]
    dims = [
        f"dim {d} ({role}): size {n}, stride {s}" + (" (repeats)" if s == 0 and n > 1 else "")
        for d, (role, n, s) in enumerate(zip(roles, layout.shape, layout.stride, strict=True))
    ]
    n, size = layout.numel, layout.itemsize
    return [
        f"shape {layout.shape} · stride {layout.stride} · storage_offset {layout.offset}"
        f" · {layout.dtype or '?'} · contiguous: {contiguous}",
        f"logical bytes {n} × {size} = {_bytes(n * size)} · storage bytes "
        f"{layout.storage_numel} × {size} = {_bytes(layout.storage_bytes)}",
        " · ".join(dims) if dims else "0-d: one element, no dims",
    ]


def _axis(cells: tuple[int | None, ...], size: float) -> list[tuple[int | None, float, float]]:
    """(index, start, width) of each drawn row or column, gaps narrower."""
    out, at = [], 0.0
    for i in cells:
        width = size if i is not None else GAP_W
        out.append((i, at, width))
        at += width
    return out


def _grid(c: _Canvas, role: str, layout: Layout, plan: _Plan, x0: float, y0: float) -> float:
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


@dataclass(frozen=True)
class _Tenant:
    """A tensor reaching into a storage strip, with its per-element counts."""

    role: str
    counts: dict[int, int]
    drawn: Counter[int]
    exact: bool


def _strip(
    c: _Canvas, part: str, caption: str, numel: int, tenants: list[_Tenant], budget: int, y: float
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
    c = _Canvas()
    colour, word, meaning = BADGES.get(evidence.verdict, ("#444", evidence.verdict.upper(), ""))
    title = _title(evidence)
    c.open(**{"data-part": "verdict", "data-verdict": evidence.verdict})
    c.rect(PAD, PAD, len(word) * CHAR + 16, CELL_H, colour, stroke="none", rx=4)
    c.text(PAD + 8, PAD + 15, word, fill="#ffffff", **{"font-weight": "bold"})
    c.close()
    c.text(
        PAD + len(word) * CHAR + 26,
        PAD + 15,
        f"{title} · parent {evidence.parent} · {evidence.device} · {evidence.verdict}: {meaning}",
        **{"data-part": "title"},
    )
    y = PAD + CELL_H + LINE
    tenants: dict[str, _Tenant] = {}
    tensors = (
        ("parent", evidence.parent, evidence.parent_layout),
        ("result", evidence.op, evidence.result_layout),
    )
    for role, name, layout in tensors:
        if layout is None:
            continue
        plan = _plan(layout, max_rows, max_cols, max_panels)
        drawn = Counter(layout.storage_index(i) for i in plan.indices())
        counts, exact = _reach(layout, drawn)
        tenants[role] = _Tenant(role, counts, drawn, exact)
        c.open(**{"data-part": role})
        c.text(PAD, y + 12, f"{role} {name}", fill=COLOURS[role], **{"font-weight": "bold"})
        c.text(PAD + (len(role) + len(name) + 3) * CHAR, y + 12, _labels_say(evidence, role))
        y = c.lines(PAD, y + 12 + LINE, _describe(layout))
        y = _grid(c, role, layout, plan, PAD, y) + LINE
        c.close()
    if evidence.verdict == "error":
        c.text(PAD, y + 12, "PyTorch's message:", fill=BADGES["error"][0])
        wrapped = textwrap.wrap(evidence.message or "(no message)", 96, break_on_hyphens=False)
        y = c.lines(PAD, y + 12 + LINE, wrapped, **{"data-part": "message"}) + LINE
    y = _strips(c, evidence, tenants, max_strip, y)
    label = f"{evidence.verdict}: {title} on parent {evidence.parent} ({evidence.device})"
    words = _alternative(evidence, tenants.get("result"))
    return c.svg(y + PAD, label, words), words


def _title(evidence: Evidence) -> str:
    return evidence.op if evidence.item is None else f"item {evidence.item}: {evidence.op}"


def _labels_say(evidence: Evidence, role: str) -> str:
    """What the numbers in a grid's cells index."""
    parent, result = evidence.parent_layout, evidence.result_layout
    if role == "parent" or evidence.verdict != "view":
        return "(cells: element indices in its own storage)"
    if parent is not None and result is not None and parent.itemsize != result.itemsize:
        return (
            f"(cells: indices in the parent's storage, counted in {result.itemsize}-byte elements)"
        )
    return "(cells: element indices in the parent's storage)"


def _strips(
    c: _Canvas, evidence: Evidence, tenants: dict[str, _Tenant], budget: int, y: float
) -> float:
    """The parent's storage strip, and the result's own one when it is new or re-typed."""
    parent, result = evidence.parent_layout, evidence.result_layout
    shared = _shares_parent_elements(evidence)
    if parent is not None:
        on_it = [tenants["parent"], *([tenants["result"]] if shared else [])]
        caption = f"storage of the parent: {_elements(parent)}"
        y = _strip(c, "storage", caption, parent.storage_numel, on_it, budget, y)
    if result is None or shared:
        return y
    size = _elements(result)
    if evidence.verdict == "copy":
        part, caption = "new-storage", f"{_new_storage(evidence, result)} · {size}"
    else:
        part, caption = "retyped-storage", f"the same storage read as {result.dtype}: {size}"
    return _strip(c, part, caption, result.storage_numel, [tenants["result"]], budget, y)


def _shares_parent_elements(evidence: Evidence) -> bool:
    """A view reading the parent's storage in the parent's own elements (not re-typed)."""
    parent, result = evidence.parent_layout, evidence.result_layout
    return (
        evidence.verdict == "view"
        and parent is not None
        and result is not None
        and parent.itemsize == result.itemsize
    )


def _new_storage(evidence: Evidence, result: Layout) -> str:
    if evidence.bytes_allocated is not None:
        return f"new storage: {_bytes(evidence.bytes_allocated)} (measured allocation)"
    return f"new storage: {_bytes(result.storage_bytes)} (size of the result's storage)"


def _alternative(evidence: Evidence, result: _Tenant | None) -> str:
    """The diagram in words, its `<desc>`: what the verdict means, both layouts, which storage
    elements the result reads (`result`: its reach as drawn) and the evidence for the verdict."""
    meaning = BADGES.get(evidence.verdict, ("", "", f"verdict {evidence.verdict}"))[2]
    tensors = (
        ("Parent", evidence.parent, evidence.parent_layout),
        ("Result", evidence.op, evidence.result_layout),
    )
    sentences = [f"{meaning[:1].upper()}{meaning[1:]}."]
    sentences += [_layout_words(*t) for t in tensors if t[2] is not None]
    if result is not None and evidence.result_layout is not None:
        sentences += _reads(evidence, evidence.result_layout, result)
    sentences.append(_evidence_words(evidence))
    return " ".join(sentences)


def _layout_words(role: str, name: str, layout: Layout) -> str:
    contiguous = "contiguous" if layout.is_contiguous() else "not contiguous"
    return (
        f"{role} {name}: shape {layout.shape}, stride {layout.stride}, storage offset "
        f"{layout.offset}, {layout.dtype or 'dtype unknown'}, {contiguous}; its storage: "
        f"{_elements(layout)}."
    )


def _reads(evidence: Evidence, layout: Layout, result: _Tenant) -> list[str]:
    """Which storage elements the result reads, how often, and in what order."""
    n = layout.storage_numel
    reached = sorted(k for k, count in result.counts.items() if count)
    if _shares_parent_elements(evidence):
        reads = f"The result reads {len(reached)} of the parent's {n} storage elements"
    elif evidence.verdict == "view":
        reads = (
            f"The result reads the parent's storage as {n} {layout.dtype} elements, "
            f"{len(reached)} of them"
        )
    else:
        reads = f"The result reads {len(reached)} of its own {n} storage elements"
    counted = "" if result.exact else " (counted over the drawn cells only: too many to count)"
    said = [
        f"{reads}{_times(result, reached)}{counted}: {_positions(reached)}.",
        _order(layout),
    ]
    if evidence.verdict == "copy":
        new = _new_storage(evidence, layout)
        said.insert(0, f"{new[:1].upper()}{new[1:]}; the result reads none of the parent's.")
    return said


def _order(layout: Layout) -> str:
    """The storage elements the result's first cells read, in row-major order."""
    cells = range(min(READ_ORDER, layout.numel))
    first = [layout.storage_index(_unravel(k, layout.shape)) for k in cells]
    if len(first) < 2:
        return f"Its one cell reads element {first[0]}." if first else "It has no cells."
    more = layout.numel - len(first)
    order = ", ".join(map(str, first)) + (f", and {more} more" if more else "")
    return f"Row by row, its cells read elements {order}."


def _times(result: _Tenant, reached: list[int]) -> str:
    times = {result.counts[k] for k in reached}
    if times == {1}:
        return ", each once"
    if len(times) == 1:
        return f", each {times.pop()} times"
    return f", {min(times)} to {max(times)} times each" if times else ""


def _positions(keys: list[int]) -> str:
    """Sorted storage positions said as runs (`a`, `a to b`, `a to b in steps of k`), the first
    RUNS of them, then how many elements are left."""
    runs, i = [], 0
    while i < len(keys):
        step = keys[i + 1] - keys[i] if i + 1 < len(keys) else 0
        j = i
        while j + 1 < len(keys) and keys[j + 1] - keys[j] == step:
            j += 1
        if j - i < 2:  # one or two elements are no run
            runs.append((str(keys[i]), 1))
            i += 1
            continue
        every = "" if step == 1 else f" in steps of {step}"
        runs.append((f"{keys[i]} to {keys[j]}{every}", j - i + 1))
        i = j + 1
    said = ", ".join(text for text, _ in runs[:RUNS])
    left = sum(n for _, n in runs[RUNS:])
    return (said + (f", and {left} elements more" if left else "")) or "none"


def _evidence_words(evidence: Evidence) -> str:
    if evidence.verdict == "error":
        return f"PyTorch refused: {evidence.message or '(no message)'}"
    said = {True: "yes", False: "no", None: "not probed"}
    same = f"same storage: {said[evidence.same_storage]}"
    if evidence.same_object:
        same = "the same object"
    allocated = (
        "allocation not measured"
        if evidence.bytes_allocated is None
        else f"{_bytes(evidence.bytes_allocated)} allocated"
    )
    kernels = ", ".join(evidence.copy_kernels) or "none"
    return (
        f"Evidence: {same}, writes through to the parent: {said[evidence.write_through]}, "
        f"{allocated}, copy kernels: {kernels}."
    )


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
        name = {"aria-label": f"diagram of {_title(e)} on parent {e.parent}"}
        return (
            f'<div class="viewcopy-diagram" role="region" tabindex="0"{_attrs(name)}'
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
