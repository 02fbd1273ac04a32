"""Every student's lock token at once: one `student,token` CSV row per student of the course's
nbgrader gradebook, in id order, with the service's key loaded once."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from viewcopy.course.assignment import sqlite_file
from viewcopy.course.folder import Course
from viewcopy.files.atomic import write_atomically
from viewcopy.locking.receipts import student_token
from viewcopy.locking.store import init_data, load_key

HEADER = ("student", "token")


class NoStudents(LookupError):
    """The course's gradebook lists no student, so there is no one to issue a token to."""


def class_tokens(data_dir: Path, course: Course) -> list[tuple[str, str]]:
    """(student, token) of every student in the course's gradebook, in id order (initializes
    the data folder if needed, as `issue_token` does)."""
    students = gradebook_students(course)
    init_data(data_dir)
    key = load_key(data_dir)
    return [(student, student_token(key, student)) for student in students]


def gradebook_students(course: Course) -> list[str]:
    """The student ids of the course's gradebook, sorted; FileNotFoundError without a gradebook,
    NoStudents when it lists none."""
    with course.gradebook_to_read() as url:
        if url is None:
            raise FileNotFoundError(
                f"{course.root} has no gradebook ({sqlite_file(course.gradebook_url)} is missing): "
                "pass --course with the nbgrader course folder, or set "
                "c.CourseDirectory.db_url in its nbgrader_config.py"
            )
        with course.gradebook(url) as gradebook:
            students = sorted(student.id for student in gradebook.students)
    if not students:
        raise NoStudents(
            f"the gradebook of {course.root} has no students: add them with `nbgrader db student "
            "add ID` or `nbgrader db student import FILE.csv` in the course, then issue the tokens"
        )
    return students


def tokens_csv(rows: list[tuple[str, str]]) -> str:
    """The rows as CSV text with the header `student,token`, quoted where a field needs it."""
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerows(rows)
    return text.getvalue()


def write_tokens(rows: list[tuple[str, str]], out: Path) -> None:
    """Write the CSV to `out`, mode 0600 (the tokens are secrets), replacing it atomically."""
    write_atomically(out, tokens_csv(rows), mode=0o600)
