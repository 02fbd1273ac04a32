"""The worker's side of `viewcopy grade --cluster`: one hand-in per Dask task, graded with
nbgrader's own API in a private course folder that holds only what travelled (the course's config,
the assignment's master folder, a gradebook with the assignment's rows and this hand-in), and
handed back as files. It never sees, and never writes, the instructor's gradebook or course.

A worker process grades one hand-in at a time (nbgrader's autograde changes the process's
environment while it runs); start workers with `--nthreads 1` and as many as the machine has cores.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from viewcopy.course.assignment import LAB_IMPORTS, LAB_MEASURED
from viewcopy.course.folder import Course
from viewcopy.course.gradebook_rows import import_rows
from viewcopy.engine.devices import available_devices
from viewcopy.grading.limits import past_limit
from viewcopy.grading.pool import STOPPED
from viewcopy.grading.task import CourseParcel, GradedParcel, HandInParcel, pack, unpack
from viewcopy.grading.worker import Graded, failure_reason, kill_tree, load_api
from viewcopy.sandbox import warm_kernels
from viewcopy.sandbox.bubblewrap import bwrap_problem, describe

_ONE_AT_A_TIME = threading.Lock()
_WORKSPACES: dict[str, Workspace] = {}


@contextlib.contextmanager
def _inside(folder: Path):
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


class Workspace:
    """A private course folder on this worker, and nbgrader's API over it."""

    def __init__(self, parcel: CourseParcel, base: str):
        self.parcel = parcel
        tools = str(Path(sys.executable).parent)  # nbgrader calls `alembic` by name
        if tools not in os.environ["PATH"].split(os.pathsep):
            os.environ["PATH"] = os.pathsep.join([tools, os.environ["PATH"]])
        os.environ.pop("NBGRADER_EXECUTION", None)
        self.course = Course(Path(tempfile.mkdtemp(prefix="viewcopy-course-", dir=base)))
        self.course.config_file.write_bytes(parcel.config)
        unpack(parcel.source, self.course.source / parcel.assignment)
        self.template = self.course.root / "assignment.db"
        import_rows(f"sqlite:///{self.template}", parcel.rows)
        self.gradebook = self.course.gradebook_file
        with _inside(self.course.root):
            if parcel.sandbox is not None:
                warm_kernels.start(
                    parcel.sandbox,
                    available_devices(),
                    self.course.config,
                    LAB_IMPORTS,
                    LAB_MEASURED,
                )
            self.api = load_api(
                self.course,
                parcel.sandbox,
                db_url=f"sqlite:///{self.gradebook}",
                cell_s=parcel.cell_s,
            )

    def grade(self, hand_in: HandInParcel, worker: str) -> GradedParcel:
        """Autograde one hand-in here; its autograded folder's files when it succeeds."""
        assignment, student_id = self.parcel.assignment, hand_in.student_id
        devices = available_devices()
        missing = [d for d in hand_in.devices if d not in devices]
        if missing:
            reason = (
                f"worker {worker} has no {', '.join(missing)} device (torch there sees "
                f"{', '.join(devices)}): it must be graded on {', '.join(hand_in.devices)}, "
                "not without it; start GPU workers only where CUDA works"
            )
            refused = Graded(student_id, False, 0.0, reason, "", devices)
            return GradedParcel(refused, {}, worker, ran=False)
        for folder in (self.course.submitted, self.course.autograded):
            shutil.rmtree(folder, ignore_errors=True)
        unpack(hand_in.files, self.course.hand_in(student_id, assignment))
        shutil.copy(self.template, self.gradebook)
        started = time.perf_counter()
        with _inside(self.course.root), _Watchdog(hand_in.limit.seconds) as watchdog:
            result = self.api.autograde(assignment, student_id, force=True, create=True)
        seconds = time.perf_counter() - started
        log = result.get("log", "") + result.get("error", "")
        success = result["success"] and not watchdog.fired
        if watchdog.fired:
            reason = past_limit(hand_in.limit)
        else:
            reason = "" if success else failure_reason(log)
        files = pack(self.course.graded(student_id, assignment)) if success else {}
        kernels = tuple(warm_kernels.counts().values())
        graded = Graded(student_id, success, seconds, reason, log, devices, kernels)
        return GradedParcel(graded, files, worker)

    def remove(self) -> None:
        shutil.rmtree(self.course.root, ignore_errors=True)


class _Watchdog:
    """Kills the kernels this process starts once `limit_s` has passed: nbgrader then fails the
    hand-in as a dead kernel, and the worker goes on with the next one."""

    def __init__(self, limit_s: float):
        self.limit_s, self.fired = limit_s, False

    def __enter__(self):
        self.before = {p.pid for p in _children()}
        self.timer = threading.Timer(self.limit_s, self._fire)
        self.timer.daemon = True
        self.timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self.timer.cancel()

    def _fire(self) -> None:
        self.fired = True
        for child in _children():
            if child.pid not in self.before and _session_leader(child.pid):
                kill_tree(child.pid)


def _children():
    import psutil

    return psutil.Process().children(recursive=True)


def _session_leader(pid: int) -> bool:
    """Kernels start in sessions of their own; nothing else this process starts does."""
    try:
        return os.getsid(pid) == pid
    except OSError:
        return False


def grade_hand_in(course: CourseParcel, hand_in: HandInParcel, stop: str) -> GradedParcel:
    """The Dask task: grade one hand-in on this worker, unless the run asked to stop first
    (the Dask Event `stop`, set by a first Ctrl-C)."""
    from distributed import Event, get_worker

    worker = get_worker()
    with _ONE_AT_A_TIME:
        if Event(stop).is_set():
            nothing = Graded(hand_in.student_id, False, 0.0, STOPPED, "")
            return GradedParcel(nothing, {}, worker.address, ran=False)
        return _workspace(course, worker.local_directory).grade(hand_in, worker.address)


def _workspace(course: CourseParcel, base: str) -> Workspace:
    """This process's workspace for the course, made on its first hand-in in the worker's own
    folder (which Dask removes with the worker); an older course's is removed."""
    if course.key not in _WORKSPACES:
        for old in _WORKSPACES.values():
            old.remove()
        _WORKSPACES.clear()
        _WORKSPACES[course.key] = Workspace(course, base)
    return _WORKSPACES[course.key]


def inspect_worker(sandboxed: bool, limits) -> dict:
    """What the coordinator asks every worker before it sends work: can it sandbox (and
    under which limits), which versions it runs."""
    from importlib.metadata import version

    problem = bwrap_problem() if sandboxed else None
    return {
        "sandbox": problem,
        "describe": describe(limits) if sandboxed and problem is None else "",
        "versions": {name: version(name) for name in ("viewcopy", "nbgrader")},
    }
