"""`viewcopy lms push` against the real LTI platform (tests/support/lti_platform.py), from a
course graded by `viewcopy grade`: every score the platform holds equals the gradebook's, before
and after answers 21-25 are graded by hand; a second push sends nothing; the platform going down
mid-push loses nothing and receives nothing twice; a student it cannot map, a hand-in that failed
to grade and a token signed with a key the platform was never given are each named.

Against the platform's `canvas` and `moodle` flavours (each LMS's own rules for the scores it is
sent), what the LMS stores: Canvas records one submission attempt per hand-in, none for a student
who never handed in and none for a regrade, re-push, lost answer or outage; Moodle shows every
final grade, names each one it cannot show yet, and a score whose answer was lost (the LMS gone,
or a 500) is confirmed from its results, not refused."""

from __future__ import annotations

import argparse
import csv
import json
import shutil
from collections import Counter
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest
from support.lms_link import link_course, running_platform
from support.lti_platform import CANVAS, CANVAS_SUBMISSION, MOODLE, Member, Platform, require_lti
from support.sandboxing import grade_as_the_product
from support.the_class import course_of

from viewcopy.course.assignment import (
    ASSIGNMENT,
    COURSE_ID,
    NOTEBOOK_ID,
    enrol,
    gradebook_url,
    read_grades,
)
from viewcopy.course.folder import Course
from viewcopy.grading.grade import FAILED, GRADED
from viewcopy.grading.record import INTERRUPTED, read_record, record_path, write_record
from viewcopy.lms.commands import LMS
from viewcopy.lms.connection import Retries
from viewcopy.lms.errors import LmsRefused, LmsUnreachable
from viewcopy.lms.import_file import merge_scores
from viewcopy.lms.journal import Journal, now_stamp
from viewcopy.lms.keys import ToolKey
from viewcopy.lms.link import LINK_FILE, CourseLink
from viewcopy.lms.push import push
from viewcopy.lms.registration import Registration
from viewcopy.lms.roster import roster
from viewcopy.lms.tool import LAB_TITLE

pytestmark = [pytest.mark.lms, pytest.mark.course]
require_lti()

GRADED_OK = ("memoriser", "perfect", "typical")
FAILS = "exits_kernel"
LATE = "late_hand_in"  # handed in after the grading run: submitted, not graded
ABSENT = "no_hand_in"  # enrolled, never handed in
EVERYONE = (*GRADED_OK, FAILS, LATE, ABSENT)
SENT_TO = sorted(set(EVERYONE) - {FAILS, ABSENT})  # a failed grading and no hand-in: nothing
FAST = Retries(tries=3, first_delay_s=0.05, timeout_s=10)


@pytest.fixture(scope="module")
def graded(the_class, tmp_path_factory):
    """A course graded once for the module: three hand-ins graded, one whose grading fails,
    one handed in after the run, one student who never handed in."""
    course = course_of(the_class, tmp_path_factory.mktemp("lms") / "course", [*GRADED_OK, FAILS])
    outcomes = {o.student_id: o.status for o in grade_as_the_product(course)}
    assert outcomes == {**dict.fromkeys(GRADED_OK, GRADED), FAILS: FAILED}
    enrol(course, {LATE: "Late Hand-in", ABSENT: "No Hand-in"})
    handed = Course.at(course)
    shutil.copytree(handed.hand_in("perfect", ASSIGNMENT), handed.hand_in(LATE, ASSIGNMENT))
    return course


@pytest.fixture
def platform(tmp_path):
    with running_platform(tmp_path / "platform") as platform:
        yield platform


def linked_copy(graded, tmp_path, platform):
    """A copy of the graded course, linked to the platform; every student a learner there."""
    course = shutil.copytree(graded, tmp_path / "course")
    link_course(
        course,
        platform,
        [Member(s, s.replace("_", " ").title(), f"{s}@uni.example") for s in EVERYONE],
    )
    return course


@pytest.fixture
def course(graded, tmp_path, platform):
    return linked_copy(graded, tmp_path, platform)


@pytest.fixture(params=[CANVAS, MOODLE])
def lms(request, graded, tmp_path):
    """(course, platform): the graded course linked to a Canvas or a Moodle."""
    platform = Platform.start(tmp_path / "platform", flavour=request.param)
    try:
        yield linked_copy(graded, tmp_path, platform), platform
    finally:
        platform.stop()


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
        assert held["scoreGiven"] == round(total, 2)
        assert held["scoreMaximum"] == maximum(course)
        assert held["activityProgress"] == "Completed"
        assert held["gradingProgress"] == ("PendingManual" if pending else "FullyGraded")
    assert FAILS not in results  # a grading that failed sends nothing: the LMS keeps its own
    assert "scoreGiven" not in results[LATE] and results[LATE]["activityProgress"] == "Submitted"
    assert ABSENT not in results  # no hand-in: no score, so no submission in the LMS
    assert sorted(results) == SENT_TO


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
    LMS.add_to(parser.add_subparsers(dest="command"))
    return LMS.run(parser.parse_args(["lms", *argv]))


def test_the_lms_holds_the_gradebook_before_and_after_hand_grading_and_once(course, platform):
    assert maximum(course) > 0 and any(p for _, p in gradebook_totals(course).values())
    said = cli("push", "--course", str(course))
    (item,) = platform.lineitems()
    assert item["label"] == LAB_TITLE and item["scoreMaximum"] == maximum(course)
    assert item["resourceId"] == item["tag"] == ASSIGNMENT
    assert f"created: {LAB_TITLE!r}, {maximum(course):g} points" in said
    assert f"{FAILS}: grading failed: " in said and "run `viewcopy grade view_or_copy`" in said
    assert f"makes no submission): {ABSENT}" in said
    assert_the_lms_holds_the_gradebook(course, platform, item["id"])
    assert len(platform.score_posts()) == len(SENT_TO)

    again = cli("push", "--course", str(course))
    assert "as remembered from the first push" in again
    assert f"nothing changed since the last push: {len(SENT_TO)} scores already in the LMS" in again
    assert len(platform.score_posts()) == len(SENT_TO)

    hand_grade(course, "perfect", 1.0)
    hand_grade(course, "typical", 0.5)
    after = cli("push", "--course", str(course))
    assert "sent 2 scores" in after and f"{len(SENT_TO) - 2} unchanged" in after
    posts = platform.score_posts()
    assert [p["userId"] for p in posts[len(SENT_TO) :]] == ["perfect", "typical"]
    assert_the_lms_holds_the_gradebook(course, platform, item["id"])
    assert platform.results(item["id"])["perfect"]["gradingProgress"] == "FullyGraded"
    assert len(platform.lineitems()) == 1


def test_a_push_reads_the_courses_registration_and_link_once(course, platform, monkeypatch):
    reads = Counter()
    for kind in (Registration, CourseLink):
        read = kind.read.__func__

        def counted(cls, *args, _read=read, **kwargs):
            reads[cls.__name__] += 1
            return _read(cls, *args, **kwargs)

        monkeypatch.setattr(kind, "read", classmethod(counted))
    assert push(Course.at(course), ASSIGNMENT, retries=FAST).complete
    assert reads == {"Registration": 1, "CourseLink": 1}


def test_the_lms_down_mid_push_loses_nothing_and_receives_nothing_twice(course, platform):
    platform.fail_after(2)
    with pytest.raises(LmsUnreachable) as down:
        push(Course.at(course), ASSIGNMENT, retries=FAST)
    message = str(down.value)
    assert f"{platform.url}/contexts/" in message and "after 3 tries" in message
    assert "sent 2 scores before that" in message and "pushing again sends only the rest" in message
    platform.wait_down()
    journal = Journal(Course.at(course).lms)
    pending = [e for e in journal.scores.values() if e.state == "sending"]
    assert len(pending) == 1  # the POST that found the LMS gone

    platform.start_again()
    done = push(Course.at(course), ASSIGNMENT, retries=FAST)
    assert done.resent == [pending[0].student]
    posts = platform.score_posts()
    counts = Counter(json.dumps(p, sort_keys=True) for p in posts)
    assert set(counts.values()) == {1}
    assert sorted(p["userId"] for p in posts) == SENT_TO
    resent = next(p for p in posts if p["userId"] == pending[0].user)
    assert resent["timestamp"] == pending[0].timestamp
    assert_the_lms_holds_the_gradebook(course, platform, platform.lineitems()[0]["id"])
    assert Journal(Course.at(course).lms).scores and not [
        e for e in Journal(Course.at(course).lms).scores.values() if e.state == "sending"
    ]


def test_a_failing_lms_is_retried_with_back_off_and_each_score_lands_once(course, platform):
    waits = []
    platform.busy_for(2)  # two 503s: the first score's first try and its retry
    done = push(Course.at(course), ASSIGNMENT, retries=FAST, sleep=waits.append)
    assert done.complete and waits == [FAST.delay(0), FAST.delay(1)]
    posts = platform.score_posts()
    assert sorted(p["userId"] for p in posts) == SENT_TO
    assert_the_lms_holds_the_gradebook(course, platform, platform.lineitems()[0]["id"])

    platform.busy_for(len(EVERYONE))  # failing longer than the retries: one clear error
    hand_grade(course, "typical", 0.5)
    with pytest.raises(LmsUnreachable) as failing:
        push(Course.at(course), ASSIGNMENT, retries=FAST, sleep=waits.append)
    assert "HTTP 503: the gradebook is busy, try again" in str(failing.value)
    assert len(platform.score_posts()) == len(posts)  # the refused tries stored nothing


def test_students_it_cannot_map_are_named_and_get_nothing(course, platform):
    platform.enrol([Member(s, s, f"{s}@uni.example") for s in EVERYONE if s != "memoriser"])
    said = push(Course.at(course), ASSIGNMENT, retries=FAST).summary()
    assert "not sent, 1 student with no LMS user to send to:" in said
    assert "  memoriser: the LMS's course roster has no user 'memoriser': enrol them" in said
    assert "memoriser" not in {p["userId"] for p in platform.score_posts()}
    assert len(platform.score_posts()) == len(SENT_TO) - 1

    roster(Course.at(course), retries=FAST)  # the roster as read, kept: a student it never listed
    enrol(course, {"walk_in": "Enrolled By Hand"})
    said = push(Course.at(course), ASSIGNMENT, retries=FAST).summary()
    assert "  walk_in: never launched the course from the LMS and not on its roster" in said
    assert "they launch once from the LMS, or run `viewcopy lms roster`" in said
    assert "walk_in" not in {p["userId"] for p in platform.score_posts()}


def test_a_token_signed_with_a_key_the_lms_was_never_given_is_refused(course, platform, tmp_path):
    other = ToolKey.ensure(tmp_path / "another_course")
    link_course(course, platform, [], key_set=other.jwks())
    with pytest.raises(LmsRefused) as refused:
        push(Course.at(course), ASSIGNMENT, retries=FAST)
    assert refused.value.status == 401
    message = str(refused.value)
    assert "the LMS refused the tool's token request (401" in message
    assert "does not accept this course's key" in message and "viewcopy lms keys" in message
    assert platform.score_posts() == [] and platform.lineitems() == []


def shown(platform) -> dict[str, float | None]:
    """The grade the LMS's gradebook shows each student (None: none)."""
    (item,) = platform.lineitems()
    return {user: held["grade"] for user, held in platform.gradebook(item["id"]).items()}


def attempts(platform) -> dict[str, int]:
    (item,) = platform.lineitems()
    return {user: held["attempts"] for user, held in platform.gradebook(item["id"]).items()}


def expected_shown(course, flavour: str) -> dict[str, float | None]:
    """What the LMS should show: the gradebook's total, on Moodle only once hand-graded."""
    totals = gradebook_totals(course)
    return {
        student: None
        if student not in totals or (flavour == MOODLE and totals[student][1])
        else round(totals[student][0], 2)
        for student in SENT_TO
    }


def assert_one_attempt_each(platform) -> None:
    if platform.store.flavour() == CANVAS:
        assert attempts(platform) == dict.fromkeys(SENT_TO, 1)


def assert_timestamps_advance(platform) -> None:
    """Each student's timestamps, sub-second, in later whole seconds post after post."""
    for student in SENT_TO:
        stamps = [p["timestamp"] for p in platform.score_posts() if p["userId"] == student]
        assert all("." in stamp for stamp in stamps)
        seconds = [int(datetime.fromisoformat(stamp).timestamp()) for stamp in stamps]
        assert seconds == sorted(set(seconds))


def test_each_lms_stores_every_grade_and_one_submission_per_hand_in(lms):
    course, platform = lms
    flavour = platform.store.flavour()
    said = push(Course.at(course), ASSIGNMENT, retries=FAST).summary()
    assert shown(platform) == expected_shown(course, flavour)
    assert ABSENT not in shown(platform)  # no score: Canvas makes no submission
    assert_one_attempt_each(platform)
    for post in platform.score_posts():
        extension = post[CANVAS_SUBMISSION]
        assert extension["new_submission"] is True
        assert extension.get("submitted_at") == post.get("submission", {}).get("submittedAt")
    totals = gradebook_totals(course)
    waiting = [s for s in SENT_TO if s in totals and totals[s][1]]
    assert waiting and "hand, sent as PendingManual: an LMS that shows only final" in said
    assert f"Canvas shows the autograded part: {', '.join(waiting)}" in said
    assert "then `viewcopy lms push view_or_copy` again" in said

    posts = len(platform.score_posts())
    assert (
        "nothing changed since the last push"
        in push(Course.at(course), ASSIGNMENT, retries=FAST).summary()
    )
    assert len(platform.score_posts()) == posts

    hand_grade(course, "perfect", 1.0)
    push(Course.at(course), ASSIGNMENT, retries=FAST)
    regrade = platform.score_posts()[-1]
    assert regrade["userId"] == "perfect" and len(platform.score_posts()) == posts + 1
    assert regrade[CANVAS_SUBMISSION]["new_submission"] is False  # a regrade, not a hand-in
    assert shown(platform) == expected_shown(course, flavour)
    assert shown(platform)["perfect"] == round(gradebook_totals(course)["perfect"][0], 2)
    assert_one_attempt_each(platform)
    assert_timestamps_advance(platform)


def push_until_down(course, platform) -> None:
    """A push the platform goes down in the middle of (it raises), and the platform down."""
    with pytest.raises(LmsUnreachable):
        push(Course.at(course), ASSIGNMENT, retries=FAST)
    platform.wait_down()


def test_a_lost_answer_is_confirmed_from_the_lms_not_sent_twice_nor_refused(lms):
    course, platform = lms
    platform.lose_answer(2)
    push_until_down(course, platform)
    (lost,) = [e for e in Journal(Course.at(course).lms).scores.values() if e.state == "sending"]

    platform.start_again()
    done = push(Course.at(course), ASSIGNMENT, retries=FAST)
    assert done.complete and done.confirmed == [lost.student] and not done.resent
    assert "already held by the LMS (its results say so), 1 score" in done.summary()
    assert sorted(p["userId"] for p in platform.score_posts()) == SENT_TO  # once each
    assert shown(platform) == expected_shown(course, platform.store.flavour())
    assert_one_attempt_each(platform)
    journal = Journal(Course.at(course).lms)
    assert journal.sent_payload(lost.lineitem, lost.user) == lost.payload


def test_a_score_stored_then_answered_500_is_confirmed_from_the_lms_not_refused(lms):
    """The LMS stores a score and answers 500, and the push tries that POST again: Moodle
    refuses the retry (409, the same second), which its results show to be the score it holds;
    Canvas takes it, the same grade again. (Canvas counts that retry as a second submission
    attempt: the connection retries a 5xx before the push can look at the results; a known gap,
    docs/lms.md.)"""
    course, platform = lms
    flavour = platform.store.flavour()
    student = SENT_TO[1]  # the second score sent
    hand_grade(course, student, 1.0)  # final: a grade Moodle shows
    platform.store_then_fail(2)
    done = push(Course.at(course), ASSIGNMENT, retries=FAST)
    assert done.complete and not done.refused
    posts = platform.score_posts()
    stored = [p for p in posts if p["userId"] == student]
    if flavour == MOODLE:
        assert done.confirmed == [student]
        assert "already held by the LMS (its results say so), 1 score" in done.summary()
        assert sorted(p["userId"] for p in posts) == SENT_TO  # once each
    else:  # Canvas takes the retry: the same score again (what it makes of the attempt: below)
        assert not done.confirmed and len(stored) == 2 and stored[0] == stored[1]
    assert shown(platform) == expected_shown(course, flavour)
    assert shown(platform)[student] == round(gradebook_totals(course)[student][0], 2)
    (item,) = platform.lineitems()
    sent = Journal(Course.at(course).lms).sent_payload(item["id"], student)
    assert {"lineitem": item["id"], **sent} == stored[0]

    again = push(Course.at(course), ASSIGNMENT, retries=FAST)
    assert again.complete and "nothing changed since the last push" in again.summary()
    assert len(platform.score_posts()) == len(posts)


def test_a_lost_answer_without_the_results_scope_is_named_and_not_hidden(lms):
    course, platform = lms
    link = Course.at(course).lms / LINK_FILE
    recorded = json.loads(link.read_text())
    ags = recorded["ags"]
    ags["scopes"] = [s for s in ags["scopes"] if not s.endswith("result.readonly")]
    link.write_text(json.dumps(recorded))
    platform.lose_answer(1)
    push_until_down(course, platform)
    platform.start_again()
    done = push(Course.at(course), ASSIGNMENT, retries=FAST)
    if platform.store.flavour() == MOODLE:  # the same second again: Moodle refuses it
        assert list(done.refused) == [SENT_TO[0]] and not done.complete
        assert "give the tool the scope" in done.refused[SENT_TO[0]]
        said = done.summary()
        assert "nothing changed" not in said and "refused by the LMS, 1:" in said
    else:  # Canvas takes it again, as the same attempt's grade
        assert done.resent == [SENT_TO[0]] and done.complete
    assert shown(platform) == expected_shown(course, platform.store.flavour())


def test_the_lms_down_mid_push_leaves_one_attempt_each(lms):
    course, platform = lms
    platform.fail_after(2)
    push_until_down(course, platform)
    platform.start_again()
    done = push(Course.at(course), ASSIGNMENT, retries=FAST)
    assert done.complete and len(done.resent) == 1
    assert sorted(p["userId"] for p in platform.score_posts()) == SENT_TO
    assert shown(platform) == expected_shown(course, platform.store.flavour())
    assert_one_attempt_each(platform)


def test_partial_grades_shown_as_final_when_the_course_says_so(lms):
    course, platform = lms
    with (course / "nbgrader_config.py").open("a") as config:
        config.write("\nc.LmsPush.partial_as_final = True\n")
    said = push(Course.at(course), ASSIGNMENT, retries=FAST).summary()
    totals = gradebook_totals(course)
    graded = {s: round(total, 2) for s, (total, _) in totals.items() if s in SENT_TO}
    assert shown(platform) == {**dict.fromkeys(SENT_TO), **graded}
    assert "sent as final, the autograded part only (c.LmsPush.partial_as_final)" in said
    hand_grade(course, "typical", 1.0)
    push(Course.at(course), ASSIGNMENT, retries=FAST)
    assert shown(platform)["typical"] == round(gradebook_totals(course)["typical"][0], 2)
    assert_one_attempt_each(platform)


def test_a_stamp_is_in_a_later_whole_second_than_the_one_it_follows():
    future = "2999-01-01T00:00:00.999999+00:00"
    assert now_stamp(after=future) == "2999-01-01T00:00:01.000000+00:00"
    assert now_stamp(after="2000-01-01T00:00:00+00:00") > "2026"  # the present, when later


def canvas_export(path, students) -> Path:
    """A Canvas gradebook export (Grades > Export) of `students`, the lab's column empty."""
    header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", f"{LAB_TITLE} (1202)"]
    lines = [header, ["    Points Possible", "", "", "", "", "36.00"]]
    lines += [[s.title(), str(1000 + i), "", s, "A", ""] for i, s in enumerate(students)]
    with path.open("w", newline="", encoding="utf-8") as sink:
        csv.writer(sink).writerows(lines)
    return path


def test_the_push_the_import_file_and_the_class_report_give_one_number(course, platform, tmp_path):
    """A total with a third of a point in it is the same number, to the same two decimals, in
    the LMS, in the import file and in the class report; a hand-in whose regrade was
    interrupted is not graded in all three (the LMS keeps what it had)."""
    from viewcopy.report.build import build_report
    from viewcopy.report.rows import rows

    hand_grade(course, "perfect", 1 / 3)
    interrupted = "typical"
    outcomes = read_record(record_path(Course.at(course), ASSIGNMENT))
    outcomes[interrupted] = replace(outcomes[interrupted], status=INTERRUPTED, reason="stopped")
    write_record(record_path(Course.at(course), ASSIGNMENT), outcomes.values())
    said = cli("push", "--course", str(course))
    assert f"{interrupted}: grading interrupted: stopped; nothing sent" in said
    (item,) = platform.lineitems()
    held = platform.results(item["id"])
    pushed = {u: r["scoreGiven"] for u, r in held.items() if "scoreGiven" in r}
    export = canvas_export(tmp_path / "canvas.csv", EVERYONE)
    merged = merge_scores(Course.at(course), ASSIGNMENT, export, "canvas")
    written = {s: float(v) for s, v in merged.written.items()}
    report = {k: v for section, k, measure, v in rows(build_report(course))
              if section == "student" and measure == "score"}  # fmt: skip
    given = {s: v for s, v in report.items() if v is not None}
    totals = gradebook_totals(course)
    assert round(totals["perfect"][0], 2) != totals["perfect"][0]  # more than two decimals
    assert pushed == written == given and sorted(pushed) == ["memoriser", "perfect"]
    for score in pushed.values():
        assert score == round(score, 2)
    assert pushed["perfect"] == round(totals["perfect"][0], 2)
    assert interrupted not in platform.results(item["id"]) and report[interrupted] is None
    assert f"{interrupted}: grading interrupted: stopped" in merged.summary()


def test_the_line_item_is_worth_the_courses_total(course, platform):
    """A line item whose points differ from the course's total (changed in the LMS, or the
    course's points changed since) is set to the total at the next push, and said."""
    cli("push", "--course", str(course))
    (item,) = platform.lineitems()
    total = maximum(course)
    platform.store.save_lineitems([{**item, "scoreMaximum": 100}])
    said = cli("push", "--course", str(course))
    assert f"its maximum set to the course's total, {total:g} points (it had 100 points)" in said
    (item,) = platform.lineitems()
    assert item["scoreMaximum"] == total
    assert "maximum set" not in cli("push", "--course", str(course))
