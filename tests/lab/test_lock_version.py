"""The lock names the version of the package whose lock cell wrote it, and a lock from before
versions (every release before 0.2.0: the frozen hand-ins) reads and verifies exactly as before."""

from __future__ import annotations

import json

from support.course_notebook import RELEASE_0_1_0_70CF16B

import viewcopy
from viewcopy.engine.version import package_version
from viewcopy.locking.canonical import matches
from viewcopy.locking.file import read_lock
from viewcopy.locking.record import LOCK_FILE, record_from_json

FROZEN_LOCK = RELEASE_0_1_0_70CF16B / "hand_in" / LOCK_FILE


def predictions():
    return {i: ("view", "shares storage; only strides and offset change") for i in range(1, 21)}


def test_a_lock_names_the_package_version_that_wrote_it(workdir):
    viewcopy.lock(predictions())
    written = json.loads((workdir / LOCK_FILE).read_text())
    assert written["viewcopy"] == package_version() == viewcopy.__version__
    viewcopy.reveal(predictions())  # the reveal keeps it
    assert read_lock().viewcopy == viewcopy.__version__


def test_a_lock_from_before_versions_reads_with_none_and_verifies_as_it_did():
    data = json.loads(FROZEN_LOCK.read_text("utf-8"))
    assert "viewcopy" not in data
    record = record_from_json(data)
    assert record.viewcopy == ""
    parts = record.parts()
    assert set(parts) == {"predictions", "next", "production"}
    # every fingerprint still matches the answers it locked (the 0.1.0+70cf16b encodings)
    assert all(matches(lock.answers, lock.fingerprint) for lock in parts.values())
    # its JSON form keeps everything it held and adds only the defaults of later fields
    again = json.loads(json.dumps(record.json()))
    assert {k: again[k] for k in data} == data
    assert {k: v for k, v in again.items() if k not in data} == {
        "draw_version": 0,
        "lost_lock": "",
        "viewcopy": "",
    }
