"""The next ops as a part: NEXT_PREDICTIONS, one (verdict, rule) for each of this hand-in's ten
next ops, keyed by the op's id (`"N07"`). The verdicts are `view`, `copy` or `error` (PyTorch
refuses: a real outcome the rules must predict too); the rule is the one from the student's sheet
that decides it.

The ten are drawn from the hand-in's lock of the twenty once they are revealed; the draw depends
on that lock's fingerprint, which cannot change after the reveal, so a student cannot re-roll it,
and the grader draws the same ten from the hand-in.
"""

from __future__ import annotations

from viewcopy.exercise.next_ops import NextOp, draw
from viewcopy.exercise.part import Part
from viewcopy.locking.file import LockError
from viewcopy.locking.record import LockRecord


def hand_in_draw(record: LockRecord | None) -> tuple[NextOp, ...]:
    """The ten next ops of the hand-in whose lock is `record`; LockError before the reveal."""
    if record is None or not record.revealed_at:
        raise LockError(
            "The next ops are drawn from your lock of the twenty once they are revealed: run the "
            "lock and reveal cells above first."
        )
    return draw(record.fingerprint)


NEXT = Part(
    key="next",
    label="NEXT_PREDICTIONS",
    noun="id",
    lock_call="lock_next",
    cell="next_predictions",
    choices=("view", "copy", "error"),
    with_rule=True,
    example="'N07': ('view', 'the rule that decides it')",
    keys=lambda record: [op.id for op in hand_in_draw(record)],
)
