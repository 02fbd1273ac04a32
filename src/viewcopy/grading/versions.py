"""Which release of the package each hand-in met: the version whose lock cell wrote its lock
(`LockRecord.viewcopy`) and the version that graded it (`viewcopy grade`'s record.csv, column
`viewcopy`). Hand-ins from before versions (0.1.0, every release before 0.2.0) carry neither: the
class report shows them as BEFORE_VERSIONS. Nothing here changes how a hand-in is graded.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from viewcopy.course.assignment import ASSIGNMENT, NOTEBOOK
from viewcopy.course.folder import Course
from viewcopy.course.handin import handed_in_lock
from viewcopy.grading.record import GRADED, SKIPPED, read_record, record_path
from viewcopy.locking.file import LockError
from viewcopy.locking.record import LOCK_FILE

BEFORE_VERSIONS = "before versions"
"""How a missing version reads: a lock or a grading made before 0.2.0 recorded none."""


class HandInVersions(NamedTuple):
    """The versions one hand-in met; None where none is recorded."""

    locked: str | None
    """The version whose lock cell wrote its lock (its lock file, else the record its lock and
    reveal cells carry); None for a lock made before versions, or no lock this lab wrote."""
    graded: str | None
    """The version of `viewcopy grade` that graded it, as the last run's record says (a hand-in
    that run skipped keeps the version that graded it); None when graded before versions, by
    plain `nbgrader autograde`, not graded, or not in the last run (`--student`)."""

    def said(self) -> tuple[str, str]:
        """Both as the report writes them: the version, or BEFORE_VERSIONS."""
        return (self.locked or BEFORE_VERSIONS, self.graded or BEFORE_VERSIONS)


def versions_of(course: Course, assignment: str = ASSIGNMENT) -> dict[str, HandInVersions]:
    """Every student with a submission of `assignment` in `course`, or a row in its grading
    record: the versions their hand-in met. Reads the lock files (a notebook only where its lock
    file is missing) and record.csv; runs nothing a student wrote."""
    try:
        students = course.hand_ins(assignment)
    except FileNotFoundError:  # no submitted/ folder: what the record says
        students = []
    graded = {
        student: outcome.viewcopy or None
        for student, outcome in read_record(record_path(course, assignment)).items()
        if outcome.status in (GRADED, SKIPPED)
    }
    return {
        student: HandInVersions(
            lock_version(course.hand_in(student, assignment)), graded.get(student)
        )
        for student in sorted({*students, *graded})
    }


def lock_version(folder: Path) -> str | None:
    """The version that wrote the lock of the hand-in in `folder`; None where its lock has none
    (before versions) or it has no lock this lab wrote."""
    try:
        notebook = None if (folder / LOCK_FILE).exists() else _notebook(folder)
        record = handed_in_lock(folder, notebook)
    except (LockError, OSError, ValueError, AttributeError):
        return None
    return (record.viewcopy or None) if record else None


def _notebook(folder: Path):
    import nbformat  # about a second to import: only for a hand-in without its lock file

    return nbformat.read(folder / NOTEBOOK, as_version=4)
