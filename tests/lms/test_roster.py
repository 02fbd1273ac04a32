"""`viewcopy lms roster` against the real LTI platform (tests/support/lti_platform.py): the LMS's
learners, read over every NRPS page, enrolled in the gradebook with their names and emails;
instructors and assistants not; run again mid-term, each change printed and dropped students
kept with their grades."""

from __future__ import annotations

import argparse

import pytest
from support.lms_link import link_course, running_platform
from support.lti_platform import PAGE, TEACHING_ASSISTANT, Member, require_lti

from viewcopy.course.assignment import COURSE_ID, gradebook_url
from viewcopy.course.folder import Course
from viewcopy.lms.commands import LMS
from viewcopy.lms.errors import LmsError
from viewcopy.lms.link import NotLinked
from viewcopy.lms.roster import roster

pytestmark = pytest.mark.lms
require_lti()

CLASS = [Member(f"s{i:02d}", f"Student{i} Surname{i}", f"s{i}@uni.example") for i in range(7)]
ASSISTANT = Member("ta-1", "Tom Assist", "tom@uni.example", (TEACHING_ASSISTANT,))


@pytest.fixture
def platform(tmp_path):
    with running_platform(tmp_path / "platform") as platform:
        yield platform


def students(course) -> dict[str, tuple[str, str, str]]:
    """The gradebook's students, read through nbgrader's own API: id -> (first, last, email)."""
    from nbgrader.api import Gradebook

    with Gradebook(gradebook_url(course), COURSE_ID) as gradebook:
        return {s.id: (s.first_name, s.last_name, s.email) for s in gradebook.students}


def test_the_roster_enrols_every_learner_over_every_page_and_no_teacher(tmp_path, platform):
    assert len(CLASS) > 2 * PAGE  # the platform answers in three pages
    course = tmp_path / "course"
    link_course(course, platform, [*CLASS, ASSISTANT])
    said = roster(Course.at(course)).summary()
    assert students(course) == {m.user_id: (m.given_name, m.family_name, m.email) for m in CLASS}
    for member in CLASS:
        assert f"added {member.user_id} ({member.name}, {member.email})" in said
    assert "2 instructors or assistants, not enrolled as students" in said
    again = roster(Course.at(course)).summary()
    assert again.startswith("no change: 7 learners in the LMS, all enrolled as before")


def test_mid_term_new_students_are_added_and_dropped_ones_kept_with_their_grades(
    tmp_path, platform
):
    from nbgrader.api import Gradebook

    course = tmp_path / "course"
    link_course(course, platform, CLASS)
    roster(Course.at(course))
    with Gradebook(gradebook_url(course), COURSE_ID) as gradebook:
        gradebook.add_assignment("quiz")
        for student in ("s01", "s02"):
            gradebook.add_submission("quiz", student)
        gradebook.update_or_create_student("walk_in", last_name="Enrolled By Hand")
    moved = Member("s03", CLASS[3].name, "s3@elsewhere.example")
    inactive = Member("s02", CLASS[2].name, CLASS[2].email, status="Inactive")
    new = Member("s99", "Nova Late", "nova@uni.example")
    platform.enrol([CLASS[0], inactive, moved, *CLASS[4:], new])  # s01 gone from the LMS
    said = roster(Course.at(course)).summary().splitlines()
    assert said[:4] == [
        "added s99 (Nova Late, nova@uni.example)",
        "updated s03's email (s3@uni.example -> s3@elsewhere.example)",
        "dropped s01 (gone from the LMS roster): kept with grades",
        "dropped s02 (Inactive in the LMS): kept with grades",
    ]
    assert "in the gradebook but never on the LMS roster (kept): walk_in" in said
    enrolled = students(course)
    assert {"s01", "s02", "walk_in", "s99"} <= set(enrolled)
    assert enrolled["s03"][2] == "s3@elsewhere.example"
    with Gradebook(gradebook_url(course), COURSE_ID) as gradebook:
        assert {s.student.id for s in gradebook.find_assignment("quiz").submissions} == {
            "s01",
            "s02",
        }
    platform.enrol([*CLASS[:3], moved, *CLASS[4:], new])  # s01 and s02 back
    back = roster(Course.at(course)).summary()
    assert "back: s01 is active in the LMS again" in back
    assert "back: s02 is active in the LMS again" in back
    assert "dropped" not in back


def test_a_course_never_launched_from_its_lms_is_told_what_to_do(tmp_path):
    parser = argparse.ArgumentParser()
    LMS.add_to(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["lms", "roster", "--course", str(tmp_path)])
    with pytest.raises(LmsError, match="launch it once from the LMS as its instructor"):
        LMS.run(args)
    with pytest.raises(NotLinked):
        roster(Course.at(tmp_path))
