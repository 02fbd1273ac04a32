"""`viewcopy grade` on a real course: parallel workers, a hang and a kernel death beside honest
students, the same gradebook as plain `nbgrader autograde`, skipping, and Ctrl-C.

Slow (a kernel per submission): one course serves the module.
"""

from __future__ import annotations

import csv
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from course_notebook import ROOT

from viewcopy.course.assignment import ASSIGNMENT, build_course, read_grades, run_nbgrader
from viewcopy.instructor.grade import FAILED, GRADED, SKIPPED, grade, up_to_date
from viewcopy.instructor.grade_worker import failure_reason, gradebook_url
from viewcopy.instructor.synthetic import Student, hand_in, synthetic_class

pytestmark = [pytest.mark.course]

LIMIT_S = 30
HONEST = ("honest_perfect", "honest_typical")


def hostile(student_id: str, profile: str, classify: str) -> Student:
    return Student(student_id, profile, {"classify": classify}, runs=False)


def students() -> list[Student]:
    base = {s.student_id: s for s in synthetic_class(ROOT)}
    perfect, typical = base["perfect"], base["typical"]
    return [
        Student("honest_perfect", perfect.profile, perfect.cells),
        Student("honest_typical", typical.profile, typical.cells, runs=False),
        hostile("hangs", "an endless loop", "while True:\n    pass\n"),
        hostile("kills_kernel", "exits its kernel", "import os\nos._exit(3)\n"),
    ]


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = tmp_path_factory.mktemp("grade") / "course"
    everyone = students()
    build_course(ROOT, course, {s.student_id: s.profile for s in everyone})
    for student in everyone:
        hand_in(student, course)
    outcomes = grade(course, ASSIGNMENT, jobs=2, limit_s=LIMIT_S, progress=False)
    return course, {o.student_id: o for o in outcomes}


def grades(course: Path, student_ids) -> dict[tuple[str, str], tuple[float | None, float]]:
    """(score, max) per student and cell; the score is None for a cell graded by hand."""
    every = read_grades(course)
    return {(s, cell): value for s in student_ids for cell, value in every[s].items()}


def test_a_hang_and_a_dead_kernel_fail_with_their_reason_while_the_others_are_graded(course):
    folder, outcomes = course
    assert {s: o.status for s, o in outcomes.items()} == {
        "honest_perfect": GRADED,
        "honest_typical": GRADED,
        "hangs": FAILED,
        "kills_kernel": FAILED,
    }
    assert f"{LIMIT_S} s limit" in outcomes["hangs"].reason
    assert LIMIT_S <= outcomes["hangs"].seconds < LIMIT_S + 10
    assert "kernel died" in outcomes["kills_kernel"].reason
    autograded = folder / "autograded"
    graded = sorted(p.parent.name for p in autograded.glob(f"*/{ASSIGNMENT}"))
    assert graded == sorted(HONEST)  # as nbgrader does, no half-graded copy stays
    with (folder / "grade_logs" / ASSIGNMENT / "record.csv").open() as f:
        record = {row["student_id"]: row for row in csv.DictReader(f)}
    assert {s: r["status"] for s, r in record.items()} == {s: o.status for s, o in outcomes.items()}
    assert record["kills_kernel"]["reason"] == outcomes["kills_kernel"].reason
    honest = grades(folder, HONEST)
    auto = {k: v for k, v in honest.items() if not k[1].startswith("answer_")}
    assert auto and all(score is not None for score, _ in auto.values())
    assert all(honest[s, "answer_21"][0] is None for s in HONEST)  # waits for hand grading
    assert honest["honest_perfect", "test_classify_hidden"][0] == 5


def test_the_class_report_names_each_failed_hand_in_with_its_reason(course):
    from viewcopy.instructor.report import build_report

    folder, outcomes = course
    problems = dict(build_report(folder).problems)
    for student_id in ("hangs", "kills_kernel"):
        assert problems[student_id] == f"grading failed: {outcomes[student_id].reason}"


def test_scores_are_what_plain_nbgrader_autograde_gives(course, tmp_path):
    folder, _ = course
    plain = tmp_path / "plain"
    shutil.copytree(folder, plain, ignore=shutil.ignore_patterns("autograded", "grade_logs"))
    with pytest.raises(Exception, match="autograde"):  # nbgrader fails the run for kills_kernel
        run_nbgrader(
            plain, "autograde", ASSIGNMENT, "--force", "--CourseDirectory.student_id_exclude=hangs"
        )
    compared = [*HONEST, "kills_kernel"]
    ours, theirs = grades(folder, compared), grades(plain, compared)
    assert ours == theirs
    assert sum(score or 0 for score, _ in ours.values()) > 10
    for student_id in HONEST:
        mine = folder / "autograded" / student_id / ASSIGNMENT / "view_or_copy.ipynb"
        other = plain / "autograded" / student_id / ASSIGNMENT / "view_or_copy.ipynb"
        assert _sources(mine) == _sources(other)


def _sources(path: Path) -> list[str]:
    import nbformat

    return [c.source for c in nbformat.read(path, as_version=4).cells]


def test_a_rerun_skips_what_is_graded_and_force_regrades(course):
    folder, _ = course
    before = grades(folder, HONEST)
    started = time.monotonic()
    outcomes = grade(folder, ASSIGNMENT, pattern="honest_*", progress=False)
    assert [o.status for o in outcomes] == [SKIPPED, SKIPPED]
    assert time.monotonic() - started < 5  # no worker was started
    assert all(up_to_date(folder, ASSIGNMENT, s) for s in HONEST)
    assert not up_to_date(folder, ASSIGNMENT, "kills_kernel")

    (outcome,) = grade(folder, ASSIGNMENT, pattern="*typical", force=True, progress=False)
    assert (outcome.student_id, outcome.status) == ("honest_typical", GRADED)
    assert grades(folder, HONEST) == before


def start_grading_and_wait_for_the_worker(folder: Path) -> subprocess.Popen:
    """`viewcopy grade` on the honest students, one worker, once it has started the first."""
    command = [
        str(Path(sys.executable).with_name("viewcopy")),
        "grade", "--course", str(folder), "--force", "--jobs", "1", "--quiet",
        "--student", "honest_*",
    ]  # fmt: skip
    log = folder / "grade_logs" / ASSIGNMENT / "worker-0.log"
    log.unlink(missing_ok=True)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    while "Sanitizing" not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline, "the worker never started grading"
        time.sleep(0.2)
    return process


def recorded(folder: Path) -> dict[str, str]:
    with (folder / "grade_logs" / ASSIGNMENT / "record.csv").open() as f:
        return {row["student_id"]: row["status"] for row in csv.DictReader(f)}


def test_ctrl_c_finishes_the_submission_in_flight_and_starts_no_other(course):
    folder, _ = course
    before = grades(folder, HONEST)
    process = start_grading_and_wait_for_the_worker(folder)
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 130, output
    assert "finishing the submissions in flight" in output
    assert recorded(folder) == {"honest_perfect": GRADED, "honest_typical": "interrupted"}
    assert grades(folder, HONEST) == before
    assert all(up_to_date(folder, ASSIGNMENT, s) for s in HONEST)


def test_a_second_ctrl_c_abandons_the_hand_in_in_flight_and_leaves_no_kernel(course):
    import psutil

    folder, _ = course
    process = start_grading_and_wait_for_the_worker(folder)
    process.send_signal(signal.SIGINT)
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 130, output
    assert recorded(folder) == {"honest_perfect": "interrupted", "honest_typical": "interrupted"}
    assert not up_to_date(folder, ASSIGNMENT, "honest_perfect")  # the next run grades it
    leftovers = [
        p.info["cmdline"]
        for p in psutil.process_iter(["cmdline"])
        if str(folder) in " ".join(p.info["cmdline"] or ())
    ]
    assert leftovers == []
    (outcome,) = grade(folder, ASSIGNMENT, pattern="honest_perfect", progress=False)
    assert outcome.status == GRADED


@pytest.mark.parametrize(
    ("log", "says"),
    [
        (
            "[ERROR] There was an error\nTraceback (most recent call last):\n"
            "nbclient.exceptions.DeadKernelError: Kernel died\n"
            "nbgrader.converters.base.NbGraderException: Please see the error log",
            "the kernel died while running the notebook",
        ),
        ("sqlalchemy.exc.OperationalError: database is locked", "gradebook could not be written"),
        ("ValueError: Invalid timestamp string", "ValueError: Invalid timestamp string"),
        ("nothing recognisable", "nbgrader could not grade it"),
    ],
)
def test_failure_reasons_name_the_first_exception_plainly(log, says):
    assert says in failure_reason(log)


def test_sqlite_gradebooks_wait_for_the_lock_other_databases_are_left_alone():
    assert gradebook_url("sqlite:////c/gradebook.db") == "sqlite:////c/gradebook.db?timeout=300"
    assert gradebook_url("sqlite:////c/g.db?mode=ro") == "sqlite:////c/g.db?mode=ro"
    assert gradebook_url("postgresql://host/db") == "postgresql://host/db"
