"""What grades nothing is not measured again: the master's cells that measure for the student and
carry no points (`course.assignment.MEASURING_CELLS`) keep the student's own outputs in the graded
notebook and the feedback; every other cell, each graded one included, runs again; a course that
sets `KeepStudentMeasurements.enabled = False` measures them again; and nothing a hand-in puts in
or around those cells changes its score (viewcopy.plugins.KeepStudentMeasurements)."""

from __future__ import annotations

import copy
import shutil
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest
from support.course_notebook import ROOT
from support.sandboxing import grade_as_the_product
from support.the_class import course_of

from viewcopy.course.assignment import (
    ASSIGNMENT,
    MEASURING_CELLS,
    NOTEBOOK,
    enrol,
    grade_id,
    read_grades,
    run_nbgrader,
)
from viewcopy.course.folder import Course
from viewcopy.grading.grade import GRADED
from viewcopy.plugins.student_measurements import NOT_RUN, binds_nothing

MARKED, HOSTILE, UNRUN = "marked", "hostile_measuring", "unrun_measuring"
"""The perfect hand-in with a mark in every code cell's outputs; the typical one attacking
through the measuring cells; the perfect one with the measuring cells' outputs cleared."""
RAN = "this code was the student's"
REMEASURE = "\nc.KeepStudentMeasurements.enabled = False\n"


def mark(name: str) -> str:
    """An output only the student's own run of cell `name` could hold."""
    return f"measured on the student's own machine, in {name}\n"


def test_the_masters_measuring_cells_are_read_only_ungraded_and_bind_nothing():
    master = nbformat.read(ROOT / "source" / ASSIGNMENT / NOTEBOOK, 4)
    for name in MEASURING_CELLS:
        (cell,) = [c for c in master.cells if grade_id(c) == name]
        meta = cell.metadata.nbgrader
        assert cell.cell_type == "code" and meta["locked"], name
        assert not meta.get("grade") and not meta.get("solution"), name
        assert binds_nothing(cell.source), (name, cell.source)
    assert not binds_nothing("x = lab.what_did_you_pay()")
    assert not binds_nothing("(y := explorer())")
    assert not binds_nothing("import torch")


def stream(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_output("stream", name="stdout", text=text)


def derive(course: Path, base: str, student_id: str, edit: Callable) -> None:
    """A hand-in made from `base`'s, its notebook edited (no kernel runs), enrolled."""
    folder = Course.at(course).hand_in(student_id, ASSIGNMENT)
    shutil.copytree(Course.at(course).hand_in(base, ASSIGNMENT), folder)
    notebook = nbformat.read(folder / NOTEBOOK, 4)
    edit(notebook)
    nbformat.write(notebook, folder / NOTEBOOK)
    enrol(course, {student_id: student_id})


def marked(notebook) -> None:
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs.append(stream(mark(grade_id(cell) or "an unnamed cell")))


def unrun(notebook) -> None:
    for cell in notebook.cells:
        if grade_id(cell) in MEASURING_CELLS:
            cell.outputs, cell.execution_count = [], None


def hostile(perfect: nbformat.NotebookNode) -> Callable:
    """The attacks a skipped cell invites, on a hand-in that loses points: the cost cell keeps
    the master's code but carries the perfect neighbour's graded outputs (a credit and its
    record); the explorer holds the student's code; the hidden classify test is relabelled as
    the production profile (the real one deleted), carrying the perfect neighbour's outputs."""
    theirs = {grade_id(c): c for c in perfect.cells}

    def edit(notebook) -> None:
        cells = {grade_id(c): c for c in notebook.cells}
        forged = [*theirs["score_predictions"].outputs, stream("Credit: 5/5\n")]
        cells["what_did_you_pay"].outputs = copy.deepcopy(forged)
        cells["explorer"].source = f"print({RAN!r})\nexplorer()"
        notebook.cells.remove(cells["profile_production"])
        hidden = cells["test_classify_hidden"]
        hidden.metadata.nbgrader.update(grade_id="profile_production", grade=False, locked=True)
        hidden.metadata.nbgrader.pop("points", None)
        hidden.outputs = copy.deepcopy(theirs["test_classify_hidden"].outputs)

    return edit


def graded_notebook(course: Path, student_id: str) -> nbformat.NotebookNode:
    return nbformat.read(course / "autograded" / student_id / ASSIGNMENT / NOTEBOOK, 4)


def feedback(course: Path, student_id: str) -> str:
    run_nbgrader(course, "generate_feedback", ASSIGNMENT, "--force", "--student", student_id)
    return (course / "feedback" / student_id / ASSIGNMENT / "view_or_copy.html").read_text()


def text(cell) -> str:
    return "".join(
        o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in cell.outputs
    )


@pytest.fixture(scope="module")
def courses(the_class, tmp_path_factory):
    """The class's perfect and typical hand-ins and the two made from them, graded as the course
    is configured; and the marked one graded where the course asks to re-measure."""
    root = tmp_path_factory.mktemp("measurements")
    kept = course_of(the_class, root / "kept", ["perfect", "typical"])
    perfect = nbformat.read(Course.at(kept).hand_in("perfect", ASSIGNMENT) / NOTEBOOK, 4)
    derive(kept, "perfect", MARKED, marked)
    derive(kept, "typical", HOSTILE, hostile(perfect))
    derive(kept, "perfect", UNRUN, unrun)
    remeasured = course_of(the_class, root / "remeasured", ["perfect"])
    derive(remeasured, "perfect", MARKED, marked)
    with (remeasured / "nbgrader_config.py").open("a") as config:
        config.write(REMEASURE)
    for course, pattern in ((kept, "*"), (remeasured, MARKED)):
        outcomes = grade_as_the_product(course, pattern=pattern)
        assert all(o.status == GRADED for o in outcomes), outcomes
    return kept, remeasured


@pytest.mark.course
def test_a_graded_hand_in_keeps_the_students_own_measurements_and_feedback_shows_them(courses):
    kept, _ = courses
    handed_in = nbformat.read(Course.at(kept).hand_in(MARKED, ASSIGNMENT) / NOTEBOOK, 4)
    theirs = {grade_id(c): c for c in handed_in.cells}
    graded = {grade_id(c): c for c in graded_notebook(kept, MARKED).cells}
    for name in MEASURING_CELLS:
        assert mark(name) in text(graded[name]), name
        assert text(graded[name]) == text(theirs[name]), name  # the student's, as they were
        assert graded[name].execution_count == theirs[name].execution_count
    page = feedback(kept, MARKED)
    assert all(mark(name).strip() in page for name in MEASURING_CELLS)


@pytest.mark.course
def test_a_measuring_cell_the_hand_in_never_ran_is_not_measured_and_says_so(courses):
    kept, _ = courses
    graded = {grade_id(c): c for c in graded_notebook(kept, UNRUN).cells}
    for name in MEASURING_CELLS:
        assert graded[name].outputs == [stream(NOT_RUN)], name
        assert graded[name].execution_count is None, name
    assert NOT_RUN.strip() in feedback(kept, UNRUN)
    grades = read_grades(kept)
    assert grades[UNRUN] == grades["perfect"]


@pytest.mark.course
def test_every_other_cell_runs_again_and_every_graded_cell_is_recomputed(courses):
    kept, _ = courses
    graded = graded_notebook(kept, MARKED)
    again = [
        c for c in graded.cells if c.cell_type == "code" and grade_id(c) not in MEASURING_CELLS
    ]
    assert len(again) > 30
    for cell in again:
        assert "measured on the student's own machine" not in text(cell), grade_id(cell)
    scored = [c for c in again if c.metadata.get("nbgrader", {}).get("grade")]
    assert all(c.outputs for c in scored if not c.metadata.nbgrader.get("solution"))
    grades = read_grades(kept)
    assert grades[MARKED] == grades["perfect"]


@pytest.mark.course
def test_a_course_that_asks_to_re_measure_measures_every_cell_again(courses):
    kept, remeasured = courses
    graded = {grade_id(c): c for c in graded_notebook(remeasured, MARKED).cells}
    for name in MEASURING_CELLS:
        assert graded[name].outputs and "own machine" not in text(graded[name]), name
    assert "own machine" not in feedback(remeasured, MARKED)
    assert read_grades(remeasured)[MARKED] == read_grades(kept)[MARKED]


@pytest.mark.course
def test_nothing_a_hand_in_puts_in_the_measuring_cells_changes_its_score(courses):
    kept, _ = courses
    grades = read_grades(kept)
    assert grades[HOSTILE] == grades["typical"]
    assert (
        grades["typical"]["test_classify_hidden"][0] < grades["perfect"]["test_classify_hidden"][0]
    )
    master = nbformat.read(ROOT / "source" / ASSIGNMENT / NOTEBOOK, 4)
    sources = {grade_id(c): c.source for c in master.cells}
    graded = graded_notebook(kept, HOSTILE)
    cells = {grade_id(c): c for c in graded.cells}
    # kept: the master's code, the student's outputs, forged credit and all, worth nothing
    assert "Credit: 5/5" in text(cells["what_did_you_pay"])
    # the student's code in a measuring cell never runs: the master's runs in its place
    assert cells["explorer"].source == sources["explorer"]
    assert cells["explorer"].outputs and RAN not in text(cells["explorer"])
    # a graded cell relabelled as a measuring one runs the master's code, the graded cell is
    # put back and recomputed
    relabelled = [c for c in graded.cells if grade_id(c) == "profile_production"]
    assert [c.source for c in relabelled] == [sources["profile_production"]]
    assert "Credit" not in text(relabelled[0])
    restored = cells["test_classify_hidden"]
    assert restored.metadata.nbgrader["grade"] and restored.outputs
