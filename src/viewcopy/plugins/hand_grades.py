"""A hand grade stays given until its answer changes: nbgrader's SaveAutoGrades, except for the
written answers a grader already graded.

nbgrader's SaveAutoGrades marks every cell that holds a manual score as needing manual grading
again at each autograde, so after a regrade of an unchanged hand-in every hand grade read as
"not graded yet" (in the class report, the LMS push and the import file), although the score was
still in the gradebook. Here a written answer (a graded solution cell) that was graded by hand
and whose text is the text of the last whole grading of that hand-in (`graded_before`, as
formgrader showed it) keeps its grade as given; an answer whose text changed waits for its
grader again, as nbgrader has it. A manual score on any other cell (an override of an autograded
test) is nbgrader's to flag, as before. Its lookups of the hand-in's grades and comments read the
gradebook once (`gradebook_cells.HandInRows`), not once a cell.
"""

from __future__ import annotations

import copy
from pathlib import Path

from nbformat import NotebookNode
from nbgrader.preprocessors import SaveAutoGrades
from nbgrader.utils import is_grade, is_solution
from traitlets import Unicode

from viewcopy.plugins.base import CoursePreprocessor, run_gradebook
from viewcopy.plugins.gradebook_cells import HandInRows


class KeepHandGrades(SaveAutoGrades, CoursePreprocessor):
    """SaveAutoGrades that keeps a hand grade given to an unchanged written answer."""

    graded_before = Unicode(
        "",
        help="The folder of the last whole grading of each hand-in "
        "(<student>/<assignment>/<notebook>.ipynb); default: the course's autograded folder.",
    ).tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict):
        self._answers_before = _written_answers(self._last_grading(resources))
        info = resources["nbgrader"]
        self.notebook_id, self.assignment_id = info["notebook"], info["assignment"]
        self.student_id, self.db_url = info["student"], info["db_url"]
        with run_gradebook(info, self.config) as gradebook:
            # nbgrader's SaveAutoGrades.preprocess, its lookups read at once
            self.gradebook = HandInRows(
                gradebook, self.notebook_id, self.assignment_id, self.student_id
            )
            nb, resources = super(SaveAutoGrades, self).preprocess(nb, resources)
        return nb, resources

    def _add_score(self, cell: NotebookNode, resources: dict) -> None:
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        grade = self.gradebook.find_grade(
            grade_id, self.notebook_id, self.assignment_id, self.student_id
        )
        given = grade.manual_score is not None and not grade.needs_manual_grade
        super()._add_score(cell, resources)
        if given and is_solution(cell) and self._answers_before.get(grade_id) in _shown(cell):
            grade.needs_manual_grade = False
            self.gradebook.db.commit()

    def _last_grading(self, resources: dict) -> Path:
        from nbgrader.coursedir import CourseDirectory

        info = resources["nbgrader"]
        folder = self.graded_before
        if not folder:
            coursedir = CourseDirectory(config=self.config)
            folder = str(Path(coursedir.root) / coursedir.autograded_directory)
        return Path(folder) / info["student"] / info["assignment"] / f"{info['notebook']}.ipynb"


def _written_answers(path: Path) -> dict[str, str]:
    """Grade id -> source of each graded solution cell of the notebook at `path` (none where
    there is no such notebook, or it cannot be read)."""
    import nbformat

    try:
        notebook = nbformat.read(path, as_version=4)
    except (OSError, ValueError):
        return {}
    return {
        cell.metadata["nbgrader"]["grade_id"]: cell.source
        for cell in notebook.cells
        if is_grade(cell) and is_solution(cell)
    }


def _shown(cell: NotebookNode) -> tuple[str, str]:
    """The answer's text as graded now, and as the instructor's copy shows it (sanitized)."""
    from viewcopy.plugins.sanitize import SanitizeForInstructor

    shown, _ = SanitizeForInstructor().preprocess_cell(copy.deepcopy(cell), {}, 0)
    return cell.source, shown.source


def keep_hand_grades(config, graded_before: Path) -> None:
    """A course config's autograde with KeepHandGrades in nbgrader's SaveAutoGrades' place
    (a course's own subclass of it is left as it is), comparing with `graded_before`."""
    from nbgrader.converters import Autograde

    steps = config.Autograde.get("autograde_preprocessors") or (
        Autograde.class_traits()["autograde_preprocessors"].default()
    )
    config.Autograde.autograde_preprocessors = [
        KeepHandGrades if step is SaveAutoGrades else step for step in steps
    ]
    config.KeepHandGrades.graded_before = str(graded_before)
