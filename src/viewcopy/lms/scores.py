"""Each student's score for an assignment, read from the course's nbgrader gradebook, as AGS
says it: `scoreGiven` the gradebook's total (less the late penalty, as `nbgrader export`),
`scoreMaximum` the assignment's maximum, `gradingProgress` PendingManual while any cell awaits
hand grading (answers 21-25) and FullyGraded after, `activityProgress` from the hand-in,
`submission.submittedAt` when it was handed in (nbgrader's timestamp, to the microsecond).

A hand-in whose last grading failed (`viewcopy grade`'s record) has no score to give: its
gradingProgress is Failed, and the push sends nothing for it (the LMS keeps what it had, as a
regrade that failed must not erase an earlier score) and names it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from viewcopy.course.assignment import gradebook_to_read, submission_folder
from viewcopy.grading.record import FAILED, read_record, record_path

# AGS activityProgress and gradingProgress
INITIALIZED, SUBMITTED, COMPLETED = "Initialized", "Submitted", "Completed"
NOT_READY, PENDING, PENDING_MANUAL = "NotReady", "Pending", "PendingManual"
FULLY_GRADED, GRADING_FAILED = "FullyGraded", "Failed"


class NoAssignment(ValueError):
    """The gradebook does not know the assignment."""


@dataclass(frozen=True)
class StudentScore:
    """One enrolled student's standing on the assignment, as the gradebook and the grading record
    have it; `failure` is the record's reason when the last grading of the hand-in failed."""

    student_id: str
    activity: str
    grading: str
    maximum: float
    score: float | None = None
    submitted_at: str | None = None
    failure: str = ""

    @property
    def handed_in(self) -> bool:
        return self.activity != INITIALIZED

    def as_final(self) -> StudentScore:
        """The score with the autograded part final (FullyGraded) while hand grading is
        pending, for a course that shows partial grades (c.LmsPush.partial_as_final)."""
        if self.grading != PENDING_MANUAL:
            return self
        return replace(self, grading=FULLY_GRADED)

    def payload(self) -> dict:
        """The AGS score's fields, less userId and timestamp (the push adds them)."""
        body: dict = {"activityProgress": self.activity, "gradingProgress": self.grading}
        if self.score is not None:
            body.update(scoreGiven=self.score, scoreMaximum=self.maximum)
        if self.submitted_at is not None:
            body["submission"] = {"submittedAt": self.submitted_at}
        return body


def assignment_scores(course: Path, assignment: str) -> tuple[float, list[StudentScore]]:
    """The assignment's maximum score and every enrolled student's score, by student id."""
    from nbgrader.api import Gradebook, MissingEntry

    course = Path(course)
    record = read_record(record_path(course, assignment))
    with gradebook_to_read(course) as url:
        if url is None:
            raise NoAssignment(f"{course} has no gradebook: grade the hand-ins first")
        with Gradebook(url, course_id="") as gradebook:
            try:
                maximum = float(gradebook.find_assignment(assignment).max_score)
            except MissingEntry:
                raise NoAssignment(
                    f"the gradebook of {course} has no assignment {assignment!r}: run "
                    f"`nbgrader generate_assignment {assignment}` and grade the hand-ins first"
                ) from None
            out = []
            for student in sorted(gradebook.students, key=lambda s: s.id):
                try:
                    submission = gradebook.find_submission(assignment, student.id)
                except MissingEntry:
                    submission = None
                outcome = record.get(student.id)
                failed = outcome is not None and outcome.status == FAILED
                failure = (outcome.reason or "grading failed") if failed else ""
                out.append(_score(course, assignment, student.id, maximum, submission, failure))
    return maximum, out


def _score(course, assignment, student_id, maximum, submission, failure) -> StudentScore:
    handed_in = submission_folder(course, student_id, assignment).is_dir()
    if failure:
        return StudentScore(student_id, SUBMITTED, GRADING_FAILED, maximum, failure=failure)
    if submission is None:
        if handed_in:
            when = _handed_in_at(submission_folder(course, student_id, assignment))
            return StudentScore(student_id, SUBMITTED, PENDING, maximum, submitted_at=when)
        return StudentScore(student_id, INITIALIZED, NOT_READY, maximum)
    score = max(0.0, float(submission.score) - float(submission.late_submission_penalty or 0))
    return StudentScore(
        student_id,
        COMPLETED,
        PENDING_MANUAL if submission.needs_manual_grade else FULLY_GRADED,
        maximum,
        score=round(score, 6),
        submitted_at=_utc(submission.timestamp),
    )


def _handed_in_at(folder: Path) -> str | None:
    """The hand-in's time as nbgrader's collect wrote it (timestamp.txt), None without one."""
    from nbgrader.utils import parse_utc

    stamp = folder / "timestamp.txt"
    if not stamp.is_file():
        return None
    try:
        return _utc(parse_utc(stamp.read_text(encoding="utf-8").strip()))
    except ValueError:
        return None


def _utc(when: datetime | None) -> str | None:
    """nbgrader keeps submission times as naive UTC; AGS wants them to the sub-second."""
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc).isoformat(timespec="microseconds")
