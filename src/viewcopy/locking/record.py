"""What the lock file holds: one record per hand-in, with a lock for every part predicted.

The twenty's lock is the record's own fields (`predictions` are its answers); each later part's
lock is a dict under its part's name (`next`, `production`). The file's layout is the one every
release wrote, so every lock handed in still reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Protocol

LOCK_FILE = "view_or_copy.lock.json"
OUTPUT_KEY = "viewcopy_lock"
"""The key of the lock record in the metadata of the lock and reveal cells' outputs."""
TWENTY = "predictions"
"""The part whose lock is the record's own fields: the twenty."""
LATER_PARTS = ("next", "production")
"""The parts after the twenty, each a dict field of the record under its own name."""
DRAW_VERSION = 1
"""How a new lock seeds its next ops (exercise.next_predictions.draw_key); a record without the
field was written before draws had versions (version 0)."""


class Answer(Protocol):
    """One answer of a part, as the lock stores it."""

    verdict: str
    rule: str


@dataclass(frozen=True)
class PartName:
    """How the lock names a part: its record (`key`), the variable a student writes (`label`),
    what one of its keys is called (`noun`) and the notebook call that locks it (`lock_call`)."""

    key: str
    label: str
    noun: str
    lock_call: str

    def service_name(self, assignment: str) -> str:
        """The name the course's lock service records this part's locks under."""
        return assignment if self.key == TWENTY else f"{assignment}/{self.key}"


def stored(answers: Mapping[object, Answer]) -> dict[str, list[str]]:
    """Answers as the lock file holds them, keyed by text."""
    return {str(k): [a.verdict, a.rule] for k, a in answers.items()}


@dataclass(frozen=True)
class PartLock:
    """One part's lock: the fingerprint of its answers, when, the answers, when they were
    revealed, and what the course's lock service said (its signed receipts, oldest first, or why
    it did not confirm the lock: `not_verified`)."""

    fingerprint: str
    locked_at: str
    answers: dict[str, list[str]]
    revealed_at: str | None = None
    receipts: list[dict] = field(default_factory=list)
    not_verified: str = ""

    def receipt(self, event: str) -> dict | None:
        """The service's receipt of this lock (`lock`) or of its reveal (`reveal`), if any."""
        found = [
            r
            for r in self.receipts
            if isinstance(r, dict)
            and r.get("event") == event
            and r.get("fingerprint") == self.fingerprint
        ]
        return found[-1] if found else None

    def service_note(self) -> str:
        """What the course's lock service confirmed, for the student; "" without a service."""
        if self.not_verified:
            return f" Not verified by the course's lock service: {self.not_verified}"
        lock = self.receipt("lock")
        return f" Verified by the course's lock service at {lock['at']}." if lock else ""


@dataclass(frozen=True)
class LockRecord:
    """What the lock file holds: the twenty's lock, the machine they were locked on, the package
    that locked them (`viewcopy`), and the later parts' locks (`next`, `production`) once they
    have one."""

    fingerprint: str
    locked_at: str
    torch: str
    devices: tuple[str, ...]
    predictions: dict[str, list[str]]
    revealed_at: str | None = None
    receipts: list[dict] = field(default_factory=list)
    not_verified: str = ""
    next: dict | None = None
    production: dict | None = None
    draw_version: int = 0
    """How this hand-in's next ops are seeded (exercise.next_predictions.draw_key)."""
    lost_lock: str = ""
    """Why an earlier lock this notebook showed, already revealed, could not be restored (""
    when none was lost): every part of this record was locked after seeing a reveal, and counts
    for nothing (locking.recover)."""
    viewcopy: str = ""
    """The version of the package whose lock cell wrote this record ("0.2.0"); "" in a record
    written before versions (0.1.0: every hand-in before 0.2.0). Grading never reads it: it
    tells the class report which release a student worked with (grading.versions)."""

    def part(self, key: str) -> PartLock | None:
        """The lock of part `key`, None when it has none."""
        if key == TWENTY:
            return PartLock(
                self.fingerprint, self.locked_at, self.predictions, self.revealed_at,
                list(self.receipts), self.not_verified,
            )  # fmt: skip
        held = getattr(self, key, None)
        try:
            return PartLock(**held) if isinstance(held, dict) else None
        except TypeError:  # not a lock this lab wrote: as good as none
            return None

    def parts(self) -> dict[str, PartLock]:
        """Every part this record holds a lock of, by key, the twenty first."""
        held = {key: self.part(key) for key in (TWENTY, *LATER_PARTS)}
        return {key: lock for key, lock in held.items() if lock is not None}

    def with_part(self, key: str, lock: PartLock) -> LockRecord:
        """This record with part `key` locked as `lock`."""
        if key != TWENTY:
            return replace(self, **{key: asdict(lock)})
        fields = asdict(lock)
        return replace(self, predictions=fields.pop("answers"), **fields)

    def json(self) -> dict:
        """The record as the lock file and the cells' outputs hold it."""
        return asdict(self)


def record_from_json(data: object) -> LockRecord:
    """A LockRecord from its JSON form (the file, or a cell output); ValueError when it is not."""
    try:
        fields = dict(data)
        fields["devices"] = tuple(fields["devices"])
        return LockRecord(**fields)
    except (ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"not a lock record: {exc}") from None
