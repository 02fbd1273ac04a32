"""The course lock service's data folder: its HMAC key, its id, and the events it recorded.

The service writes; the grader and the class report read, opening the database read-only (WAL
mode lets them read while the service writes). Every event is one row: a lock, a reveal, or a
lock refused because it came after the reveal, each with the service's own time.
"""

from __future__ import annotations

import secrets
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from viewcopy.files.atomic import write_once

KEY_FILE = "key"
DB_FILE = "locks.sqlite"
ID_FILE = "service_id"
EVENTS = ("lock", "reveal", "refused")

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS events(id INTEGER PRIMARY KEY, student TEXT, assignment TEXT, "
    "event TEXT, fingerprint TEXT, at TEXT)"
)


@dataclass(frozen=True)
class StudentLocks:
    """One student's events on one assignment; times are the service's ISO 8601 UTC."""

    student: str
    assignment: str
    locks: tuple[tuple[str, str], ...]
    """(fingerprint, at) of every lock, oldest first."""
    revealed_at: str | None
    revealed_fingerprint: str | None
    refused: int = 0
    """Locks refused because they came after the reveal."""

    @property
    def locked_before_reveal(self) -> tuple[str, str] | None:
        """The (fingerprint, at) of the last lock at or before the reveal (or the last lock)."""
        if self.revealed_at is None:
            return self.locks[-1] if self.locks else None
        reveal = datetime.fromisoformat(self.revealed_at)
        before = [lock for lock in self.locks if datetime.fromisoformat(lock[1]) <= reveal]
        return before[-1] if before else None


def init_data(data_dir: Path) -> None:
    """Create the data folder, its key and service id (once, never overwritten) and the database."""
    data_dir = Path(data_dir)
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_once(data_dir / KEY_FILE, secrets.token_hex(32), mode=0o600)
    write_once(data_dir / ID_FILE, f"viewcopy-lock-{secrets.token_hex(8)}", mode=0o600)
    with closing(sqlite3.connect(data_dir / DB_FILE)) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(SCHEMA)
        db.commit()


def missing(data_dir: Path, name: str) -> FileNotFoundError:
    """The error for a data folder that lacks `name`, saying how to create it."""
    return FileNotFoundError(
        f"{Path(data_dir) / name} is missing: {data_dir} is not a lock service data folder yet; "
        "run the lock service once with this folder (or call viewcopy.locking.store.init_data)"
    )


def read_data_file(data_dir: Path, name: str) -> str:
    """The text of a file of the data folder."""
    try:
        return (Path(data_dir) / name).read_text().strip()
    except FileNotFoundError:
        raise missing(data_dir, name) from None


def load_key(data_dir: Path) -> bytes:
    """The service's HMAC key."""
    text = read_data_file(data_dir, KEY_FILE)
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise ValueError(
            f"{Path(data_dir) / KEY_FILE} is not a hex key: restore it from a backup, since "
            "receipts already issued can only be verified with the original key"
        ) from None


def service_id(data_dir: Path) -> str:
    """The id the service puts in every receipt."""
    return read_data_file(data_dir, ID_FILE)


def record(
    data_dir: Path, student: str, assignment: str, event: str, fingerprint: str, at: str
) -> None:
    """Append one event."""
    if event not in EVENTS:
        raise ValueError(f"unknown event {event!r}: record one of {', '.join(EVENTS)}")
    with closing(sqlite3.connect(Path(data_dir) / DB_FILE, timeout=10)) as db, db:
        db.execute(
            "INSERT INTO events(student, assignment, event, fingerprint, at) "
            "VALUES (?, ?, ?, ?, ?)",
            (student, assignment, event, fingerprint, at),
        )


def student_locks(data_dir: Path, student: str, assignment: str) -> StudentLocks | None:
    """One student's events on one assignment, None when there are none."""
    rows = read_events(data_dir, "assignment = ? AND student = ?", (assignment, student))
    return summarize(student, assignment, rows) if rows else None


def read_assignment(data_dir: Path, assignment: str) -> dict[str, StudentLocks]:
    """Every student's events on one assignment, by student."""
    rows = read_events(data_dir, "assignment = ?", (assignment,))
    students = dict.fromkeys(row[0] for row in rows)
    return {s: summarize(s, assignment, [row for row in rows if row[0] == s]) for s in students}


def read_events(data_dir: Path, where: str, params: tuple) -> list[tuple[str, str, str, str]]:
    """(student, event, fingerprint, at) rows in the order recorded, read-only."""
    path = Path(data_dir) / DB_FILE
    if not path.is_file():
        raise missing(data_dir, DB_FILE)
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)) as db:
        query = f"SELECT student, event, fingerprint, at FROM events WHERE {where} ORDER BY id"
        return db.execute(query, params).fetchall()


def summarize(student: str, assignment: str, rows: list[tuple[str, str, str, str]]) -> StudentLocks:
    """StudentLocks from one student's rows, in the order recorded."""
    reveals = [(fingerprint, at) for _, event, fingerprint, at in rows if event == "reveal"]
    return StudentLocks(
        student=student,
        assignment=assignment,
        locks=tuple((fingerprint, at) for _, event, fingerprint, at in rows if event == "lock"),
        revealed_at=reveals[0][1] if reveals else None,
        revealed_fingerprint=reveals[0][0] if reveals else None,
        refused=sum(event == "refused" for _, event, _, _ in rows),
    )
