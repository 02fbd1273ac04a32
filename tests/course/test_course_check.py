"""`viewcopy course check` names every inconsistency of a course folder with its fix, and
`viewcopy grade` and `nbgrader generate_assignment` refuse a course or a master that has one: a
master edited and not released again, a release whose check calls show other points than the
master gives, a grade id used twice, a written answer without its question, a graded cell
without points."""

from __future__ import annotations

import copy

import nbformat
import pytest
from support.course_notebook import SOURCE
from support.sandboxing import grade_as_the_product
from support.the_class import course_of

from viewcopy import cli
from viewcopy.course.assignment import (
    ASSIGNMENT,
    NOTEBOOK,
    NbgraderFailed,
    grade_id,
    run_nbgrader,
)
from viewcopy.course.check import check_course, course_problems, master_problems
from viewcopy.course.folder import Course
from viewcopy.grading.grade import GradeError

pytestmark = pytest.mark.course


def cell_of(notebook, name: str):
    return next(c for c in notebook.cells if grade_id(c) == name)


def test_the_shipped_master_has_no_problem_and_each_kind_is_named():
    master = nbformat.read(SOURCE, 4)
    assert master_problems(master) == []
    copied = copy.deepcopy(cell_of(master, "specific_22"))
    copied.id = "twice"
    master.cells.append(copied)
    cell_of(master, "score_next").metadata.nbgrader["points"] = 0
    master.cells.remove(cell_of(master, "question_23"))
    said = [str(p) for p in master_problems(master)]
    assert len(said) == 3, said
    assert "grade id 'specific_22' is used by 2 cells; give each cell its own id" in said[0]
    assert "graded cell 'score_next' has points 0" in said[1]
    assert "written answer 'answer_23' has no question cell 'question_23'" in said[2]


def test_a_course_edited_but_not_released_again_is_named_and_not_graded(
    the_class, tmp_path, capsys
):
    course = course_of(the_class, tmp_path / "course", ["perfect"])
    assert "is consistent" in check_course(Course.at(course))
    master = course / "source" / ASSIGNMENT / NOTEBOOK
    notebook = nbformat.read(master, 4)
    cell_of(notebook, "score_next").metadata.nbgrader["points"] = 6
    nbformat.write(notebook, master)
    said = [str(p) for p in course_problems(Course.at(course))]
    assert len(said) == 2, said
    assert "the release is older than its master" in said[0]
    assert "is worth 36 points there and 38 in the master" in said[1]
    assert all(f"nbgrader generate_assignment {ASSIGNMENT} --force" in s for s in said)
    assert cli.main(["course", "check", "--course", str(course)]) == 1
    assert "2 problems to fix first" in capsys.readouterr().out
    with pytest.raises(GradeError, match="the release is older than its master"):
        grade_as_the_product(course)

    run_nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    assert course_problems(Course.at(course)) == []
    release = course / "release" / ASSIGNMENT / NOTEBOOK
    notebook = nbformat.read(release, 4)
    cell = cell_of(notebook, "score_next")
    cell.source = cell.source.replace("points=6", "points=4")  # as a config without WritePoints
    nbformat.write(notebook, release)
    (problem,) = course_problems(Course.at(course))
    assert "score_next shows points=4 where the master gives 6" in str(problem)
    assert "WritePoints" in str(problem)


def test_generate_assignment_refuses_a_master_with_a_problem(the_class, tmp_path):
    course = course_of(the_class, tmp_path / "course", [])
    master = course / "source" / ASSIGNMENT / NOTEBOOK
    notebook = nbformat.read(master, 4)
    notebook.cells.remove(cell_of(notebook, "question_24"))
    nbformat.write(notebook, master)
    with pytest.raises(NbgraderFailed, match="'answer_24' has no question cell 'question_24'"):
        run_nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")


def test_a_declaration_newer_than_the_release_or_wrong_for_the_master_is_named(the_class, tmp_path):
    course = course_of(the_class, tmp_path / "course", [])
    config = course / "nbgrader_config.py"
    shipped = config.read_text()
    config.write_text(
        shipped + "c.CourseDeclaration.next_ops = [{'op': 'x.t()[1:]', 'family': 'strides'}]\n"
    )
    (problem,) = course_problems(Course.at(course))
    assert "the release is older than the course's declaration" in str(problem)
    assert cli.main(["course", "check", "--course", str(course)]) == 1
    run_nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    assert course_problems(Course.at(course)) == []
    release = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, 4)
    assert "'op': 'x.t()[1:]'" in cell_of(release, "parts").source

    config.write_text(
        shipped + "c.CourseDeclaration.next_ops = [{'op': 'x.t().nope()', 'family': 'strides'}]\n"
    )
    said = [str(p) for p in course_problems(Course.at(course))]
    assert "next op C01 ('x.t().nope()' on x) does not run" in said[0], said
    assert "fix or remove that op" in said[0]
    with pytest.raises(NbgraderFailed, match=r"next op C01 \('x.t\(\).nope\(\)' on x\) does not"):
        run_nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    config.write_text(shipped + "c.CourseDeclaration.next_ops = [{'op': 'x.t()', 'family': 'x'}]\n")
    (problem,) = course_problems(Course.at(course))
    assert "c.CourseDeclaration.next_ops in nbgrader_config.py: next op C01 ('x.t()'): family" in (
        str(problem)
    )
