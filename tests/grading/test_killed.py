"""`viewcopy grade` killed outright (SIGKILL: the OOM killer, `kill -9`, a batch job at its time
limit) while it grades: nothing it started outlives it, and the next run, without --force, grades
exactly what was not finished, to the scores plain `nbgrader autograde` gives (conftest's `plain`).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from support.sandboxing import sandbox_or_skip
from support.the_class import course_of

from viewcopy.course.assignment import ASSIGNMENT, NOTEBOOK, read_grades
from viewcopy.grading.grade import GRADED, SKIPPED, grade

pytestmark = [pytest.mark.course, pytest.mark.sandbox]

sandbox_or_skip()

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
    try:
        return "ipykernel_launcher" in " ".join(process.cmdline())
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


def test_a_killed_grader_leaves_nothing_running_and_the_next_run_grades_only_what_is_missing(
    the_class, plain, tmp_path
):
    course = course_of(the_class, tmp_path / "course", HAND_INS)
    process, started = grade_until_some_are_done(course)
    process.kill()  # the command alone, not its group: its workers must see to themselves
    process.wait()
    assert len(started) >= 3  # two workers and a kernel at least
    assert survivors(started, course, within_s=2) == []
    done = graded(course)

    outcomes = {o.student_id: o.status for o in grade(course, ASSIGNMENT, progress=False)}
    assert outcomes == {s: SKIPPED if s in done else GRADED for s in HAND_INS}
    assert GRADED in outcomes.values()  # some were in flight or waiting
    assert {s: t for s, t in graded(course).items() if s in done} == done  # not regraded
    ours, theirs = read_grades(course), read_grades(plain)
    assert {s: ours[s] for s in HAND_INS} == {s: theirs[s] for s in HAND_INS}
