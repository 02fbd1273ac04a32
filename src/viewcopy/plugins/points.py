"""A graded cell's points are written once, in the master's nbgrader metadata (`points`, what
formgrader and the gradebook use); `WritePoints` writes them, at `nbgrader generate_assignment`,
into the code that shows them in the student's kernel.

A check cell shows its credit (`viewcopy.checks.prediction_credit(PREDICTIONS, points=5)`: "Credit:
5/5") and the opening cell shows the parts table (`lab.parts()`). An instructor who gives the
predictions 10 points in the metadata got a release whose cell still said 5/5, a table that still
said 36, and a grader that said "gives 10/10, not what this notebook reported (5.0)". Now each
check call's `points=` is the metadata's, and where the master's points differ from the shipped
master's at all, the opening cell passes them: `lab.parts(points={...})`. The course's
declaration (`c.CourseDeclaration` in its nbgrader_config.py: its own parts, its own next ops)
reaches the student's kernel the same way, `lab.parts(declared=[...], next_ops=[...])`, where it
differs from the shipped one. A master with the shipped points and a course that declares nothing
are released byte for byte as before.
"""

from __future__ import annotations

import json
import pprint

from viewcopy.course.assignment import graded_points
from viewcopy.course.check import declaration_problems, master_problems, points_arguments
from viewcopy.course.settings import CourseSettings, course_settings
from viewcopy.exercise.graded_parts import GRADED_PARTS, shipped_points
from viewcopy.plugins.base import CoursePreprocessor

PARTS_CELL = "parts"
"""The grade id of the cell that shows the graded parts (`lab.parts()`)."""


def number(points: float) -> str:
    """Points as code writes them: 10, 2.5."""
    return f"{float(points):g}"


def with_points(source: str, points: float) -> str:
    """`source` with every check call's `points=` keyword set to `points` (nothing else moved)."""
    lines = source.splitlines(keepends=True)
    values = sorted(points_arguments(source), key=lambda v: (v.lineno, v.col_offset))
    for value in reversed(values):  # the last first: earlier offsets stay true
        if value.lineno != value.end_lineno:
            continue  # a computed value over several lines: left as the master wrote it
        row = lines[value.lineno - 1].encode("utf-8")
        start, end = value.col_offset, value.end_col_offset
        lines[value.lineno - 1] = (row[:start] + number(points).encode() + row[end:]).decode()
    return "".join(lines)


def parts_call(points: dict[str, float], settings: CourseSettings | None = None) -> str:
    """The opening cell's call: `lab.parts()` for the shipped master's points and a course that
    declares nothing of its own, else what differs passed (points one cell a line, the course's
    parts and next ops as it declares them)."""
    arguments = []
    if points != shipped_points():
        rows = "".join(f"    {json.dumps(name)}: {number(p)},\n" for name, p in points.items())
        arguments.append("points={\n" + rows + "}")
    if settings is not None and settings.parts != GRADED_PARTS:
        arguments.append("declared=" + literal([part.declaration() for part in settings.parts]))
    if settings is not None and settings.next_ops:
        own = [{"op": o.op, "family": o.family, "parent": o.parent} for o in settings.next_ops]
        arguments.append("next_ops=" + literal(own))
    return f"lab.parts({', '.join(arguments)})"


def literal(value: object) -> str:
    """`value` as Python source, one entry a line."""
    return pprint.pformat(value, width=98, sort_dicts=False)


class WritePoints(CoursePreprocessor):
    """At generate_assignment: the master and the course's declaration checked
    (`course.check.master_problems`, `declaration_problems`: a release refused, each problem
    named), then each check call's `points=` and the opening cell's parts
    call written from its metadata (before the checksums, so the release is what nbgrader keeps
    of each locked cell)."""

    def preprocess(self, nb, resources):
        points = graded_points(nb)
        settings = course_settings(self.config)
        problems = master_problems(nb) + declaration_problems(settings, points, "the course")
        if problems:
            raise ValueError("the master cannot be released: " + "; ".join(map(str, problems)))
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id == PARTS_CELL:
                cell.source = parts_call(points, settings)
            elif grade_id in points:
                cell.source = with_points(cell.source, points[grade_id])
        return nb, resources
