"""How long `viewcopy grade` lets one cell and one hand-in run, derived from the master's own
graded run unless the instructor sets them (`--cell-limit` or `c.Execute.timeout` in the course's
nbgrader_config.py; `--limit`).

The master notebook (`source/<assignment>/<notebook>.ipynb`, solutions and hidden tests included)
runs once as a hand-in does: a fresh kernel in the same sandbox, `NBGRADER_EXECUTION=autograde`,
every cell (a hand-in its student never ran measures them all too). What it took, the whole run
from the kernel's start and its slowest cell, is kept in the course
(`grade_logs/<assignment>/master_run.json`) and on this machine (`$XDG_CACHE_HOME/viewcopy/`,
default `~/.cache/viewcopy/`), keyed by the master's bytes, the machine, torch's version and the
sandbox: a changed master, torch or machine is measured again; a course built from the same master
on the same machine is not.

Here the master runs in about 5 s, its slowest cell (a cold `import torch`) in about 2 s; a hand-in
grades in about 5 s. The limits stop a hang, never a slow grader:
- per cell (`Execute.timeout`): 20 times the master's slowest cell, at least 60 s. A busy 2-core
  grader runs one kernel per core, each under a one-core quota, beside nbgrader and the other
  kernels' imports: a cold start there is 3 to 5 times slower than alone; 60 s leaves that 10 times
  over. nbgrader interrupts a cell past it: the cell scores nothing and the rest runs.
- per hand-in (`--limit`): 20 times the master's whole run, at least 180 s: the same margin, and
  room for a couple of interrupted cells before the hand-in fails.
- a grader with CUDA (torch.cuda.is_available(), or `--devices cuda` on a cluster) adds 120 s to
  both: the first CUDA call creates the context and loads its kernels, tens of seconds cold, and
  the master measured here may not have paid it.
So an endless loop costs a few minutes where it cost 900 s, and a hand-in that is merely slow
stays far inside both.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import platform
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from viewcopy.course.folder import Course
from viewcopy.files.atomic import write_atomically
from viewcopy.grading.record import GradeError
from viewcopy.sandbox.bubblewrap import bwrap_problem, readable_paths
from viewcopy.sandbox.limits import Limits

CELL_FACTOR, CELL_FLOOR_S = 20, 60
HAND_IN_FACTOR, HAND_IN_FLOOR_S = 20, 180
CUDA_START_S = 120
"""What the first CUDA call may take on a cold, busy grader."""
MEASURE_TIMEOUT_S = 600
"""How long one of the master's cells may run while it is measured."""
KEPT = "master_run.json"


@dataclass(frozen=True)
class MasterRun:
    """What the master's graded run took: the whole run (kernel start included) and its slowest
    cell, in seconds, and what it was measured for (`key`)."""

    key: str
    total_s: float
    slowest_cell_s: float


@dataclass(frozen=True)
class Limit:
    """One limit, in seconds, and where it comes from (said on the first line)."""

    seconds: int
    source: str


@dataclass(frozen=True)
class GradingLimits:
    """The two limits a run grades under."""

    cell: Limit
    hand_in: Limit

    def describe(self) -> str:
        return (
            f"time: {self.cell.seconds} s per cell ({self.cell.source}), "
            f"{self.hand_in.seconds} s per hand-in ({self.hand_in.source})"
        )


def grading_limits(
    course: Course,
    assignment: str,
    *,
    hand_in_s: float | None,
    cell_s: float | None,
    sandbox: Limits | None,
    cuda: bool,
) -> GradingLimits:
    """The run's limits: `hand_in_s` (`--limit`) and `cell_s` (`--cell-limit`, else the course's
    `Execute.timeout`) where set, else derived from the master's run (measured only then)."""
    if cell_s is not None:
        cell = Limit(math.ceil(cell_s), "set by --cell-limit")
    elif (configured := _configured_timeout(course)) is not None:
        cell = Limit(configured, "set by Execute.timeout in nbgrader_config.py")
    else:
        cell = None
    hand_in = Limit(math.ceil(hand_in_s), "set by --limit") if hand_in_s is not None else None
    if cell is None or hand_in is None:
        derived = derive(master_run(course, assignment, sandbox), cuda)
        cell, hand_in = cell or derived.cell, hand_in or derived.hand_in
    return GradingLimits(cell, hand_in)


def past_limit(limit: Limit) -> str:
    """Why a hand-in still running after `limit` failed."""
    return (
        f"still running after the {limit.seconds} s limit for one submission ({limit.source}): "
        "an endless loop or a hang; its kernel was killed"
    )


def derive(run: MasterRun, cuda: bool) -> GradingLimits:
    """The default limits for a master that ran as `run` (the module's docstring says why)."""
    extra = CUDA_START_S if cuda else 0
    allowance = f" + {CUDA_START_S} s for a cold CUDA start" if cuda else ""
    cell = max(CELL_FLOOR_S, math.ceil(CELL_FACTOR * run.slowest_cell_s)) + extra
    hand_in = max(HAND_IN_FLOOR_S, math.ceil(HAND_IN_FACTOR * run.total_s)) + extra
    slowest = f"derived from the master's slowest cell of {run.slowest_cell_s:.1f} s"
    whole = f"derived from the master's run of {run.total_s:.1f} s"
    return GradingLimits(Limit(cell, slowest + allowance), Limit(hand_in, whole + allowance))


def _configured_timeout(course: Course) -> int | None:
    """The course's own `c.Execute.timeout`, if its config sets one."""
    execute = course.config.get("Execute", {})
    return int(execute["timeout"]) if "timeout" in execute else None


def master_key(course: Course, assignment: str, sandboxed: bool) -> str:
    """What a measurement holds for: the master's bytes, this machine, torch, the sandbox."""
    master = course.master(assignment)
    if not master.is_file():
        raise GradeError(
            f"{master} is missing: the limits are derived from the master's run; restore it, or "
            "set both --limit and --cell-limit"
        )
    try:
        torch = version("torch")
    except PackageNotFoundError:
        torch = "none"
    parts = [hashlib.sha256(master.read_bytes()).hexdigest(), platform.node(), torch]
    return hashlib.sha256("\n".join([*parts, str(sandboxed)]).encode()).hexdigest()


def kept_in_course(course: Course, assignment: str) -> Path:
    return course.grade_logs(assignment) / KEPT


def kept_on_machine(key: str) -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "viewcopy" / "master_runs" / f"{key}.json"


def master_run(course: Course, assignment: str, sandbox: Limits | None) -> MasterRun:
    """The master's run as kept in the course or on this machine for its key, else measured now
    (and kept in both)."""
    sandboxed = sandbox is not None and bwrap_problem() is None
    key = master_key(course, assignment, sandboxed)
    places = (kept_in_course(course, assignment), kept_on_machine(key))
    for place in places:
        if (kept := _read(place)) is not None and kept.key == key:
            break
    else:
        kept = measure_master(course, assignment, key, sandbox if sandboxed else None)
    for place in places:
        if _read(place) != kept:
            _write(place, kept)
    return kept


def _read(path: Path) -> MasterRun | None:
    with contextlib.suppress(OSError, ValueError, TypeError):
        return MasterRun(**json.loads(path.read_text()))
    return None


def _write(path: Path, run: MasterRun) -> None:
    """Whole or not at all: two runs measuring at once each replace the file in one rename."""
    write_atomically(path, json.dumps(asdict(run), indent=1))


def measure_master(course: Course, assignment: str, key: str, sandbox: Limits | None) -> MasterRun:
    """Run the master's folder in a fresh kernel (in the sandbox, under `sandbox`), as autograde
    runs a hand-in; GradeError when it cannot run."""
    import nbformat
    from nbclient import NotebookClient
    from nbgrader.utils import setenv

    notebook = nbformat.read(course.master(assignment), as_version=4)
    started: dict[int, float] = {}
    cells: list[float] = []

    def before(cell_index: int, **_) -> None:
        started[cell_index] = time.perf_counter()

    def after(cell_index: int, **_) -> None:
        cells.append(time.perf_counter() - started[cell_index])

    with tempfile.TemporaryDirectory(prefix="viewcopy-master-") as scratch:
        copy = Path(scratch) / assignment
        shutil.copytree(course.master(assignment).parent, copy)
        client = NotebookClient(
            notebook,
            km=_kernel_manager(course, sandbox, notebook.metadata.kernelspec.name),
            timeout=MEASURE_TIMEOUT_S,
            allow_errors=True,
            resources={"metadata": {"path": str(copy)}},
            on_cell_execute=before,
            on_cell_executed=after,
        )
        began = time.perf_counter()
        try:
            with setenv(NBGRADER_EXECUTION="autograde"):  # its output is nobody's to read
                client.execute(  # cleanup_kc: shut down, though the manager is ours
                    cleanup_kc=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                )
        except Exception as exc:
            raise GradeError(
                f"the master {course.master(assignment)} could not run to measure the "
                f"default limits ({type(exc).__name__}: {exc}); fix it, or set both --limit and "
                "--cell-limit"
            ) from None
        total = time.perf_counter() - began
    return MasterRun(key, round(total, 3), round(max(cells, default=total), 3))


def _kernel_manager(course: Course, sandbox: Limits | None, kernel: str):
    if sandbox is None:
        from viewcopy.sandbox.unix_sockets import UnixSocketKernelManager

        return UnixSocketKernelManager(kernel_name=kernel)
    from viewcopy.sandbox.kernel_manager import SandboxedKernelManager

    return SandboxedKernelManager(
        kernel_name=kernel, readable=readable_paths(course.data), limits=dict(sandbox.__dict__)
    )
