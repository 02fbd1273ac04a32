"""A model in production: a small vision transformer written with `view`, `transpose`, `reshape`
and `permute`, whose forward students read line by line and predict which lines dispatch a copy,
before one call profiles it and charges every copy kernel to its line.

Random weights (seeded), nothing downloaded. The copies are measured (engine.copy_trace), never
typed: whether a line copies is whatever the dispatcher says on the machine running it.
"""

from __future__ import annotations

import functools
import inspect
import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass

import torch
from torch import nn

from viewcopy.engine.copy_trace import INTERNAL, LAYOUT, LineCopies, trace_copies
from viewcopy.engine.cost import CopyFloor, copy_floor
from viewcopy.engine.devices import synchronize
from viewcopy.engine.profiler_events import UNAVAILABLE

INPUT_SHAPE = (8, 3, 32, 32)
WARM_UP = 2
"""Forwards run before any is profiled or timed."""
RUNS = 5
"""Warm forwards profiled in one session: the medians the profile shows."""


class TinyVisionTransformer(nn.Module):
    """A conv stem, one attention block and a classifier head."""

    def __init__(self, channels: int = 32, heads: int = 4, classes: int = 10):
        super().__init__()
        self.heads = heads
        self.stem = nn.Conv2d(3, channels, kernel_size=4, stride=4)
        self.qkv = nn.Linear(channels, 3 * channels)
        self.proj = nn.Linear(channels, channels)
        self.head = nn.Linear(channels, classes)

    def forward(self, images):
        x = self.stem(images)
        b, c, h, w = x.shape
        tokens = x.flatten(2).transpose(1, 2)
        tokens = tokens.contiguous()
        qkv = self.qkv(tokens).view(b, h * w, 3, self.heads, c // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        attention = (q @ k.transpose(-2, -1)) * (c // self.heads) ** -0.5
        mixed = attention.softmax(dim=-1) @ v
        mixed = mixed.transpose(1, 2).reshape(b, h * w, c)
        pooled = self.proj(mixed).mean(dim=1)
        return self.head(pooled.to(torch.float32))


def forward_listing() -> list[tuple[int, str]]:
    """The forward's body, numbered from 1 as students see it."""
    lines, _ = inspect.getsourcelines(TinyVisionTransformer.forward)
    return [(n, line.strip()) for n, line in enumerate(lines[1:], start=1)]


@dataclass(frozen=True)
class ProductionProfile:
    """The forward's copies by listed line, split by what dispatched them (engine.copy_trace):
    the layout copies (`lines`, what PRODUCTION predicts) and the kernel-internal ones
    (`internal`: copies nobody wrote, shown, not graded); the forward's time and its copies' time
    in the same profiled warm runs (medians), and the copy floor to read a line's bandwidth by
    (measured after them, at the most bytes one copy moved)."""

    device: str
    lines: Mapping[int, LineCopies]
    internal: Mapping[int, LineCopies]
    forward_s: float
    copy_s: float
    runs: int
    floor: CopyFloor

    @property
    def share(self) -> float:
        """The copies' share of the forward they ran in (at most 1; NaN for a forward timed 0)."""
        return self.copy_s / self.forward_s if self.forward_s else math.nan

    def verdict(self, number: int) -> str:
        return "copy" if number in self.lines else "no copy"

    def bandwidth_gbs(self, row: LineCopies) -> float:
        """What a line's copies moved (read plus write) over their time, in GB/s."""
        return 2 * row.bytes / row.seconds / 1e9 if row.seconds else math.nan


def build(device: str = "cpu") -> tuple[TinyVisionTransformer, torch.Tensor]:
    """The model and an input batch, seeded, on `device`."""
    generator = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    model = TinyVisionTransformer().to(device).eval()
    images = torch.randn(INPUT_SHAPE, generator=generator).to(device)
    return model, images


def profile_forward(device: str = "cpu", runs: int = RUNS) -> ProductionProfile:
    """Warm forwards, then `runs` forwards in one profiler session: every copy charged to its
    line and attributed, each run timed with its copies; medians over the runs."""
    model, images = build(device)
    with torch.no_grad():
        trace = _traced(model, images, device, runs)
    if UNAVAILABLE in trace.said:  # an untested torch: say it in one line, on stdout
        print(UNAVAILABLE)
    _, start = inspect.getsourcelines(TinyVisionTransformer.forward)
    rows = {kind: {line - start: row for (line, k), row in trace.copies.items() if k == kind}
            for kind in (LAYOUT, INTERNAL)}  # fmt: skip
    moved = max((row.bytes for row in trace.copies.values()), default=0)
    return ProductionProfile(
        device, rows[LAYOUT], rows[INTERNAL], statistics.median(trace.run_seconds),
        statistics.median(trace.copy_seconds), runs, copy_floor(moved, device),
    )  # fmt: skip


@functools.cache
def copy_lines(device: str = "cpu") -> frozenset[int]:
    """The listed lines whose forward dispatches a layout copy, measured once per process."""
    return _attributed_lines(device, LAYOUT)


@functools.cache
def internal_copy_lines(device: str = "cpu") -> frozenset[int]:
    """The listed lines whose compute ops copy inside themselves (not graded)."""
    return _attributed_lines(device, INTERNAL)


def _attributed_lines(device: str, kind: str) -> frozenset[int]:
    model, images = build(device)
    _, start = inspect.getsourcelines(TinyVisionTransformer.forward)
    with torch.no_grad():
        trace = _traced(model, images, device, runs=1)
    return frozenset(line - start for line in trace.lines(kind))


def _traced(model: TinyVisionTransformer, images: torch.Tensor, device: str, runs: int):
    """The forward traced over `runs` warm runs (two forwards first: allocations, kernel choice)."""
    for _ in range(WARM_UP):
        model(images)
    synchronize(device)
    return trace_copies(lambda: model(images), _source(), device, runs)


def _source() -> str:
    return inspect.getsourcefile(TinyVisionTransformer.forward)
