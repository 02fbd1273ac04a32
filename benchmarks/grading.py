"""Grading a class: plain `nbgrader autograde` against `viewcopy grade --jobs <cores>`, and each
against the floor, on the same N synthetic submissions, measured side by side in one run.

The floor is what no grader can avoid per submission: start a kernel, `import torch`, shut it down
(serially for nbgrader, which grades one at a time; `jobs` at once for viewcopy grade). viewcopy
grade is shown end to end and without its workers' one-time start (nbgrader, torch and the
grader's own measurement, paid once per worker whatever the class size).

Targets: speed-up of viewcopy grade over nbgrader >= 0.8 x cores; viewcopy grade's cost per
submission within 1.5x the floor at the same parallelism. The scores of both must be identical.

With --cluster it measures `viewcopy grade --cluster` instead, on the same N submissions: the
local pool of J workers against a local Dask cluster of J worker processes (target: the cluster
costs at most 1.15x the pool, end to end, the cluster's start included), one Dask worker against J
(target: speed-up >= 0.8 x J), and the coordinator's gradebook writes per second (the bound of the
throughput model in docs/cluster.md). The scores of all three must be identical.

Run: .venv/bin/python benchmarks/grading.py [--students N] [--jobs J] [--keep DIR] [--cluster]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from viewcopy.course.assignment import (
    ASSIGNMENT,
    build_course,
    mark_submitted,
    read_grades,
    run_nbgrader,
    submission_folder,
)
from viewcopy.demo.synthetic import synthetic_class, write_submission
from viewcopy.grading.grade import GRADED, grade

REPO = Path(__file__).resolve().parents[1]


def build_class(course: Path, n: int) -> list[str]:
    """A course with n submissions: the synthetic profiles, each run once, copied round-robin."""
    profiles = synthetic_class(REPO)
    chosen = [profiles[i % len(profiles)] for i in range(n)]
    students = [
        dataclasses.replace(p, student_id=f"s{i:03d}_{p.student_id}") for i, p in enumerate(chosen)
    ]
    build_course(REPO, course, {s.student_id: s.profile for s in students})
    templates = course.parent / "templates"
    for profile in profiles:
        write_submission(profile, course / "release" / ASSIGNMENT, templates / profile.student_id)
    for student, profile in zip(students, chosen, strict=True):
        folder = submission_folder(course, student.student_id)
        shutil.copytree(templates / profile.student_id, folder)
        mark_submitted(folder)
    return [s.student_id for s in students]


def floor_one(_: int) -> None:
    """One submission's unavoidable part: a kernel starts, imports torch, shuts down."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3", stderr=subprocess.DEVNULL)
    try:
        reply = client.execute_interactive("import torch", timeout=300)
        assert reply["content"]["status"] == "ok", reply
    finally:
        client.stop_channels()
        manager.shutdown_kernel()


def floor_seconds(n: int, jobs: int) -> float:
    """Wall time for n floors, `jobs` at a time."""
    started = time.perf_counter()
    with ProcessPoolExecutor(jobs) as pool:
        list(pool.map(floor_one, range(n)))
    return time.perf_counter() - started


def scores(course: Path, students: list[str]) -> dict[tuple[str, str], float | None]:
    every = read_grades(course)
    return {(s, cell): score for s in students for cell, (score, _) in every[s].items()}


def timed(work) -> tuple[float, object]:
    started = time.perf_counter()
    value = work()
    return time.perf_counter() - started, value


def main() -> int:
    cores = os.cpu_count() or 1
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=8 * cores)
    parser.add_argument("--jobs", type=int, default=cores)
    parser.add_argument("--keep", help="build the courses here and keep them")
    parser.add_argument("--cluster", action="store_true", help="the Dask cluster against the pool")
    args = parser.parse_args()
    if args.cluster:
        return cluster_main(args)
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
    root = Path(args.keep or tempfile.mkdtemp(prefix="grading-bench-"))
    try:
        ours = root / "viewcopy"
        print(f"building {args.students} submissions in {root} ...", flush=True)
        students = build_class(ours, args.students)
        plain = root / "nbgrader"
        shutil.copytree(ours, plain)

        n, jobs = len(students), args.jobs
        print("plain nbgrader autograde ...", flush=True)
        plain_s, _ = timed(lambda: run_nbgrader(plain, "autograde", ASSIGNMENT, "--force"))
        print(f"viewcopy grade --jobs {jobs} ...", flush=True)
        ours_s, outcomes = timed(
            lambda: grade(ours, ASSIGNMENT, jobs=jobs, force=True, progress=False, say=print)
        )
        print("floor: kernel start + import torch, serially and in parallel ...", flush=True)
        floor_serial = floor_seconds(n, 1)
        floor_parallel = floor_seconds(n, jobs)
        same = scores(plain, students) == scores(ours, students)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)

    graded = sum(o.status == GRADED for o in outcomes)
    steady = sum(o.seconds for o in outcomes) / jobs  # the workers' time on hand-ins only
    report(n, jobs, cores, plain_s, ours_s, steady, floor_serial, floor_parallel, graded, same)
    return 0


def report(
    n, jobs, cores, plain_s, ours_s, steady, floor_serial, floor_parallel, graded, same
) -> None:
    speedup, target = plain_s / ours_s, 0.8 * cores
    rows = [
        ("nbgrader autograde (serial)", plain_s, floor_serial),
        (f"viewcopy grade --jobs {jobs}", ours_s, floor_parallel),
        ("  the same, worker start excluded", steady, floor_parallel),
    ]
    print(f"\n{n} submissions, {cores} cores; {graded}/{n} graded by viewcopy grade")
    print(f"{'':<32}{'wall':>9}{'per sub':>10}{'floor/sub':>11}{'x floor':>9}")
    for name, wall, floor in rows:
        print(f"{name:<32}{wall:>8.1f}s{wall / n:>9.2f}s{floor / n:>10.2f}s{wall / floor:>8.2f}x")
    print(f"speed-up: {speedup:.2f}x (target >= {target:.1f}x: {verdict(speedup >= target)})")
    for label, wall in (("end to end", ours_s), ("worker start excluded", steady)):
        ratio = wall / floor_parallel
        met = verdict(ratio <= 1.5)
        print(f"viewcopy grade vs floor, {label}: {ratio:.2f}x (target <= 1.5x: {met})")
    print(f"scores identical to nbgrader autograde: {'yes' if same else 'NO'}")


def on_dask(course: Path, workers: int) -> tuple[float, list]:
    """Seconds for `viewcopy grade --cluster` on a fresh local cluster of `workers` processes,
    its start included, and the outcomes."""
    from distributed import LocalCluster

    started = time.perf_counter()
    with LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        outcomes = grade(
            course, ASSIGNMENT, cluster=cluster.scheduler_address, force=True, progress=False
        )
    return time.perf_counter() - started, outcomes


def write_rate(course: Path, students: list[str], root: Path) -> float:
    """Hand-ins per second the coordinator writes: nbgrader's rows for each autograded notebook,
    replayed into a copy of the gradebook, and the autograded folder put in place."""
    import nbformat

    from viewcopy.course.assignment import NOTEBOOK, course_config, submission_folder
    from viewcopy.course.autograde_rows import record_autograde
    from viewcopy.grading.task import pack, unpack

    replay = root / "replay"
    shutil.copytree(course, replay, ignore=shutil.ignore_patterns("autograded", "grade_logs"))
    config, url = course_config(replay), f"sqlite:///{replay / 'gradebook.db'}"
    graded = {
        s: pack(course / "autograded" / s / ASSIGNMENT)
        for s in students
        if (course / "autograded" / s / ASSIGNMENT).is_dir()
    }
    started = time.perf_counter()
    for student_id, files in graded.items():
        stamp = (submission_folder(replay, student_id) / "timestamp.txt").read_text().strip()
        notebook = nbformat.reads(files[NOTEBOOK][1].decode(), as_version=4)
        name = NOTEBOOK.removesuffix(".ipynb")
        record_autograde(url, config, ASSIGNMENT, student_id, stamp, {name}, {name: notebook})
        unpack(files, replay / "autograded" / student_id / ASSIGNMENT)
    return len(graded) / (time.perf_counter() - started)


def cluster_main(args) -> int:
    """The pool against the cluster, and one Dask worker against `jobs`."""
    root = Path(args.keep or tempfile.mkdtemp(prefix="grading-bench-"))
    jobs = args.jobs
    try:
        course = root / "course"
        print(f"building {args.students} submissions in {root} ...", flush=True)
        students = build_class(course, args.students)
        print(f"local pool, --jobs {jobs} ...", flush=True)
        pool_s, _ = timed(
            lambda: grade(course, ASSIGNMENT, jobs=jobs, force=True, progress=False, say=print)
        )
        pool_scores = scores(course, students)
        print(f"local Dask cluster, {jobs} workers ...", flush=True)
        many_s, outcomes = on_dask(course, jobs)
        same = scores(course, students) == pool_scores
        print("local Dask cluster, 1 worker ...", flush=True)
        one_s, _ = on_dask(course, 1)
        same = same and scores(course, students) == pool_scores
        rate = write_rate(course, students, root)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    n = len(students)
    graded = sum(o.status == GRADED for o in outcomes)
    per_hand_in = sum(o.seconds for o in outcomes) / max(graded, 1)
    print(f"\n{n} submissions, {os.cpu_count()} cores; {graded}/{n} graded on the cluster")
    for name, wall in (
        (f"local pool, {jobs} workers", pool_s),
        (f"Dask cluster, {jobs} workers", many_s),
        ("Dask cluster, 1 worker", one_s),
    ):
        print(f"{name:<28}{wall:>8.1f}s{wall / n:>8.2f}s per submission")
    cost, speedup = many_s / pool_s, one_s / many_s
    print(f"cluster vs pool: {cost:.2f}x (target <= 1.15x: {verdict(cost <= 1.15)})")
    target = 0.8 * jobs
    met = verdict(speedup >= target)
    print(f"{jobs} workers vs 1: {speedup:.2f}x (target >= {target:.1f}x: {met})")
    print(f"one hand-in on a worker: {per_hand_in:.2f}s (nbgrader's autograde, kernel included)")
    print(f"coordinator writes: {rate:.1f} hand-ins/s (gradebook rows and autograded folder)")
    print(f"scores identical across the three runs: {'yes' if same else 'NO'}")
    return 0


def verdict(met: bool) -> str:
    return "met" if met else "NOT met"


if __name__ == "__main__":
    sys.exit(main())
