"""The score each student's cell gets in an import file: the assignment's gradebook total
(course.class_scores, the push's and the class report's number), none where grading failed."""

from __future__ import annotations

from dataclasses import dataclass

from viewcopy.course.class_scores import GradebookScore, NoScores, class_scores
from viewcopy.course.folder import Course
from viewcopy.grading.record import not_graded
from viewcopy.lms.errors import ImportFileError


@dataclass(frozen=True)
class ClassScores:
    """The assignment's scores (course.class_scores), and why each hand-in whose last grading
    failed or was interrupted has none to give (grading.record.not_graded)."""

    assignment: str
    max_score: float
    students: dict[str, GradebookScore]
    failed: dict[str, str]

    def to_write(self, student_id: str) -> float | None:
        """The score the import file gets for the student, None to leave the LMS's cell: a
        student with no score to give (no graded hand-in, or a grading that failed or was
        interrupted) keeps the cell the export had, so the import changes nothing for them (in
        both LMSs a blank cell over a score can clear it)."""
        if student_id in self.failed:
            return None
        return self.students[student_id].score


def read_scores(course: Course, assignment: str) -> ClassScores:
    """Every student's score, pending hand grading and failed grading, from the course."""
    try:
        max_score, students = class_scores(course, assignment)
    except NoScores as exc:
        raise ImportFileError(str(exc)) from None
    failed = not_graded(course, assignment)
    for student_id in failed.keys() - students.keys():
        students[student_id] = GradebookScore(student_id)
    return ClassScores(assignment, max_score, students, failed)
