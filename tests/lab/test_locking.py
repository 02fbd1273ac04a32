import json
from dataclasses import replace

import pytest
import torch

import viewcopy
from viewcopy.engine.devices import available_devices
from viewcopy.exercise.predictions import TWENTY, parse_predictions
from viewcopy.locking.file import LockError, read_lock
from viewcopy.locking.flow import LockState, LockStatus, part_status
from viewcopy.locking.judge import LockPolicy, judge
from viewcopy.locking.record import LOCK_FILE
from viewcopy.locking.store import init_data
from viewcopy.notebook.rules_after import NOT_LOCKED


def predictions(**changes):
    base = {i: ("view", "shares storage; only strides and offset change") for i in range(1, 21)}
    base.update({int(k[1:]): v for k, v in changes.items()})
    return base


def test_lock_writes_fingerprint_time_torch_and_devices_and_hides_actual(workdir):
    sheet = viewcopy.lock(predictions())
    record = json.loads((workdir / LOCK_FILE).read_text())
    assert record["torch"] == torch.__version__
    assert tuple(record["devices"]) == available_devices()
    assert len(record["fingerprint"]) == 64 and record["locked_at"].endswith("+00:00")
    assert record["revealed_at"] is None
    assert set(sheet.frame["actual"]) == {"hidden until the reveal"}
    assert sheet.score is None
    assert not any(c.startswith("actual (") for c in sheet.frame.columns)


def test_relocking_is_allowed_until_the_reveal_then_refused_without_writing(workdir):
    viewcopy.lock(predictions())
    viewcopy.lock(predictions(i8=("copy", "a transposed reshape must pack memory")))
    viewcopy.reveal(predictions(i8=("copy", "a transposed reshape must pack memory")))
    before = (workdir / LOCK_FILE).read_bytes()
    with pytest.raises(LockError, match=r"changed after the reveal .*items 8"):
        viewcopy.lock(predictions())
    assert (workdir / LOCK_FILE).read_bytes() == before


def test_reveal_refuses_predictions_that_differ_from_the_lock(workdir):
    viewcopy.lock(predictions())
    with pytest.raises(LockError, match="differ from the lock in items 13"):
        viewcopy.reveal(predictions(i13=("copy", "clone always allocates new storage")))


def test_reveal_after_a_reveal_names_what_to_put_back(workdir):
    viewcopy.lock(predictions())
    viewcopy.reveal(predictions())
    with pytest.raises(LockError) as raised:
        viewcopy.reveal(predictions(i13=("copy", "clone always allocates new storage")))
    assert "item 13: locked ('view', 'shares storage; only strides and offset change')" in str(
        raised.value
    )


def test_reveal_without_a_lock_is_refused(workdir):
    with pytest.raises(LockError, match="run the lock cell"):
        viewcopy.reveal(predictions())


def test_autograde_verifies_and_never_writes(workdir, monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    sheet = viewcopy.lock(predictions())
    assert sheet.lock.state == "missing"
    assert not (workdir / LOCK_FILE).exists()


def test_autograde_reports_changes_after_the_lock(workdir, monkeypatch):
    viewcopy.lock(predictions())
    before = (workdir / LOCK_FILE).read_bytes()
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    sheet = viewcopy.lock(predictions(i2=("copy", "a step slice must copy the elements")))
    assert (sheet.lock.state, sheet.lock.changed_items) == ("changed", (2,))
    assert viewcopy.lock(predictions()).lock.state == "locked"
    viewcopy.reveal(predictions())
    assert (workdir / LOCK_FILE).read_bytes() == before


def test_a_damaged_lock_is_reported_not_overwritten(workdir):
    (workdir / LOCK_FILE).write_text("{not json")
    with pytest.raises(LockError, match="edited or damaged"):
        viewcopy.lock(predictions())
    assert (workdir / LOCK_FILE).read_text() == "{not json"
    with pytest.raises(LockError, match="edited or damaged"):
        read_lock(workdir)


def test_the_instructor_s_master_never_leaves_a_lock_beside_it(tmp_path, monkeypatch):
    master = tmp_path / "course" / "source" / "view_or_copy"
    master.mkdir(parents=True)
    (tmp_path / "course" / "nbgrader_config.py").write_text("")
    monkeypatch.chdir(master)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    viewcopy.lock(predictions())
    assert viewcopy.reveal(predictions()).score.correct >= 0
    assert list(master.iterdir()) == []
    viewcopy.lock(predictions(i8=("copy", "the master may change after its reveal")))


def test_every_lock_state_keeps_its_word_and_only_locked_earns_credit(workdir, monkeypatch):
    """Each state as the flow and grading measure it: shown and written (JSON) as the same word
    as before the states had names; only `locked` earns credit, and the rules-after cell says
    why for every other state."""
    monkeypatch.delenv("VIEWCOPY_LOCK_SERVICE", raising=False)
    viewcopy.lock(predictions())
    record, kept = read_lock(), parse_predictions(predictions())
    edited = parse_predictions(predictions(i2=("copy", "a step slice must copy the elements")))
    init_data(workdir / "service")
    strict = LockPolicy(workdir / "service", unverified_earn_credit=False)
    forged = replace(record, receipts=[{"event": "lock", "signature": "0" * 64}])
    measured = [
        part_status(TWENTY, kept, record),
        part_status(TWENTY, kept, replace(record, lost_lock="the file was deleted")),
        part_status(TWENTY, edited, record),
        part_status(TWENTY, kept, None),
        judge(strict, TWENTY, kept, record, "ada", "view_or_copy"),
        judge(strict, TWENTY, kept, forged, "ada", "view_or_copy"),
    ]
    states = [status.state for status in measured]
    assert states == list(LockState)
    words = ["locked", "relocked", "changed", "missing", "unverified", "forged"]
    assert json.dumps(states) == json.dumps(words)
    assert [str(s) for s in states] == [f"{s}" for s in states] == words
    assert [status.counts for status in measured] == [True, False, False, False, False, False]
    assert set(NOT_LOCKED) == set(LockState) - {LockState.LOCKED}
    assert LockStatus("changed", "given by its word").state is LockState.CHANGED
