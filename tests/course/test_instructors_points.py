"""An instructor changes a graded cell's points in the master (nbgrader metadata, as formgrader
and `nbformat` write them) and regenerates: the release's check cell shows the new points, the
grader agrees with what the student's notebook reported, and the opening table, the feedback and
the gradebook give one total."""

from __future__ import annotations

import re

import nbformat
import pytest
from support.sandboxing import grade_as_the_product
from support.the_class import course_of

from viewcopy.course.assignment import (
    ASSIGNMENT,
    NOTEBOOK,
    grade_id,
    read_grades,
    run_nbgrader,
)
from viewcopy.display.parts_table import parts_frame
from viewcopy.grading.grade import GRADED
from viewcopy.plugins.points import graded_points

pytestmark = pytest.mark.course

STUDENT = "perfect"


def test_a_point_changed_in_the_master_is_one_total_everywhere(the_class, tmp_path):
    course = course_of(the_class, tmp_path / "course", [STUDENT])
    master = course / "source" / ASSIGNMENT / NOTEBOOK
    notebook = nbformat.read(master, 4)
    for cell in notebook.cells:
        if grade_id(cell) == "score_predictions":
            cell.metadata.nbgrader["points"] = 10
    nbformat.write(notebook, master)
    run_nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    points = graded_points(nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, 4))
    assert points["score_predictions"] == 10 and sum(points.values()) == 41

    (outcome,) = grade_as_the_product(course)
    assert outcome.status == GRADED, outcome.reason
    graded = nbformat.read(course / "autograded" / STUDENT / ASSIGNMENT / NOTEBOOK, 4)
    cell = next(c for c in graded.cells if grade_id(c) == "score_predictions")
    said = "".join(o.get("text", "") for o in cell.outputs)
    assert "Credit: 10/10" in said and "grader's own measurement" not in said, said
    cells = read_grades(course)[STUDENT]
    assert (
        sum(top for _, top in cells.values())
        == 41
        == parts_frame(points=points).loc["total", "points"]
    )

    run_nbgrader(course, "generate_feedback", ASSIGNMENT, "--force")
    page = (course / "feedback" / STUDENT / ASSIGNMENT / "view_or_copy.html").read_text()
    (total,) = set(re.findall(r"Score: [0-9.]+ / ([0-9.]+)", page)[:1])
    assert float(total) == 41
