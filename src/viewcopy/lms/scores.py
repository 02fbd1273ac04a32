"""Each student's score for an assignment as AGS says it: `scoreGiven` the student's score as
course.class_scores gives it (the import file's and the class report's number), `scoreMaximum`
the assignment's maximum, `gradingProgress` PendingManual while any cell awaits hand grading
(answers 21-25) and FullyGraded after, `activityProgress` from the hand-in,
`submission.submittedAt` when it was handed in (nbgrader's timestamp, to the microsecond).

A hand-in whose last grading failed or was interrupted (grading.record.NOT_GRADED) has no score
to give: its gradingProgress is Failed, and the push sends nothing for it (the LMS keeps what it
had, as a regrade that failed must not erase an earlier score) and names it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timezone

from viewcopy.course.class_scores import GradebookScore, NoScores, class_scores
from viewcopy.course.folder import Course
from viewcopy.grading.record import not_graded
from viewcopy.lms.vocabulary import (
    COMPLETED,
    FULLY_GRADED,
    GRADING_FAILED,
    INITIALIZED,
    NOT_READY,
    PENDING,
    PENDING_MANUAL,
    SUBMITTED,
)


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


def assignment_scores(course: Course, assignment: str) -> tuple[float, list[StudentScore]]:
    """The assignment's maximum score and every enrolled student's score, by student id."""
    try:
        maximum, students = class_scores(course, assignment)
    except NoScores as exc:
        raise NoAssignment(str(exc)) from None
    failures = not_graded(course, assignment)
    return maximum, [
        _score(course, assignment, student, maximum, failures.get(student.student_id, ""))
        for student in students.values()
    ]


def _score(
    course: Course, assignment: str, student: GradebookScore, maximum: float, failure: str
) -> StudentScore:
    student_id = student.student_id
    if failure:
        return StudentScore(student_id, SUBMITTED, GRADING_FAILED, maximum, failure=failure)
    if student.score is None:
        if course.hand_in(student_id, assignment).is_dir():
            handed_in_at = _utc(course.submitted_at(student_id, assignment))
            return StudentScore(student_id, SUBMITTED, PENDING, maximum, submitted_at=handed_in_at)
        return StudentScore(student_id, INITIALIZED, NOT_READY, maximum)
    return StudentScore(
        student_id,
        COMPLETED,
        PENDING_MANUAL if student.pending else FULLY_GRADED,
        maximum,
        score=student.score,
        submitted_at=_utc(student.submitted_at),
    )


def _utc(when: datetime | None) -> str | None:
    """nbgrader keeps submission times as naive UTC; AGS wants them to the sub-second."""
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc).isoformat(timespec="microseconds")
