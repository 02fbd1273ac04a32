"""Only a written prediction is a prediction: computed sheets are refused at the lock (in a real
kernel, by IPython's input history) and earn no prediction and no rules-after credit when graded
(the grader reads the answer cell's literal), under `viewcopy grade` and plain `nbgrader autograde`
alike; the same content written out is graded as before; the class report lists computed sheets."""

from __future__ import annotations

import subprocess

import nbformat
import pytest
from nbclient import NotebookClient
from support.sandboxing import grade_as_the_product
from support.the_class import COMPREHENSION, MASTER_CALL, course_of

import viewcopy
from viewcopy.course.assignment import (
    ASSIGNMENT,
    NOTEBOOK,
    grade_id,
    read_grades,
)
from viewcopy.course.handin import written_sheet
from viewcopy.demo.synthetic import (
    predictions_source,
)
from viewcopy.exercise.written import COMPUTED, ComputedSheet
from viewcopy.instructor.master import measured_predictions
from viewcopy.report.build import build_report
from viewcopy.sandbox.unix_sockets import UnixSocketKernelManager

pytestmark = [pytest.mark.course, pytest.mark.sandbox]


def test_the_students_api_offers_no_answer_key():
    from viewcopy import notebook

    assert not hasattr(notebook, "measured_predictions")
    assert not [n for n in dir(viewcopy) if "predictions" in n.lower() and "Error" not in n]


def run(cells: list[str], folder) -> list[nbformat.NotebookNode]:
    """Run the cells in one kernel in `folder` (not a master folder), as a student would."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in cells])
    NotebookClient(
        notebook, timeout=300, kernel_name="python3", allow_errors=True,
        resources={"metadata": {"path": str(folder)}},
        kernel_manager_class=UnixSocketKernelManager,
    ).execute(stderr=subprocess.DEVNULL)  # fmt: skip
    return notebook.cells


def error_of(cell) -> str:
    return "".join(f"{o.ename}: {o.evalue}" for o in cell.outputs if o.output_type == "error")


def test_computed_sheets_are_refused_at_the_lock_and_a_written_one_locks(tmp_path, monkeypatch):
    monkeypatch.delenv("VIEWCOPY_LOCK_SERVICE", raising=False)
    written = predictions_source(measured_predictions())
    lock = "viewcopy.lock(PREDICTIONS)"
    cells = run(
        [
            "import viewcopy",
            MASTER_CALL, lock,
            COMPREHENSION, lock,
            written.replace("PREDICTIONS", "SHEET"), "PREDICTIONS = SHEET", lock,
            written, lock,
            'globals()["PREDICTIONS"] = {**PREDICTIONS, 1: ("copy", "edited by exec")}', lock,
        ],
        tmp_path,
    )  # fmt: skip
    for refused in (2, 4, 7, 11):
        said = error_of(cells[refused])
        assert said.startswith("PredictionError") and COMPUTED in said, (refused, said)
        assert said.count(COMPUTED) == 1
    assert error_of(cells[9]) == "" and (tmp_path / "view_or_copy.lock.json").is_file()
    assert "is not what its answer cell writes out" in error_of(cells[11])


STUDENTS = ("master_call", "comprehension", "perfect")
"""Two computed sheets, and the perfect hand-in: the same sheet written out."""


@pytest.fixture(scope="module")
def course(the_class, plain, tmp_path_factory):
    """The three hand-ins of the session's class graded by `viewcopy grade`, and the session's
    plain `nbgrader autograde` (conftest's `plain`, which holds them)."""
    folder = course_of(the_class, tmp_path_factory.mktemp("written") / "course", STUDENTS)
    grade_as_the_product(folder)
    return folder, plain


def test_computed_sheets_earn_no_prediction_and_no_rules_credit_and_say_why(course):
    folder, _ = course
    grades = read_grades(folder)
    for student in ("master_call", "comprehension"):
        assert grades[student]["score_predictions"][0] == 0, student
        assert grades[student]["check_rules_after"][0] == 0, student
        graded = nbformat.read(folder / "autograded" / student / ASSIGNMENT / NOTEBOOK, 4)
        (cell,) = [c for c in graded.cells if grade_id(c) == "score_predictions"]
        assert COMPUTED in "".join(o.get("text", "") for o in cell.outputs), student
    assert grades["perfect"]["score_predictions"][0] == 5
    assert grades["perfect"]["check_rules_after"][0] == 2


def test_plain_nbgrader_autograde_grades_them_the_same(course):
    folder, plain = course
    ours, theirs = read_grades(folder), read_grades(plain)
    assert set(ours) == set(STUDENTS)
    for student in STUDENTS:
        assert ours[student] == theirs[student], student


def test_the_grader_reads_the_answer_cell_never_the_kernels_value(course):
    folder, _ = course
    notebook = nbformat.read(folder / "submitted" / "master_call" / ASSIGNMENT / NOTEBOOK, 4)
    assert isinstance(written_sheet(notebook), ComputedSheet)
    notebook = nbformat.read(folder / "submitted" / "perfect" / ASSIGNMENT / NOTEBOOK, 4)
    assert written_sheet(notebook) == measured_predictions()


def test_the_class_report_lists_computed_sheets(course):
    folder, _ = course
    problems = dict(build_report(folder).problems)
    for student in ("master_call", "comprehension"):
        assert (
            "computed, not written out" in problems[student]
            or "is not `PREDICTIONS" in (problems[student])
        ), problems[student]
    assert "perfect" not in problems
