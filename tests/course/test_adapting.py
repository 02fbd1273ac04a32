"""docs/adapting.md's worked example done end to end, as an instructor does it before a term:
leave out the stretch (classify and its two test cells), give the predictions 10 points, reword
question 22 and add a question 26, declare the course's own parts and twelve next ops of its own
(`c.CourseDeclaration`), check the course, release again, hand in, grade. The kernel draws from the
course's pool as the grader does (a perfect hand-in earns the next ops' full credit), the
feedback's table shows the declared parts, `viewcopy five` the course's questions. The master's
total, 36 as shipped, is 35 after the edit (10 + 2 + 4 + 15 + 2 + 2), and every place
that shows a total or a score agrees: the release's opening table, the gradebook, the feedback
page and its table, the LMS import file (`viewcopy lms csv`) and the class report (`viewcopy
report`), which shows no classify runs for a course without the stretch.

The course holds no hand-in of the old release: nbgrader refuses to grade a hand-in whose graded
cells the gradebook no longer has, so a course adapts before the term starts.
"""

from __future__ import annotations

import copy
import csv
import re
from pathlib import Path

import nbformat
import pytest
from support.course_notebook import ROOT
from support.sandboxing import grade_as_the_product

from viewcopy import cli
from viewcopy.course.assignment import (
    ASSIGNMENT,
    NOTEBOOK,
    enrol,
    grade_id,
    read_grades,
    run_nbgrader,
)
from viewcopy.course.check import release_declaration
from viewcopy.course.class_scores import class_scores, format_score
from viewcopy.course.folder import Course, build_course
from viewcopy.demo.synthetic import hand_in, synthetic_class
from viewcopy.display.parts_table import parts_frame
from viewcopy.exercise.graded_parts import declared_parts
from viewcopy.exercise.next_ops import declared_ops
from viewcopy.exercise.next_predictions import hand_in_draw
from viewcopy.five.questions import five
from viewcopy.grading.grade import GRADED
from viewcopy.locking.file import read_lock
from viewcopy.plugins.points import graded_points

pytestmark = pytest.mark.course

LEFT_OUT = ("classify_intro", "classify", "test_classify_visible", "test_classify_hidden")
"""The stretch: its markdown, the classify cell and its two test cells."""
TOTAL = 35
"""The adapted master's total: 10 + 2 + 4 + 15 + 2 + 2 (shipped: 5 + 2 + 4 + 15 + 2 + 8 = 36)."""
STUDENTS = ("perfect", "fifteen")
"""All right; and 15/20 with a rule for every miss (partial credit for the predictions)."""
COLUMN = "View or copy (M01.02) (1202)"
CANVAS_EXPORT = f"""Student,ID,SIS User ID,SIS Login ID,Section,{COLUMN}
    Points Possible,,,,,36.00
"Perfect, Pat",2001,S2001,perfect,M01 Lab A,
"Fifteen, Fran",2002,S2002,fifteen,M01 Lab A,
"""
"""Canvas's gradebook export as it stood before the adaptation (the lab worth 36)."""


PARTS = [
    {"name": "predict", "cells": ["score_predictions", "check_rules_after"],
     "what": "the twenty and the rules that would have saved them", "minutes": 25},
    {"name": "transfer", "cells": ["score_next"], "what": "ten unseen ops", "minutes": 15},
    {"name": "explain", "cells": [*(f"{kind}_{n}" for n in range(21, 26)
                                    for kind in ("answer", "specific")), "answer_26"],
     "what": "the five, and a question of the course's own", "minutes": 20},
    {"name": "production", "cells": ["score_production"], "what": "the model", "minutes": 15},
]  # fmt: skip
OWN_OPS = [
    ("strides", "x.t().unflatten(0, (3, 2))"),
    ("strides", "x.permute(1, 0).t()"),
    ("strides", "x.unsqueeze(1).squeeze(1)"),
    ("index", "x[::2, 1::2]"),
    ("index", "x.narrow(0, 1, 2).t()"),
    ("flatten", "x.view(2, 12).flatten()"),
    ("flatten", "x.t().reshape(-1)"),
    ("dtype", "x.mT.view(torch.float64)"),
    ("dtype", "x.to(torch.float16).float()"),
    ("gather", "x[[0, 2], :]"),
    ("join", "torch.cat([x, x])"),
    ("broadcast", "x[0].expand(4, 6)"),
]
"""The course's own next ops (family, op on x): twelve, so that most draws hold one."""


def own_ops() -> list[dict[str, str]]:
    return [{"op": op, "family": family} for family, op in OWN_OPS]


REWORDED = "In your own words: when does reshape copy after a transpose?"
ASKED = "What does .contiguous() cost on a channels-last activation?"


def adapt(course: Path) -> None:
    """Leave out the stretch, give the predictions 10 points, reword question 22 and add a
    question 26 graded by hand (2 points), as nbformat writes them; declare the course's parts
    and its own next ops in its config."""
    with (course / "nbgrader_config.py").open("a") as config:
        config.write(f"c.CourseDeclaration.parts = {PARTS!r}\n")
        config.write(f"c.CourseDeclaration.next_ops = {own_ops()!r}\n")
    master = course / "source" / ASSIGNMENT / NOTEBOOK
    notebook = nbformat.read(master, 4)
    notebook.cells = [c for c in notebook.cells if grade_id(c) not in LEFT_OUT]
    by_id = {grade_id(c): c for c in notebook.cells}
    by_id["score_predictions"].metadata.nbgrader["points"] = 10
    by_id["question_22"].source = f"**22.** {REWORDED}"
    added = []
    for name, source in (
        ("question_26", f"**26.** {ASKED}"),
        ("answer_26", 'ANSWER_26 = """\n"""'),
    ):
        cell = copy.deepcopy(by_id[name.replace("26", "25")])  # a question and its answer
        cell.source, cell.id = source, name.replace("_", "-")
        cell.metadata.nbgrader["grade_id"] = name
        added.append(cell)
    at = notebook.cells.index(by_id["specific_25"]) + 1
    notebook.cells[at:at] = added
    nbformat.write(notebook, master)


def course_check(course: Path, capsys) -> tuple[int, str]:
    """`viewcopy course check --course COURSE`: its exit status and what it printed."""
    status = cli.main(["course", "check", "--course", str(course)])
    return status, capsys.readouterr().out


def feedback(course: Path, student: str) -> tuple[float, float, dict[str, dict[str, str]]]:
    """The student's feedback page: its score, its maximum and the opening table of graded
    parts (part -> column -> cell)."""
    page = (course / "feedback" / student / ASSIGNMENT / "view_or_copy.html").read_text()
    score, top = re.search(
        r"Feedback: view_or_copy \(Score: ([0-9.]+) / ([0-9.]+)\)", page
    ).groups()
    tables = re.findall(r'<table class="viewcopy-table">(.*?)</table>', page, re.S)
    (parts,) = [t for t in tables if "<th>part</th>" in t]
    head, body = parts.split("</thead>")
    columns = re.findall(r"<th>(.*?)</th>", head)[1:]
    rows = {
        name: dict(zip(columns, re.findall(r"<td[^>]*>(.*?)</td>", cells), strict=True))
        for name, cells in re.findall(r"<tr><th[^>]*>(.*?)</th>(.*?)</tr>", body)
    }
    return float(score), float(top), rows


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8-sig") as source:
        return list(csv.DictReader(source))


def canvas_import(course: Path, folder: Path, capsys) -> tuple[list[dict[str, str]], str]:
    """`viewcopy lms csv --format canvas` on CANVAS_EXPORT: the import file's rows and what the
    command said."""
    export, imported = folder / "canvas_export.csv", folder / "canvas_import.csv"
    export.write_text(CANVAS_EXPORT)
    command = ["lms", "csv", "--format", "canvas", "--export", str(export), "--out", str(imported)]
    status = cli.main([*command, "--course", str(course)])
    said = capsys.readouterr().out
    assert status == 0, said
    return read_csv(imported), said


def report_numbers(course: Path, out: Path, capsys) -> dict[tuple[str, str, str], str]:
    """`viewcopy report --course COURSE --out OUT`: report.csv's values by (section, key,
    measure)."""
    status = cli.main(["report", "--course", str(course), "--out", str(out)])
    assert status == 0, capsys.readouterr()
    capsys.readouterr()
    return {
        (r["section"], r["key"], r["measure"]): r["value"] for r in read_csv(out / "report.csv")
    }


def test_the_worked_example_is_one_total_everywhere(tmp_path, capsys):
    course = tmp_path / "course"
    build_course(ROOT, course, {})  # the shipped master released: no hand-in yet
    adapt(course)
    status, said = course_check(course, capsys)
    assert status == 1, said
    assert "the release is older than its master" in said
    assert "the release is older than the course's declaration" in said
    assert f"{ASSIGNMENT} is worth 36 points there and {TOTAL} in the master" in said

    run_nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    status, said = course_check(course, capsys)
    assert status == 0 and "is consistent" in said, said
    release = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, 4)
    points = graded_points(release)
    assert not set(LEFT_OUT) & {grade_id(c) for c in release.cells}
    assert points["score_predictions"] == 10
    assert sum(points.values()) == TOTAL == parts_frame(points=points).loc["total", "points"]
    assert release_declaration(release) == (declared_parts(PARTS), declared_ops(own_ops()))

    students = {s.student_id: s for s in synthetic_class(ROOT)}
    for student in STUDENTS:
        hand_in(students[student], course)
    enrol(course, {s: students[s].profile for s in STUDENTS})
    outcomes = grade_as_the_product(course)
    assert {o.student_id: o.status for o in outcomes} == dict.fromkeys(STUDENTS, GRADED), outcomes
    graded = Course.at(course)
    drawn = {s: hand_in_draw(read_lock(graded.hand_in(s, ASSIGNMENT))) for s in STUDENTS}
    assert read_grades(course)["perfect"]["score_next"] == (4, 4), drawn["perfect"]
    asked = {q.item: q.text for q in five(graded)}
    assert sorted(asked) == [21, 22, 23, 24, 25, 26]
    assert (asked[22], asked[26]) == (REWORDED, ASKED)

    maximum, scores = class_scores(graded, ASSIGNMENT)
    given = {s: scores[s].score for s in STUDENTS}
    assert maximum == TOTAL
    grades = read_grades(course)
    for student in STUDENTS:  # the gradebook: its cells, the stretch's not among them
        cells = grades[student]
        assert not set(LEFT_OUT) & cells.keys()
        assert sum(top for _, top in cells.values()) == TOTAL
        known = sum(score for score, _ in cells.values() if score is not None)
        assert round(known, 2) == given[student]
    assert given["fifteen"] < given["perfect"]  # two hand-ins, two scores

    run_nbgrader(course, "generate_feedback", ASSIGNMENT, "--force")
    for student in STUDENTS:
        score, top, parts = feedback(course, student)
        assert (score, top) == (given[student], TOTAL), student
        assert float(parts["total"]["points"]) == TOTAL
        earned = parts["total"]["your score"].removesuffix(" + by hand")  # answers 21-25
        assert round(float(earned), 2) == given[student], parts["total"]
        assert list(parts) == [*(p["name"] for p in PARTS), "total"]

    rows, said = canvas_import(course, tmp_path, capsys)
    assert "Canvas had 36.00 points possible" in said
    (possible,) = [r for r in rows if "Points Possible" in r["Student"]]
    assert float(possible[COLUMN]) == TOTAL
    by_login = {r["SIS Login ID"]: r[COLUMN] for r in rows}
    assert {s: by_login[s] for s in STUDENTS} == {s: format_score(given[s]) for s in STUDENTS}

    numbers = report_numbers(course, tmp_path / "report", capsys)
    for student in STUDENTS:
        assert float(numbers["student", student, "score"]) == given[student]
        assert float(numbers["student", student, "max_total"]) == TOTAL
    maxima = {key: float(v) for (section, key, _), v in numbers.items() if section == "grade_max"}
    assert sum(maxima.values()) == TOTAL and not set(LEFT_OUT) & maxima.keys()
    assert not [key for key in numbers if key[0] == "classify_runs"]  # no stretch, no runs
