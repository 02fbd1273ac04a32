"""`viewcopy lms roster`: the course's learners from the LMS (NRPS, every page) into the
gradebook, once or again mid-term: new students added, names and emails brought up to date,
dropped ones (gone from the roster, or Inactive or Deleted there) kept with their grades; each
change printed. Instructors and teaching assistants are not enrolled as students.

What the roster last said is kept in `<course>/lms/roster.json`: the next run tells a change
from what it already knew, and the push maps gradebook ids to LMS users with it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from viewcopy.course.folder import Course
from viewcopy.files.atomic import write_atomically
from viewcopy.lms.connection import DEFAULT_RETRIES, Retries
from viewcopy.lms.errors import LmsError
from viewcopy.lms.people import BY_ROSTER, People, change
from viewcopy.lms.vocabulary import STUDENT, course_role

ROSTER_FILE = "roster.json"
ACTIVE = "Active"
MEMBER_FIELD = {
    "sub": "user_id",
    "email": "email",
    "name": "name",
    "given_name": "given_name",
    "family_name": "family_name",
}
"""The NRPS member field that holds each launch claim a hub name can be made of."""


@dataclass(frozen=True)
class RosterSnapshot:
    """The learners the LMS listed at the last `viewcopy lms roster`, by gradebook id."""

    read_at: str
    members: Mapping[str, dict]

    @classmethod
    def read(cls, folder: Path) -> RosterSnapshot | None:
        path = folder / ROSTER_FILE
        if not path.is_file():
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(data["read_at"], data["members"])

    def write(self, folder: Path) -> None:
        path = folder / ROSTER_FILE
        write_atomically(
            path, json.dumps({"read_at": self.read_at, "members": dict(self.members)}, indent=1)
        )

    def user_of(self, student_id: str) -> str | None:
        member = self.members.get(student_id)
        return member["user_id"] if member else None

    def active(self) -> set[str]:
        return {s for s, m in self.members.items() if m.get("status", ACTIVE) == ACTIVE}


@dataclass
class RosterChanges:
    """What one roster run changed in the gradebook."""

    learners: int = 0
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    back: list[str] = field(default_factory=list)
    staff: int = 0
    unnamed: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)

    def summary(self) -> str:
        lines = [*self.added, *self.updated, *self.back, *self.dropped]
        if not lines:
            lines.append(f"no change: {self.learners} learners in the LMS, all enrolled as before")
        else:
            lines.append(f"{self.learners} active learners in the LMS")
        if self.staff:
            lines.append(f"{self.staff} instructors or assistants, not enrolled as students")
        if self.unnamed:
            lines.append(f"not enrolled, no name for them in the roster: {', '.join(self.unnamed)}")
        if self.outside:
            lines.append(
                f"in the gradebook but never on the LMS roster (kept): {', '.join(self.outside)}"
            )
        return "\n".join(lines)


def roster(
    course: Course,
    *,
    retries: Retries = DEFAULT_RETRIES,
    sleep: Callable[[float], None] = time.sleep,
) -> RosterChanges:
    """Read the LMS's roster and enrol its learners in the course's gradebook."""
    from pylti1p3.names_roles import NamesRolesProvisioningService

    from viewcopy.lms.linked_course import LinkedCourse

    folder = course.lms
    linked = LinkedCourse.require(course, "viewcopy lms roster")
    link = linked.link
    if not link.memberships_url:
        raise LmsError(
            "the LMS's launches offered no roster service (NRPS): enable Names and Role "
            "Provisioning Services for the tool in the LMS, then launch the course again"
        )
    connection = linked.connect(retries, sleep)
    claim = connection.registration.username_claim
    if claim not in MEMBER_FIELD:
        raise LmsError(
            f"hub names are the launch's {claim!r} claim, which the LMS's roster does not list: "
            "students enrol in the gradebook at their first launch instead (or use sub, email "
            "or name as username_claim)"
        )
    service = NamesRolesProvisioningService(
        connection, {"context_memberships_url": link.memberships_url}
    )
    members = service.get_members()
    before = RosterSnapshot.read(folder)
    changes, learners = RosterChanges(), []
    for member in members:
        if course_role(member.get("roles") or ()) != STUDENT:
            changes.staff += 1
        elif not str(member.get(MEMBER_FIELD[claim]) or "").strip():
            changes.unnamed.append(member.get("name") or member.get("user_id", "?"))
        else:
            learners.append(member)
    names = _names_of(folder, link.issuer, learners, MEMBER_FIELD[claim])
    snapshot = _enrol(course, learners, names, before, changes)
    snapshot.write(folder)
    return changes


def _names_of(folder: Path, issuer: str, learners: list, id_field: str) -> dict[str, str]:
    """LMS user id -> hub name of each learner: their binding, made now for one who has none
    (the name their first launch would have offered), so roster and launch agree."""

    def bound(people: People) -> People:
        for member in learners:
            people = people.bound(issuer, str(member["user_id"]), str(member[id_field]), BY_ROSTER)
        return people

    people = change(folder, bound)
    return {str(m["user_id"]): people.of(issuer, str(m["user_id"])).name for m in learners}


def _enrol(
    course: Course, learners, names, before: RosterSnapshot | None, changes: RosterChanges
) -> RosterSnapshot:
    """Each learner enrolled (or brought up to date) under their hub name, the dropped kept;
    `changes` says what changed; the roster as read now."""
    listed = {}
    for member in learners:
        listed[names[str(member["user_id"])]] = {
            "user_id": str(member["user_id"]),
            "name": member.get("name") or "",
            "given_name": member.get("given_name") or "",
            "family_name": member.get("family_name") or "",
            "email": member.get("email") or "",
            "status": member.get("status") or ACTIVE,
        }
    now_active = {s for s, m in listed.items() if m["status"] == ACTIVE}
    was_active = before.active() if before else set()
    known = set(before.members) if before else set()
    changes.learners = len(now_active)
    with course.gradebook() as gradebook:
        students = {s.id: s for s in gradebook.students}
        for student_id in sorted(now_active):
            _enrol_one(gradebook, students.get(student_id), student_id, listed[student_id], changes)
            if student_id in known and student_id not in was_active:
                changes.back.append(f"back: {student_id} is active in the LMS again")
        for student_id in sorted(set(students) - now_active):
            member = listed.get(student_id)
            if student_id in was_active or (member and student_id not in known):
                why = f"{member['status']} in the LMS" if member else "gone from the LMS roster"
                changes.dropped.append(f"dropped {student_id} ({why}): kept with grades")
            elif member is None and student_id not in known:
                changes.outside.append(student_id)
    gone = {s: {**m, "status": "Gone"} for s, m in (before.members if before else {}).items()}
    read_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return RosterSnapshot(read_at, {**gone, **listed})


def _enrol_one(gradebook, student, student_id: str, member: dict, changes: RosterChanges) -> None:
    first, last = _names(member)
    email = member["email"]
    if student is None:
        gradebook.update_or_create_student(
            student_id, first_name=first, last_name=last, email=email or None
        )
        who = ", ".join(x for x in (f"{first} {last}".strip(), email) if x)
        changes.added.append(f"added {student_id}" + (f" ({who})" if who else ""))
        return
    update = {}
    if email and email != (student.email or ""):
        update["email"] = email
        changes.updated.append(
            f"updated {student_id}'s email ({student.email or 'none'} -> {email})"
        )
    if (first or last) and (first, last) != (student.first_name or "", student.last_name or ""):
        update.update(first_name=first, last_name=last)
        changes.updated.append(f"updated {student_id}'s name ({first} {last})")
    if update:
        gradebook.update_or_create_student(student_id, **update)


def _names(member: dict) -> tuple[str, str]:
    """First and last name: the roster's given and family names, else its name split at the
    first space (commas kept out: `nbgrader export` writes its CSV unquoted)."""
    first, last = member["given_name"], member["family_name"]
    if not (first or last) and member["name"]:
        first, _, last = member["name"].partition(" ")
    return first.replace(",", ";").strip(), last.replace(",", ";").strip()
