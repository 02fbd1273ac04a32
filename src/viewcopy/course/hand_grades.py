"""What a grading left of the hand grades: how many stay given, and which answers, graded by
hand before, changed and wait for their grader again (plugins.hand_grades decides which)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from viewcopy.course.assignment import NOTEBOOK_ID
from viewcopy.course.folder import Course


@dataclass(frozen=True)
class HandGrades:
    """The hand grades of some hand-ins: given (counted), and waiting again (student, cell)."""

    given: int
    waiting_again: tuple[tuple[str, str], ...]

    def sentence(self) -> str:
        """One line for the grading's summary; empty where no hand grade was ever given."""
        if not (self.given or self.waiting_again):
            return ""
        line = f"hand grades kept: {self.given}"
        if self.waiting_again:
            by_student: dict[str, list[str]] = {}
            for student, cell in self.waiting_again:
                by_student.setdefault(student, []).append(cell)
            who = "; ".join(f"{s} ({', '.join(cells)})" for s, cells in sorted(by_student.items()))
            line += (
                f"; {len(self.waiting_again)} answer(s) changed since graded by hand, waiting "
                f"for their grader again: {who}"
            )
        return line


def hand_grades(course: Course, assignment: str, students: Iterable[str]) -> HandGrades:
    """The hand grades (manual scores) of `students`' graded hand-ins of `assignment`."""
    from nbgrader.api import MissingEntry

    given, waiting = 0, []
    with course.gradebook() as gradebook:
        for student in sorted(students):
            try:
                notebook = gradebook.find_submission_notebook(NOTEBOOK_ID, assignment, student)
            except MissingEntry:
                continue
            for grade in notebook.grades:
                if grade.manual_score is None:
                    continue
                if grade.needs_manual_grade:
                    waiting.append((student, grade.name))
                else:
                    given += 1
    return HandGrades(given, tuple(waiting))
