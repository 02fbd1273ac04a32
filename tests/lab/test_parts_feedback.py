"""Feedback opens with the table of graded parts and what the hand-in earned in each."""

from __future__ import annotations

import nbformat
from support.course_notebook import SOURCE

from viewcopy.exercise.graded_parts import GRADED_PARTS
from viewcopy.plugins import PartsWithScores
from viewcopy.plugins.points import graded_points


def graded(notebook, scores: dict) -> None:
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade"):
            meta["score"] = scores.get(meta["grade_id"])


def test_the_parts_cell_shows_each_part_s_score_and_the_total():
    notebook = nbformat.read(SOURCE, 4)
    scores = {name: points / 2 for part in GRADED_PARTS for name, points in part.cells}
    scores["answer_21"] = None  # graded by hand, not yet
    graded(notebook, scores)
    PartsWithScores().preprocess(notebook, {})
    (cell,) = [
        c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "parts"
    ]
    shown = cell.outputs[0]["data"]["text/plain"]
    for part in GRADED_PARTS:
        earned = sum(scores[name] or 0 for name, _ in part.cells)
        pending = any(scores[name] is None for name, _ in part.cells)
        assert f"{earned:g}{' + by hand' if pending else ''}" in shown, part.name
    total = sum(v for v in scores.values() if v is not None)
    assert f"{total:g} + by hand" in shown and "your score" in shown
    assert "<script" not in cell.outputs[0]["data"]["text/html"]


def test_the_feedback_table_counts_the_masters_points():
    """A master whose predictions are worth 10: the feedback's table says so, and its total is
    the gradebook's (the cells' points), not the shipped 36."""
    notebook = nbformat.read(SOURCE, 4)
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "score_predictions":
            cell.metadata.nbgrader["points"] = 10
    graded(notebook, dict.fromkeys(graded_points(notebook), 0.0))
    PartsWithScores().preprocess(notebook, {})
    (cell,) = [
        c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "parts"
    ]
    rows = {
        line.split()[0]: line.split() for line in cell.outputs[0]["data"]["text/plain"].splitlines()
    }
    assert rows["predictions"][-2] == "10" and rows["total"][-2] == "41"
