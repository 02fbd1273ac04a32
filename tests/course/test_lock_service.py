"""The course lock service, run as a real process and reached over HTTP through the client the
notebook uses: locks before the reveal are recorded, a lock after it is refused, and every answer
is a receipt the grader verifies offline with the service's key."""

from __future__ import annotations

import hashlib
import stat
import urllib.request
from datetime import datetime, timedelta, timezone

import pytest
from support.servers import start_service, stop

from viewcopy.locking.client import (
    LockServiceClient,
    LockServiceError,
    ServiceRefused,
    ServiceUnreachable,
    from_environment,
)
from viewcopy.locking.receipts import ForgedReceipt, sign, student_token, token_student, verify
from viewcopy.locking.service import issue_token
from viewcopy.locking.store import (
    KEY_FILE,
    init_data,
    load_key,
    read_assignment,
    service_id,
    student_locks,
)

pytestmark = [pytest.mark.service]


def fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def client(service, student: str) -> LockServiceClient:
    data_dir, url = service
    return LockServiceClient(url, issue_token(data_dir, student))


def assert_server_time(at: str) -> None:
    moment = datetime.fromisoformat(at)
    assert moment.utcoffset() == timedelta(0)
    assert abs(datetime.now(timezone.utc) - moment) < timedelta(seconds=10)


def test_health_names_the_service_and_its_id(service):
    data_dir, url = service
    with urllib.request.urlopen(f"{url}/v1/health") as response:
        answer = response.read().decode()
    assert '"viewcopy-lock"' in answer and service_id(data_dir) in answer


def test_every_lock_before_the_reveal_is_recorded_and_the_last_one_counts(service):
    data_dir, _ = service
    alice = client(service, "alice")
    first = alice.lock("a1", fingerprint("first"))
    second = alice.lock("a1", fingerprint("second"))
    key = load_key(data_dir)
    assert verify(key, first)["locks"] == 1 and verify(key, second)["locks"] == 2
    assert second["first_lock_at"] == first["at"] and second["revealed_at"] is None
    locks = student_locks(data_dir, "alice", "a1")
    assert [f for f, _ in locks.locks] == [fingerprint("first"), fingerprint("second")]
    assert locks.locked_before_reveal == (fingerprint("second"), second["at"])


def test_receipts_carry_the_services_time_and_id(service):
    data_dir, _ = service
    receipt = client(service, "tim").lock("a1", fingerprint("t"))
    payload = verify(load_key(data_dir), receipt)
    assert_server_time(payload["at"])
    assert payload["first_lock_at"] == payload["at"]
    assert (payload["v"], payload["service"]) == (1, service_id(data_dir))
    assert (payload["student"], payload["assignment"], payload["event"]) == ("tim", "a1", "lock")


def test_the_reveal_of_the_locked_predictions_is_signed(service):
    data_dir, _ = service
    bob = client(service, "bob")
    bob.lock("a1", fingerprint("bob"))
    receipt = bob.reveal("a1", fingerprint("bob"))
    payload = verify(load_key(data_dir), receipt)
    assert payload["event"] == "reveal" and payload["revealed_at"] == payload["at"]
    assert_server_time(payload["revealed_at"])
    again = verify(load_key(data_dir), bob.reveal("a1", fingerprint("bob")))
    assert again["revealed_at"] == payload["revealed_at"] and again["at"] > payload["at"]


def test_a_lock_after_the_reveal_is_refused_and_counted(service):
    data_dir, _ = service
    carol = client(service, "carol")
    locked = carol.lock("a1", fingerprint("guess"))
    carol.reveal("a1", fingerprint("guess"))
    with pytest.raises(ServiceRefused, match="already revealed") as refusal:
        carol.lock("a1", fingerprint("answers seen"))
    assert locked["at"] in str(refusal.value)
    locks = student_locks(data_dir, "carol", "a1")
    assert locks.refused == 1 and len(locks.locks) == 1
    assert locks.locked_before_reveal == (fingerprint("guess"), locked["at"])


def test_a_reveal_needs_the_locked_predictions(service):
    dave = client(service, "dave")
    with pytest.raises(ServiceRefused, match="nothing is locked for a1"):
        dave.reveal("a1", fingerprint("dave"))
    locked = dave.lock("a1", fingerprint("dave"))
    with pytest.raises(ServiceRefused, match="differ from your lock") as refusal:
        dave.reveal("a1", fingerprint("changed"))
    assert locked["at"] in str(refusal.value)


def test_the_class_report_reads_every_student_of_an_assignment(service):
    data_dir, _ = service
    client(service, "erin").lock("a2", fingerprint("erin"))
    client(service, "finn").lock("a2", fingerprint("finn"))
    students = read_assignment(data_dir, "a2")
    assert set(students) == {"erin", "finn"}
    assert students["erin"].locks[0][0] == fingerprint("erin")


def test_one_students_token_cannot_lock_for_another(service):
    data_dir, url = service
    with pytest.raises(ServiceRefused, match="this token belongs to gina, not hal"):
        client(service, "gina").lock("a1", fingerprint("g"), student="hal")
    forged = "hal:" + issue_token(data_dir, "gina").rpartition(":")[2]
    with pytest.raises(ServiceRefused, match="not valid"):
        LockServiceClient(url, forged).lock("a1", fingerprint("g"))
    assert student_locks(data_dir, "hal", "a1") is None


def test_a_request_without_a_token_or_with_a_hub_token_outside_a_hub_is_refused(service):
    _, url = service
    with pytest.raises(ServiceRefused, match="no lock token was sent.*Authorization: Bearer"):
        LockServiceClient(url, "", scheme="").lock("a1", fingerprint("x"))
    with pytest.raises(ServiceRefused, match="does not run under JupyterHub"):
        LockServiceClient(url, "hub-token", scheme="token").lock("a1", fingerprint("x"))


def test_a_bad_body_names_the_field(service):
    ivan = client(service, "ivan")
    with pytest.raises(LockServiceError, match='"fingerprint" must be the 64'):
        ivan.lock("a1", "not a sha256")
    with pytest.raises(LockServiceError, match='"assignment"'):
        ivan.lock("", fingerprint("x"))


def test_an_edited_receipt_is_forged(service):
    data_dir, _ = service
    key = load_key(data_dir)
    receipt = client(service, "jo").lock("a1", fingerprint("jo"))
    for field, value in [("fingerprint", fingerprint("other")), ("at", "2000-01-01T00:00:00")]:
        with pytest.raises(ForgedReceipt, match="signature does not match"):
            verify(key, {**receipt, field: value})
    with pytest.raises(ForgedReceipt, match="no signature"):
        verify(key, {k: v for k, v in receipt.items() if k != "signature"})
    with pytest.raises(ForgedReceipt):
        verify(key, "not a receipt")


def test_a_receipt_signed_with_another_key_is_forged(service):
    data_dir, _ = service
    payload = verify(load_key(data_dir), client(service, "kim").lock("a1", fingerprint("kim")))
    with pytest.raises(ForgedReceipt, match="signed by another service"):
        verify(load_key(data_dir), sign(b"another key", payload))


def test_tokens_name_their_student_and_resist_editing():
    key = b"k" * 32
    for student in ("s1", "a:b", "élodie"):
        assert token_student(key, student_token(key, student)) == student
    token = student_token(key, "s1")
    assert token_student(key, "s2:" + token.rpartition(":")[2]) is None
    assert token_student(b"other" * 8, token) is None
    assert token_student(key, "no separator") is None


def test_the_data_folder_keeps_its_key_private_and_forever(tmp_path):
    data_dir = tmp_path / "data"
    with pytest.raises(FileNotFoundError, match="run the lock service once"):
        load_key(data_dir)
    init_data(data_dir)
    key = load_key(data_dir)
    init_data(data_dir)
    assert load_key(data_dir) == key and len(key) == 32
    assert stat.S_IMODE((data_dir / KEY_FILE).stat().st_mode) == 0o600
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    assert read_assignment(data_dir, "a1") == {}


def test_a_stopped_service_is_unreachable(tmp_path):
    process, url = start_service(tmp_path)
    lena = LockServiceClient(url, issue_token(tmp_path, "lena"), timeout=5)
    lena.lock("a1", fingerprint("lena"))
    stop(process)
    with pytest.raises(ServiceUnreachable, match=f"{url}.*not verified"):
        lena.lock("a1", fingerprint("lena"))


def test_the_client_comes_from_the_environment(service, monkeypatch):
    data_dir, url = service
    for name in ("VIEWCOPY_LOCK_SERVICE", "VIEWCOPY_LOCK_TOKEN", "JUPYTERHUB_API_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    assert from_environment() is None
    monkeypatch.setenv("VIEWCOPY_LOCK_SERVICE", url)
    with pytest.raises(LockServiceError, match="VIEWCOPY_LOCK_TOKEN is not"):
        from_environment()
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "hub-token")
    hub = from_environment()
    assert (hub.url, hub.token, hub.scheme) == (url, "hub-token", "token")
    monkeypatch.setenv("VIEWCOPY_LOCK_TOKEN", issue_token(data_dir, "max"))
    receipt = from_environment().lock("a1", fingerprint("max"))
    assert verify(load_key(data_dir), receipt)["student"] == "max"
