"""Reading one hand-in without running any of it: PREDICTIONS by literal evaluation, and its lock.

A submitted folder holds the notebook and the lock file the lock cell wrote beside it. Nothing a
student wrote is executed here: the predictions cell is parsed with `ast` and only a literal
`PREDICTIONS = {...}` is read; the lock file is JSON, checked against its own fingerprint.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import nbformat

from viewcopy.course.assignment import NOTEBOOK, PREDICTIONS_CELL, grade_id
from viewcopy.exercise.locking import LOCK_FILE, LockError, read_lock, status
from viewcopy.exercise.predictions import (
    Prediction,
    PredictionError,
    fingerprint,
    parse_predictions,
)

NAME = "PREDICTIONS"

NO_SUBMISSION = "no submission"
NEVER_LOCKED = "never locked"
LOCKED = "locked, unchanged"
CHANGED = "changed after lock"
FORGED = "lock unreadable/forged"
UNREADABLE = "predictions unreadable"
LOCK_STATES = (LOCKED, CHANGED, NEVER_LOCKED, FORGED, UNREADABLE, NO_SUBMISSION)
"""Where a hand-in stands with its lock; every student is in exactly one."""

Predictions = dict[int, Prediction]


class Unreadable(ValueError):
    """Why a hand-in's PREDICTIONS cannot be read without running it."""


def predictions_literal(source: str) -> object:
    """The value a cell assigns to PREDICTIONS, by `ast.literal_eval`: nothing runs.

    Every statement must be `PREDICTIONS = <literal>` (the last one counts) or a bare string;
    anything else could make the running value differ, so the cell is Unreadable.
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
            and node.targets[0].id == NAME
        ):
            raise Unreadable(f"line {node.lineno} is not `{NAME} = {{...}}`; only that is read")
        try:
            value = ast.literal_eval(node.value)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            raise Unreadable(f"line {node.lineno}: {NAME} is computed, not written out") from None
        assigned = True
    if not assigned:
        raise Unreadable(f"the cell does not set {NAME}")
    return value


def read_predictions(notebook: nbformat.NotebookNode) -> Predictions:
    """The parsed PREDICTIONS of the notebook's last `predictions` cell, or Unreadable."""
    cells = [c for c in notebook.cells if grade_id(c) == PREDICTIONS_CELL]
    if not cells:
        raise Unreadable("no predictions cell")
    try:
        return parse_predictions(predictions_literal(cells[-1].source))
    except PredictionError as exc:
        where, what = exc.problems[0]
        more = f" (and {len(exc.problems) - 1} more)" if len(exc.problems) > 1 else ""
        raise Unreadable(f"{where}: {what.split('; ')[0]}{more}") from None


@dataclass(frozen=True)
class HandIn:
    """One student's hand-in as the report sees it.

    `before_looking` are the predictions made before the reveal (the lock's when it is genuine,
    the notebook's when there is no lock, since the reveal refuses to run without one); `counts`
    mirrors the score cell's policy: the notebook's predictions match the lock's fingerprint.
    """

    student: str
    lock: str
    problem: str = ""
    submitted: Predictions | None = None
    before_looking: Predictions | None = None
    counts: bool = False
    changed_items: tuple[int, ...] = ()


def genuine_lock(folder: Path) -> Predictions:
    """The predictions a lock file holds; Unreadable unless it parses and its fingerprint fits."""
    try:
        record = read_lock(folder)
        locked = parse_predictions({int(i): tuple(p) for i, p in record.predictions.items()})
    except (LockError, OSError, ValueError, TypeError, AttributeError) as exc:
        raise Unreadable(f"{LOCK_FILE} is not a lock this lab wrote: {exc}") from None
    if fingerprint(locked) != record.fingerprint:
        raise Unreadable(f"{LOCK_FILE}'s fingerprint does not match the predictions it holds")
    return locked


def read_handin(folder: Path, student: str) -> HandIn:
    """Read `submitted/<student>/<assignment>/`: its predictions and where they stand."""
    try:
        notebook = nbformat.read(folder / NOTEBOOK, as_version=4)
    except FileNotFoundError:
        return HandIn(student, NO_SUBMISSION, f"no {NOTEBOOK} in {folder}")
    except (OSError, ValueError, AttributeError) as exc:
        return HandIn(student, NO_SUBMISSION, f"{NOTEBOOK} is not a notebook ({exc})")
    problem, submitted = "", None
    try:
        submitted = read_predictions(notebook)
    except Unreadable as exc:
        problem = f"predictions unreadable: {exc}"
    counts = submitted is not None and _counts(submitted, folder)
    if not (folder / LOCK_FILE).exists():
        return HandIn(student, NEVER_LOCKED, problem, submitted, submitted, counts)
    try:
        locked = genuine_lock(folder)
    except Unreadable as exc:
        return HandIn(student, FORGED, _join(problem, str(exc)), submitted, None, counts)
    if submitted is None:
        return HandIn(student, UNREADABLE, problem, None, locked, counts)
    changed = tuple(i for i in sorted(locked) if locked[i] != submitted.get(i))
    state = CHANGED if changed else LOCKED
    return HandIn(student, state, problem, submitted, locked, counts, changed)


def _counts(submitted: Predictions, folder: Path) -> bool:
    try:
        return status(submitted, folder).state == "locked"
    except (LockError, OSError):
        return False


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)
