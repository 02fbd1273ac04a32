"""`viewcopy lms push` against the real LTI platform (tests/support/lti_platform.py), from a
course graded by `viewcopy grade`: every score the platform holds equals the gradebook's, before
and after answers 21-25 are graded by hand; a second push sends nothing; the platform going down
mid-push loses nothing and receives nothing twice; a student it cannot map, a hand-in that failed
to grade and a token signed with a key the platform was never given are each named."""

from __future__ import annotations

import argparse
import json
import shutil
from collections import Counter

import pytest
from support.lms_link import link_course, running_platform
from support.lti_platform import Member, require_lti
from support.the_class import course_of

from viewcopy.course.assignment import (
    ASSIGNMENT,
    COURSE_ID,
    NOTEBOOK_ID,
    enrol,
    gradebook_url,
    read_grades,
    submission_folder,
)
from viewcopy.grading.grade import FAILED, GRADED, grade
from viewcopy.lms.commands import add_lms_parser, run_lms
from viewcopy.lms.connection import Retries
from viewcopy.lms.errors import LmsRefused, LmsUnreachable
from viewcopy.lms.journal import Journal
from viewcopy.lms.keys import ToolKey
from viewcopy.lms.push import push
from viewcopy.lms.registration import lms_folder
from viewcopy.lms.roster import roster
from viewcopy.lms.tool import LAB_TITLE

pytestmark = [pytest.mark.lms, pytest.mark.course]
require_lti()

GRADED_OK = ("memoriser", "perfect", "typical")
FAILS = "exits_kernel"
LATE = "late_hand_in"  # handed in after the grading run: submitted, not graded
ABSENT = "no_hand_in"  # enrolled, never handed in
EVERYONE = (*GRADED_OK, FAILS, LATE, ABSENT)
FAST = Retries(tries=3, first_delay_s=0.05, timeout_s=10)


@pytest.fixture(scope="module")
def graded(the_class, tmp_path_factory):
    """A course graded once for the module: three hand-ins graded, one whose grading fails,
    one handed in after the run, one student who never handed in."""
    course = course_of(the_class, tmp_path_factory.mktemp("lms") / "course", [*GRADED_OK, FAILS])
    outcomes = {
        o.student_id: o.status for o in grade(course, ASSIGNMENT, progress=False, sandbox=None)
    }
    assert outcomes == {**dict.fromkeys(GRADED_OK, GRADED), FAILS: FAILED}
    enrol(course, {LATE: "Late Hand-in", ABSENT: "No Hand-in"})
    shutil.copytree(submission_folder(course, "perfect"), submission_folder(course, LATE))
    return course


@pytest.fixture
def platform(tmp_path):
    with running_platform(tmp_path / "platform") as platform:
        yield platform


@pytest.fixture
def course(graded, tmp_path, platform):
    """A copy of the graded course, linked to the platform; every student a learner there."""
    course = shutil.copytree(graded, tmp_path / "course")
    link_course(
        course,
        platform,
        [Member(s, s.replace("_", " ").title(), f"{s}@uni.example") for s in EVERYONE],
    )
    return course


def gradebook_totals(course) -> dict[str, tuple[float, bool]]:
    """Each graded student's total and whether a cell awaits hand grading, from the gradebook's
    cells (course.assignment.read_grades), not from the push's own reading of it."""
    return {
        student: (
            sum(score or 0 for score, _ in cells.values()),
            any(s is None for s, _ in cells.values()),
        )
        for student, cells in read_grades(course).items()
        if cells
    }


def maximum(course) -> float:
    cells = next(cells for cells in read_grades(course).values() if cells)
    return sum(top for _, top in cells.values())


def assert_the_lms_holds_the_gradebook(course, platform, lineitem):
    results = platform.results(lineitem)
    totals = gradebook_totals(course)
    for student in GRADED_OK:
        total, pending = totals[student]
        held = results[student]
        assert held["scoreGiven"] == pytest.approx(total)
        assert held["scoreMaximum"] == maximum(course)
        assert held["activityProgress"] == "Completed"
        assert held["gradingProgress"] == ("PendingManual" if pending else "FullyGraded")
    assert FAILS not in results  # a grading that failed sends nothing: the LMS keeps its own
    assert "scoreGiven" not in results[LATE] and results[LATE]["activityProgress"] == "Submitted"
    assert (
        "scoreGiven" not in results[ABSENT] and results[ABSENT]["activityProgress"] == "Initialized"
    )
    assert set(results) == set(EVERYONE) - {FAILS}


def hand_grade(course, student: str, fraction: float) -> None:
    """Grade every cell awaiting hand grading (answers 21-25) as formgrader writes it."""
    from nbgrader.api import Gradebook

    with Gradebook(gradebook_url(course), COURSE_ID) as gradebook:
        notebook = gradebook.find_submission_notebook(NOTEBOOK_ID, ASSIGNMENT, student)
        for cell in notebook.grades:
            if cell.needs_manual_grade:
                cell.manual_score = cell.max_score * fraction
                cell.needs_manual_grade = False
        gradebook.db.commit()


def cli(*argv: str) -> str:
    parser = argparse.ArgumentParser()
    add_lms_parser(parser.add_subparsers(dest="command"))
    return run_lms(parser.parse_args(["lms", *argv]))


def test_the_lms_holds_the_gradebook_before_and_after_hand_grading_and_once(course, platform):
    assert maximum(course) > 0 and any(p for _, p in gradebook_totals(course).values())
    said = cli("push", "--course", str(course))
    (item,) = platform.lineitems()
    assert item["label"] == LAB_TITLE and item["scoreMaximum"] == maximum(course)
    assert item["resourceId"] == item["tag"] == ASSIGNMENT
    assert f"created: {LAB_TITLE!r}, {maximum(course):g} points" in said
    assert f"{FAILS}: grading failed (" in said and "run `viewcopy grade view_or_copy`" in said
    assert_the_lms_holds_the_gradebook(course, platform, item["id"])
    assert len(platform.score_posts()) == len(EVERYONE) - 1

    again = cli("push", "--course", str(course))
    assert "as remembered from the first push" in again
    assert (
        f"nothing changed since the last push: {len(EVERYONE) - 1} scores already in the LMS"
        in again
    )
    assert len(platform.score_posts()) == len(EVERYONE) - 1

    hand_grade(course, "perfect", 1.0)
    hand_grade(course, "typical", 0.5)
    after = cli("push", "--course", str(course))
    assert "sent 2 scores" in after and f"{len(EVERYONE) - 3} unchanged" in after
    posts = platform.score_posts()
    assert [p["userId"] for p in posts[len(EVERYONE) - 1 :]] == ["perfect", "typical"]
    assert_the_lms_holds_the_gradebook(course, platform, item["id"])
    assert platform.results(item["id"])["perfect"]["gradingProgress"] == "FullyGraded"
    assert len(platform.lineitems()) == 1


def test_the_lms_down_mid_push_loses_nothing_and_receives_nothing_twice(course, platform):
    platform.fail_after(2)
    with pytest.raises(LmsUnreachable) as down:
        push(course, ASSIGNMENT, retries=FAST)
    message = str(down.value)
    assert f"{platform.url}/contexts/" in message and "after 3 tries" in message
    assert "sent 2 scores before that" in message and "pushing again sends only the rest" in message
    platform.wait_down()
    journal = Journal(lms_folder(course))
    pending = [e for e in journal.scores.values() if e.state == "sending"]
    assert len(pending) == 1  # the POST that found the LMS gone

    platform.start_again()
    done = push(course, ASSIGNMENT, retries=FAST)
    assert done.resent == [pending[0].student]
    posts = platform.score_posts()
    counts = Counter(json.dumps(p, sort_keys=True) for p in posts)
    assert set(counts.values()) == {1}
    assert sorted(p["userId"] for p in posts) == sorted(set(EVERYONE) - {FAILS})
    resent = next(p for p in posts if p["userId"] == pending[0].user)
    assert resent["timestamp"] == pending[0].timestamp
    assert_the_lms_holds_the_gradebook(course, platform, platform.lineitems()[0]["id"])
    assert Journal(lms_folder(course)).scores and not [
        e for e in Journal(lms_folder(course)).scores.values() if e.state == "sending"
    ]


def test_a_failing_lms_is_retried_with_back_off_and_each_score_lands_once(course, platform):
    waits = []
    platform.busy_for(2)  # two 503s: the first score's first try and its retry
    done = push(course, ASSIGNMENT, retries=FAST, sleep=waits.append)
    assert done.complete and waits == [FAST.delay(0), FAST.delay(1)]
    posts = platform.score_posts()
    assert sorted(p["userId"] for p in posts) == sorted(set(EVERYONE) - {FAILS})
    assert_the_lms_holds_the_gradebook(course, platform, platform.lineitems()[0]["id"])

    platform.busy_for(len(EVERYONE))  # failing longer than the retries: one clear error
    hand_grade(course, "typical", 0.5)
    with pytest.raises(LmsUnreachable) as failing:
        push(course, ASSIGNMENT, retries=FAST, sleep=waits.append)
    assert "HTTP 503: the gradebook is busy, try again" in str(failing.value)
    assert len(platform.score_posts()) == len(posts)  # the refused tries stored nothing


def test_students_it_cannot_map_are_named_and_get_nothing(course, platform):
    platform.enrol([Member(s, s, f"{s}@uni.example") for s in EVERYONE if s != "memoriser"])
    said = push(course, ASSIGNMENT, retries=FAST).summary()
    assert "not sent, 1 student with no LMS user to send to:" in said
    assert "  memoriser: the LMS's course roster has no user 'memoriser': enrol them" in said
    assert "memoriser" not in {p["userId"] for p in platform.score_posts()}
    assert len(platform.score_posts()) == len(EVERYONE) - 1 - 1

    roster(course, retries=FAST)  # the roster as read, kept: a student it never listed
    enrol(course, {"walk_in": "Enrolled By Hand"})
    said = push(course, ASSIGNMENT, retries=FAST).summary()
    assert "  walk_in: never launched the course from the LMS and not on its roster" in said
    assert "they launch once from the LMS, or run `viewcopy lms roster`" in said
    assert "walk_in" not in {p["userId"] for p in platform.score_posts()}


def test_a_token_signed_with_a_key_the_lms_was_never_given_is_refused(course, platform, tmp_path):
    other = ToolKey.ensure(tmp_path / "another_course")
    link_course(course, platform, [], key_set=other.jwks())
    with pytest.raises(LmsRefused) as refused:
        push(course, ASSIGNMENT, retries=FAST)
    assert refused.value.status == 401
    message = str(refused.value)
    assert "the LMS refused the tool's token request (401" in message
    assert "does not accept this course's key" in message and "viewcopy lms keys" in message
    assert platform.score_posts() == [] and platform.lineitems() == []
