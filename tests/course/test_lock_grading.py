"""Grading a course that runs the lock service: the deletion cheat earns no prediction credit and
the class report names it, a notebook handed in without its lock file keeps its lock, a lock the
service never saw counts but is flagged, and `viewcopy grade` and plain `nbgrader autograde`
agree. Students run their notebooks against a real service process on 127.0.0.1."""

from __future__ import annotations

import shutil
from dataclasses import replace

import nbformat
import pytest
from support.course_notebook import ROOT
from support.sandboxing import grade_as_the_product
from support.servers import start_service, stop
from support.the_class import synthetic_student

from viewcopy.course.assignment import ASSIGNMENT, NOTEBOOK, grade_id, read_grades, run_nbgrader
from viewcopy.course.folder import Course, build_course
from viewcopy.course.handin import LOCKED_NOT_VERIFIED, LOCKED_VERIFIED
from viewcopy.demo.synthetic import Student, hand_in_class, predictions_source
from viewcopy.exercise.predictions import TWENTY, parse_predictions
from viewcopy.grading.grade import GRADED
from viewcopy.instructor.master import measured_predictions
from viewcopy.locking.canonical import fingerprint
from viewcopy.locking.client import LockServiceClient, ServiceRefused
from viewcopy.locking.flow import write_lock
from viewcopy.locking.record import LOCK_FILE, stored
from viewcopy.locking.service import issue_token
from viewcopy.report.build import build_report
from viewcopy.report.numbers import REFUSED

pytestmark = [pytest.mark.course, pytest.mark.sandbox, pytest.mark.service]

LIMIT_S = 300


def peeked() -> dict:
    """Every prediction right, item 1 flipped: what a student copies from the reveal."""
    right = measured_predictions()
    wrong = {"view": "copy", "copy": "view"}[right[1][0]]
    return {**right, 1: (wrong, "slicing shares the storage")}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("locked")
    data, course = root / "locks", root / "course"
    process, url = start_service(data)
    perfect = synthetic_student("perfect")
    cheat_sheet = peeked()
    students = {
        "honest": Student("honest", "locks with the service", perfect.cells),
        "cheat": Student(
            "cheat",
            "revealed, deleted the lock, re-locked what the reveal showed",
            {**perfect.cells, "predictions": predictions_source(measured_predictions())},
            edits_after_run={"predictions": predictions_source(cheat_sheet)},
        ),
        "colab": Student("colab", "hands in the notebook alone", perfect.cells),
        "offline": Student("offline", "never reached the service", perfect.cells),
    }

    def served(student: Student) -> Student:
        """The student with the course's service in their kernel (not `offline`), and a token."""
        service = "" if student.student_id == "offline" else url
        token = issue_token(data, student.student_id)
        kernel = {"VIEWCOPY_LOCK_SERVICE": service, "VIEWCOPY_LOCK_TOKEN": token}
        return replace(student, environment=kernel)

    with pytest.MonkeyPatch.context() as env:
        env.setenv("VIEWCOPY_LOCK_DATA", str(data))
        env.delenv("VIEWCOPY_LOCK_SERVICE", raising=False)  # grading reaches no service
        build_course(ROOT, course, {s: s for s in students})
        hand_in_class([served(s) for s in students.values()], course)
        cheat = Course.at(course).hand_in("cheat", ASSIGNMENT)
        (cheat / LOCK_FILE).unlink()
        with pytest.raises(ServiceRefused, match="revealed"):
            LockServiceClient(url, issue_token(data, "cheat")).lock(
                ASSIGNMENT, fingerprint(stored(parse_predictions(cheat_sheet)))
            )
        write_lock(TWENTY, parse_predictions(cheat_sheet), cheat)  # the lock cell, with no service
        (Course.at(course).hand_in("colab", ASSIGNMENT) / LOCK_FILE).unlink()
        plain = root / "plain"
        shutil.copytree(course, plain)
        outcomes = grade_as_the_product(course, limit_s=LIMIT_S)
        run_nbgrader(plain, "autograde", ASSIGNMENT, "--force")
        report = build_report(course)
    stop(process)
    return course, plain, {o.student_id: o for o in outcomes}, report


def test_every_hand_in_is_graded(course):
    _, _, outcomes, _ = course
    assert {s: o.status for s, o in outcomes.items()} == dict.fromkeys(
        ("cheat", "colab", "honest", "offline"), GRADED
    )


def test_the_deletion_cheat_earns_no_prediction_credit(course):
    folder, _, _, _ = course
    grades = read_grades(folder)
    assert grades["cheat"]["score_predictions"][0] == 0
    graded = nbformat.read(folder / "autograded" / "cheat" / ASSIGNMENT / NOTEBOOK, as_version=4)
    (cell,) = [c for c in graded.cells if grade_id(c) == "score_predictions"]
    said = "".join(o.get("text", "") for o in cell.outputs)
    assert "Changed after the lock" in said and "revealed at" in said  # with both times
    for student in ("honest", "colab", "offline"):
        assert grades[student]["score_predictions"][0] == 5, student


def test_a_notebook_handed_in_alone_keeps_its_lock_and_it_is_verified(course):
    _, _, _, report = course
    lines = {s.student: s for s in report.students}
    assert lines["colab"].lock == LOCKED_VERIFIED and lines["honest"].lock == LOCKED_VERIFIED
    assert lines["offline"].lock == LOCKED_NOT_VERIFIED


def test_the_class_report_names_the_cheat(course):
    _, _, _, report = course
    lines = {s.student: s for s in report.students}
    assert lines["cheat"].lock == "changed after lock" and lines["cheat"].credited == 0
    assert report.lock_counts[REFUSED] == 1
    assert any("lock again after the reveal" in p for s, p in report.problems if s == "cheat")
    assert report.lock_counts[LOCKED_VERIFIED] == 2 and report.lock_counts[LOCKED_NOT_VERIFIED] == 1


def test_viewcopy_grade_and_plain_nbgrader_autograde_agree(course):
    folder, plain, _, _ = course
    assert read_grades(folder) == read_grades(plain)
