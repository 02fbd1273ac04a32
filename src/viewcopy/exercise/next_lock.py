"""The next op's lock: this hand-in's ten, drawn from its final lock of the twenty, and the lock of
NEXT_PREDICTIONS, kept as its own record in the lock file.

The draw exists only after the reveal of the twenty and depends on their lock's fingerprint, which
cannot change after the reveal, so a student cannot re-roll it; the grader draws the same ten from
the hand-in. NEXT_PREDICTIONS may be re-locked until `reveal_next`; after that, and always under
`nbgrader autograde`, the lock is only verified.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from viewcopy.exercise.locking import (
    LockError,
    LockRecord,
    LockStatus,
    autograding,
    now,
    read_lock,
    save,
)
from viewcopy.exercise.next_ops import NextOp, draw
from viewcopy.exercise.next_predictions import next_fingerprint, parse_next_predictions
from viewcopy.exercise.predictions import Prediction


def hand_in_draw(record: LockRecord | None) -> tuple[NextOp, ...]:
    """The ten next ops of the hand-in whose lock is `record`; LockError before the reveal."""
    if record is None or not record.revealed_at:
        raise LockError(
            "The next ops are drawn from your lock of the twenty once they are revealed: run the "
            "lock and reveal cells above first."
        )
    return draw(record.fingerprint)


def next_status(parsed: Mapping[str, Prediction], record: LockRecord | None) -> LockStatus:
    """Where parsed NEXT_PREDICTIONS stand against their lock: locked, changed or missing."""
    locked = (record.next or {}) if record else {}
    if not locked:
        return LockStatus("missing", "No lock of NEXT_PREDICTIONS: they count for nothing.")
    if locked.get("fingerprint") == next_fingerprint(parsed):
        reason = f"Locked at {locked['locked_at']}, unchanged since."
        return LockStatus("locked", reason, (), record)
    before = locked.get("predictions", {})
    changed = tuple(
        i for i in sorted(set(before) | set(parsed))
        if before.get(i) != ([parsed[i].verdict, parsed[i].rule] if i in parsed else None)
    )  # fmt: skip
    return LockStatus(
        "changed",
        f"Changed after the lock of {locked['locked_at']} (ids {', '.join(changed)}): "
        "next predictions changed after locking count for nothing.",
        changed,
        record,
    )


def lock_next(value: object, directory=None) -> tuple[dict[str, Prediction], LockStatus]:
    """Validate NEXT_PREDICTIONS against this hand-in's draw and lock them (until reveal_next)."""
    record = read_lock(directory)
    ops = hand_in_draw(record)
    parsed = parse_next_predictions(value, [op.id for op in ops])
    current = next_status(parsed, record)
    if autograding() or current.state == "locked":
        return parsed, current
    if (record.next or {}).get("revealed_at"):
        raise LockError(
            f"NEXT_PREDICTIONS changed after their reveal of {record.next['revealed_at']}: the "
            "lock keeps what you predicted before looking; put them back to see the reveal again."
        )
    locked = {
        "fingerprint": next_fingerprint(parsed),
        "locked_at": now(),
        "ids": [op.id for op in ops],
        "predictions": {i: [p.verdict, p.rule] for i, p in parsed.items()},
        "revealed_at": None,
    }
    save(replace(record, next=locked), directory)
    return parsed, next_status(parsed, read_lock(directory))


def verify_next_for_reveal(
    value: object, directory=None
) -> tuple[dict[str, Prediction], LockStatus, tuple[NextOp, ...]]:
    """Refuse to reveal the next ops unless NEXT_PREDICTIONS are exactly the locked ones."""
    record = read_lock(directory)
    ops = hand_in_draw(record)
    parsed = parse_next_predictions(value, [op.id for op in ops])
    current = next_status(parsed, record)
    if current.state == "missing":
        raise LockError("Nothing is locked yet: run the lock_next cell before reveal_next.")
    if current.state == "changed":
        raise LockError(f"{current.reason} Lock again (allowed until reveal_next), then reveal.")
    if not autograding() and not record.next.get("revealed_at"):
        save(replace(record, next={**record.next, "revealed_at": now()}), directory)
        current = next_status(parsed, read_lock(directory))
    return parsed, current, ops
