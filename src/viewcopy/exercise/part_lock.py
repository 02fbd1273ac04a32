"""The lock of a later part of the lab (the next ops, the production model): the same promise as
the twenty's, kept as the part's own record in the lock file. A part's answers may be re-locked
until the part is revealed; after that, and always under `nbgrader autograde`, the lock is only
verified. Answers are stored as {key: [verdict, rule]} (the rule may be ""). Where the course
runs a lock service, the part's locks and reveal go through it too, as `<assignment>/<part>`, and
its receipts are kept in the part's record."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import replace

from viewcopy.exercise.locking import (
    LockError,
    LockRecord,
    LockStatus,
    ServiceLock,
    autograding,
    now,
    save,
)

Answers = Mapping[str, list[str]]


def fingerprint(answers: Answers) -> str:
    """A SHA-256 over a part's answers."""
    return hashlib.sha256(json.dumps(dict(answers), sort_keys=True).encode()).hexdigest()


def part_status(part: str, answers: Answers, record: LockRecord | None, label: str) -> LockStatus:
    """Where a part's answers stand against its lock: locked, changed or missing."""
    locked = getattr(record, part, None) or {}
    if not locked:
        return LockStatus("missing", f"No lock of {label}: it counts for nothing.")
    if locked.get("fingerprint") == fingerprint(answers):
        reason = f"Locked at {locked['locked_at']}, unchanged since.{_service_note(locked)}"
        return LockStatus("locked", reason, (), record)
    before = locked.get("answers", {})
    changed = tuple(
        k for k in sorted(set(before) | set(answers)) if before.get(k) != answers.get(k)
    )
    return LockStatus(
        "changed",
        f"{label} changed after the lock of {locked['locked_at']} ({', '.join(changed)}): "
        "answers changed after locking count for nothing.",
        changed,
        record,
    )


def _service_note(locked: Mapping) -> str:
    if locked.get("not_verified"):
        return f" Not verified by the course's lock service: {locked['not_verified']}"
    return " Verified by the course's lock service." if locked.get("receipts") else ""


def lock_part(
    part: str,
    answers: Answers,
    record: LockRecord,
    directory,
    label: str,
    service: ServiceLock | None = None,
) -> LockStatus:
    """Lock a part's answers (until the part's reveal), with the course's lock service when
    there is one; autograde only verifies."""
    current = part_status(part, answers, record, label)
    if autograding() or current.state == "locked":
        return current
    if (getattr(record, part) or {}).get("revealed_at"):
        raise LockError(
            f"{label} changed after their reveal of {getattr(record, part)['revealed_at']}: the "
            "lock keeps what you predicted before looking; put them back to see it again."
        )
    receipt, problem = service.ask("lock", fingerprint(answers)) if service else (None, "")
    locked = {
        "fingerprint": fingerprint(answers),
        "locked_at": now(),
        "answers": dict(answers),
        "revealed_at": None,
        "receipts": [receipt] if receipt else [],
        "not_verified": problem,
    }
    updated = replace(record, **{part: locked})
    save(updated, directory)
    return part_status(part, answers, updated, label)


def reveal_part(
    part: str,
    answers: Answers,
    record: LockRecord,
    directory,
    label: str,
    cell: str,
    service: ServiceLock | None = None,
) -> LockStatus:
    """Refuse to reveal a part unless its answers are exactly the locked ones; register the
    reveal with the course's lock service (when there is one) before anything is shown."""
    current = part_status(part, answers, record, label)
    if current.state == "missing":
        raise LockError(f"Nothing is locked yet: run the {cell} cell before the reveal.")
    if current.state == "changed":
        raise LockError(f"{current.reason} Lock again (allowed until the reveal), then reveal.")
    locked = getattr(record, part)
    if autograding() or locked.get("revealed_at"):
        return current
    receipts, problem = list(locked.get("receipts", [])), locked.get("not_verified", "")
    if service is not None and not problem:
        if not receipts:
            lock, problem = service.ask("lock", fingerprint(answers))
            receipts += [lock] if lock else []
        if not problem:
            reveal, problem = service.ask("reveal", fingerprint(answers))
            receipts += [reveal] if reveal else []
    revealed = {**locked, "revealed_at": now(), "receipts": receipts, "not_verified": problem}
    updated = replace(record, **{part: revealed})
    save(updated, directory)
    return part_status(part, answers, updated, label)
