"""Skipping a part never earns more than doing it badly: for each pair of parts where one feeds
the other's credit (the twenty and the rules after; the next ops and the rules after), a hand-in
that skips the first earns no more, as the grader credits it, than the same hand-in doing it
badly. Every lock here is a real one, and what is right or wrong is measured."""

from __future__ import annotations

import contextlib
import io
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

import viewcopy
from viewcopy.demo.synthetic import wrong_on
from viewcopy.exercise import catalogue
from viewcopy.exercise.measured import measured_truth
from viewcopy.exercise.next_ops import measure_pool
from viewcopy.exercise.next_predictions import hand_in_draw
from viewcopy.exercise.part import PredictionError
from viewcopy.exercise.predictions import parse_predictions
from viewcopy.exercise.scoring import judge_prediction
from viewcopy.instructor.master import measured_predictions
from viewcopy.locking.file import read_lock, save
from viewcopy.locking.record import LOCK_FILE
from viewcopy.notebook import checks
from viewcopy.notebook.context import CheckContext, local_lock

RULE = "strides"
"""The rule after every miss: one word that names what decides it."""
UNWRITTEN = {item: ("", "") for item in catalogue.ITEMS}
"""The twenty as the release hands them out."""
FLIPPED = {"view": "copy", "copy": "view", "error": "view"}


def sheet(kind: str) -> dict:
    """One miss in each family of the twenty, or all twenty missed (the opposite of x's
    measured verdict)."""
    table = measured_truth()
    if kind == "one miss per family":
        items = tuple({op.family: op.item for op in reversed(catalogue.OPS)}.values())
    else:
        items = catalogue.ITEMS
    return wrong_on(items, measured_predictions(), table)


def missed(predictions: dict) -> list[int]:
    """The items these predictions miss, by measurement."""
    table = measured_truth()
    parsed = parse_predictions(predictions)
    return [item for item, p in parsed.items() if not judge_prediction(p, table[item])[0]]


def graded(folder: Path, check: str, *args: object, points: float) -> float:
    """What the grader gives a check's cell for the hand-in in `folder`: its own run of the check
    on the hand-in's lock; a cell that fails (a sheet that cannot be read) earns nothing."""
    grader = CheckContext.grader(local_lock(folder), folder)
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            return float(checks.CHECKS[check].function(*args, points=points, context=grader))
        except PredictionError:
            return 0.0


def scores(folder: Path, predictions: dict, next_predictions: dict) -> dict[str, float]:
    """The hand-in's credit for the twenty, the rules after (RULE for every miss) and the next
    ops."""
    rules = dict.fromkeys(catalogue.ITEMS, RULE)
    return {
        "twenty": graded(folder, "prediction_credit", predictions, points=5),
        "rules after": graded(folder, "rules_after_credit", predictions, rules, points=2),
        "next ops": graded(folder, "next_credit", next_predictions, points=4),
    }


def revealed_in(folder: Path, predictions: dict, minute: int) -> None:
    """The twenty locked and revealed in `folder`, the lock's time set to `minute` (each minute
    draws other next ops)."""
    folder.mkdir()
    viewcopy.lock(predictions, directory=folder)
    viewcopy.reveal(predictions, directory=folder)
    moved = f"2026-12-02T10:{minute:02d}:00+00:00"
    save(replace(read_lock(folder), locked_at=moved), folder)


def next_sheets(folder: Path) -> dict[str, dict]:
    """Next ops for the draw in `folder`: all "view", and each the opposite of what measurement
    gives."""
    measured = measure_pool()
    ids = [op.id for op in hand_in_draw(read_lock(folder))]
    return {
        "all view": {i: ("view", RULE) for i in ids},
        "all wrong": {i: (FLIPPED[measured[i].verdict], RULE) for i in ids},
    }


@pytest.mark.parametrize("minute", range(4))
@pytest.mark.parametrize("kind", ["one miss per family", "all twenty missed"])
def test_skipping_the_next_ops_never_earns_more_than_locking_them_badly(
    tmp_path, monkeypatch, kind, minute
):
    monkeypatch.delenv("VIEWCOPY_LOCK_SERVICE", raising=False)
    monkeypatch.chdir(tmp_path)
    predictions = sheet(kind)
    revealed_in(tmp_path / "skipped", predictions, minute)
    drawn = {op.family for op in hand_in_draw(read_lock(tmp_path / "skipped"))}
    assert drawn & {catalogue.op(i).family for i in missed(predictions)}  # rules meet next ops
    sheets = next_sheets(tmp_path / "skipped")
    # never written, or written and never locked
    skipping = [scores(tmp_path / "skipped", predictions, n) for n in [{}, *sheets.values()]]
    for name, next_predictions in sheets.items():
        folder = tmp_path / name.replace(" ", "_")
        folder.mkdir()
        shutil.copy(tmp_path / "skipped" / LOCK_FILE, folder / LOCK_FILE)  # the same draw
        viewcopy.lock_next(next_predictions, directory=folder)
        badly = scores(folder, predictions, next_predictions)
        for skipped in skipping:
            assert badly["rules after"] >= skipped["rules after"], (name, badly, skipped)
            assert sum(badly.values()) >= sum(skipped.values()), (name, badly, skipped)


@pytest.mark.parametrize(
    "next_ops", [None, "skipped", "all view", "all wrong"], ids=lambda n: f"next ops {n}"
)
def test_leaving_the_twenty_unwritten_never_earns_more_than_writing_them_all_wrong(
    tmp_path, monkeypatch, next_ops
):
    """`next_ops` None: the twenty written all wrong but never locked (so nothing is drawn);
    else locked and revealed, then the next ops skipped or locked badly."""
    monkeypatch.delenv("VIEWCOPY_LOCK_SERVICE", raising=False)
    monkeypatch.chdir(tmp_path)
    all_wrong = sheet("all twenty missed")
    assert missed(all_wrong) == list(catalogue.ITEMS)
    with pytest.raises(PredictionError):
        viewcopy.lock(UNWRITTEN, directory=tmp_path)  # nothing to lock: nothing drawn
    unwritten = scores(tmp_path, UNWRITTEN, {})
    folder = tmp_path / "written"
    if next_ops is None:
        folder.mkdir()
    else:
        revealed_in(folder, all_wrong, 0)
    next_predictions = next_sheets(folder).get(next_ops, {}) if next_ops else {}
    if next_predictions:
        viewcopy.lock_next(next_predictions, directory=folder)
    written = scores(folder, all_wrong, next_predictions)
    for part in ("twenty", "rules after"):
        assert written[part] >= unwritten[part], (part, written, unwritten)
    assert sum(written.values()) >= sum(unwritten.values()), (written, unwritten)


@pytest.mark.parametrize("minute", range(2))
@pytest.mark.parametrize("kind", ["one miss per family", "all twenty missed"])
def test_never_locking_the_twenty_never_earns_more_than_locking_them_badly(
    tmp_path, monkeypatch, kind, minute
):
    """Written but never locked, nothing is drawn, so no rule after is tested: it earns no more
    than the same sheet locked and revealed with its next ops skipped or locked badly."""
    monkeypatch.delenv("VIEWCOPY_LOCK_SERVICE", raising=False)
    monkeypatch.chdir(tmp_path)
    predictions = sheet(kind)
    (tmp_path / "never_locked").mkdir()
    never = scores(tmp_path / "never_locked", predictions, {})
    assert never["rules after"] == 0, never  # a rule after nothing could test earns nothing
    revealed_in(tmp_path / "locked", predictions, minute)
    ways = {"skipped": {}, **next_sheets(tmp_path / "locked")}
    for name, next_predictions in ways.items():
        folder = tmp_path / name.replace(" ", "_")
        folder.mkdir()
        shutil.copy(tmp_path / "locked" / LOCK_FILE, folder / LOCK_FILE)  # the same draw
        if next_predictions:
            viewcopy.lock_next(next_predictions, directory=folder)
        badly = scores(folder, predictions, next_predictions)
        assert badly["rules after"] >= never["rules after"], (badly, never)
        assert sum(badly.values()) >= sum(never.values()), (badly, never)
