"""`viewcopy five` on the graded synthetic class: the groups it shows (the bank the class wrote
from says which answers mean the same), as JSON and as a table, without torch, pandas or
matplotlib; a grades file applied through the gradebook as formgrader would write it, seen in
feedback, never over a formgrader change; bad rows and bad arguments each one clear error."""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from nbgrader.api import Gradebook
from support.hand_grades import manual, writable_copy
from support.oracles import answer_meaning
from support.sandboxing import grade_as_the_product
from support.without_heavy import viewcopy_without_heavy

from viewcopy import cli
from viewcopy.course.assignment import ASSIGNMENT, COURSE_ID, NOTEBOOK_ID, run_nbgrader
from viewcopy.course.folder import Course
from viewcopy.five.grades import ledger_path
from viewcopy.five.questions import five

pytestmark = [pytest.mark.course]


@pytest.fixture
def course(cycle, tmp_path) -> Path:
    """A copy of the graded course, its gradebook included, for a test that writes grades."""
    return writable_copy(cycle[0], tmp_path / "course")


def group_of(questions, item: int, student: str):
    (question,) = [q for q in questions if q.item == item]
    return next(g for g in question.groups if student in g.students)


def write_grades(path: Path, rows: list[tuple]) -> Path:
    with path.open("w", newline="") as sink:
        writer = csv.writer(sink)
        writer.writerow(["question", "group", "score", "comment"])
        writer.writerows(rows)
    return path


def test_json_gives_every_group_its_members_representative_and_size(cycle, capsys):
    course, results = cycle
    assert cli.main(["five", "--course", str(course), "--question", "24", "--format", "json"]) == 0
    groups = json.loads(capsys.readouterr().out)
    assert {g["question"] for g in groups} == {24}
    assert sum(g["size"] for g in groups) == len(results)
    assert sorted(s for g in groups for s in g["students"]) == sorted(results)
    for g in groups:
        assert g["size"] == len(g["students"]) and re.fullmatch(r"24-[0-9a-f]{6}", g["group"])
        meanings = {answer_meaning(results[s].student, 24) for s in g["students"]}
        assert len(meanings) == 1
    assert len({g["group"] for g in groups}) == len(groups)


def test_five_reads_a_graded_class_without_torch_pandas_or_matplotlib(cycle, capsys):
    course, _ = cycle
    args = ["five", "--course", str(course), "--format", "json"]
    assert cli.main(args) == 0
    here = capsys.readouterr().out
    done = viewcopy_without_heavy(*args)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(here)


def test_a_grades_file_grades_exactly_the_members_and_feedback_carries_the_comment(course):
    questions = five(Course.at(course))
    right, wrong = group_of(questions, 21, "perfect"), group_of(questions, 21, "typical")
    grades = write_grades(
        course / "grades.csv",
        [(21, right.group, 2, "Strides and storage: exactly."), (21, wrong.group, 0.5, "No.")],
    )
    before = manual(course, 22)
    assert cli.main(["five", "--course", str(course), "--apply", str(grades)]) == 0
    after = manual(course, 21)
    for student, (score, comment) in after.items():
        if student in right.students:
            assert (score, comment) == (2, "Strides and storage: exactly.")
        elif student in wrong.students:
            assert (score, comment) == (0.5, "No.")
        else:
            assert (score, comment) == (None, None), student
    assert manual(course, 22) == before
    run_nbgrader(course, "generate_feedback", ASSIGNMENT, "--student", "perfect", "--force")
    (page,) = (course / "feedback" / "perfect" / ASSIGNMENT).glob("*.html")
    text = page.read_text()
    assert "Strides and storage: exactly." in text and "Rubric for the 2 points" not in text


def test_a_grade_changed_in_formgrader_wins_over_a_later_apply(course, capsys):
    group = group_of(five(Course.at(course)), 23, "perfect")
    first = write_grades(course / "first.csv", [(23, group.group, 2, "right")])
    assert cli.main(["five", "--course", str(course), "--apply", str(first)]) == 0
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gradebook:
        # what formgrader's grade and comment handlers write for one student
        grade = gradebook.find_grade("answer_23", NOTEBOOK_ID, ASSIGNMENT, "memoriser")
        comment = gradebook.find_comment("answer_23", NOTEBOOK_ID, ASSIGNMENT, "memoriser")
        grade.manual_score, comment.manual_comment = 1.0, "see me"
        gradebook.db.commit()
    capsys.readouterr()
    again = write_grades(course / "again.csv", [(23, group.group, 1.5, "mostly")])
    assert cli.main(["five", "--course", str(course), "--apply", str(again)]) == 0
    assert "memoriser (answer_23)" in capsys.readouterr().out
    now = manual(course, 23)
    assert now["memoriser"] == (1.0, "see me")
    assert all(now[s] == (1.5, "mostly") for s in group.students if s != "memoriser")


TEACHING_ASSISTANT = """
import sys
from nbgrader.api import Gradebook
url, course_id, notebook, assignment, student, cell, score = sys.argv[1:]
print("ready", flush=True)
sys.stdin.readline()
with Gradebook(url, course_id) as gradebook:  # what formgrader's grade handler runs
    grade = gradebook.find_grade(cell, notebook, assignment, student)
    grade = gradebook.find_grade_by_id(grade.id)
    grade.manual_score = float(score)
    grade.needs_manual_grade = False
    gradebook.db.commit()
print("saved", flush=True)
"""


def test_a_grade_formgrader_saves_while_the_five_apply_is_never_overwritten(course, monkeypatch):
    """A teaching assistant saves a grade (another process, as formgrader's handler writes it)
    after the apply has read the group's grades and before it writes them: the apply holds the
    gradebook from its first read, so the assistant's save waits and lands after it."""
    import viewcopy.five.grades as grades

    group = group_of(five(Course.at(course)), 22, "perfect")
    student = next(s for s in group.students if s != "perfect")
    argv = [f"sqlite:///{course / 'gradebook.db'}", COURSE_ID, NOTEBOOK_ID, ASSIGNMENT, student]
    assistant = subprocess.Popen(
        [sys.executable, "-c", TEACHING_ASSISTANT, *argv, "answer_22", "0.5"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    said: queue.Queue[str] = queue.Queue()
    threading.Thread(
        target=lambda: [said.put(line) for line in assistant.stdout], daemon=True
    ).start()
    assert said.get(timeout=60) == "ready\n"
    reading, asked = grades.answer_cell, []

    def assistant_saves_meanwhile(item: int) -> str:
        if not asked:  # the apply's first read: the assistant saves now
            asked.append(item)
            assistant.stdin.write("go\n")
            assistant.stdin.flush()
            with contextlib.suppress(queue.Empty):  # saved at once unless the gradebook is held
                asked.append(said.get(timeout=3))
        return reading(item)

    monkeypatch.setattr(grades, "answer_cell", assistant_saves_meanwhile)
    rows = write_grades(course / "grades.csv", [(22, group.group, 2, "right")])
    assert cli.main(["five", "--course", str(course), "--apply", str(rows)]) == 0
    assert len(asked) == 1  # the save waited for the apply to end
    assert said.get(timeout=30) == "saved\n" and assistant.wait(timeout=30) == 0
    now = manual(course, 22)
    assert now[student][0] == 0.5  # the assistant's, saved last
    assert all(now[s][0] == 2 for s in group.students if s != student)


def test_a_hand_in_replaced_as_the_five_read_is_named_as_skipped(course, monkeypatch, capsys):
    """A regrade replaces a hand-in's autograded folder between the five's listing and its read:
    the others are grouped and applied, that one named."""
    import viewcopy.five.questions as questions

    listed = questions.graded_notebooks(Course.at(course), ASSIGNMENT)
    moved = listed["typical"]
    moved.rename(moved.with_suffix(".replaced"))
    monkeypatch.setattr(questions, "graded_notebooks", lambda *_: listed)
    (question,) = five(Course.at(course), questions=[21])
    assert question.skipped == ("typical",)
    assert {s for g in question.groups for s in g.students} == set(listed) - {"typical"}
    assert cli.main(["five", "--course", str(course), "--question", "21"]) == 0
    assert "skipped, being regraded as this ran" in capsys.readouterr().out
    group = group_of([question], 21, "perfect")
    rows = write_grades(course / "grades.csv", [(21, group.group, 2, "right")])
    assert cli.main(["five", "--course", str(course), "--apply", str(rows)]) == 0
    said = capsys.readouterr().out
    assert f"{group.size} answer grades written" in said and "typical" in said


def test_bad_rows_are_all_named_and_nothing_is_written(course, capsys):
    questions = five(Course.at(course))
    good = group_of(questions, 22, "perfect").group
    grades = write_grades(
        course / "bad.csv",
        [
            (26, good, 1, ""),
            (22, "22-000000", 1, ""),
            (22, good, 3, "too much"),
            (22, good, "two", ""),
            (23, group_of(questions, 23, "typical").group, 0, "fine row"),
            (23, group_of(questions, 23, "typical").group, 1, "graded twice"),
        ],
    )
    digest = hashlib.sha256((course / "gradebook.db").read_bytes()).hexdigest()
    assert cli.main(["five", "--course", str(course), "--apply", str(grades)]) == 2
    said = capsys.readouterr().err
    assert "5 bad rows, nothing written" in said
    for row in (2, 3, 4, 5, 7):
        assert f"row {row}:" in said
    assert "row 6:" not in said
    assert hashlib.sha256((course / "gradebook.db").read_bytes()).hexdigest() == digest
    assert not ledger_path(Course.at(course), ASSIGNMENT).exists()


def test_nothing_graded_or_a_question_outside_the_five_is_one_clear_error(cycle, tmp_path, capsys):
    assert cli.main(["five", "--course", str(tmp_path)]) == 2
    assert "no autograded hand-ins" in capsys.readouterr().err
    assert cli.main(["five", "--course", str(cycle[0]), "--question", "26"]) == 2
    said = capsys.readouterr().err
    assert "question 26 is not one of this course's questions (21, 22, 23, 24, 25:" in said
    missing = cycle[0] / "no-such.csv"
    assert cli.main(["five", "--course", str(cycle[0]), "--apply", str(missing)]) == 2
    assert f"cannot read {missing}" in capsys.readouterr().err


def test_the_table_shows_every_group_rubric_and_representative_within_100_columns(cycle, capsys):
    course, _ = cycle
    assert cli.main(["five", "--course", str(course)]) == 0
    table = capsys.readouterr().out
    assert all(len(line) <= 100 for line in table.splitlines())
    for question in five(Course.at(course)):
        assert question.rubric.splitlines()[0] in table
        for group in question.groups:
            assert f"[{group.group}] {group.size} answer" in table
            assert " ".join(group.representative.split()[:4]) in " ".join(table.split())


def test_the_questions_are_the_masters_reworded_or_added(the_class, tmp_path, capsys):
    """An instructor rewords question 22 and adds a 26th in the master, then generates and
    grades: `viewcopy five` shows the master's wording and exactly its questions."""
    import copy

    import nbformat
    from support.the_class import course_of

    from viewcopy.course.assignment import NOTEBOOK, grade_id

    course = course_of(the_class, tmp_path / "course", ["perfect", "typical"])
    master = course / "source" / ASSIGNMENT / NOTEBOOK
    notebook = nbformat.read(master, 4)
    by_id = {grade_id(c): c for c in notebook.cells}
    reworded = "In your own words: when does reshape copy after a transpose?"
    by_id["question_22"].source = f"**22.** {reworded}"
    added = []
    for name, source in (("question_26", "**26.** What does .contiguous() cost here?"),
                         ("answer_26", 'ANSWER_26 = """\n"""')):  # fmt: skip
        cell = copy.deepcopy(by_id[name.replace("26", "25")])
        cell.source, cell.id = source, name.replace("_", "-")
        cell.metadata.nbgrader["grade_id"] = name
        added.append(cell)
    cells = notebook.cells
    at = next(i for i, c in enumerate(cells) if grade_id(c) == "specific_25") + 1
    notebook.cells = [*cells[:at], *added, *cells[at:]]
    nbformat.write(notebook, master)
    run_nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    grade_as_the_product(course)

    asked = {q.item: q for q in five(Course.at(course))}
    assert sorted(asked) == [21, 22, 23, 24, 25, 26]
    assert asked[22].text == reworded and asked[26].text == "What does .contiguous() cost here?"
    assert asked[26].max_score == 2 and sum(g.size for g in asked[26].groups) == 2
    assert cli.main(["five", "--course", str(course), "--question", "27"]) == 2
    assert "question 27 is not one of this course's questions (21, 22, 23, 24, 25, 26:" in (
        capsys.readouterr().err
    )
    assert cli.main(["five", "--course", str(course), "--question", "22"]) == 0
    assert reworded in " ".join(capsys.readouterr().out.split())
