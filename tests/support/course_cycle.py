"""The graded course that end-to-end tests share: the synthetic class plus tampered hand-ins,
through a whole nbgrader cycle (slow: a kernel per notebook, twice per student).

conftest.py's session fixture `cycle` runs it once per pytest session.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import nbformat
from support.course_notebook import RELEASE_0_1_0, ROOT

from viewcopy.course.assignment import grade_id
from viewcopy.instructor.demo import StudentGrades, run_cycle
from viewcopy.instructor.synthetic import Student, synthetic_class


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


def graded_course(course: Path) -> tuple[Path, dict[str, StudentGrades]]:
    """Run the cycle in `course` on the synthetic and tampered students; results by student."""
    base = {s.student_id: s for s in synthetic_class(ROOT)}
    students = [*base.values(), *tampered_class(base)]
    results = run_cycle(ROOT, course, students, say=lambda _: None)
    return course, {r.student.student_id: r for r in results}
