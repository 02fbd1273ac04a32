"""Several deployments of one registration, the platform's keys kept and fetched again on a new
kid, and a refused scope said as the LMS setting to change.

The registration holds several deployment ids (an older file with one `deployment_id` still
reads, and is written in the new form); `viewcopy lms deployment` lists, adds and removes them;
a link from a deployment no longer registered is refused with the command that adds it. The
platform's key set is fetched once, and again only for a token whose kid it lacks: against a
fake key set counting its fetches, and against the test platform rotating its key. A token
endpoint answering `invalid_scope` (as Moodle does) names the scopes and the LMS settings.
"""

from __future__ import annotations

import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import jwt
import pytest
from support.launch_claims import launch_claims

from viewcopy.course.folder import Course
from viewcopy.hub.state import keep_registration
from viewcopy.lms.commands import LMS
from viewcopy.lms.errors import LmsError, LmsRefused
from viewcopy.lms.keys import PlatformKeyError, PlatformKeys, ToolKey
from viewcopy.lms.launch_message import LaunchMessage
from viewcopy.lms.link import CourseLink
from viewcopy.lms.linked_course import LinkedCourse
from viewcopy.lms.registration import (
    REGISTRATION_FILE,
    Registration,
    UnknownDeployment,
)
from viewcopy.lms.vocabulary import DEPLOYMENT_CLAIM, TOOL_SCOPES

OLD_FORM = {
    "issuer": "https://canvas.example.edu",
    "client_id": "10000000000123",
    "deployment_id": "456:0123abcd",
    "key_set_url": "https://canvas.example.edu/jwks",
    "authorize_url": "https://canvas.example.edu/authorize",
    "token_url": "https://canvas.example.edu/token",
}


def registered(course, data=OLD_FORM):
    """`data` written as the course's registration.json; its path."""
    folder = Course.at(course).lms
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / REGISTRATION_FILE
    path.write_text(json.dumps(data))
    return path


def lms(*args: str) -> str:
    parser = argparse.ArgumentParser()
    LMS.add_to(parser.add_subparsers(dest="command"))
    return LMS.run(parser.parse_args(["lms", *args]))


# --- deployments --------------------------------------------------------------------------------


def test_an_older_registration_reads_and_is_written_in_the_new_form(tmp_path):
    path = registered(tmp_path)
    registration = Registration.read(path)
    assert registration.deployment_ids == ("456:0123abcd",)
    registration.write(path)
    written = json.loads(path.read_text())
    assert "deployment_id" not in written and written["deployment_ids"] == ["456:0123abcd"]
    assert Registration.read(path) == registration


@pytest.mark.parametrize(
    ("deployments", "said"),
    [
        ({"deployment_ids": []}, "deployment_ids must be a list of non-empty strings"),
        ({"deployment_ids": "1:a"}, "deployment_ids must be a list of non-empty strings"),
        ({"deployment_ids": ["1:a", " "]}, "deployment_ids must be a list of non-empty strings"),
        ({"deployment_id": 7}, "deployment_id must be a non-empty string, not 7"),
        ({}, "deployment_ids is missing"),
    ],
)
def test_bad_or_missing_deployments_are_named(tmp_path, deployments, said):
    data = {k: v for k, v in OLD_FORM.items() if k != "deployment_id"}
    path = registered(tmp_path, {**data, **deployments})
    with pytest.raises(ValueError, match=said) as raised:
        Registration.read(path)
    assert str(path) in str(raised.value)


def test_lms_deployment_lists_adds_and_removes_one(tmp_path):
    path = registered(tmp_path)
    course = str(tmp_path)
    assert lms("deployment", "list", "--course", course).endswith("deployment(s) 456:0123abcd")
    said = lms("deployment", "add", "789:course-2", "--course", course)
    assert "deployment(s) 456:0123abcd, 789:course-2" in said
    assert json.loads(path.read_text())["deployment_ids"] == ["456:0123abcd", "789:course-2"]
    lms("deployment", "add", "789:course-2", "--course", course)  # twice: kept once
    assert Registration.read(path).deployment_ids == ("456:0123abcd", "789:course-2")
    lms("deployment", "remove", "456:0123abcd", "--course", course)
    assert Registration.read(path).deployment_ids == ("789:course-2",)
    for args, said in (
        (("remove", "789:course-2"), "the only deployment"),
        (("remove", "nope"), "has no deployment 'nope'"),
        (("add",), "needs the deployment ID"),
    ):
        with pytest.raises(LmsError, match=said):
            lms("deployment", *args, "--course", course)
    assert Registration.read(path).deployment_ids == ("789:course-2",)


def test_an_unknown_deployment_is_named_with_the_command_that_adds_it(tmp_path):
    registration = Registration.read(registered(tmp_path))
    registration.check_deployment("456:0123abcd", tmp_path, "this launch")  # registered: taken
    with pytest.raises(UnknownDeployment) as raised:
        registration.check_deployment("999:other", tmp_path, "this launch")
    message = str(raised.value)
    assert "this launch comes from deployment '999:other'" in message
    assert f"viewcopy lms deployment add 999:other --course {tmp_path}" in message


def test_a_link_from_a_deployment_no_longer_registered_is_refused(tmp_path):
    registered(tmp_path, {**OLD_FORM, "deployment_id": "1:new"})
    claims = {**launch_claims("u1"), "iss": OLD_FORM["issuer"], DEPLOYMENT_CLAIM: "456:0123abcd"}
    CourseLink.record_launch(Course.at(tmp_path).lms, LaunchMessage.read(claims), "u1")
    with pytest.raises(UnknownDeployment, match="deployment add 456:0123abcd"):
        LinkedCourse.require(Course.at(tmp_path), "viewcopy lms push")
    with pytest.raises(LmsError, match="the course's link \\(viewcopy lms roster\\) comes from"):
        lms("roster", "--course", str(tmp_path))
    lms("deployment", "add", "456:0123abcd", "--course", str(tmp_path))
    assert LinkedCourse.require(Course.at(tmp_path), "viewcopy lms push").link.context_id


def test_restarting_the_hub_with_the_lms_file_keeps_the_added_deployments(tmp_path):
    folder = Course.at(tmp_path).lms
    keep_registration(folder, Registration.from_dict(OLD_FORM))
    lms("deployment", "add", "789:course-2", "--course", str(tmp_path))
    keep_registration(folder, Registration.from_dict(OLD_FORM))  # `viewcopy hub --lti` again
    kept = Registration.read(folder / REGISTRATION_FILE)
    assert kept.deployment_ids == ("456:0123abcd", "789:course-2")
    other_client = {**OLD_FORM, "client_id": "another", "deployment_id": "1:x"}
    keep_registration(folder, Registration.from_dict(other_client))  # another registration
    assert Registration.read(folder / REGISTRATION_FILE).deployment_ids == ("1:x",)


# --- the platform's keys ------------------------------------------------------------------------


class CountedKeySet:
    """A platform's key set URL: the keys it publishes now, and how often it was fetched."""

    def __init__(self, *keys: ToolKey):
        self.keys, self.fetches = list(keys), 0

    def __call__(self, url: str) -> dict:
        self.fetches += 1
        return {"keys": [key.public_jwk() for key in self.keys]}


def signed(key: ToolKey, with_kid: bool = True) -> str:
    headers = {"kid": key.kid} if with_kid else {}
    return jwt.encode({"iss": "lms"}, key.private_pem, "RS256", headers=headers)


def verified(keys: PlatformKeys, token: str, audience: str | None = None) -> dict:
    return jwt.decode(token, keys.signing_key(token).key, algorithms=["RS256"], audience=audience)


def test_platform_keys_are_kept_and_fetched_again_once_for_a_new_kid(tmp_path):
    old, new = ToolKey.ensure(tmp_path / "old"), ToolKey.ensure(tmp_path / "new")
    key_set = CountedKeySet(old)
    keys = PlatformKeys("https://lms.example.edu/jwks", fetch=key_set)
    for _ in range(3):
        assert verified(keys, signed(old)) == {"iss": "lms"}
    assert key_set.fetches == 1  # kept, not fetched at every launch
    key_set.keys = [new]  # the platform rotates its key
    assert verified(keys, signed(new)) == {"iss": "lms"}
    assert key_set.fetches == 2
    assert verified(keys, signed(new)) == {"iss": "lms"} and key_set.fetches == 2
    with pytest.raises(PlatformKeyError, match=f"signed with key '{old.kid}'") as raised:
        keys.signing_key(signed(old))  # the retired key: fetched once more, then refused
    assert "https://lms.example.edu/jwks" in str(raised.value)
    assert key_set.fetches == 3


def test_a_token_without_a_kid_takes_the_only_key(tmp_path):
    only = ToolKey.ensure(tmp_path / "only")
    keys = PlatformKeys("https://lms.example.edu/jwks", fetch=CountedKeySet(only))
    assert verified(keys, signed(only, with_kid=False)) == {"iss": "lms"}
    keys = PlatformKeys(
        "https://lms.example.edu/jwks",
        fetch=CountedKeySet(only, ToolKey.ensure(tmp_path / "two")),
    )
    with pytest.raises(PlatformKeyError, match="signed with key None"):
        keys.signing_key(signed(only, with_kid=False))


def test_an_unreadable_key_set_is_named(tmp_path):
    from support.servers import free_port

    url = f"http://127.0.0.1:{free_port()}/jwks"
    with pytest.raises(PlatformKeyError, match="key set .* cannot be read") as raised:
        PlatformKeys(url).signing_key(signed(ToolKey.ensure(tmp_path)))
    assert url in str(raised.value) and "key_set_url" in str(raised.value)


def test_the_test_platform_rotating_its_key_is_followed(tmp_path):
    from support.lti_platform import LEARNER, Member, Platform, require_lti

    require_lti()
    platform = Platform.start(tmp_path / "platform")
    try:
        platform.register_tool("http://127.0.0.1:9/login", "http://127.0.0.1:9/hub")
        platform.enrol([Member("ada", "Ada Student", "ada@uni.example", (LEARNER,))])
        keys = PlatformKeys(platform.registration()["key_set_url"])
        before = platform.id_token("ada", "n-1")
        assert verified(keys, before, platform.client_id)["sub"] == "ada"
        rotated = ToolKey.ensure(tmp_path / "rotated")  # the platform's new key files (PEM)
        (platform.folder / "platform_key.pem").write_text(rotated.private_pem)
        (platform.folder / "platform_public.pem").write_text(rotated.public_pem)
        after = platform.id_token("ada", "n-2")
        assert jwt.get_unverified_header(after)["kid"] != jwt.get_unverified_header(before)["kid"]
        assert verified(keys, after, platform.client_id)["nonce"] == "n-2"
        with pytest.raises(PlatformKeyError, match="does not hold"):
            keys.signing_key(before)
    finally:
        platform.stop()


# --- a refused scope ----------------------------------------------------------------------------


class RefusesScopes(BaseHTTPRequestHandler):
    """A token endpoint that answers as Moodle does when the tool lacks the services."""

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps({"error": "invalid_scope"}).encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_refused_scope_names_the_scopes_and_the_lms_settings(tmp_path):
    from viewcopy.lms.connection import Connection

    server = HTTPServer(("127.0.0.1", 0), RefusesScopes)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        token_url = f"http://127.0.0.1:{server.server_port}/token"
        registration = Registration.from_dict({**OLD_FORM, "token_url": token_url})
        connection = Connection(registration, ToolKey.ensure(tmp_path), sleep=lambda s: None)
        with pytest.raises(LmsRefused) as raised:
            connection.make_service_request(TOOL_SCOPES, f"{token_url}/../lineitems")
    finally:
        server.shutdown()
    message = str(raised.value)
    assert raised.value.status == 400
    assert all(scope in message for scope in TOOL_SCOPES), message
    for setting in (
        "LTI Advantage Services",
        "IMS LTI Assignment and Grade Services",
        "IMS LTI Names and Role Provisioning",
    ):
        assert setting in message
    assert "does not accept this course's key" not in message
