"""`Course`: one value for a course folder. Its config is executed once per process while the
file stays as it is (and again once it changes); a config that does not run is named with its
line; its hand-ins and their times are read as nbgrader reads them."""

from __future__ import annotations

import os

import pytest
from nbgrader.utils import parse_utc
from support.course_notebook import ROOT

from viewcopy.course.assignment import SUBMITTED_AT, CourseSettingError, course_config
from viewcopy.course.folder import Course, mark_submitted

COUNTING = """
with open({count!r}, "a") as runs:
    runs.write("ran\\n")
"""


def test_a_courses_config_runs_once_per_process_until_it_changes(tmp_path, monkeypatch):
    count = tmp_path / "runs.txt"
    config = tmp_path / "nbgrader_config.py"
    shipped = (ROOT / "nbgrader_config.py").read_text()
    config.write_text(shipped + COUNTING.format(count=str(count)))
    course = Course.at(tmp_path)
    read = [course.config, course.settings.course_id, course.id, course.gradebook_url]
    read.append(course_config(tmp_path))
    assert count.read_text().count("ran") == 1
    assert course.id == "view_or_copy"
    course.config.CourseDirectory.course_id = "changed by a caller"  # each caller's own copy
    assert course.id == "view_or_copy"
    config.write_text(
        shipped.replace('"view_or_copy"', '"cs101"') + COUNTING.format(count=str(count))
    )
    os.utime(config, ns=(config.stat().st_atime_ns, config.stat().st_mtime_ns + 10**9))
    assert course.id == "cs101"
    assert count.read_text().count("ran") == 2
    monkeypatch.setenv("VIEWCOPY_SCORING", "balanced")  # a config may read its environment
    assert course.id == "cs101" and count.read_text().count("ran") == 3


def test_a_config_that_does_not_run_is_named_with_its_line(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n\nc.Oops = 1 / 0\n")
    with pytest.raises(CourseSettingError) as raised:
        assert Course.at(tmp_path).settings is None  # never reached: the config does not run
    said = str(raised.value)
    assert str(tmp_path / "nbgrader_config.py") in said and ", line 3 " in said
    assert "ZeroDivisionError" in said


def test_hand_ins_and_their_times_are_read_as_nbgrader_reads_them(tmp_path):
    course = Course.at(tmp_path)
    with pytest.raises(FileNotFoundError):
        course.hand_ins("lab")
    for student in ("ada", "bob", "cy"):
        course.hand_in(student, "lab").mkdir(parents=True)
    (course.submitted / "dee" / "other").mkdir(parents=True)
    mark_submitted(course.hand_in("ada", "lab"))
    (course.hand_in("bob", "lab") / "timestamp.txt").write_text("not a time\n")
    assert course.hand_ins("lab") == ["ada", "bob", "cy"]
    assert course.hand_ins("lab", "[ab]*") == ["ada", "bob"]
    assert course.submitted_stamp("ada", "lab") == SUBMITTED_AT
    assert course.submitted_at("ada", "lab") == parse_utc(SUBMITTED_AT)
    assert course.submitted_at("bob", "lab") is None  # unreadable, as nbgrader skips it
    assert course.submitted_at("cy", "lab") is None and course.graded_at("ada", "lab") is None
    assert course.hand_in("ada", "lab") == tmp_path.resolve() / "submitted" / "ada" / "lab"
    assert course.graded("ada", "lab") == tmp_path.resolve() / "autograded" / "ada" / "lab"
