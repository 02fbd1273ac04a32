"""What a copy costs: a view, two layout copies and a conv in both layouts, measured side by side.

Every row is measured here, on this machine: the bytes the call kept (CPU: the profiler's memory
events; CUDA: the allocator's counter), the copy kernels the profiler saw, and the median time of
timed runs after a warm-up. Bandwidth is the least traffic the call must move (read plus write)
over that time, compared with the floor: a plain `dst.copy_(src)` of the same bytes into memory
that already exists (a copy returning a new tensor also pays to allocate and first touch it).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F

from viewcopy.engine.devices import allocated_bytes, resolve_devices, synchronize
from viewcopy.engine.profiling import profiled

SEED = 0
CPU_CONV_BUDGET_S = 0.5
"""On CPU the batch is halved until one conv takes less than this (the report says so)."""
FLOOR = "floor: dst.copy_(x)"


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
    floor_gbs: float


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
    """The calls to compare, on `x` (NCHW) and a conv weight, plus the floor."""
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
        _Case(FLOOR, "dst.copy_(x)", lambda: dst.copy_(x), lambda r: copied),
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


def _conv_seconds(shape: tuple[int, ...], device: str, tries: int = 3) -> float:
    """An NCHW conv on `shape` after a warm-up: the fastest of `tries` timed runs, so that one
    run slowed by another process on the machine does not scale the batch down."""
    x, weight = _inputs(shape, device)
    F.conv2d(x, weight, padding=1)
    return min(_seconds(lambda: F.conv2d(x, weight, padding=1), device) for _ in range(tries))


def _fitting_shape(shape: tuple[int, ...], device: str) -> tuple[int, ...]:
    """On CPU, halve the batch until one conv runs within CPU_CONV_BUDGET_S."""
    while device == "cpu" and shape[0] > 1 and _conv_seconds(shape, device) > CPU_CONV_BUDGET_S:
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


def copy_floor_gbs(nbytes: int, device: str = "cpu", repeats: int = 7) -> float:
    """The floor the cost table compares with, at `nbytes`: `dst.copy_(src)` into memory that
    already exists, read plus write over the median time of warm runs, in GB/s."""
    src = torch.empty(max(nbytes, 4) // 4, device=device).uniform_()
    dst = torch.empty_like(src)
    dst.copy_(src)
    median_s = statistics.median(_seconds(lambda: dst.copy_(src), device) for _ in range(repeats))
    return 2 * _nbytes(src) / median_s / 1e9


def measure_costs(
    device: str = "cpu", shape: tuple[int, ...] = (32, 64, 56, 56), repeats: int = 7
) -> CostReport:
    """Measure every case on `device` (raises DeviceUnavailable when absent)."""
    (device,) = resolve_devices(device)
    asked = tuple(shape)
    shape = _fitting_shape(asked, device)
    measured = [_measure(case, device, repeats) for case in _cases(*_inputs(shape, device))]
    floor_gbs = next(row.bandwidth_gbs for row in measured if row.name == FLOOR)
    rows = tuple(replace(row, of_floor=row.bandwidth_gbs / floor_gbs) for row in measured)
    return CostReport(device, shape, asked if shape != asked else None, rows, floor_gbs)
