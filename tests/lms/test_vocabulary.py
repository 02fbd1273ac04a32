"""The LMS's words have one home (viewcopy.lms.vocabulary): what a person's LIS roles make them
in the course, read alike at a launch and in the roster (the hub's launch test launches the same
role sets against the roster), and no other module spelling an LTI claim, scope, role or media
type URI of its own."""

from __future__ import annotations

import pytest
from support.course_notebook import ROOT

from viewcopy.lms.vocabulary import GRADER, STUDENT, course_role

LIS = "http://purl.imsglobal.org/vocab/lis/v2/"
MEMBER = LIS + "membership#"


@pytest.mark.parametrize(
    "roles, role",
    [
        ([MEMBER + "Learner"], STUDENT),
        (["Learner"], STUDENT),  # a bare name, as LTI 1.1 platforms and some rosters send it
        ([LIS + "membership/Learner#Auditor"], STUDENT),  # a Learner's sub-role
        ([MEMBER + "Learner", MEMBER + "ContentDeveloper"], STUDENT),
        ([MEMBER + "Learner", MEMBER + "Mentor"], STUDENT),
        ([MEMBER + "Instructor"], GRADER),
        ([LIS + "membership/Instructor#TeachingAssistant"], GRADER),
        ([LIS + "membership/Instructor#TeachingAssistant", MEMBER + "Learner"], GRADER),
        ([MEMBER + "Learner", MEMBER + "Instructor"], GRADER),
        ([MEMBER + "ContentDeveloper"], None),
        ([MEMBER + "Mentor"], None),
        ([LIS + "institution/person#Student"], STUDENT),  # no course role: the institution's
        ([LIS + "institution/person#Instructor"], GRADER),
        ([LIS + "institution/person#Instructor", MEMBER + "Learner"], STUDENT),
        ([LIS + "system/person#Administrator"], None),
        ([], None),
    ],
)
def test_a_persons_roles_make_them_a_student_a_grader_or_neither(roles, role):
    assert course_role(roles) == role
    assert course_role(tuple(reversed(roles))) == role  # the order an LMS lists them in: none


def test_no_module_but_the_vocabulary_spells_the_lms_words():
    spellings = ("purl.imsglobal.org", "canvas.instructure.com", "application/vnd.ims")
    home = ROOT / "src" / "viewcopy" / "lms" / "vocabulary.py"
    found = [
        f"{path.relative_to(ROOT)}: {word}"
        for path in sorted((ROOT / "src" / "viewcopy").rglob("*.py"))
        if path != home
        for word in spellings
        if word in path.read_text(encoding="utf-8")
    ]
    assert found == [], found
    assert all(word in home.read_text(encoding="utf-8") for word in spellings)
