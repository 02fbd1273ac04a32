"""Each student's score on an assignment as the course's gradebook holds it, read in one place
for the LMS push, the LMS import file and the class report, so all three give one number.

A score is the gradebook's total less any late penalty (as `nbgrader export` takes it), never
below 0, to two decimals (`DECIMALS`: what Canvas and Moodle show and what a person reads); the
import file writes it as a person does (`format_score`: 27.5, not 27.50).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from viewcopy.course.folder import Course

DECIMALS = 2


class NoScores(ValueError):
    """The course has no gradebook yet, or its gradebook does not know the assignment."""


def as_given(total: float, late_penalty: float = 0.0) -> float:
    """The score a student is given for a gradebook total: less the late penalty, never below
    0, to DECIMALS places."""
    return round(max(0.0, float(total) - float(late_penalty or 0)), DECIMALS) + 0.0


def format_score(value: float) -> str:
    """A score as a person writes it: 36, 27.5, 0.33."""
    text = f"{round(value, DECIMALS):.{DECIMALS}f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


@dataclass(frozen=True)
class GradebookScore:
    """One enrolled student as the gradebook has them on the assignment: `score` None without a
    graded submission; `pending` the grade cells that wait for hand grading; `submitted_at`
    nbgrader's (naive UTC) hand-in time."""

    student_id: str
    name: str = ""
    email: str | None = None
    lms_user_id: str | None = None
    score: float | None = None
    pending: tuple[str, ...] = ()
    submitted_at: datetime | None = None


def class_scores(course: Course, assignment: str) -> tuple[float, dict[str, GradebookScore]]:
    """The assignment's maximum and every enrolled student's score, by student id; NoScores
    naming the course and what to run where there is nothing to read."""
    from nbgrader.api import MissingEntry

    with course.gradebook_to_read() as url:
        if url is None:
            raise NoScores(
                f"{course.root} has no gradebook: grade the hand-ins of {assignment} first"
            )
        with course.gradebook(url) as gradebook:
            try:
                maximum = float(gradebook.find_assignment(assignment).max_score)
            except MissingEntry:
                raise NoScores(
                    f"the gradebook of {course.root} has no assignment {assignment!r}: run "
                    f"`nbgrader generate_assignment {assignment}` and grade the hand-ins first"
                ) from None
            students = {
                s.id: _score(gradebook, assignment, s)
                for s in sorted(gradebook.students, key=lambda s: s.id)
            }
    return maximum, students


def _score(gradebook, assignment: str, student) -> GradebookScore:
    from nbgrader.api import MissingEntry

    name = " ".join(p for p in (student.first_name, student.last_name) if p)
    found = GradebookScore(student.id, name, student.email, student.lms_user_id)
    try:
        submission = gradebook.find_submission(assignment, student.id)
    except MissingEntry:
        return found
    pending = tuple(
        grade.name
        for notebook in submission.notebooks
        for grade in notebook.grades
        if grade.needs_manual_grade
    )
    return GradebookScore(
        student.id,
        name,
        student.email,
        student.lms_user_id,
        as_given(submission.score, submission.late_submission_penalty),
        pending,
        submission.timestamp,
    )
