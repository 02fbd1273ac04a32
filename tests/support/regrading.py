"""What the grading tests share to grade a course again and compare it: a copy of a course
holding only some hand-ins (of the hostile corpus: its honest students and its dead kernel), each
hand-in's grade cells, every gradebook row and autograded notebook compared with plain `nbgrader
autograde`'s (conftest's `plain`), a Dask cluster on loopback, and waiting for a condition.
Read by tests/grading/ (the local pool, the cluster) and by `viewcopy grade`'s own tests
(tests/commands/)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
from support.hostile_corpus import HONEST_COPIES
from support.servers import free_port

from viewcopy.course.assignment import ASSIGNMENT, NOTEBOOK, gradebook_url, read_grades

BIN = Path(sys.executable).parent
"""This environment's bin folder: `viewcopy`, `dask`."""
HONEST = tuple(HONEST_COPIES)
KILLS_KERNEL = "exits_kernel"
"""The hostile corpus's hand-in whose classify kills its kernel (and the class's of that name)."""
KEPT = ("perfect", "typical", "never_locked")
"""The class's hand-ins that the cluster tests grade, beside KILLS_KERNEL's (conftest's `built`)."""


def regraded_copy(graded: Path, to: Path) -> Path:
    """A copy of the graded hostile corpus with only the honest hand-ins and the dead kernel's,
    for tests that grade again."""
    shutil.copytree(graded, to, ignore=only_hand_ins_of(graded, {*HONEST, KILLS_KERNEL}))
    return to


def only_hand_ins_of(course: Path, kept: set[str]):
    """A copytree filter that leaves out every other student's submitted/ and autograded/ folder."""
    holders = {course / "submitted", course / "autograded"}

    def ignore(folder: str, names: list[str]) -> set[str]:
        return {n for n in names if n not in kept} if Path(folder) in holders else set()

    return ignore


def grades(course: Path, student_ids) -> dict[tuple[str, str], tuple[float | None, float]]:
    """(score, max) per student and cell; the score is None for a cell graded by hand."""
    every = read_grades(course)
    return {(s, cell): value for s in student_ids for cell, value in every[s].items()}


def copy_of(course: Path, to: Path) -> Path:
    shutil.copytree(course, to, ignore=shutil.ignore_patterns("autograded", "grade_logs"))
    return to


def gradebook_rows(url: str) -> dict:
    """Every submission row nbgrader keeps: timestamps, scores, flags, comments, penalties."""
    from nbgrader.api import Gradebook, SubmittedAssignment

    rows = {}
    with Gradebook(url) as gradebook:
        for submission in gradebook.db.query(SubmittedAssignment):
            student = submission.student.id
            rows[student, "timestamp"] = submission.timestamp
            for notebook in submission.notebooks:
                rows[student, notebook.name, "late"] = notebook.late_submission_penalty
                for g in notebook.grades:
                    rows[student, g.name, "grade"] = (
                        g.auto_score, g.manual_score, g.extra_credit, g.needs_manual_grade
                    )  # fmt: skip
                for c in notebook.comments:
                    rows[student, c.name, "comment"] = (c.auto_comment, c.manual_comment)
    return rows


def assert_graded_as_plain(course: Path, plain: Path, student_ids) -> None:
    ours, theirs = gradebook_rows(gradebook_url(course)), gradebook_rows(gradebook_url(plain))
    ours = {k: v for k, v in ours.items() if k[0] in student_ids}
    theirs = {k: v for k, v in theirs.items() if k[0] in student_ids}
    assert ours == theirs
    assert sum(v[0] or 0 for k, v in ours.items() if k[-1] == "grade") > 20
    for student_id in student_ids:
        mine = course / "autograded" / student_id / ASSIGNMENT
        other = plain / "autograded" / student_id / ASSIGNMENT
        assert mine.is_dir() == other.is_dir(), student_id
        if other.is_dir():
            assert sorted(p.name for p in mine.iterdir()) == sorted(p.name for p in other.iterdir())
            assert cells(mine / NOTEBOOK) == cells(other / NOTEBOOK)


def cells(path: Path) -> list:
    """Each cell's source and nbgrader metadata (outputs differ in the sandbox and in pandas'
    random style ids; their scores are compared in the gradebook)."""
    notebook = nbformat.read(path, as_version=4)
    return [(c.source, c.metadata.get("nbgrader")) for c in notebook.cells]


class Cluster:
    """A `dask scheduler` and its `dask worker` processes on 127.0.0.1, each in its own session."""

    def __init__(self, folder: Path):
        folder.mkdir(exist_ok=True)
        self.folder, self.workers = folder, {}
        self.address = f"tcp://127.0.0.1:{free_port()}"
        port = self.address.rsplit(":", 1)[1]
        self.scheduler = self._start(
            "scheduler", "dask", "scheduler", "--host", "127.0.0.1", "--port", port,
            "--no-dashboard",
        )  # fmt: skip
        from distributed import Client

        self.client = Client(self.address, timeout=60, set_as_default=False)

    def _start(self, name: str, *command: str) -> subprocess.Popen:
        log = (self.folder / f"{name}.log").open("w")
        command = (str(BIN / command[0]), *command[1:])
        return subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=self.folder
        )

    def add_worker(self, name: str, *options: str) -> None:
        """A worker with no course folder: it runs in an empty folder of its own."""
        here = self.folder / name
        here.mkdir()
        count = len(self.client.scheduler_info()["workers"])
        self.workers[name] = self._start(
            name, "dask", "worker", self.address, "--nthreads", "1", "--name", name,
            "--no-dashboard", "--local-directory", str(here), *options,
        )  # fmt: skip
        self.client.wait_for_workers(count + 1, timeout=120)

    def address_of(self, name: str) -> str:
        infos = self.client.scheduler_info()["workers"].items()
        return next(address for address, info in infos if info["name"] == name)

    def busy(self) -> list[str]:
        """Names of the workers with a task, read in one step on the scheduler (two client calls
        race a worker that a nanny restarts under a new address between them)."""

        def busy_names(dask_scheduler) -> list[str]:  # nested: pickled by value for the scheduler
            return sorted(str(w.name) for w in dask_scheduler.workers.values() if w.processing)

        return self.client.run_on_scheduler(busy_names)

    def kill(self, process: subprocess.Popen) -> None:
        """SIGKILL a process and its session (a worker's nanny, the worker and its kernels)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close(timeout=5)
        for process in [*self.workers.values(), self.scheduler]:
            self.kill(process)


def wait_for(condition, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)
