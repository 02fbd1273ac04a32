"""`viewcopy grade --cluster tcp://HOST:PORT`: each hand-in is one task on a Dask cluster, and
this process, the coordinator, is the only writer of the gradebook and `autograded/`.

The course's part (config, the assignment's master folder, its gradebook rows) goes to the
workers once; each task carries one hand-in's files and brings back its autograded folder's files
and nbgrader's verdict (viewcopy.grading.remote). The coordinator then writes what
`nbgrader autograde` would have written (viewcopy.course.autograde_rows) and puts the folder in
place: the old folder goes first, then the rows, and the new folder last, in one rename. A hand-in
without its autograded folder is ungraded, and the next run grades it, whenever the coordinator
was stopped (it starts no process of its own; a task it leaves running finishes on its worker and
is dropped). A worker lost mid-task is Dask's to retry elsewhere; only its final result is
written, so every hand-in is written once.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections import deque
from collections.abc import Callable

from viewcopy.course.assignment import waiting_url
from viewcopy.course.autograde_rows import record_autograde
from viewcopy.course.gradebook_rows import AssignmentNotInGradebook, AssignmentRows, export_rows
from viewcopy.course.settings import CourseSettings, course_settings
from viewcopy.grading.limits import grading_limits
from viewcopy.grading.pool import ABANDONED, STOPPED, Done, GradingRun, PoolLost
from viewcopy.grading.record import (
    FAILED,
    GRADED,
    INTERRUPTED,
    GradeError,
    HandInOutcome,
    begin,
    discard_partial,
    publish,
    staged_folder,
)
from viewcopy.grading.remote import grade_hand_in, inspect_worker
from viewcopy.grading.task import CourseParcel, GradedParcel, HandInParcel, pack, unpack
from viewcopy.plugins.hand_grades import keep_hand_grades
from viewcopy.sandbox.limits import Limits
from viewcopy.sandbox.warm_kernels import how_kernels_start

CONNECT_S = 30
"""How long to wait for the scheduler, and then for a first worker."""
GPU = "GPU"
"""The worker resource that marks a GPU worker (`dask worker ... --resources GPU=1`)."""


class ClusterPool:
    """The pool (grading.pool.Pool) on a Dask cluster: sends hand-ins to the scheduler's workers
    (`run.cluster`) and writes what comes back."""

    def __init__(self, run: GradingRun, say: Callable[[str], None]):
        self.course, self.assignment, self.address = run.course, run.assignment, run.cluster
        self.logs, self.devices = run.logs, run.devices
        self.config = self.course.config
        keep_hand_grades(self.config, graded_before=self.course.autograded)
        self.url, self.rows = self._gradebook_rows()
        self.pending: dict = {}
        """Each task in flight (a Dask future) -> its student."""
        self.stop = f"viewcopy-stop-{uuid.uuid4().hex}"
        self.resources = {GPU: 1} if "cuda" in self.devices else None
        logging.getLogger("distributed").setLevel(logging.CRITICAL)
        self.client = _connect(self.address)
        try:
            self._send_course(run, say)
        except BaseException:
            self.close()
            raise

    def _gradebook_rows(self) -> tuple[str, AssignmentRows]:
        """The gradebook's URL (waiting for its lock) and the assignment's rows every worker's
        private gradebook starts from; GradeError for a course the cluster cannot grade."""
        settings = course_settings(self.config)
        _refuse_lock_service(settings)
        url = waiting_url(self.course.gradebook_url)
        try:
            return url, export_rows(url, settings.course_id, self.assignment)
        except AssignmentNotInGradebook as exc:
            raise GradeError(str(exc)) from None

    def _send_course(self, run: GradingRun, say: Callable[[str], None]) -> None:
        """Check the workers, derive the limits, say how the cluster grades, and send every
        worker the course once (`self.parcel`)."""
        self.slots, isolation, gpus = self._check_workers(run.sandbox)
        self.limits = grading_limits(
            self.course,
            self.assignment,
            hand_in_s=run.limit_s,
            cell_s=run.cell_s,
            sandbox=run.sandbox,
            cuda=gpus > 0,
        )
        started = how_kernels_start(run.sandbox, ["cpu"], self.config)
        if gpus and run.sandbox is not None:
            started += f", except on the {gpus} with CUDA: a fresh one for each hand-in there"
        say(f"cluster {self.address}: {isolation}; {self.limits.describe()}; {started}")
        cell_s = self.limits.cell.seconds
        parcel = CourseParcel.of(self.course, self.assignment, self.rows, run.sandbox, cell_s)
        self.parcel = self.client.scatter(parcel, broadcast=True, hash=False)

    def _check_workers(self, sandbox: Limits | None) -> tuple[int, str, int]:
        """Every worker can grade as asked (versions, sandbox); a GPU worker when cuda is asked
        for. GradeError, before anything is sent, otherwise. Returns the threads to fill, what
        the workers are and how they isolate student code, and how many have a GPU (the limits
        then allow for a cold CUDA start)."""
        from importlib.metadata import version

        try:
            self.client.wait_for_workers(1, timeout=CONNECT_S)
        except TimeoutError:
            raise GradeError(
                f"no Dask worker joined the scheduler at {self.address} within {CONNECT_S} s: "
                f"start some (`dask worker {self.address} --nthreads 1`)"
            ) from None
        reports = self.client.run(inspect_worker, sandbox is not None, sandbox or Limits())
        ours = {name: version(name) for name in ("viewcopy", "nbgrader")}
        for worker, report in sorted(reports.items()):
            if report["versions"] != ours:
                raise GradeError(
                    f"worker {worker} runs {_versions(report['versions'])}, this machine "
                    f"{_versions(ours)}: install the same on both"
                )
            if report["sandbox"]:
                raise GradeError(
                    f"worker {worker} cannot sandbox the kernels: {report['sandbox']}. Install it "
                    "there, or pass --no-sandbox (student code then runs with the worker's rights)"
                )
        workers = self.client.scheduler_info()["workers"]
        if "cuda" in self.devices and not any(
            info.get("resources", {}).get(GPU, 0) >= 1 for info in workers.values()
        ):
            raise GradeError(
                f"--devices {','.join(self.devices)} needs a GPU worker and none of the "
                f"{len(workers)} workers of {self.address} has one: start one on a CUDA machine "
                f"with `dask worker {self.address} --nthreads 1 --resources GPU=1`; "
                "nothing was graded"
            )
        isolation = next(iter(reports.values()))["describe"] or (
            "no sandbox: student code runs with the workers' rights (--no-sandbox)"
        )
        gpus = sum(info.get("resources", {}).get(GPU, 0) >= 1 for info in workers.values())
        slots = sum(info.get("nthreads", 1) for info in workers.values())
        return slots, f"{len(workers)} workers ({gpus} with GPU); {isolation}", gpus

    def step(self, queue: deque[str], done: Done) -> None:
        self._submit(queue)
        for future in self._finished():
            done(self._outcome(future, self.pending.pop(future)))

    def in_flight(self) -> list[str]:
        return list(self.pending.values())

    def stop_starting(self) -> None:
        """The tasks waiting on workers stop before they begin (they come back `STOPPED`)."""
        from distributed import Event

        Event(self.stop, client=self.client).set()

    def abandon(self, done: Done) -> None:
        """Nothing of a cancelled task is written: the coordinator writes only what comes back."""
        self.client.cancel(list(self.pending))
        for student_id in self.pending.values():
            done(_interrupted(student_id, ABANDONED))

    def _submit(self, queue: deque[str]) -> None:
        """Keep about two tasks per worker thread in flight: hand-ins are read as they go."""
        while queue and len(self.pending) < 2 * self.slots + 2:
            student_id = queue.popleft()
            folder = self.course.hand_in(student_id, self.assignment)
            hand_in = HandInParcel(student_id, pack(folder), self.devices, self.limits.hand_in)
            future = self.client.submit(
                grade_hand_in,
                self.parcel,
                hand_in,
                self.stop,
                key=f"grade-{student_id}-{uuid.uuid4().hex[:8]}",
                pure=False,
                resources=self.resources,
            )
            self.pending[future] = student_id

    def _finished(self) -> list:
        from concurrent.futures import CancelledError

        from distributed import wait

        try:
            finished = wait(list(self.pending), timeout=0.5, return_when="FIRST_COMPLETED")
            return list(finished.done)
        except TimeoutError:
            return []
        except CancelledError:  # only the lost scheduler cancels them while we wait
            raise self._lost() from None

    def _outcome(self, future, student_id: str) -> HandInOutcome:
        from concurrent.futures import CancelledError

        from distributed import KilledWorker

        try:
            returned: GradedParcel = future.result()
        except CancelledError:
            raise self._lost() from None
        except KilledWorker as exc:
            return HandInOutcome(
                student_id,
                FAILED,
                reason=f"every worker that took it died ({exc}): a hand-in that takes its "
                "grader down, or workers short of memory; see the workers' logs",
            )
        except Exception as exc:
            return HandInOutcome(
                student_id, FAILED, reason=f"the worker could not grade it: {exc!r} (see its log)"
            )
        if not returned.ran:
            if returned.graded.reason == STOPPED:
                return _interrupted(student_id, STOPPED)
            return HandInOutcome(student_id, FAILED, reason=returned.graded.reason)
        return self._write(returned)

    def _write(self, returned: GradedParcel) -> HandInOutcome:
        """What nbgrader autograde writes, from what came back: the hand-in marked in flight, the
        rows, then the folder in place of its last grading."""
        import nbformat

        graded = returned.graded
        student_id = graded.student_id
        devices = "+".join(graded.devices)
        (self.logs / f"{student_id}.log").write_text(graded.log, encoding="utf-8")
        notebooks = {
            nb.name: nbformat.reads(returned.files[f"{nb.name}.ipynb"][1].decode(), as_version=4)
            for nb in self.rows.notebooks
            if graded.success and f"{nb.name}.ipynb" in returned.files
        }
        begin(self.course, self.assignment, student_id)
        try:
            record_autograde(
                self.url,
                self.config,
                self.assignment,
                student_id,
                self.course.submitted_stamp(student_id, self.assignment),
                {p.stem for p in self.course.hand_in(student_id, self.assignment).glob("*.ipynb")},
                notebooks,
            )
        except Exception as exc:
            discard_partial(self.course, self.assignment, student_id)
            reason = f"graded, but the gradebook could not be written: {exc!r}"
            return HandInOutcome(
                student_id, FAILED, graded.seconds, reason, devices, returned.worker
            )
        if not graded.success:
            discard_partial(self.course, self.assignment, student_id)
            return HandInOutcome(
                student_id, FAILED, graded.seconds, graded.reason, devices, returned.worker
            )
        unpack(returned.files, staged_folder(self.course, self.assignment, student_id))
        publish(self.course, self.assignment, student_id)
        return HandInOutcome(
            student_id, GRADED, graded.seconds, "", devices, returned.worker, kernels=graded.kernels
        )

    def _lost(self) -> PoolLost:
        """Its tasks were cancelled: the client lost the scheduler (it is reconnecting), or every
        worker died, and the course's parcel, which only they held, with them."""
        if self.client.status == "running":
            return PoolLost(
                f"every Dask worker of {self.address} (the course sent to them went with them)",
                "every Dask worker was lost",
                f"start workers again (`dask worker {self.address} --nthreads 1`) and rerun the "
                "same command: it grades only what is missing",
            )
        return PoolLost(
            f"the Dask scheduler at {self.address}",
            "the Dask scheduler was lost",
            "start the scheduler again and rerun the same command: it grades only what is missing",
        )

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close(timeout=5)


def _interrupted(student_id: str, reason: str) -> HandInOutcome:
    return HandInOutcome(student_id, INTERRUPTED, reason=reason)


def _connect(address: str):
    from distributed import Client

    started = time.monotonic()
    try:
        return Client(address, timeout=CONNECT_S)
    except (OSError, TimeoutError) as exc:
        raise GradeError(
            f"cannot reach a Dask scheduler at {address} within "
            f"{time.monotonic() - started:.0f} s ({exc}): start one with `dask scheduler` and "
            "pass its address (tcp://HOST:8786)"
        ) from None


def _versions(versions: dict[str, str]) -> str:
    return ", ".join(f"{name} {v}" for name, v in sorted(versions.items()))


def _refuse_lock_service(settings: CourseSettings) -> None:
    """The lock service's records and key stay on the instructor's machine: a course that runs
    one is graded locally."""
    if settings.lock.service_data is not None:
        raise GradeError(
            "this course judges locks against its lock service's records (LockService.data_dir), "
            "which never leave this machine: grade it here, without --cluster"
        )
