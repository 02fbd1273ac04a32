"""What one `viewcopy grade` run says about each hand-in, locally or on a cluster: its outcome,
the record CSV, and the summary the command prints."""

from __future__ import annotations

import csv
import io
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from viewcopy.course.folder import Course
from viewcopy.engine.version import package_version
from viewcopy.files.atomic import replace_folder, write_atomically

GRADED, FAILED, SKIPPED, INTERRUPTED = "graded", "failed", "skipped", "interrupted"
NOT_GRADED = (FAILED, INTERRUPTED)
"""The outcomes that leave a hand-in without a score from its last grading: the push sends it
nothing, the import file leaves its cell, the class report and the summary name it."""
COLUMNS = ("student_id", "status", "seconds", "reason", "devices", "worker", "viewcopy")
"""The record's columns; a record written before versions (0.1.0) has no `viewcopy`."""


@dataclass(frozen=True)
class HandInOutcome:
    """One student's line in the grading record: `devices` are those the hidden tests ran on
    ("cpu+cuda"), `worker` where it was graded ("local" or a Dask worker's address), `viewcopy`
    the version of the package that graded it ("" when not known: see `write_record`)."""

    student_id: str
    status: str
    seconds: float = 0.0
    reason: str = ""
    devices: str = ""
    worker: str = ""
    viewcopy: str = ""
    kernels: tuple[int, int] = field(default=(0, 0), compare=False)
    """How many kernels its grading started warm and fresh (said in the summary, not recorded)."""

    @property
    def why_not_graded(self) -> str:
        """`grading failed: the reason` (or interrupted) for an outcome in NOT_GRADED, else ''."""
        if self.status not in NOT_GRADED:
            return ""
        return f"grading {self.status}: {self.reason}".rstrip(": ")


class GradeError(RuntimeError):
    """The command cannot start (no course, no submissions, bad options), or lost its cluster."""


def in_flight(course: Course, assignment: str) -> Path:
    """Where `viewcopy grade` writes a hand-in's autograded folder while grading it (nbgrader's
    `autograded_directory` there, given relative to the course). Only a whole one reaches
    autograded/."""
    return course.grade_logs(assignment) / "in_flight"


def grading_mark(course: Course, assignment: str, student_id: str) -> Path:
    """The hand-in's folder in the in-flight area: there while it is being graded, so a run
    stopped before its end leaves it to the next run to grade."""
    return in_flight(course, assignment) / student_id


def staged_folder(course: Course, assignment: str, student_id: str) -> Path:
    return grading_mark(course, assignment, student_id) / assignment


def begin(course: Course, assignment: str, student_id: str) -> None:
    """Before grading a hand-in: it is marked in flight (nothing half-written of an earlier try
    kept), and its last whole grading stays in autograded/ until the new one replaces it, for
    formgrader, `viewcopy five` and the hand grades kept (plugins.hand_grades) to read."""
    mark = grading_mark(course, assignment, student_id)
    shutil.rmtree(mark, ignore_errors=True)
    mark.mkdir(parents=True)


def in_flight_when_stopped(course: Course, assignment: str, student_id: str) -> bool:
    """Whether a grading of the hand-in began and never ended (the run was killed)."""
    return grading_mark(course, assignment, student_id).is_dir()


def discard_partial(course: Course, assignment: str, student_id: str) -> None:
    """After a failure: the hand-in counts as ungraded, and nothing half-written of it stays."""
    shutil.rmtree(course.graded(student_id, assignment), ignore_errors=True)
    shutil.rmtree(grading_mark(course, assignment, student_id), ignore_errors=True)


def publish(course: Course, assignment: str, student_id: str) -> None:
    """Move a hand-in's graded folder into autograded/ in place of its last grading, each in one
    rename: the last step of its grading, after its gradebook rows, so an autograded folder is
    always a whole grading (a reader between the two renames finds none, for microseconds)."""
    folder = course.graded(student_id, assignment)
    mark = grading_mark(course, assignment, student_id)
    folder.parent.mkdir(parents=True, exist_ok=True)
    replace_folder(staged_folder(course, assignment, student_id), folder, mark / ".replaced")
    shutil.rmtree(mark, ignore_errors=True)


def write_record(path: Path, outcomes: Iterable[HandInOutcome]) -> None:
    """The run's record: one row per student, with the reason for each failure (it replaces the
    last run's whole: a run killed while writing it leaves the last one).

    Each row names the package version that graded the hand-in (`viewcopy`) unless its outcome
    does: this process's for a hand-in this run graded or tried to (on a cluster, the
    coordinator's); for one skipped as already graded, the version the last record gave its
    grading ("" where it gave none: graded before versions, or by plain `nbgrader autograde`)."""
    try:
        last = read_record(path)
    except (OSError, ValueError, KeyError, csv.Error):  # a record edited by hand: start afresh
        last = {}

    def graded_by(o: HandInOutcome) -> str:
        if o.viewcopy or o.status != SKIPPED:
            return o.viewcopy or package_version()
        before = last.get(o.student_id)
        return before.viewcopy if before and before.status in (GRADED, SKIPPED) else ""

    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(COLUMNS)
    for o in sorted(outcomes, key=lambda o: o.student_id):
        row = [o.student_id, o.status, f"{o.seconds:.2f}", o.reason, o.devices, o.worker]
        writer.writerow([*row, graded_by(o)])
    write_atomically(path, text.getvalue())


def read_record(path: Path) -> dict[str, HandInOutcome]:
    """The last run's record (write_record's CSV), by student; empty when there is none. A
    record written before a column existed reads it as "" (`devices`, `worker`, `viewcopy`)."""
    if not path.is_file():
        return {}
    with path.open(newline="", encoding="utf-8") as source:
        return {
            row["student_id"]: HandInOutcome(
                row["student_id"],
                row["status"],
                float(row["seconds"]),
                row["reason"],
                row.get("devices") or "",
                row.get("worker") or "",
                row.get("viewcopy") or "",
            )
            for row in csv.DictReader(source)
        }


def record_path(course: Course, assignment: str) -> Path:
    return course.grade_logs(assignment) / "record.csv"


def not_graded(course: Course, assignment: str) -> dict[str, str]:
    """Each student whose last grading failed or was interrupted, and why (`why_not_graded`)."""
    outcomes = read_record(record_path(course, assignment)).values()
    return {o.student_id: o.why_not_graded for o in outcomes if o.status in NOT_GRADED}


def outcomes_summary(outcomes: Sequence[HandInOutcome]) -> str:
    """Counts by status (interrupted ones where there are any), then every student that was not
    graded, with the reason."""
    counts = {s: sum(o.status == s for o in outcomes) for s in (GRADED, *NOT_GRADED, SKIPPED)}
    shown = {s: n for s, n in counts.items() if n or s != INTERRUPTED}
    lines = [", ".join(f"{n} {s}" for s, n in shown.items())]
    warm, fresh = (sum(o.kernels[i] for o in outcomes) for i in (0, 1))
    if warm or fresh:
        lines[0] += f"; kernels: {warm} forked warm, {fresh} started fresh"
    lines += [
        f"  {o.student_id}: {o.status}: {o.reason}" for o in outcomes if o.status in NOT_GRADED
    ]
    return "\n".join(lines)
