"""`viewcopy demo`, the main job, as an instructor runs it (what scripts/demo.sh runs once .venv is
set up): the console script in a process of its own, from the course repository, building a fresh
course. Its printed table is read back and every number checked against what the course's
gradebook holds, read through nbgrader's own API and its `nbgrader export` CSV (never through the
demo's code), and against what each synthetic profile must score (support.oracles); every
synthetic student is there, nothing failed, and it says what to do next.

Slow: twelve students' notebooks run, then graded (about a minute and a half on two cores).
"""

from __future__ import annotations

import csv
import re
import shutil
import sys
import time
from pathlib import Path

import pytest
from nbgrader.api import Gradebook
from support.command_line import installed_viewcopy
from support.course_notebook import ROOT
from support.oracles import expected_scores, lock_of

from viewcopy.course.assignment import ASSIGNMENT, COURSE_ID, NOTEBOOK, NOTEBOOK_ID
from viewcopy.course.folder import Course
from viewcopy.demo.synthetic import synthetic_class

pytestmark = [pytest.mark.course, pytest.mark.slow]

STUDENTS = [s.student_id for s in synthetic_class(ROOT)]
"""The synthetic class the demo hands in, by id."""
BY_HAND = "?"
"""What the table shows for a cell no one has graded yet (answers 21-25, graded in formgrader)."""


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """`viewcopy demo --course <fresh folder>` run once from the repository: (course, stdout)."""
    course = tmp_path_factory.mktemp("demo").resolve() / "demo_course"
    started = time.monotonic()
    done = installed_viewcopy("demo", "--course", str(course), cwd=ROOT, timeout=1200)
    print(f"viewcopy demo took {time.monotonic() - started:.0f} s")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    return course, done.stdout


def printed_table(stdout: str) -> tuple[list[str], list[str], dict[str, list[str]]]:
    """The per-student table the demo prints: its columns, its `max` row and each student's row,
    cell by cell as printed (columns are two or more spaces apart; no cell holds a space)."""
    lines = stdout.splitlines()
    top = next(i for i, line in enumerate(lines) if line.startswith("student ") and "total" in line)
    header = re.split(r"\s{2,}", lines[top].strip())
    rows: dict[str, list[str]] = {}
    for line in lines[top + 1 :]:
        if not line.strip():
            break
        first, *cells = line.split()
        assert first not in rows, f"{first} printed twice"
        rows[first] = cells
    return header, rows.pop("max"), rows


Cells = dict[str, tuple[float | None, float]]
"""A student's grade cells: {grade id: (score, or None where nothing is graded yet; max score)}."""


def gradebook_cells(course: Path, scratch: Path) -> dict[str, Cells]:
    """Each student's grade cells, read with nbgrader's own Gradebook from a copy of the course's
    file (Gradebook writes what it misses)."""
    copy = shutil.copy(course / "gradebook.db", scratch / "gradebook.db")
    out = {}
    with Gradebook(f"sqlite:///{copy}", COURSE_ID) as gradebook:
        for student in gradebook.students:
            notebook = gradebook.find_submission_notebook(NOTEBOOK_ID, ASSIGNMENT, student.id)
            out[student.id] = {
                g.name: (
                    None if g.auto_score is None and g.manual_score is None else g.score,
                    g.max_score,
                )
                for g in notebook.grades
            }
    return out


def cell_of_column(column: str, cells) -> str:
    """The one grade cell a printed column names: the same id, or the id with its leading words
    (`test_`, `check_`) left off."""
    (cell,) = [c for c in cells if c == column or c.endswith(f"_{column}")]
    return cell


def close(printed: str, truth: float) -> bool:
    """The printed number is the true one to the six significant digits the table prints."""
    return float(printed) == pytest.approx(truth, rel=1e-5, abs=1e-9)


def test_every_synthetic_student_is_graded_and_nothing_failed(demo, tmp_path):
    course, stdout = demo
    assert f"{len(STUDENTS)} graded, 0 failed, 0 skipped" in stdout
    if sys.platform.startswith("linux"):  # each notebook that runs, in a kernel forked warm
        run = sum(s.runs for s in synthetic_class(ROOT))
        assert f"kernels: {run} forked from a warm template, 0 started fresh" in stdout, stdout
    with (Course.at(course).grade_logs(ASSIGNMENT) / "record.csv").open() as handle:
        record = {row["student_id"]: row["status"] for row in csv.DictReader(handle)}
    assert record == dict.fromkeys(STUDENTS, "graded")
    _, _, rows = printed_table(stdout)
    assert list(rows) == STUDENTS
    assert set(gradebook_cells(course, tmp_path)) == set(STUDENTS)


def test_each_printed_score_is_the_gradebooks(demo, tmp_path):
    course, stdout = demo
    header, maxima, rows = printed_table(stdout)
    assert header[0] == "student" and header[-2:] == ["auto total", "by hand"]
    gradebook = gradebook_cells(course, tmp_path)
    for student, held in gradebook.items():
        cells = list(held)
        named = [cell_of_column(column, cells) for column in header[1:-2]]
        assert sorted(named) == sorted(cells), "every grade cell is one column"
        *top, top_total = maxima
        for printed, cell in zip(top, named, strict=True):
            assert close(printed, held[cell][1]), cell
        assert close(top_total, sum(most for _, most in held.values()))

        *values, total, by_hand = rows[student]
        for value, cell in zip(values, named, strict=True):
            score, _ = held[cell]
            if score is None:
                assert value == BY_HAND, (student, cell)
            else:
                assert close(value, score), (student, cell, value, score)
        assert close(total, sum(score for score, _ in held.values() if score is not None))
        assert int(by_hand) == sum(score is None for score, _ in held.values()), student


def test_the_totals_are_what_nbgrader_export_wrote(demo):
    course, stdout = demo
    _, maxima, rows = printed_table(stdout)
    *_, top_total = maxima
    with (course / "grades.csv").open(newline="") as handle:
        exported = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert set(exported) == set(STUDENTS)
    for student, printed in rows.items():
        row = exported[student]
        assert row["assignment"] == ASSIGNMENT
        assert float(row["late_submission_penalty"]) == 0, student
        *_, total, _ = printed
        assert close(total, float(row["score"])), student  # a cell not graded yet counts 0
        assert close(top_total, float(row["max_score"])), student


def test_each_student_scores_what_the_profile_must(demo, tmp_path):
    course, _ = demo
    gradebook = gradebook_cells(course, tmp_path)
    for student in synthetic_class(ROOT):
        expected = expected_scores(student, lock_of(course, student.student_id))
        held = {cell: score for cell, (score, _) in gradebook[student.student_id].items()}
        assert held == pytest.approx(expected), student.student_id


def test_it_says_what_to_do_next_and_each_file_it_names_is_there(demo):
    course, stdout = demo
    after = stdout[stdout.index("the five by hand:") :]
    lines = dict(line.strip().split(":", 1) for line in after.splitlines() if ":" in line)
    five = re.findall(r"(\d+): \d+ groups? for (\d+) answers", lines["the five by hand"])
    assert five == [(str(item), str(len(STUDENTS))) for item in range(21, 26)]
    assert lines["group"].strip().startswith(f"viewcopy five --course {course} ")
    feedback = lines["feedback"].strip()
    page = Path(NOTEBOOK).with_suffix(".html").name
    assert feedback == str(course / "feedback" / "<student>" / ASSIGNMENT / page)
    for student in STUDENTS:
        assert Path(feedback.replace("<student>", student)).is_file(), student
    assert lines["grades"].strip() == f"{course / 'grades.csv'} (nbgrader export)"
    assert lines["gradebook"].strip().startswith(f"{course / 'gradebook.db'};")
    report = course / "reports" / ASSIGNMENT / "report.html"
    assert lines["report"].strip() == f"{report} (again: viewcopy report --course {course})"
    assert report.read_text().startswith("<!DOCTYPE html>")
    assert lines["worth a look"].count("`") == 6, lines["worth a look"]  # three ops named
    pair = lines["hand-ins that look alike"].split(" (")[0].strip()
    assert set(pair.split(" and ")) == {"fifteen", "renamed"}  # the copying pair, no other
    guide = ROOT / "docs" / "instructors.md"
    assert lines["next"].strip() == f"{guide} (what to do next, step by step)"
    assert "## After the demo: what to do next" in guide.read_text()
