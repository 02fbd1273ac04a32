"""One sentence on where an expression on `x` lands in storage, derived from the layout algebra.

An explanation only, shown beside a missed item: it never decides a verdict, and the measured
one stays authoritative. The expression is parsed with `ast`, never evaluated; anything the
algebra does not model (contiguous, clone, to, dtype casts, keywords, ...) gives None.
"""

from __future__ import annotations

import ast

from viewcopy.engine.layout import Layout

MAX_CHARS = 500
"""Longer expressions are not explained (and never parsed)."""

_METHODS = {"t", "transpose", "permute", "expand", "unsqueeze", "squeeze", "view", "reshape"}
_SHAPE_ARGS = {"permute", "expand", "view", "reshape"}
"""Methods that also take their ints as one tuple or list, as torch does."""

Step = tuple[str, str, tuple]
"""(source text after the receiver, method or "T" or "index", arguments)."""


def explain(op_expr: str, parent: Layout) -> str | None:
    """One sentence on the layout `op_expr` gives when `x` is laid out as `parent`, or None
    when the expression is not a chain of modelled steps on `x` (never raises)."""
    if len(op_expr) > MAX_CHARS:
        return None
    try:
        steps = _steps(ast.parse(op_expr, mode="eval").body)
        return _sentence(steps, parent) if steps else None
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return None


def _steps(node: ast.expr) -> list[Step] | None:
    """The modelled steps applied to `x`, first step first; None if something is not modelled."""
    steps = []
    while not (isinstance(node, ast.Name) and node.id == "x"):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method, receiver = node.func.attr, node.func.value
            if method not in _METHODS or node.keywords:
                return None
            args = tuple(ast.literal_eval(a) for a in node.args)
            if method in _SHAPE_ARGS and len(args) == 1 and isinstance(args[0], (tuple, list)):
                args = tuple(args[0])
            step = (method, tuple(_int(a) for a in args))
        elif isinstance(node, ast.Attribute) and node.attr == "T":
            receiver, step = node.value, ("T", ())
        elif isinstance(node, ast.Subscript):
            receiver, step = node.value, ("index", _items(node.slice))
        else:
            return None
        steps.append((ast.unparse(node)[len(ast.unparse(receiver)) :], *step))
        node = receiver
    return steps[::-1]


def _items(node: ast.expr) -> tuple[int | slice, ...]:
    """The ints and slices of a subscript (ValueError for anything else: None, ..., tensors)."""
    parts = node.elts if isinstance(node, ast.Tuple) else [node]
    return tuple(
        slice(
            *(None if b is None else _int(ast.literal_eval(b)) for b in (p.lower, p.upper, p.step))
        )
        if isinstance(p, ast.Slice)
        else _int(ast.literal_eval(p))
        for p in parts
    )


def _int(value: object) -> int:
    """`value` if it is a plain int (not a bool)."""
    if type(value) is not int:
        raise ValueError(f"{value!r} is not an int")
    return value


def _sentence(steps: list[Step], parent: Layout) -> str:
    """Each step's clause, joined into one sentence; a view that cannot work ends it."""
    layout, owner, clauses = parent, "x's", []
    for i, (source, method, args) in enumerate(steps):
        label = "x" + source if i == 0 else source.lstrip(".")
        reason = layout.view_failure(*args) if method in ("view", "reshape") else None
        if reason and method == "view":
            clauses.append(
                f"{label} cannot reuse the same storage ({reason}), so it raises an error"
            )
            break
        if reason:
            layout, owner = layout.reshape(*args), "the copy's"
            clauses.append(
                f"{label} cannot reuse the same storage ({reason}), "
                f"so it copies into new storage with strides {layout.stride}"
            )
            continue
        after = _apply(layout, method, args)
        clauses.append(_clause(label, method, args, layout, after, owner))
        layout = after
    return "; ".join(clauses)


def _apply(layout: Layout, method: str, args: tuple) -> Layout:
    """One modelled step (view and reshape only reach here when the view works)."""
    if method == "T":
        return layout.t()
    if method == "index":
        return layout.index(*args)
    return getattr(layout, method)(*args)


def _clause(label: str, method: str, args: tuple, before: Layout, after: Layout, owner: str) -> str:
    """What one step that keeps its storage does to the strides."""
    strides = after.stride
    if method in ("t", "T", "transpose", "permute"):
        verb = "reorders" if method == "permute" else "swaps"
        if strides == before.stride:
            return f"{label} leaves the strides at {strides}"
        return f"{label} {verb} the strides to {strides}"
    if method == "index":
        return f"{label} keeps {owner} storage: offset {after.offset}, strides {strides}"
    if method == "expand":
        old = (1,) * (len(after.shape) - len(before.shape)) + before.shape
        grown = sum(a != b for a, b in zip(after.shape, old, strict=True))
        if not grown:
            return f"{label} changes no size, so the strides stay {strides}"
        what = "dimension" if grown == 1 else "dimensions"
        return (
            f"{label} gives the expanded {what} stride 0: strides {strides} "
            f"over the same {after.storage_numel} elements"
        )
    if method == "unsqueeze":
        step = after.stride[args[0] % len(after.shape)]
        return f"{label} inserts a size-1 dimension with stride {step}: strides {strides}"
    if method == "squeeze":
        if after.shape == before.shape:
            return f"{label} finds no size-1 dimension to drop, so the strides stay {strides}"
        return f"{label} drops size-1 dimensions: strides {strides}"
    return f"{label} regroups the same storage: strides {strides}"
