"""What grades nothing is not measured again: the cells that measure for the student and carry no
points keep the student's own outputs in the graded notebook and the feedback.

The explorer, what a copy costs (question 25, measured) and the production model's profile
(`course.assignment.MEASURING_CELLS`) measure on the student's machine, perhaps a GPU; autograde
would run each again on the grader's (a second or more per hand-in) and replace the student's
figures with its own. This autograde step, placed before Execute, gives such a cell the outputs
the hand-in carries for it and nbclient's skip tag, so the executor leaves it as it is. Every cell
that carries points, and every other cell, runs as before.

A cell is kept only when all of this holds, else it runs as nbgrader runs it:
- its grade id is a measuring cell's, and neither it nor the master's cell is graded or a
  solution: the master's is read-only (locked) and is one call that binds no name;
- the code the executor would run is the master's, to the character (nbgrader's OverwriteCells
  puts the master's source back into every read-only cell before this step), and so is the code
  the student ran: outputs are kept only from the master's own cell;
So what is skipped is the master's code, never the student's, and the kept outputs, like any,
pass the output cap and the sanitizer that follow Execute (docs/security.md). A hand-in that
never ran such a cell (no outputs: a notebook never run, or outputs cleared) is not measured on
the grader either: the cell gets one output, NOT_RUN, saying so, since the grader's figures
would read as the student's.
"""

from __future__ import annotations

import ast
import os

from nbformat import NotebookNode
from nbgrader.utils import is_grade, is_solution
from traitlets import Bool

from viewcopy.course.assignment import MEASURING_CELLS, grade_id
from viewcopy.plugins.base import CoursePreprocessor, run_gradebook

NOT_RUN = (
    "Not run when graded: this hand-in carries no output of this cell. It measures on the "
    "machine that runs it and carries no points, so run it in your notebook to see what it "
    "measures on yours.\n"
)
"""The one output of a measuring cell the hand-in never ran, in the graded notebook and feedback."""


class KeepStudentMeasurements(CoursePreprocessor):
    """Measuring cells that carry no points keep the hand-in's own outputs and are not run."""

    enabled = Bool(
        True,
        help=(
            "Keep the student's own outputs of the cells that measure for the student and carry "
            "no points (the explorer, what a copy costs, the production profile) instead of "
            "running them again (one the student never ran stays unrun, saying so); False "
            "re-measures every cell on the grader, as nbgrader does."
        ),
    ).tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict):
        info = resources.get("nbgrader", {})
        candidates = [cell for cell in nb.cells if is_measuring(cell)]
        if not candidates or not {"student", "assignment", "notebook", "db_url"} <= set(info):
            return nb, resources
        masters = self._master_sources(info, {grade_id(c) for c in candidates})
        handed_in = self._handed_in(info) if masters else {}
        kept = []
        for cell in candidates:
            name = grade_id(cell)
            student = handed_in.get(name)
            if name not in masters or student is None or not is_measuring(student):
                continue
            if not cell.source == student.source == masters[name]:
                continue
            cell.outputs = student.get("outputs") or [not_run()]
            cell.execution_count = student.get("execution_count")
            kept.append(cell)
        if kept:
            tag = self._skip_tag()
            for cell in kept:
                tags = cell.metadata.setdefault("tags", [])
                if tag not in tags:
                    tags.append(tag)
            names = ", ".join(map(grade_id, kept))
            self.log.info("Kept the hand-in's own outputs of %s, not run (no points)", names)
        return nb, resources

    def _master_sources(self, info: dict, names: set[str]) -> dict[str, str]:
        """The master's source of each named cell that may be kept: read-only, not graded, one
        call binding no name (from the gradebook, as generate_assignment stored it)."""
        from nbgrader.api import MissingEntry

        found = {}
        with run_gradebook(info, self.config) as gradebook:
            notebook = gradebook.find_notebook(info["notebook"], info["assignment"])
            graded = {cell.name for cell in notebook.grade_cells}
            for name in names - graded:
                try:
                    cell = gradebook.find_source_cell(name, info["notebook"], info["assignment"])
                except MissingEntry:
                    continue
                if cell.cell_type == "code" and cell.locked and binds_nothing(cell.source):
                    found[name] = cell.source
        return found

    def _handed_in(self, info: dict) -> dict[str, NotebookNode]:
        """The hand-in's measuring cells as submitted (the first cell of each grade id, as
        nbgrader's DeduplicateIds keeps it); empty where the notebook cannot be read."""
        import nbformat
        from nbgrader.coursedir import CourseDirectory

        coursedir = CourseDirectory(config=self.config)
        folder = coursedir.format_path(
            coursedir.submitted_directory, info["student"], info["assignment"]
        )
        try:
            notebook = nbformat.read(os.path.join(folder, f"{info['notebook']}.ipynb"), 4)
        except Exception as exc:  # nbgrader read it to sanitize; anything else: measure again
            self.log.warning("Measuring cells run again: the hand-in did not read (%s)", exc)
            return {}
        cells: dict[str, NotebookNode] = {}
        for cell in notebook.cells:
            if (name := grade_id(cell)) in MEASURING_CELLS:
                cells.setdefault(name, cell)
        return cells

    def _skip_tag(self) -> str:
        """The tag the course's executor skips cells by (nbclient's `skip-execution`)."""
        from nbgrader.preprocessors import Execute

        return Execute(config=self.config).skip_cells_with_tag


def not_run() -> NotebookNode:
    """The output that says a measuring cell was not run by the student, nor when graded."""
    from nbformat.v4 import new_output

    return new_output("stream", name="stdout", text=NOT_RUN)


def is_measuring(cell: NotebookNode) -> bool:
    """A code cell whose grade id is a measuring cell's, neither graded nor a solution."""
    return (
        cell.get("cell_type") == "code"
        and grade_id(cell) in MEASURING_CELLS
        and not is_grade(cell)
        and not is_solution(cell)
    )


def binds_nothing(source: str) -> bool:
    """Whether a cell's code is expressions only and binds no name (no assignment, import,
    definition or walrus), so no later cell can read anything it made."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    return (
        bool(tree.body)
        and all(isinstance(statement, ast.Expr) for statement in tree.body)
        and not any(isinstance(node, ast.NamedExpr) for node in ast.walk(tree))
    )
