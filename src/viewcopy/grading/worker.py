"""One grading process: loads nbgrader and the course config once, then autogrades one student
at a time with nbgrader's own API (the call formgrader makes), for as long as it is given work.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import logging
import multiprocessing
import os
import re
import signal
import sys
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

from viewcopy.course.assignment import LAB_IMPORTS, LAB_MEASURED, waiting_url
from viewcopy.course.folder import Course
from viewcopy.engine.devices import available_devices
from viewcopy.grading.record import begin, discard_partial, in_flight, publish
from viewcopy.sandbox import warm_kernels
from viewcopy.sandbox.limits import Limits

STOP = None
"""Sent instead of a student id: the worker exits."""

FRIENDLY = {
    "DeadKernelError": "the kernel died while running the notebook (the code exited or crashed it)",
    "CellTimeoutError": "a cell ran past Execute.timeout and the kernel did not answer",
    "UnresponsiveKernelError": "the kernel stopped answering and could not be interrupted",
    "OperationalError": "the gradebook could not be written",
}
EXCEPTION_LINE = re.compile(r"^(?:[\w.]+\.)?(\w+(?:Error|Exception|Exit))\b:?(.*)$")
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
COLLECT_S = 1.0
"""How long a worker that kills its own tree waits to collect it before it ends."""
WATCH_S = 0.5
FORK_SERVER = "viewcopy.grading.fork_server"
"""What the fork server imports before it forks workers (worker_context)."""


@dataclass(frozen=True)
class Graded:
    """What a worker reports for one student: nbgrader's verdict, its reason and its log."""

    student_id: str
    success: bool
    seconds: float
    reason: str
    log: str
    devices: tuple[str, ...] = ()
    """The devices the grading process had: the hidden tests ran on each."""
    kernels: tuple[int, int] = (0, 0)
    """How many of its kernels started warm (forked) and fresh."""


def failure_reason(text: str) -> str:
    """The first exception a failed autograde logged, said plainly."""
    found = []
    for line in text.splitlines():
        match = EXCEPTION_LINE.match(line.strip())
        if match and match.group(1) != "NbGraderException":
            found.append((match.group(1), line.strip()))
    if not found:
        return "nbgrader could not grade it (see its log)"
    name, line = found[0]
    return f"{FRIENDLY[name]} ({line})" if name in FRIENDLY else line


def kill_tree(pid: int) -> None:
    """Kill a process and everything it started (kernels run in sessions of their own). This
    process itself is killed last, once what it started has ended and it has collected them:
    what its killed children leave comes to it (a subreaper's), not to the machine's init,
    which may collect late; a sandbox's first process does not end until its kernel is
    collected, and stayed seconds after its grader was killed."""
    import psutil

    try:
        parent = psutil.Process(pid)
        processes = parent.children(recursive=True)
    except psutil.NoSuchProcess:
        return
    itself = pid == os.getpid()
    if itself and sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1)
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()
    if itself:
        _collect_children(COLLECT_S)
    with contextlib.suppress(psutil.NoSuchProcess):
        parent.kill()
    psutil.wait_procs([*processes, parent], timeout=10)


def _collect_children(within_s: float) -> None:
    """Collect this process's ended children, those that came to it included, until it has none
    or `within_s` have passed."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return
        time.sleep(0.005)


class _CheckedSchemas:
    """`jsonschema` as nbgrader's metadata validator uses it, each schema checked only once.

    `jsonschema.validate` re-checks the schema itself on every call; nbgrader calls it for every
    cell, twice per hand-in: 0.3 s of a 4.5 s grading. The cells are validated exactly as before.
    """

    def __init__(self):
        import jsonschema

        self._jsonschema = jsonschema
        self._validators: dict[int, object] = {}

    def validate(self, instance, schema) -> None:
        if id(schema) not in self._validators:
            cls = self._jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
            self._validators[id(schema)] = cls(schema)
        self._validators[id(schema)].validate(instance)

    def __getattr__(self, name):
        return getattr(self._jsonschema, name)


def load_api(
    course: Course,
    limits: Limits | None,
    db_url: str | None = None,
    autograded: str | None = None,
    cell_s: int | None = None,
):
    """nbgrader's API over the course, configured as `nbgrader` run in `course` would be; with
    `limits`, every kernel runs in the sandbox under them; with `db_url`, on that gradebook; with
    `autograded`, writing autograded folders there (a folder relative to the course); with
    `cell_s`, each cell may run that many seconds (nbgrader's Execute.timeout). A hand grade of
    an answer unchanged since its last whole grading stays given (plugins.hand_grades). The
    graded notebook is validated once, after the last step (unless the course says otherwise)."""
    from nbgrader.apps import NbGraderAPI, NbGraderApp
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.nbgraderformat import common

    from viewcopy.plugins.hand_grades import keep_hand_grades

    common.jsonschema = _CheckedSchemas()

    app = NbGraderApp()
    app.initialize([])
    config = app.config
    coursedir = CourseDirectory(config=config)
    config.CourseDirectory.db_url = waiting_url(db_url or coursedir.db_url)
    if autograded is not None:
        config.CourseDirectory.autograded_directory = autograded
    if cell_s is not None:
        config.Execute.timeout = cell_s
    keep_hand_grades(config, graded_before=course.autograded)
    if not {"optimistic_validation"} & {*config.Exporter, *config.NotebookExporter}:
        config.NotebookExporter.optimistic_validation = True  # once after its steps, not each
    if limits is not None:
        from viewcopy.plugins.sandboxed_kernel import sandbox_config

        sandbox_config(config, course, limits)
    elif "kernel_manager_class" not in config.Execute:
        from viewcopy.sandbox.unix_sockets import UnixSocketKernelManager

        config.Execute.kernel_manager_class = UnixSocketKernelManager
    return NbGraderAPI(CourseDirectory(config=config), config=config)


def worker_context() -> multiprocessing.context.BaseContext:
    """How a grading process starts: on Linux forked from a fork server that has done every
    worker's imports once for this grader (viewcopy.grading.fork_server), elsewhere spawned."""
    if not sys.platform.startswith("linux"):
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([FORK_SERVER])
    return context


def start_fork_server() -> None:
    """Start the fork server now, where workers are forked from one: its imports (2 s) run while
    the grader checks the course and reads the master's run, before it asks for a worker."""
    if worker_context().get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


def leave_the_fork_server() -> None:
    """Close this worker's copy of its fork server's lifeline (multiprocessing gives one to every
    process the server forks): the server ends as soon as the grader does, not once every worker
    has, and its end gives each worker its parent-death signal at once, however busy the
    machine. A spawned worker holds none; a Python whose multiprocessing keeps it elsewhere keeps
    it, and the server then ends once the workers have (tests/grading/test_worker_start.py)."""
    from multiprocessing import forkserver

    server = forkserver._forkserver
    if getattr(server, "_forkserver_alive_fd", None) is not None:
        os.close(server._forkserver_alive_fd)
        server._forkserver_alive_fd = None


def die_with_parent() -> None:
    """End this process, and everything it started, when the grader that started it ends, even
    by SIGKILL (which lets that one stop nothing): Linux's parent-death signal (SIGTERM, sent when
    this process's parent ends: the grader's fork server, which ends at once with the grader), and
    everywhere a thread that watches for the grader's end, should the signal's handler wait on a
    call that does not return. Both kill this process's tree, its kernels' and sandboxes'
    processes first (a sandbox outlives a worker killed outright: bwrap's --die-with-parent binds
    the kernel to bwrap, not bwrap to the worker)."""
    import psutil

    signal.signal(signal.SIGTERM, lambda *_: kill_tree(os.getpid()))
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    try:
        grader = psutil.Process(multiprocessing.parent_process().pid)
    except psutil.NoSuchProcess:  # it ended before we asked
        kill_tree(os.getpid())
        return
    threading.Thread(target=_watch, args=(grader,), daemon=True).start()


def _watch(grader) -> None:
    """Kill this process's tree once `grader` (a psutil.Process: a reused pid is not it) ends."""
    while grader.is_running():
        time.sleep(WATCH_S)
    kill_tree(os.getpid())


def grade_one(api, course: Course, assignment: str, student_id: str) -> dict:
    """nbgrader's autograde of one hand-in, whole or not at all: marked in flight until the end
    (its last grading stays in autograded/ meanwhile), the new one is written in the in-flight
    folder and moved into autograded/ once nbgrader has finished with it and its gradebook rows
    (a failed one leaves nothing, as nbgrader's own autograde)."""
    begin(course, assignment, student_id)
    result = api.autograde(assignment, student_id, force=True, create=True)
    if result["success"]:
        publish(course, assignment, student_id)
    else:
        discard_partial(course, assignment, student_id)
    return result


def serve(
    connection: Connection,
    course: str,
    assignment: str,
    log: str,
    limits: Limits | None,
    cell_s: int | None = None,
    environment: dict[str, str] | None = None,
) -> None:
    """The worker's main loop: its own session (Ctrl-C in the terminal reaches the parent only),
    ended with its parent however that ends, its output and its kernels' in `log` (the terminal
    keeps the progress bar); each cell under `cell_s` seconds where given; the grader's
    `environment` as it was when it started the worker (a fork server keeps the one it began
    with)."""
    if environment is not None:
        os.environ.clear()
        os.environ.update(environment)
    os.setsid()
    leave_the_fork_server()
    die_with_parent()
    sink = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(sink, 1)
    os.dup2(sink, 2)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.chdir(course)
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
    os.environ.pop("NBGRADER_EXECUTION", None)
    devices = available_devices()
    course_folder = Course.at(course)
    if limits is not None:
        cold = warm_kernels.start(limits, devices, course_folder.config, LAB_IMPORTS, LAB_MEASURED)
        if cold is not None:
            print(f"warm kernels: {cold}; a fresh kernel for each hand-in", file=sys.stderr)
    staging = in_flight(course_folder, assignment).relative_to(course_folder.root)
    api = load_api(course_folder, limits, autograded=str(staging), cell_s=cell_s)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s [%(levelname)s] %(message)s"))
    api.log.addHandler(handler)
    importlib.import_module(LAB_MEASURED).measure_here(devices)  # while the template starts
    warm_kernels.wait_ready()
    gc.freeze()  # what it loaded stays: a full collection scans each hand-in's objects alone
    connection.send("ready")
    while (student_id := connection.recv()) is not STOP:
        started = time.perf_counter()
        result = grade_one(api, course_folder, assignment, student_id)
        log = result.get("log", "") + result.get("error", "")
        connection.send(
            Graded(
                student_id,
                result["success"],
                time.perf_counter() - started,
                "" if result["success"] else failure_reason(log),
                log,
                devices,
                tuple(warm_kernels.counts().values()),
            )
        )
    warm_kernels.stop()
    _exit_now()


def _exit_now() -> None:
    """End the worker once every hand-in it was given is written: its log flushed, without the
    interpreter's teardown (collecting what nbgrader and torch hold took 0.7 s of CPU a worker)."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(0)
