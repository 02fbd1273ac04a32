"""A diagram in words: sizes, layout lines, what cells index, and its text alternative."""

from __future__ import annotations

from viewcopy.display.diagram_style import BADGES
from viewcopy.display.storage_strip import Tenant
from viewcopy.display.tensor_grid import unravel
from viewcopy.engine.evidence import Evidence
from viewcopy.engine.layout import Layout

READ_ORDER = 12
"""The text alternative names the storage elements of this many of the result's first cells."""
RUNS = 16
"""The text alternative names this many runs of the storage elements a result reads."""


def byte_size(n: int) -> str:
    """`n` bytes said, with GiB or MiB beside them when they come to one or more."""
    text = "1 byte" if n == 1 else f"{n} bytes"
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2)):
        if n >= size:
            return f"{text} ({n / size:.1f} {unit})"
    return text


def storage_size(layout: Layout) -> str:
    """The size of `layout`'s storage: its elements, their size, and the bytes they come to."""
    return (
        f"{layout.storage_numel} × {layout.itemsize}-byte elements = "
        f"{byte_size(layout.storage_bytes)}"
    )


def layout_lines(layout: Layout) -> list[str]:
    """The lines drawn above a tensor's grid: its layout, its bytes, and each dimension."""
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
        f"logical bytes {n} × {size} = {byte_size(n * size)} · storage bytes "
        f"{layout.storage_numel} × {size} = {byte_size(layout.storage_bytes)}",
        " · ".join(dims) if dims else "0-d: one element, no dims",
    ]


def title(evidence: Evidence) -> str:
    """The op drawn, with its item number when it is one of the twenty."""
    return evidence.op if evidence.item is None else f"item {evidence.item}: {evidence.op}"


def labels_say(evidence: Evidence, role: str) -> str:
    """What the numbers in a grid's cells index."""
    parent, result = evidence.parent_layout, evidence.result_layout
    if role == "parent" or evidence.verdict != "view":
        return "(cells: element indices in its own storage)"
    if parent is not None and result is not None and parent.itemsize != result.itemsize:
        return (
            f"(cells: indices in the parent's storage, counted in {result.itemsize}-byte elements)"
        )
    return "(cells: element indices in the parent's storage)"


def shares_parent_elements(evidence: Evidence) -> bool:
    """A view reading the parent's storage in the parent's own elements (not re-typed)."""
    parent, result = evidence.parent_layout, evidence.result_layout
    return (
        evidence.verdict == "view"
        and parent is not None
        and result is not None
        and parent.itemsize == result.itemsize
    )


def new_storage(evidence: Evidence, result: Layout) -> str:
    """A copy's new storage: the allocation measured, else the size of the result's storage."""
    if evidence.bytes_allocated is not None:
        return f"new storage: {byte_size(evidence.bytes_allocated)} (measured allocation)"
    return f"new storage: {byte_size(result.storage_bytes)} (size of the result's storage)"


def alternative(evidence: Evidence, result: Tenant | None) -> str:
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
        f"{storage_size(layout)}."
    )


def _reads(evidence: Evidence, layout: Layout, result: Tenant) -> list[str]:
    """Which storage elements the result reads, how often, and in what order."""
    n = layout.storage_numel
    reached = sorted(k for k, count in result.counts.items() if count)
    if shares_parent_elements(evidence):
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
        new = new_storage(evidence, layout)
        said.insert(0, f"{new[:1].upper()}{new[1:]}; the result reads none of the parent's.")
    return said


def _order(layout: Layout) -> str:
    """The storage elements the result's first cells read, in row-major order."""
    cells = range(min(READ_ORDER, layout.numel))
    first = [layout.storage_index(unravel(k, layout.shape)) for k in cells]
    if len(first) < 2:
        return f"Its one cell reads element {first[0]}." if first else "It has no cells."
    more = layout.numel - len(first)
    order = ", ".join(map(str, first)) + (f", and {more} more" if more else "")
    return f"Row by row, its cells read elements {order}."


def _times(result: Tenant, reached: list[int]) -> str:
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
        else f"{byte_size(evidence.bytes_allocated)} allocated"
    )
    kernels = ", ".join(evidence.copy_kernels) or "none"
    return (
        f"Evidence: {same}, writes through to the parent: {said[evidence.write_through]}, "
        f"{allocated}, copy kernels: {kernels}."
    )
