"""The one drain loop both pools run (grading.pool.drain), on a pool that grades nothing: each
hand-in reported once, a first Ctrl-C lets what is in flight finish and says so once, a second
abandons it, and a lost pool names how many were written."""

from __future__ import annotations

import os
from collections import deque

import pytest

from viewcopy.grading.grade import grading_workers
from viewcopy.grading.pool import ABANDONED, DRAINING, STOPPED, PoolLost, drain
from viewcopy.grading.record import (
    FAILED,
    GRADED,
    INTERRUPTED,
    SKIPPED,
    GradeError,
    HandInOutcome,
    outcomes_summary,
)


class Scripted:
    """A pool of one slot whose hand-ins each take three steps (started, running, graded), and
    that raises what `script` says at a step (KeyboardInterrupt, PoolLost)."""

    slots = 1

    def __init__(self, script: dict[int, BaseException]):
        self.script, self.steps = script, 0
        self.running: str | None = None
        self.since = 0
        self.stopped = self.abandoned = False

    def step(self, queue: deque[str], done) -> None:
        self.steps += 1
        if self.running is None and queue and not self.stopped:
            self.running, self.since = queue.popleft(), self.steps
        elif self.running is not None and self.steps - self.since == 2:
            done(HandInOutcome(self.running, GRADED))
            self.running = None
        if (raised := self.script.pop(self.steps, None)) is not None:
            raise raised

    def in_flight(self) -> list[str]:
        return [self.running] if self.running else []

    def stop_starting(self) -> None:
        self.stopped = True

    def abandon(self, done) -> None:
        self.abandoned = True
        done(HandInOutcome(self.running, INTERRUPTED, reason=ABANDONED))

    def close(self) -> None:
        pass


def run(pool: Scripted, students: list[str]) -> list[HandInOutcome]:
    outcomes: list[HandInOutcome] = []
    drain(pool, students, outcomes.append)
    return outcomes


def test_every_hand_in_is_reported_once():
    outcomes = run(Scripted({}), ["a", "b", "c"])
    assert [(o.student_id, o.status) for o in outcomes] == [(s, GRADED) for s in "abc"]


def test_a_first_ctrl_c_finishes_what_is_in_flight_starts_nothing_and_says_so_once(capsys):
    pool = Scripted({1: KeyboardInterrupt(), 2: KeyboardInterrupt()})
    outcomes: list[HandInOutcome] = []
    with pytest.raises(KeyboardInterrupt):
        drain(pool, ["a", "b", "c"], outcomes.append)
    assert pool.stopped and pool.abandoned
    assert [(o.student_id, o.status, o.reason) for o in outcomes] == [
        ("b", INTERRUPTED, STOPPED),
        ("c", INTERRUPTED, STOPPED),
        ("a", INTERRUPTED, ABANDONED),
    ]
    assert capsys.readouterr().out.count(DRAINING.strip()) == 1


def test_after_a_first_ctrl_c_the_hand_in_in_flight_finishes_and_the_run_stops(capsys):
    pool = Scripted({1: KeyboardInterrupt()})
    outcomes: list[HandInOutcome] = []
    with pytest.raises(KeyboardInterrupt):
        drain(pool, ["a", "b"], outcomes.append)
    assert [(o.student_id, o.status) for o in outcomes] == [("b", INTERRUPTED), ("a", GRADED)]
    assert not pool.abandoned
    assert capsys.readouterr().out.count(DRAINING.strip()) == 1


def test_a_lost_pool_interrupts_what_is_left_and_says_how_many_were_written():
    lost = PoolLost("the scheduler at tcp://x:1", "the scheduler was lost", "start it again")
    outcomes: list[HandInOutcome] = []
    with pytest.raises(GradeError) as raised:
        drain(Scripted({5: lost}), ["a", "b", "c"], outcomes.append)
    assert [(o.student_id, o.status) for o in outcomes] == [
        ("a", GRADED),
        ("b", INTERRUPTED),
        ("c", INTERRUPTED),
    ]
    assert {o.reason for o in outcomes[1:]} == {"the scheduler was lost"}
    assert str(raised.value).startswith("lost the scheduler at tcp://x:1: 1 of 3 hand-ins were")
    assert str(raised.value).endswith("; start it again")


def test_a_course_that_runs_a_lock_service_is_refused_by_the_cluster_before_it_connects(tmp_path):
    from viewcopy.course.folder import Course
    from viewcopy.grading.cluster import ClusterPool
    from viewcopy.grading.pool import GradingRun

    (tmp_path / "nbgrader_config.py").write_text(
        "c = get_config()\nc.LockService.data_dir = '/srv/locks'\n"
    )
    run = GradingRun(Course.at(tmp_path), "view_or_copy", cluster="tcp://127.0.0.1:9")
    with pytest.raises(GradeError, match=r"LockService\.data_dir.*here, without --cluster"):
        ClusterPool(run, print)


def test_by_default_a_worker_grades_at_least_four_hand_ins_and_jobs_is_taken_as_asked(monkeypatch):
    """A worker's start costs what four warm hand-ins do (grade.HAND_INS_PER_WORKER): by default
    one per core and per four hand-ins; --jobs as asked, never more workers than hand-ins."""
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert [grading_workers(None, n) for n in (0, 1, 4, 5, 8, 9, 31, 32, 33, 500)] == [
        1, 1, 1, 2, 2, 3, 8, 8, 8, 8,
    ]  # fmt: skip
    assert [grading_workers(3, n) for n in (1, 2, 3, 4, 500)] == [1, 2, 3, 3, 3]


def test_the_summary_counts_and_names_every_hand_in_not_graded():
    outcomes = [
        HandInOutcome("a", GRADED),
        HandInOutcome("b", INTERRUPTED, reason=STOPPED),
        HandInOutcome("c", FAILED, reason="the kernel died"),
        HandInOutcome("d", SKIPPED, reason="already graded (--force regrades)"),
    ]
    lines = outcomes_summary(outcomes).splitlines()
    assert lines[0] == "1 graded, 1 failed, 1 interrupted, 1 skipped"
    assert lines[1:] == [f"  b: interrupted: {STOPPED}", "  c: failed: the kernel died"]
    graded_only = outcomes_summary([HandInOutcome("a", GRADED)])
    assert graded_only == "1 graded, 0 failed, 0 skipped"  # as before: no interrupted, no word
