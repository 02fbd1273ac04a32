"""The sandbox under load: warm forks and the hostile corpus's escapes, with every core busy and
two gradings at once. Not a timed test: it counts what held, and prints it.

1. Forks. Two processes at once each start a grading worker's kernel template and start K
   sandboxed kernels from it, as `viewcopy grade` does (SandboxedKernelManager), while a busy loop
   runs on every core. Each kernel runs a cell that checks it is inside its sandbox: its own uid,
   never root; its working copy the sandbox's tmpfs, not the host's folder; no host file under
   /tmp. Reported: forks that failed (kernels that started fresh instead) and kernels that found
   themselves outside.
2. Escapes. R rounds of `viewcopy grade --force` on two courses at once, each holding the hostile
   corpus's escape attempts (tests/support/hostile_corpus.py: rewrite the gradebook, read the
   hidden tests, delete the course around it, plant a setuid file in every folder it can write,
   search every process for the grader's secret, forge the grader's words in its log, signal
   everyone) beside an honest hand-in, the cores busy. A round held when: no grade reads 99, the
   honest grades are those of the first round, the course's files are byte for byte what they
   were, nothing planted is on the host, the secret planted in the grader's environment is in no
   output or log, and every forged line in the log reads as the kernel's.

Run: .venv/bin/python benchmarks/sandbox_stress.py [--forks 100] [--rounds 20] [--busy N] [--quick]
(--busy: busy loops beside, default one a core; --quick: 2 forks, 1 round, of the escapes only
forging the log, whose check needs it to run, and no busy loop unless --busy asks: in the test
suite the tests beside it are its load, and a loop would only take a core from them)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support import kernels  # noqa: E402
from support.hostile_corpus import FORGED, PLANTED, SECRET, attacks, digest  # noqa: E402

from viewcopy.course.assignment import ASSIGNMENT, LAB_IMPORTS, read_grades  # noqa: E402
from viewcopy.course.folder import Course, build_course  # noqa: E402
from viewcopy.demo.synthetic import Student, hand_in_class, synthetic_class  # noqa: E402
from viewcopy.grading.grade import grade  # noqa: E402
from viewcopy.grading.pool import GradingRun  # noqa: E402
from viewcopy.grading.worker import worker_context  # noqa: E402
from viewcopy.sandbox import Limits, bwrap_problem, warm_kernels  # noqa: E402

LIMITS = Limits(cpu_s=120, memory_bytes=2 * 2**30, processes=64, scratch_bytes=16 * 2**20)
ESCAPES = (
    "writes_gradebook", "reads_source", "deletes_around", "plants_on_host",
    "reads_grader_secrets", "forges_log", "signals_everyone",
)  # fmt: skip
"""The corpus's attacks on the grading machine (the rest attack the grade, not the machine)."""
QUICK_ESCAPES = ("forges_log",)
"""--quick's: the one escape a round's checks cannot pass without (the log must show it)."""
INSIDE = """
import json, os
copy, host_root = os.stat("."), os.stat("/")
print(json.dumps({"uid": os.getuid(), "copy_dev": copy.st_dev,
                  "tmp": sorted(os.listdir("/tmp"))[:5]}))
"""
HOST_TOPS = ("/tmp", "/run", "/var/tmp", "/dev/shm")


def busy(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


@contextlib.contextmanager
def busy_loops(count: int) -> Iterator[None]:
    """`count` busy loops in processes of their own while the block runs (none for 0)."""
    if count == 0:
        yield
        return
    with multiprocessing.Pool(count) as load:
        load.map_async(busy, [3600.0] * count)
        yield
        load.terminate()


def fork_lane(count: int, work: str) -> dict:
    """One grading worker's share: a template, then `count` kernels forked from it."""
    course = Path(work) / "course"
    copy = course / "autograded" / "student" / "lab"
    copy.mkdir(parents=True)
    (copy / "lab.ipynb").write_text("the submission")
    host_copy_dev = copy.stat().st_dev
    outside, errors = 0, []
    assert warm_kernels.start(LIMITS, ["cpu"], imports=LAB_IMPORTS) is None
    warm_kernels.wait_ready()
    warm_kernels.counts()
    try:
        for _ in range(count):
            try:
                with kernels.sandboxed_kernel(copy, course, LIMITS) as run:
                    seen = run(INSIDE)
                if seen["uid"] == 0 or seen["copy_dev"] == host_copy_dev:
                    outside += 1
            except Exception as exc:  # noqa: BLE001 (counted and shown, the run goes on)
                errors.append(repr(exc)[:200])
        return {**warm_kernels.counts(), "outside": outside, "errors": errors}
    finally:
        warm_kernels.stop()


def forks(total: int, busy_cores: int) -> dict:
    """`total` kernels, half in each of two workers at once, `busy_cores` busy loops beside."""
    work = Path(tempfile.mkdtemp(prefix="viewcopy-stress-"))
    try:
        with busy_loops(busy_cores), ProcessPoolExecutor(2, mp_context=worker_context()) as lanes:
            done = list(
                lanes.map(fork_lane, [total // 2, total - total // 2],
                          [str(work / "a"), str(work / "b")])
            )  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {
        "warm": sum(d["warm"] for d in done),
        "fresh": sum(d["fresh"] for d in done),
        "outside": sum(d["outside"] for d in done),
        "errors": [e for d in done for e in d["errors"]],
    }


def escape_course(course: Path, escape_ids: tuple[str, ...]) -> None:
    """A course of the escape attempts `escape_ids`, each in an otherwise perfect hand-in, and
    one honest one (perfect, never run: its grades are the same every round)."""
    base = {s.student_id: s for s in synthetic_class(REPO)}["perfect"]
    everyone = [replace(base, student_id="honest", profile="honest", runs=False)]
    everyone += [
        Student(sid, what, {**base.cells, **cells}, runs=False)
        for sid, (what, cells) in attacks(course).items()
        if sid in escape_ids
    ]
    build_course(REPO, course, {s.student_id: s.profile for s in everyone})
    hand_in_class(everyone, course)


def escape_round(course: str) -> dict:
    """One `viewcopy grade --force` of `course`, and what held."""
    course_path = Path(course)
    before = digest(course_path, skip=("autograded", "grade_logs", "gradebook.db"))
    run = GradingRun(Course.at(course_path), ASSIGNMENT, jobs=1)
    grade(run, force=True, progress=False, say=lambda _: None)
    after = digest(course_path, skip=("autograded", "grade_logs", "gradebook.db"))
    grades = read_grades(course_path)
    logs = list(run.logs.glob("*.log"))
    texts = [log.read_text(errors="replace") for log in logs]
    outputs = [p.read_text(errors="replace") for p in (course_path / "autograded").rglob("*.ipynb")]
    forged = [line for text in texts for line in text.splitlines() if FORGED in line]
    return {
        "no_99": all(score != 99 for cells in grades.values() for score, _ in cells.values()),
        "honest": {cell: score for cell, (score, _) in grades["honest"].items()},
        "course_untouched": before == after,
        "secret_hidden": not any(SECRET in text for text in [*texts, *outputs]),
        "log_honest": bool(forged) and all(line.startswith("kernel | ") for line in forged),
    }


def planted_on_host() -> list[str]:
    return [folder for top in HOST_TOPS for folder, _, files in os.walk(top) if PLANTED in files]


def escapes(rounds: int, escape_ids: tuple[str, ...], busy_cores: int) -> dict:
    """`rounds` rounds, two courses holding `escape_ids` graded at once each, `busy_cores` busy
    loops beside."""
    work = Path(tempfile.mkdtemp(prefix="viewcopy-stress-"))
    courses = [work / "a" / "course", work / "b" / "course"]
    held, failures, first = 0, [], None
    try:
        for course in courses:
            escape_course(course, escape_ids)
        os.environ["VIEWCOPY_PLANTED_SECRET"] = SECRET
        with busy_loops(busy_cores):
            for index in range(rounds):
                with ProcessPoolExecutor(2, mp_context=worker_context()) as lanes:
                    results = list(lanes.map(escape_round, [str(c) for c in courses]))
                first = first or results[0]["honest"]
                planted = planted_on_host()
                broken = [
                    f"round {index + 1}: {name}"
                    for result in results
                    for name, ok in result.items()
                    if name != "honest" and not ok
                ] + [f"round {index + 1}: honest grades moved" for r in results
                     if r["honest"] != first]  # fmt: skip
                broken += [f"round {index + 1}: planted in {p}" for p in planted]
                held += not broken
                failures += broken
                print(f"  round {index + 1}/{rounds}: {broken or 'held'}")
    finally:
        os.environ.pop("VIEWCOPY_PLANTED_SECRET", None)
        shutil.rmtree(work, ignore_errors=True)
    return {"rounds": rounds, "held": held, "failures": failures}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--forks", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="the smallest run: 2 forks, 1 round, 1 escape, no busy loop",
    )
    parser.add_argument(
        "--busy", type=int, help="busy loops beside (default: one a core; --quick 0)"
    )
    args = parser.parse_args()
    escape_ids = QUICK_ESCAPES if args.quick else ESCAPES
    if args.quick:
        args.forks, args.rounds = 2, 1
    default = 0 if args.quick else os.cpu_count() or 1
    busy_cores = default if args.busy is None else args.busy
    if (problem := bwrap_problem()) is not None:
        sys.exit(f"no sandbox here: {problem}")
    print(
        f"sandbox stress, {date.today()}, {platform.node()}, {busy_cores} of {os.cpu_count()} "
        f"cores busy, uid {os.geteuid()}"
    )
    started = time.monotonic()
    forked = forks(args.forks, busy_cores)
    print(
        f"forks: {forked['warm']} of {args.forks} kernels forked warm, {forked['fresh']} fell "
        f"back to fresh, {forked['outside']} outside their sandbox, "
        f"{len(forked['errors'])} errors {forked['errors'][:3]} "
        f"({time.monotonic() - started:.0f} s)"
    )
    started = time.monotonic()
    escaped = escapes(args.rounds, escape_ids, busy_cores)
    print(
        f"escapes: {escaped['held']} of {escaped['rounds']} rounds held (two gradings at once, "
        f"{len(escape_ids)} escape attempt(s) each) ({time.monotonic() - started:.0f} s)"
    )
    print(json.dumps({"forks": forked, "escapes": escaped}))
    good = (
        forked["fresh"] == forked["outside"] == 0
        and not forked["errors"]
        and escaped["held"] == escaped["rounds"]
    )
    sys.exit(0 if good else 1)


if __name__ == "__main__":
    main()
