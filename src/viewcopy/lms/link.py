"""What launches told about the course's LMS context: `<course>/lms/link.json`.

The hub's LTI login records every launch here (`CourseLink.record_launch`): the context, the
AGS line items URL (and the link's own line item, if it has one) with its scopes, the NRPS
memberships URL, and each person who launched, by hub name. `viewcopy lms push` and `roster`
read it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

from viewcopy.files.atomic import write_atomically
from viewcopy.files.exclusive import exclusively
from viewcopy.lms.launch_message import LaunchMessage
from viewcopy.lms.vocabulary import (
    STUDENT,
    course_role,
)

LINK_FILE, LOCK_FILE = "link.json", ".link.lock"


class NotLinked(ValueError):
    """A command needs what a launch tells, and the course was never launched from its LMS."""


class LinkMismatch(ValueError):
    """A launch from another LMS context than the one the course is linked to."""


@dataclass(frozen=True)
class Person:
    """Someone who launched: their LMS id (`sub`), name, email and roles as the LMS sent them."""

    sub: str
    name: str = ""
    email: str = ""
    roles: tuple[str, ...] = ()

    @property
    def learner(self) -> bool:
        return course_role(self.roles) == STUDENT


@dataclass(frozen=True)
class CourseLink:
    """The course's LMS context as the launches told it (the latest launch's endpoints)."""

    issuer: str
    deployment_id: str
    context_id: str
    context_title: str = ""
    lineitems: str | None = None
    lineitem: str | None = None
    scopes: tuple[str, ...] = ()
    memberships_url: str | None = None
    people: Mapping[str, Person] = field(default_factory=dict)
    updated: str = ""

    @classmethod
    def read(cls, folder: Path) -> CourseLink | None:
        """The link in a course's lms/ folder, None where no launch was ever recorded."""
        path = folder / LINK_FILE
        if not path.is_file():
            return None
        try:
            return cls.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(
                f"{path} cannot be read ({exc!r}): delete it and launch from the LMS again"
            ) from None

    @classmethod
    def require(cls, folder: Path, needed_for: str) -> CourseLink:
        """The link, or NotLinked saying what to do: a command that needs it cannot run yet
        (lms.linked_course checks it against the registration)."""
        link = cls.read(folder)
        if link is None:
            raise NotLinked(
                f"{needed_for} needs the course's link to its LMS, and no one has launched the "
                f"course from the LMS yet ({folder / LINK_FILE} does not exist): launch it "
                "once from the LMS as its instructor (viewcopy hub --lti), then run this again"
            )
        return link

    @classmethod
    def record_launch(cls, folder: Path, launch: LaunchMessage, hub_name: str) -> CourseLink:
        """Merge one launch into the link and write it atomically.

        The endpoints are the latest launch's (an LMS may move them); the person is recorded
        under their hub name. LinkMismatch for a launch from another issuer or context.
        """
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        with exclusively(folder / LOCK_FILE):  # the hub may record two launches at once
            old = cls.read(folder)
            new = _merged(old, launch, hub_name)
            _write_atomically(folder / LINK_FILE, new.as_dict())
        return new

    @classmethod
    def check_context(cls, folder: Path, launch: LaunchMessage) -> None:
        """LinkMismatch where `launch` comes from another LMS course than the linked one."""
        _same_course(cls.read(folder), launch)

    def person(self, hub_name: str) -> Person | None:
        return self.people.get(hub_name)

    def as_dict(self) -> dict:
        return {
            "issuer": self.issuer,
            "deployment_id": self.deployment_id,
            "context": {"id": self.context_id, "title": self.context_title},
            "ags": {
                "lineitems": self.lineitems,
                "lineitem": self.lineitem,
                "scopes": list(self.scopes),
            },
            "nrps": {"context_memberships_url": self.memberships_url},
            "people": {
                name: {"sub": p.sub, "name": p.name, "email": p.email, "roles": list(p.roles)}
                for name, p in sorted(self.people.items())
            },
            "updated": self.updated,
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> CourseLink:
        ags, nrps = data.get("ags") or {}, data.get("nrps") or {}
        return cls(
            issuer=data["issuer"],
            deployment_id=data["deployment_id"],
            context_id=data["context"]["id"],
            context_title=data["context"].get("title") or "",
            lineitems=ags.get("lineitems"),
            lineitem=ags.get("lineitem"),
            scopes=tuple(ags.get("scopes") or ()),
            memberships_url=nrps.get("context_memberships_url"),
            people={
                name: Person(
                    p["sub"], p.get("name") or "", p.get("email") or "", tuple(p.get("roles") or ())
                )
                for name, p in (data.get("people") or {}).items()
            },
            updated=data.get("updated") or "",
        )


def _same_course(old: CourseLink | None, launch: LaunchMessage) -> None:
    if old is not None and (old.issuer, old.context_id) != (launch.issuer, launch.context_id):
        raise LinkMismatch(
            f"this course is linked to context {old.context_id!r} of {old.issuer}, and this "
            f"launch comes from context {launch.context_id!r} of {launch.issuer}: one course "
            "folder serves one LMS course; give the other one its own course folder"
        )


def _merged(old: CourseLink | None, launch: LaunchMessage, hub_name: str) -> CourseLink:
    _same_course(old, launch)
    person = Person(launch.sub, launch.name, launch.email, launch.roles)
    base = old or CourseLink(launch.issuer, deployment_id="", context_id=launch.context_id)
    return replace(
        base,
        deployment_id=launch.deployment_id,
        context_title=launch.context_title or base.context_title,
        lineitems=launch.lineitems or base.lineitems,
        lineitem=launch.lineitem or base.lineitem,
        scopes=launch.scopes or base.scopes,
        memberships_url=launch.memberships_url or base.memberships_url,
        people={**base.people, hub_name: person},
        updated=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )


def _write_atomically(path: Path, data: dict) -> None:
    write_atomically(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
