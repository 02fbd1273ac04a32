"""What one `viewcopy grade` run says about each hand-in, locally or on a cluster: its outcome,
the record CSV, and the summary the command prints."""

from __future__ import annotations

import csv
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

GRADED, FAILED, SKIPPED, INTERRUPTED = "graded", "failed", "skipped", "interrupted"
COLUMNS = ("student_id", "status", "seconds", "reason", "devices", "worker")


@dataclass(frozen=True)
class HandInOutcome:
    """One student's line in the grading record: `devices` are those the hidden tests ran on
    ("cpu+cuda"), `worker` where it was graded ("local" or a Dask worker's address)."""

    student_id: str
    status: str
    seconds: float = 0.0
    reason: str = ""
    devices: str = ""
    worker: str = ""


class GradeError(RuntimeError):
    """The command cannot start (no course, no submissions, bad options), or lost its cluster."""


def discard_partial(course: Path, assignment: str, student_id: str) -> None:
    """What nbgrader does with a failed submission: no half-written autograded folder stays."""
    shutil.rmtree(course / "autograded" / student_id / assignment, ignore_errors=True)


def write_record(path: Path, outcomes: Iterable[HandInOutcome]) -> None:
    """The run's record: one row per student, with the reason for each failure."""
    with path.open("w", newline="", encoding="utf-8") as sink:
        writer = csv.writer(sink)
        writer.writerow(COLUMNS)
        for o in sorted(outcomes, key=lambda o: o.student_id):
            writer.writerow(
                [o.student_id, o.status, f"{o.seconds:.2f}", o.reason, o.devices, o.worker]
            )


def read_record(path: Path) -> dict[str, HandInOutcome]:
    """The last run's record (write_record's CSV), by student; empty when there is none."""
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
            )
            for row in csv.DictReader(source)
        }


def record_path(course: Path, assignment: str) -> Path:
    return course / "grade_logs" / assignment / "record.csv"


def outcomes_summary(outcomes: Sequence[HandInOutcome]) -> str:
    """Counts by status, then every student that was not graded, with the reason."""
    counts = {s: sum(o.status == s for o in outcomes) for s in (GRADED, FAILED, SKIPPED)}
    lines = [", ".join(f"{n} {s}" for s, n in counts.items())]
    lines += [
        f"  {o.student_id}: {o.status}: {o.reason}"
        for o in outcomes
        if o.status in (FAILED, INTERRUPTED)
    ]
    return "\n".join(lines)
