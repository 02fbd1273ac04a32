"""Which release each hand-in met: the grading record names the version that graded it (a record
written before versions still reads), and `versions_of` pairs it with the version that locked it,
None (BEFORE_VERSIONS) where a hand-in from before versions has none. Nothing is graded here:
the hand-ins are the frozen one of 0.1.0+70cf16b, its lock file or its outputs given a version."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from support.course_notebook import RELEASE_0_1_0, RELEASE_0_1_0_70CF16B

from viewcopy.course.assignment import ASSIGNMENT, NOTEBOOK
from viewcopy.course.folder import Course
from viewcopy.engine.version import package_version
from viewcopy.grading.record import (
    FAILED,
    GRADED,
    SKIPPED,
    HandInOutcome,
    read_record,
    record_path,
    write_record,
)
from viewcopy.grading.versions import BEFORE_VERSIONS, HandInVersions, versions_of
from viewcopy.locking.record import LOCK_FILE, OUTPUT_KEY

FROZEN = RELEASE_0_1_0_70CF16B / "hand_in"


def handed_in(course: Path, student: str, source: Path = FROZEN) -> Path:
    folder = course / "submitted" / student / ASSIGNMENT
    shutil.copytree(source, folder)
    return folder


def with_version(data: dict, version: str) -> dict:
    return {**data, "viewcopy": version}


def test_the_record_names_the_version_that_graded_and_keeps_it_for_a_skipped_hand_in(tmp_path):
    path = record_path(Course.at(tmp_path), ASSIGNMENT)
    path.parent.mkdir(parents=True)
    write_record(
        path, [HandInOutcome("ann", GRADED, 3.0), HandInOutcome("bob", FAILED, reason="hang")]
    )
    first = read_record(path)
    assert {s: o.viewcopy for s, o in first.items()} == {
        "ann": package_version(),
        "bob": package_version(),  # the version that tried
    }
    # the next run skips ann (already graded) and bob (graded since, say, by plain nbgrader)
    write_record(
        path,
        [
            HandInOutcome("ann", SKIPPED, reason="already graded"),
            HandInOutcome("bob", SKIPPED, reason="already graded"),
            HandInOutcome("cy", GRADED, 2.0, viewcopy="9.9.9"),  # an outcome that says its own
        ],
    )
    again = read_record(path)
    assert {s: o.viewcopy for s, o in again.items()} == {
        "ann": package_version(),
        "bob": "",  # its last row graded nothing: which version graded it is not known
        "cy": "9.9.9",
    }


def test_a_record_written_before_versions_still_reads(tmp_path):
    path = tmp_path / "record.csv"
    path.write_text(  # the record of 0.1.0: no devices, worker or viewcopy columns
        "student_id,status,seconds,reason\nann,graded,4.20,\nbob,failed,45.00,the 45 s limit\n"
    )
    read = read_record(path)
    assert read["ann"] == HandInOutcome("ann", GRADED, 4.2)
    assert read["bob"] == HandInOutcome("bob", FAILED, 45.0, "the 45 s limit")
    write_record(path, [HandInOutcome("ann", SKIPPED, reason="already graded")])
    assert read_record(path)["ann"].viewcopy == ""


def test_a_record_that_does_not_read_is_replaced_whole(tmp_path):
    path = tmp_path / "record.csv"
    path.write_text("student_id,status\nann\n")  # edited by hand: no seconds, a short row
    write_record(path, [HandInOutcome("ann", SKIPPED, reason="already graded")])
    assert read_record(path) == {"ann": HandInOutcome("ann", SKIPPED, 0.0, "already graded")}


def test_versions_of_pairs_the_lock_s_version_with_the_grading_s(tmp_path):
    course = Course.at(tmp_path)
    handed_in(tmp_path, "before")  # the frozen hand-in: a lock file without a version
    new = handed_in(tmp_path, "locked_now")
    lock = json.loads((new / LOCK_FILE).read_text("utf-8"))
    (new / LOCK_FILE).write_text(json.dumps(with_version(lock, "0.2.0")), "utf-8")
    notebook_only = handed_in(tmp_path, "notebook_only")  # the lock travels in its outputs only
    (notebook_only / LOCK_FILE).unlink()
    notebook = json.loads((notebook_only / NOTEBOOK).read_text("utf-8"))
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            if (held := output.get("metadata", {}).get(OUTPUT_KEY)) is not None:
                output["metadata"][OUTPUT_KEY] = with_version(held, "0.3.0")
    (notebook_only / NOTEBOOK).write_text(json.dumps(notebook), "utf-8")
    outputs_before = handed_in(tmp_path, "outputs_before")
    (outputs_before / LOCK_FILE).unlink()
    never = tmp_path / "submitted" / "never_locked" / ASSIGNMENT
    never.mkdir(parents=True)
    shutil.copy(RELEASE_0_1_0 / NOTEBOOK, never)  # a notebook with no lock anywhere
    path = record_path(course, ASSIGNMENT)
    path.parent.mkdir(parents=True)
    write_record(
        path,
        [
            HandInOutcome("locked_now", GRADED, 3.0),
            HandInOutcome("notebook_only", FAILED, reason="kernel died"),
            HandInOutcome("gone", GRADED, 3.0, viewcopy="0.2.0"),  # its folder since removed
        ],
    )
    graded = package_version()
    assert versions_of(course, ASSIGNMENT) == {
        "before": HandInVersions(None, None),
        "gone": HandInVersions(None, "0.2.0"),
        "locked_now": HandInVersions("0.2.0", graded),
        "never_locked": HandInVersions(None, None),
        "notebook_only": HandInVersions("0.3.0", None),  # its grading failed: graded by none
        "outputs_before": HandInVersions(None, None),
    }
    assert versions_of(course, ASSIGNMENT)["before"].said() == (BEFORE_VERSIONS, BEFORE_VERSIONS)
    assert versions_of(course, ASSIGNMENT)["locked_now"] == ("0.2.0", graded)  # a plain pair too


def test_a_course_without_submissions_or_record_has_no_versions(tmp_path):
    assert versions_of(Course.at(tmp_path), ASSIGNMENT) == {}
