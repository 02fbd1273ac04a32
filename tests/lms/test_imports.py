"""`viewcopy lms csv`'s merge: the gradebook's totals in the LMS's own export, on exports made
from Canvas's and Moodle's documented layouts (tests/data/lms/), against a small gradebook this
module builds with nbgrader's own API (no kernel, no grading run). The written file is read
back with the csv module, and every expected score comes from the gradebook built here."""

from __future__ import annotations

import csv
import random
from pathlib import Path

import pytest
from support.course_notebook import ROOT

from viewcopy.course.assignment import ASSIGNMENT, COURSE_ID, NOTEBOOK_ID
from viewcopy.course.class_scores import GradebookScore, format_score
from viewcopy.course.folder import Course
from viewcopy.five.questions import QUESTIONS, answer_cell
from viewcopy.grading.record import FAILED, GRADED, HandInOutcome, record_path, write_record
from viewcopy.lms.errors import ImportFileError
from viewcopy.lms.import_file import merge_scores
from viewcopy.lms.student_matching import match
from viewcopy.lms.tool import LAB_TITLE

DATA = ROOT / "tests" / "data" / "lms"
CANVAS, MOODLE = DATA / "canvas_export.csv", DATA / "moodle_export.csv"
AUTOGRADED = {"check_twenty": 10.0, "check_next": 11.0}
HAND_GRADED = {answer_cell(q): 3.0 for q in QUESTIONS}
STUDENTS = {
    # id: (email, how the hand-in stands)
    "alice": ("alice@uni.example", "graded"),
    "bob": ("bob@uni.example", "pending"),
    "S1008": ("hank@uni.example", "pending"),
    "carol": ("carol@uni.example", "failed"),
    "dan": ("dan@uni.example", "none"),
    "erin": ("erin@uni.example", "graded"),
    "gina": ("gina@uni.example", "graded"),
}


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A course folder whose gradebook holds the assignment, the students and their grades, and
    whose grading record says carol's hand-in failed."""
    from nbgrader.api import Gradebook

    folder = tmp_path_factory.mktemp("lms") / "course"
    folder.mkdir()
    draw = random.Random(37)
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}", COURSE_ID) as gradebook:
        gradebook.add_assignment(ASSIGNMENT)
        gradebook.add_notebook(NOTEBOOK_ID, ASSIGNMENT)
        for name, top in AUTOGRADED.items():
            gradebook.add_grade_cell(name, NOTEBOOK_ID, ASSIGNMENT, max_score=top, cell_type="code")
        for name, top in HAND_GRADED.items():
            gradebook.add_grade_cell(
                name, NOTEBOOK_ID, ASSIGNMENT, max_score=top, cell_type="markdown"
            )
        for student, (email, state) in STUDENTS.items():
            gradebook.add_student(student, first_name=student.title(), email=email)
            if state == "none":
                continue
            with gradebook.db.no_autoflush:  # nbgrader builds the rows before adding them
                gradebook.add_submission(ASSIGNMENT, student)
            for name, top in {**AUTOGRADED, **HAND_GRADED}.items():
                grade = gradebook.find_grade(name, NOTEBOOK_ID, ASSIGNMENT, student)
                score = draw.randrange(int(2 * top) + 1) / 2  # halves: 27.5 as well as 36
                if name in AUTOGRADED:
                    grade.auto_score, grade.needs_manual_grade = score, False
                elif state != "pending":
                    grade.manual_score, grade.needs_manual_grade = score, False
            if student == "alice":  # a late hand-in: nbgrader's own penalty, in its own row
                (notebook,) = gradebook.find_submission(ASSIGNMENT, student).notebooks
                notebook.late_submission_penalty = 2.0
            gradebook.db.commit()
    record = record_path(Course.at(folder), ASSIGNMENT)
    record.parent.mkdir(parents=True)
    write_record(
        record,
        [
            HandInOutcome(s, FAILED if state == "failed" else GRADED, reason="kernel died")
            for s, (_, state) in STUDENTS.items()
            if state != "none"
        ],
    )
    return folder


def totals(course: Path) -> dict[str, float]:
    """Each submission's score as `nbgrader export` gives it (its grades' sum less the late
    penalty), the sum checked against the grades'."""
    from nbgrader.api import Gradebook

    out = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gradebook:
        for submission in gradebook.assignment_submissions(ASSIGNMENT):
            grades = [g for nb in submission.notebooks for g in nb.grades]
            assert submission.score == sum(g.score for g in grades)
            penalty = sum(nb.late_submission_penalty or 0 for nb in submission.notebooks)
            out[submission.student.id] = max(0.0, submission.score - penalty)
    return out


def read_back(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8-sig") as source:
        return list(csv.reader(source))


def cell(rows: list[list[str]], key_column: str, key: str, column: str) -> str:
    header = rows[0]
    (row,) = [r for r in rows[1:] if r[header.index(key_column)] == key]
    return row[header.index(column)]


def test_canvas_holds_the_gradebook_totals_in_the_assignments_own_column(course, tmp_path):
    result = merge_scores(Course.at(course), ASSIGNMENT, CANVAS, "canvas")
    out = result.write(tmp_path / "import.csv")
    rows, total = read_back(out), totals(course)
    column = "View or copy (M01.02) (1202)"
    assert result.column == column and not result.added
    for student, login in {"alice": "alice", "bob": "Bob@Uni.Example", "S1008": "hank"}.items():
        assert float(cell(rows, "SIS Login ID", login, column)) == total[student]
    assert set(result.written) == {"alice", "bob", "S1008"}
    points = next(r for r in rows if "Points Possible" in r[0])
    assert float(points[rows[0].index(column)]) == sum({**AUTOGRADED, **HAND_GRADED}.values())


def test_canvas_keeps_every_row_and_column_of_its_export(course, tmp_path):
    rows = read_back(
        merge_scores(Course.at(course), ASSIGNMENT, CANVAS, "canvas").write(tmp_path / "i.csv")
    )
    original = read_back(CANVAS)
    column = original[0].index("View or copy (M01.02) (1202)")
    assert len(rows) == len(original) and rows[0] == original[0]
    assert rows[1] == original[1] and "Manual Posting" in rows[1]  # the posting row, as it was
    assert rows[2][0] == original[2][0] == "    Points Possible"
    for before, after in zip(original, rows, strict=True):
        assert before[:column] + before[column + 1 :] == after[:column] + after[column + 1 :]


def test_canvas_without_the_column_gets_a_new_one_with_its_points(course, tmp_path):
    original = read_back(CANVAS)
    drop = original[0].index("View or copy (M01.02) (1202)")
    export = tmp_path / "export.csv"
    with export.open("w", newline="", encoding="utf-8") as sink:
        csv.writer(sink).writerows(r[:drop] + r[drop + 1 :] for r in original)
    result = merge_scores(Course.at(course), ASSIGNMENT, export, "canvas")
    rows, total = read_back(result.write(tmp_path / "import.csv")), totals(course)
    assert result.added and rows[0][-1] == LAB_TITLE == result.column
    assert rows[1][-1] == "" and float(rows[2][-1]) == sum({**AUTOGRADED, **HAND_GRADED}.values())
    assert float(cell(rows, "SIS Login ID", "alice", LAB_TITLE)) == total["alice"]
    assert cell(rows, "SIS Login ID", "carol", LAB_TITLE) == ""
    assert [r[:-1] for r in rows] == [r[:drop] + r[drop + 1 :] for r in original]


def test_canvas_points_possible_become_the_gradebooks_maximum_and_the_change_is_said(
    course, tmp_path
):
    export = tmp_path / "export.csv"
    export.write_text(CANVAS.read_text().replace(",10.00,36.00,10.00,", ",10.00,100.00,10.00,"))
    result = merge_scores(Course.at(course), ASSIGNMENT, export, "canvas")
    rows, original = read_back(result.write(tmp_path / "i.csv")), read_back(export)
    column = original[0].index(result.column)
    assert original[2][column] == "100.00" and rows[2][column] == "36"
    assert (
        rows[2][:column] + rows[2][column + 1 :] == original[2][:column] + original[2][column + 1 :]
    )
    summary = result.summary()
    assert (
        "Canvas had 100.00 points possible for this assignment: the import makes it 36" in summary
    )


def test_canvas_names_whoever_it_could_not_match_both_ways(course):
    result = merge_scores(Course.at(course), ASSIGNMENT, CANVAS, "canvas")
    summary = result.summary()
    lms_only = summary.split("In Canvas, not in the gradebook")[1].split("\n\n")[0]
    assert "Fischer, Frank" in lms_only and "Ahn, Alice" not in lms_only
    gradebook_only = summary.split("In the gradebook, not in the Canvas export")[1]
    for student in ("erin", "gina"):
        assert f"  {student} (" in gradebook_only, summary
    assert set(result.matching.gradebook_only) == {"erin", "gina"}


def test_a_failed_grading_and_no_hand_in_keep_the_lms_cell_and_are_named(course, tmp_path):
    result = merge_scores(Course.at(course), ASSIGNMENT, CANVAS, "canvas")
    rows, original = read_back(result.write(tmp_path / "import.csv")), read_back(CANVAS)
    column = result.column
    for login in ("carol", "dan"):
        kept = cell(original, "SIS Login ID", login, column)
        assert cell(rows, "SIS Login ID", login, column) == kept
    summary = result.summary()
    assert "carol: grading failed: kernel died" in summary
    assert "dan: no graded hand-in" in summary
    assert "carol" not in result.written and "dan" not in result.written


def test_pending_hand_grading_is_said(course):
    summary = merge_scores(Course.at(course), ASSIGNMENT, CANVAS, "canvas").summary()
    first, last = QUESTIONS[0], QUESTIONS[-1]
    assert f"2 students have answers {first}-{last} not yet hand-graded (S1008, bob)" in summary


def test_moodle_gets_a_new_grade_item_column_and_ambiguous_rows_are_never_guessed(course, tmp_path):
    result = merge_scores(Course.at(course), ASSIGNMENT, MOODLE, "moodle")
    rows, original, total = (
        read_back(result.write(tmp_path / "i.csv")),
        read_back(MOODLE),
        totals(course),
    )
    header = rows[0]
    assert header[-2:] == [LAB_TITLE, "Last downloaded from this course"] and result.added
    for student, email in {
        "alice": "Alice@Uni.Example",
        "bob": "bob@uni.example",
        "S1008": "hank@uni.example",
    }.items():
        assert float(cell(rows, "Email address", email, LAB_TITLE)) == total[student]
    ginas = [r for r in rows if r[header.index("Email address")] == "gina@uni.example"]
    assert len(ginas) == 2 and all(r[header.index(LAB_TITLE)] == "-" for r in ginas)
    assert cell(rows, "Email address", "carol@uni.example", LAB_TITLE) == "-"
    assert [r[:-2] + r[-1:] for r in rows] == original  # every row and column kept
    (ambiguous,) = result.matching.ambiguous
    assert ambiguous.students == ("gina",) and len(ambiguous.rows) == 2
    summary = result.summary()
    assert "Ambiguous, never guessed" in summary and "gina and 2 rows" in summary
    assert "Frank Fischer" in summary.split("In Moodle, not in the gradebook")[1]
    assert "set it to 36 in Moodle" in summary


def test_moodle_fills_an_existing_item_column(course, tmp_path):
    export = tmp_path / "export.csv"
    text = MOODLE.read_text().replace("Assignment: Lab 1: Tensors (Real)", f"{LAB_TITLE} (Real)")
    export.write_text(text)
    result = merge_scores(Course.at(course), ASSIGNMENT, export, "moodle")
    rows = read_back(result.write(tmp_path / "import.csv"))
    assert not result.added and rows[0] == read_back(export)[0]
    assert float(cell(rows, "ID number", "S1001", f"{LAB_TITLE} (Real)")) == totals(course)["alice"]


def test_bad_exports_are_named_with_the_missing_part_and_the_fix(course, tmp_path):
    with pytest.raises(ImportFileError, match=r"moodle_export\.csv is not a Canvas .*'Student'"):
        merge_scores(Course.at(course), ASSIGNMENT, MOODLE, "canvas")
    no_login = tmp_path / "no_login.csv"
    no_login.write_text(CANVAS.read_text().replace("SIS Login ID", "Login"))
    with pytest.raises(ImportFileError, match=r"no_login\.csv .*'SIS Login ID'.*Grades > Export"):
        merge_scores(Course.at(course), ASSIGNMENT, no_login, "canvas")
    no_points = tmp_path / "no_points.csv"
    no_points.write_text(
        "\n".join(
            line for line in CANVAS.read_text().splitlines() if "Points Possible," not in line
        )
    )
    with pytest.raises(ImportFileError, match=r"no_points\.csv has no 'Points Possible' row"):
        merge_scores(Course.at(course), ASSIGNMENT, no_points, "canvas")
    with pytest.raises(
        ImportFileError, match=r"canvas_export\.csv is not a Moodle .*'Email address'"
    ):
        merge_scores(Course.at(course), ASSIGNMENT, CANVAS, "moodle")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(ImportFileError, match=r"empty\.csv is empty"):
        merge_scores(Course.at(course), ASSIGNMENT, empty, "moodle")
    with pytest.raises(ImportFileError, match=r"absent\.csv: no such file"):
        merge_scores(Course.at(course), ASSIGNMENT, tmp_path / "absent.csv", "moodle")
    with pytest.raises(ImportFileError, match=r"is the export itself"):
        merge_scores(Course.at(course), ASSIGNMENT, CANVAS, "canvas").write(CANVAS)


def test_a_course_without_the_assignment_or_a_gradebook_is_named(course, tmp_path):
    with pytest.raises(ImportFileError, match=r"no assignment 'lab_2'"):
        merge_scores(Course.at(course), "lab_2", CANVAS, "canvas")
    with pytest.raises(ImportFileError, match=r"has no gradebook"):
        merge_scores(Course.at(tmp_path), ASSIGNMENT, CANVAS, "canvas")


def test_a_semicolon_export_with_a_bom_is_written_back_the_same_way(course, tmp_path):
    export = tmp_path / "export.csv"
    rows = read_back(CANVAS)
    with export.open("w", newline="", encoding="utf-8-sig") as sink:
        csv.writer(sink, delimiter=";", lineterminator="\r\n").writerows(rows)
    out = merge_scores(Course.at(course), ASSIGNMENT, export, "canvas").write(
        tmp_path / "import.csv"
    )
    raw = out.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and b"\r\n" in raw
    with out.open(newline="", encoding="utf-8-sig") as source:
        back = list(csv.reader(source, delimiter=";"))
    assert back[0] == rows[0] and len(back) == len(rows)


def test_matching_trims_ignores_case_and_never_guesses():
    students = [
        GradebookScore("alice", email="alice@uni.example"),
        GradebookScore("bob", email="b@x.org"),
    ]
    rows = {
        3: {"Email address": "  ALICE@Uni.Example "},
        4: {"ID number": "bob", "Email address": "someone@else.org"},
        5: {"ID number": "B@X.ORG"},
        6: {"ID number": "nobody"},
    }
    found = match(rows, students)
    assert [(m.row, m.student, m.column) for m in found.matches] == [(3, "alice", "Email address")]
    assert [(a.rows, a.students) for a in found.ambiguous] == [((4, 5), ("bob",))]
    assert found.lms_only == (6,) and found.gradebook_only == ()


@pytest.mark.parametrize(
    "value, written",
    [(36.0, "36"), (27.5, "27.5"), (27.25, "27.25"), (1 / 3, "0.33"), (0.0, "0"), (-0.0, "0")],
)
def test_scores_are_written_as_a_person_reads_them(value, written):
    assert format_score(value) == written
