"""What a grader gave stays given: answers 21-25 graded by hand (as formgrader's grade handler
writes them), then `viewcopy grade --force` of two hand-ins, one unchanged and one whose
answer_21 the student changed. The unchanged hand-in's hand grades read as given in all four
places an instructor reads them (the class report's grades, the LMS push's scores, the import
file's scores, `nbgrader export`); the changed answer waits for its grader again, and the run's
summary names it. All through the regrade, `viewcopy five` reads every graded hand-in (or names
one it skipped).

Slow: a copy of the session's graded class, two hand-ins graded again (about 30 s).
"""

from __future__ import annotations

import contextlib
import csv
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook
from support.hand_grades import writable_copy
from support.sandboxing import grade_as_the_product

from viewcopy.course.assignment import ASSIGNMENT, COURSE_ID, NOTEBOOK, NOTEBOOK_ID, read_grades
from viewcopy.course.folder import Course
from viewcopy.course.hand_grades import hand_grades
from viewcopy.five.questions import five, graded_notebooks
from viewcopy.lms.import_scores import read_scores
from viewcopy.lms.scores import assignment_scores
from viewcopy.lms.vocabulary import FULLY_GRADED, PENDING_MANUAL

pytestmark = pytest.mark.course

UNCHANGED, CHANGED = "perfect", "typical"
ANSWERS = tuple(f"answer_{item}" for item in range(21, 26))


def grade_by_hand(course: Path, student: str, cell: str, score: float) -> None:
    """What formgrader's grade handler (PUT /formgrader/api/grade/<id>) writes."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gradebook:
        grade = gradebook.find_grade(cell, NOTEBOOK_ID, ASSIGNMENT, student)
        grade = gradebook.find_grade_by_id(grade.id)
        grade.manual_score = score
        grade.extra_credit = None
        grade.needs_manual_grade = grade.manual_score is None and grade.auto_score is None
        gradebook.db.commit()


def exported(course: Path) -> dict[str, str]:
    """`nbgrader export`'s score per student."""
    subprocess.run(["nbgrader", "export"], cwd=course, check=True, capture_output=True)
    with (course / "grades.csv").open(newline="") as rows:
        return {row["student_id"]: row["score"] for row in csv.DictReader(rows)}


def views(course: Path) -> dict[str, dict]:
    """Each place an instructor reads the two hand-ins' grades."""
    grades = read_grades(course)
    _, pushed = assignment_scores(Course.at(course), ASSIGNMENT)
    pushed = {s.student_id: s for s in pushed}
    imported = read_scores(Course.at(course), ASSIGNMENT).students
    export = exported(course)
    return {
        student: {
            "report": {cell: grades[student][cell] for cell in ANSWERS},
            "push": (pushed[student].grading, pushed[student].payload().get("scoreGiven")),
            "import": (imported[student].score, imported[student].pending),
            "export": export[student],
        }
        for student in (UNCHANGED, CHANGED)
    }


def change_answer(course: Path, student: str, cell: str) -> None:
    path = course / "submitted" / student / ASSIGNMENT / NOTEBOOK
    notebook = nbformat.read(path, as_version=4)
    answer = next(
        c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == cell
    )
    answer.source += "\n# and one more thought, added after the grading"
    nbformat.write(notebook, path)


@pytest.fixture(scope="module")
def regraded(cycle, tmp_path_factory):
    """The class graded, its two hand-ins' answers 21-25 graded by hand, then regraded."""
    course = writable_copy(cycle[0], tmp_path_factory.mktemp("hand") / "course")
    for student in (UNCHANGED, CHANGED):
        for cell in ANSWERS:
            grade_by_hand(course, student, cell, 1.5)
    before = views(course)
    change_answer(course, CHANGED, "answer_21")
    with reading_the_five(course) as reads:
        for student in (UNCHANGED, CHANGED):
            outcomes = grade_as_the_product(course, pattern=student, force=True)
            assert [o.status for o in outcomes if o.student_id == student] == ["graded"]
    return course, before, views(course), reads


@contextlib.contextmanager
def reading_the_five(course: Path) -> Iterator[list]:
    """`viewcopy five`'s read of the class, again and again while the block runs: each read's
    question 21, or what it raised."""
    reads, stop, graded = [], threading.Event(), Course.at(course)

    def keep_reading() -> None:
        while not stop.is_set():
            try:
                reads.append(five(graded, questions=[21])[0])
            except Exception as exc:  # noqa: BLE001 (what a read raises is the test's finding)
                reads.append(exc)

    reader = threading.Thread(target=keep_reading)
    reader.start()
    try:
        yield reads
    finally:
        stop.set()
        reader.join()


def test_the_five_read_the_whole_class_all_through_the_regrade(regraded, cycle):
    *_, reads = regraded
    graded = set(graded_notebooks(Course.at(cycle[0]), ASSIGNMENT))
    assert reads and not [r for r in reads if isinstance(r, Exception)], reads
    for question in reads:
        grouped = {s for group in question.groups for s in group.students}
        assert grouped | set(question.skipped) == graded


def test_before_the_regrade_every_hand_grade_reads_as_given(regraded):
    _, before, *_ = regraded
    for student in (UNCHANGED, CHANGED):
        assert before[student]["report"] == dict.fromkeys(ANSWERS, (1.5, 2.0)), student
        assert before[student]["push"][0] == FULLY_GRADED
        assert before[student]["import"][1] == ()


def test_an_unchanged_hand_in_keeps_its_hand_grades_everywhere(regraded):
    _, before, after, _ = regraded
    assert after[UNCHANGED] == before[UNCHANGED]


def test_a_changed_answer_waits_for_its_grader_and_only_it(regraded):
    course, before, after, _ = regraded
    changed = after[CHANGED]
    assert changed["report"] == {**before[CHANGED]["report"], "answer_21": (None, 2.0)}
    assert changed["push"][0] == PENDING_MANUAL
    assert changed["import"][1] == ("answer_21",)
    said = hand_grades(Course(course), ASSIGNMENT, [UNCHANGED, CHANGED]).sentence()
    assert said == (
        "hand grades kept: 9; 1 answer(s) changed since graded by hand, waiting for their "
        f"grader again: {CHANGED} (answer_21)"
    )
