"""Answers 21-25 as a gradebook holds them once graded by hand: a writable copy of a graded course
and each student's manual score and comment read back through nbgrader's own API (`viewcopy
five --apply` in tests/commands/, the grading board in tests/course/test_five.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

from nbgrader.api import Gradebook

from viewcopy.course.assignment import ASSIGNMENT, COURSE_ID, NOTEBOOK_ID
from viewcopy.five.questions import graded_notebooks


def writable_copy(graded: Path, to: Path) -> Path:
    """A copy of the graded course, its gradebook included, for a test that writes grades."""
    shutil.copytree(graded, to, ignore=shutil.ignore_patterns("feedback"))
    return to


def manual(course: Path, item: int) -> dict[str, tuple[float | None, str | None]]:
    """Every graded student's manual score and comment of answer_<item>, read back directly."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gradebook:
        out = {}
        for student in graded_notebooks(course, ASSIGNMENT):
            grade = gradebook.find_grade(f"answer_{item}", NOTEBOOK_ID, ASSIGNMENT, student)
            comment = gradebook.find_comment(f"answer_{item}", NOTEBOOK_ID, ASSIGNMENT, student)
            out[student] = (grade.manual_score, comment.manual_comment)
        return out
