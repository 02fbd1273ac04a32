"""A lock lost with the files beside the notebook is found again in the notebook itself: the
notebook's saved file (JupyterLab tells the kernel its path in JPY_SESSION_NAME), or Colab's copy
of the notebook (handed over by `google.colab._message`, the one part of Colab faked here). Where
it cannot be found, nothing is re-locked silently, and a lock made after a reveal already seen
counts for nothing."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import nbformat
import pytest

import viewcopy
from viewcopy.exercise.next_predictions import hand_in_draw
from viewcopy.exercise.predictions import TWENTY
from viewcopy.instructor.master import measured_predictions
from viewcopy.locking.file import LockError, read_lock
from viewcopy.locking.flow import part_status
from viewcopy.locking.record import LOCK_FILE, record_from_json


@pytest.fixture
def handed(revealed, monkeypatch, tmp_path_factory):
    """The revealed twenty's sheet as the reveal cell showed it, in a notebook saved elsewhere
    (with its outputs), and the lock file as it was; the lock file is then deleted."""
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    sheet = viewcopy.reveal(measured_predictions())
    data, metadata = sheet._repr_mimebundle_()
    output = nbformat.v4.new_output("display_data", data=data, metadata=metadata)
    cell = nbformat.v4.new_code_cell("lab.reveal(PREDICTIONS)", outputs=[output])
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"), cell])
    saved = tmp_path_factory.mktemp("moved") / "view_or_copy.ipynb"
    nbformat.write(notebook, saved)
    before = (revealed / LOCK_FILE).read_text()
    (revealed / LOCK_FILE).unlink()
    return saved, before


def fake_colab(monkeypatch, notebook: dict | Exception) -> None:
    """A kernel where google.colab is imported and its front end answers get_ipynb."""

    def blocking_request(request_type, request="", timeout_sec=5):
        assert request_type == "get_ipynb"
        if isinstance(notebook, Exception):
            raise notebook
        return {"ipynb": notebook}

    google, colab = types.ModuleType("google"), types.ModuleType("google.colab")
    message = types.ModuleType("google.colab._message")
    message.blocking_request = blocking_request
    colab._message, google.colab = message, colab
    for name, module in (("google", google), ("google.colab", colab), (message.__name__, message)):
        monkeypatch.setitem(sys.modules, name, module)


def test_jupyterlab_restores_the_lock_from_the_notebook_s_file(handed, monkeypatch, capsys):
    saved, before = handed
    monkeypatch.setenv("JPY_SESSION_NAME", str(saved))
    sheet = viewcopy.lock(measured_predictions())
    said = capsys.readouterr().out
    assert f"{LOCK_FILE} was missing" in said and str(saved) in said, said
    assert "predictions revealed" in said and "Nothing you locked is lost" in said
    assert json.loads(Path(LOCK_FILE).read_text()) == json.loads(before)
    assert sheet.lock.state == "locked"
    viewcopy.reveal(measured_predictions())  # the reveal holds: it was revealed before


def test_the_restored_lock_keeps_its_draw_of_next_ops(handed, monkeypatch):
    saved, before = handed
    drawn = hand_in_draw(record_from_json(json.loads(before)))
    monkeypatch.setenv("JPY_SESSION_NAME", str(saved))
    assert tuple(viewcopy.notebook.next_ops()) == tuple(op.id for op in drawn)


def test_colab_restores_the_lock_from_its_copy_of_the_notebook(handed, monkeypatch, capsys):
    saved, before = handed
    fake_colab(monkeypatch, json.loads(saved.read_text()))
    viewcopy.lock(measured_predictions())
    said = capsys.readouterr().out
    assert "restored the lock" in said and "Colab's copy of this notebook" in said, said
    assert json.loads(Path(LOCK_FILE).read_text()) == json.loads(before)


def test_a_restored_lock_still_refuses_answers_changed_after_its_reveal(handed, monkeypatch):
    saved, _ = handed
    monkeypatch.setenv("JPY_SESSION_NAME", str(saved))
    right = measured_predictions()
    flipped = {**right, 3: ("copy" if right[3][0] == "view" else "view", "after looking")}
    with pytest.raises(LockError, match="changed after the reveal"):
        viewcopy.lock(flipped)
    assert read_lock().revealed_at  # restored as it was, not replaced by a new lock


def test_a_notebook_that_cannot_be_read_is_said_and_the_lock_is_new(handed, capsys):
    sheet = viewcopy.lock(measured_predictions())
    said = capsys.readouterr().out
    assert "could not be searched for an earlier lock" in said, said
    assert "was not told which notebook it runs" in said
    assert sheet.lock.state == "locked" and read_lock().revealed_at is None


def test_colab_that_does_not_answer_is_said(handed, monkeypatch, capsys):
    fake_colab(monkeypatch, TimeoutError("no answer in 30 s"))
    viewcopy.lock(measured_predictions())
    said = capsys.readouterr().out
    assert "Colab did not hand it over (no answer in 30 s)" in said, said


def test_a_lock_shown_but_not_restorable_marks_the_new_lock_worthless(handed, monkeypatch, capsys):
    saved, _ = handed
    notebook = json.loads(saved.read_text())
    (output,) = notebook["cells"][1]["outputs"]
    output["metadata"]["viewcopy_lock"]["predictions"]["1"] = ["view", "edited"]
    saved.write_text(json.dumps(notebook))
    monkeypatch.setenv("JPY_SESSION_NAME", str(saved))
    right = measured_predictions()
    sheet = viewcopy.lock(right)
    said = capsys.readouterr().out
    assert "cannot be restored" in said and "counts for nothing" in said, said
    assert sheet.lock.state == "relocked" and "count for nothing" in sheet.lock.reason
    assert read_lock().lost_lock == "its fingerprint does not match the predictions it holds"
    viewcopy.lock(right)  # locked again, unchanged: still marked
    viewcopy.reveal(right)
    assert read_lock().lost_lock
    parsed = TWENTY.parse(right, TWENTY.keys(read_lock()))
    assert part_status(TWENTY, parsed, read_lock()).state == "relocked"
    assert viewcopy.checks.prediction_credit(right) == 0


def test_a_lock_file_beside_the_notebook_is_never_replaced(revealed, tmp_path, monkeypatch):
    before = (revealed / LOCK_FILE).read_text()
    other = tmp_path / "other.ipynb"
    other.write_text(json.dumps(nbformat.v4.new_notebook()))
    monkeypatch.setenv("JPY_SESSION_NAME", str(other))
    viewcopy.lock(measured_predictions())
    assert (revealed / LOCK_FILE).read_text() == before


def test_autograde_never_restores(handed, monkeypatch):
    saved, _ = handed
    monkeypatch.setenv("JPY_SESSION_NAME", str(saved))
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    viewcopy.lock(measured_predictions())
    assert read_lock() is None


def test_a_session_path_relative_to_the_server_s_root_is_found(handed, monkeypatch):
    saved, before = handed
    monkeypatch.chdir(saved.parent)
    monkeypatch.setenv("JPY_SESSION_NAME", f"some/folder/{saved.name}")
    viewcopy.lock(measured_predictions())
    assert json.loads(Path(LOCK_FILE).read_text()) == json.loads(before)
