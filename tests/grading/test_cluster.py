"""`viewcopy grade --cluster` on a real Dask cluster (a `dask scheduler` and `dask worker`
processes on 127.0.0.1), against plain `nbgrader autograde` on the same hand-ins: every gradebook
row and autograded notebook the same, with SQLite and with a real PostgreSQL server, a worker
killed mid-run, the scheduler lost, and the GPU lane (the coordinator, `viewcopy grade --cluster`,
killed outright: tests/commands/test_viewcopy_grade.py).

Slow (a kernel per hand-in): one built course and one cluster serve the module.
"""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest
from support.regrading import (
    KEPT,
    KILLS_KERNEL,
    Cluster,
    assert_graded_as_plain,
    copy_of,
    gradebook_rows,
    wait_for,
)
from support.sandboxing import sandbox_or_skip
from support.the_class import everyone

from viewcopy.course.assignment import (
    ASSIGNMENT,
    NOTEBOOK_ID,
    enrol,
    gradebook_url,
    read_grades,
    run_nbgrader,
)
from viewcopy.course.folder import Course
from viewcopy.demo.synthetic import Student, hand_in
from viewcopy.five.grades import apply_grades, check_rows
from viewcopy.five.questions import five
from viewcopy.grading.grade import FAILED, GRADED, SKIPPED, grade
from viewcopy.grading.pool import GradingRun
from viewcopy.grading.record import GradeError

pytestmark = [pytest.mark.cluster, pytest.mark.postgres, pytest.mark.course, pytest.mark.sandbox]

sandbox_or_skip()


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
    run = GradingRun(Course.at(course), ASSIGNMENT, limit_s=120, cluster=cluster.address)
    thread, out = in_background(lambda: grade(run, progress=False))
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
    on_cluster = GradingRun(Course.at(course), ASSIGNMENT, limit_s=120, cluster=cluster.address)
    outcomes = grade(on_cluster, progress=False)
    assert [o.status for o in outcomes] == [FAILED, GRADED, GRADED, GRADED]
    assert not (course / "gradebook.db").exists()
    assert_graded_as_plain(course, plain, [*KEPT, KILLS_KERNEL])
    assert dict(build_report(course).problems)[KILLS_KERNEL].startswith("grading failed")
    assert read_grades(course)["perfect"] == read_grades(plain)["perfect"]

    here = GradingRun(Course.at(course), ASSIGNMENT, jobs=2)
    local = grade(here, pattern="[ep]*", force=True, progress=False)
    assert {o.student_id: o.worker for o in local} == dict.fromkeys(
        (KILLS_KERNEL, "perfect"), "local"
    )
    assert_graded_as_plain(course, plain, [*KEPT, KILLS_KERNEL])
    five_applied_in(course)


def five_applied_in(course: Path) -> None:
    """`viewcopy five --apply` writes a group's grade where the course keeps its gradebook."""
    from nbgrader.api import Gradebook

    (question,) = five(Course.at(course), questions=[21])
    group = next(g for g in question.groups if "perfect" in g.students)
    row = {"question": "21", "group": group.group, "score": "2", "comment": "in PostgreSQL"}
    apply_grades(Course.at(course), check_rows([row], [question]))
    with Gradebook(gradebook_url(course)) as gradebook:
        for student in KEPT:
            score = gradebook.find_grade("answer_21", NOTEBOOK_ID, ASSIGNMENT, student)
            comment = gradebook.find_comment("answer_21", NOTEBOOK_ID, ASSIGNMENT, student)
            given = (2, "in PostgreSQL") if student in group.students else (None, None)
            assert (score.manual_score, comment.manual_comment) == given, student


def test_cuda_without_a_gpu_worker_stops_with_one_line_and_grades_nothing(built, cluster, tmp_path):
    course = copy_of(built, tmp_path / "course")
    run = GradingRun(
        Course.at(course), ASSIGNMENT, cluster=cluster.address, devices=("cpu", "cuda")
    )
    with pytest.raises(GradeError) as refused:
        grade(run, progress=False)
    message = str(refused.value)
    assert "\n" not in message
    assert "needs a GPU worker" in message and "--resources GPU=1" in message
    assert not (course / "autograded").exists()
    assert gradebook_rows(gradebook_url(course)) == {}


def test_devices_are_checked_before_anything_is_graded_locally_too(built, tmp_path):
    import torch

    if not torch.cuda.is_available():
        course = copy_of(built, tmp_path / "course")
        run = GradingRun(Course.at(course), ASSIGNMENT, devices=("cpu", "cuda"))
        with pytest.raises(GradeError, match="cuda, which this machine does not have"):
            grade(run, progress=False)
        assert not (course / "autograded").exists()


def test_cuda_hand_ins_go_only_to_a_worker_declaring_a_gpu(built, cluster, tmp_path):
    import torch

    course = copy_of(built, tmp_path / "course")
    cluster.add_worker("gpu", "--resources", "GPU=1")
    gpu = cluster.address_of("gpu")
    run = GradingRun(
        Course.at(course), ASSIGNMENT, cluster=cluster.address, devices=("cpu", "cuda")
    )
    outcomes = grade(run, pattern="perfect", progress=False)
    (outcome,) = outcomes
    if torch.cuda.is_available():  # a GPU machine: graded there, on both devices
        assert (outcome.status, outcome.worker, outcome.devices) == (GRADED, gpu, "cpu+cuda")
    else:  # this worker only says it has a GPU: it refuses rather than grade on CPU alone
        assert outcome.status == FAILED
        assert f"worker {gpu} has no cuda device" in outcome.reason
        assert gradebook_rows(gradebook_url(course)) == {}
        assert not (course / "autograded").exists()


def test_a_lost_scheduler_is_a_clear_error_and_a_rerun_grades_only_what_is_missing(
    built, plain, cluster, tmp_path
):
    course = copy_of(built, tmp_path / "course")
    endless = Student(
        "hangs", "an endless loop", {"classify": "while True:\n    pass\n"}, runs=False
    )
    hand_in(endless, course)
    pair = "[ph]*"  # perfect, graded in seconds; hangs, still running when the scheduler goes
    run = GradingRun(Course.at(course), ASSIGNMENT, cluster=cluster.address)
    thread, out = in_background(lambda: grade(run, pattern=pair, progress=False))
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
        rerun = GradingRun(Course.at(course), ASSIGNMENT, limit_s=8, cluster=again.address)
        outcomes = grade(rerun, pattern=pair, progress=False)
    finally:
        again.close()
    hangs, skipped = outcomes
    assert (skipped.student_id, skipped.status) == ("perfect", SKIPPED)
    assert (hangs.student_id, hangs.status) == ("hangs", FAILED)
    assert "8 s limit" in hangs.reason and 8 <= hangs.seconds < 40
    assert not (course / "autograded" / "hangs").exists()
    assert_graded_as_plain(course, plain, ["perfect"])


def test_a_run_that_loses_every_worker_stops_and_names_what_it_did_not_grade(built, tmp_path):
    """The only worker killed while it grades a hand-in: the course sent to the workers is gone
    with it, so the run stops, says every worker was lost (not the scheduler, which still runs),
    names the hand-in as interrupted in its error and its record, and writes nothing of it."""
    from viewcopy.grading.record import INTERRUPTED, read_record, record_path

    course = copy_of(built, tmp_path / "course")
    endless = Student(
        "hangs", "an endless loop", {"classify": "while True:\n    pass\n"}, runs=False
    )
    hand_in(endless, course)
    alone = Cluster(tmp_path / "alone")
    try:
        alone.add_worker("only")
        run = GradingRun(Course.at(course), ASSIGNMENT, cluster=alone.address)
        thread, out = in_background(lambda: grade(run, pattern="hangs", progress=False))
        wait_for(lambda: alone.busy() == ["only"], "the worker to take hangs")
        time.sleep(3)  # it is grading now
        alone.kill(alone.workers.pop("only"))
        thread.join(timeout=120)
    finally:
        alone.close()
    assert isinstance(out.get("error"), GradeError), out
    said = str(out["error"])
    assert "lost every Dask worker" in said and "not graded: hangs (interrupted)" in said, said
    recorded = read_record(record_path(Course.at(course), ASSIGNMENT))
    assert recorded["hangs"].status == INTERRUPTED
    assert not (course / "autograded").exists()
    assert not any(k[0] == "hangs" for k in gradebook_rows(gradebook_url(course)))
