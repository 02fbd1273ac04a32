"""The grading board of `notebooks/grade_the_five.ipynb`: one question's answer groups as rows of
core ipywidgets (representative, members, specificity, score, comment, apply), each applied to
all its members through the same checks and gradebook writes as `viewcopy five --apply`.
"""

from __future__ import annotations

import html
from pathlib import Path

import ipywidgets as widgets

from viewcopy.course.assignment import ASSIGNMENT
from viewcopy.course.folder import Course
from viewcopy.five.grades import GradesFileError, apply_grades, check_rows
from viewcopy.five.groups import AnswerGroup
from viewcopy.five.questions import CourseQuestion, five

WRAPPED = "white-space: pre-wrap; overflow-wrap: anywhere; max-width: 60em"


class GroupRow:
    """One group's row: what it says, who said it, and the grade to give them all."""

    def __init__(
        self, course: Course, assignment: str, question: CourseQuestion, group: AnswerGroup
    ):
        self.course, self.assignment, self.question, self.group = (
            course,
            assignment,
            question,
            group,
        )
        said = html.escape(group.representative) if group.representative else "<i>(empty)</i>"
        self.answer = widgets.HTML(
            f"<b>[{group.group}]</b> {group.size} answer{'s' * (group.size != 1)}, "
            f"specificity check {question.specific_share(group)}"
            f"<div style='{WRAPPED}'>{said}</div>"
            f"<div style='{WRAPPED}; color: #555'>{html.escape(', '.join(group.students))}</div>"
        )
        self.score = widgets.BoundedFloatText(
            value=0, min=0, max=question.max_score, step=0.5, description="score",
            layout=widgets.Layout(width="12em"),
        )  # fmt: skip
        self.comment = widgets.Textarea(placeholder="comment for these students", rows=2)
        self.apply = widgets.Button(description=f"apply to {group.size}", button_style="primary")
        self.status = widgets.HTML()
        self.apply.on_click(lambda _: self.save())
        grade = widgets.HBox([self.score, self.comment, self.apply, self.status])
        self.widget = widgets.VBox([self.answer, grade], layout=widgets.Layout(margin="0 0 1em 0"))

    def save(self) -> None:
        """Write this group's score and comment for every member; the result shows in the row."""
        row = {
            "question": str(self.question.item),
            "group": self.group.group,
            "score": str(self.score.value),
            "comment": self.comment.value,
        }
        try:
            grades = check_rows([row], [self.question])
            self.status.value = html.escape(
                apply_grades(self.course, grades, self.assignment).sentence()
            )
        except GradesFileError as exc:
            self.status.value = f"<span style='color: #b00'>{html.escape(str(exc))}</span>"


class FiveBoard:
    """One question's board: its rubric, then a row per answer group, largest first."""

    def __init__(self, course: Course, question: CourseQuestion, assignment: str):
        self.rows = [GroupRow(course, assignment, question, g) for g in question.groups]
        header = widgets.HTML(
            f"<h3>{question.item}. {html.escape(question.text)}</h3>"
            f"<div>{sum(g.size for g in question.groups)} answers in {len(self.rows)} groups</div>"
            f"<pre style='{WRAPPED}'>{html.escape(question.rubric)}</pre>"
        )
        self.widget = widgets.VBox([header, *(r.widget for r in self.rows)])

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)


def grade_the_five(
    course: str | Path = ".", question: int = 21, assignment: str = ASSIGNMENT
) -> FiveBoard:
    """The board of `question` for the graded course in the folder `course`."""
    graded = Course.at(course)
    (found,) = five(graded, assignment, [question])
    return FiveBoard(graded, found, assignment)
