"""Which LMS row is which gradebook student: a login, LMS id or email they share, trimmed and
case-insensitive; a row or a student that matches more than one is ambiguous, never guessed."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from viewcopy.course.class_scores import GradebookScore
from viewcopy.lms.csv_table import cell_key


def _student_keys(student: GradebookScore) -> set[str]:
    """The values an LMS row may name the student by: id, email, LMS user id."""
    ids = (student.student_id, student.email, student.lms_user_id)
    return {k for k in map(cell_key, ids) if k}


@dataclass(frozen=True)
class Match:
    """An LMS row and the one gradebook student it belongs to, and the column that said so."""

    row: int
    student: str
    column: str


@dataclass(frozen=True)
class Ambiguous:
    """Rows and students that share identifiers in more than one way: none of them is written."""

    rows: tuple[int, ...]
    students: tuple[str, ...]


@dataclass(frozen=True)
class Matching:
    """What became of every row and student: matched, ambiguous, only in the LMS (its rows) or
    only in the gradebook (student ids)."""

    matches: tuple[Match, ...] = ()
    ambiguous: tuple[Ambiguous, ...] = ()
    lms_only: tuple[int, ...] = ()
    gradebook_only: tuple[str, ...] = ()


def match(rows: dict[int, dict[str, str]], students: Iterable[GradebookScore]) -> Matching:
    """Pair rows (row -> {column: value}) with students: a row and a student that share a
    trimmed, case-insensitive value and nothing else match; a group of rows and students tied
    by shared values with more than one on either side is ambiguous.

    A row's values are its identifier columns (lms.export_layouts); a student's are their
    gradebook id (the hub name: an LMS login or sub), their nbgrader `lms_user_id` and their
    email."""
    students = list(students)
    edges: dict[int, dict[str, str]] = {r: {} for r in rows}  # row -> student -> column
    for r, cells in rows.items():
        values = {cell_key(v): column for column, v in cells.items() if cell_key(v)}
        for s in students:
            if shared := _student_keys(s) & values.keys():
                edges[r][s.student_id] = values[min(shared)]
    by_student: dict[str, set[int]] = {s.student_id: set() for s in students}
    for r, found in edges.items():
        for s in found:
            by_student[s].add(r)
    matches, ambiguous, seen = [], [], set()
    for r in sorted(rows):
        if r in seen or not edges[r]:
            continue
        group_rows, group_students, todo = {r}, set(), [r]
        while todo:  # the rows and students tied to this row, however indirectly
            for s in edges[todo.pop()]:
                if s not in group_students:
                    group_students.add(s)
                    new = by_student[s] - group_rows
                    group_rows |= new
                    todo.extend(new)
        seen |= group_rows
        if len(group_rows) == 1 and len(group_students) == 1:
            (s,) = group_students
            matches.append(Match(r, s, edges[r][s]))
        else:
            ambiguous.append(Ambiguous(tuple(sorted(group_rows)), tuple(sorted(group_students))))
    return Matching(
        tuple(matches),
        tuple(ambiguous),
        tuple(r for r in sorted(rows) if not edges[r]),
        tuple(sorted(s for s, found in by_student.items() if not found)),
    )
