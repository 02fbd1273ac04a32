"""Which lines of a file dispatch copy kernels, as torch's profiler shows them: every line of the
file that runs opens a profiler range of its own (a line tracer), and each copy kernel the
profiler records is charged to the innermost line range around it, with the bytes it wrote and
its time.

Every copy kernel counts, including those a kernel runs inside itself (an `addmm` writing its
bias into its output with `aten::copy_`, a Python number turned into a tensor): the list a
profile shows in production. A copy kernel inside another (`aten::clone` runs `aten::copy_`) is
one copy: the outermost is counted, its bytes are what its `copy_`s wrote (elements × item size of
each destination; a kernel that writes without `copy_`, such as `cat`, what it allocated), its
time is its own total with its nested kernels (the elements move in `clone`'s nested `copy_`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from torch.autograd.profiler import profile, record_function

from viewcopy.engine.profiler_events import UNAVAILABLE, DtypesOf, dtype_reader
from viewcopy.engine.profiling import COPY_KERNELS
from viewcopy.engine.quiet import captured_fd2

PREFIX = "viewcopy-line:"
ITEMSIZE = {
    "float": 4, "double": 8, "c10::Half": 2, "c10::BFloat16": 2, "long int": 8, "int": 4,
    "short int": 2, "signed char": 1, "unsigned char": 1, "bool": 1, "c10::complex<float>": 8,
    "c10::complex<double>": 16,
}  # fmt: skip
"""Item sizes of the C++ type names the profiler records as input dtypes."""


@dataclass
class LineCopies:
    """The copy kernels one line dispatched: which, how many, bytes written, seconds spent."""

    line: int
    kernels: list[str] = field(default_factory=list)
    count: int = 0
    bytes: int = 0
    seconds: float = 0.0


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


def trace_copies(call: Callable[[], object], filename: str | Path, device: str = "cpu"):
    """Run `call` under the profiler; return its value, the copies by line of `filename`, and
    what was written to descriptor 2 meanwhile (the profiler's own log lines, and whatever the
    call wrote there: nothing reaches the real stderr, so graded cells stay silent), with
    profiler_events.UNAVAILABLE last where this torch's profiler records no dtypes."""
    target = str(Path(filename).resolve())
    use_device = None if device == "cpu" else device
    watch = profile(record_shapes=True, profile_memory=True, use_device=use_device)
    with captured_fd2() as said, watch as prof, _line_ranges(target):
        value = call()
    dtypes_of = dtype_reader(prof)
    if dtypes_of is None:
        said.append(UNAVAILABLE)
    lines: dict[int, LineCopies] = {}
    for event in prof.function_events:
        if event.name not in COPY_KERNELS or _inside_copy(event):
            continue
        line = _line_of(event)
        if line is None:
            continue
        row = lines.setdefault(line, LineCopies(line))
        row.kernels += [] if event.name in row.kernels else [event.name]
        row.count += 1
        row.bytes += _bytes_written(event, dtypes_of)
        total = event.device_time_total if use_device else event.cpu_time_total
        row.seconds += total / 1e6
    return value, dict(sorted(lines.items())), said


def _inside_copy(event) -> bool:
    parent = event.cpu_parent
    while parent is not None and not parent.name.startswith(PREFIX):
        if parent.name in COPY_KERNELS:
            return True
        parent = parent.cpu_parent
    return False


def _line_of(event) -> int | None:
    parent = event.cpu_parent
    while parent is not None:
        if parent.name.startswith(PREFIX):
            return int(parent.name.removeprefix(PREFIX))
        parent = parent.cpu_parent
    return None


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
