"""Where the lock file lives, reading and writing it.

The lock file lives beside the notebook (the kernel's working directory); for the instructor's
master it lives in a private temporary folder, since a lock left in `source/<assignment>/` would
be copied into the release, handing students the master's (measured) predictions.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import tempfile
from pathlib import Path

from viewcopy.engine.student_error import StudentError
from viewcopy.files.atomic import write_atomically
from viewcopy.files.course_layout import CONFIG_FILE, SOURCE
from viewcopy.locking.record import LOCK_FILE, LockRecord, record_from_json

Folder = str | os.PathLike | None
"""A hand-in's folder; None: the kernel's working directory."""


class LockError(StudentError):
    """The answers and the lock disagree, or there is no lock, or the lock file is not one this
    lab wrote: nothing was revealed."""


def autograding() -> bool:
    """True inside `nbgrader autograde`, where the lock is verified and never written."""
    return os.environ.get("NBGRADER_EXECUTION") == "autograde"


def now() -> str:
    """The kernel's time, ISO 8601 UTC."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def is_master_folder(folder: Path) -> bool:
    """True for `<course>/source/<assignment>/`, the instructor's master copy."""
    return folder.parent.name == SOURCE and (folder.parents[1] / CONFIG_FILE).exists()


def folder_of(directory: Folder) -> Path:
    """The notebook's folder, resolved."""
    return Path(directory or Path.cwd()).resolve()


def lock_path(directory: Folder = None) -> Path:
    """The lock beside the notebook; for the instructor's master, a private temporary folder."""
    folder = folder_of(directory)
    if is_master_folder(folder):
        digest = hashlib.sha256(str(folder).encode()).hexdigest()[:16]
        folder = Path(tempfile.gettempdir()) / "viewcopy-master-locks" / digest
        folder.mkdir(parents=True, exist_ok=True)
    return folder / LOCK_FILE


def read_lock(directory: Folder = None) -> LockRecord | None:
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


def lock_file_text(data: dict) -> str:
    """A lock record as the lock file holds it."""
    return json.dumps(data, indent=2, ensure_ascii=False)


def save(record: LockRecord, directory: Folder = None) -> None:
    """Write the lock file, atomically."""
    path = lock_path(directory)
    write_atomically(path, lock_file_text(record.json()))
