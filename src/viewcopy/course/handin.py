"""Reading one hand-in without running any of it: PREDICTIONS by literal evaluation, and its lock.

A submitted folder holds the notebook and the lock file the lock cell wrote beside it. Nothing a
student wrote is executed here: the predictions cell is parsed with `ast` and only a literal
`PREDICTIONS = {...}` is read; the lock file is JSON, checked against its own fingerprint.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from viewcopy.course.assignment import (
    ASSIGNMENT,
    NOTEBOOK,
    PREDICTED_PARTS,
    RULES_AFTER_CELL,
    grade_id,
)
from viewcopy.exercise.next_ops import NextOp
from viewcopy.exercise.next_predictions import NEXT, hand_in_draw
from viewcopy.exercise.part import Key, Part, Prediction, PredictionError
from viewcopy.exercise.predictions import TWENTY, parse_predictions
from viewcopy.exercise.written import ComputedSheet, Unreadable, computed, predictions_literal
from viewcopy.locking.canonical import matches
from viewcopy.locking.file import LockError, read_lock
from viewcopy.locking.flow import LockState
from viewcopy.locking.judge import NOT_VERIFIED, VERIFIED, LockPolicy, judge
from viewcopy.locking.record import LOCK_FILE, LockRecord, record_from_json, stored
from viewcopy.locking.recover import lock_in_outputs
from viewcopy.locking.store import student_locks

if TYPE_CHECKING:
    import nbformat

NO_SUBMISSION = "no submission"
NEVER_LOCKED = "never locked"
LOCKED = "locked, unchanged"
LOCKED_VERIFIED = "locked, verified"
LOCKED_NOT_VERIFIED = "locked, not verified"
CHANGED = "changed after lock"
RELOCKED = "locked after its reveal"
FORGED = "lock unreadable/forged"
UNREADABLE = "predictions unreadable"
LOCK_STATES = (
    LOCKED, LOCKED_VERIFIED, LOCKED_NOT_VERIFIED, CHANGED, RELOCKED, NEVER_LOCKED, FORGED,
    UNREADABLE, NO_SUBMISSION,
)  # fmt: skip
"""Where a hand-in stands with its lock; every student is in exactly one."""

Predictions = dict[int, Prediction]


def handed_in_lock(folder: Path, notebook: nbformat.NotebookNode) -> LockRecord | None:
    """The hand-in's lock: its lock file, else the record in its outputs; LockError when the one
    it has is not a lock this lab wrote."""
    if (folder / LOCK_FILE).exists():
        return read_lock(folder)
    data = lock_in_outputs(notebook)
    try:
        return None if data is None else record_from_json(data)
    except ValueError as exc:
        raise LockError(
            f"the lock in the notebook's outputs is not one this lab wrote: {exc}"
        ) from None


def written_literal(notebook: nbformat.NotebookNode, cell: str, name: str) -> object:
    """The value the notebook's last `cell` answer cell writes out for `name`, or Unreadable."""
    cells = [c for c in notebook.cells if grade_id(c) == cell]
    if not cells:
        raise Unreadable(f"no {cell} cell")
    return predictions_literal(cells[-1].source, name)


def written_sheet(notebook: nbformat.NotebookNode, part: Part = TWENTY) -> object:
    """A part's sheet as grading takes it: what its answer cell writes out, or a ComputedSheet
    that says why there is nothing written to grade."""
    try:
        return written_literal(notebook, part.cell, part.label)
    except Unreadable as exc:
        return ComputedSheet(f"{computed(part.label)} ({exc})")


def read_predictions(notebook: nbformat.NotebookNode) -> Predictions:
    """The parsed PREDICTIONS of the notebook's last `predictions` cell, or Unreadable."""
    try:
        return parse_predictions(written_literal(notebook, TWENTY.cell, TWENTY.label))
    except PredictionError as exc:
        where, what = exc.problems[0]
        more = f" (and {len(exc.problems) - 1} more)" if len(exc.problems) > 1 else ""
        raise Unreadable(f"{where}: {what.split('; ')[0]}{more}") from None


@dataclass(frozen=True)
class HandIn:
    """One student's hand-in as the report sees it.

    `before_looking` are the predictions made before the reveal (the lock's when it is genuine,
    the notebook's when there is no lock, since the reveal refuses to run without one); `counts`
    is the grader's verdict on the lock (viewcopy.locking.judge); `refused` counts the locks
    the course's lock service refused because they came after the reveal.
    """

    student: str
    lock: str
    problem: str = ""
    submitted: Predictions | None = None
    before_looking: Predictions | None = None
    counts: bool = False
    changed_items: tuple[int, ...] = ()
    refused: int = 0
    next_ops: tuple[NextOp, ...] = ()
    """The hand-in's next ops, drawn from its lock once the twenty were revealed."""
    later: dict[str, dict[Key, Prediction]] = field(default_factory=dict)
    """The written sheets of the parts after the twenty, by part (`next`, `production`), where
    they can be read."""
    rules_after: dict | None = None
    """Its written RULES_AFTER ({item: rule}), None where missing or unreadable."""
    record: LockRecord | None = None
    """Its lock record, where it has one this lab wrote."""


def genuine_lock(record: LockRecord) -> Predictions:
    """The predictions a lock record holds; Unreadable unless they parse and match its
    fingerprint."""
    try:
        locked = parse_predictions({int(i): tuple(p) for i, p in record.predictions.items()})
    except (ValueError, TypeError, AttributeError) as exc:
        raise Unreadable(f"{LOCK_FILE} is not a lock this lab wrote: {exc}") from None
    if not matches(stored(locked), record.fingerprint):
        raise Unreadable(f"{LOCK_FILE}'s fingerprint does not match the predictions it holds")
    return locked


def read_handin(
    folder: Path, student: str, policy: LockPolicy | None = None, assignment: str = ASSIGNMENT
) -> HandIn:
    """Read `submitted/<student>/<assignment>/`: its predictions and where they stand, judged as
    grading judges them (`policy`: the course's lock service, if it runs one)."""
    policy = policy or LockPolicy()
    try:
        notebook = _notebook(folder)
    except FileNotFoundError:
        return HandIn(student, NO_SUBMISSION, f"no {NOTEBOOK} in {folder}")
    except (OSError, ValueError, AttributeError) as exc:
        return HandIn(student, NO_SUBMISSION, f"{NOTEBOOK} is not a notebook ({exc})")
    try:
        record, unreadable = handed_in_lock(folder, notebook), ""
    except (LockError, OSError) as exc:
        record, unreadable = None, str(exc)
    judged = _judged(notebook, record, unreadable, student, policy, assignment)
    return replace(judged, **_later_parts(notebook, record))


def _judged(
    notebook: nbformat.NotebookNode,
    record: LockRecord | None,
    unreadable: str,
    student: str,
    policy: LockPolicy,
    assignment: str,
) -> HandIn:
    """The hand-in's twenty and where its lock stands (`unreadable`: why its lock could not be
    read, "" when it could)."""
    problem, submitted = "", None
    try:
        submitted = read_predictions(notebook)
    except Unreadable as exc:
        problem = f"predictions unreadable: {exc}"
    data = policy.service_data
    served = student_locks(data, student, assignment) if data else None
    refused = served.refused if served else 0
    try:
        if unreadable:
            raise Unreadable(unreadable)
        locked = genuine_lock(record) if record else None
    except Unreadable as exc:
        return HandIn(student, FORGED, _join(problem, str(exc)), submitted, refused=refused)
    verdict = judge(policy, TWENTY, submitted, record, student, assignment) if submitted else None
    counts = verdict is not None and verdict.counts
    if verdict is not None and verdict.state is LockState.FORGED:
        return HandIn(student, FORGED, _join(problem, verdict.reason), submitted, refused=refused)
    if record is None and not (served and served.locks):
        return HandIn(student, NEVER_LOCKED, problem, submitted, submitted, counts, refused=refused)
    if submitted is None:
        return HandIn(student, UNREADABLE, problem, None, locked, counts, refused=refused)
    if verdict.state is LockState.CHANGED:
        before = locked if record and verdict.changed_items else None
        return HandIn(
            student, CHANGED, problem, submitted, before, counts, verdict.changed_items, refused
        )
    if verdict.state is LockState.RELOCKED:
        reason = _join(problem, verdict.reason)
        return HandIn(student, RELOCKED, reason, submitted, None, counts, refused=refused)
    trusts = {VERIFIED: LOCKED_VERIFIED, NOT_VERIFIED: LOCKED_NOT_VERIFIED}
    state = trusts.get(verdict.trust, LOCKED)
    return HandIn(student, state, problem, submitted, locked or submitted, counts, (), refused)


def _notebook(folder: Path) -> nbformat.NotebookNode:
    """The hand-in's notebook. nbformat is imported on the first read: it takes about a second
    (its jsonschema builds grammars), which a command that reads no hand-in never pays."""
    import nbformat

    return nbformat.read(folder / NOTEBOOK, as_version=4)


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def _later_parts(notebook: nbformat.NotebookNode, record: LockRecord | None) -> dict:
    """The HandIn fields of the parts after the twenty, read from the same notebook (without a
    readable lock there are no next ops to read; the production lines need none)."""
    found: dict = {"later": {}}
    for part in PREDICTED_PARTS[1:]:
        try:
            written = written_literal(notebook, part.cell, part.label)
            found["later"][part.key] = part.parse(written, part.keys(record))
        except (OSError, ValueError, AttributeError, LockError, PredictionError, Unreadable):
            pass
    if NEXT.key in found["later"]:
        found["next_ops"] = hand_in_draw(record)
    try:
        rules = written_literal(notebook, RULES_AFTER_CELL, "RULES_AFTER")
        found["rules_after"] = rules if isinstance(rules, dict) else None
    except Unreadable:
        pass
    found["record"] = record
    return found
