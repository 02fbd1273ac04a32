"""How grading judges a hand-in's lock, with or without the course's lock service.

Without a service the lock is the file (or the lock cell's output) the notebook wrote: it proves
that the predictions match what was locked, not when. With a service (`c.LockService.data_dir`
in nbgrader_config.py), the grader reads the service's own record of the student's locks and
reveal (server times): the predictions must be the ones locked last before the reveal, whatever
the hand-in holds, so deleting the lock file after the reveal gains nothing. Receipts in the
hand-in are checked against the service's key; an edited or foreign receipt earns nothing, by
name. A lock the service never heard of is `not verified`: it earns credit, flagged, unless the
course sets `c.LockService.unverified_locks_earn_credit = False`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from viewcopy.locking.canonical import matches
from viewcopy.locking.flow import LockState, LockStatus, part_status
from viewcopy.locking.receipts import ForgedReceipt, verify
from viewcopy.locking.record import Answer, LockRecord, PartName, stored
from viewcopy.locking.store import load_key, student_locks

VERIFIED, NOT_VERIFIED, FORGED = "verified", "not verified", "forged receipt"


@dataclass(frozen=True)
class LockPolicy:
    """The course's lock settings: the service's data folder (None: no service) and whether a
    lock the service cannot vouch for earns credit (read from the course's config by
    course.settings: `c.LockService.data_dir`, `...unverified_locks_earn_credit`)."""

    service_data: Path | None = None
    unverified_earn_credit: bool = True


def judge(
    policy: LockPolicy,
    part: PartName,
    answers: Mapping[object, Answer],
    record: LockRecord | None,
    student: str,
    assignment: str,
) -> LockStatus:
    """Where a hand-in's answers to a part stand against the lock the course can prove: its
    lock in the hand-in's record, and the service's record of the part, when there is one."""
    local = part_status(part, answers, record)
    if policy.service_data is None:
        return local
    name = part.service_name(assignment)
    served = student_locks(policy.service_data, student, name)
    held = record.part(part.key) if record else None
    if served is not None and served.locked_before_reveal is not None:
        locked_fingerprint = served.locked_before_reveal[0]
        same = matches(stored(answers), locked_fingerprint)
        changed = local.changed_items if held and held.fingerprint == locked_fingerprint else ()
        return _served(same, served, record, part.label, changed)
    receipts = held.receipts if held else []
    locked = held.fingerprint if held else None
    return _unserved(policy, local, receipts, locked, student, name, record)


def _served(same: bool, served, record, what: str, changed: tuple) -> LockStatus:
    """The verdict when the service recorded a lock: it, not the hand-in, decides."""
    locked_at = served.locked_before_reveal[1]
    when = f"at {locked_at}" + (f", revealed at {served.revealed_at}" if served.revealed_at else "")
    refused = f"; it refused {served.refused} lock(s) after the reveal" if served.refused else ""
    if same:
        return LockStatus(
            LockState.LOCKED,
            f"Locked {when} (server times of the course's lock service), unchanged since"
            f"{refused}.",
            record=record, trust=VERIFIED,
        )  # fmt: skip
    return LockStatus(
        LockState.CHANGED,
        f"Changed after the lock: the course's lock service recorded the lock {when}, and these "
        f"{what} differ from it{refused}. Answers changed after locking count for nothing.",
        changed, record, VERIFIED,
    )  # fmt: skip


def _unserved(policy, local, receipts, locked, student, name, record) -> LockStatus:
    """The verdict when the service has no record: the hand-in's receipts, else not verified."""
    try:
        verified = _verified_lock(load_key(policy.service_data), receipts, locked, student, name)
    except ForgedReceipt as exc:
        return LockStatus(
            LockState.FORGED, f"The lock's receipt is not the course's: {exc}. It earns nothing.",
            record=record, trust=FORGED,
        )  # fmt: skip
    if verified is not None and local.state is LockState.LOCKED:
        return replace(local, reason=f"Locked at {verified['at']} (the service's receipt).",
                       trust=VERIFIED)  # fmt: skip
    if local.state is not LockState.LOCKED:
        return replace(local, trust=NOT_VERIFIED if locked else "")
    note = f"{local.reason} Not verified: the course's lock service has no record of this lock"
    if policy.unverified_earn_credit:
        return replace(local, reason=f"{note} (it counts; the class report flags it).",
                       trust=NOT_VERIFIED)  # fmt: skip
    return replace(
        local, state=LockState.UNVERIFIED,
        reason=f"{note}, and this course gives such locks no credit.", trust=NOT_VERIFIED,
    )  # fmt: skip


def _verified_lock(key: bytes, receipts, locked: str | None, student: str, name: str):
    """The verified receipt of the lock of fingerprint `locked`, None when there is none;
    ForgedReceipt when any receipt is edited, signed by another service, or another's."""
    lock = None
    for receipt in receipts:
        payload = verify(key, receipt)
        if (payload.get("student"), payload.get("assignment")) != (student, name):
            raise ForgedReceipt(
                f"it was issued to {payload.get('student')!r} for {payload.get('assignment')!r}"
            )
        if payload.get("event") == "lock" and payload.get("fingerprint") == locked:
            lock = payload
    return lock
