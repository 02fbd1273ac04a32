"""The class report of a whole class: `viewcopy report` on N graded hand-ins (default 1000),
against grading them with `viewcopy grade`, and where the report's time goes.

It builds the synthetic class at that size as benchmarks/grading.py does (its `build_class`: each
synthetic profile filled and run once, copied round-robin), grades it with `viewcopy grade`
(sandboxed where bubblewrap works, as grading.py grades; timed end to end, the workers' start
included), then times the class report as `viewcopy report` makes it: in a fresh process (so its
imports, torch and matplotlib among them, are paid as the command pays them), the report's modules
imported and then the command's own function (viewcopy.report.commands.run_report) called on the
command's own parsed arguments: build the report, write its files, sum it up for the terminal.
Whatever the command comes to run (a new part of the report) is timed with it.

Where the report's time goes, in that same run: the functions the report is made of are wrapped
with time.perf_counter spans, each span's own time (its wrapped callees' taken out), so the rows
add up to the whole; a function of viewcopy.report the script does not know by name, called from
the report's build, files or command, gets a row of its own (a module or function named for
similarity: `similarity`). The wrapping itself costs about a microsecond a call.

Target: the report of 1000 hand-ins in at most 60 s (a smaller class does not measure it).

With --keep DIR the graded class stays in DIR (DIR/course, its report in DIR/course/reports) with
DIR/graded.json saying how its grading went; a later run with the same --students reuses it
without grading again (and prints the grading time recorded then), so the report can be re-timed
after a change to the code.

Run: .venv/bin/python benchmarks/class_report.py [--quick] [--students N] [--jobs J] [--keep DIR]
(--quick: 4 hand-ins)
"""

from __future__ import annotations

import argparse
import functools
import importlib
import inspect
import json
import os
import pkgutil
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

STARTED, STARTED_AT = time.perf_counter(), time.time()  # the report's child: imports from here

HERE = Path(__file__).resolve().parent
TARGET_N, TARGET_S = 1000, 60.0
RECORD = "graded.json"
"""In --keep DIR: how the class there was graded (students, workers, seconds, when)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the smallest run: 4 hand-ins")
    parser.add_argument("--students", type=int, help=f"hand-ins (default {TARGET_N}; --quick 4)")
    parser.add_argument("--jobs", type=int, help="viewcopy grade's workers (default: one a core)")
    parser.add_argument("--keep", help="keep the graded class here; reuse one of that size")
    parser.add_argument("--report-child", nargs=2, help=argparse.SUPPRESS)  # COURSE SPANS_JSON
    args = parser.parse_args()
    if args.report_child:
        return report_child(Path(args.report_child[0]), Path(args.report_child[1]))
    n = args.students or (4 if args.quick else TARGET_N)
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
    root = Path(args.keep).resolve() if args.keep else Path(tempfile.mkdtemp(prefix="report-"))
    try:
        graded = graded_class(root, n, args.jobs)
        print("the class report, as viewcopy report makes it, in a fresh process ...", flush=True)
        timed = time_report(root / "course", root / "spans.json")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print_results(n, graded, timed)
    return 0


# Grading the class.


def graded_class(root: Path, n: int, jobs: int | None) -> dict:
    """The class of n hand-ins in root/course, graded: what root/graded.json records of it,
    reused when root already holds a graded class of that size."""
    record = root / RECORD
    if record.is_file():
        found = json.loads(record.read_text())
        if found.get("students") == n and (root / "course" / "gradebook.db").is_file():
            print(
                f"reusing the class graded in {root} on {found['when']}: {n} hand-ins, "
                f"graded then in {found['grading_s']:.1f} s by {found['workers']} workers "
                "(not regraded)",
                flush=True,
            )
            return {**found, "reused": True}
        print(f"{root} holds a class of {found.get('students')} hand-ins, not {n}: rebuilding")
    record.unlink(missing_ok=True)
    shutil.rmtree(root / "course", ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)

    sys.path.insert(0, str(HERE))
    from grading import build_class  # benchmarks/grading.py's class, built its way

    from viewcopy.course.assignment import ASSIGNMENT
    from viewcopy.course.folder import Course
    from viewcopy.grading.grade import FAILED, GRADED, grade, grading_workers
    from viewcopy.grading.pool import SANDBOXED, GradingRun
    from viewcopy.sandbox.bubblewrap import bwrap_problem

    course = root / "course"
    print(f"building {n} hand-ins in {course} ...", flush=True)
    started = time.perf_counter()
    students = build_class(course, n)
    built_s = time.perf_counter() - started
    sandboxed = bwrap_problem() is None
    workers = grading_workers(jobs, n)
    isolation = "sandboxed (bubblewrap)" if sandboxed else "NOT sandboxed (no bubblewrap here)"
    print(
        f"built in {built_s:.1f} s; viewcopy grade, {workers} workers, kernels {isolation} ...",
        flush=True,
    )
    watching = threading.Event()
    if n >= 20:
        threading.Thread(
            target=_progress, args=(course, ASSIGNMENT, n, watching), daemon=True
        ).start()
    started = time.perf_counter()
    try:
        run = GradingRun(
            Course.at(course), ASSIGNMENT, sandbox=SANDBOXED if sandboxed else None, jobs=jobs
        )
        outcomes = grade(run, force=True, progress=False, say=print)
    finally:
        watching.set()
    grading_s = time.perf_counter() - started
    found = {
        "students": len(students),
        "workers": workers,
        "grading_s": grading_s,
        "built_s": built_s,
        "graded": sum(o.status == GRADED for o in outcomes),
        "failed": sum(o.status == FAILED for o in outcomes),
        "sandboxed": sandboxed,
        "when": datetime.now().isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
    }
    record.write_text(json.dumps(found, indent=1) + "\n")
    return {**found, "reused": False}


def _progress(course: Path, assignment: str, n: int, done: threading.Event) -> None:
    """Every minute of a long grading: hand-ins graded so far, and what that says of the rest."""
    started = time.perf_counter()
    while not done.wait(60):
        graded = sum(1 for _ in (course / "autograded").glob(f"*/{assignment}"))
        took = time.perf_counter() - started
        left = f", about {(n - graded) * took / graded / 60:.0f} min to go" if graded else ""
        print(f"  {graded} of {n} graded after {took / 60:.1f} min{left}", flush=True)


# Timing the report: a fresh process runs it, as `viewcopy report` would.


def time_report(course: Path, spans_file: Path) -> dict:
    """The report of the graded course, timed in a child process; its spans."""
    spans_file.unlink(missing_ok=True)
    started, started_at = time.perf_counter(), time.time()
    subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--report-child", str(course),
         str(spans_file)],
        check=True,
    )  # fmt: skip
    process_s, ended_at = time.perf_counter() - started, time.time()
    timed = json.loads(spans_file.read_text())
    timed["spans"][START] = timed["started_at"] - started_at
    timed["spans"][EXIT] = ended_at - timed["ended_at"]
    return {**timed, "process_s": process_s}


_OPEN: list[float] = []
"""Per span now open, innermost last: the seconds of its wrapped callees so far."""
_OWN: dict[str, float] = defaultdict(float)
"""Label -> the seconds spent in its spans' own code (their wrapped callees taken out)."""
_WRAPPED: dict[object, object] = {}
"""Function -> its timed wrapper (each function wrapped once, wherever it is referenced)."""


def _span(label: str, function):
    """`function`, its own time added to _OWN[label]."""
    if function in _WRAPPED or getattr(function, "_bench_label", None):
        return _WRAPPED.get(function, function)

    @functools.wraps(function)
    def timed(*args, **kwargs):
        _OPEN.append(0.0)
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            took = time.perf_counter() - started
            _OWN[label] += took - _OPEN.pop()
            if _OPEN:
                _OPEN[-1] += took

    timed._bench_label = label
    _WRAPPED[function] = timed
    return timed


READING_HAND_INS = "reading hand-ins: submitted/ (predictions, locks)"
READING_NOTEBOOKS = "reading hand-ins: autograded notebooks (classify misses)"
READING_COURSE = "reading the course: settings, gradebook, grading record"
TRUTH = "measuring the truth on this machine"
JUDGING = "judging the hand-ins (scores, transfer, traps, rules after)"
ITEMS = "item analysis and score distributions"
BUILD_REST = "build_report, the rest"
WRITING_ROWS = "writing files: the CSV's rows"
WRITING_FIGURES = "writing files: drawing the figures"
WRITING_PNG = "writing files: encoding PNGs (savefig)"
WRITING_PAGE = "writing files: report.html"
WRITING_REST = "writing files: the rest (CSV, writes)"
SUMMARY = "the terminal summary"
COMMAND_REST = "run_report, the rest"
IMPORTS = "imports: the report's modules (torch, matplotlib, pandas)"
START = "the process: Python's start (before the imports above)"
EXIT = "the process: writing these spans, exit"
PROCESS = "the process: instrumenting, arguments"
SIMILARITY = "similarity"

KNOWN = {
    "viewcopy.report.build": {
        "build_report": BUILD_REST,
        "read_grades": READING_COURSE,
        "not_graded": READING_COURSE,
        "_given": READING_COURSE,
        "versions_of": READING_COURSE,
        "_folders": READING_COURSE,
        "read_handin": READING_HAND_INS,
        "read_classify": READING_NOTEBOOKS,
        "available_devices": TRUTH,
        "measured_truth": TRUTH,
        "measure_pool": TRUTH,
        "base_rate": JUDGING,
        "_student_line": JUDGING,
        "_item_misses": JUDGING,
        "_thought_free": JUDGING,
        "_transfer": JUDGING,
        "_traps": JUDGING,
        "_specificity_share": JUDGING,
        "twenty_items": ITEMS,
        "next_items": ITEMS,
        "part_distributions": ITEMS,
    },
    "viewcopy.report.files": {
        "write_report": WRITING_REST,
        "rows": WRITING_ROWS,
        "distribution": WRITING_FIGURES,
        "report_page": WRITING_PAGE,
    },
    "viewcopy.report.summary": {"terminal_summary": SUMMARY},
    "viewcopy.report.commands": {"run_report": COMMAND_REST},
}
"""Module -> its function -> the row its time goes to."""

ORDER = [
    IMPORTS, READING_COURSE, READING_HAND_INS, READING_NOTEBOOKS, TRUTH, JUDGING, ITEMS,
    SIMILARITY, BUILD_REST, WRITING_ROWS, WRITING_FIGURES, WRITING_PNG, WRITING_PAGE,
    WRITING_REST, SUMMARY, COMMAND_REST, START, PROCESS, EXIT,
]  # fmt: skip


def _instrument(callers) -> None:
    """Wrap the report's functions where the report calls them: the known ones under KNOWN's
    rows, any other function of viewcopy.report that the build, the files or the command call
    (similarity's among them) under a row of its own."""
    from matplotlib.figure import Figure

    import viewcopy.report

    for info in pkgutil.iter_modules(viewcopy.report.__path__):  # one run_report imports later
        if "similar" in info.name:
            importlib.import_module(f"viewcopy.report.{info.name}")
    report_modules = {
        name: module for name, module in sys.modules.items() if name.startswith("viewcopy.report.")
    }
    for name, functions in KNOWN.items():
        module = report_modules[name]
        for function, label in functions.items():
            if callable(getattr(module, function, None)):
                setattr(module, function, _span(label, getattr(module, function)))
    files = report_modules["viewcopy.report.files"]
    for figure, draw in files.FIGURES.items():
        files.FIGURES[figure] = _span(WRITING_FIGURES, draw)
    Figure.savefig = _span(WRITING_PNG, Figure.savefig)
    for name, module in report_modules.items():  # similarity, wherever it lives and is called
        if "similar" in name:
            for function, value in vars(module).items():
                if inspect.isfunction(value) and value.__module__ == name:
                    setattr(module, function, _span(SIMILARITY, value))
    for module in callers:
        for function, value in list(vars(module).items()):
            home = getattr(value, "__module__", "") or ""
            if not inspect.isfunction(value) or not home.startswith("viewcopy.report."):
                continue
            if getattr(value, "_bench_label", None) or home == module.__name__:
                continue
            if "similar" in home or "similar" in function:
                label = SIMILARITY
            elif module.__name__ == "viewcopy.report.summary":
                label = SUMMARY
            else:
                label = f"{home.removeprefix('viewcopy.')}.{function}"
            setattr(module, function, _span(label, value))


def report_child(course: Path, spans_file: Path) -> int:
    """In a fresh process: import what `viewcopy report` imports, then run it as the command
    runs it, every span timed; write the spans to spans_file."""
    from viewcopy.report import build, commands, files, summary  # what run_report imports

    imports_s = time.perf_counter() - STARTED
    _instrument((build, files, summary, commands))

    parser = argparse.ArgumentParser(prog="viewcopy report")
    commands.add_report_arguments(parser)
    args = parser.parse_args(["--course", str(course)])
    started = time.perf_counter()
    said = commands.run_report(args)
    run_s = time.perf_counter() - started
    spans = {IMPORTS: imports_s, **_OWN}
    found = {"imports_s": imports_s, "run_s": run_s, "spans": spans, "said": said}
    spans_file.write_text(json.dumps({**found, "started_at": STARTED_AT, "ended_at": time.time()}))
    return 0


# What it prints.


def print_results(n: int, graded: dict, timed: dict) -> None:
    grading_s, workers = graded["grading_s"], graded["workers"]
    report_s = timed["process_s"]
    isolation = "sandboxed" if graded["sandboxed"] else "NOT sandboxed"
    when = f"recorded {graded['when']}, reused" if graded["reused"] else "this run"
    print(f"\n{timed['said'].splitlines()[-1]}")
    print(
        f"\n{datetime.now():%Y-%m-%d}, {platform.machine()}, {os.cpu_count()} cores, load "
        f"average {os.getloadavg()[0]:.1f}; {n} hand-ins; grading {when}: {graded['graded']} "
        f"graded, {graded['failed']} failed, kernels {isolation}"
    )
    rows = [
        (f"graded {n} hand-ins (viewcopy grade, {workers} workers)", grading_s, ""),
        (
            f"class report of the same {n} hand-ins",
            report_s,
            f"{report_s / grading_s:.2f}x the grading",
        ),
    ]
    for name, seconds, after in rows:
        print(f"{name:<50}{seconds:>9.1f} s   {after}".rstrip())
    print(f"  per hand-in: grading {grading_s / n:.2f} s, the report {report_s / n * 1000:.1f} ms")
    target = f"target: the report of {TARGET_N} hand-ins in at most {TARGET_S:.0f} s"
    if n >= TARGET_N and report_s <= TARGET_S:  # a larger class within it meets it too
        print(f"{target}: met" + (f" (at {n} hand-ins)" if n > TARGET_N else ""))
    elif n == TARGET_N:
        print(f"{target}: not met")
    else:
        print(f"{target}: not measured at {n} hand-ins (--students {TARGET_N} measures it)")

    spans = timed["spans"]
    spans[PROCESS] = report_s - sum(spans.values())
    print(f"\nwhere the report's {report_s:.1f} s go (the same run; each row its own time):")
    rank = {label: i for i, label in enumerate(ORDER)}
    for label in sorted(spans, key=lambda x: rank.get(x, rank[COMMAND_REST] - 0.5)):
        seconds = spans[label]
        print(f"  {label:<62}{seconds:>8.3f} s {seconds / report_s:>6.1%}")


if __name__ == "__main__":
    sys.exit(main())
