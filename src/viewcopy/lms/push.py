"""`viewcopy lms push ASSIGNMENT`: every student's score to the assignment's line item in the
LMS (AGS), once.

The line item is found or created once and remembered in the journal. Each score is journaled
"sending" before its POST and "sent" after the LMS's 2xx: a score unchanged since it was sent is
not sent again, and one left "sending" by a crash or an outage is sent again exactly as it was
(same timestamp) before anything newer, so nothing is lost and nothing is sent twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from viewcopy.course.assignment import ASSIGNMENT
from viewcopy.lms.connection import DEFAULT_RETRIES, Connection, Retries
from viewcopy.lms.errors import LmsError, LmsRefused, LmsUnreachable
from viewcopy.lms.journal import Journal, now_stamp, unstamped
from viewcopy.lms.link import CourseLink
from viewcopy.lms.registration import lms_folder
from viewcopy.lms.roster import RosterSnapshot
from viewcopy.lms.scores import GRADING_FAILED, PENDING_MANUAL, StudentScore, assignment_scores
from viewcopy.lms.tool import LAB_TITLE

AGS = "https://purl.imsglobal.org/spec/lti-ags/scope/"
SCORE_SCOPE, LINEITEM_SCOPE = AGS + "score", AGS + "lineitem"
LINEITEM_READ_SCOPE = AGS + "lineitem.readonly"
REFUSED_ONE = (400, 403, 404, 409, 422)
"""Statuses with which an LMS refuses one score (a user not in the course, an older timestamp):
named, and the push goes on with the others."""


@dataclass
class Pushed:
    """What one push did, for its summary."""

    assignment: str
    lineitem: str = ""
    lineitem_how: str = ""
    sent: list[StudentScore] = field(default_factory=list)
    resent: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    failed_grading: list[StudentScore] = field(default_factory=list)
    unmapped: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Every student's score is in the LMS (or none could be, for a reason named)."""
        return not self.refused

    def summary(self) -> str:
        lines = [f"line item: {self.lineitem} ({self.lineitem_how})"]
        if not self.sent and not self.resent:
            lines.append(
                f"nothing changed since the last push: {len(self.unchanged)} "
                f"score{_s(len(self.unchanged))} already in the LMS"
            )
        else:
            manual = sum(s.grading == PENDING_MANUAL for s in self.sent)
            line = f"sent {len(self.sent)} score{_s(len(self.sent))}"
            if manual:
                line += f" ({manual} awaiting hand grading of answers 21-25: PendingManual)"
            if self.unchanged:
                line += f"; {len(self.unchanged)} unchanged, not sent again"
            lines.append(line)
        if self.resent:
            lines.append(
                f"sent again, as they were, {len(self.resent)} score{_s(len(self.resent))} an "
                f"earlier push left unanswered: {', '.join(self.resent)}"
            )
        for score in self.failed_grading:
            lines.append(
                f"{score.student_id}: grading failed ({score.failure}): nothing sent, the LMS "
                f"keeps what it had; fix it and run `viewcopy grade {self.assignment}`, then "
                "push again"
            )
        if self.unmapped:
            lines.append(
                f"not sent, {len(self.unmapped)} student{_s(len(self.unmapped))} with no LMS "
                "user to send to:"
            )
            lines += [f"  {student}: {why}" for student, why in sorted(self.unmapped.items())]
        if self.refused:
            lines.append(f"refused by the LMS, {len(self.refused)}:")
            lines += [f"  {student}: {why}" for student, why in sorted(self.refused.items())]
        return "\n".join(lines)


def push(
    course: Path,
    assignment: str,
    *,
    retries: Retries = DEFAULT_RETRIES,
    sleep: Callable[[float], None] = time.sleep,
) -> Pushed:
    """Push the assignment's scores; LmsUnreachable (the journal kept) when the LMS stops
    answering, saying how far it got."""
    from viewcopy.lms.connection import connect

    course = Path(course)
    folder = lms_folder(course)
    link = CourseLink.require(folder, "viewcopy lms push")
    connection = connect(course, retries, sleep)
    maximum, scores = assignment_scores(course, assignment)
    journal = Journal(folder)
    done = Pushed(assignment)
    ags = _service(connection, link)
    try:
        members = _lms_members(connection, link)
        claim = connection.registration.username_claim
        users = _users(course, link, claim, scores, members, done)
        done.lineitem, done.lineitem_how = _lineitem(ags, link, journal, assignment, maximum)
        for score in scores:
            if score.student_id in users:
                _push_one(ags, journal, done, score, users[score.student_id])
    except LmsUnreachable as exc:
        sent = len(done.sent) + len(done.resent)
        raise LmsUnreachable(
            f"{exc}\nsent {sent} score{_s(sent)} before that; the journal "
            f"({journal.path}) keeps what was sent, so pushing again sends only the rest"
        ) from None
    return done


def _service(connection: Connection, link: CourseLink):
    from pylti1p3.assignments_grades import AssignmentsGradesService

    if not link.lineitems and not link.lineitem:
        raise LmsError(
            "the LMS's launches offered no grade service (AGS): enable Assignment and Grade "
            "Services for the tool in the LMS, then launch the course from the LMS again"
        )
    if SCORE_SCOPE not in link.scopes:
        raise LmsError(
            f"the LMS's launches did not give the tool the scope {SCORE_SCOPE} (it gave "
            f"{', '.join(link.scopes) or 'none'}): allow the tool to send scores in the LMS, "
            "then launch the course from the LMS again"
        )
    data = {"scope": list(link.scopes), "lineitems": link.lineitems or ""}
    if link.lineitem:
        data["lineitem"] = link.lineitem
    return AssignmentsGradesService(connection, data)


def _lineitem(ags, link, journal, assignment: str, maximum: float) -> tuple[str, str]:
    """The assignment's line item id and how it was found; found or created once, then
    remembered in the journal."""
    from pylti1p3.lineitem import LineItem

    if assignment in journal.lineitems:
        return journal.lineitems[assignment], "as remembered from the first push"
    if link.lineitem and assignment == ASSIGNMENT:
        found, how = link.lineitem, "the line item of the LMS's link to the lab"
    else:
        if not ({LINEITEM_SCOPE, LINEITEM_READ_SCOPE} & set(link.scopes)):
            raise LmsError(
                f"the LMS gives the tool no line item of its own for {assignment!r} and no scope "
                "to find or create one: give the tool the AGS line item scope in the LMS"
            )
        item = ags.find_lineitem_satisfying(
            lambda i: assignment in (i.get("resourceId"), i.get("tag"))
        )
        how = "found in the LMS"
        if item is None:
            if LINEITEM_SCOPE not in link.scopes:
                raise LmsError(
                    f"the LMS has no line item for {assignment!r} and does not let the tool "
                    "create one: create a gradebook column with tag or resource id "
                    f"{assignment!r} and {maximum:g} points in the LMS, or allow the tool the "
                    "line item scope"
                )
            label = LAB_TITLE if assignment == ASSIGNMENT else assignment
            item = ags.create_lineitem(
                LineItem()
                .set_label(label)
                .set_score_maximum(maximum)
                .set_resource_id(assignment)
                .set_tag(assignment)
            )
            how = f"created: {label!r}, {maximum:g} points"
        found = item.get_id()
    journal.remember_lineitem(assignment, found)
    return found, how


def _users(course, link, claim, scores, members, done: Pushed) -> dict[str, str]:
    """Gradebook id -> LMS user id: who launched (the link's people), who the roster enrolled,
    or, where the hub name is the LMS's `sub` itself, the id. A user the LMS's roster does not
    list (`members`, None where the LMS offers no roster) gets nothing; the others not mapped
    go into done.unmapped with the fix."""
    roster = RosterSnapshot.read(lms_folder(course))
    users: dict[str, str] = {}
    for score in scores:
        student = score.student_id
        person = link.person(student)
        user = person.sub if person is not None else None
        if user is None and roster is not None:
            user = roster.user_of(student)
        if user is None and claim == "sub" and roster is None:
            user = student
        if user is None:
            done.unmapped[student] = (
                "never launched the course from the LMS and not on its roster as last read: "
                "they launch once from the LMS, or run `viewcopy lms roster`"
                if roster is not None
                else f"never launched the course from the LMS (hub names are the {claim!r} "
                "claim, not the LMS's user id): they launch once from the LMS, or run "
                "`viewcopy lms roster`"
            )
        elif members is not None and user not in members:
            done.unmapped[student] = (
                f"the LMS's course roster has no user {user!r}: enrol them in the LMS course "
                "(then `viewcopy lms roster`), or nothing to do if they left it"
            )
        else:
            users[student] = user
    return users


def _lms_members(connection: Connection, link: CourseLink) -> set[str] | None:
    """The LMS user ids on the course's roster (NRPS), None where the LMS offers no roster."""
    from pylti1p3.names_roles import NamesRolesProvisioningService

    if not link.memberships_url:
        return None
    service = NamesRolesProvisioningService(
        connection, {"context_memberships_url": link.memberships_url}
    )
    try:
        return {str(m["user_id"]) for m in service.get_members()}
    except LmsRefused as refused:
        if refused.status == 403:  # the tool may send scores without reading the roster
            return None
        raise


def _push_one(ags, journal: Journal, done: Pushed, score: StudentScore, user: str) -> None:
    from pylti1p3.lineitem import LineItem

    lineitem, student = done.lineitem, score.student_id
    item = LineItem({"id": lineitem})
    if score.grading == GRADING_FAILED:  # nothing posted: the LMS keeps what it had
        done.failed_grading.append(score)
        return
    pending = journal.pending(lineitem, user)
    if pending is not None:  # an earlier run's POST that was never answered: as it was
        if not _post(ags, journal, done, item, student, user, pending.payload):
            return
        done.resent.append(student)
    payload = {**score.payload(), "userId": user}
    last = journal.sent_payload(lineitem, user)
    if last is not None and unstamped(last) == payload:
        if pending is None:
            done.unchanged.append(student)
        return
    payload["timestamp"] = now_stamp(after=journal.last_stamp(lineitem, user))
    if _post(ags, journal, done, item, student, user, payload):
        done.sent.append(score)


def _post(ags, journal: Journal, done: Pushed, item, student: str, user: str, payload) -> bool:
    """One score POST, journaled around; False when the LMS refused this one score."""
    journal.sending(item.get_id(), user, student, payload)
    try:
        ags.put_grade(_grade(payload), item)
    except LmsRefused as refused:
        if refused.status not in REFUSED_ONE:
            raise
        journal.refused(item.get_id(), user, student, payload)
        done.refused[student] = str(refused)
        return False
    journal.sent(item.get_id(), user, student, payload)
    return True


def _grade(payload: dict):
    """pylti1p3's Grade holding exactly `payload`."""
    from pylti1p3.grade import Grade

    grade = (
        Grade()
        .set_user_id(payload["userId"])
        .set_timestamp(payload["timestamp"])
        .set_activity_progress(payload["activityProgress"])
        .set_grading_progress(payload["gradingProgress"])
    )
    if "scoreGiven" in payload:
        grade.set_score_given(payload["scoreGiven"]).set_score_maximum(payload["scoreMaximum"])
    if payload.get("submission", {}).get("submittedAt"):
        grade.set_submitted_at(payload["submission"]["submittedAt"])
    if payload.get("comment"):
        grade.set_comment(payload["comment"])
    return grade


def _s(n: int) -> str:
    return "" if n == 1 else "s"
