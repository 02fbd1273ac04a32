"""A graded cell's points are written once, in the master's nbgrader metadata (`points`, what
formgrader and the gradebook use); `WritePoints` writes them, at `nbgrader generate_assignment`,
into the code that shows them in the student's kernel.

A check cell shows its credit (`viewcopy.checks.prediction_credit(PREDICTIONS, points=5)`: "Credit:
5/5") and the opening cell shows the parts table (`lab.parts()`). An instructor who gives the
predictions 10 points in the metadata got a release whose cell still said 5/5, a table that still
said 36, and a grader that said "gives 10/10, not what this notebook reported (5.0)". Now each
check call's `points=` is the metadata's, and where the master's points differ from the shipped
master's at all, the opening cell passes them: `lab.parts(points={...})`. A master with the
shipped points is released byte for byte as before.
"""

from __future__ import annotations

import json

from viewcopy.course.assignment import graded_points
from viewcopy.course.check import master_problems, points_arguments
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


def parts_call(points: dict[str, float]) -> str:
    """The opening cell's call: `lab.parts()` for the shipped master's points, else the master's
    points passed, one cell a line."""
    from viewcopy.notebook.parts_table import shipped_points  # pandas: not when the config loads

    if points == shipped_points():
        return "lab.parts()"
    rows = "".join(f"    {json.dumps(name)}: {number(p)},\n" for name, p in points.items())
    return "lab.parts(points={\n" + rows + "})"


class WritePoints(CoursePreprocessor):
    """At generate_assignment: the master checked (`course.check.master_problems`: a release
    refused, each problem named), then each check call's `points=` and the opening cell's parts
    call written from its metadata (before the checksums, so the release is what nbgrader keeps
    of each locked cell)."""

    def preprocess(self, nb, resources):
        if problems := master_problems(nb):
            raise ValueError("the master cannot be released: " + "; ".join(map(str, problems)))
        points = graded_points(nb)
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id == PARTS_CELL:
                cell.source = parts_call(points)
            elif grade_id in points:
                cell.source = with_points(cell.source, points[grade_id])
        return nb, resources
