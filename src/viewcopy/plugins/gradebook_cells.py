"""The gradebook's rows for one notebook, read at once instead of cell by cell.

nbgrader's autograde steps look the gradebook up once a cell: OverwriteCells asks for each cell's
master (two queries of three joins each), SaveAutoGrades for each grade and comment of the hand-in
(seven joins each, and a commit after each). On this lab's notebook that was about 150 queries a
hand-in. `MasterCells` holds the master notebook's cells and `HandInRows` the hand-in's grades and
comments, each kind read in one query, and they answer the same lookups with the same rows (and
nbgrader's `MissingEntry` where nbgrader raises it), so the steps that use them keep nbgrader's
logic as it is.
"""

from __future__ import annotations

from nbgrader.api import BaseCell, Comment, Grade, Gradebook, MissingEntry


class MasterCells:
    """One master notebook's cells: the lookups OverwriteCells makes of a `Gradebook`
    (`find_notebook`, `find_source_cell`, `find_graded_cell`), answered from two queries."""

    def __init__(self, gradebook: Gradebook, notebook: str, assignment: str):
        self.notebook, self.assignment = notebook, assignment
        self.master = gradebook.find_notebook(notebook, assignment)
        self.sources = {cell.name: cell for cell in self.master.source_cells}
        # a grade cell before a task cell of the same name, as find_graded_cell looks
        self.graded = {cell.name: cell for cell in self.master.task_cells}
        self.graded.update((cell.name, cell) for cell in self.master.grade_cells)

    def find_notebook(self, name: str, assignment: str):
        self._same(name, assignment)
        return self.master

    def find_source_cell(self, name: str, notebook: str, assignment: str):
        self._same(notebook, assignment)
        try:
            return self.sources[name]
        except KeyError:
            raise MissingEntry(f"No such source cell: {assignment}/{notebook}/{name}") from None

    def find_graded_cell(self, name: str, notebook: str, assignment: str):
        self._same(notebook, assignment)
        try:
            return self.graded[name]
        except KeyError:
            raise MissingEntry(f"No such grade cell: {assignment}/{notebook}/{name}") from None

    def _same(self, notebook: str, assignment: str) -> None:
        if (notebook, assignment) != (self.notebook, self.assignment):
            raise ValueError(
                f"these are the cells of {self.assignment}/{self.notebook}, "
                f"not of {assignment}/{notebook}"
            )


class HandInRows:
    """One hand-in's grades and comments for one notebook, by cell name: the lookups
    SaveAutoGrades makes (`find_grade`, `find_comment`), answered from three queries."""

    def __init__(self, gradebook: Gradebook, notebook: str, assignment: str, student: str):
        self.db = gradebook.db
        self.hand_in = (notebook, assignment, student)
        submitted = gradebook.find_submission_notebook(notebook, assignment, student)
        self.grades = self._by_cell(Grade, submitted.id)
        self.comments = self._by_cell(Comment, submitted.id)

    def find_grade(self, name: str, notebook: str, assignment: str, student: str):
        return self._find(self.grades, "grade", name, (notebook, assignment, student))

    def find_comment(self, name: str, notebook: str, assignment: str, student: str):
        return self._find(self.comments, "comment", name, (notebook, assignment, student))

    def _find(self, rows: dict, kind: str, name: str, hand_in: tuple[str, str, str]):
        notebook, assignment, student = hand_in
        if hand_in != self.hand_in:
            raise ValueError(f"these are the rows of {self.hand_in}, not of {hand_in}")
        try:
            return rows[name]
        except KeyError:
            where = f"{assignment}/{notebook}/{student}/{name}"
            raise MissingEntry(f"No such {kind}: {where}") from None

    def _by_cell(self, row: type[Grade] | type[Comment], submitted: str) -> dict:
        found = (
            self.db.query(BaseCell.name, row)
            .join(row, row.cell_id == BaseCell.id)
            .filter(row.notebook_id == submitted)
        )
        return dict(found.all())
