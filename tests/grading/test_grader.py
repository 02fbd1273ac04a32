"""`viewcopy grade` on a real course: parallel workers, a hang and a kernel death beside honest
students, the same gradebook as plain `nbgrader autograde`, skipping and forcing (Ctrl-C, the
command interrupted as from a terminal: tests/commands/test_viewcopy_grade.py).

The course is the hostile corpus (conftest's session fixture `hostile`): its `endless_loop` hangs
and its `exits_kernel` kills its kernel beside two honest students. Tests that grade again do it
in a copy of that course.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

import pytest
from support.hostile_corpus import HONEST_COPIES, LIMIT_S
from support.regrading import HONEST, KILLS_KERNEL, grades, regraded_copy

from viewcopy.course.assignment import ASSIGNMENT, read_grades, waiting_url
from viewcopy.course.folder import Course
from viewcopy.grading.grade import FAILED, GRADED, SKIPPED, grade, up_to_date
from viewcopy.grading.pool import GradingRun
from viewcopy.grading.worker import failure_reason

pytestmark = [pytest.mark.course, pytest.mark.sandbox]

HANGS = "endless_loop"
SAME_HAND_IN = {**HONEST_COPIES, KILLS_KERNEL: KILLS_KERNEL}
"""Each compared hand-in here, and the same hand-in in the session's plain autograde (conftest's
`plain`: the class's, of which the honest ones here are copies)."""


@pytest.fixture(scope="module")
def course(hostile):
    """The graded corpus: (course folder, outcomes by student)."""
    folder, _, outcomes, _, _ = hostile
    return folder, outcomes


@pytest.fixture(scope="module")
def regraded(course, tmp_path_factory):
    """A copy of the graded course, with only the honest hand-ins and the dead kernel's, for the
    tests that grade again (skip, then force)."""
    folder, outcomes = course
    return regraded_copy(folder, tmp_path_factory.mktemp("regrade") / "course"), outcomes


def test_a_hang_and_a_dead_kernel_fail_with_their_reason_while_the_others_are_graded(course):
    folder, outcomes = course
    assert {s: outcomes[s].status for s in (*HONEST, HANGS, KILLS_KERNEL)} == {
        "honest_perfect": GRADED,
        "honest_typical": GRADED,
        HANGS: FAILED,
        KILLS_KERNEL: FAILED,
    }
    assert f"{LIMIT_S} s limit" in outcomes[HANGS].reason
    assert LIMIT_S <= outcomes[HANGS].seconds < LIMIT_S + 10
    assert "kernel died" in outcomes[KILLS_KERNEL].reason
    autograded = folder / "autograded"
    graded = sorted(p.parent.name for p in autograded.glob(f"*/{ASSIGNMENT}"))
    assert graded == sorted(s for s, o in outcomes.items() if o.status == GRADED)
    assert set(HONEST) <= set(graded)  # as nbgrader does, no half-graded copy stays:
    assert HANGS not in graded and KILLS_KERNEL not in graded
    with (Course.at(folder).grade_logs(ASSIGNMENT) / "record.csv").open() as f:
        record = {row["student_id"]: row for row in csv.DictReader(f)}
    assert {s: r["status"] for s, r in record.items()} == {s: o.status for s, o in outcomes.items()}
    assert record[KILLS_KERNEL]["reason"] == outcomes[KILLS_KERNEL].reason
    honest = grades(folder, HONEST)
    auto = {k: v for k, v in honest.items() if not k[1].startswith("answer_")}
    assert auto and all(score is not None for score, _ in auto.values())
    assert all(honest[s, "answer_21"][0] is None for s in HONEST)  # waits for hand grading
    assert honest["honest_perfect", "test_classify_hidden"][0] == 5


def test_the_class_report_names_each_failed_hand_in_with_its_reason(course):
    from viewcopy.report.build import build_report

    folder, outcomes = course
    problems = dict(build_report(folder).problems)
    for student_id in (HANGS, KILLS_KERNEL):
        assert problems[student_id] == f"grading failed: {outcomes[student_id].reason}"


def test_scores_are_what_plain_nbgrader_autograde_gives(course, plain):
    folder, _ = course
    ours, theirs = read_grades(folder), read_grades(plain)
    for student_id, handed_in_as in SAME_HAND_IN.items():
        assert ours[student_id] == theirs[handed_in_as], student_id
    assert sum(score or 0 for s in HONEST for score, _ in ours[s].values()) > 10
    for student_id in HONEST:
        mine = folder / "autograded" / student_id / ASSIGNMENT / "view_or_copy.ipynb"
        other = plain / "autograded" / SAME_HAND_IN[student_id] / ASSIGNMENT / "view_or_copy.ipynb"
        assert _sources(mine) == _sources(other)
    assert not (plain / "autograded" / KILLS_KERNEL / ASSIGNMENT).exists()  # as ours: no copy


def _sources(path: Path) -> list[str]:
    import nbformat

    return [c.source for c in nbformat.read(path, as_version=4).cells]


def test_a_rerun_skips_what_is_graded_and_force_regrades(regraded):
    folder, _ = regraded
    before = grades(folder, HONEST)
    started = time.monotonic()
    run = GradingRun(Course.at(folder), ASSIGNMENT)
    outcomes = grade(run, pattern="honest_*", progress=False)
    assert [o.status for o in outcomes] == [SKIPPED, SKIPPED]
    assert time.monotonic() - started < 5  # no worker was started
    assert all(up_to_date(run.course, ASSIGNMENT, s) for s in HONEST)
    assert not up_to_date(run.course, ASSIGNMENT, KILLS_KERNEL)

    (outcome,) = grade(run, pattern="*typical", force=True, progress=False)
    assert (outcome.student_id, outcome.status) == ("honest_typical", GRADED)
    assert grades(folder, HONEST) == before


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
    assert waiting_url("sqlite:////c/gradebook.db") == "sqlite:////c/gradebook.db?timeout=300"
    assert waiting_url("sqlite:////c/g.db?mode=ro") == "sqlite:////c/g.db?mode=ro"
    assert waiting_url("postgresql://host/db") == "postgresql://host/db"
