"""The course's LMS files, without a platform: registration.json read with every bad field named,
the course's key (made once, private, its kid the RFC 7638 thumbprint, its JWK verifying what the
private key signs), link.json merged from launches, and the push journal read back."""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import multiprocessing
import os
import stat

import jwt
import pytest
from support.launch_claims import ISSUER, launch_claims

from viewcopy.course.folder import Course
from viewcopy.lms.commands import LMS
from viewcopy.lms.journal import Journal, now_stamp
from viewcopy.lms.keys import KEY_FILE, KeyFileError, ToolKey
from viewcopy.lms.launch_message import LaunchMessage
from viewcopy.lms.link import CourseLink, LinkMismatch, NotLinked
from viewcopy.lms.registration import Registration, hub_name

GOOD = {
    "issuer": "https://lms.example.edu",
    "client_id": "abc123",
    "deployment_id": "1:dep",
    "key_set_url": "https://lms.example.edu/jwks",
    "authorize_url": "https://lms.example.edu/authorize",
    "token_url": "https://lms.example.edu/token",
}
MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership#"


def write(tmp_path, data) -> os.PathLike:
    path = tmp_path / "registration.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_a_good_registration_reads_with_sub_as_the_default_claim(tmp_path):
    registration = Registration.read(write(tmp_path, GOOD))
    expected = {k: v for k, v in GOOD.items() if k != "deployment_id"}
    assert registration.as_dict() == {
        **expected,
        "deployment_ids": ["1:dep"],
        "username_claim": "sub",
    }
    assert Registration.read(
        write(tmp_path, {**GOOD, "username_claim": "email"})
    ).username_claim == ("email")


def test_every_bad_field_is_named_with_the_file(tmp_path):
    data = {**GOOD, "client_id": 42, "key_set_url": "ftp://x/jwks", "clientid": "typo"}
    del data["token_url"]
    path = write(tmp_path, data)
    with pytest.raises(ValueError) as raised:
        Registration.read(path)
    message = str(raised.value)
    assert str(path) in message
    for said in (
        "client_id must be a non-empty string, not 42",
        "token_url is missing",
        "key_set_url must be an http(s) URL",
        "unknown field(s) clientid",
    ):
        assert said in message
    assert "issuer" not in message  # the good fields are not blamed


@pytest.mark.parametrize(
    ("content", "said"),
    [(None, "does not exist"), ("{not json", "is not JSON"), ("[1, 2]", "JSON object, not list")],
)
def test_an_unreadable_registration_is_named(tmp_path, content, said):
    path = tmp_path / "registration.json" if content is None else write(tmp_path, content)
    with pytest.raises(ValueError, match=said) as raised:
        Registration.read(path)
    assert str(path) in str(raised.value)


def test_the_key_is_made_once_mode_0600_in_a_0700_folder(tmp_path):
    folder = Course.at(tmp_path).lms
    key = ToolKey.ensure(folder)
    path = folder / KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    before = (path.stat().st_ino, path.stat().st_mtime_ns, path.read_bytes())
    again = ToolKey.ensure(folder)
    assert (path.stat().st_ino, path.stat().st_mtime_ns, path.read_bytes()) == before
    assert (again.kid, again.private_pem) == (key.kid, key.private_pem)
    assert "PRIVATE KEY" in key.private_pem
    assert list(folder.iterdir()) == [path]  # no partial file left beside it


def _ensure_kid(folder) -> str:
    return ToolKey.ensure(folder).kid


def test_courses_have_their_own_keys_and_racing_makers_agree_on_one(tmp_path):
    folder = Course.at(tmp_path / "a").lms
    with multiprocessing.get_context("spawn").Pool(3) as pool:
        kids = pool.map(_ensure_kid, [folder] * 3)
    assert len(set(kids)) == 1 and kids[0] == ToolKey.ensure(folder).kid
    assert ToolKey.ensure(Course.at(tmp_path / "b").lms).kid != kids[0]


def test_a_key_others_can_read_is_refused_with_the_fix(tmp_path):
    folder = Course.at(tmp_path).lms
    path = ToolKey.ensure(folder).path
    path.chmod(0o644)
    with pytest.raises(KeyFileError, match=r"mode 0644\): run `chmod 600"):
        ToolKey.ensure(folder)


def test_the_kid_is_the_rfc7638_thumbprint(tmp_path):
    """Computed here from the key's numbers, not through jwcrypto."""
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    key = ToolKey.ensure(tmp_path)
    numbers = load_pem_private_key(key.private_pem.encode(), None).public_key().public_numbers()

    def b64(n: int) -> str:
        raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    canonical = json.dumps(
        {"e": b64(numbers.e), "kty": "RSA", "n": b64(numbers.n)}, separators=(",", ":")
    )
    thumbprint = base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=")
    assert key.kid == thumbprint.decode()
    assert numbers.n.bit_length() == 2048
    jwk = key.public_jwk()
    assert (jwk["kid"], jwk["alg"], jwk["use"], jwk["n"]) == (
        key.kid,
        "RS256",
        "sig",
        b64(numbers.n),
    )
    assert "d" not in jwk and key.jwks() == {"keys": [jwk]}


def test_the_public_jwk_verifies_what_the_private_key_signs(tmp_path):
    key = ToolKey.ensure(tmp_path / "a")
    token = jwt.encode({"iss": "tool"}, key.private_pem, "RS256", headers={"kid": key.kid})
    public = jwt.PyJWK(key.public_jwk())
    assert jwt.decode(token, public.key, algorithms=["RS256"]) == {"iss": "tool"}
    assert jwt.get_unverified_header(token)["kid"] == key.kid
    other = ToolKey.ensure(tmp_path / "b")
    forged = jwt.encode({"iss": "tool"}, other.private_pem, "RS256")
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(forged, public.key, algorithms=["RS256"])


def launch(sub: str, role: str, context: str = "course-101", **ags) -> LaunchMessage:
    return LaunchMessage.read(launch_claims(sub, role, context, **ags))


def test_launches_merge_into_the_link_and_a_course_never_launched_says_so(tmp_path):
    folder = Course.at(tmp_path).lms
    assert CourseLink.read(folder) is None
    with pytest.raises(NotLinked, match="no one has launched the course from the LMS yet"):
        CourseLink.require(folder, "viewcopy lms push")
    CourseLink.record_launch(folder, launch("u1", "Learner"), "u1")
    CourseLink.record_launch(folder, launch("T 9", "Instructor", lineitem="https://l/1"), "t-9")
    link = CourseLink.read(folder)
    assert (link.context_id, link.context_title, link.deployment_id) == (
        "course-101",
        "PyTorch and the memory wall",
        "1:dep",
    )
    assert (link.lineitems, link.lineitem, link.scopes) == (
        f"{ISSUER}/c/lineitems",
        "https://l/1",
        ("s",),
    )
    assert link.memberships_url == "https://lms.example.edu/c/members"
    assert sorted(link.people) == ["t-9", "u1"]
    assert (link.people["u1"].sub, link.people["u1"].learner) == ("u1", True)
    assert (link.people["t-9"].sub, link.people["t-9"].learner) == ("T 9", False)
    assert link.people["u1"].email == "u1@example.edu"


def test_a_launch_from_another_context_is_refused_and_the_link_kept(tmp_path):
    folder = Course.at(tmp_path).lms
    CourseLink.record_launch(folder, launch("u1", "Learner"), "u1")
    before = (folder / "link.json").read_bytes()
    with pytest.raises(LinkMismatch, match="one course folder serves one LMS course"):
        CourseLink.record_launch(folder, launch("u2", "Learner", context="other"), "u2")
    assert (folder / "link.json").read_bytes() == before


def test_hub_names_are_lms_ids_made_safe_and_distinct():
    assert hub_name("3f2a-99") == "3f2a-99"
    assert hub_name("Ann|42") != hub_name("ann|42")
    assert hub_name("Ann|42").startswith("ann-42-")


def test_the_journal_keeps_what_was_sent_and_drops_a_line_torn_by_a_crash(tmp_path):
    journal = Journal(tmp_path)
    first = {"userId": "u1", "scoreGiven": 3.0, "timestamp": now_stamp()}
    journal.remember_lineitem("lab", "https://l/1")
    journal.sending("https://l/1", "u1", "s1", first)
    journal.sent("https://l/1", "u1", "s1", first)
    second = {**first, "scoreGiven": 4.0, "timestamp": now_stamp(after=first["timestamp"])}
    journal.sending("https://l/1", "u1", "s1", second)
    with journal.path.open("a") as sink:
        sink.write('{"kind": "score", "state": "se')  # the crash, mid-write
    again = Journal(tmp_path)
    assert again.lineitems == {"lab": "https://l/1"}
    assert again.sent_payload("https://l/1", "u1") == first
    assert again.pending("https://l/1", "u1").payload == second
    assert second["timestamp"] > first["timestamp"]
    again.sent("https://l/1", "u1", "s1", second)
    assert Journal(tmp_path).pending("https://l/1", "u1") is None
    assert Journal(tmp_path).sent_payload("https://l/1", "u1") == second


def test_a_stamp_is_always_in_a_later_whole_second_than_the_one_it_follows():
    future = "2999-01-01T00:00:00.999999+00:00"  # Moodle compares whole seconds: 409 otherwise
    assert now_stamp(after=future) == "2999-01-01T00:00:01.000000+00:00"


def test_lms_keys_prints_what_to_give_the_lms(tmp_path):
    parser = argparse.ArgumentParser()
    LMS.add_to(parser.add_subparsers(dest="command"))
    args = ["lms", "keys", "--course", str(tmp_path), "--hub", "https://hub.uni.example/hub/"]
    said = LMS.run(parser.parse_args(args))
    key = ToolKey.ensure(Course.at(tmp_path).lms)
    for line in (
        "login URL (OIDC login initiation): https://hub.uni.example/hub/lti13/oauth_login",
        "redirect URL: https://hub.uni.example/hub/lti13/oauth_callback",
        "target link URI: https://hub.uni.example/hub",
        "key set URL (public JWK set): https://hub.uni.example/hub/lti13/jwks",
        "    " + json.dumps(key.public_jwk(), sort_keys=True),
        "    https://purl.imsglobal.org/spec/lti-ags/scope/score",
        "    https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly",
    ):
        assert line in said.splitlines() or f"  {line}" in said.splitlines()
    assert (
        f"Then write what the LMS gives back in {Course.at(tmp_path).lms / 'registration.json'}"
        in said
    )
    write(Course.at(tmp_path).lms, {**GOOD, "username_claim": "email"})
    said = LMS.run(parser.parse_args(args))
    assert "client abc123, deployment(s) 1:dep, hub names from the 'email' claim" in said
    assert ToolKey.ensure(Course.at(tmp_path).lms).kid == key.kid
