"""Grading a class: plain `nbgrader autograde`, `viewcopy grade` (one worker and the default) and
the naive floor, on the same N synthetic hand-ins, measured side by side in one run, and where one
hand-in's time goes.

The floor is what a naive grader pays per hand-in: a fresh kernel, `import torch`, shutdown
(serially, and `jobs` at a time beside the parallel run). Each grading is shown end to end and, for
`viewcopy grade`, without its workers' one-time start (nbgrader, torch, the kernel template and the
grader's own measurement, paid once per worker whatever the class size). `viewcopy grade --jobs 1`
is run three ways (WAYS): as the course is configured (kernels forked from each worker's warm
template, and the cells that measure for the student and carry no points keeping the student's own
outputs), with fresh kernels (`c.WarmKernels.enabled = False`), and with fresh kernels re-measuring
every cell (`c.KeepStudentMeasurements.enabled = False` too: what grading did before issue 39).

Where the time goes: three of viewcopy grade's workers, instrumented in this process's children,
one a way, grade K of the same hand-ins (sandboxed as viewcopy grade is), taking turns hand-in by
hand-in so that whatever else runs on the machine meets each alike: the clean before and after.
Per hand-in: nbgrader's hand-in rows, each sanitize and autograde step,
and inside Execute the kernel's start (sandbox, Python, ipykernel), every cell (the setup cell is
the imports: torch and the lab) and its shutdown; the notebook's own compute is every cell but
the setup.

Targets: viewcopy grade --jobs 1 at most 1.0x the serial floor per hand-in (issue 39); the default
at most 1.0x the parallel floor; speed-up over plain nbgrader >= 0.8 x cores. The scores of every
run must be identical to plain nbgrader's (asserted).

The small class (issue 68), first: the whole `viewcopy grade --jobs 1 --force` on 4 hand-ins, a
fresh process as the instructor runs it (the master measured once for the course before), against
four fresh kernels that import torch, one after another (target <= 1.0x); and each further
hand-in, the difference between grading 12 and grading 4 over 8, against one such kernel (target
<= 0.4x). The three are timed in turn, SMALL_TURNS times, each figure the fastest of its turns.

With --cluster it measures `viewcopy grade --cluster` instead, on the same N submissions: the
local pool of J workers against a local Dask cluster of J worker processes (target: the cluster
costs at most 1.15x the pool, end to end, the cluster's start included), one Dask worker against J
(target: speed-up >= 0.8 x J), and the coordinator's gradebook writes per second (the bound of the
throughput model in docs/cluster.md). The scores of all three must be identical.

Run: .venv/bin/python benchmarks/grading.py [--quick] [--students N] [--jobs J] [--profile K]
                                            [--keep DIR] [--cluster] [--small-only]
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import importlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from datetime import date
from pathlib import Path

from jupyter_client.manager import KernelManager

from viewcopy.course.assignment import (
    ASSIGNMENT,
    LAB_IMPORTS,
    LAB_MEASURED,
    grade_id,
    read_grades,
    run_nbgrader,
)
from viewcopy.course.folder import Course, build_course
from viewcopy.demo.synthetic import hand_in_class, synthetic_class
from viewcopy.grading.grade import GRADED, grade
from viewcopy.grading.pool import SANDBOXED, GradingRun
from viewcopy.grading.worker import worker_context
from viewcopy.sandbox.bubblewrap import bwrap_problem
from viewcopy.sandbox.unix_sockets import UnixSockets

REPO = Path(__file__).resolve().parents[1]
FRESH = "\nc.WarmKernels.enabled = False  # benchmarks/grading.py: fresh kernels\n"
REMEASURE = "\nc.KeepStudentMeasurements.enabled = False  # benchmarks/grading.py: re-measure\n"
WAYS = {
    "warm": ("", "viewcopy grade --jobs 1"),
    "fresh": (FRESH, "  with fresh kernels"),
    "before": (FRESH + REMEASURE, "  with fresh kernels, re-measuring (before)"),
}
"""How the one-worker run is graded: name -> (what the course's config adds, the row's name)."""
SMALL = (4, 12)
"""The small class, and the larger class whose difference from it gives each further hand-in."""
SMALL_TURNS = 3


def build_class(course: Path, n: int) -> list[str]:
    """A course with n hand-ins: the synthetic profiles, each chosen one filled and run once (one
    kernel per core, as `viewcopy demo` does), copied round-robin."""
    profiles = synthetic_class(REPO)
    chosen = [profiles[i % len(profiles)] for i in range(n)]
    students = [
        dataclasses.replace(p, student_id=f"s{i:03d}_{p.student_id}") for i, p in enumerate(chosen)
    ]
    build_course(REPO, course, {s.student_id: s.profile for s in students})
    unique = list({p.student_id: p for p in chosen}.values())
    hand_in_class(unique, course)
    built = Course.at(course)
    for student, profile in zip(students, chosen, strict=True):
        template = built.hand_in(profile.student_id, ASSIGNMENT)
        shutil.copytree(template, built.hand_in(student.student_id, ASSIGNMENT))
    for profile in unique:
        shutil.rmtree(built.hand_in(profile.student_id, ASSIGNMENT).parent)
    return [s.student_id for s in students]


def clone(course: Path, to: Path, settings: str = "") -> Path:
    """A copy of the course, `settings` added to its config."""
    shutil.copytree(course, to)
    with (to / "nbgrader_config.py").open("a") as config:
        config.write(settings)
    return to


class FloorKernelManager(UnixSockets, KernelManager):
    """jupyter_client's blocking kernel manager, its kernels reached over Unix sockets."""


def floor_one(_: int) -> tuple[float, float, float]:
    """One hand-in's naive floor: a kernel starts, imports torch, shuts down; seconds of each.
    The kernel is reached over Unix sockets, as viewcopy's are (viewcopy.sandbox.unix_sockets)."""
    manager = FloorKernelManager(kernel_name="python3")
    started = time.perf_counter()
    manager.start_kernel(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = manager.client()
    try:
        client.start_channels()
        client.wait_for_ready(timeout=60)
        ready = time.perf_counter()
        reply = client.execute_interactive("import torch", timeout=300)
        assert reply["content"]["status"] == "ok", reply
        imported = time.perf_counter()
    finally:
        client.stop_channels()
        manager.shutdown_kernel()
    return ready - started, imported - ready, time.perf_counter() - imported


@dataclasses.dataclass(frozen=True)
class Floor:
    wall: float
    parts: tuple[float, float, float]
    """Mean seconds per hand-in: kernel start, import torch, shutdown."""


def floor(n: int, jobs: int) -> Floor:
    """Wall time for n floors, `jobs` at a time, and the mean of each part."""
    started = time.perf_counter()
    with ProcessPoolExecutor(jobs) as pool:
        parts = list(pool.map(floor_one, range(n)))
    wall = time.perf_counter() - started
    return Floor(wall, tuple(sum(p[i] for p in parts) / n for i in range(3)))


@dataclasses.dataclass(frozen=True)
class SmallClass:
    """The whole command on a small class and on a larger one, and the naive floor, timed in
    turn: the fastest seconds of each."""

    few: int
    many: int
    few_s: float
    many_s: float
    floor_s: float
    """`few` fresh kernels that import torch, one after another."""

    @property
    def each_s(self) -> float:
        """What each hand-in past the first `few` costs."""
        return (self.many_s - self.few_s) / (self.many - self.few)

    def report(self) -> None:
        one = self.floor_s / self.few
        whole, each = self.few_s / self.floor_s, self.each_s / one
        print(
            f"a small class: viewcopy grade --jobs 1 on {self.few} hand-ins, a fresh process, "
            f"{self.few_s:.2f} s against {self.few} fresh kernels that import torch "
            f"{self.floor_s:.2f} s: {whole:.2f}x (target <= 1.0x: {verdict(whole <= 1.0)})"
        )
        difference = (
            f"each further hand-in: ({self.many} hand-ins {self.many_s:.2f} s - {self.few} "
            f"{self.few_s:.2f} s) / {self.many - self.few}"
        )
        if self.each_s <= 0:
            print(
                f"{difference}: the larger class was no slower in this run, so the figure is "
                f"under its noise: run more turns (target <= 0.4x: not measured)"
            )
            return
        print(
            f"{difference} = {ms(self.each_s)} against one fresh kernel that imports torch "
            f"{ms(one)}: {each:.2f}x (target <= 0.4x: {verdict(each <= 0.4)})"
        )


def small_class(root: Path, few: int, many: int, turns: int) -> SmallClass:
    """The small class's figures: a class of `many` hand-ins and a copy of it with `few`, each
    graded once first (the master's measurement, made once for a course), then the floor and the
    two gradings timed in turn."""
    print(f"the small class: {few} and {many} hand-ins, {turns} turns ...", flush=True)
    students = build_class(root / "many", many)
    courses = {many: root / "many", few: clone(root / "many", root / "few")}
    for student in students[few:]:
        shutil.rmtree(Course.at(courses[few]).hand_in(student, ASSIGNMENT).parent)
    viewcopy = str(Path(sys.executable).parent / "viewcopy")

    def graded(n: int) -> float:
        command = [viewcopy, "grade", "--course", str(courses[n]), "--jobs", "1", "--force"]
        seconds, _ = timed(
            lambda: subprocess.run([*command, "--quiet"], check=True, capture_output=True)
        )
        return seconds

    graded(few), graded(many)
    times: dict[str, list[float]] = defaultdict(list)
    for _ in range(turns):
        times["floor"].append(floor(few, 1).wall)
        times["few"].append(graded(few))
        times["many"].append(graded(many))
    best = {name: min(seconds) for name, seconds in times.items()}
    return SmallClass(few, many, best["few"], best["many"], best["floor"])


def scores(course: Path, students: list[str]) -> dict[tuple[str, str], float | None]:
    every = read_grades(course)
    return {(s, cell): score for s in students for cell, (score, _) in every[s].items()}


def timed(work) -> tuple[float, object]:
    started = time.perf_counter()
    value = work()
    return time.perf_counter() - started, value


# Where one hand-in's time goes: a worker's grading, instrumented.

_SPANS: list[tuple[str, float]] = []
_PHASE = ["sanitize"]


def _timing(label, function):
    """`function`, adding its seconds to _SPANS under `label(args)`."""

    def timed_call(*args, **kwargs):
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            _SPANS.append((label(*args, **kwargs), time.perf_counter() - started))

    return timed_call


def _cell_label(self, cell, resources, index) -> str:
    name = grade_id(cell) or f"#{index}"
    if cell.cell_type != "code":
        return "Execute: markdown cells"
    kept = self.skip_cells_with_tag in cell.metadata.get("tags", [])
    return f"cell {name}{' [kept]' if kept else ''}"


def _instrument() -> None:
    """Time nbgrader's steps, the kernel and each cell in this process (a benchmark child)."""
    from nbclient import NotebookClient
    from nbconvert.preprocessors import ExecutePreprocessor, Preprocessor
    from nbgrader.api import Gradebook
    from nbgrader.converters import Autograde

    def step_label(self, *_, **__) -> str:
        name = type(self).__name__
        return "Execute" if isinstance(self, ExecutePreprocessor) else f"{_PHASE[0]}: {name}"

    def phase(original):
        def init(self):
            _PHASE[0] = "sanitize" if self._sanitizing else "autograde"
            return original(self)

        return init

    Preprocessor.__call__ = _timing(step_label, Preprocessor.__call__)
    Autograde._init_preprocessors = phase(Autograde._init_preprocessors)
    Autograde.init_assignment = _timing(
        lambda *_: "nbgrader: the hand-in's gradebook rows, master files", Autograde.init_assignment
    )
    Gradebook.__init__ = _timing(lambda *_, **__: "gradebook opened", Gradebook.__init__)
    NotebookClient.start_new_kernel = _timing(
        lambda *_, **__: "kernel start", NotebookClient.start_new_kernel
    )
    NotebookClient.start_new_kernel_client = _timing(
        lambda *_, **__: "kernel start", NotebookClient.start_new_kernel_client
    )
    NotebookClient._cleanup_kernel = _timing(
        lambda *_, **__: "kernel shutdown", NotebookClient._cleanup_kernel
    )
    ExecutePreprocessor.preprocess_cell = _timing(_cell_label, ExecutePreprocessor.preprocess_cell)


_API: dict[str, tuple[Course, object]] = {}
"""The profiling worker's course and nbgrader API, loaded once (as a viewcopy grade worker loads
it)."""


def profile_one(course: str, student: str, sandboxed: bool) -> list[tuple[str, float]]:
    """Grade one hand-in as one of viewcopy grade's workers does (nbgrader's API loaded once, the
    sandbox as configured), instrumented: its spans (label, seconds) and the whole."""
    from viewcopy.engine.devices import available_devices
    from viewcopy.grading.record import in_flight
    from viewcopy.grading.worker import grade_one, load_api
    from viewcopy.sandbox import warm_kernels

    if course not in _API:
        folder = Course.at(course)  # before the chdir below: a relative --keep stays right
        log = Path(course) / "profile.log"
        sink = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(sink, 1)  # nbgrader's and the kernels' output go to the log, as in a worker
        os.dup2(sink, 2)
        os.chdir(course)
        path = [str(Path(sys.executable).parent), os.environ["PATH"]]
        os.environ["PATH"] = os.pathsep.join(path)
        os.environ.pop("NBGRADER_EXECUTION", None)
        limits = SANDBOXED if sandboxed else None
        if limits is not None:
            warm_kernels.start(
                limits, available_devices(), folder.config, LAB_IMPORTS, LAB_MEASURED
            )
            warm_kernels.wait_ready()  # as a worker: its one-time start, not a hand-in's
        staging = in_flight(folder, ASSIGNMENT).relative_to(folder.root)
        _API[course] = folder, load_api(folder, limits, autograded=str(staging))
        _instrument()
        importlib.import_module(LAB_MEASURED).measure_here(available_devices())
        gc.freeze()  # as a worker, once ready
    _SPANS.clear()
    folder, api = _API[course]
    whole, result = timed(lambda: grade_one(api, folder, ASSIGNMENT, student))
    assert result["success"], result.get("log", "")[-2000:]
    return [*_SPANS, ("whole", whole)]


def profile(courses: list[Path], students: list[str], sandboxed: bool) -> list[dict[str, float]]:
    """For each course (a config), the mean seconds per hand-in of each span: one worker process
    per course, the courses taking turns hand-in by hand-in, so that what else runs on the
    machine meets each alike. Each process starts as viewcopy grade's workers do."""
    pools = [ProcessPoolExecutor(1, mp_context=worker_context()) for _ in courses]
    runs: list[list[list]] = [[] for _ in courses]
    try:
        for student in students:
            for i, (pool, course) in enumerate(zip(pools, courses, strict=True)):
                runs[i].append(pool.submit(profile_one, str(course), student, sandboxed).result())
    finally:
        for pool in pools:
            pool.shutdown()
    means = []
    for hand_ins in runs:
        total: dict[str, float] = defaultdict(float)
        for spans in hand_ins:
            for label, seconds in spans:
                total[label] += seconds
        means.append({label: seconds / len(hand_ins) for label, seconds in total.items()})
    return means


ROWS = "nbgrader: the hand-in's gradebook rows, master files"
EXECUTE_REST = "Execute: the rest (nbclient, widget state)"
NBGRADER_REST = "nbgrader: the rest (notebooks read and written, folders)"
ORDER = (ROWS, "sanitize:", "kernel start", "cell ", "Execute: markdown", "kernel shutdown")
ORDER += (EXECUTE_REST, "autograde:", NBGRADER_REST)


def rows_of(spans: dict[str, float]) -> dict[str, float]:
    """A hand-in's spans as the breakdown shows them: Execute split into the kernel's start, each
    cell and its shutdown and the rest of it; what nbgrader does outside its steps as one row."""
    rows = {k: v for k, v in spans.items() if k not in ("whole", "gradebook opened", "Execute")}
    inside = sum(v for k, v in rows.items() if k.startswith(("kernel ", "cell ", "Execute: m")))
    rows[EXECUTE_REST] = spans.get("Execute", 0.0) - inside
    steps = sum(v for k, v in rows.items() if k.startswith((ROWS, "sanitize:", "autograde:")))
    rows[NBGRADER_REST] = spans["whole"] - steps - spans.get("Execute", 0.0)
    return rows


def breakdown(profiles: list[dict[str, float]]) -> list[tuple[str, list[float]]]:
    """(label, seconds in each profile) per span, in the order a hand-in meets them; a cell kept
    in the first profile is labelled [kept]."""
    rows = [rows_of(spans) for spans in profiles]
    kept_cells = {k.removesuffix(" [kept]") for k in rows[0] if k.endswith(" [kept]")}
    rows = [{k.removesuffix(" [kept]"): v for k, v in row.items()} for row in rows]
    labels = list(dict.fromkeys(label for row in reversed(rows) for label in row))

    def rank(label: str) -> int:
        return next((i for i, p in enumerate(ORDER) if label.startswith(p)), len(ORDER))

    return [
        (f"{x} [kept]" if x in kept_cells else x, [row.get(x, 0.0) for row in rows])
        for x in sorted(labels, key=rank)
    ]


def compute(spans: dict[str, float]) -> float:
    """The notebook's own compute: every cell but the setup (the imports)."""
    return sum(v for k, v in spans.items() if k.startswith("cell ") and k != "cell setup")


@dataclasses.dataclass
class Measured:
    """Everything one run of the benchmark measured."""

    n: int
    jobs: int
    sandboxed: bool
    load: tuple[float, float]
    """The 1-minute load average at the start and at the end."""
    plain_s: float
    runs: dict[str, tuple[float, list]]
    """viewcopy grade's runs: name -> (wall seconds, outcomes)."""
    floor_serial: Floor
    floor_parallel: Floor
    profiled: int
    profiles: dict[str, dict[str, float]]
    """Way (WAYS) -> the mean seconds per hand-in of each span."""
    same: dict[str, bool]


def main() -> int:
    cores = os.cpu_count() or 1
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="the smallest run: 2 hand-ins, 1 profiled"
    )
    parser.add_argument(
        "--students", type=int, help="hand-ins (default 4 a core, --cluster 8 a core; --quick 2)"
    )
    parser.add_argument("--jobs", type=int, default=cores, help="the default run's workers")
    parser.add_argument("--profile", type=int, help="hand-ins profiled (default 4; --quick 1)")
    parser.add_argument("--keep", help="build the courses here and keep them")
    parser.add_argument("--cluster", action="store_true", help="the Dask cluster against the pool")
    parser.add_argument("--small-only", action="store_true", help="the small class's figures only")
    args = parser.parse_args()
    args.students = args.students or (2 if args.quick else cores * (8 if args.cluster else 4))
    if args.cluster:
        return cluster_main(args)
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
    root = Path(args.keep or tempfile.mkdtemp(prefix="grading-bench-"))
    try:
        few, many = (1, 2) if args.quick else SMALL
        small = small_class(root / "small", few, many, 1 if args.quick else SMALL_TURNS)
        if not args.small_only:
            found = measure(
                root, args.students, args.jobs, args.profile or (1 if args.quick else 4)
            )
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print()
    small.report()
    if args.small_only:
        return 0
    report(found)
    assert all(found.same.values()), f"scores differ from plain nbgrader autograde: {found.same}"
    return 0


def measure(root: Path, n: int, jobs: int, k: int) -> Measured:
    """Every run, on copies of one class of n hand-ins."""
    sandboxed, load = bwrap_problem() is None, os.getloadavg()[0]
    print(f"building {n} hand-ins in {root} ...", flush=True)
    students = build_class(root / "class", n)
    courses = {"nbgrader": clone(root / "class", root / "nbgrader")}
    for way, (settings, _) in WAYS.items():
        courses[way] = clone(root / "class", root / way, settings)
        courses[f"profile_{way}"] = clone(root / "class", root / f"profile_{way}", settings)
    courses["default"] = clone(root / "class", root / "default")
    print("plain nbgrader autograde ...", flush=True)
    plain_s, _ = timed(
        lambda: run_nbgrader(courses["nbgrader"], "autograde", ASSIGNMENT, "--force")
    )
    runs = {}
    for name, workers, what in (
        *((way, 1, f"viewcopy grade --jobs 1, {way}") for way in WAYS),
        ("default", jobs, f"viewcopy grade (default: --jobs {jobs})"),
    ):
        print(f"{what} ...", flush=True)
        run = GradingRun(
            Course.at(courses[name]), ASSIGNMENT, sandbox=SANDBOXED if sandboxed else None,
            jobs=workers,
        )  # fmt: skip
        runs[name] = timed(lambda run=run: grade(run, force=True, progress=False, say=print))
    print("floor: kernel start, import torch, shutdown, serially and in parallel ...", flush=True)
    floor_serial, floor_parallel = floor(n, 1), floor(n, jobs)
    k = min(k, n)
    print(f"where the time goes: {k} hand-in(s), instrumented workers, each way in turn ...")
    each = profile([courses[f"profile_{way}"] for way in WAYS], students[:k], sandboxed)
    expected = scores(courses["nbgrader"], students)
    same = {name: scores(courses[name], students) == expected for name in runs}
    load = (load, os.getloadavg()[0])
    return Measured(
        n, jobs, sandboxed, load, plain_s, runs, floor_serial, floor_parallel, k,
        dict(zip(WAYS, each, strict=True)), same,
    )  # fmt: skip


def report(m: Measured) -> None:
    n, jobs, serial, parallel = m.n, m.jobs, m.floor_serial.wall, m.floor_parallel.wall
    isolation = "sandboxed (bubblewrap)" if m.sandboxed else "NOT sandboxed (no bubblewrap here)"
    print(
        f"\n{date.today()}, {platform.machine()}, {os.cpu_count()} cores, load average "
        f"{m.load[0]:.1f} at the start and {m.load[1]:.1f} at the end; {n} hand-ins; "
        f"viewcopy grade's kernels {isolation}"
    )
    graded = [sum(o.status == GRADED for o in outcomes) for _, outcomes in m.runs.values()]
    print(f"graded by each viewcopy grade run: {', '.join(map(str, graded))} of {n}")
    for name, (_, outcomes) in m.runs.items():  # the figure a run really got, not the one asked
        warm, fresh = (sum(o.kernels[i] for o in outcomes) for i in (0, 1))
        print(f"  {name}: {warm} kernels forked warm, {fresh} started fresh")
    rows = [
        ("floor: kernel, import torch, shutdown", serial, serial),
        (f"floor, {jobs} at a time", parallel, parallel),
        ("nbgrader autograde (serial)", m.plain_s, serial),
    ]
    for way, (_, name) in WAYS.items():
        wall, outcomes = m.runs[way]
        rows += [(name, wall, serial), ("    worker start excluded", steady(outcomes), serial)]
    default_s, default = m.runs["default"]
    rows += [
        (f"viewcopy grade (default: --jobs {jobs})", default_s, parallel),
        ("    worker start excluded", steady(default) / jobs, parallel),
    ]
    print(f"\n{'':<46}{'wall':>9}{'per hand-in':>13}{'x floor':>9}")
    for name, wall, against in rows:
        print(f"{name:<46}{wall:>8.1f}s{wall / n:>12.2f}s{wall / against:>8.2f}x")
    for way, spans in m.profiles.items():
        own = compute(spans)
        name = f"the notebook's own compute, {way}"
        print(f"{name:<46}{'':>9}{own:>12.2f}s{own * n / serial:>8.2f}x")
    start, imports, shutdown = m.floor_serial.parts
    print(
        f"the floor per hand-in: kernel start {ms(start)}, import torch {ms(imports)}, "
        f"shutdown {ms(shutdown)}"
    )
    print()
    warm, fresh, before = (m.profiles[way] for way in WAYS)
    for what, was, now in (
        ("warm kernels, the same hand-ins in turn", fresh["whole"], warm["whole"]),
        (
            "warm kernels, the whole runs, one worker",
            steady(m.runs["fresh"][1]) / n,
            steady(m.runs["warm"][1]) / n,
        ),
        ("keeping the student's measurements, in turn", before["whole"], fresh["whole"]),
    ):
        print(
            f"{what}: {was:.2f} s -> {now:.2f} s per hand-in ({was - now:.2f} s, "
            f"{(was - now) / was:.0%} less)"
        )
    cells = {k: v for k, v in rows_of(before).items() if k.startswith("cell ")}
    kept_cells = {k.removesuffix(" [kept]") for k in fresh if k.endswith(" [kept]")}
    not_run = sum(v for k, v in cells.items() if k in kept_cells)
    step = fresh.get("autograde: KeepStudentMeasurements", 0.0)
    print(
        f"  what keeping saves, by the cells themselves: {ms(not_run)} of cells not run ("
        + ", ".join(f"{k.removeprefix('cell ')} {ms(cells[k])}" for k in sorted(kept_cells))
        + f"), {ms(step)} for the step that keeps them: {not_run - step:.2f} s per hand-in"
    )
    for name, ratio in (
        ("viewcopy grade --jobs 1 against the serial floor", m.runs["warm"][0] / serial),
        (f"viewcopy grade --jobs {jobs} against the parallel floor", default_s / parallel),
    ):
        print(f"{name}: {ratio:.2f}x (target <= 1.0x: {verdict(ratio <= 1.0)})")
    speedup, target = m.plain_s / default_s, 0.8 * (os.cpu_count() or 1)
    met = verdict(speedup >= target)
    print(f"speed-up over plain nbgrader: {speedup:.2f}x (target >= {target:.1f}x: {met})")

    print(
        f"\nwhere one hand-in's time goes: a viewcopy grade worker each way, the mean of "
        f"{m.profiled} hand-in(s); [kept]: a cell that measures for the student and grades nothing"
    )
    print(f"{'':<56}" + "".join(f"{way:>16}" for way in WAYS))
    wholes = [spans["whole"] for spans in m.profiles.values()]
    for label, seconds in [
        *breakdown(list(m.profiles.values())),
        ("whole: one hand-in autograded", wholes),
        ("  of which opening the gradebook (in the steps above)",
         [spans.get("gradebook opened", 0.0) for spans in m.profiles.values()]),
    ]:  # fmt: skip
        cells = "".join(f"{ms(a):>9}{a / w:>7.1%}" for a, w in zip(seconds, wholes, strict=True))
        print(f"{label:<56}{cells}")
    same = ", ".join(f"{name} {'yes' if ok else 'NO'}" for name, ok in m.same.items())
    print(f"\nscores identical to plain nbgrader autograde: {same}")


def steady(outcomes) -> float:
    """The workers' seconds on hand-ins alone (their one-time start excluded)."""
    return sum(o.seconds for o in outcomes)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if abs(seconds) < 1 else f"{seconds:.2f} s"


def on_dask(course: Path, workers: int) -> tuple[float, list]:
    """Seconds for `viewcopy grade --cluster` on a fresh local cluster of `workers` processes,
    its start included, and the outcomes."""
    from distributed import LocalCluster

    started = time.perf_counter()
    with LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        run = GradingRun(Course.at(course), ASSIGNMENT, cluster=cluster.scheduler_address)
        outcomes = grade(run, force=True, progress=False)
    return time.perf_counter() - started, outcomes


def write_rate(course: Path, students: list[str], root: Path) -> float:
    """Hand-ins per second the coordinator writes: nbgrader's rows for each autograded notebook,
    replayed into a copy of the gradebook, and the autograded folder put in place."""
    import nbformat

    from viewcopy.course.assignment import NOTEBOOK
    from viewcopy.course.autograde_rows import record_autograde
    from viewcopy.grading.task import pack, unpack

    replay = root / "replay"
    shutil.copytree(course, replay, ignore=shutil.ignore_patterns("autograded", "grade_logs"))
    source, replayed = Course.at(course), Course.at(replay)
    config, url = replayed.config, f"sqlite:///{replay / 'gradebook.db'}"
    graded = {
        s: pack(source.graded(s, ASSIGNMENT))
        for s in students
        if source.graded(s, ASSIGNMENT).is_dir()
    }
    started = time.perf_counter()
    for student_id, files in graded.items():
        stamp = replayed.submitted_stamp(student_id, ASSIGNMENT)
        notebook = nbformat.reads(files[NOTEBOOK][1].decode(), as_version=4)
        name = NOTEBOOK.removesuffix(".ipynb")
        record_autograde(url, config, ASSIGNMENT, student_id, stamp, {name}, {name: notebook})
        unpack(files, replayed.graded(student_id, ASSIGNMENT))
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
        pool = GradingRun(Course.at(course), ASSIGNMENT, jobs=jobs)
        pool_s, _ = timed(lambda: grade(pool, force=True, progress=False, say=print))
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
