"""Which lines of a file dispatch copy kernels, as torch's profiler shows them: every line of the
file that runs opens a profiler range of its own (a line tracer), and each copy kernel the
profiler records is charged to the innermost line range around it, with the bytes it wrote and
its time.

Every copy kernel counts, and each is attributed, from the profiler's own op tree, to what
dispatched it: a **layout copy** when nothing but layout ops stand between it and the line (a
`contiguous`, a `reshape` or `flatten` that cannot be a view, a `clone`, a dtype or device
conversion, a `matmul` or `expand` packing an operand it cannot view as a batch of matrices: a
copy the line asks for), a **kernel-internal copy** when a compute op dispatched it to initialise
its own output (`addmm` writing its bias, a Python number wrapped as a tensor for `mul`): a copy
nobody wrote. A copy kernel inside another (`aten::clone` runs `aten::copy_`) is one copy: the
outermost is counted, its bytes are what its `copy_`s wrote (elements × item size of each
destination; a kernel that writes without `copy_`, such as `cat`, what it allocated), its time is
its own total with its nested kernels (the elements move in `clone`'s nested `copy_`).

The call can be traced over several warm runs in one profiler session (`runs`): each run is a
range of its own, so the copies and the run they are a share of are timed together.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median

from torch.autograd.profiler import profile, record_function

from viewcopy.engine.devices import synchronize
from viewcopy.engine.profiler_events import UNAVAILABLE, DtypesOf, dtype_reader
from viewcopy.engine.profiling import COPY_KERNELS
from viewcopy.engine.quiet import captured_fd2

PREFIX = "viewcopy-line:"
RUN = "viewcopy-run:"
LAYOUT, INTERNAL = "layout", "kernel-internal"
LAYOUT_OPS: frozenset[str] = COPY_KERNELS | {
    "aten::contiguous", "aten::reshape", "aten::flatten", "aten::unflatten", "aten::view",
    "aten::view_as", "aten::expand", "aten::expand_as", "aten::broadcast_to", "aten::matmul",
    "aten::to", "aten::type_as", "aten::_unsafe_view", "aten::_reshape_alias", "aten::cpu",
    "aten::cuda", "aten::float", "aten::double", "aten::half", "aten::bfloat16", "aten::t",
    "aten::transpose", "aten::permute", "aten::select", "aten::slice", "aten::squeeze",
    "aten::unsqueeze", "aten::movedim", "aten::as_strided", "aten::_reshape_copy",
}  # fmt: skip
"""Ops that only move elements or pick a new layout: a copy under nothing else is a layout copy."""
ITEMSIZE = {
    "float": 4, "double": 8, "c10::Half": 2, "c10::BFloat16": 2, "long int": 8, "int": 4,
    "short int": 2, "signed char": 1, "unsigned char": 1, "bool": 1, "c10::complex<float>": 8,
    "c10::complex<double>": 16,
}  # fmt: skip
"""Item sizes of the C++ type names the profiler records as input dtypes."""


@dataclass
class LineCopies:
    """The copy kernels of one kind one line dispatched in one run: which, how many, bytes
    written, seconds spent (the median over the traced runs)."""

    line: int
    kind: str = LAYOUT
    kernels: list[str] = field(default_factory=list)
    count: int = 0
    bytes: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class Trace:
    """What tracing a call found: its value (the last run's), its copies by (line, kind), the
    time of each run and of the copies in it, and what was written to descriptor 2."""

    value: object
    copies: dict[tuple[int, str], LineCopies]
    run_seconds: tuple[float, ...]
    copy_seconds: tuple[float, ...]
    said: list[str]

    def lines(self, kind: str) -> frozenset[int]:
        """The lines that dispatched copies of `kind`."""
        return frozenset(line for line, k in self.copies if k == kind)


@contextmanager
def _line_ranges(filename: str):
    """While active, each line of `filename` that runs is a profiler range named by its number."""
    open_ranges: dict[int, record_function] = {}

    def close(frame) -> None:
        if (current := open_ranges.pop(id(frame), None)) is not None:
            current.__exit__(None, None, None)

    def local(frame, event, arg):
        close(frame)
        if event == "line":
            current = record_function(f"{PREFIX}{frame.f_lineno}")
            current.__enter__()
            open_ranges[id(frame)] = current
        return local

    def start(frame, event, arg):
        return local if frame.f_code.co_filename == filename else None

    previous = sys.gettrace()
    sys.settrace(start)
    try:
        yield
    finally:
        sys.settrace(previous)
        for current in reversed(list(open_ranges.values())):
            current.__exit__(None, None, None)


def trace_copies(
    call: Callable[[], object], filename: str | Path, device: str = "cpu", runs: int = 1
) -> Trace:
    """Run `call` `runs` times in one profiler session; the copies by line of `filename`, each
    run's time and its copies' time, and what was written to descriptor 2 meanwhile (the
    profiler's own log lines, and whatever the call wrote there: nothing reaches the real
    stderr, so graded cells stay silent), with profiler_events.UNAVAILABLE last where this
    torch's profiler records no dtypes. Warm the call up first: the first run of a model pays
    for allocations and kernel selection that no later run does."""
    target = str(Path(filename).resolve())
    use_device = None if device == "cpu" else device
    watch = profile(record_shapes=True, profile_memory=True, use_device=use_device)
    with captured_fd2() as said, watch as prof:
        for number in range(runs):
            with record_function(f"{RUN}{number}"), _line_ranges(target):
                value = call()
            synchronize(device)
    dtypes_of = dtype_reader(prof)
    if dtypes_of is None:
        said.append(UNAVAILABLE)
    per_run: list[dict[tuple[int, str], LineCopies]] = [{} for _ in range(runs)]
    run_seconds = [0.0] * runs
    for event in prof.function_events:
        if event.name.startswith(RUN):
            run_seconds[int(event.name.removeprefix(RUN))] = _seconds(event, use_device)
            continue
        if event.name not in COPY_KERNELS or _inside_copy(event):
            continue
        line, run, kind = _placed(event)
        if line is None or run is None:
            continue
        row = per_run[run].setdefault((line, kind), LineCopies(line, kind))
        row.kernels += [] if event.name in row.kernels else [event.name]
        row.count += 1
        row.bytes += _bytes_written(event, dtypes_of)
        row.seconds += _seconds(event, use_device)
    copies = {key: _median_row([rows[key] for rows in per_run if key in rows], runs)
              for key in sorted({key for rows in per_run for key in rows})}  # fmt: skip
    copy_seconds = tuple(sum(row.seconds for row in rows.values()) for rows in per_run)
    return Trace(value, copies, tuple(run_seconds), copy_seconds, said)


def _seconds(event, use_device: str | None) -> float:
    return (event.device_time_total if use_device else event.cpu_time_total) / 1e6


def _median_row(rows: list[LineCopies], runs: int) -> LineCopies:
    """One run's copies of a line: the count and bytes of a run, the median time over runs."""
    first = rows[0]
    times = [row.seconds for row in rows] + [0.0] * (runs - len(rows))
    kernels = list(dict.fromkeys(k for row in rows for k in row.kernels))
    return LineCopies(first.line, first.kind, kernels, first.count, first.bytes, median(times))


def _placed(event) -> tuple[int | None, int | None, str]:
    """The line and run a copy kernel ran in, and whether it is a layout copy: only layout ops
    stand between it and its line."""
    kind, line, run = LAYOUT, None, None
    parent = event.cpu_parent
    while parent is not None:
        if parent.name.startswith(PREFIX):
            line = int(parent.name.removeprefix(PREFIX)) if line is None else line
        elif parent.name.startswith(RUN):
            run = int(parent.name.removeprefix(RUN))
        elif line is None and parent.name not in LAYOUT_OPS:
            kind = INTERNAL
        parent = parent.cpu_parent
    return line, run, kind


def _inside_copy(event) -> bool:
    parent = event.cpu_parent
    while parent is not None and not parent.name.startswith(PREFIX):
        if parent.name in COPY_KERNELS:
            return True
        parent = parent.cpu_parent
    return False


def _bytes_written(event, dtypes_of: DtypesOf | None) -> int:
    """What the copy wrote: each `aten::copy_` in it (or it) writes its destination (0 where the
    profiler gave no dtype for it)."""
    copies = [event] if event.name == "aten::copy_" else []
    stack = list(event.cpu_children)
    while stack:
        child = stack.pop()
        copies += [child] if child.name == "aten::copy_" else []
        stack += child.cpu_children
    if not copies:  # a copy kernel that writes without copy_ (cat, index): what it allocated
        return max(event.cpu_memory_usage, event.device_memory_usage, 0)
    written = 0
    for copy in copies:
        dtypes = dtypes_of(copy) if dtypes_of is not None else None
        shape, dtype = copy.input_shapes[0], dtypes[0] if dtypes else None
        numel = 1
        for size in shape:
            numel *= size
        written += numel * ITEMSIZE.get(dtype, 0)
    return written
