"""`viewcopy grade --cluster` on a real Dask cluster (a `dask scheduler` and `dask worker`
processes on 127.0.0.1), against plain `nbgrader autograde` on the same hand-ins: every gradebook
row and autograded notebook the same, with SQLite and with a real PostgreSQL server, a worker
killed mid-run, the scheduler lost, the coordinator killed, and the GPU lane.

Slow (a kernel per hand-in): one built course and one cluster serve the module.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import psutil
import pytest
from support.sandboxing import sandbox_or_skip
from support.servers import free_port
from support.the_class import course_of, everyone

from viewcopy.course.assignment import (
    ASSIGNMENT,
    NOTEBOOK,
    NOTEBOOK_ID,
    enrol,
    gradebook_url,
    read_grades,
    run_nbgrader,
)
from viewcopy.demo.synthetic import Student, hand_in
from viewcopy.five.grades import apply_grades, check_rows
from viewcopy.five.questions import five
from viewcopy.grading.grade import FAILED, GRADED, SKIPPED, grade
from viewcopy.grading.record import GradeError

pytestmark = [pytest.mark.cluster, pytest.mark.postgres, pytest.mark.course, pytest.mark.sandbox]

sandbox_or_skip()

BIN = Path(sys.executable).parent
KEPT = ("perfect", "typical", "never_locked")
KILLS_KERNEL = "exits_kernel"


@pytest.fixture(scope="module")
def built(the_class, tmp_path_factory):
    """Three of the session class's hand-ins and its dead kernel's, never graded: each test grades
    a copy, and compares with the session's plain `nbgrader autograde` (conftest's `plain`)."""
    return course_of(the_class, tmp_path_factory.mktemp("cluster") / "built", [*KEPT, KILLS_KERNEL])


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


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cluster = Cluster(tmp_path_factory.mktemp("dask"))
    try:
        cluster.add_worker("w0")
        cluster.add_worker("w1")
        yield cluster
    finally:
        cluster.close()


def in_background(work) -> tuple[threading.Thread, dict]:
    """Run `work` in a thread; its result or exception lands in the dict."""
    out: dict = {}

    def target():
        try:
            out["value"] = work()
        except BaseException as exc:  # noqa: BLE001 (handed to the test)
            out["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, out


def wait_for(condition, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def untouched_by_workers(course: Path) -> dict[str, bytes]:
    """What no worker may write: everything but the gradebook, autograded/ and the logs."""
    skip = ("autograded", "grade_logs", "gradebook.db")
    return {
        str(p.relative_to(course)): p.read_bytes()
        for p in sorted(course.rglob("*"))
        if p.is_file() and p.relative_to(course).parts[0] not in skip
    }


def test_a_cluster_grades_as_plain_nbgrader_even_with_a_worker_killed_mid_run(
    built, plain, cluster, tmp_path
):
    course = copy_of(built, tmp_path / "course")
    before = untouched_by_workers(course)
    thread, out = in_background(
        lambda: grade(course, ASSIGNMENT, cluster=cluster.address, limit_s=120, progress=False)
    )
    wait_for(lambda: cluster.busy(), "a worker to take a hand-in")
    time.sleep(3)  # it is grading now: its first kernel is running
    (victim,) = cluster.busy()[:1]
    killed = cluster.address_of(victim)
    cluster.kill(cluster.workers.pop(victim))
    thread.join(timeout=300)
    assert "error" not in out, out.get("error")
    outcomes = {o.student_id: o for o in out["value"]}
    assert {s: o.status for s, o in outcomes.items()} == {
        **dict.fromkeys(KEPT, GRADED),
        KILLS_KERNEL: FAILED,
    }
    assert "kernel died" in outcomes[KILLS_KERNEL].reason
    assert all(o.worker.startswith("tcp://") and o.worker != killed for o in outcomes.values())
    assert all(o.devices == "cpu" for o in outcomes.values())
    assert_graded_as_plain(course, plain, [*KEPT, KILLS_KERNEL])
    assert untouched_by_workers(course) == before
    cluster.add_worker("w2")  # the next tests have two workers again


def postgres_course(built: Path, folder: Path, url: str) -> Path:
    """The same course and hand-ins with its gradebook in PostgreSQL (nbgrader's db_url)."""
    folder.mkdir()
    config = (built / "nbgrader_config.py").read_text()
    (folder / "nbgrader_config.py").write_text(f"{config}\nc.CourseDirectory.db_url = {url!r}\n")
    shutil.copytree(built / "source", folder / "source")
    run_nbgrader(folder, "generate_assignment", ASSIGNMENT, "--create", "--force")
    students = everyone()
    enrol(folder, {s: students[s].profile for s in (*KEPT, KILLS_KERNEL)})
    shutil.copytree(built / "submitted", folder / "submitted")
    return folder


def test_a_postgresql_gradebook_is_graded_as_plain_nbgrader_on_the_cluster_and_locally(
    built, plain, cluster, postgres, tmp_path
):
    from viewcopy.report.build import build_report

    course = postgres_course(built, tmp_path / "pg", postgres.database("cluster"))
    assert gradebook_url(course).startswith("postgresql+psycopg2://")
    outcomes = grade(course, ASSIGNMENT, cluster=cluster.address, limit_s=120, progress=False)
    assert [o.status for o in outcomes] == [FAILED, GRADED, GRADED, GRADED]
    assert not (course / "gradebook.db").exists()
    assert_graded_as_plain(course, plain, [*KEPT, KILLS_KERNEL])
    assert dict(build_report(course).problems)[KILLS_KERNEL].startswith("grading failed")
    assert read_grades(course)["perfect"] == read_grades(plain)["perfect"]

    local = grade(course, ASSIGNMENT, pattern="[ep]*", force=True, jobs=2, progress=False)
    assert {o.student_id: o.worker for o in local} == dict.fromkeys(
        (KILLS_KERNEL, "perfect"), "local"
    )
    assert_graded_as_plain(course, plain, [*KEPT, KILLS_KERNEL])
    five_applied_in(course)


def five_applied_in(course: Path) -> None:
    """`viewcopy five --apply` writes a group's grade where the course keeps its gradebook."""
    from nbgrader.api import Gradebook

    (question,) = five(course, questions=[21])
    group = next(g for g in question.groups if "perfect" in g.students)
    row = {"question": "21", "group": group.group, "score": "2", "comment": "in PostgreSQL"}
    apply_grades(course, check_rows([row], [question]))
    with Gradebook(gradebook_url(course)) as gradebook:
        for student in KEPT:
            score = gradebook.find_grade("answer_21", NOTEBOOK_ID, ASSIGNMENT, student)
            comment = gradebook.find_comment("answer_21", NOTEBOOK_ID, ASSIGNMENT, student)
            given = (2, "in PostgreSQL") if student in group.students else (None, None)
            assert (score.manual_score, comment.manual_comment) == given, student


def test_cuda_without_a_gpu_worker_stops_with_one_line_and_grades_nothing(built, cluster, tmp_path):
    course = copy_of(built, tmp_path / "course")
    with pytest.raises(GradeError) as refused:
        grade(course, ASSIGNMENT, cluster=cluster.address, devices=("cpu", "cuda"), progress=False)
    message = str(refused.value)
    assert "\n" not in message
    assert "needs a GPU worker" in message and "--resources GPU=1" in message
    assert not (course / "autograded").exists()
    assert gradebook_rows(gradebook_url(course)) == {}


def test_devices_are_checked_before_anything_is_graded_locally_too(built, tmp_path):
    import torch

    from viewcopy.cli import main

    with pytest.raises(SystemExit):
        main(["grade", "--devices", "cpu,tpu"])
    if not torch.cuda.is_available():
        course = copy_of(built, tmp_path / "course")
        with pytest.raises(GradeError, match="cuda, which this machine does not have"):
            grade(course, ASSIGNMENT, devices=("cpu", "cuda"), progress=False)
        assert not (course / "autograded").exists()


def test_cuda_hand_ins_go_only_to_a_worker_declaring_a_gpu(built, cluster, tmp_path):
    import torch

    course = copy_of(built, tmp_path / "course")
    cluster.add_worker("gpu", "--resources", "GPU=1")
    gpu = cluster.address_of("gpu")
    outcomes = grade(
        course, ASSIGNMENT, cluster=cluster.address, devices=("cpu", "cuda"),
        pattern="perfect", progress=False,
    )  # fmt: skip
    (outcome,) = outcomes
    if torch.cuda.is_available():  # a GPU machine: graded there, on both devices
        assert (outcome.status, outcome.worker, outcome.devices) == (GRADED, gpu, "cpu+cuda")
    else:  # this worker only says it has a GPU: it refuses rather than grade on CPU alone
        assert outcome.status == FAILED
        assert f"worker {gpu} has no cuda device" in outcome.reason
        assert gradebook_rows(gradebook_url(course)) == {}
        assert not (course / "autograded").exists()


def written(course: Path) -> dict[str, int]:
    """Each autograded hand-in, with its notebook's modification time (ns)."""
    found = (course / "autograded").glob(f"*/{ASSIGNMENT}/{NOTEBOOK}")
    return {path.parents[1].name: path.stat().st_mtime_ns for path in found}


def test_a_killed_coordinator_leaves_nothing_running_and_a_rerun_grades_only_what_is_missing(
    built, plain, cluster, tmp_path
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
    done = written(course)

    outcomes = grade(course, ASSIGNMENT, cluster=cluster.address, limit_s=120, progress=False)
    assert {o.student_id: o.status for o in outcomes} == {
        **{s: SKIPPED if s in done else GRADED for s in KEPT},
        KILLS_KERNEL: FAILED,
    }
    assert {s: t for s, t in written(course).items() if s in done} == done  # not written again
    assert_graded_as_plain(course, plain, [*KEPT, KILLS_KERNEL])


def test_a_lost_scheduler_is_a_clear_error_and_a_rerun_grades_only_what_is_missing(
    built, plain, cluster, tmp_path
):
    course = copy_of(built, tmp_path / "course")
    endless = Student(
        "hangs", "an endless loop", {"classify": "while True:\n    pass\n"}, runs=False
    )
    hand_in(endless, course)
    pair = "[ph]*"  # perfect, graded in seconds; hangs, still running when the scheduler goes
    thread, out = in_background(
        lambda: grade(course, ASSIGNMENT, cluster=cluster.address, pattern=pair, progress=False)
    )
    perfect = course / "autograded" / "perfect"
    wait_for(perfect.is_dir, "perfect to be written")
    cluster.kill(cluster.scheduler)
    thread.join(timeout=120)
    assert isinstance(out.get("error"), GradeError), out
    assert "lost the Dask scheduler" in str(out["error"])
    assert "rerun the same command" in str(out["error"])
    assert sorted(p.name for p in (course / "autograded").iterdir()) == ["perfect"]
    assert_graded_as_plain(course, plain, ["perfect"])
    assert not any(k[0] == "hangs" for k in gradebook_rows(gradebook_url(course)))

    again = Cluster(tmp_path / "again")
    try:
        again.add_worker("w0")
        outcomes = grade(
            course, ASSIGNMENT, cluster=again.address, pattern=pair, limit_s=8, progress=False
        )
    finally:
        again.close()
    hangs, skipped = outcomes
    assert (skipped.student_id, skipped.status) == ("perfect", SKIPPED)
    assert (hangs.student_id, hangs.status) == ("hangs", FAILED)
    assert "8 s limit" in hangs.reason and 8 <= hangs.seconds < 40
    assert not (course / "autograded" / "hangs").exists()
    assert_graded_as_plain(course, plain, ["perfect"])
