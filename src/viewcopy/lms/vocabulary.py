"""The LMS's words, spelled once: LTI 1.3 claims, LTI Advantage scopes, AGS progress values,
Canvas's submission extension, and what a person's LIS roles make them in the course.

The hub's login, the roster, the push and the tool's registration all read these names here,
so a launch and a roster listing of the same person always give the same answer.
"""

from __future__ import annotations

from collections.abc import Iterable

LTI = "https://purl.imsglobal.org/spec/lti/claim/"
CONTEXT_CLAIM = LTI + "context"
ROLES_CLAIM = LTI + "roles"
DEPLOYMENT_CLAIM = LTI + "deployment_id"
MESSAGE_TYPE_CLAIM = LTI + "message_type"
RESOURCE_LINK_CLAIM = LTI + "resource_link"
CUSTOM_CLAIM = LTI + "custom"
RESOURCE_LINK_REQUEST = "LtiResourceLinkRequest"
"""The one message type the hub serves: a launch into the lab from the course's link."""
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"

AGS_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/"
SCORE_SCOPE = AGS_SCOPE + "score"
LINEITEM_SCOPE = AGS_SCOPE + "lineitem"
LINEITEM_READ_SCOPE = AGS_SCOPE + "lineitem.readonly"
RESULT_SCOPE = AGS_SCOPE + "result.readonly"
ROSTER_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
TOOL_SCOPES = (LINEITEM_SCOPE, RESULT_SCOPE, SCORE_SCOPE, ROSTER_SCOPE)
"""The scopes the tool asks for: line items, results, scores (AGS) and the roster (NRPS)."""

LINEITEM_MEDIA = "application/vnd.ims.lis.v2.lineitem+json"
RESULTS_MEDIA = "application/vnd.ims.lis.v2.resultcontainer+json"

# AGS activityProgress and gradingProgress
INITIALIZED, SUBMITTED, COMPLETED = "Initialized", "Submitted", "Completed"
NOT_READY, PENDING, PENDING_MANUAL = "NotReady", "Pending", "PendingManual"
FULLY_GRADED, GRADING_FAILED = "FullyGraded", "Failed"

CANVAS_SUBMISSION = "https://canvas.instructure.com/lti/submission"
"""Canvas's extension of an AGS score: whether it is a new submission (attempt), and when."""

LIS = "http://purl.imsglobal.org/vocab/lis/v2/"
CONTEXT_ROLE = LIS + "membership"
INSTITUTION_ROLE = LIS + "institution/person"
GRADER, STUDENT = "grader", "student"
"""What a person is in the course: a grader (hub group formgrade-<course>, never enrolled) or a
student (hub group nbgrader-<course>, enrolled in the gradebook)."""


def _role(role: str, vocabulary: str) -> tuple[str, str] | None:
    """(principal role, sub-role) of a role URI in `vocabulary` (`...#Learner` -> (Learner, ''),
    `.../Instructor#TeachingAssistant` -> (Instructor, TeachingAssistant)); None outside it."""
    if role.startswith(vocabulary + "#"):
        return role[len(vocabulary) + 1 :], ""
    if role.startswith(vocabulary + "/") and "#" in role:
        principal, sub = role[len(vocabulary) + 1 :].split("#", 1)
        return principal, sub
    return None


def course_role(roles: Iterable[str]) -> str | None:
    """GRADER, STUDENT or None (neither) for a person's LIS roles, as a launch or the roster
    (NRPS) gives them.

    The context (course) roles decide: an Instructor (or any of its sub-roles) or a
    TeachingAssistant grades, else a Learner (or any of its sub-roles) studies, whatever other
    roles they also hold (a Learner who is also a ContentDeveloper studies). With no context role
    at all the institution roles decide (Instructor grades; Student or Learner studies). A bare
    name (`Learner`, as LTI 1.1 platforms and some rosters send it) counts as a context role.
    """
    context, institution = [], []
    for role in map(str, roles):
        if "/" not in role and "#" not in role:
            context.append((role, ""))
        elif (found := _role(role, CONTEXT_ROLE)) is not None:
            context.append(found)
        elif (found := _role(role, INSTITUTION_ROLE)) is not None:
            institution.append(found)
    if context:
        if any(p == "Instructor" or "TeachingAssistant" in (p, s) for p, s in context):
            return GRADER
        return STUDENT if any(p == "Learner" for p, _ in context) else None
    if any(p in ("Instructor", "TeachingAssistant") for p, _ in institution):
        return GRADER
    return STUDENT if any(p in ("Student", "Learner") for p, _ in institution) else None
