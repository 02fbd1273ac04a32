"""A course as the LMS commands that call its services need it, read once per command: what
launches told (`lms/link.json`), how the LMS registered the tool (`lms/registration.json`,
checked against the link's deployment), and, to connect, the course's key (`lms/tool_key.pem`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from viewcopy.course.folder import Course
from viewcopy.lms.connection import DEFAULT_RETRIES, Connection, Retries
from viewcopy.lms.errors import LmsError
from viewcopy.lms.keys import KEY_FILE, ToolKey
from viewcopy.lms.link import CourseLink
from viewcopy.lms.registration import REGISTRATION_FILE, Registration


@dataclass(frozen=True)
class LinkedCourse:
    """A course launched from its LMS: the course, its link and its registration."""

    course: Course
    link: CourseLink
    registration: Registration

    @classmethod
    def require(cls, course: Course, needed_for: str) -> LinkedCourse:
        """The course's LMS side, each file read once. NotLinked (saying what to do) where no
        launch was recorded; LmsError naming what is wrong with the registration;
        UnknownDeployment where the link's deployment is no longer registered (its service
        calls are that deployment's)."""
        link = CourseLink.require(course.lms, needed_for)
        try:
            registration = Registration.read(course.lms / REGISTRATION_FILE)
        except ValueError as exc:
            raise LmsError(str(exc)) from None
        if link.deployment_id:
            registration.check_deployment(
                link.deployment_id, course.root, f"the course's link ({needed_for})"
            )
        return cls(course, link, registration)

    def connect(
        self, retries: Retries = DEFAULT_RETRIES, sleep: Callable[[float], None] = time.sleep
    ) -> Connection:
        """The connection to the LMS's services, with the course's key (which must exist
        already: the LMS was given it)."""
        path = self.course.lms / KEY_FILE
        if not path.is_file():
            raise LmsError(
                f"{path} does not exist, so the LMS cannot know this course's key: run "
                f"`viewcopy lms keys --course {self.course.root}` and give the LMS the key it "
                "prints"
            )
        try:
            key = ToolKey.load(path)
        except ValueError as exc:
            raise LmsError(str(exc)) from None
        return Connection(self.registration, key, retries, sleep)
