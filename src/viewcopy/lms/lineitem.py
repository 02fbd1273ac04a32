"""The assignment's line item in the LMS (AGS): found or created once and remembered in the
journal, and made worth the course's total at every push."""

from __future__ import annotations

import json

from viewcopy.course.assignment import ASSIGNMENT
from viewcopy.lms.connection import Connection
from viewcopy.lms.errors import LmsError
from viewcopy.lms.link import CourseLink
from viewcopy.lms.tool import LAB_TITLE
from viewcopy.lms.vocabulary import LINEITEM_MEDIA, LINEITEM_READ_SCOPE, LINEITEM_SCOPE, SCORE_SCOPE


def grade_service(connection: Connection, link: CourseLink):
    """pylti1p3's AGS client on the link's endpoints; LmsError naming the LMS setting where the
    launches offered no grade service or no score scope."""
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


def find_lineitem(ags, link, journal, assignment: str, maximum: float) -> tuple[str, str]:
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


def fit_maximum(connection: Connection, link: CourseLink, lineitem: str, maximum: float) -> str:
    """Make the line item worth the course's total (an instructor may have changed the points
    in the master, or the LMS's column was made with other points): '' where it is (or the tool
    may not read it), else set and said; LmsError where the tool may not change it."""
    if not ({LINEITEM_SCOPE, LINEITEM_READ_SCOPE} & set(link.scopes)):
        return ""
    scopes = list(link.scopes)
    item = connection.make_service_request(scopes, lineitem, accept=LINEITEM_MEDIA)["body"] or {}
    held = item.get("scoreMaximum")
    if held is not None and abs(float(held) - maximum) < 1e-9:
        return ""
    label = item.get("label") or lineitem
    was = "no maximum" if held is None else f"{float(held):g} points"
    if LINEITEM_SCOPE not in link.scopes:
        raise LmsError(
            f"the LMS's line item {label!r} has {was} and the course's total is "
            f"{maximum:g}: set its points to {maximum:g} in the LMS, or allow the tool the "
            f"scope {LINEITEM_SCOPE}, then push again"
        )
    connection.make_service_request(
        scopes,
        lineitem,
        put=True,
        data=json.dumps({**item, "scoreMaximum": maximum}),
        content_type=LINEITEM_MEDIA,
        accept=LINEITEM_MEDIA,
    )
    return f"; its maximum set to the course's total, {maximum:g} points (it had {was})"
