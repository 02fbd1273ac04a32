"""One person, one hub name, for good (`lms.people`): ids that normalise alike, or that spell
another person's name, get names of their own; bindings survive a re-read and an earlier
release's link.json; an instructor lists and repairs them with `viewcopy lms people`; two
writers at once lose no binding."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import re

import pytest
from support.launch_claims import ISSUER, launch_claims

from viewcopy.lms.commands import LMS
from viewcopy.lms.errors import LmsError
from viewcopy.lms.launch_message import LaunchMessage
from viewcopy.lms.link import LINK_FILE, CourseLink
from viewcopy.lms.people import (
    BY_EARLIER_RELEASE,
    BY_LAUNCH,
    PEOPLE_FILE,
    NameTaken,
    People,
    bind,
)
from viewcopy.lms.registration import SAFE_NAME, hub_name


def test_ids_that_normalise_alike_get_names_of_their_own_and_keep_them(tmp_path):
    names = {sub: bind(tmp_path, ISSUER, sub, sub, BY_LAUNCH) for sub in ("ada", "ada ", " ada")}
    assert names["ada"] == "ada" and len(set(names.values())) == 3
    assert all(SAFE_NAME.fullmatch(name) for name in names.values())
    for sub, name in names.items():  # the next launch, and a fresh read, give the same name
        assert bind(tmp_path, ISSUER, sub, sub, BY_LAUNCH) == name
        assert People.read(tmp_path).sub_of(name) == sub


@pytest.mark.parametrize("first", ["lms id", "spelled name"])
def test_an_id_spelling_another_persons_name_never_gets_it(tmp_path, first):
    lms_id = "Staff|42"
    spelled = hub_name(lms_id)  # a safe id, equal to the name the other id offers
    assert spelled != lms_id and SAFE_NAME.fullmatch(spelled)
    order = [lms_id, spelled] if first == "lms id" else [spelled, lms_id]
    names = [bind(tmp_path, ISSUER, sub, sub, BY_LAUNCH) for sub in order]
    assert names[0] == spelled and names[1] != spelled
    assert re.fullmatch(re.escape(spelled[:54]) + r"-[0-9a-f]{8}", names[1]), names[1]
    people = People.read(tmp_path)
    assert [people.sub_of(n) for n in names] == order


def test_the_same_sub_of_another_platform_is_another_person(tmp_path):
    here = bind(tmp_path, ISSUER, "u1", "u1", BY_LAUNCH)
    there = bind(tmp_path, "https://other.example", "u1", "u1", BY_LAUNCH)
    assert here == "u1" and there != here


def test_a_course_linked_by_an_earlier_release_keeps_its_peoples_names(tmp_path):
    teacher = LaunchMessage.read(launch_claims("Staff|42", "Instructor"))
    CourseLink.record_launch(tmp_path, teacher, "staff-42-legacy")
    assert not (tmp_path / PEOPLE_FILE).exists()
    (binding,) = People.read(tmp_path).bindings
    assert (binding.sub, binding.name, binding.by) == (
        "Staff|42",
        "staff-42-legacy",
        BY_EARLIER_RELEASE,
    )
    assert bind(tmp_path, ISSUER, "Staff|42", "Staff|42", BY_LAUNCH) == "staff-42-legacy"
    assert json.loads((tmp_path / PEOPLE_FILE).read_text())["people"][0]["sub"] == "Staff|42"


def test_an_unreadable_people_file_is_named_not_replaced(tmp_path):
    (tmp_path / PEOPLE_FILE).write_text("{ torn")
    with pytest.raises(ValueError, match=re.escape(str(tmp_path / PEOPLE_FILE))):
        bind(tmp_path, ISSUER, "u1", "u1", BY_LAUNCH)
    assert (tmp_path / PEOPLE_FILE).read_text() == "{ torn"


def lms(*args: str) -> str:
    parser = argparse.ArgumentParser()
    LMS.add_arguments(parser)
    return LMS.run(parser.parse_args(list(args)))


def test_an_instructor_lists_and_repairs_the_bindings(tmp_path):
    course = tmp_path
    folder = course / "lms"
    teacher = LaunchMessage.read(launch_claims("t-1", "Instructor"))
    CourseLink.record_launch(folder, teacher, bind(folder, ISSUER, "t-1", "t-1", BY_LAUNCH))
    bind(folder, ISSUER, "ada", "ada", BY_LAUNCH)
    bind(folder, ISSUER, "ada ", "ada ", BY_LAUNCH)
    listed = lms("people", "--course", str(course)).splitlines()
    assert len(listed) == 3 and listed[0].startswith("ada: 'ada' of https://lms.example.edu")
    assert any(line.startswith("ada-") and "'ada '" in line for line in listed)

    with pytest.raises(LmsError, match="ada: 'ada' of .*release it first"):
        lms("people", "bind", "ada ", "ada", "--course", str(course))
    with pytest.raises(LmsError, match="not a hub name"):
        lms("people", "bind", "ada ", "Ada Lovelace", "--course", str(course))
    with pytest.raises(LmsError, match="no one holds the hub name 'nobody'"):
        lms("people", "release", "nobody", "--course", str(course))
    with pytest.raises(LmsError, match="usage: viewcopy lms people bind SUB NAME"):
        lms("people", "bind", "ada", "--course", str(course))

    said = lms("people", "release", "ada", "--course", str(course))
    assert "release: done" in said and People.read(folder).holder("ada") is None
    said = lms("people", "bind", "ada ", "ada", "--course", str(course))
    people = People.read(folder)
    assert people.sub_of("ada") == "ada " and len(people.bindings) == 2  # moved, not copied
    assert "ada: 'ada ' of" in said and "by instructor" in said
    # the released person is offered their own name again, held now: a suffixed one
    assert bind(folder, ISSUER, "ada", "ada", BY_LAUNCH) not in ("ada", "")
    with pytest.raises(NameTaken):
        People.read(folder).released("nobody")


def _bind_many(folder, prefix: str) -> None:
    for i in range(15):
        bind(folder, ISSUER, f"{prefix}{i}", f"{prefix}{i}", BY_LAUNCH)


def test_two_writers_at_once_lose_no_binding(tmp_path):
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_bind_many, args=(tmp_path, p)) for p in ("a", "b")]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(60)
        assert writer.exitcode == 0
    people = People.read(tmp_path)
    assert sorted(b.name for b in people.bindings) == sorted(
        f"{p}{i}" for p in ("a", "b") for i in range(15)
    )
    assert not (tmp_path / LINK_FILE).exists()
