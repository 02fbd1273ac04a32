"""A course linked to the test's LTI platform as a course's LMS administrator and instructor
would link it: the course's key given to the platform, registration.json written with what the
platform gave back, and an instructor's launch recorded as the hub's login records it (the
id_token checked against the platform's key set, the person bound to a hub name). For the
tool-side LMS tests (push, roster)."""

from __future__ import annotations

import contextlib
import json
import secrets
from collections.abc import Iterator
from pathlib import Path

import jwt
from support.lti_platform import INSTRUCTOR, Member, Platform

from viewcopy.course.folder import Course
from viewcopy.lms.keys import ToolKey
from viewcopy.lms.launch_message import LaunchMessage
from viewcopy.lms.link import CourseLink
from viewcopy.lms.people import BY_LAUNCH, bind
from viewcopy.lms.registration import REGISTRATION_FILE

TEACHER = Member("teacher-1", "Ada Lovelace", "ada@uni.example", (INSTRUCTOR,))
NO_HUB = "http://127.0.0.1:9/hub/lti13"
"""The tool's login and launch URLs as registered: these tests never launch into a hub."""


@contextlib.contextmanager
def running_platform(folder: Path) -> Iterator[Platform]:
    platform = Platform.start(folder)
    try:
        yield platform
    finally:
        platform.stop()


def link_course(
    course: Path, platform: Platform, members: list[Member], *, key_set: dict | None = None
) -> ToolKey:
    """Register the course's key with the platform (or `key_set`, another key), write
    registration.json, enrol `members` and TEACHER, and record TEACHER's launch."""
    folder = Course.at(course).lms
    key = ToolKey.ensure(folder)
    platform.register_tool(
        f"{NO_HUB}/oauth_login", f"{NO_HUB}/oauth_callback", key_set=key_set or key.jwks()
    )
    (folder / REGISTRATION_FILE).write_text(json.dumps(platform.registration()))
    platform.enrol([TEACHER, *members])
    record_launch(course, platform, TEACHER.user_id)
    return key


def record_launch(course: Path, platform: Platform, user_id: str) -> CourseLink:
    """`user_id` launches the course: the platform's id_token, verified, recorded in link.json."""
    token = platform.id_token(user_id, secrets.token_hex(8))
    signing = jwt.PyJWKClient(f"{platform.url}/jwks").get_signing_key_from_jwt(token)
    claims = jwt.decode(
        token,
        signing.key,
        algorithms=["RS256"],
        audience=platform.client_id,
        issuer=platform.issuer,
    )
    launch, folder = LaunchMessage.read(claims), Course.at(course).lms
    name = bind(folder, launch.issuer, launch.sub, launch.sub, BY_LAUNCH)
    return CourseLink.record_launch(folder, launch, name)
