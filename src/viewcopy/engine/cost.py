"""What a copy costs: a view, two layout copies and a conv in both layouts, measured side by side.

Every row is measured here, on this machine: the bytes the call kept (CPU: the profiler's memory
events; CUDA: the allocator's counter), the copy kernels the profiler saw, and the median time of
timed runs after a warm-up. Bandwidth is the least traffic the call must move (read plus write)
over that time, compared with the copy floor (`copy_floor`): the fastest a plain `dst.copy_(src)`
into memory that already exists ran here (a copy returning a new tensor also pays to allocate and
first touch it), with the spread of its runs, which says whether the machine was too busy for any
bandwidth measured beside it to be read against it.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import torch
import torch.nn.functional as F

from viewcopy.engine.devices import allocated_bytes, resolve_devices, synchronize
from viewcopy.engine.profiling import profiled

SEED = 0
CPU_CONV_BUDGET_S = 0.5
"""On CPU the batch is halved until one conv takes less than this (the report says so)."""
PLAIN_COPY = "plain copy: dst.copy_(x)"
FLOOR_BYTES = {"cpu": 128 * 10**6, "mps": 128 * 10**6, "cuda": 256 * 10**6}
"""The bytes a floor copy reads at the least, above the device's caches: on this lab's 2-core CI
machine a copy of 64 MB ran up to 1.6 times as fast as one of 128 MB, which ran as one of 256 MB;
an H200's L2 holds 50 MB."""
FLOOR_ROUNDS = 5
ROUND_RUNS = 5
"""Timed runs per round at the bytes measured (one at FLOOR_BYTES, some milliseconds long on CPU),
for each thread count: the floor is the fastest, for load only ever slows a run down, and a run a
copy or two long escapes the load that stalls most copies beside it. Beside a CPU hog on this lab's
2-core CI machine a 197 KB copy ran at 8 to 40 GB/s on torch's two threads, for spells of a second,
and at 80 to 90 GB/s on one."""
FLOOR_RUN_BYTES = {"cpu": 256 * 10**3, "mps": 256 * 10**6, "cuda": 10**9}
"""The bytes each timed run copies at the least, a small copy repeated (FLOOR_REPS times at
most): on CPU some microseconds, a thousand times what perf_counter resolves, yet as short as a
copy (runs of 64 MB, a 197 KB copy repeated, each read beside a CPU hog as low as an eighth of
what single copies timed between them reached); on a GPU a tenth of a millisecond or more,
against a coarser timer."""
FLOOR_REPS = 100
BUSY_SPREAD = 2.0
"""The calmest series' median run over its fastest beyond which most runs were slowed by other
work (at rest this lab's CI machine kept it under 1.5), and so the fastest may have been too."""
PLAUSIBLE_GBS = 1.0
"""A floor below this is the machine's load, not its memory: any device torch runs on copies
faster."""
FLOOR_TOLERANCE = 0.25
"""How far past the floor a bandwidth may read and still be shown: a call timed alone can catch
the machine at a better moment than the floor's runs did. On this lab's 2-core CI machine a plain
copy timed call by call reached up to 1.02 of the floor at rest and 1.19 beside other work; past
1.25 the floor is the machine's load, not what a copy can do, and no share of it is shown."""


@dataclass(frozen=True)
class CopyFloor:
    """The fastest a plain `dst.copy_(src)` ran here, read plus write, in GB/s (`gbs`), and the
    `spread` of its calmest series of runs (one size, one thread count): the median run's time over
    the fastest's. Where every series spread wide, other work slowed most runs, and so perhaps the
    fastest: a series on two threads alone can (beside other work on two cores, a 197 KB copy on
    two threads waited milliseconds for its second core in most runs, on one thread in none)."""

    device: str
    gbs: float
    spread: float

    @property
    def too_busy(self) -> bool:
        """Whether other work slowed the floor's runs (a wide spread, an implausibly low floor)."""
        return not (self.gbs >= PLAUSIBLE_GBS and self.spread <= BUSY_SPREAD)

    def share(self, gbs: float) -> float:
        """`gbs` as a share of the floor, NaN where there is no floor."""
        return gbs / self.gbs if self.gbs else math.nan

    def compares(self, rates: Iterable[float]) -> bool:
        """Whether `rates` can be read against this floor: the machine was not too busy to measure
        it, and none beats it by more than FLOOR_TOLERANCE (a NaN rate was not measured)."""
        return not self.too_busy and not any(self.share(r) > 1 + FLOOR_TOLERANCE for r in rates)


@dataclass(frozen=True)
class CostRow:
    """One call measured: what it kept, which copy kernels ran, how fast it moved its bytes."""

    name: str
    code: str
    bytes_allocated: int
    copy_kernels: tuple[str, ...]
    median_s: float
    bandwidth_gbs: float
    of_floor: float


@dataclass(frozen=True)
class CostReport:
    """All rows on one device and shape; `scaled_from` is the shape asked for when scaled down."""

    device: str
    shape: tuple[int, ...]
    scaled_from: tuple[int, ...] | None
    rows: tuple[CostRow, ...]
    floor: CopyFloor


@dataclass(frozen=True)
class _Case:
    name: str
    code: str
    call: Callable[[], torch.Tensor]
    moved: Callable[[torch.Tensor], int]
    """Bytes the call must read and write, given its result."""


def _nbytes(tensor: torch.Tensor) -> int:
    return tensor.numel() * tensor.element_size()


def _cases(x: torch.Tensor, weight: torch.Tensor) -> list[_Case]:
    """The calls to compare, on `x` (NCHW) and a conv weight, and a plain copy timed like them."""
    x_cl = x.contiguous(memory_format=torch.channels_last)
    w_cl = weight.contiguous(memory_format=torch.channels_last)
    dst = torch.empty_like(x)
    conv_in = _nbytes(x) + _nbytes(weight)
    copied = 2 * _nbytes(x)
    return [
        _Case("view: permute", "x.permute(0, 2, 3, 1)", lambda: x.permute(0, 2, 3, 1), lambda r: 0),
        _Case(
            "copy: permute + contiguous",
            "x.permute(0, 2, 3, 1).contiguous()",
            lambda: x.permute(0, 2, 3, 1).contiguous(),
            lambda r: 2 * _nbytes(r),
        ),
        _Case(
            "copy: channels_last",
            "x.contiguous(memory_format=torch.channels_last)",
            lambda: x.contiguous(memory_format=torch.channels_last),
            lambda r: 2 * _nbytes(r),
        ),
        _Case(
            "conv 3x3, NCHW",
            "F.conv2d(x, w, padding=1)",
            lambda: F.conv2d(x, weight, padding=1),
            lambda r: conv_in + _nbytes(r),
        ),
        _Case(
            "conv 3x3, channels-last",
            "F.conv2d(x_cl, w_cl, padding=1)",
            lambda: F.conv2d(x_cl, w_cl, padding=1),
            lambda r: conv_in + _nbytes(r),
        ),
        _Case(PLAIN_COPY, "dst.copy_(x)", lambda: dst.copy_(x), lambda r: copied),
    ]


def _inputs(shape: tuple[int, ...], device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """A seeded float32 activation and a seeded 3x3 conv weight (channels in = channels out)."""
    generator = torch.Generator().manual_seed(SEED)
    x = torch.randn(shape, generator=generator)
    weight = torch.randn((shape[1], shape[1], 3, 3), generator=generator) / (3 * shape[1] ** 0.5)
    return x.to(device), weight.to(device)


def _seconds(call: Callable[[], object], device: str) -> float:
    """Wall time of one call, settled: CUDA events on CUDA, perf_counter elsewhere."""
    synchronize(device)
    if device == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1000
    start_s = time.perf_counter()
    call()
    synchronize(device)
    return time.perf_counter() - start_s


def _conv_fits(shape: tuple[int, ...], device: str, tries: int = 3) -> bool:
    """Whether an NCHW conv on `shape`, after a warm-up, runs within CPU_CONV_BUDGET_S in one of
    `tries` timed runs (so that one run slowed by another process on the machine does not scale
    the batch down); it stops at the first that does."""
    x, weight = _inputs(shape, device)
    F.conv2d(x, weight, padding=1)

    def conv() -> torch.Tensor:
        return F.conv2d(x, weight, padding=1)

    return any(_seconds(conv, device) <= CPU_CONV_BUDGET_S for _ in range(tries))


def _fitting_shape(shape: tuple[int, ...], device: str) -> tuple[int, ...]:
    """On CPU, halve the batch until one conv runs within CPU_CONV_BUDGET_S."""
    while device == "cpu" and shape[0] > 1 and not _conv_fits(shape, device):
        shape = (shape[0] // 2, *shape[1:])
    return shape


def _measure(case: _Case, device: str, repeats: int) -> CostRow:
    """One row, warmed up, profiled once, then timed; `of_floor` is NaN until compared."""
    case.call()
    synchronize(device)
    before = allocated_bytes(device)
    result, profile, error = profiled(case.call)
    if error is not None:
        raise error
    synchronize(device)
    after = allocated_bytes(device)
    kept = profile.cpu_bytes if before is None else after - before
    median_s = statistics.median(_seconds(case.call, device) for _ in range(repeats))
    gbs = case.moved(result) / median_s / 1e9
    return CostRow(case.name, case.code, kept, profile.copy_kernels, median_s, gbs, math.nan)


def copy_floor(nbytes: int, device: str = "cpu") -> CopyFloor:
    """The floor for copies of `nbytes`: the fastest timed run of `dst.copy_(src)` at `nbytes` and
    at FLOOR_BYTES, on CPU with torch's threads and then with one, and the spread of the calmest of
    those series. Each of FLOOR_ROUNDS rounds times ROUND_RUNS runs at `nbytes` and one at
    FLOOR_BYTES, so that the short runs are spread over the long ones' time."""
    sizes = [max(nbytes, 4), *([FLOOR_BYTES[device]] if FLOOR_BYTES[device] > nbytes else [])]
    copies = [_TimedCopy(size, device) for size in sizes]
    series = []
    for threads in _thread_counts(device):
        with _intra_op_threads(threads):
            series += _rounds(copies)
    return CopyFloor(device, max(r.gbs for r in series), min(r.spread for r in series))


def _rounds(copies: list[_TimedCopy]) -> list[_Runs]:
    """FLOOR_ROUNDS rounds of ROUND_RUNS runs of the first copy and one of each other."""
    series = [_Runs(copy, ROUND_RUNS if copy is copies[0] else 1) for copy in copies]
    for _ in range(FLOOR_ROUNDS):
        for runs in series:
            runs.seconds += [runs.copy.run_seconds() for _ in range(runs.per_round)]
    return series


@contextmanager
def _intra_op_threads(threads: int) -> Iterator[None]:
    """torch's intra-op threads set to `threads`, then back (switching them back and forth between
    runs left a copy on two threads waiting milliseconds for its second)."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class _TimedCopy:
    """A plain `dst.copy_(src)` of `nbytes` into memory that already exists, timed `reps` copies
    to a run."""

    def __init__(self, nbytes: int, device: str):
        self.src = torch.ones(nbytes // 4, device=device)
        self.dst = torch.empty_like(self.src)
        self.dst.copy_(self.src)
        self.device, self.nbytes = device, _nbytes(self.src)
        self.reps = min(FLOOR_REPS, math.ceil(FLOOR_RUN_BYTES[device] / self.nbytes))

    def run_seconds(self) -> float:
        """One timed run: the seconds per copy."""

        def run() -> None:
            for _ in range(self.reps):
                self.dst.copy_(self.src)

        return _seconds(run, self.device) / self.reps


@dataclass
class _Runs:
    """The runs of one copy timed so far, `per_round` a round."""

    copy: _TimedCopy
    per_round: int
    seconds: list[float] = field(default_factory=list)

    @property
    def gbs(self) -> float:
        """Read plus write over the fastest run, in GB/s."""
        return 2 * self.copy.nbytes / min(self.seconds) / 1e9

    @property
    def spread(self) -> float:
        return statistics.median(self.seconds) / min(self.seconds)


def _thread_counts(device: str) -> tuple[int, ...]:
    """torch's intra-op threads and, on CPU, one: beside other work a copy split over threads
    waits for the busiest core, where one thread does not."""
    threads = torch.get_num_threads()
    return (threads, 1) if device == "cpu" and threads > 1 else (threads,)


def measure_costs(
    device: str = "cpu", shape: tuple[int, ...] = (32, 64, 56, 56), repeats: int = 7
) -> CostReport:
    """Measure every case on `device` (raises DeviceUnavailable when absent)."""
    (device,) = resolve_devices(device)
    asked = tuple(shape)
    shape = _fitting_shape(asked, device)
    x, weight = _inputs(shape, device)
    measured = [_measure(case, device, repeats) for case in _cases(x, weight)]
    floor = copy_floor(_nbytes(x), device)
    rows = tuple(replace(row, of_floor=floor.share(row.bandwidth_gbs)) for row in measured)
    return CostReport(device, shape, asked if shape != asked else None, rows, floor)
