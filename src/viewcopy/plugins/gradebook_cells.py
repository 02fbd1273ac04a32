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
        self.notebook = (notebook, assignment)
        self.master = gradebook.find_notebook(notebook, assignment)
        self.sources = {cell.name: cell for cell in self.master.source_cells}
        # a grade cell before a task cell of the same name, as find_graded_cell looks
        self.graded = {cell.name: cell for cell in self.master.task_cells}
        self.graded.update((cell.name, cell) for cell in self.master.grade_cells)

    def find_notebook(self, name: str, assignment: str):
        _same(self.notebook, (name, assignment))
        return self.master

    def find_source_cell(self, name: str, notebook: str, assignment: str):
        return _row(self.sources, "source cell", name, self.notebook, (notebook, assignment))

    def find_graded_cell(self, name: str, notebook: str, assignment: str):
        return _row(self.graded, "grade cell", name, self.notebook, (notebook, assignment))


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
        return _row(self.grades, "grade", name, self.hand_in, (notebook, assignment, student))

    def find_comment(self, name: str, notebook: str, assignment: str, student: str):
        return _row(self.comments, "comment", name, self.hand_in, (notebook, assignment, student))

    def _by_cell(self, row: type[Grade] | type[Comment], submitted: str) -> dict:
        found = (
            self.db.query(BaseCell.name, row)
            .join(row, row.cell_id == BaseCell.id)
            .filter(row.notebook_id == submitted)
        )
        return dict(found.all())


def _row(rows: dict, kind: str, name: str, held: tuple[str, ...], asked: tuple[str, ...]):
    """The row of cell `name` among `rows` (those of `held`: notebook, assignment[, student]),
    as nbgrader finds it: its `MissingEntry` where there is none."""
    _same(held, asked)
    try:
        return rows[name]
    except KeyError:
        raise MissingEntry(f"No such {kind}: {_name(asked)}/{name}") from None


def _same(held: tuple[str, ...], asked: tuple[str, ...]) -> None:
    """ValueError where a lookup asks of another notebook (or hand-in) than the one held."""
    if asked != held:
        raise ValueError(f"these are the rows of {_name(held)}, not of {_name(asked)}")


def _name(notebook: tuple[str, ...]) -> str:
    """assignment/notebook[/student]."""
    notebook_id, assignment, *student = notebook
    return "/".join((assignment, notebook_id, *student))
