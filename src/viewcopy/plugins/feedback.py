"""Feedback preprocessors for nbgrader: hidden tests never reach students, tracebacks included,
widgets show their static copy, and the opening table of graded parts shows the student's scores.

nbgrader's feedback HTML keeps the autograded notebook's test cells whole (hidden tests restored)
and a failing cell's traceback quotes its source. `HideHiddenTests` removes the hidden region and
cuts every error in such a cell down to its one-line `Error: message`.
"""

from __future__ import annotations

from nbgrader.preprocessors import ClearHiddenTests

from viewcopy.plugins.base import CoursePreprocessor, run_gradebook
from viewcopy.plugins.points import PARTS_CELL, graded_points

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


class HideHiddenTests(ClearHiddenTests, CoursePreprocessor):
    """ClearHiddenTests, plus tracebacks of cells that held hidden tests reduced to one line."""

    def preprocess_cell(self, cell, resources, cell_index):
        had_hidden = self.begin_test_delimeter in cell.source
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        if had_hidden and cell.cell_type == "code":
            for output in cell.outputs:
                if output.output_type == "error":
                    output.traceback = [f"{output.ename}: {output.evalue}"]
        return cell, resources


class StaticWidgets(CoursePreprocessor):
    """Keep the static HTML copy of a widget output: feedback pages have no live widgets.

    nbgrader's feedback HTML drops widget state, so a widget view renders as an empty placeholder
    (and its loader fails without jQuery); the explorer also carries its diagram as text/html.
    """

    def preprocess_cell(self, cell, resources, cell_index):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW in data and "text/html" in data:
                del data[WIDGET_VIEW]
        return cell, resources


class PartsWithScores(CoursePreprocessor):
    """The opening table of graded parts, with what this hand-in earned in each: the course's
    parts (its declaration), the master's points (the cells' metadata), the gradebook's scores,
    a cell still to be graded by hand counted as pending (without a gradebook, the scores
    `GetGrades` put in the cells' metadata)."""

    def preprocess(self, nb, resources):
        from nbformat.v4 import new_output

        from viewcopy.course.settings import course_settings
        from viewcopy.display.parts_table import parts_frame
        from viewcopy.display.table import html_table

        scores = _scores(nb, resources.get("nbgrader", {}), self.config)
        frame = parts_frame(scores, graded_points(nb), course_settings(self.config).parts)
        for cell in nb.cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") == PARTS_CELL:
                cell.outputs = [
                    new_output(
                        "display_data",
                        {"text/html": html_table(frame), "text/plain": frame.to_string()},
                    )
                ]
        return nb, resources


def _scores(nb, info: dict, config) -> dict[str, float | None]:
    """Each graded cell's score by grade id; None while it waits to be graded by hand."""
    graded = {
        meta["grade_id"]: meta.get("score")
        for cell in nb.cells
        if (meta := cell.metadata.get("nbgrader", {})).get("grade") and "grade_id" in meta
    }
    if "db_url" not in info:
        return graded
    from nbgrader.api import MissingEntry

    with run_gradebook(info, config) as gradebook:
        for grade_id in graded:
            try:
                grade = gradebook.find_grade(
                    grade_id, info["notebook"], info["assignment"], info["student"]
                )
            except MissingEntry:
                continue
            graded[grade_id] = None if grade.needs_manual_grade else grade.score
    return graded
