"""The gradebook read at once answers as nbgrader reads it cell by cell: on the graded class's own
gradebook, every master cell `MasterCells` gives is the row nbgrader's `find_source_cell` and
`find_graded_cell` give, and every grade and comment `HandInRows` gives for every hand-in is the
row of nbgrader's `find_grade` and `find_comment`; a name nbgrader does not know is nbgrader's
`MissingEntry` in both (viewcopy.plugins.gradebook_cells)."""

from __future__ import annotations

import pytest
from nbgrader.api import MissingEntry

from viewcopy.course.assignment import ASSIGNMENT, course_gradebook
from viewcopy.plugins.gradebook_cells import HandInRows, MasterCells

NOTEBOOK = "view_or_copy"


def answers(find, *args) -> object:
    """What a lookup gives: the row's id, or the MissingEntry it raises."""
    try:
        return find(*args).id
    except MissingEntry:
        return MissingEntry


def master_and_names(gradebook) -> tuple[object, set[str]]:
    """The master notebook's row and its cells' names, with one nbgrader does not know."""
    master = gradebook.find_notebook(NOTEBOOK, ASSIGNMENT)
    return master, {cell.name for cell in master.source_cells} | {"not_a_cell"}


@pytest.mark.course
def test_the_masters_cells_read_at_once_are_the_rows_nbgrader_finds_one_by_one(cycle):
    course, _ = cycle
    with course_gradebook(course) as gradebook:
        master, names = master_and_names(gradebook)
        read = MasterCells(gradebook, NOTEBOOK, ASSIGNMENT)
        assert read.find_notebook(NOTEBOOK, ASSIGNMENT).id == master.id
        assert len(master.grade_cells) > 10
        for name in names:
            for mine, theirs in (
                (read.find_source_cell, gradebook.find_source_cell),
                (read.find_graded_cell, gradebook.find_graded_cell),
            ):
                args = (name, NOTEBOOK, ASSIGNMENT)
                assert answers(mine, *args) == answers(theirs, *args), (name, theirs.__name__)
        with pytest.raises(ValueError, match="not of view_or_copy/other"):
            read.find_source_cell("setup", "other", ASSIGNMENT)


@pytest.mark.course
def test_every_hand_ins_grades_and_comments_read_at_once_are_nbgraders_rows(cycle):
    course, grades = cycle
    with course_gradebook(course) as gradebook:
        master, names = master_and_names(gradebook)
        found, hand_ins = 0, 0
        for student in grades:
            try:
                read = HandInRows(gradebook, NOTEBOOK, ASSIGNMENT, student)
            except MissingEntry:  # never autograded: nbgrader has no rows for it either
                assert not gradebook.find_student(student).submissions
                continue
            hand_ins += 1
            for name in names:
                args = (name, NOTEBOOK, ASSIGNMENT, student)
                for mine, theirs in (
                    (read.find_grade, gradebook.find_grade),
                    (read.find_comment, gradebook.find_comment),
                ):
                    given = answers(mine, *args)
                    assert given == answers(theirs, *args), (student, name, theirs.__name__)
                    found += given is not MissingEntry
        assert hand_ins >= len(grades) - 1
        assert found >= hand_ins * len(master.grade_cells)
