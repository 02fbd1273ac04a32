"""Only a written prediction is a prediction: the value a locked answer cell writes out as a
literal, never one the kernel computed ("'I ran it' is not a rule").

Grading reads `PREDICTIONS` from the hand-in's answer cell with `ast.literal_eval` (nothing runs).
In the notebook, `lock` and the score cell look at IPython's own input history: the cell that last
bound `PREDICTIONS` must be that literal, and the value must be the one it writes out. Outside
IPython nothing is checked there, and grading decides. The instructor's master (its solution
computes the sheet from measurement) is exempt.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from viewcopy.locking.file import is_master_folder

NAME = "PREDICTIONS"
COMPUTED = f"{NAME} must be written out: a computed sheet is 'I ran it'"


class Unreadable(ValueError):
    """Why a cell's PREDICTIONS cannot be read without running it."""


@dataclass(frozen=True)
class ComputedSheet:
    """What the grader hands a check for a sheet that is not written out: no credit, and why."""

    reason: str


def predictions_literal(source: str, name: str = NAME) -> object:
    """The value a cell assigns to `name`, by `ast.literal_eval`: nothing runs.

    Every statement must be `name = <literal>` (the last one counts) or a bare string; anything
    else could make the running value differ, so the cell is Unreadable.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise Unreadable(f"the cell is not Python ({type(exc).__name__})") from None
    value: object = None
    assigned = False
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
        ):
            raise Unreadable(f"line {node.lineno} is not `{name} = {{...}}`; only that is read")
        try:
            value = ast.literal_eval(node.value)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            raise Unreadable(f"line {node.lineno}: {name} is computed, not written out") from None
        assigned = True
    if not assigned:
        raise Unreadable(f"the cell does not set {name}")
    return value


def binds(source: str, name: str) -> bool:
    """Does this cell (re)bind `name` anywhere: an assignment, a loop, an import, a def, ...?"""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, ast.alias) and (node.asname or node.name) == name:
            return True
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == name:
            return True
    return False


def unwritten_reason(value: object, name: str = NAME) -> str | None:
    """Why `value` is not the sheet a notebook cell wrote out (None when it is, or when this is not
    an IPython kernel, or in the instructor's master)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    if shell is None or is_master_folder(Path.cwd().resolve()):
        return None
    history = list(shell.user_ns.get("In", []))[:-1]  # the last input is the cell running now
    source = next((s for s in reversed(history) if binds(s, name)), None)
    if source is None:
        return f"{computed(name)} (no cell writes `{name} = {{...}}`)"
    try:
        written = predictions_literal(source, name)
    except Unreadable as exc:
        return f"{computed(name)} ({exc}). Write the dict out in its answer cell and run that cell."
    if written != value:
        return f"{computed(name)} ({name} is not what its answer cell writes out; run it again)"
    return None


def computed(name: str = NAME) -> str:
    """The message for a sheet that is not written out."""
    return f"{name} must be written out: a computed sheet is 'I ran it'"
