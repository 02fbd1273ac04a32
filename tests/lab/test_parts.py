"""The notebook's opening table of graded parts is the master's graded cells: every graded cell in
one part with its nbgrader points, the totals add up, the minutes add up to the lab card's, and the
stretch is the part the master calls the stretch."""

from __future__ import annotations

import ast
import dataclasses
import html
import re

import nbformat
from support.course_notebook import RELEASE, ROOT, SOURCE

from viewcopy import notebook as lab
from viewcopy.course.assignment import grade_id
from viewcopy.display.parts_table import parts_frame
from viewcopy.exercise.graded_parts import CARD_MINUTES, GRADED_PARTS, OTHER, GradedPart
from viewcopy.plugins.points import WritePoints, graded_points

CARD = (ROOT / "docs" / "lab_card.txt").read_text(encoding="utf-8")


def graded_cells(path=SOURCE) -> dict[str, int]:
    """grade id -> nbgrader points of every graded cell, in notebook order."""
    cells = nbformat.read(path, as_version=4).cells
    return {
        grade_id(c): c.metadata.nbgrader["points"]
        for c in cells
        if c.metadata.get("nbgrader", {}).get("grade")
    }


def problems(parts: tuple[GradedPart, ...], graded: dict[str, int]) -> list[str]:
    """What the declared parts get wrong about the master's graded cells."""
    declared = [name for part in parts for name, _ in part.cells]
    found = [f"{name} is in no part of the table" for name in graded if name not in declared]
    found += [f"{name} is not graded in the master" for name in declared if name not in graded]
    found += [f"{name} is in two parts" for name in set(declared) if declared.count(name) > 1]
    found += [
        f"{name}: {points} points in the table, {graded[name]} in the master"
        for part in parts
        for name, points in part.cells
        if name in graded and points != graded[name]
    ]
    if [n for n in declared if n in graded] != [n for n in graded if n in declared]:
        found.append("the parts are not in the notebook's order")
    return found


def test_every_graded_cell_is_in_one_part_with_the_master_s_points():
    assert problems(GRADED_PARTS, graded_cells()) == []
    assert graded_cells(RELEASE) == graded_cells()


def test_the_check_fails_on_a_missing_part_and_on_wrong_points():
    graded = graded_cells()
    without_next = tuple(p for p in GRADED_PARTS if p.name != "next ops")
    assert problems(without_next, graded) == ["score_next is in no part of the table"]
    first = GRADED_PARTS[0]
    wrong = dataclasses.replace(first, cells=((first.cells[0][0], first.cells[0][1] + 1),))
    assert problems((wrong, *GRADED_PARTS[1:]), graded) == [
        "score_predictions: 6 points in the table, 5 in the master"
    ]


def test_the_table_shows_every_part_and_its_points_add_up_to_the_notebook_s():
    frame = parts_frame()
    graded = graded_cells()
    rows = frame.drop(index="total")
    assert len(rows) == len(GRADED_PARTS) == 6
    assert list(rows["points"]) == [sum(graded[n] for n, _ in p.cells) for p in GRADED_PARTS]
    assert frame.loc["total", "points"] == sum(graded.values()) == 36
    for part, label in zip(GRADED_PARTS, rows["graded cells"], strict=True):
        for name, _ in part.cells:
            stem, _, number = name.rpartition("_")
            assert name in label or (number.isdigit() and f"{stem}_21-25" in label), (name, label)


def test_the_minutes_add_up_to_the_lab_card_s_and_the_stretch_is_marked():
    (card_minutes,) = re.findall(r"·(\d+) minutes", CARD)
    intro = nbformat.read(SOURCE, as_version=4).cells[0].source
    assert int(card_minutes) == CARD_MINUTES and f"· {CARD_MINUTES} minutes**" in intro
    frame = parts_frame()
    assert frame.loc["total", "minutes"] == sum(p.minutes for p in GRADED_PARTS) == CARD_MINUTES
    assert all(p.minutes > 0 for p in GRADED_PARTS)
    cells = nbformat.read(SOURCE, as_version=4).cells
    heading = next(i for i, c in enumerate(cells) if c.source.startswith("## Stretch"))
    after = {grade_id(c) for c in cells[heading:]}
    assert [p.name for p in GRADED_PARTS if p.stretch] == ["classify"]
    (stretch,) = [p for p in GRADED_PARTS if p.stretch]
    assert {name for name, _ in stretch.cells} <= after
    assert [label for label in frame.index if "stretch" in label] == ["classify (stretch)"]


def test_the_opening_cell_after_setup_calls_the_table_and_the_intro_types_no_points():
    for path in (SOURCE, RELEASE):
        cells = nbformat.read(path, as_version=4).cells
        assert [grade_id(c) for c in cells[:3]] == ["intro", "setup", "parts"]
        assert cells[2].cell_type == "code" and cells[2].source == "lab.parts()"
        assert "points |" not in cells[0].source
    assert lab.parts().frame.equals(parts_frame())


def test_the_notebook_shows_every_word_and_says_the_stretch_counts():
    shown = lab.parts()._repr_html_()
    frame = parts_frame()
    for text in frame["what you do"]:
        assert html.escape(text) in shown and "…" not in shown
    total, stretch = frame.loc["total", "points"], frame.loc["classify (stretch)", "points"]
    said = frame.loc["classify (stretch)", "what you do"]
    assert f"the stretch counts: its {stretch} points are part of the {total}" in said
    assert f"the most is {total - stretch}" in said


def edited_master(points: dict[str, float], without: set[str] = frozenset()):
    """The shipped master with some graded cells' nbgrader points changed and some removed."""
    notebook = nbformat.read(SOURCE, as_version=4)
    notebook.cells = [c for c in notebook.cells if grade_id(c) not in without]
    for cell in notebook.cells:
        if grade_id(cell) in points:
            cell.metadata.nbgrader["points"] = points[grade_id(cell)]
    return notebook


def test_the_masters_points_decide_the_table_however_the_instructor_edits_them():
    """Points doubled, the stretch removed and a question of the course's own: the table's rows
    and total are the master's metadata, whatever the package's declaration says."""
    master = edited_master(
        {"score_predictions": 10}, {"test_classify_visible", "test_classify_hidden"}
    )
    points = {**graded_points(master), "own_question": 3}
    frame = parts_frame(points=points)
    assert frame.loc["total", "points"] == sum(points.values()) == 36 + 5 - 8 + 3
    assert frame.loc["predictions", "points"] == 10
    assert not [label for label in frame.index if "classify" in label]
    assert frame.loc[OTHER, "points"] == 3 and "own_question" in frame.loc[OTHER, "graded cells"]
    assert lab.parts(points).frame.equals(frame)
    assert parts_frame(points=graded_points(nbformat.read(SOURCE, 4))).equals(parts_frame())


def test_the_release_writes_the_masters_points_where_the_student_sees_them():
    shipped = nbformat.read(SOURCE, as_version=4)
    untouched, _ = WritePoints().preprocess(nbformat.read(SOURCE, as_version=4), {})
    assert [c.source for c in untouched.cells] == [c.source for c in shipped.cells]

    master = edited_master({"score_predictions": 10, "specific_23": 1.5})
    released, _ = WritePoints().preprocess(master, {})
    cells = {grade_id(c): c.source for c in released.cells}
    assert cells["score_predictions"] == "viewcopy.checks.prediction_credit(PREDICTIONS, points=10)"
    assert "item=23, points=1.5)" in cells["specific_23"]
    assert cells["specific_22"] == {grade_id(c): c.source for c in shipped.cells}["specific_22"]
    call = ast.parse(cells["parts"]).body[0].value
    assert ast.unparse(call.func) == "lab.parts"
    assert ast.literal_eval(call.keywords[0].value) == graded_points(master)
