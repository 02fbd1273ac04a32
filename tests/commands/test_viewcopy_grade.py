"""`viewcopy grade` as an instructor runs it: its usage errors; the command killed outright
(SIGKILL: the OOM killer, `kill -9`, a batch job at its time limit) while it grades, locally or as
the coordinator of a Dask cluster: nothing it started outlives it, and the next run, without
--force, grades exactly what was not finished, to the scores plain `nbgrader autograde` gives
(conftest's `plain`); and Ctrl-C from a terminal, once (the hand-in in flight finishes, no other
starts) and twice (it is abandoned, no kernel left).

The grading itself (the pool, the cluster, the sandbox): tests/grading/.
"""

from __future__ import annotations

import contextlib
import csv
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import nbformat
import psutil
import pytest
from support.command_line import assert_one_line_usage_error, started_from_a_terminal
from support.regrading import (
    BIN,
    HONEST,
    KEPT,
    KILLS_KERNEL,
    assert_graded_as_plain,
    copy_of,
    grades,
    regraded_copy,
    wait_for,
)
from support.sandboxing import sandbox_or_skip
from support.the_class import course_of

from viewcopy.cli import main
from viewcopy.course.assignment import ASSIGNMENT, NOTEBOOK, read_grades
from viewcopy.course.folder import Course
from viewcopy.grading.grade import FAILED, GRADED, SKIPPED, grade, up_to_date
from viewcopy.grading.pool import GradingRun
from viewcopy.sandbox.kernel_connection import LINK_PREFIX, LINKS


@pytest.fixture(scope="session")
def sandboxed() -> None:
    """Skip where kernels cannot be sandboxed, before any course is built; fail instead where
    VIEWCOPY_REQUIRE_SANDBOX=1 (CI)."""
    sandbox_or_skip()


# --- usage errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("grade", "--course", "/nonexistent/course"), "has no nbgrader_config.py"),
    ],
)
def test_usage_errors_are_one_line_with_exit_status_2(viewcopy, args, says):
    assert_one_line_usage_error(viewcopy(*args), says)


def test_grade_names_what_is_missing_in_a_course_without_hand_ins(viewcopy, tmp_path):
    (tmp_path / "nbgrader_config.py").write_text("")
    done = viewcopy("grade", "--course", str(tmp_path))
    assert done.returncode == 2 and "no submitted/ folder" in done.stderr
    (tmp_path / "submitted" / "ada").mkdir(parents=True)
    done = viewcopy("grade", "--course", str(tmp_path), "--student", "b*")
    assert done.returncode == 2 and "no submissions of view_or_copy match 'b*'" in done.stderr


def test_grade_refuses_zero_workers(viewcopy):
    with pytest.raises(SystemExit) as exit_:
        viewcopy("grade", "--jobs", "0")
    assert exit_.value.code == 2


def test_devices_other_than_cpu_and_cuda_are_refused_before_anything_is_graded():
    with pytest.raises(SystemExit):
        main(["grade", "--devices", "cpu,tpu"])


# --- killed outright, locally ----------------------------------------------------------------


HAND_INS = ("rule_learner", "memoriser", "perfect", "typical", "never_locked")
"""Five of the hand-ins that `plain` grades, none of which fails: at the kill, two are graded,
two in flight and one waits."""


def graded(course: Path) -> dict[str, int]:
    """Each hand-in in autograded/, with its notebook's modification time (ns)."""
    found = (course / "autograded").glob(f"*/{ASSIGNMENT}/{NOTEBOOK}")
    return {path.parents[1].name: path.stat().st_mtime_ns for path in found}


def descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def grade_until_some_are_done(course: Path) -> tuple[subprocess.Popen, list[psutil.Process]]:
    """`viewcopy grade` with two workers, once two hand-ins are graded and a kernel is grading
    another; with every process it started on the way."""
    command = [
        str(Path(sys.executable).with_name("viewcopy")),
        "grade", "--course", str(course), "--jobs", "2", "--quiet",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen: dict[int, psutil.Process] = {}
    deadline = time.monotonic() + 120
    while True:
        assert process.poll() is None, "it finished before it could be killed"
        assert time.monotonic() < deadline, "it never got two hand-ins graded"
        now = descendants(process.pid)
        seen.update((p.pid, p) for p in now)
        if len(graded(course)) >= 2 and any(_is_kernel(p) for p in now):
            return process, list(seen.values())
        time.sleep(0.05)


def _is_kernel(process: psutil.Process) -> bool:
    """A kernel started fresh, or one forked from a worker's template into its sandbox (the
    template's command line, as the template's grandchild)."""
    try:
        command = " ".join(process.cmdline())
        if "viewcopy.sandbox.kernel_template" in command:
            return "viewcopy.sandbox.kernel_template" in " ".join(
                process.parent().parent().cmdline()
            )
        return "ipykernel_launcher" in command
    except psutil.Error:
        return False


def survivors(started: list[psutil.Process], course: Path, within_s: float) -> list[str]:
    """What is still running `within_s` after the kill, of the processes seen started and of any
    naming the course (a kernel that started after the last look)."""
    deadline = time.monotonic() + within_s
    while True:
        named = [p for p in psutil.process_iter(["cmdline"]) if str(course) in _line(p)]
        alive = [p for p in {*started, *named} if _running(p)]
        if not alive or time.monotonic() > deadline:
            return [_line(p) for p in alive]
        time.sleep(0.1)


def _line(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def _running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.course
@pytest.mark.sandbox
def test_a_killed_grader_leaves_nothing_running_and_the_next_run_grades_only_what_is_missing(
    sandboxed, the_class, plain, tmp_path
):
    course = course_of(the_class, tmp_path / "course", HAND_INS)
    process, started = grade_until_some_are_done(course)
    process.kill()  # the command alone, not its group: its workers must see to themselves
    process.wait()
    assert len(started) >= 3  # two workers and a kernel at least
    assert survivors(started, course, within_s=2) == []
    done = graded(course)

    run = GradingRun(Course.at(course), ASSIGNMENT)
    outcomes = {o.student_id: o.status for o in grade(run, progress=False)}
    assert outcomes == {s: SKIPPED if s in done else GRADED for s in HAND_INS}
    assert GRADED in outcomes.values()  # some were in flight or waiting
    makers = {str(p.pid) for p in started}  # the links to its kernels' sockets: swept
    links = LINKS.glob(f"{LINK_PREFIX}*")
    assert [str(link) for link in links if link.name.split("-")[2] in makers] == []
    assert {s: t for s, t in graded(course).items() if s in done} == done  # not regraded
    ours, theirs = read_grades(course), read_grades(plain)
    assert {s: ours[s] for s in HAND_INS} == {s: theirs[s] for s in HAND_INS}


# --- Ctrl-C from a terminal -----------------------------------------------------------------


@pytest.fixture(scope="module")
def regraded(hostile, tmp_path_factory):
    """A copy of the graded hostile corpus (conftest's `hostile`), with only the honest hand-ins
    and the dead kernel's: (course folder, outcomes by student)."""
    folder, _, outcomes, _, _ = hostile
    return regraded_copy(folder, tmp_path_factory.mktemp("regrade") / "course"), outcomes


def start_grading_and_wait_for_the_worker(folder: Path) -> subprocess.Popen:
    """`viewcopy grade` on the honest students, one worker, once it has started the first."""
    command = [
        str(Path(sys.executable).with_name("viewcopy")),
        "grade", "--course", str(folder), "--force", "--jobs", "1", "--quiet",
        "--student", "honest_*",
    ]  # fmt: skip
    log = Course.at(folder).grade_logs(ASSIGNMENT) / "worker-0.log"
    log.unlink(missing_ok=True)
    process = started_from_a_terminal(command)
    deadline = time.monotonic() + 60
    while "Sanitizing" not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline, "the worker never started grading"
        time.sleep(0.2)
    return process


@contextlib.contextmanager
def a_slow_hand_in(folder: Path, student_id: str, seconds: int = 30) -> Iterator[None]:
    """The student's hand-in with a last cell that sleeps `seconds`, so it is still in flight
    when a test's signals arrive (a hand-in grades in well under a second), as it was after."""
    path = Course.at(folder).hand_in(student_id, ASSIGNMENT) / NOTEBOOK
    handed_in = path.read_bytes()
    notebook = nbformat.reads(handed_in.decode("utf-8"), as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(f"import time\ntime.sleep({seconds})"))
    nbformat.write(notebook, path)
    try:
        yield
    finally:
        path.write_bytes(handed_in)


def recorded(folder: Path) -> dict[str, str]:
    with (Course.at(folder).grade_logs(ASSIGNMENT) / "record.csv").open() as f:
        return {row["student_id"]: row["status"] for row in csv.DictReader(f)}


@pytest.mark.course
@pytest.mark.sandbox
def test_ctrl_c_finishes_the_submission_in_flight_and_starts_no_other(regraded):
    folder, _ = regraded
    before = grades(folder, HONEST)
    process = start_grading_and_wait_for_the_worker(folder)
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 130, output
    assert "finishing the submissions in flight" in output
    assert recorded(folder) == {"honest_perfect": GRADED, "honest_typical": "interrupted"}
    assert "1 graded, 0 failed, 1 interrupted" in output  # what it stopped, named
    assert "  honest_typical: interrupted: " in output
    assert grades(folder, HONEST) == before
    assert all(up_to_date(Course.at(folder), ASSIGNMENT, s) for s in HONEST)


@pytest.mark.course
@pytest.mark.sandbox
def test_a_second_ctrl_c_abandons_the_hand_in_in_flight_and_leaves_no_kernel(regraded):
    folder, _ = regraded
    with a_slow_hand_in(folder, "honest_perfect"):
        process = start_grading_and_wait_for_the_worker(folder)
        process.send_signal(signal.SIGINT)
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=60)
    assert process.returncode == 130, output
    assert recorded(folder) == {"honest_perfect": "interrupted", "honest_typical": "interrupted"}
    assert "0 graded, 0 failed, 2 interrupted" in output, output
    assert not up_to_date(Course.at(folder), ASSIGNMENT, "honest_perfect")  # the next run grades it
    leftovers = [
        p.info["cmdline"]
        for p in psutil.process_iter(["cmdline"])
        if str(folder) in " ".join(p.info["cmdline"] or ())
    ]
    assert leftovers == []
    run = GradingRun(Course.at(folder), ASSIGNMENT)
    (outcome,) = grade(run, pattern="honest_perfect", progress=False)
    assert outcome.status == GRADED


# --- killed outright, as a cluster's coordinator ----------------------------------------------
# conftest's `built` (the class's KEPT hand-ins and the dead kernel's) and `cluster` (Dask).


@pytest.mark.cluster
@pytest.mark.postgres
@pytest.mark.course
@pytest.mark.sandbox
def test_a_killed_coordinator_leaves_nothing_running_and_a_rerun_grades_only_what_is_missing(
    sandboxed, built, plain, cluster, tmp_path
):
    course = copy_of(built, tmp_path / "course")
    command = [
        str(BIN / "viewcopy"), "grade", "--course", str(course), "--cluster", cluster.address,
        "--limit", "120", "--quiet",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    autograded = course / "autograded"
    wait_for(
        lambda: any(autograded.glob(f"*/{ASSIGNMENT}")) or process.poll() is not None,
        "a first hand-in to be written",
    )
    assert process.poll() is None, "it stopped before it could be killed"
    started = psutil.Process(process.pid).children(recursive=True)
    process.kill()  # SIGKILL: its tasks in flight finish on their workers, and are dropped
    process.wait()
    time.sleep(2)
    assert [p for p in started if p.is_running() and p.status() != psutil.STATUS_ZOMBIE] == []
    done = graded(course)

    run = GradingRun(Course.at(course), ASSIGNMENT, limit_s=120, cluster=cluster.address)
    outcomes = grade(run, progress=False)
    assert {o.student_id: o.status for o in outcomes} == {
        **{s: SKIPPED if s in done else GRADED for s in KEPT},
        KILLS_KERNEL: FAILED,
    }
    assert {s: t for s, t in graded(course).items() if s in done} == done  # not written again
    assert_graded_as_plain(course, plain, [*KEPT, KILLS_KERNEL])
