"""Locking a part's answers before looking, and checking that lock before its reveal: one flow
for the twenty, the next ops and the production model.

A part may be re-locked until its reveal (in the instructor's master, always); after that, and
always under `nbgrader autograde`, its lock is only verified. Where the course runs a lock service
(`VIEWCOPY_LOCK_SERVICE`), every lock and the reveal are also recorded there, with server time,
and the service's signed receipts are kept in the part's lock: the service refuses a lock after
the reveal, so deleting the file gains nothing. When the service cannot be reached the lab goes
on with a lock marked not verified, and says why. The lock and reveal cells also carry the record
in their outputs, so a notebook handed in alone keeps it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum

from viewcopy.locking.canonical import fingerprint, matches
from viewcopy.locking.client import (
    LockServiceClient,
    LockServiceError,
    ServiceRefused,
    from_environment,
)
from viewcopy.locking.file import (
    Folder,
    LockError,
    autograding,
    folder_of,
    is_master_folder,
    now,
    read_lock,
    save,
)
from viewcopy.locking.record import (
    DRAW_VERSION,
    TWENTY,
    Answer,
    LockRecord,
    PartLock,
    PartName,
    stored,
)


class LockState(str, Enum):
    """How a part's answers stand against its lock; a member is its word wherever it is shown or
    written (`str`, f-strings, JSON). `RELOCKED`: locked after a reveal already seen; `UNVERIFIED`
    and `FORGED` only when grading with a lock service. Only `LOCKED` earns credit."""

    LOCKED = "locked"
    RELOCKED = "relocked"
    CHANGED = "changed"
    MISSING = "missing"
    UNVERIFIED = "unverified"
    FORGED = "forged"

    __str__ = str.__str__  # as enum.StrEnum does (Python 3.11 on)
    __format__ = str.__format__


HELD = (LockState.LOCKED, LockState.RELOCKED)
"""The states of answers that match their lock (`relocked`: its earlier lock lost)."""


@dataclass(frozen=True)
class LockStatus:
    """How a part's answers stand against its lock (`state`, given as a LockState or its value)
    and why. `trust` says what stands behind a lock: `verified` by the course's lock service,
    `not verified`, or "" where the course runs no service."""

    state: LockState
    reason: str
    changed_items: tuple = ()
    record: LockRecord | None = None
    trust: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "state", LockState(self.state))

    @property
    def counts(self) -> bool:
        """Whether the answers earn credit: only a `locked` lock does."""
        return self.state is LockState.LOCKED


def part_status(
    part: PartName, answers: Mapping[object, Answer], record: LockRecord | None
) -> LockStatus:
    """Where a part's answers stand against its lock in `record` (None: never locked)."""
    held = record.part(part.key) if record else None
    if held is None:
        return LockStatus(
            LockState.MISSING, f"No lock: {part.label} was never locked, so it counts for nothing."
        )
    if matches(stored(answers), held.fingerprint) and record.lost_lock:
        reason = (
            f"Locked at {held.locked_at}, after a reveal this notebook had shown: its earlier "
            f"lock was lost ({record.lost_lock}), so {part.label} count for nothing."
        )
        return LockStatus(LockState.RELOCKED, reason, (), record)
    if matches(stored(answers), held.fingerprint):
        reason = f"Locked at {held.locked_at}, unchanged since.{held.service_note()}"
        return LockStatus(LockState.LOCKED, reason, (), record)
    changed = changed_keys(answers, held)
    return LockStatus(
        LockState.CHANGED,
        f"Changed after the lock of {held.locked_at} ({part.noun}s {_keys(changed)}): "
        f"{part.label} changed after locking count for nothing.",
        changed,
        record,
    )


def changed_keys(answers: Mapping[object, Answer], held: PartLock) -> tuple:
    """The keys whose answer differs from the lock's (or that one of them lacks)."""
    now_stored, before = stored(answers), held.answers
    back = {str(k): k for k in answers}
    keys = [back.get(k, k) for k in {**before, **now_stored}]
    return tuple(k for k in keys if before.get(str(k)) != now_stored.get(str(k)))


def _keys(keys: tuple) -> str:
    return ", ".join(map(str, keys))


@dataclass(frozen=True)
class ServiceLock:
    """The course's lock service for one assignment, as the notebook reaches it; `client` is None
    when the course set it up wrongly here (`problem` says how)."""

    client: LockServiceClient | None
    assignment: str
    problem: str = ""

    @classmethod
    def from_environment(cls, assignment: str) -> ServiceLock | None:
        """The service `VIEWCOPY_LOCK_SERVICE` names, None when the course runs none."""
        try:
            client = from_environment()
        except LockServiceError as exc:
            return cls(None, assignment, str(exc))
        return cls(client, assignment) if client else None

    def ask(self, part: PartName, event: str, locked: str) -> tuple[dict | None, str]:
        """The service's receipt of a part's lock or reveal (of fingerprint `locked`), or why
        there is none. LockError when the service refuses it on the merits (a lock after the
        reveal, a reveal of other answers)."""
        if self.client is None:
            return None, self.problem
        try:
            call = self.client.lock if event == "lock" else self.client.reveal
            return call(part.service_name(self.assignment), locked), ""
        except ServiceRefused as exc:
            if exc.status == 409:
                raise LockError(
                    f"The course's lock service refused this {event}: {exc} "
                    "(nothing was changed; your cell is unchanged)"
                ) from None
            return None, str(exc)
        except LockServiceError as exc:
            return None, str(exc)


def new_twenty_record(lock: PartLock, lost_lock: str = "") -> LockRecord:
    """A fresh record whose twenty are `lock`, with the machine they were locked on and the
    package's version (`lost_lock`: why an earlier lock, already revealed, could not be
    restored)."""
    import torch  # only where a lock is written: a kernel, which has it loaded

    from viewcopy.engine.devices import available_devices
    from viewcopy.engine.version import package_version

    return LockRecord(
        lock.fingerprint, lock.locked_at, torch.__version__, available_devices(), lock.answers,
        receipts=lock.receipts, not_verified=lock.not_verified, draw_version=DRAW_VERSION,
        lost_lock=lost_lock, viewcopy=package_version(),
    )  # fmt: skip


def write_lock(
    part: PartName,
    answers: Mapping[object, Answer],
    directory: Folder = None,
    *,
    receipts: list[dict] | tuple = (),
    not_verified: str = "",
    lost_lock: str = "",
) -> LockRecord:
    """Record a fresh lock of a part's answers (the twenty's starts a new record, which keeps the
    lost lock its predecessor names)."""
    answered = stored(answers)
    lock = PartLock(fingerprint(answered), now(), answered, None, list(receipts), not_verified)
    record = read_lock(directory)
    if part.key == TWENTY:
        updated = new_twenty_record(lock, lost_lock or (record.lost_lock if record else ""))
    else:
        updated = record.with_part(part.key, lock) if record else new_twenty_record(lock)
    save(updated, directory)
    return updated


def lock(
    part: PartName,
    answers: Mapping[object, Answer],
    directory: Folder = None,
    service: ServiceLock | None = None,
    lost_lock: str = "",
) -> LockStatus:
    """Lock a part's answers, with the course's lock service when there is one. Re-locking is
    allowed until the part's reveal (always in the master); autograde only verifies. `lost_lock`:
    why an earlier lock the notebook showed could not be restored (locking.recover)."""
    record = read_lock(directory)
    current = part_status(part, answers, record)
    if autograding():
        return current
    master = is_master_folder(folder_of(directory))
    service = None if master else service
    held = record.part(part.key) if record else None
    revealed = held is not None and held.revealed_at is not None
    if current.state in HELD and (revealed or service is None or held.receipt("lock")):
        return current  # a lock never registers with the service after a reveal
    if revealed and not master:
        raise LockError(changed_after_reveal(part, current, held))
    answered = stored(answers)
    receipt, problem = service.ask(part, "lock", fingerprint(answered)) if service else (None, "")
    receipts = [receipt] if receipt else []
    if current.state in HELD:  # locked before, unverified: keep its time, add the receipt
        updated = record.with_part(part.key, replace(held, receipts=receipts, not_verified=problem))
        save(updated, directory)
    else:
        updated = write_lock(
            part, answers, directory, receipts=receipts, not_verified=problem, lost_lock=lost_lock
        )
    return part_status(part, answers, updated)


def reveal(
    part: PartName,
    answers: Mapping[object, Answer],
    directory: Folder = None,
    service: ServiceLock | None = None,
) -> LockStatus:
    """Refuse to reveal a part unless its answers are exactly the locked ones; register the
    reveal with the course's lock service (when there is one) before anything is shown; mark it."""
    record = read_lock(directory)
    current = part_status(part, answers, record)
    held = record.part(part.key) if record else None
    if current.state is LockState.MISSING:
        raise LockError(
            f"Nothing is locked yet: run the {part.lock_call} cell above before the reveal."
        )
    if current.state is LockState.CHANGED:
        raise LockError(
            changed_after_reveal(part, current, held)
            if held.revealed_at
            else (
                f"{part.label} differ from the lock in {part.noun}s "
                f"{_keys(current.changed_items)}: they changed after the lock of "
                f"{held.locked_at}; run the {part.lock_call} cell again (allowed until the first "
                "reveal), then the reveal."
            )
        )
    if autograding() or held.revealed_at:
        return current
    service = None if is_master_folder(folder_of(directory)) else service
    receipts, problem = list(held.receipts), held.not_verified
    if service is not None and not held.receipt("lock"):
        receipt, problem = service.ask(part, "lock", held.fingerprint)
        receipts += [receipt] if receipt else []
    if service is not None and not problem:
        receipt, problem = service.ask(part, "reveal", held.fingerprint)
        receipts += [receipt] if receipt else []
    updated = record.with_part(
        part.key, replace(held, revealed_at=now(), receipts=receipts, not_verified=problem)
    )
    save(updated, directory)
    return part_status(part, answers, updated)


def changed_after_reveal(part: PartName, current: LockStatus, held: PartLock) -> str:
    """Why answers changed after their reveal are refused, and what was locked."""
    lines = [
        f"  {part.noun} {k}: locked {tuple(held.answers[str(k)])!r}"
        for k in current.changed_items
        if str(k) in held.answers
    ]
    return (
        f"{part.label} changed after the reveal of {held.revealed_at} ({part.noun}s "
        f"{_keys(current.changed_items)}). Answers changed after their reveal count for "
        "nothing: the lock keeps what you predicted before looking; put these back to see the "
        "reveal again:\n" + "\n".join(lines)
    )
