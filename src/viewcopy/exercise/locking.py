"""Locking predictions before looking, and checking that lock before every reveal.

The lock file lives beside the notebook (the kernel's working directory), and the lock and reveal
cells also carry it in their outputs, so a notebook handed in alone keeps it. It may be rewritten
only until the first reveal; after that, and always under `nbgrader autograde`, it is only
verified. Where the course runs a lock service (`VIEWCOPY_LOCK_SERVICE`), every lock and the
reveal are also recorded there, with server time, and the service's signed receipts are kept in
the lock: the service refuses a lock after the reveal, so deleting the file gains nothing. When
the service cannot be reached the lab goes on with a lock marked not verified, and says why.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from viewcopy.engine.devices import available_devices
from viewcopy.exercise.lock_service_client import (
    LockServiceClient,
    LockServiceError,
    ServiceRefused,
    from_environment,
)
from viewcopy.exercise.predictions import Prediction, StudentError, fingerprint, parse_predictions

LOCK_FILE = "view_or_copy.lock.json"
OUTPUT_KEY = "viewcopy_lock"
"""The key of the lock record in the metadata of the lock and reveal cells' outputs."""


class LockError(StudentError):
    """The predictions and the lock disagree, or there is no lock: nothing was revealed."""


@dataclass(frozen=True)
class LockRecord:
    """What the lock file holds."""

    fingerprint: str
    locked_at: str
    torch: str
    devices: tuple[str, ...]
    predictions: dict[str, list[str]]
    revealed_at: str | None = None
    receipts: list[dict] = field(default_factory=list)
    """The lock service's signed receipts for this lock and its reveal, oldest first."""
    not_verified: str = ""
    """Why the course's lock service did not confirm this lock ("" when it did, or no service)."""
    next: dict | None = None
    """The lock of this hand-in's next ops (exercise.next_lock), once it has one."""
    production: dict | None = None
    """The lock of PRODUCTION (exercise.production), once it has one."""

    def locked_predictions(self) -> dict[int, Prediction]:
        return {int(i): Prediction(*pair) for i, pair in self.predictions.items()}

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
class LockStatus:
    """How the current predictions stand against the lock: `locked`, `changed` or `missing`
    (and, when grading with a lock service, `unverified` or `forged`: no credit). `trust` says
    what stands behind a lock: `verified` by the course's lock service, `not verified`, or ""
    where the course runs no service."""

    state: str
    reason: str
    changed_items: tuple[int, ...] = ()
    record: LockRecord | None = None
    trust: str = ""


def autograding() -> bool:
    """True inside `nbgrader autograde`, where the lock is verified and never written."""
    return os.environ.get("NBGRADER_EXECUTION") == "autograde"


def lock_path(directory: str | os.PathLike | None = None) -> Path:
    """The lock beside the notebook; for the instructor's master, a private temporary folder.

    A lock left in `source/<assignment>/` would be copied into the release by
    `nbgrader generate_assignment`, handing students the master's (measured) predictions.
    """
    folder = Path(directory or Path.cwd()).resolve()
    if is_master_folder(folder):
        digest = hashlib.sha256(str(folder).encode()).hexdigest()[:16]
        folder = Path(tempfile.gettempdir()) / "viewcopy-master-locks" / digest
        folder.mkdir(parents=True, exist_ok=True)
    return folder / LOCK_FILE


def is_master_folder(folder: Path) -> bool:
    """True for `<course>/source/<assignment>/`, the instructor's master copy."""
    return folder.parent.name == "source" and (folder.parents[1] / "nbgrader_config.py").exists()


def read_lock(directory: str | os.PathLike | None = None) -> LockRecord | None:
    """The lock beside the notebook, None when there is none; LockError when it is unreadable."""
    path = lock_path(directory)
    if not path.exists():
        return None
    try:
        return record_from_json(json.loads(path.read_text(encoding="utf-8")))
    except ValueError as exc:
        raise LockError(
            f"{path.name} is not a lock this lab wrote ({exc}); it was edited or damaged. "
            "Ask your instructor: deleting it loses the credit for predicting before looking."
        ) from None


def record_from_json(data: object) -> LockRecord:
    """A LockRecord from its JSON form (the file, or a cell output); ValueError when it is not."""
    try:
        fields = dict(data)
        fields["devices"] = tuple(fields["devices"])
        return LockRecord(**fields)
    except (ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"not a lock record: {exc}") from None


def status(parsed: Mapping[int, Prediction], directory=None) -> LockStatus:
    """Compare parsed predictions with the lock file."""
    return compare(parsed, read_lock(directory))


def compare(parsed: Mapping[int, Prediction], record: LockRecord | None) -> LockStatus:
    """Where parsed predictions stand against a lock record (None: never locked)."""
    if record is None:
        return LockStatus(
            "missing", "No lock: the predictions were never locked, so they count for nothing."
        )
    if record.fingerprint == fingerprint(parsed):
        reason = f"Locked at {record.locked_at}, unchanged since.{record.service_note()}"
        return LockStatus("locked", reason, (), record)
    before = record.locked_predictions()
    changed = tuple(i for i in sorted(set(before) | set(parsed)) if before.get(i) != parsed.get(i))
    return LockStatus(
        "changed",
        f"Changed after the lock of {record.locked_at} (items {_items(changed)}): "
        "predictions changed after locking count for nothing.",
        changed,
        record,
    )


def _items(items: tuple[int, ...]) -> str:
    return ", ".join(map(str, items))


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


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

    def for_part(self, part: str) -> ServiceLock:
        """The same service for a later part of the lab: its own lock (`view_or_copy/next`)."""
        return replace(self, assignment=f"{self.assignment}/{part}")

    def ask(self, event: str, fingerprint: str) -> tuple[dict | None, str]:
        """The service's receipt of a lock or a reveal, or why there is none. LockError when the
        service refuses it on the merits (a lock after the reveal, a reveal of other
        predictions)."""
        if self.client is None:
            return None, self.problem
        try:
            call = self.client.lock if event == "lock" else self.client.reveal
            return call(self.assignment, fingerprint), ""
        except ServiceRefused as exc:
            if exc.status == 409:
                raise LockError(
                    f"The course's lock service refused this {event}: {exc} "
                    "(nothing was changed; your cell is unchanged)"
                ) from None
            return None, str(exc)
        except LockServiceError as exc:
            return None, str(exc)


def write_lock(
    parsed: Mapping[int, Prediction], directory=None, *, receipts=(), not_verified: str = ""
) -> LockRecord:
    """Record the predictions' fingerprint, the machine they were locked on, and what the
    course's lock service said."""
    import torch  # only where a lock is written: a kernel, which has it loaded

    record = LockRecord(
        fingerprint=fingerprint(parsed),
        locked_at=now(),
        torch=torch.__version__,
        devices=available_devices(),
        predictions={str(i): [p.verdict, p.rule] for i, p in parsed.items()},
        receipts=list(receipts),
        not_verified=not_verified,
    )
    save(record, directory)
    return record


def save(record: LockRecord, directory) -> None:
    path = lock_path(directory)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(asdict(record), indent=2, ensure_ascii=False), "utf-8")
    temporary.replace(path)


def lock_predictions(
    predictions: object, directory=None, service: ServiceLock | None = None
) -> tuple[dict[int, Prediction], LockStatus]:
    """Validate and lock, with the course's lock service when there is one. Re-locking is
    allowed until the first reveal (always in the master); autograde only verifies."""
    parsed = parse_predictions(predictions)
    current = status(parsed, directory)
    if autograding():
        return parsed, current
    master = is_master_folder(Path(directory or Path.cwd()).resolve())
    service = None if master else service
    revealed = current.record is not None and current.record.revealed_at is not None
    if current.state == "locked" and (
        revealed or service is None or current.record.receipt("lock")
    ):
        return parsed, current  # a lock never registers with the service after a reveal
    if revealed and not master:
        raise LockError(_changed_after_reveal(current))
    receipt, problem = service.ask("lock", fingerprint(parsed)) if service else (None, "")
    receipts = [receipt] if receipt else []
    if current.state == "locked":  # locked before, unverified: keep its time, add the receipt
        save(replace(current.record, receipts=receipts, not_verified=problem), directory)
    else:
        write_lock(parsed, directory, receipts=receipts, not_verified=problem)
    return parsed, status(parsed, directory)


def verify_for_reveal(
    predictions: object, directory=None, service: ServiceLock | None = None
) -> tuple[dict[int, Prediction], LockStatus]:
    """Refuse to reveal unless the predictions are exactly the locked ones; register the reveal
    with the course's lock service (when there is one) before anything is shown; mark it."""
    parsed = parse_predictions(predictions)
    current = status(parsed, directory)
    if current.state == "missing":
        raise LockError("Nothing is locked yet: run the lock cell above before the reveal.")
    if current.state == "changed":
        raise LockError(
            _changed_after_reveal(current)
            if current.record.revealed_at
            else (
                f"PREDICTIONS differ from the lock in items {_items(current.changed_items)}: "
                "run the lock cell again (allowed until the first reveal), then the reveal."
            )
        )
    record = current.record
    if autograding() or record.revealed_at:
        return parsed, current
    receipts, problem = list(record.receipts), record.not_verified
    if service is not None and not record.receipt("lock"):
        lock, problem = service.ask("lock", fingerprint(parsed))
        receipts += [lock] if lock else []
    if service is not None and not problem:
        reveal, problem = service.ask("reveal", fingerprint(parsed))
        receipts += [reveal] if reveal else []
    revealed = replace(
        record, revealed_at=record.revealed_at or now(), receipts=receipts, not_verified=problem
    )
    save(revealed, directory)
    return parsed, status(parsed, directory)


def _changed_after_reveal(current: LockStatus) -> str:
    locked = current.record.locked_predictions()
    lines = [
        f"  item {i}: locked {tuple(vars(locked[i]).values())!r}"
        for i in current.changed_items
        if i in locked
    ]
    return (
        f"PREDICTIONS changed after the reveal of {current.record.revealed_at} "
        f"(items {_items(current.changed_items)}). The lock keeps what you predicted before "
        "looking; put these back to see the reveal again:\n" + "\n".join(lines)
    )
