"""The next op's lock: this hand-in's ten, drawn from its final lock of the twenty, and the lock of
NEXT_PREDICTIONS, kept as the `next` record of the lock file (exercise.part_lock).

The draw exists only after the reveal of the twenty and depends on their lock's fingerprint, which
cannot change after the reveal, so a student cannot re-roll it; the grader draws the same ten from
the hand-in.
"""

from __future__ import annotations

from collections.abc import Mapping

from viewcopy.exercise.locking import LockError, LockRecord, LockStatus, ServiceLock, read_lock
from viewcopy.exercise.next_ops import NextOp, draw
from viewcopy.exercise.next_predictions import NAME, parse_next_predictions
from viewcopy.exercise.part_lock import lock_part, reveal_part
from viewcopy.exercise.predictions import Prediction

PART = "next"


def hand_in_draw(record: LockRecord | None) -> tuple[NextOp, ...]:
    """The ten next ops of the hand-in whose lock is `record`; LockError before the reveal."""
    if record is None or not record.revealed_at:
        raise LockError(
            "The next ops are drawn from your lock of the twenty once they are revealed: run the "
            "lock and reveal cells above first."
        )
    return draw(record.fingerprint)


def answers(parsed: Mapping[str, Prediction]) -> dict[str, list[str]]:
    return {i: [p.verdict, p.rule] for i, p in parsed.items()}


def lock_next(
    value: object, directory=None, service: ServiceLock | None = None
) -> tuple[dict[str, Prediction], LockStatus]:
    """Validate NEXT_PREDICTIONS against this hand-in's draw and lock them (until reveal_next),
    with the course's lock service when there is one."""
    record = read_lock(directory)
    ops = hand_in_draw(record)
    parsed = parse_next_predictions(value, [op.id for op in ops])
    service = service.for_part(PART) if service else None
    return parsed, lock_part(PART, answers(parsed), record, directory, NAME, service)


def verify_next_for_reveal(
    value: object, directory=None, service: ServiceLock | None = None
) -> tuple[dict[str, Prediction], LockStatus, tuple[NextOp, ...]]:
    """Refuse to reveal the next ops unless NEXT_PREDICTIONS are exactly the locked ones."""
    record = read_lock(directory)
    ops = hand_in_draw(record)
    parsed = parse_next_predictions(value, [op.id for op in ops])
    service = service.for_part(PART) if service else None
    status = reveal_part(PART, answers(parsed), record, directory, NAME, "lock_next", service)
    return parsed, status, ops
