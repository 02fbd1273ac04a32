"""Grade an answer group once: its score and comment become each member's manual grade.

Written through nbgrader's gradebook API exactly as formgrader's grade and comment handlers write
them (`manual_score`, `needs_manual_grade`, `manual_comment`), so formgrader shows the answers
graded and `generate_feedback` prints the comment. What was applied is kept beside the grading
logs (`five_applied.json`): a grade changed in formgrader since (or given there before any apply)
is the instructor's word for that student and is kept, never overwritten.

A grades file is checked whole before anything is written: every bad row is named at once.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from viewcopy.course.assignment import (
    ASSIGNMENT,
    NOTEBOOK_ID,
    waiting_url,
)
from viewcopy.course.folder import Course
from viewcopy.files.atomic import write_atomically
from viewcopy.five.questions import CourseQuestion, answer_cell

COLUMNS = ("question", "group", "score", "comment")
LEDGER = "five_applied.json"
WAIT_S = 60
"""How long an apply waits for the gradebook a regrade or formgrader is writing (SQLite)."""


class GradesFileError(ValueError):
    """The grades file has bad rows (all listed) or cannot be read; nothing was written."""


@dataclass(frozen=True)
class GroupGrade:
    """One row of a grades file, checked: a group's score and comment."""

    question: int
    group: str
    score: float
    comment: str
    students: tuple[str, ...]


@dataclass
class Applied:
    """What an apply did: grades written, and those kept because formgrader set them."""

    written: list[tuple[int, str]] = field(default_factory=list)
    kept: list[tuple[int, str]] = field(default_factory=list)

    def sentence(self) -> str:
        line = f"{len(self.written)} answer grades written"
        if self.kept:
            who = ", ".join(f"{s} (answer_{q})" for q, s in self.kept)
            line += f"; {len(self.kept)} kept as graded in formgrader: {who}"
        return line


def read_rows(path: Path) -> list[dict[str, str]]:
    """The grades file's rows; GradesFileError when it is missing or lacks a column."""
    try:
        with Path(path).open(newline="", encoding="utf-8-sig") as source:
            reader = csv.DictReader(source)
            missing = [c for c in COLUMNS if c not in (reader.fieldnames or ())]
            if missing:
                raise GradesFileError(
                    f"{path} has no {', '.join(missing)} column: the header must be "
                    f"{','.join(COLUMNS)}"
                )
            return list(reader)
    except OSError as exc:
        raise GradesFileError(f"cannot read {path}: {exc.strerror or exc}") from None


def check_rows(
    rows: Sequence[Mapping[str, str]], questions: Sequence[CourseQuestion]
) -> list[GroupGrade]:
    """The rows as grades, each against the groups `questions` hold now; GradesFileError naming
    every bad row (unknown question or group, a score outside 0..max, a group given twice)."""
    by_item = {q.item: q for q in questions}
    checked, problems, seen = [], [], {}
    for number, row in enumerate(rows, start=2):  # row 1 is the header
        where = f"row {number}"
        question = by_item.get(_int(row.get("question")))
        if question is None:
            known = ", ".join(str(i) for i in by_item)
            problems.append(f"{where}: question {row.get('question')!r} is not one of {known}")
            continue
        groups = {g.group: g for g in question.groups}
        group = groups.get((row.get("group") or "").strip())
        if group is None:
            problems.append(
                f"{where}: question {question.item} has no group {row.get('group')!r} (its "
                "groups change when their members do: list them again with `viewcopy five`)"
            )
            continue
        score = _float(row.get("score"))
        if score is None or not 0 <= score <= question.max_score:
            problems.append(
                f"{where}: score {row.get('score')!r} for group {group.group} is not a number "
                f"from 0 to {question.max_score:g}"
            )
            continue
        if group.group in seen:
            problems.append(
                f"{where}: group {group.group} was already graded in row {seen[group.group]}"
            )
            continue
        seen[group.group] = number
        comment = (row.get("comment") or "").strip()
        checked.append(GroupGrade(question.item, group.group, score, comment, group.students))
    if problems:
        raise GradesFileError(
            f"{len(problems)} bad row{'s' * (len(problems) != 1)}, nothing written:\n  "
            + "\n  ".join(problems)
        )
    return checked


def _int(text: str | None) -> int | None:
    try:
        return int((text or "").strip())
    except ValueError:
        return None


def _float(text: str | None) -> float | None:
    try:
        value = float((text or "").strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def ledger_path(course: Course, assignment: str) -> Path:
    return course.grade_logs(assignment) / LEDGER


def _read_ledger(path: Path) -> dict[str, dict[str, list]]:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _write_ledger(path: Path, ledger: Mapping) -> None:
    write_atomically(path, json.dumps(ledger, indent=1, sort_keys=True))


def apply_grades(
    course: Course, grades: Sequence[GroupGrade], assignment: str = ASSIGNMENT
) -> Applied:
    """Write each group's score and comment as its members' manual grade of `answer_N`, read
    and written in one transaction that holds the gradebook's write lock from its first read (a
    grade formgrader saves meanwhile waits, then lands over this one, never under it); grades set
    in formgrader (not by an earlier apply) are kept."""
    from nbgrader.api import MissingEntry

    ledger_file = ledger_path(course, assignment)
    ledger = _read_ledger(ledger_file)
    applied = Applied()
    with course.gradebook(waiting_url(course.gradebook_url, WAIT_S)) as gradebook:
        hold_for_writing(gradebook)
        rows = []
        for grade in grades:
            for student in grade.students:
                cell = answer_cell(grade.question)
                try:
                    row = (
                        gradebook.find_grade(cell, NOTEBOOK_ID, assignment, student),
                        gradebook.find_comment(cell, NOTEBOOK_ID, assignment, student),
                    )
                except MissingEntry:
                    gradebook.db.rollback()
                    raise GradesFileError(
                        f"{student} has no graded {cell} in the gradebook (autograde "
                        f"{assignment} again); nothing written"
                    ) from None
                rows.append((grade, student, *row))
        try:
            for grade, student, score, comment in rows:
                ours = ledger.get(str(grade.question), {}).get(student)
                now = [score.manual_score, comment.manual_comment or None]
                untouched = now == [None, None] or (ours is not None and now == ours)
                if not untouched:
                    applied.kept.append((grade.question, student))
                    continue
                score.manual_score = grade.score
                score.needs_manual_grade = False
                comment.manual_comment = grade.comment or None
                ledger.setdefault(str(grade.question), {})[student] = [
                    grade.score, comment.manual_comment
                ]  # fmt: skip
                applied.written.append((grade.question, student))
            gradebook.db.commit()
        except Exception:
            gradebook.db.rollback()
            raise
    _write_ledger(ledger_file, ledger)
    return applied


def hold_for_writing(gradebook) -> None:
    """Open the gradebook session's transaction with its write lock taken, so what it reads stays
    true until it commits: SQLite's `BEGIN IMMEDIATE`, PostgreSQL's lock on the grade and comment
    tables (other writers wait; readers do not)."""
    from sqlalchemy import text

    session = gradebook.db
    session.commit()  # nothing pending: the lock opens the transaction
    dialect = session.get_bind().dialect.name
    if dialect == "sqlite":
        session.execute(text("BEGIN IMMEDIATE"))
    elif dialect == "postgresql":
        session.execute(text("LOCK TABLE grade, comment IN SHARE ROW EXCLUSIVE MODE"))
