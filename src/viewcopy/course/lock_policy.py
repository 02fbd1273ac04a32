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

from viewcopy.course.assignment import course_config
from viewcopy.course.lock_store import load_key, student_locks
from viewcopy.exercise.locking import LockRecord, LockStatus, compare
from viewcopy.exercise.predictions import Prediction, fingerprint
from viewcopy.exercise.receipts import ForgedReceipt, verify

VERIFIED, NOT_VERIFIED, FORGED = "verified", "not verified", "forged receipt"


@dataclass(frozen=True)
class LockPolicy:
    """The course's lock settings: the service's data folder (None: no service) and whether a
    lock the service cannot vouch for earns credit."""

    service_data: Path | None = None
    unverified_earn_credit: bool = True

    @classmethod
    def from_config(cls, config) -> LockPolicy:
        """From an nbgrader config (`c.LockService.data_dir`, `...unverified_locks_earn_credit`)."""
        section = config.get("LockService", {}) if config is not None else {}
        folder = section.get("data_dir") or None
        return cls(
            Path(folder).expanduser() if folder else None,
            bool(section.get("unverified_locks_earn_credit", True)),
        )

    @classmethod
    def of_course(cls, course: Path) -> LockPolicy:
        """The settings in a course folder's nbgrader_config.py (defaults when it has none)."""
        return cls.from_config(course_config(course))


def judge_lock(
    policy: LockPolicy,
    parsed: Mapping[int, Prediction],
    record: LockRecord | None,
    student: str,
    assignment: str,
) -> LockStatus:
    """Where the hand-in's predictions stand against the lock the course can prove."""
    if policy.service_data is None:
        return compare(parsed, record)
    served = student_locks(policy.service_data, student, assignment)
    if served is not None and served.locked_before_reveal is not None:
        return _against_service(parsed, record, served)
    try:
        verified = _receipted_lock(load_key(policy.service_data), record, student, assignment)
    except ForgedReceipt as exc:
        return LockStatus(
            "forged", f"The lock's receipt is not the course's: {exc}. It earns nothing.",
            record=record, trust=FORGED,
        )  # fmt: skip
    local = compare(parsed, record)
    if verified is not None and local.state == "locked":
        return replace(local, reason=f"Locked at {verified['at']} (the service's receipt).",
                       trust=VERIFIED)  # fmt: skip
    if local.state != "locked":
        return replace(local, trust=NOT_VERIFIED if record else "")
    note = f"{local.reason} Not verified: the course's lock service has no record of this lock"
    if policy.unverified_earn_credit:
        return replace(local, reason=f"{note} (it counts; the class report flags it).",
                       trust=NOT_VERIFIED)  # fmt: skip
    return replace(
        local, state="unverified", reason=f"{note}, and this course gives such locks no credit.",
        trust=NOT_VERIFIED,
    )  # fmt: skip


def _against_service(parsed, record: LockRecord | None, served) -> LockStatus:
    locked_fingerprint, locked_at = served.locked_before_reveal
    when = f"at {locked_at}" + (f", revealed at {served.revealed_at}" if served.revealed_at else "")
    refused = (
        f"; it refused {served.refused} lock(s) after the reveal" if served.refused else ""
    )
    if fingerprint(parsed) == locked_fingerprint:
        return LockStatus(
            "locked",
            f"Locked {when} (server times of the course's lock service), unchanged since"
            f"{refused}.",
            record=record, trust=VERIFIED,
        )  # fmt: skip
    changed = compare(parsed, record).changed_items if _is(record, locked_fingerprint) else ()
    return LockStatus(
        "changed",
        f"Changed after the lock: the course's lock service recorded the lock {when}, and these "
        f"predictions differ from it{refused}. Predictions changed after locking count for "
        "nothing.",
        changed, record, VERIFIED,
    )  # fmt: skip


def _is(record: LockRecord | None, locked_fingerprint: str) -> bool:
    return record is not None and record.fingerprint == locked_fingerprint


def _receipted_lock(key: bytes, record, student: str, assignment: str) -> dict | None:
    """The verified lock receipt of `record`, None when it has none; ForgedReceipt when any of
    its receipts is edited, signed by another service, or another student's."""
    if record is None:
        return None
    for receipt in record.receipts:
        payload = verify(key, receipt)
        if (payload.get("student"), payload.get("assignment")) != (student, assignment):
            raise ForgedReceipt(
                f"it was issued to {payload.get('student')!r} for {payload.get('assignment')!r}"
            )
    lock = record.receipt("lock")
    return verify(key, lock) if lock else None
