"""`viewcopy grade`: nbgrader's autograde for a whole class, in parallel, with progress.

Each worker process (viewcopy.grading.worker) pays nbgrader's start-up once and then grades
one student after another through nbgrader's own API, so gradebook rows and autograded notebooks are
what `nbgrader autograde` makes. The parent hands out students, enforces a wall-clock limit per
submission and gives the workers a limit per cell (both derived from the master's run unless set:
viewcopy.grading.limits); a hang or a kernel killed by the student's code fails that student only.
On Ctrl-C it lets the submissions in flight finish before it stops (a second Ctrl-C abandons
them). Killed outright (SIGKILL, out of memory), it takes its workers and their kernels with it,
and the next run grades what was in flight: a hand-in reaches autograded/ only whole. With a
cluster, viewcopy.grading.cluster takes the pool's place: the same protocol and drain loop
(viewcopy.grading.pool), the same outcomes, record and bar.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import deque
from collections.abc import Callable
from multiprocessing.connection import wait
from pathlib import Path

from viewcopy.course.assignment import CourseSettingError
from viewcopy.course.check import CourseNotReady, course_problems
from viewcopy.course.folder import Course
from viewcopy.course.settings import course_settings
from viewcopy.engine.devices import available_devices
from viewcopy.grading.limits import (
    GradingLimits,
    grading_limits,
    past_limit,
)
from viewcopy.grading.pool import (
    ABANDONED,
    Done,
    GradingRun,
    Pool,
    drain,
)
from viewcopy.grading.record import (
    FAILED,
    GRADED,
    INTERRUPTED,
    NOT_GRADED,
    SKIPPED,
    GradeError,
    HandInOutcome,
    discard_partial,
    in_flight_when_stopped,
    record_path,
    write_record,
)
from viewcopy.grading.worker import (
    STOP,
    Graded,
    kill_tree,
    serve,
    start_fork_server,
    worker_context,
)
from viewcopy.sandbox import kernel_connection, warm_kernels
from viewcopy.sandbox.bubblewrap import bwrap_problem, describe
from viewcopy.sandbox.cgroups import Cgroups
from viewcopy.sandbox.limits import Limits

LOCAL = "local"


HAND_INS_PER_WORKER = 4
"""A grading worker's start (nbgrader, torch and its kernel template: about 7 s of CPU here) costs
what four warm hand-ins do, so by default a worker is started only for each four hand-ins: a
second worker for five hand-ins saved 3 s of 15 and cost 7 s of CPU (docs/instructors.md)."""


def pool_size(jobs: int | None, count: int) -> int:
    """How many processes work at once: `jobs` (default: one per core), at most `count`."""
    return max(1, min(jobs or os.cpu_count() or 1, count))


def grading_workers(jobs: int | None, count: int) -> int:
    """How many workers grade `count` hand-ins: `jobs`, or by default one per core and per
    HAND_INS_PER_WORKER hand-ins; at most `count`."""
    return pool_size(jobs or min(os.cpu_count() or 1, -(-count // HAND_INS_PER_WORKER)), count)


def up_to_date(course: Course, assignment: str, student_id: str) -> bool:
    """nbgrader's rule: graded already, and the submission is not newer than that grading. An
    autograded folder is only ever a whole grading (worker.grade_one), and a hand-in whose
    grading a crash interrupted is graded again."""
    if not course.graded(student_id, assignment).is_dir():
        return False
    if in_flight_when_stopped(course, assignment, student_id):
        return False
    new, old = course.submitted_at(student_id, assignment), course.graded_at(student_id, assignment)
    return not (new is not None and old is not None and new > old)


class Worker:
    """A grading process and the student it is grading, if any."""

    def __init__(
        self, course: Path, assignment: str, log: Path, limits: Limits | None, cell_s: int
    ):
        context = worker_context()
        self.connection, theirs = context.Pipe()
        self.process = context.Process(
            target=serve,
            args=(theirs, str(course), assignment, str(log), limits, cell_s, dict(os.environ)),
            daemon=True,
        )
        self.process.start()
        theirs.close()
        self.log = log
        self.ready = False
        self.student_id: str | None = None
        self.since = 0.0

    def give(self, student_id: str) -> None:
        self.connection.send(student_id)
        self.student_id, self.since = student_id, time.monotonic()

    def ask_to_stop(self) -> None:
        with contextlib.suppress(OSError):
            self.connection.send(STOP)

    def join(self) -> None:
        self.process.join(timeout=30)
        if self.process.is_alive():
            kill_tree(self.process.pid)

    def kill(self) -> None:
        kill_tree(self.process.pid)
        self.process.join(timeout=10)
        self.connection.close()


class LocalPool:
    """The pool (grading.pool.Pool) on this machine: hands students to worker processes; reports
    one HandInOutcome per student, whatever each one does."""

    def __init__(self, run: GradingRun, jobs: int, limits: GradingLimits):
        self.run, self.limits = run, limits
        self.slots = jobs
        self.workers = [self._spawn(i) for i in range(jobs)]

    def _spawn(self, index: int) -> Worker:
        run = self.run
        log = run.logs / f"worker-{index}.log"
        return Worker(run.course.root, run.assignment, log, run.sandbox, self.limits.cell.seconds)

    def step(self, queue: deque[str], done: Done) -> None:
        self._dispatch(queue)
        self._collect(done)
        self._enforce_limit(done)

    def in_flight(self) -> list[str]:
        return [w.student_id for w in self.workers if w.student_id]

    def stop_starting(self) -> None:
        """Nothing waits in a worker: what has not started is still in the queue."""

    def _dispatch(self, queue: deque) -> None:
        for worker in self.workers:
            if worker.ready and worker.student_id is None and queue:
                worker.give(queue.popleft())

    def _collect(self, done: Done) -> None:
        by_connection = {w.connection: w for w in self.workers}
        for ready in wait(list(by_connection), timeout=0.5):
            worker = by_connection[ready]
            try:
                message = worker.connection.recv()
            except (EOFError, OSError):
                if not worker.ready:
                    raise GradeError(_startup_failure(worker.log)) from None
                self._replace(worker, done, "the grading process died")
                continue
            if message == "ready":
                worker.ready = True
            elif isinstance(message, Graded):
                self._record(message)
                status = GRADED if message.success else FAILED
                devices = "+".join(message.devices)
                done(
                    HandInOutcome(
                        message.student_id,
                        status,
                        message.seconds,
                        message.reason,
                        devices,
                        LOCAL,
                        kernels=message.kernels,
                    )
                )
                worker.student_id = None

    def _record(self, graded: Graded) -> None:
        (self.run.logs / f"{graded.student_id}.log").write_text(graded.log, encoding="utf-8")

    def _enforce_limit(self, done: Done) -> None:
        now, limit = time.monotonic(), self.limits.hand_in
        for worker in self.workers:
            if worker.student_id and now - worker.since > limit.seconds:
                self._replace(worker, done, past_limit(limit))

    def _replace(self, worker: Worker, done: Done, reason: str) -> None:
        student_id, seconds = worker.student_id, time.monotonic() - worker.since
        worker.kill()
        index = self.workers.index(worker)
        self.workers[index] = self._spawn(index)
        if student_id:
            discard_partial(self.run.course, self.run.assignment, student_id)
            done(HandInOutcome(student_id, FAILED, seconds, reason))

    def abandon(self, done: Done) -> None:
        for worker in self.workers:
            if worker.student_id:
                discard_partial(self.run.course, self.run.assignment, worker.student_id)
                done(HandInOutcome(worker.student_id, INTERRUPTED, reason=ABANDONED))
                worker.student_id = None
            worker.kill()

    def close(self) -> None:
        for worker in self.workers:
            worker.ask_to_stop()
        for worker in self.workers:
            worker.join()


def _startup_failure(log: Path) -> str:
    tail = log.read_text(errors="replace").strip().splitlines()[-12:] if log.is_file() else []
    return "a grading process could not start nbgrader in this course:\n" + "\n".join(tail)


def grade(
    run: GradingRun,
    *,
    pattern: str = "*",
    force: bool = False,
    progress: bool = True,
    say: Callable[[str], None] = print,
) -> list[HandInOutcome]:
    """Autograde every submission of the run's assignment whose student matches the shell-style
    `pattern` (those graded already only with `force`): one outcome per student.

    With the run's `sandbox` (the default) every kernel runs in bubblewrap under those limits;
    None grades with the instructor's rights, as plain `nbgrader autograde` does. With its
    `cluster` (a Dask scheduler's address) each hand-in is one task on its workers, and this
    process alone writes the gradebook and autograded/. Its `devices` (cpu, cuda) are those every
    hand-in's hidden tests must run on: nothing is graded where they are missing. Its `limit_s`
    (per hand-in) and `cell_s` (per cell; else the course's Execute.timeout) are derived from
    the master's run where None (viewcopy.grading.limits).
    """
    if not run.cluster:
        start_fork_server()
    _check_course(run.course, say)
    todo, outcomes = _to_grade(run.course, run.assignment, pattern, force)
    run.logs.mkdir(parents=True, exist_ok=True)
    try:
        if todo:
            _grade_all(run, todo, outcomes, progress, say)
    finally:
        write_record(record_path(run.course, run.assignment), outcomes)
        Cgroups.sweep()
        warm_kernels.sweep()
        kernel_connection.sweep()
    return sorted(outcomes, key=lambda o: o.student_id)


def _to_grade(
    course: Course, assignment: str, pattern: str, force: bool
) -> tuple[list[str], list[HandInOutcome]]:
    """The students to grade, and an outcome for each one skipped as already graded; GradeError
    for no hand-in, or a course `viewcopy course check` finds a problem in."""
    try:
        students = course.hand_ins(assignment, pattern)
    except FileNotFoundError:
        raise GradeError(
            f"{course.root} has no submitted/ folder: collect the submissions first"
        ) from None
    if not students:
        raise GradeError(f"no submissions of {assignment} match {pattern!r} in {course.submitted}")
    if problems := course_problems(course, assignment):
        raise GradeError(str(CourseNotReady(course.root, problems)))
    todo = [s for s in students if force or not up_to_date(course, assignment, s)]
    skipped = [
        HandInOutcome(s, SKIPPED, reason="already graded (--force regrades)")
        for s in students
        if s not in todo
    ]
    return todo, skipped


def _grade_all(
    run: GradingRun,
    todo: list[str],
    outcomes: list[HandInOutcome],
    progress: bool,
    say: Callable[[str], None],
) -> None:
    """Grade `todo` on the run's pool, each outcome appended to `outcomes` as it comes, with a
    progress bar counting the hand-ins not graded (failed, interrupted)."""
    pool = open_pool(run, len(todo), say)
    bar = _progress_bar(len(todo), pool.slots, progress)

    def done(outcome: HandInOutcome) -> None:
        outcomes.append(outcome)
        counts = {s: sum(o.status == s for o in outcomes) for s in NOT_GRADED}
        bar.set_postfix_str(", ".join(f"{n} {s}" for s, n in counts.items() if n), refresh=False)
        bar.update(1)

    try:
        drain(pool, todo, done)
    finally:
        pool.close()
        bar.close()


def _check_course(course: Course, say: Callable[[str], None]) -> None:
    """GradeError, before anything runs, for a folder that is not a course or a course setting
    the package cannot use (`grade` then runs `viewcopy course check`'s, once it has hand-ins);
    a warning when instructors would see hand-ins unsanitized."""
    if not course.config_file.is_file():
        raise GradeError(f"{course.root} has no nbgrader_config.py: run in the course folder")
    from viewcopy.plugins.sanitize import unsanitized_views  # nbgrader: only when grading

    config = course.config
    try:
        course_settings(config)
    except CourseSettingError as exc:
        raise GradeError(str(exc)) from None
    if (warning := unsanitized_views(config)) is not None:
        say(warning)


def open_pool(run: GradingRun, count: int, say: Callable[[str], None]) -> Pool:
    """The pool for `count` hand-ins: the cluster's when the run names one, else this machine's;
    GradeError, before anything is graded, when it cannot grade as asked."""
    if run.cluster:
        from viewcopy.grading.cluster import ClusterPool

        return ClusterPool(run, say)
    devices = available_devices()
    missing = [d for d in run.devices if d not in devices]
    if missing:
        raise GradeError(
            f"--devices asks for {', '.join(missing)}, which this machine does not have: grade "
            "on a cluster with such a worker (--cluster), or leave it out of --devices"
        )
    isolation = _isolation(run.sandbox)
    limits = grading_limits(
        run.course,
        run.assignment,
        hand_in_s=run.limit_s,
        cell_s=run.cell_s,
        sandbox=run.sandbox,
        cuda="cuda" in devices,
    )
    started = warm_kernels.how_kernels_start(run.sandbox, devices, run.course.config)
    say(f"{isolation}; {limits.describe()}; {started}")
    return LocalPool(run, grading_workers(run.jobs, count), limits)


def _isolation(sandbox: Limits | None) -> str:
    """The line that says how student code runs; GradeError when the sandbox cannot work here."""
    if sandbox is None:
        return (
            "no sandbox: student code runs with your rights and can read source/ and "
            "rewrite gradebook.db (--no-sandbox)"
        )
    problem = bwrap_problem()
    if problem:
        raise GradeError(
            f"cannot sandbox the kernels: {problem}. Install it, or pass --no-sandbox to grade "
            "with your own rights (student code could then read source/ and the gradebook)."
        )
    return describe(sandbox)


def _progress_bar(total: int, jobs: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc=f"grading ({jobs} worker{'s' if jobs != 1 else ''})",
        unit="student",
        disable=not enabled,
        smoothing=0.1,
    )
