"""The five (questions 21-25) on the graded synthetic class: groups that follow what the answers
mean (the bank the class wrote from says which answers mean the same), the grading board's row
applying its group, and the grading notebook. `viewcopy five` itself: tests/commands/."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.course_notebook import ROOT
from support.hand_grades import manual, writable_copy
from support.instructor_notebooks import run_on_course
from support.oracles import answer_meaning

from viewcopy.course.folder import Course
from viewcopy.five.board import grade_the_five
from viewcopy.five.questions import QUESTIONS, five

pytestmark = [pytest.mark.course]

BOARD_NOTEBOOK = ROOT / "notebooks" / "grade_the_five.ipynb"


@pytest.fixture
def course(cycle, tmp_path) -> Path:
    """A copy of the graded course, its gradebook included, for a test that writes grades."""
    return writable_copy(cycle[0], tmp_path / "course")


def test_each_group_holds_exactly_the_answers_that_mean_one_thing(cycle):
    course, results = cycle
    questions = five(Course.at(course))
    assert [q.item for q in questions] == list(QUESTIONS)
    for question in questions:
        meanings: dict[str, set[str]] = {}
        for student_id, result in results.items():
            meanings.setdefault(answer_meaning(result.student, question.item), set()).add(
                student_id
            )
        found = sorted(sorted(g.students) for g in question.groups)
        assert found == sorted(sorted(m) for m in meanings.values()), question.item
        assert len(question.groups) < len(results) / 2
        assert "2 pts:" in question.rubric and question.max_score == 2


def test_the_board_applies_a_group_from_its_row(course):
    board = grade_the_five(course, 25)
    row = next(r for r in board.rows if "typical" in r.group.students)
    row.score.value, row.comment.value = 1, "permute is a view; contiguous pays the copy"
    row.apply.click()
    assert f"{row.group.size} answer grades written" in row.status.value
    graded = manual(course, 25)
    for student, pair in graded.items():
        expected = (1, "permute is a view; contiguous pays the copy")
        assert pair == (expected if student in row.group.students else (None, None))


def test_the_grading_notebook_runs_and_shows_a_board_per_question(course):
    outputs = run_on_course(BOARD_NOTEBOOK, repr(str(course)))
    boards = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(boards) == len(QUESTIONS)
