"""`viewcopy lms push ASSIGNMENT`: every student's score to the assignment's line item in the
LMS (AGS), once.

The line item is found or created once, remembered in the journal, and made worth the course's
total at every push (lms.lineitem). Each score is journaled
"sending" before its POST and "sent" after the LMS's 2xx: a score unchanged since it was sent is
not sent again, and one left "sending" by a crash or an outage is sent again exactly as it was
(same timestamp) before anything newer, unless the LMS's results show it holds it already, so
nothing is lost and nothing is sent twice. A score the LMS refuses as not newer than the one it
holds (409: Moodle, when a retry or a resend follows a stored score whose answer was lost) is
judged by its results too: journaled sent where it holds exactly that score, else refused.

Each score carries Canvas's submission extension (a new attempt only for a new hand-in); a
student with no hand-in gets none; students awaiting hand grading are named, since an LMS that
shows only final grades (Moodle) shows them nothing until then (or, with
`c.LmsPush.partial_as_final`, their autograded part is sent as final).
"""

from __future__ import annotations

import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from viewcopy.course.folder import Course
from viewcopy.lms.connection import DEFAULT_RETRIES, Connection, Retries
from viewcopy.lms.errors import LmsRefused, LmsUnreachable
from viewcopy.lms.journal import Entry, Journal, now_stamp, unstamped
from viewcopy.lms.lineitem import find_lineitem, fit_maximum, grade_service
from viewcopy.lms.link import CourseLink
from viewcopy.lms.linked_course import LinkedCourse
from viewcopy.lms.people import People
from viewcopy.lms.roster import RosterSnapshot
from viewcopy.lms.scores import StudentScore, assignment_scores
from viewcopy.lms.vocabulary import (
    CANVAS_SUBMISSION,
    FULLY_GRADED,
    GRADING_FAILED,
    PENDING_MANUAL,
    RESULT_SCOPE,
    RESULTS_MEDIA,
)

REFUSED_ONE = (400, 403, 404, 409, 422)
"""Statuses with which an LMS refuses one score (a user not in the course, an older timestamp):
named, and the push goes on with the others."""


@dataclass
class Pushed:
    """What one push did, for its summary."""

    assignment: str
    lineitem: str = ""
    lineitem_how: str = ""
    partial_as_final: bool = False
    sent: list[StudentScore] = field(default_factory=list)
    resent: list[str] = field(default_factory=list)
    confirmed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    awaiting_hand_grading: list[str] = field(default_factory=list)
    no_hand_in: list[str] = field(default_factory=list)
    failed_grading: list[StudentScore] = field(default_factory=list)
    unmapped: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Every student's score is in the LMS (or none could be, for a reason named)."""
        return not self.refused

    def summary(self) -> str:
        lines = [f"line item: {self.lineitem} ({self.lineitem_how})", self._counts()]
        if self.resent:
            lines.append(
                f"sent again, as they were, {len(self.resent)} score{_s(len(self.resent))} an "
                f"earlier push left unanswered: {', '.join(self.resent)}"
            )
        if self.confirmed:
            lines.append(
                f"already held by the LMS (its results say so), {len(self.confirmed)} score"
                f"{_s(len(self.confirmed))} whose answer was lost: "
                f"{', '.join(self.confirmed)}"
            )
        lines += self._awaiting_hand_grading()
        if self.no_hand_in:
            lines.append(
                f"no hand-in, nothing sent (the LMS keeps what it had and makes no submission): "
                f"{', '.join(self.no_hand_in)}"
            )
        for score in self.failed_grading:
            lines.append(
                f"{score.student_id}: {score.failure}; nothing sent, the LMS "
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

    def _counts(self) -> str:
        """How many were sent and how many were already there; "nothing changed" only when
        nothing was sent, settled or refused."""
        unchanged = len(self.unchanged)
        if not (self.sent or self.resent or self.confirmed or self.refused):
            return (
                f"nothing changed since the last push: {unchanged} score{_s(unchanged)} "
                "already in the LMS"
            )
        line = f"sent {len(self.sent)} score{_s(len(self.sent))}"
        return line + (f"; {unchanged} unchanged, not sent again" if unchanged else "")

    def _awaiting_hand_grading(self) -> list[str]:
        """The students whose answers 21-25 await hand grading, named with what the LMS shows
        and how to finish."""
        waiting = self.awaiting_hand_grading
        if not waiting:
            return []
        finish = (
            "grade answers 21-25 in formgrader (`jupyter lab --LabApp.default_url=/formgrader` "
            f"in the course folder), then `viewcopy lms push {self.assignment}` again"
        )
        if self.partial_as_final:
            return [
                "sent as final, the autograded part only (c.LmsPush.partial_as_final), answers "
                f"21-25 not yet graded by hand: {', '.join(waiting)}; {finish} to send the full "
                "score"
            ]
        return [
            f"{len(waiting)} student{_s(len(waiting))} with answers 21-25 not yet graded by "
            "hand, sent as PendingManual: an LMS that shows only final grades (Moodle) shows "
            f"them no grade until then, Canvas shows the autograded part: {', '.join(waiting)}",
            f"  to finish: {finish} (or set c.LmsPush.partial_as_final = True in "
            "nbgrader_config.py to show the autograded part as final meanwhile)",
        ]


def push(
    course: Course,
    assignment: str,
    *,
    retries: Retries = DEFAULT_RETRIES,
    sleep: Callable[[float], None] = time.sleep,
) -> Pushed:
    """Push the assignment's scores; LmsUnreachable (the journal kept) when the LMS stops
    answering, saying how far it got."""
    linked = LinkedCourse.require(course, "viewcopy lms push")
    link, connection = linked.link, linked.connect(retries, sleep)
    maximum, scores = assignment_scores(course, assignment)
    journal = Journal(course.lms)
    done = Pushed(assignment, partial_as_final=course.settings.partial_as_final)
    ags = grade_service(connection, link)
    try:
        members = _lms_members(connection, link)
        claim = connection.registration.username_claim
        users = _users(course.lms, claim, scores, members, done)
        done.lineitem, done.lineitem_how = find_lineitem(ags, link, journal, assignment, maximum)
        done.lineitem_how += fit_maximum(connection, link, done.lineitem, maximum)
        sender = _Sender(ags, connection, journal, done, RESULT_SCOPE in link.scopes)
        for score in scores:
            if score.student_id in users:
                sender.push_one(score, users[score.student_id])
    except LmsUnreachable as exc:
        sent = len(done.sent) + len(done.resent)
        raise LmsUnreachable(
            f"{exc}\nsent {sent} score{_s(sent)} before that; the journal "
            f"({journal.path}) keeps what was sent, so pushing again sends only the rest"
        ) from None
    return done


def _users(
    folder: Path, claim: str, scores: list[StudentScore], members: set[str] | None, done: Pushed
) -> dict[str, str]:
    """Gradebook id -> LMS user id: the person bound to that hub name (at a launch, a roster
    read or by the instructor: lms.people), who the roster enrolled, or, where the hub name is
    the LMS's `sub` itself, the id. A user the LMS's roster does not list (`members`, None where
    the LMS offers no roster) gets nothing; the others not mapped go into done.unmapped with
    the fix. `folder`: the course's LMS folder."""
    roster = RosterSnapshot.read(folder)
    people = People.read(folder)
    users: dict[str, str] = {}
    for score in scores:
        student = score.student_id
        user = people.sub_of(student)
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


@dataclass
class _Sender:
    """Sends one line item's scores, journaled around each POST; `can_read_results` where the
    LMS gave the tool its results (result.readonly), to check what it holds."""

    ags: object
    connection: Connection
    journal: Journal
    done: Pushed
    can_read_results: bool

    def push_one(self, score: StudentScore, user: str) -> None:
        """The student's score, unless it is unchanged since sent, failed to grade, or there
        is no hand-in (then nothing: a score would make Canvas record a submission and clear
        the grade it holds)."""
        done, lineitem, student = self.done, self.done.lineitem, score.student_id
        if score.grading == GRADING_FAILED:
            done.failed_grading.append(score)
            return
        if not score.handed_in:
            done.no_hand_in.append(student)
            return
        pending = self.journal.pending(lineitem, user)
        if pending is not None and not self._settle(pending):
            return
        hand_grading = score.grading == PENDING_MANUAL
        score = score.as_final() if done.partial_as_final else score
        payload = {**score.payload(), "userId": user}
        last = self.journal.sent_payload(lineitem, user)
        if last is not None and unstamped(last) == payload:
            if pending is None:
                done.unchanged.append(student)
        else:
            payload[CANVAS_SUBMISSION] = _canvas_submission(score, last)
            payload["timestamp"] = now_stamp(after=self.journal.last_stamp(lineitem, user))
            if not self._post(student, user, payload):
                return
            done.sent.append(score)
        if hand_grading:
            done.awaiting_hand_grading.append(student)

    def _settle(self, pending: Entry) -> bool:
        """An earlier run's POST that was never answered: journaled as stored where the LMS's
        results show it holds exactly it (so it is not sent twice: Canvas would record a second
        attempt, Moodle would refuse it, 409), else sent again as it was. False if refused."""
        if self.can_read_results and _holds(self._result(pending.user), pending.payload):
            self.journal.sent(pending.lineitem, pending.user, pending.student, pending.payload)
            self.done.confirmed.append(pending.student)
            return True
        if not self._post(pending.student, pending.user, pending.payload):
            return False
        self.done.resent.append(pending.student)
        return True

    def _result(self, user: str) -> dict | None:
        """What the LMS holds for `user` on the line item (AGS results), None if nothing or if
        the LMS will not say (then the score is sent again, as without the scope)."""
        try:
            response = self.connection.make_service_request(
                [RESULT_SCOPE],
                _results_url(self.done.lineitem, user),
                accept=RESULTS_MEDIA,
            )
        except LmsRefused:
            return None
        results = response["body"] or []
        return next((r for r in results if str(r.get("userId")) == user), None)

    def _post(self, student: str, user: str, payload: dict) -> bool:
        """One score POST, journaled around; False when the LMS refused this one score."""
        from pylti1p3.lineitem import LineItem

        lineitem = self.done.lineitem
        self.journal.sending(lineitem, user, student, payload)
        try:
            self.ags.put_grade(_grade(payload), LineItem({"id": lineitem}))
        except LmsRefused as refused:
            if refused.status not in REFUSED_ONE:
                raise
            if refused.status == 409 and self._holds_already(student, user, payload):
                return True
            self.journal.refused(lineitem, user, student, payload)
            why = str(refused)
            if refused.status == 409 and not self.can_read_results:
                why += (
                    f"; the LMS may hold this very score from an earlier try whose answer was "
                    f"lost: give the tool the scope {RESULT_SCOPE} so the push can check what it "
                    "holds"
                )
            self.done.refused[student] = why
            return False
        self.journal.sent(lineitem, user, student, payload)
        return True

    def _holds_already(self, student: str, user: str, payload: dict) -> bool:
        """Whether the LMS that refused this score as not newer than its own (409) holds this
        very score, its results say (an earlier try stored it, its answer lost): then journaled
        sent and counted confirmed."""
        if not (self.can_read_results and _holds(self._result(user), payload)):
            return False
        self.journal.sent(self.done.lineitem, user, student, payload)
        self.done.confirmed.append(student)
        return True


def _canvas_submission(score: StudentScore, last: dict | None) -> dict:
    """Canvas's submission extension: a new submission (attempt) only for a hand-in not sent
    before (first sent, or handed in again since); a regrade only updates the grade."""
    handed_in_before = (last or {}).get("submission", {}).get("submittedAt")
    new = last is None or handed_in_before != score.submitted_at
    extension: dict = {"new_submission": new, "submission_type": "external_tool"}
    if score.submitted_at is not None:
        extension["submitted_at"] = score.submitted_at
    return extension


def _results_url(lineitem: str, user: str) -> str:
    """The line item's results for one user: `/results` after its path, its query kept
    (Moodle's line item URLs carry one)."""
    parts = urllib.parse.urlsplit(lineitem)
    query = urllib.parse.parse_qsl(parts.query) + [("user_id", user)]
    return parts._replace(
        path=parts.path.rstrip("/") + "/results", query=urllib.parse.urlencode(query)
    ).geturl()


def _holds(result: dict | None, payload: dict) -> bool:
    """Whether the LMS's result is this score: in the same whole second where the result has a
    timestamp, showing its score (scaled to the result's maximum), or none where the LMS shows
    only final grades and this one is not final."""
    if result is None:
        return False
    held_at = result.get("timestamp")
    if held_at and _second(held_at) != _second(payload["timestamp"]):
        return False
    shown, given = result.get("resultScore"), payload.get("scoreGiven")
    if shown is None:
        return given is None or payload["gradingProgress"] != FULLY_GRADED
    if given is None:
        return False
    scale = float(result.get("resultMaximum") or payload["scoreMaximum"]) / payload["scoreMaximum"]
    return abs(float(shown) - given * scale) < 1e-6


def _second(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp())


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
    if CANVAS_SUBMISSION in payload:
        grade.set_extra_claims({CANVAS_SUBMISSION: payload[CANVAS_SUBMISSION]})
    return grade


def _s(n: int) -> str:
    return "" if n == 1 else "s"
