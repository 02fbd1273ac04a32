"""`viewcopy five`: each hand-graded question's answers, grouped by what they say.

The questions are the course's: every graded `answer_N` cell of its master, with the wording of
its `question_N` cell, as the gradebook keeps the master's source (a question reworded, added or
removed in the master is so here after `nbgrader generate_assignment`); the shipped master asks
the dangerous five, 21-25.

Answers are read from the autograded notebooks (what formgrader shows), never run: the answer
cell's literal string, or its source where it is not a literal. Each group comes with what the
grader needs beside it: the specificity check's result for its members (from the gradebook) and
the question's rubric (the hidden-test comment of its `specific_N` cell, as the gradebook keeps
the master's source).
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from viewcopy.course.assignment import (
    ASSIGNMENT,
    NOTEBOOK,
    NOTEBOOK_ID,
    grade_id,
    read_grades,
)
from viewcopy.course.folder import Course
from viewcopy.course.handin import written_literal
from viewcopy.exercise import catalogue
from viewcopy.exercise.written import Unreadable
from viewcopy.five.groups import DEFAULT_THRESHOLD, AnswerGroup, group_answers

if TYPE_CHECKING:
    import nbformat

QUESTIONS = tuple(q.item for q in catalogue.QUESTIONS)
"""The shipped master's questions: the dangerous five."""
ANSWER_CELL = re.compile(r"answer_(\d+)")
NUMBERED = re.compile(r"^\s*\*\*\s*\d+\s*\.?\s*\*\*\s*")
"""A question cell's number as the master writes it: `**21.** `."""
HIDDEN = ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")
WIDTH = 96


class FiveError(RuntimeError):
    """Nothing to group: no graded hand-ins, or a question that is not one of the five."""


@dataclass(frozen=True)
class CourseQuestion:
    """One of the five as the grader grades it: its text, rubric, points and answer groups."""

    item: int
    text: str
    rubric: str
    max_score: float
    groups: tuple[AnswerGroup, ...]
    specific: Mapping[str, bool]
    """Student -> did the specificity check give credit."""
    skipped: tuple[str, ...] = ()
    """Graded hand-ins whose notebook could not be read now (a regrade was replacing it)."""

    def specific_share(self, group: AnswerGroup) -> str:
        return f"{sum(self.specific.get(s, False) for s in group.students)}/{group.size}"


def answer_cell(item: int) -> str:
    return f"answer_{item}"


def question_number(grade_id: str) -> int | None:
    """N for an answer cell `answer_N`, else None."""
    match = ANSWER_CELL.fullmatch(grade_id)
    return int(match.group(1)) if match else None


def answer_text(notebook: nbformat.NotebookNode, item: int) -> str:
    """What the student wrote for `item`: the literal string, else the cell's source."""
    try:
        value = written_literal(notebook, answer_cell(item), f"ANSWER_{item}")
    except Unreadable:
        cells = [c for c in notebook.cells if grade_id(c) == answer_cell(item)]
        return cells[-1].source.strip() if cells else ""
    return value if isinstance(value, str) else repr(value)


def graded_notebooks(course: Course, assignment: str) -> dict[str, Path]:
    """Student -> the autograded notebook of `assignment` (only graded hand-ins take grades)."""
    root = course.autograded
    found = sorted(root.glob(f"*/{assignment}/{NOTEBOOK}")) if root.is_dir() else []
    return {path.parents[1].name: path for path in found}


def rubric_of(source: str) -> str:
    """The rubric: the comment lines of a `specific_N` cell's hidden tests, without `# `."""
    inside, lines = False, []
    for line in source.splitlines():
        if line.strip() in HIDDEN:
            inside = line.strip() == HIDDEN[0]
        elif inside and line.lstrip().startswith("#"):
            lines.append(line.lstrip()[1:].removeprefix(" "))
    return "\n".join(lines)


@dataclass(frozen=True)
class Asked:
    """A written question as the course's master asks it: its number, wording, rubric (the hidden
    comment of its `specific_N` cell, empty without one) and the points of its answer cell."""

    item: int
    text: str
    rubric: str
    max_score: float


def course_questions(course: Course, assignment: str = ASSIGNMENT) -> dict[int, Asked]:
    """Every question the course's master asks (a graded `answer_N` cell), by number."""
    from nbgrader.api import MissingEntry

    asked = {}
    with course.gradebook() as gradebook:
        try:
            notebook = gradebook.find_notebook(NOTEBOOK_ID, assignment)
        except MissingEntry:
            raise FiveError(
                f"the gradebook has no {assignment}: run `nbgrader generate_assignment "
                f"{assignment}` in {course.root}"
            ) from None
        sources = {cell.name: cell.source for cell in notebook.source_cells}
        for cell in notebook.grade_cells:
            item = question_number(cell.name)
            if item is not None:
                text = NUMBERED.sub("", sources.get(f"question_{item}", "")).strip()
                rubric = rubric_of(sources.get(f"specific_{item}", ""))
                asked[item] = Asked(item, text, rubric, float(cell.max_score))
    return dict(sorted(asked.items()))


def five(
    course: Course,
    assignment: str = ASSIGNMENT,
    questions: Iterable[int] | None = None,
    threshold: float = DEFAULT_THRESHOLD,
) -> list[CourseQuestion]:
    """The answer groups of each question in `questions` (default: every one the master asks),
    for every autograded hand-in it can read (a regrade may be replacing one: it is named in
    each question's `skipped`)."""
    notebooks = graded_notebooks(course, assignment)
    if not notebooks:
        raise FiveError(
            f"no autograded hand-ins of {assignment} in {course.root}: grade first (viewcopy grade)"
        )
    import nbformat  # about a second to import: only once there are hand-ins to read

    asked = course_questions(course, assignment)
    items = list(questions) if questions else list(asked)
    if unknown := [i for i in items if i not in asked]:
        known = ", ".join(map(str, asked)) or "none"
        raise FiveError(
            f"question {unknown[0]} is not one of this course's questions ({known}: the graded "
            "answer_N cells of its master)"
        )
    read, skipped = {}, []
    for student, path in notebooks.items():
        try:
            read[student] = nbformat.read(path, as_version=4)
        except FileNotFoundError:  # a regrade replacing it this very moment
            skipped.append(student)
    grades = read_grades(course.root, assignment)
    out = []
    for item in items:
        answers = {s: answer_text(nb, item) for s, nb in read.items()}
        specific = {s: bool((grades.get(s, {}).get(f"specific_{item}") or (0, 0))[0]) for s in read}
        groups = tuple(group_answers(item, answers, threshold))
        question = asked[item]
        out.append(
            CourseQuestion(
                item,
                question.text,
                question.rubric,
                question.max_score,
                groups,
                specific,
                tuple(skipped),
            )
        )
    return out


def groups_line(questions: Sequence[CourseQuestion]) -> str:
    """How many groups each question's answers make, against how many answers there are."""
    return "; ".join(
        f"{q.item}: {len(q.groups)} groups for {sum(g.size for g in q.groups)} answers"
        for q in questions
    )


def as_records(questions: Sequence[CourseQuestion]) -> list[dict]:
    """The JSON form: one object per group."""
    return [
        {
            "question": q.item,
            "group": g.group,
            "students": list(g.students),
            "representative": g.representative,
            "size": g.size,
            "specific": q.specific_share(g),
            "max_score": q.max_score,
            "rubric": q.rubric,
        }
        for q in questions
        for g in q.groups
    ]


def _block(text: str, indent: str) -> str:
    paragraphs = text.splitlines() or [""]
    return "\n".join(
        textwrap.fill(p, WIDTH, initial_indent=indent, subsequent_indent=indent) or indent
        for p in paragraphs
    )


def as_table(questions: Sequence[CourseQuestion]) -> str:
    """The text form: per question, its rubric, then each group (largest first) with its
    representative answer."""
    out = []
    for q in questions:
        students = sum(g.size for g in q.groups)
        heading = textwrap.fill(f"{q.item}. {q.text}", WIDTH, subsequent_indent="    ")
        out.append(
            f"{heading}\n   {students} answers in {len(q.groups)} groups; "
            f"{q.max_score:g} points by hand each"
        )
        out.append("   rubric:\n" + "\n".join("     " + line for line in q.rubric.splitlines()))
        for g in q.groups:
            members = textwrap.fill(
                ", ".join(g.students), WIDTH, initial_indent="     students: ",
                subsequent_indent=" " * 15,
            )  # fmt: skip
            said = _block(g.representative, "     > ") if g.representative else "     (empty)"
            out.append(
                f"   [{g.group}] {g.size} answer{'s' * (g.size != 1)}, specificity check "
                f"{q.specific_share(g)}\n{members}\n{said}"
            )
        out.append("")
    if questions and questions[0].skipped:
        out.append(skipped_line(questions[0].skipped))
    return "\n".join(out).rstrip() + "\n"


def skipped_line(students: Sequence[str]) -> str:
    return (
        f"skipped, being regraded as this ran (run again once the regrade ends): "
        f"{', '.join(students)}"
    )


def as_json(questions: Sequence[CourseQuestion]) -> str:
    return json.dumps(as_records(questions), indent=2, ensure_ascii=False) + "\n"
