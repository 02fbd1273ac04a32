"""One sentence on why a measurement has its verdict, from what was measured only: the parent's
and the result's strides, offset, contiguity and dtype, whether they are the same object or share
storage, whether writing the parent shows through, the result's new storage and the copy kernels.

It never knows the op: the same measured facts explain a clone, a cast or a refusal alike. Sizes
are exact bytes (`96 B`) unless the caller passes its own formatter (a display's units).
"""

from __future__ import annotations

from collections.abc import Callable

from viewcopy.engine.evidence import Evidence
from viewcopy.engine.layout import Layout

Size = Callable[[int], str]


def exact_bytes(count: int) -> str:
    """A size as the exact number of bytes: `96 B`."""
    return f"{count} B"


def measured_reason(evidence: Evidence, size: Size = exact_bytes) -> str:
    """Why `evidence` is a view, a copy or an error, in one sentence of measured facts."""
    if evidence.verdict == "error" or evidence.result_layout is None:
        return _refused(evidence)
    if evidence.same_object:
        return _itself(evidence)
    if evidence.verdict == "view":
        return _shared(evidence)
    return _copied(evidence, size)


def layout_words(layout: Layout) -> str:
    """`strides (6, 1), contiguous`: the two facts a view or a copy turns on."""
    contiguous = "contiguous" if layout.is_contiguous() else "not contiguous"
    return f"strides {layout.stride}, {contiguous}"


def _subject(evidence: Evidence) -> str:
    """The op as the sentence names it: on a parent other than `x`, with that parent's name."""
    return evidence.op if evidence.parent == "x" else f"{evidence.op} on {evidence.parent}"


def _parent_words(evidence: Evidence, has: str = "has") -> str:
    """`x has strides (6, 1), contiguous, float32 on cpu`, or the name alone if not measured."""
    layout = evidence.parent_layout
    if layout is None:
        return evidence.parent
    return f"{evidence.parent} {has} {layout_words(layout)}, {layout.dtype} on {evidence.device}"


def _refused(evidence: Evidence) -> str:
    return (
        f"{_parent_words(evidence)}, and PyTorch refused {_subject(evidence)}, so it is "
        f"neither a view nor a copy: {evidence.message}"
    )


def _itself(evidence: Evidence) -> str:
    return (
        f"{_parent_words(evidence, 'already has')}, so {_subject(evidence)} returned "
        f"{evidence.parent} itself: the same object, with no new storage"
    )


def _shared(evidence: Evidence) -> str:
    result, parent = evidence.result_layout, evidence.parent_layout
    shows = f" (writing {evidence.parent} shows through)" if evidence.write_through else ""
    recast = ""
    if parent is not None and result.dtype != parent.dtype:
        recast = f", read as {result.dtype} instead of {parent.dtype}"
    moved = ""
    if evidence.same_data_ptr is False:
        moved = f"; its data_ptr() differs from {evidence.parent}'s, yet the storage is shared"
    return (
        f"{_subject(evidence)} shares {evidence.parent}'s storage{shows}: offset "
        f"{result.offset}, {layout_words(result)}{recast}, so no element is copied{moved}"
    )


def _copied(evidence: Evidence, size: Size) -> str:
    result, parent = evidence.result_layout, evidence.parent_layout
    why = ""
    if parent is not None and result.dtype != parent.dtype:
        why = f"{result.dtype} differs from {evidence.parent}'s {parent.dtype}, so "
    elif parent is not None and not parent.is_contiguous() and result.is_contiguous():
        why = f"{evidence.parent} has {layout_words(parent)}; "
    kept = evidence.write_through is False
    shows = f" (writing {evidence.parent} does not show through)" if kept else ""
    ran = f"; {', '.join(evidence.copy_kernels)} ran" if evidence.copy_kernels else ""
    return (
        f"{why}{_subject(evidence)} copies into a new {size(result.storage_bytes)} storage"
        f"{shows}: {layout_words(result)}, {result.dtype}{ran}"
    )
