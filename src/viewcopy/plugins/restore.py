"""Putting deleted test cells back before autograding, despite two bugs in nbgrader 0.9.

`OverwriteCells.add_missing_cells` fails a whole submission (the student gets nothing) when
- a deleted grade cell follows a cell that is neither a grade nor a solution cell in the master
  (here: every test cell follows its read-only explanation), a KeyError on that cell's id; or
- the notebook holds a duplicated cell: DeduplicateIds empties the copy's nbgrader metadata,
  then the task-cell pass reads its missing `grade_id` (a KeyError) and CheckCellMetadata takes
  the empty dict for an old metadata format.
`RestoreMissingCells` drops emptied metadata (the copy becomes a plain cell), and re-inserts each
missing grade cell after the nearest earlier master cell still present (else at the top). Its
lookups of the master read the gradebook once (`gradebook_cells.MasterCells`), not once a cell.
"""

from __future__ import annotations

from nbgrader.preprocessors import OverwriteCells

from viewcopy.course.assignment import grade_id
from viewcopy.plugins.base import CoursePreprocessor, run_gradebook
from viewcopy.plugins.gradebook_cells import MasterCells


def _positions(notebook) -> dict[str, int]:
    """grade_id -> index, for the cells that still carry nbgrader metadata."""
    positions = {}
    for index, cell in enumerate(notebook.cells):
        if name := grade_id(cell):
            positions[name] = index
    return positions


class RestoreMissingCells(OverwriteCells, CoursePreprocessor):
    """OverwriteCells whose add_missing_cells survives deleted and duplicated cells."""

    def preprocess(self, nb, resources):
        for cell in nb.cells:
            if cell.metadata.get("nbgrader") == {}:
                del cell.metadata["nbgrader"]
        info = resources["nbgrader"]
        self.notebook_id, self.assignment_id = info["notebook"], info["assignment"]
        self.db_url = info["db_url"]
        with run_gradebook(info, self.config) as gradebook:
            # nbgrader's OverwriteCells.preprocess, its lookups read at once
            self.gradebook = MasterCells(gradebook, self.notebook_id, self.assignment_id)
            nb, resources = super(OverwriteCells, self).preprocess(nb, resources)
            if self.add_missing_cells:
                nb, resources = self.add_missing_grade_cells(nb, resources)
                nb, resources = self.add_missing_task_cells(nb, resources)
        return nb, resources

    def add_missing_grade_cells(self, nb, resources):
        master = self.gradebook.find_notebook(self.notebook_id, self.assignment_id)
        order = [cell.name for cell in master.source_cells]
        sources = {cell.name: cell for cell in master.source_cells}
        solutions = {cell.name for cell in master.solution_cells}
        for grade_cell in master.grade_cells:
            present = _positions(nb)
            if grade_cell.name in present:
                continue
            self.log.warning("Missing grade cell %s encountered, adding it back", grade_cell.name)
            restored = self.missing_cell_transform(
                sources[grade_cell.name],
                grade_cell.max_score,
                is_solution=grade_cell.name in solutions,
            )
            earlier = order[: order.index(grade_cell.name)]
            anchor = next((present[name] for name in reversed(earlier) if name in present), -1)
            nb.cells.insert(anchor + 1, restored)
        return nb, resources

    def add_missing_task_cells(self, nb, resources):
        master = self.gradebook.find_notebook(self.notebook_id, self.assignment_id)
        sources = {cell.name: cell for cell in master.source_cells}
        present = _positions(nb)
        for task_cell in master.task_cells:
            if task_cell.name not in present:
                nb.cells.append(
                    self.missing_cell_transform(
                        sources[task_cell.name], task_cell.max_score, is_task=True
                    )
                )
        return nb, resources
