"""What grades hand-ins for `viewcopy grade`, on this machine (`grade.LocalPool`) or on a Dask
cluster (`cluster.ClusterPool`): one protocol (`Pool`), the one loop that drives either
(`drain`: a first Ctrl-C starts nothing new and lets the hand-ins in flight finish, a second one
abandons them), and what a run asks of its pool (`GradingRun`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from viewcopy.course.folder import Course
from viewcopy.grading.record import INTERRUPTED, GradeError, HandInOutcome
from viewcopy.sandbox.limits import Limits

SANDBOXED = Limits()
"""The sandbox's default limits; a run with `sandbox=None` grades with the instructor's rights."""
STOPPED = "stopped by Ctrl-C before start"
ABANDONED = "abandoned by a second Ctrl-C"
DRAINING = "\nCtrl-C: finishing the submissions in flight; Ctrl-C again abandons them"
"""What a first Ctrl-C prints, once."""

Done = Callable[[HandInOutcome], None]
"""Where a pool reports each hand-in's outcome, once per hand-in."""


@dataclass(frozen=True)
class GradingRun:
    """What one `viewcopy grade` run asks: the course and assignment, the limits per hand-in and
    per cell in seconds (None: derived, grading.limits), the sandbox (None: none), the local
    workers (`jobs`, default grade.grading_workers), the Dask scheduler (`cluster`, None: grade
    here) and the devices every hand-in's hidden tests must run on."""

    course: Course
    assignment: str
    limit_s: float | None = None
    sandbox: Limits | None = SANDBOXED
    jobs: int | None = None
    cluster: str | None = None
    devices: tuple[str, ...] = ()
    cell_s: float | None = None

    @property
    def logs(self) -> Path:
        """Where the run's record and nbgrader's log per hand-in go."""
        return self.course.grade_logs(self.assignment)


class Pool(Protocol):
    """Grades hand-ins a few at a time and reports each one's outcome."""

    slots: int
    """How many hand-ins it grades at once (the progress bar says so)."""

    def step(self, queue: deque[str], done: Done) -> None:
        """Start what it can from `queue` (popping each), report what finished, enforce its
        limits; return within about half a second. PoolLost when it cannot go on."""

    def in_flight(self) -> list[str]:
        """The students whose hand-ins it is grading now."""

    def stop_starting(self) -> None:
        """A first Ctrl-C: start nothing new, not even what was handed out and waits."""

    def abandon(self, done: Done) -> None:
        """A second Ctrl-C: stop grading what is in flight, leave nothing of it half-written,
        and report each one `INTERRUPTED` (ABANDONED)."""

    def close(self) -> None:
        """Let its processes or connections go (after `step`s, or after `abandon`)."""


class PoolLost(Exception):
    """The pool lost what grades for it (`what`: a cluster's scheduler, or all its workers): each
    hand-in in flight or queued is interrupted (`reason`), and the run stops with a GradeError
    that says how many were written, names those that were not, and says what to do now."""

    def __init__(self, what: str, reason: str, what_now: str):
        super().__init__(what)
        self.what, self.reason, self.what_now = what, reason, what_now


def drain(pool: Pool, students: Sequence[str], done: Done) -> None:
    """Grade `students` on `pool`, each reported once to `done`. A first Ctrl-C starts nothing
    new and lets the hand-ins in flight finish (KeyboardInterrupt once they have), a second one
    abandons them (at once)."""
    queue = deque(students)
    draining = False
    while queue or pool.in_flight():
        try:
            pool.step(queue, done)
        except KeyboardInterrupt:
            if draining:
                pool.abandon(done)
                raise
            draining = True
            pool.stop_starting()
            for student_id in queue:
                done(HandInOutcome(student_id, INTERRUPTED, reason=STOPPED))
            queue.clear()
            print(DRAINING, flush=True)
        except PoolLost as lost:
            stranded = [*pool.in_flight(), *queue]
            for student_id in stranded:
                done(HandInOutcome(student_id, INTERRUPTED, reason=lost.reason))
            raise GradeError(
                f"lost {lost.what}: {len(students) - len(stranded)} of {len(students)} hand-ins "
                f"were written, each whole (gradebook rows and autograded folder); not graded: "
                f"{', '.join(stranded)} (interrupted); {lost.what_now}"
            ) from None
    if draining:
        raise KeyboardInterrupt
