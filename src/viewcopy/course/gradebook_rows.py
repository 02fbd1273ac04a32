"""An assignment's rows in an nbgrader gradebook, carried to another gradebook.

A cluster worker autogrades in a gradebook of its own that holds only the assignment: its
notebooks (with their kernelspec), grade, solution, task and source cells, as
`nbgrader generate_assignment` saved them in the course's gradebook. nbgrader's autograde reads
them there (the master's cells that restore deleted ones, the kernelspec, the test cells the
grader's own verdict reruns). Nothing of any student travels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class NotebookRows:
    """One notebook of the assignment and its master cells."""

    name: str
    kernelspec: str | None
    grade_cells: tuple[dict, ...] = field(default=())
    solution_cells: tuple[dict, ...] = field(default=())
    task_cells: tuple[dict, ...] = field(default=())
    source_cells: tuple[dict, ...] = field(default=())


@dataclass(frozen=True)
class AssignmentRows:
    """An assignment as the gradebook knows it, without any submission."""

    course_id: str
    name: str
    duedate: datetime | None
    notebooks: tuple[NotebookRows, ...]


class AssignmentNotInGradebook(LookupError):
    """The gradebook has no such assignment (generate_assignment was never run for it)."""


def export_rows(url: str, course_id: str, assignment: str) -> AssignmentRows:
    """The assignment's rows in the gradebook at `url`."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(url, course_id) as gradebook:
        try:
            found = gradebook.find_assignment(assignment)
        except MissingEntry:
            raise AssignmentNotInGradebook(
                f"the gradebook {_safe(url)} has no assignment {assignment!r}: run "
                f"`nbgrader generate_assignment {assignment}` in the course first"
            ) from None
        notebooks = tuple(
            NotebookRows(
                name=nb.name,
                kernelspec=nb.kernelspec,
                grade_cells=tuple(
                    {"name": c.name, "max_score": c.max_score, "cell_type": c.cell_type}
                    for c in nb.grade_cells
                ),
                solution_cells=tuple({"name": c.name} for c in nb.solution_cells),
                task_cells=tuple(
                    {"name": c.name, "max_score": c.max_score, "cell_type": c.cell_type}
                    for c in nb.task_cells
                ),
                source_cells=tuple(
                    {
                        "name": c.name,
                        "cell_type": c.cell_type,
                        "locked": c.locked,
                        "source": c.source,
                        "checksum": c.checksum,
                    }
                    for c in nb.source_cells
                ),
            )
            for nb in found.notebooks
        )
        return AssignmentRows(gradebook.course_id, found.name, found.duedate, notebooks)


def import_rows(url: str, rows: AssignmentRows) -> None:
    """Write the assignment's rows into the gradebook at `url` with nbgrader's own calls."""
    from nbgrader.api import Gradebook

    with Gradebook(url, rows.course_id) as gradebook:
        gradebook.update_or_create_assignment(
            rows.name, duedate=rows.duedate, course_id=rows.course_id
        )
        for nb in rows.notebooks:
            gradebook.update_or_create_notebook(nb.name, rows.name, kernelspec=nb.kernelspec)
            for cell in nb.grade_cells:
                gradebook.update_or_create_grade_cell(**_cell(cell, nb, rows))
            for cell in nb.solution_cells:
                gradebook.update_or_create_solution_cell(**_cell(cell, nb, rows))
            for cell in nb.task_cells:
                gradebook.update_or_create_task_cell(**_cell(cell, nb, rows))
            for cell in nb.source_cells:
                gradebook.update_or_create_source_cell(**_cell(cell, nb, rows))


def _cell(cell: dict, notebook: NotebookRows, rows: AssignmentRows) -> dict:
    return {**cell, "notebook": notebook.name, "assignment": rows.name}


def _safe(url: str) -> str:
    """The URL without a password."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
