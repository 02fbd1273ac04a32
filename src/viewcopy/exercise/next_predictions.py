"""The next ops as a part: NEXT_PREDICTIONS, one (verdict, rule) for each of this hand-in's ten
next ops, keyed by the op's id (`"N07"`). The verdicts are `view`, `copy` or `error` (PyTorch
refuses: a real outcome the rules must predict too); the rule is the one from the student's sheet
that decides it.

The ten are drawn from the hand-in's lock of the twenty once they are revealed, seeded by the lock
itself (`draw_key`): its fingerprint, its own time and, where the course's lock service signed
it, the student. None of these can change after the reveal, so a student cannot re-roll the draw,
a re-run draws the same ten, the grader draws them from the hand-in, and two students who hand in
the same sheet (a shared answer key) draw different next ops.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from viewcopy.exercise.next_ops import NextOp, draw, pool
from viewcopy.exercise.part import Key, Part, Prediction, PredictionError
from viewcopy.locking.file import LockError
from viewcopy.locking.record import TWENTY, LockRecord


def hand_in_draw(record: LockRecord | None) -> tuple[NextOp, ...]:
    """The ten next ops of the hand-in whose lock is `record`; LockError before the reveal."""
    if record is None or not record.revealed_at:
        raise LockError(
            "The next ops are drawn from your lock of the twenty once they are revealed: run the "
            "lock and reveal cells above first."
        )
    return draw(draw_key(record))


def draw_key(record: LockRecord) -> str:
    """What seeds a hand-in's draw. Version 0 (locks written before draws had versions): the
    fingerprint alone, so those hand-ins keep the draw they were shown. Version 1: the
    fingerprint, the lock's time and the student the service's receipt names, if any."""
    if record.draw_version == 0:
        return record.fingerprint
    receipt = record.part(TWENTY).receipt("lock") or {}
    return f"{record.fingerprint}|{record.locked_at}|{receipt.get('student', '')}"


NEXT = Part(
    key="next",
    label="NEXT_PREDICTIONS",
    noun="id",
    lock_call="lock_next",
    cell="next_predictions",
    argument="next_predictions",
    choices=("view", "copy", "error"),
    with_rule=True,
    example="'N07': ('view', 'the rule that decides it')",
    keys=lambda record: [op.id for op in hand_in_draw(record)],
)


def parsed_sheet(
    part: Part, value: object, record: LockRecord | None, lock_file: Path
) -> dict[Key, Prediction]:
    """A part's sheet parsed for this hand-in's keys (PredictionError naming every problem); a
    NEXT_PREDICTIONS filled for another lock's draw is refused saying that first."""
    keys = part.keys(record)
    try:
        return part.parse(value, keys)
    except PredictionError as exc:
        why = another_draw(value, keys, record, lock_file) if part is NEXT else None
        if why is None:
            raise
        raise PredictionError([(NEXT.label, why), *exc.problems], NEXT.label) from None


def another_draw(
    value: object, drawn: list[str], record: LockRecord, lock_file: Path
) -> str | None:
    """Why a sheet answers next ops this lock (`record`, which drew the ids `drawn`) did not
    draw (a new lock draws its own ten), and what to do; None when every id it answers is of
    this draw or of none."""
    if not isinstance(value, Mapping):
        return None
    ids = {op.id for op in pool()}
    others = sorted(k for k in value if k in ids and k not in drawn)
    if not others:
        return None
    return (
        f"it answers another draw: {', '.join(others)} are not among the ten drawn from the lock "
        f"of the twenty here ({lock_file}, locked at {record.locked_at}). Each lock of the "
        "twenty draws its own ten, so a new lock (as when the lock file was lost and this kernel "
        "could not find the earlier lock in the notebook) draws others. To keep the ten you "
        "predicted, put the lock file of that session back beside the notebook and run the "
        "cells again; or run NEXT_OPS = lab.next_ops() to see this lock's ten and predict those"
    )
