"""What travels between `viewcopy grade --cluster` and a worker: the course's part (once per
worker), one hand-in per task, and what comes back. Never the gradebook, never the course folder.
"""

from __future__ import annotations

import hashlib
import pickle
from dataclasses import dataclass, field
from pathlib import Path

from viewcopy.course.folder import Course
from viewcopy.course.gradebook_rows import AssignmentRows
from viewcopy.grading.limits import Limit
from viewcopy.grading.worker import Graded
from viewcopy.sandbox.limits import Limits

Files = dict[str, tuple[int, bytes]]
"""A folder's files: relative path -> (mode, content)."""


@dataclass(frozen=True)
class CourseParcel:
    """The course as a worker needs it: nbgrader_config.py, the assignment's master folder
    (`source/<assignment>/`, hidden tests included), its rows in the gradebook, the sandbox and
    the limit per cell (`cell_s`, nbgrader's Execute.timeout there)."""

    assignment: str
    config: bytes
    source: Files
    rows: AssignmentRows
    sandbox: Limits | None
    cell_s: int
    key: str = field(default="", compare=False)

    @classmethod
    def of(
        cls,
        course: Course,
        assignment: str,
        rows: AssignmentRows,
        sandbox: Limits | None,
        cell_s: int,
    ) -> CourseParcel:
        config = course.config_file.read_bytes()
        source = pack(course.source / assignment)
        parts = (assignment, config, source, rows, sandbox, cell_s)
        key = hashlib.sha256(pickle.dumps(parts)).hexdigest()
        return cls(assignment, config, source, rows, sandbox, cell_s, key)


@dataclass(frozen=True)
class HandInParcel:
    """One task: a student's submitted folder, the devices it must be graded on, the limit for
    the whole hand-in."""

    student_id: str
    files: Files
    devices: tuple[str, ...]
    limit: Limit


@dataclass(frozen=True)
class GradedParcel:
    """What comes back: nbgrader's verdict and log, the autograded folder's files (empty when
    grading failed) and the worker that graded it. `ran` is False when nbgrader never ran: a
    first Ctrl-C stopped the task before it began (`pool.STOPPED`), or the worker lacks a device."""

    graded: Graded
    files: Files
    worker: str
    ran: bool = True


def pack(folder: Path) -> Files:
    """Every file under `folder`, by path relative to it."""
    return {
        str(path.relative_to(folder)): (path.stat().st_mode & 0o777, path.read_bytes())
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def unpack(files: Files, folder: Path) -> None:
    """Write `files` under `folder` (made if missing), with their modes."""
    for name, (mode, content) in files.items():
        path = folder / name
        if ".." in Path(name).parts or Path(name).is_absolute():
            raise ValueError(f"refusing to write {name!r} outside {folder}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        path.chmod(mode)
