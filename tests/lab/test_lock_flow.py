"""The lab's lock and reveal with the course lock service (a real process on 127.0.0.1), and how
grading judges what a hand-in holds against the service's own record."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from support.servers import start_service, stop

import viewcopy
from viewcopy.exercise.predictions import TWENTY, parse_predictions
from viewcopy.instructor.master import measured_predictions
from viewcopy.locking.file import LockError, read_lock
from viewcopy.locking.judge import FORGED, NOT_VERIFIED, VERIFIED, LockPolicy, judge
from viewcopy.locking.record import LOCK_FILE, OUTPUT_KEY
from viewcopy.locking.service import issue_token
from viewcopy.locking.store import student_locks

pytestmark = [pytest.mark.service]

ASSIGNMENT = "view_or_copy"


def judge_twenty(policy, parsed, record, student, assignment):
    return judge(policy, TWENTY, parsed, record, student, assignment)


@pytest.fixture
def student(service, workdir, monkeypatch, request):
    """A student of the course, the service configured as the setup cell configures it."""
    data, url = service
    name = request.node.name[:40]
    monkeypatch.setenv("VIEWCOPY_LOCK_SERVICE", url)
    monkeypatch.setenv("VIEWCOPY_LOCK_TOKEN", issue_token(data, name))
    return name


def sheets():
    right = measured_predictions()
    peeked = {**right, 1: ("copy" if right[1][0] == "view" else "view", "edited after looking")}
    return right, peeked


def test_lock_and_reveal_are_recorded_with_signed_receipts(service, student):
    data, _ = service
    right, _ = sheets()
    locked = viewcopy.lock(right)
    assert "Verified by the course's lock service" in locked.headline()
    viewcopy.reveal(right)
    record = read_lock()
    assert [r["event"] for r in record.receipts] == ["lock", "reveal"]
    served = student_locks(data, student, ASSIGNMENT)
    assert served.locked_before_reveal[0] == record.fingerprint and served.revealed_at


def test_the_deletion_cheat_is_refused_at_the_second_lock_and_caught_at_grading(
    service, student, workdir
):
    data, _ = service
    right, peeked = sheets()
    viewcopy.lock(right)
    viewcopy.reveal(right)
    (workdir / LOCK_FILE).unlink()
    with pytest.raises(LockError, match="refused this lock.*revealed"):
        viewcopy.lock(peeked)
    assert not (workdir / LOCK_FILE).exists()  # nothing written; the cell is unchanged
    policy = LockPolicy(data)
    verdict = judge_twenty(policy, parse_predictions(peeked), None, student, ASSIGNMENT)
    assert (verdict.state, verdict.trust) == ("changed", VERIFIED)
    assert "refused 1 lock(s) after the reveal" in verdict.reason
    honest = judge_twenty(policy, parse_predictions(right), None, student, ASSIGNMENT)
    assert (honest.state, honest.trust) == ("locked", VERIFIED)


def test_a_lock_travels_in_the_lock_and_reveal_outputs(student):
    right, _ = sheets()
    _, metadata = viewcopy.lock(right)._repr_mimebundle_()
    assert metadata[OUTPUT_KEY]["fingerprint"] == read_lock().fingerprint
    _, metadata = viewcopy.reveal(right)._repr_mimebundle_()
    assert [r["event"] for r in metadata[OUTPUT_KEY]["receipts"]] == ["lock", "reveal"]


def test_an_edited_or_foreign_receipt_earns_nothing_by_name(service, student, workdir):
    data, _ = service
    right, _ = sheets()
    viewcopy.lock(right)
    parsed, record = parse_predictions(right), read_lock()
    policy = LockPolicy(data)
    edited = json.loads(json.dumps(record.receipts[0]))
    edited["at"] = "2020-01-01T00:00:00+00:00"
    forged = replace(record, receipts=[edited])
    offline = judge_twenty(policy, parsed, forged, "someone-the-service-never-saw", ASSIGNMENT)
    assert (offline.state, offline.trust) == ("forged", FORGED) and "edited" in offline.reason
    foreign = judge_twenty(policy, parsed, record, "someone-else", ASSIGNMENT)
    assert foreign.state == "forged" and student in foreign.reason


def test_a_stopped_service_leaves_the_lock_not_verified_and_says_why(
    tmp_path, workdir, monkeypatch
):
    data = tmp_path / "locks"
    process, url = start_service(data)
    stop(process)
    monkeypatch.setenv("VIEWCOPY_LOCK_SERVICE", url)
    monkeypatch.setenv("VIEWCOPY_LOCK_TOKEN", issue_token(data, "ada"))
    right, _ = sheets()
    headline = viewcopy.lock(right).headline()
    assert "Not verified by the course's lock service" in headline and url in headline
    assert read_lock().fingerprint and read_lock().receipts == []
    viewcopy.reveal(right)  # the lab goes on
    unverified = judge_twenty(
        LockPolicy(data), parse_predictions(right), read_lock(), "ada", ASSIGNMENT
    )
    assert (unverified.state, unverified.trust) == ("locked", NOT_VERIFIED)
    strict = LockPolicy(data, unverified_earn_credit=False)
    assert judge_twenty(strict, parse_predictions(right), read_lock(), "ada", ASSIGNMENT).state == (
        "unverified"
    )


def test_a_bad_token_is_one_clear_message_and_the_lab_goes_on(service, workdir, monkeypatch):
    _, url = service
    monkeypatch.setenv("VIEWCOPY_LOCK_SERVICE", url)
    monkeypatch.setenv("VIEWCOPY_LOCK_TOKEN", "ada:0000")
    right, _ = sheets()
    headline = viewcopy.lock(right).headline()
    assert "Not verified" in headline and "token" in headline
    viewcopy.reveal(right)
    assert read_lock().revealed_at


def test_without_a_service_grading_judges_the_lock_file_as_before(workdir, monkeypatch):
    monkeypatch.delenv("VIEWCOPY_LOCK_SERVICE", raising=False)
    right, peeked = sheets()
    viewcopy.lock(right)
    record = read_lock()
    assert record.receipts == [] and record.not_verified == ""
    assert judge_twenty(LockPolicy(), parse_predictions(right), record, "a", ASSIGNMENT).trust == ""
    assert judge_twenty(LockPolicy(), parse_predictions(peeked), record, "a", ASSIGNMENT).state == (
        "changed"
    )


def test_the_next_ops_lock_goes_through_the_service_and_grading_holds_it(service, student):
    from viewcopy import notebook as lab
    from viewcopy.exercise.next_predictions import NEXT
    from viewcopy.instructor.master import measured_next_predictions
    from viewcopy.locking.file import save

    data, _ = service
    right, _ = sheets()
    viewcopy.lock(right)
    viewcopy.reveal(right)
    sheet = measured_next_predictions(lab.next_ops())
    assert "Verified by the course's lock service" in viewcopy.lock_next(sheet).headline()
    viewcopy.reveal_next(sheet)
    served = student_locks(data, student, f"{ASSIGNMENT}/next")
    assert served.revealed_at and served.locked_before_reveal
    first = next(iter(sheet))
    other = {"view": "copy", "copy": "view", "error": "view"}[sheet[first][0]]
    edited = {**sheet, first: (other, "the storage was shared after all")}
    save(replace(read_lock(), next=None), None)  # the deletion cheat, for the next ops
    with pytest.raises(LockError, match="refused this lock"):
        viewcopy.lock_next(edited)

    def judged(value):
        parsed = NEXT.parse(value, list(sheet))
        return judge(LockPolicy(data), NEXT, parsed, read_lock(), student, ASSIGNMENT)

    assert (judged(edited).state, judged(edited).trust) == ("changed", VERIFIED)
    assert (judged(sheet).state, judged(sheet).trust) == ("locked", VERIFIED)
