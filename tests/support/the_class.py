"""The session's synthetic class: every student a course test needs, handed in once in one course
(a kernel per notebook, one per core), never graded there. Tests grade copies of it: the cycle
(the synthetic and tampered profiles through `viewcopy grade`, feedback and export), a module's
own students under its own policy, and the plain `nbgrader autograde` that every comparison reads.

conftest.py's session fixtures `the_class`, `cycle` and `plain` build each once per pytest session.
"""

from __future__ import annotations

import ast
import shutil
import sys
import uuid
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import nbformat
import pytest
from support.course_notebook import RELEASE_0_1_0, RELEASE_0_1_0_70CF16B, ROOT
from support.oracles import exec_cell

from viewcopy.course.assignment import ASSIGNMENT, NbgraderFailed, enrol, grade_id, run_nbgrader
from viewcopy.course.folder import Course, build_course
from viewcopy.demo.cycle import StudentGrades, grade_cycle
from viewcopy.demo.synthetic import (
    Student,
    hand_in_class,
    predictions_source,
    synthetic_class,
)
from viewcopy.exercise import catalogue
from viewcopy.sandbox.bubblewrap import bwrap_problem

MASTER_CALL = (
    "from viewcopy.instructor.master import measured_predictions\n"
    "PREDICTIONS = measured_predictions()\n"
)
COMPREHENSION = """import torch
x = torch.arange(24, dtype=torch.float32).reshape(4, 6)
PREDICTIONS = {
    op.item: (
        "view" if eval(op.expr, {"torch": torch, "x": x}).untyped_storage() is x.untyped_storage()
        or eval(op.expr, {"torch": torch, "x": x}).untyped_storage().data_ptr()
        == x.untyped_storage().data_ptr() else "copy",
        "storage measured by running it",
    )
    for op in viewcopy.OPS
}
"""
"""Two sheets computed, not written out: the master's call, a comprehension that runs the ops."""

EXITS_KERNEL = {"classify": "import os\nos._exit(0)\n"}
"""The cell that kills a hand-in's kernel (the hostile corpus's `exits_kernel`)."""

COMPARED = (
    "rule_learner", "memoriser", "perfect", "typical", "never_locked",
    "master_call", "comprehension", "exits_kernel",
)  # fmt: skip
"""The hand-ins plain `nbgrader autograde` grades once for every comparison with `viewcopy grade`
(none of them attacks anything: plain nbgrader runs them with the instructor's rights)."""


def constant(verdict: str) -> dict:
    """A sheet that answers `verdict` to all twenty."""
    return {i: (verdict, "slicing and views keep the storage") for i in catalogue.ITEMS}


def constant_sheets(perfect: Student) -> list[Student]:
    """A sheet of all views and one of all copies, otherwise perfect hand-ins (the base rate)."""
    return [
        Student(
            f"all_{verdict}",
            f"all_{verdict}",
            {**perfect.cells, "predictions": predictions_source(constant(verdict))},
            classifier=perfect.classifier,
        )
        for verdict in ("view", "copy")
    ]


def computed_sheets(perfect: Student) -> list[Student]:
    """Hand-ins whose PREDICTIONS cell computes the sheet; otherwise perfect."""
    return [
        Student("master_call", "the master's call", {**perfect.cells, "predictions": MASTER_CALL}),
        Student("comprehension", "runs it", {**perfect.cells, "predictions": COMPREHENSION}),
    ]


def exits_kernel(perfect: Student) -> Student:
    """A perfect hand-in whose classify cell ends its kernel (never run when handed in)."""
    return Student("exits_kernel", "calls os._exit", {**perfect.cells, **EXITS_KERNEL}, runs=False)


def by_id(notebook) -> dict[str, int]:
    return {grade_id(c): i for i, c in enumerate(notebook.cells)}


def delete_cells(*grade_ids):
    def tamper(notebook):
        notebook.cells = [c for c in notebook.cells if grade_id(c) not in grade_ids]

    return tamper


def duplicate_cell(grade_id):
    def tamper(notebook):
        index = by_id(notebook)[grade_id]
        copy = nbformat.from_dict(notebook.cells[index])
        copy.id = uuid.uuid4().hex[:8]
        notebook.cells.insert(index + 1, copy)

    return tamper


def colab_round_trip(notebook):
    """What saving in Colab does: its metadata, its cell ids, a kernelspec without a language."""
    notebook.metadata = nbformat.from_dict(
        {
            "colab": {"provenance": [], "name": "view_or_copy.ipynb", "gpuType": "T4"},
            "kernelspec": {"name": "python3", "display_name": "Python 3"},
            "language_info": {"name": "python"},
            "accelerator": "GPU",
        }
    )
    for cell in notebook.cells:
        cell.metadata.pop("editable", None)
        cell.metadata.pop("deletable", None)
        cell.id = uuid.uuid4().hex[:12]
        cell.metadata["id"] = cell.id
        if cell.cell_type == "code":
            cell.metadata["colab"] = {"base_uri": "https://localhost:8080/"}
            cell.metadata["outputId"] = uuid.uuid4().hex


def tampered_class(base: dict[str, Student]) -> list[Student]:
    fifteen, perfect, data_ptr = base["fifteen"], base["perfect"], base["data_ptr"]
    fake_credit = {"score_predictions": 'print("Credit: 5/5")\n5.0', "test_classify_visible": "3"}
    return [
        Student(
            "edited_readonly",
            "15/20, then rewrote two test cells to print full credit",
            fifteen.cells,
            edits_after_run=fake_credit,
            wrong_items=fifteen.wrong_items,
            classifier=fifteen.classifier,
        ),
        Student(
            "deleted_tests",
            "data_ptr classify; deleted three test cells",
            data_ptr.cells,
            classifier="data_ptr",
            tamper=delete_cells(
                "score_predictions", "test_classify_visible", "test_classify_hidden"
            ),
        ),
        Student(
            "duplicated_cell",
            "all right; duplicated a test cell",
            perfect.cells,
            classifier="storage",
            tamper=duplicate_cell("score_predictions"),
        ),
        Student(
            "colab_saved",
            "all right; saved by Colab",
            perfect.cells,
            classifier="storage",
            tamper=colab_round_trip,
        ),
        Student(
            "release_0_1_0",
            "all right, in the notebook of the 0.1.0 release",
            perfect.cells,
            classifier="storage",
            release=RELEASE_0_1_0,
        ),
        Student(
            "deleted_classify",
            "all right; deleted classify and the hidden test cell",
            perfect.cells,
            classifier=None,
            tamper=delete_cells("classify", "test_classify_hidden"),
        ),
    ]


FROZEN = {"release_0_1_0_70cf16b": RELEASE_0_1_0_70CF16B / "hand_in"}
"""Hand-ins an earlier release made, lock file and all: copied into the class as they are."""
NON_ASCII = " — même stockage"


def frozen_hand_ins(perfect: Student) -> list[Student]:
    """What each FROZEN hand-in holds (it is never run here): the perfect student of
    0.1.0+70cf16b with NON_ASCII after every rule of PREDICTIONS and NEXT_PREDICTIONS, so the
    fingerprints its lock file holds cover text that JSON encoders may escape or not."""
    twenty = exec_cell(perfect.cells["predictions"], "PREDICTIONS")
    written = {item: (verdict, rule + NON_ASCII) for item, (verdict, rule) in twenty.items()}
    return [
        replace(
            perfect,
            student_id="release_0_1_0_70cf16b",
            profile="all right, handed in with the release 0.1.0+70cf16b, lock file and all",
            cells={**perfect.cells, "predictions": predictions_source(written)},
            release=RELEASE_0_1_0_70CF16B,
        )
    ]


def synthetic_student(student_id: str) -> Student:
    """The student of the synthetic class (viewcopy.demo.synthetic) with this id."""
    return next(s for s in synthetic_class(ROOT) if s.student_id == student_id)


def profiles() -> list[Student]:
    """The synthetic class, the tampered hand-ins and the frozen ones: the cycle's students."""
    base = {s.student_id: s for s in synthetic_class(ROOT)}
    return [*base.values(), *tampered_class(base), *frozen_hand_ins(base["perfect"])]


def everyone() -> dict[str, Student]:
    """Every student of the class, by id."""
    cycle = profiles()
    perfect = next(s for s in cycle if s.student_id == "perfect")
    extra = [*computed_sheets(perfect), *constant_sheets(perfect), exits_kernel(perfect)]
    return {s.student_id: s for s in [*cycle, *extra]}


def hand_in_the_class(course: Path) -> Path:
    """The course, its release generated, every student's hand-in in submitted/; nobody enrolled
    and nothing graded (a copy enrols its own students)."""
    build_course(ROOT, course, {})
    said: list[str] = []
    hand_in_class(
        [s for s in everyone().values() if s.student_id not in FROZEN], course, say=said.append
    )
    if sys.platform.startswith("linux"):  # run as the demo runs them: every kernel forked warm
        assert any(", 0 started fresh" in line for line in said), said
    for student_id, hand_in in FROZEN.items():
        shutil.copytree(hand_in, Course.at(course).hand_in(student_id, ASSIGNMENT))
    return course


def course_of(the_class: Path, to: Path, student_ids: Iterable[str]) -> Path:
    """A course holding only these students' hand-ins, copied from the class, them enrolled."""
    ids, submitted = set(student_ids), the_class / "submitted"

    def ignore(folder: str, names: list[str]) -> set[str]:
        return {n for n in names if n not in ids} if Path(folder) == submitted else set()

    shutil.copytree(the_class, to, ignore=ignore)
    students = everyone()
    enrol(to, {s: students[s].profile for s in ids})
    return to


def graded_course(the_class: Path, course: Path) -> tuple[Path, dict[str, StudentGrades]]:
    """The cycle on the class's profiles, in a copy: results by student."""
    students = profiles()
    course_of(the_class, course, [s.student_id for s in students])
    said: list[str] = []
    results = grade_cycle(course, students, say=said.append, progress=False)
    if bwrap_problem() is None:  # graded as the product grades: every kernel forked warm
        assert any(", 0 started fresh" in line for line in said), said
    return course, {r.student.student_id: r for r in results}


def plain_course(the_class: Path, course: Path) -> Path:
    """Plain `nbgrader autograde` of the COMPARED hand-ins, in a copy (nbgrader fails the run
    for the dead kernel, and grades the others)."""
    course_of(the_class, course, COMPARED)
    with pytest.raises(NbgraderFailed, match="autograde"):
        run_nbgrader(course, "autograde", ASSIGNMENT, "--force")
    return course


def predicted_before_looking(student: Student) -> dict[int, str] | None:
    """The verdicts the profile wrote before its notebook ran (the lock's), or without a run."""
    if not student.cells:
        return None
    source = student.cells["predictions"]
    if not student.runs:
        source = student.edits_after_run.get("predictions", source)
    literal = ast.literal_eval(source.split("=", 1)[1])
    return {item: verdict for item, (verdict, _) in literal.items()}
