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
from collections.abc import Callable, Sequence
from pathlib import Path

from viewcopy.course.assignment import course_config, gradebook_url, submission_folder
from viewcopy.course.autograde_rows import record_autograde
from viewcopy.course.gradebook_rows import AssignmentNotInGradebook, export_rows
from viewcopy.grading.record import (
    FAILED,
    GRADED,
    INTERRUPTED,
    GradeError,
    HandInOutcome,
    discard_partial,
    publish,
    staged_folder,
)
from viewcopy.grading.remote import grade_hand_in, inspect_worker
from viewcopy.grading.task import (
    STOPPED,
    CourseParcel,
    GradedParcel,
    HandInParcel,
    pack,
    unpack,
)
from viewcopy.grading.worker import gradebook_url as waiting_url
from viewcopy.plugins.sandbox import Limits

CONNECT_S = 30
"""How long to wait for the scheduler, and then for a first worker."""
GPU = "GPU"
"""The worker resource that marks a GPU worker (`dask worker ... --resources GPU=1`)."""


class ClusterPool:
    """Sends hand-ins to a Dask scheduler's workers and writes what comes back."""

    def __init__(
        self,
        course: Path,
        assignment: str,
        address: str,
        limit_s: float,
        logs: Path,
        sandbox: Limits | None,
        devices: tuple[str, ...],
        say: Callable[[str], None],
    ):
        self.course, self.assignment, self.address = course, assignment, address
        self.limit_s, self.logs, self.devices = limit_s, logs, devices
        self.config = course_config(course)
        _refuse_lock_service(self.config)
        self.url = waiting_url(gradebook_url(course))
        try:
            rows = export_rows(self.url, _course_id(self.config), assignment)
        except AssignmentNotInGradebook as exc:
            raise GradeError(str(exc)) from None
        self.rows = rows
        logging.getLogger("distributed").setLevel(logging.CRITICAL)
        self.client = _connect(address)
        try:
            self.slots = self._check_workers(sandbox, say)
            parcel = CourseParcel.of(course, assignment, rows, sandbox)
            self.parcel = self.client.scatter(parcel, broadcast=True, hash=False)
        except BaseException:
            self.close()
            raise
        self.stop = f"viewcopy-stop-{uuid.uuid4().hex}"
        self.resources = {GPU: 1} if "cuda" in devices else None

    def _check_workers(self, sandbox: Limits | None, say: Callable[[str], None]) -> int:
        """Every worker can grade as asked (versions, sandbox); a GPU worker when cuda is asked
        for. GradeError, before anything is sent, otherwise. Returns the threads to fill."""
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
        say(f"cluster {self.address}: {len(workers)} workers ({gpus} with GPU); {isolation}")
        return sum(info.get("nthreads", 1) for info in workers.values())

    def run(self, students: Sequence[str], done: Callable[[HandInOutcome], None]) -> None:
        """Grade `students`; a first Ctrl-C starts nothing new and lets the tasks in flight
        finish, a second one abandons them (nothing of theirs is written)."""
        from distributed import Event

        queue, pending = deque(students), {}
        draining = False
        while queue or pending:
            try:
                self._submit(queue, pending)
                for future in self._finished(pending):
                    done(self._outcome(future, pending.pop(future)))
            except KeyboardInterrupt:
                if draining:
                    self.client.cancel(list(pending))
                    for student_id in pending.values():
                        done(_interrupted(student_id, "abandoned by a second Ctrl-C"))
                    raise
                draining = True
                Event(self.stop, client=self.client).set()
                for student_id in queue:
                    done(_interrupted(student_id, STOPPED))
                queue.clear()
                print(
                    "\nCtrl-C: finishing the submissions in flight; Ctrl-C again abandons them",
                    flush=True,
                )
            except _SchedulerLost:
                for student_id in [*pending.values(), *queue]:
                    done(_interrupted(student_id, "the Dask scheduler was lost"))
                graded = len(students) - len(pending) - len(queue)
                raise GradeError(
                    f"lost the Dask scheduler at {self.address}: {graded} of {len(students)} "
                    "hand-ins were written, each whole (gradebook rows and autograded folder); "
                    "start the scheduler again and rerun the same command: it grades only what "
                    "is missing"
                ) from None
        if draining:
            raise KeyboardInterrupt

    def _submit(self, queue: deque, pending: dict) -> None:
        """Keep about two tasks per worker thread in flight: hand-ins are read as they go."""
        while queue and len(pending) < 2 * self.slots + 2:
            student_id = queue.popleft()
            folder = submission_folder(self.course, student_id, self.assignment)
            hand_in = HandInParcel(student_id, pack(folder), self.devices, self.limit_s)
            future = self.client.submit(
                grade_hand_in,
                self.parcel,
                hand_in,
                self.stop,
                key=f"grade-{student_id}-{uuid.uuid4().hex[:8]}",
                pure=False,
                resources=self.resources,
            )
            pending[future] = student_id

    def _finished(self, pending: dict) -> list:
        from concurrent.futures import CancelledError

        from distributed import wait

        try:
            return list(wait(list(pending), timeout=0.5, return_when="FIRST_COMPLETED").done)
        except TimeoutError:
            return []
        except CancelledError:  # only the lost scheduler cancels them while we wait
            raise _SchedulerLost from None

    def _outcome(self, future, student_id: str) -> HandInOutcome:
        from concurrent.futures import CancelledError

        from distributed import KilledWorker

        try:
            returned: GradedParcel = future.result()
        except CancelledError:
            raise _SchedulerLost from None
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
        """What nbgrader autograde writes, from what came back: the old folder removed, the rows,
        then the folder."""
        import nbformat

        graded = returned.graded
        student_id = graded.student_id
        devices = "+".join(graded.devices)
        (self.logs / f"{student_id}.log").write_text(graded.log, encoding="utf-8")
        submitted = submission_folder(self.course, student_id, self.assignment)
        stamp = submitted / "timestamp.txt"
        notebooks = {
            nb.name: nbformat.reads(returned.files[f"{nb.name}.ipynb"][1].decode(), as_version=4)
            for nb in self.rows.notebooks
            if graded.success and f"{nb.name}.ipynb" in returned.files
        }
        discard_partial(self.course, self.assignment, student_id)
        try:
            record_autograde(
                self.url,
                self.config,
                self.assignment,
                student_id,
                stamp.read_text().strip() if stamp.is_file() else None,
                {p.stem for p in submitted.glob("*.ipynb")},
                notebooks,
            )
        except Exception as exc:
            reason = f"graded, but the gradebook could not be written: {exc!r}"
            return HandInOutcome(
                student_id, FAILED, graded.seconds, reason, devices, returned.worker
            )
        if not graded.success:
            return HandInOutcome(
                student_id, FAILED, graded.seconds, graded.reason, devices, returned.worker
            )
        unpack(returned.files, staged_folder(self.course, self.assignment, student_id))
        publish(self.course, self.assignment, student_id)
        return HandInOutcome(student_id, GRADED, graded.seconds, "", devices, returned.worker)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close(timeout=5)


class _SchedulerLost(Exception):
    """The client lost the scheduler: its tasks are cancelled."""


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


def _course_id(config) -> str:
    return config.get("CourseDirectory", {}).get("course_id") or "default_course"


def _versions(versions: dict[str, str]) -> str:
    return ", ".join(f"{name} {v}" for name, v in sorted(versions.items()))


def _refuse_lock_service(config) -> None:
    """The lock service's records and key stay on the instructor's machine: a course that runs
    one is graded locally."""
    if config.get("LockService", {}).get("data_dir"):
        raise GradeError(
            "this course judges locks against its lock service's records (LockService.data_dir), "
            "which never leave this machine: grade it here, without --cluster"
        )
