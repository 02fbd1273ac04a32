"""Answers 21-25 as a gradebook holds them once graded by hand: a writable copy of a graded course
and each student's manual score and comment read back through nbgrader's own API (`viewcopy
five --apply` in tests/commands/, the grading board in tests/course/test_five.py), and a course
with one group graded for formgrader to show (tests/browser/conftest.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

from nbgrader.api import Gradebook

from viewcopy.course.assignment import ASSIGNMENT, COURSE_ID, NOTEBOOK_ID
from viewcopy.course.folder import Course
from viewcopy.five.grades import apply_grades, check_rows
from viewcopy.five.questions import five, graded_notebooks

APPLIED = "Strides and storage, and the copy: exactly."
"""The comment `one_group_graded` gives answer_21 of `perfect`'s group, with 1.5 points."""


def writable_copy(graded: Path, to: Path) -> Path:
    """A copy of the graded course, its gradebook included, for a test that writes grades."""
    shutil.copytree(graded, to, ignore=shutil.ignore_patterns("feedback"))
    return to


def manual(course: Path, item: int) -> dict[str, tuple[float | None, str | None]]:
    """Every graded student's manual score and comment of answer_<item>, read back directly."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gradebook:
        out = {}
        for student in graded_notebooks(Course.at(course), ASSIGNMENT):
            grade = gradebook.find_grade(f"answer_{item}", NOTEBOOK_ID, ASSIGNMENT, student)
            comment = gradebook.find_comment(f"answer_{item}", NOTEBOOK_ID, ASSIGNMENT, student)
            out[student] = (grade.manual_score, comment.manual_comment)
        return out


def one_group_graded(course: Path) -> Path:
    """The course with answer_21 of the group that holds `perfect` graded 1.5 with APPLIED, as
    `viewcopy five --apply` writes it."""
    graded = Course.at(course)
    questions = five(graded, questions=[21])
    group = next(g for g in questions[0].groups if "perfect" in g.students)
    row = {"question": "21", "group": group.group, "score": "1.5", "comment": APPLIED}
    apply_grades(graded, check_rows([row], questions))
    return course


def submission_ids(course: Path) -> dict[str, str]:
    """Each student's submitted notebook's id in the gradebook (formgrader's page of it is
    /formgrader/submissions/<id>/)."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gradebook:
        return {s.student.id: s.id for s in gradebook.notebook_submissions(NOTEBOOK_ID, ASSIGNMENT)}
