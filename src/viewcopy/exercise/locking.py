"""Locking predictions before looking, and checking that lock before every reveal.

The lock file lives beside the notebook (the kernel's working directory). It may be rewritten only
until the first reveal; after that, and always under `nbgrader autograde`, it is only verified.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch

from viewcopy.engine.devices import available_devices
from viewcopy.exercise.predictions import Prediction, StudentError, fingerprint, parse_predictions

LOCK_FILE = "view_or_copy.lock.json"


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

    def locked_predictions(self) -> dict[int, Prediction]:
        return {int(i): Prediction(*pair) for i, pair in self.predictions.items()}


@dataclass(frozen=True)
class LockStatus:
    """How the current predictions stand against the lock: `locked`, `changed` or `missing`."""

    state: str
    reason: str
    changed_items: tuple[int, ...] = ()
    record: LockRecord | None = None


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
        data = json.loads(path.read_text(encoding="utf-8"))
        data["devices"] = tuple(data["devices"])
        return LockRecord(**data)
    except (ValueError, TypeError, KeyError) as exc:
        raise LockError(
            f"{path.name} is not a lock this lab wrote ({exc}); it was edited or damaged. "
            "Ask your instructor: deleting it loses the credit for predicting before looking."
        ) from None


def status(parsed: Mapping[int, Prediction], directory=None) -> LockStatus:
    """Compare parsed predictions with the lock file."""
    record = read_lock(directory)
    if record is None:
        return LockStatus(
            "missing", "No lock: the predictions were never locked, so they count for nothing."
        )
    if record.fingerprint == fingerprint(parsed):
        return LockStatus("locked", f"Locked at {record.locked_at}, unchanged since.", (), record)
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


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def write_lock(parsed: Mapping[int, Prediction], directory=None) -> LockRecord:
    """Record the predictions' fingerprint and the machine they were locked on."""
    record = LockRecord(
        fingerprint=fingerprint(parsed),
        locked_at=_now(),
        torch=torch.__version__,
        devices=available_devices(),
        predictions={str(i): [p.verdict, p.rule] for i, p in parsed.items()},
    )
    _save(record, directory)
    return record


def _save(record: LockRecord, directory) -> None:
    path = lock_path(directory)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(asdict(record), indent=2, ensure_ascii=False), "utf-8")
    temporary.replace(path)


def lock_predictions(
    predictions: object, directory=None
) -> tuple[dict[int, Prediction], LockStatus]:
    """Validate and lock. Re-locking is allowed until the first reveal (always in the master);
    autograde only verifies."""
    parsed = parse_predictions(predictions)
    current = status(parsed, directory)
    if autograding() or current.state == "locked":
        return parsed, current
    revealed = current.record is not None and current.record.revealed_at is not None
    if revealed and not is_master_folder(Path(directory or Path.cwd()).resolve()):
        raise LockError(_changed_after_reveal(current))
    write_lock(parsed, directory)
    return parsed, status(parsed, directory)


def verify_for_reveal(
    predictions: object, directory=None
) -> tuple[dict[int, Prediction], LockStatus]:
    """Refuse to reveal unless the predictions are exactly the locked ones; mark the reveal."""
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
    if not autograding() and current.record.revealed_at is None:
        _save(replace(current.record, revealed_at=_now()), directory)
    return parsed, current


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
