"""The next op in the notebook: ten ops drawn from the hand-in's lock of the twenty (only after
their reveal, the same ten every time), NEXT_PREDICTIONS checked with one clear error naming every
problem, its own lock, its reveal with measured verdicts, and `score_next` (4 points)."""

from __future__ import annotations

import time

import pytest
from support.oracles import numpy_oracle

import viewcopy
from viewcopy import notebook as lab
from viewcopy.exercise.part import PredictionError
from viewcopy.instructor.master import measured_next_predictions, measured_predictions
from viewcopy.locking.file import LockError, read_lock
from viewcopy.locking.record import LOCK_FILE
from viewcopy.notebook import checks


def oracle_sheet(next_ops: dict) -> dict:
    """Each next op's verdict by NumPy's oracle, with a rule."""
    rule = "storage and strides decide it"
    return {i: (numpy_oracle(op, parent), rule) for i, (parent, op) in next_ops.items()}


def test_the_next_ops_exist_only_after_the_reveal(workdir, monkeypatch):
    monkeypatch.delenv("VIEWCOPY_LOCK_SERVICE", raising=False)
    with pytest.raises(LockError, match="once they are revealed"):
        lab.next_ops()
    viewcopy.lock(measured_predictions())
    with pytest.raises(LockError, match="once they are revealed"):
        lab.next_ops()


def test_the_draw_is_the_hand_in_s_own_and_the_same_every_time(revealed, tmp_path):
    first, again = lab.next_ops(), lab.next_ops()
    assert first == again and len(first) == 10
    other = tmp_path / "other"
    other.mkdir()
    sheet = measured_predictions("another student's own rule of storage and strides")
    viewcopy.lock(sheet, directory=other)
    viewcopy.reveal(sheet, directory=other)
    assert read_lock(other).fingerprint != read_lock().fingerprint
    from viewcopy.exercise.next_predictions import hand_in_draw

    assert [op.id for op in hand_in_draw(read_lock(other))] != list(first)


def test_bad_next_predictions_name_every_problem_and_write_nothing(revealed):
    next_ops = lab.next_ops()
    ids = list(next_ops)
    bad = {**{i: ("view", "storage") for i in ids[2:]}, "N00": ("view", "r")}
    bad[ids[2]] = ("sometimes: dtype", "r")
    bad[ids[3]] = ("copy", "")
    before = (revealed / LOCK_FILE).read_text()
    with pytest.raises(PredictionError) as caught:
        viewcopy.lock_next(bad)
    text = str(caught.value)
    assert "4 problems in NEXT_PREDICTIONS" in text
    assert "'N00'" in text and ids[0] in text and ids[1] in text
    assert f"id {ids[2]}: verdict 'sometimes: dtype'" in text and f"id {ids[3]}" in text
    with pytest.raises(PredictionError, match="must be a dict"):
        viewcopy.lock_next(["view"] * 10)
    assert (revealed / LOCK_FILE).read_text() == before


def test_right_predictions_locked_before_looking_earn_four(revealed):
    sheet = oracle_sheet(lab.next_ops())
    assert sheet == {i: (v, sheet[i][1]) for i, (v, _) in measured_next_predictions(sheet).items()}
    viewcopy.lock_next(sheet)
    shown = viewcopy.reveal_next(sheet)
    assert "10/10 next ops predicted correctly" in shown.headline()
    assert checks.next_credit(sheet, points=4) == 4


def test_an_edit_after_lock_next_earns_nothing_and_reveal_next_refuses_it(revealed):
    sheet = oracle_sheet(lab.next_ops())
    viewcopy.lock_next(sheet)
    first = next(iter(sheet))
    flipped = {"view": "copy", "copy": "view", "error": "view"}[sheet[first][0]]
    edited = {**sheet, first: (flipped, "changed my mind")}
    with pytest.raises(LockError, match="changed after the lock"):
        viewcopy.reveal_next(edited)
    assert checks.next_credit(edited, points=4) == 0
    viewcopy.reveal_next(sheet)
    with pytest.raises(LockError, match="changed after their reveal"):
        viewcopy.lock_next(edited)


def test_partial_credit_below_eight_and_none_without_a_lock(revealed, capsys):
    next_ops = lab.next_ops()
    sheet = oracle_sheet(next_ops)
    assert checks.next_credit(sheet, points=4) == 0  # never locked
    wrong = dict(sheet)
    for op_id in list(sheet)[:4]:
        wrong[op_id] = ({"view": "copy"}.get(sheet[op_id][0], "view"), "the strides looked wrong")
    viewcopy.lock_next(wrong)
    assert checks.next_credit(wrong, points=4) == round(4 * 6 / 8, 4)
    assert "6/10 next ops right" in capsys.readouterr().out


def test_a_new_lock_without_the_notebook_s_path_says_its_draw_is_another(revealed, monkeypatch):
    """The lock file lost in a kernel not told its notebook: the lock cell locks anew, which
    draws other next ops; the sheet filled for the first draw is refused saying why and what to
    do, not only which ids are unknown."""
    first = measured_next_predictions(lab.next_ops())
    (revealed / LOCK_FILE).unlink()
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    right = measured_predictions()
    for _ in range(20):  # a lock a second later: until its draw differs from the first
        viewcopy.lock(right)
        viewcopy.reveal(right)
        if set(lab.next_ops()) != set(first):
            break
        (revealed / LOCK_FILE).unlink()
        time.sleep(1)
    with pytest.raises(PredictionError) as refused:
        viewcopy.lock_next(first)
    said = str(refused.value)
    locked_at = read_lock().locked_at
    assert "another draw" in said and locked_at in said and str(revealed / LOCK_FILE) in said
    assert "lab.next_ops()" in said and "put the lock file" in said.lower()
    assert "nothing was locked; your cell is unchanged" in said
