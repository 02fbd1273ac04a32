"""A model in production: a small vision transformer written with `view`, `transpose`, `reshape`
and `permute`, whose forward students read line by line and predict which lines dispatch a copy,
before one call profiles it and charges every copy kernel to its line.

Random weights (seeded), nothing downloaded. The copies are measured (engine.copy_trace), never
typed: whether a line copies is whatever the dispatcher says on the machine running it.
"""

from __future__ import annotations

import functools
import inspect
import statistics
import time
from collections.abc import Mapping
from dataclasses import dataclass

import torch
from torch import nn

from viewcopy.engine.copy_trace import LineCopies, trace_copies
from viewcopy.engine.devices import synchronize
from viewcopy.engine.profiler_events import UNAVAILABLE

INPUT_SHAPE = (8, 3, 32, 32)


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
    """The forward's copies by listed line, and what they cost against the whole forward."""

    device: str
    lines: Mapping[int, LineCopies]
    forward_s: float

    @property
    def copy_s(self) -> float:
        return sum(row.seconds for row in self.lines.values())

    def verdict(self, number: int) -> str:
        return "copy" if number in self.lines else "no copy"


def build(device: str = "cpu") -> tuple[TinyVisionTransformer, torch.Tensor]:
    """The model and an input batch, seeded, on `device`."""
    generator = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    model = TinyVisionTransformer().to(device).eval()
    images = torch.randn(INPUT_SHAPE, generator=generator).to(device)
    return model, images


def profile_forward(device: str = "cpu", repeats: int = 5) -> ProductionProfile:
    """One traced forward (copies by line) and the median time of plain forwards."""
    model, images = build(device)
    _, start = inspect.getsourcelines(TinyVisionTransformer.forward)
    with torch.no_grad():
        model(images)  # warm-up
        times = []
        for _ in range(repeats):
            synchronize(device)
            began = time.perf_counter()
            model(images)
            synchronize(device)
            times.append(time.perf_counter() - began)
        _, traced, said = trace_copies(lambda: model(images), _source(), device)
    if UNAVAILABLE in said:  # an untested torch: say it in one line, on stdout
        print(UNAVAILABLE)
    lines = {number - start: row for number, row in traced.items()}
    return ProductionProfile(device, lines, statistics.median(times))


@functools.cache
def copy_lines(device: str = "cpu") -> frozenset[int]:
    """The listed lines whose forward dispatches a copy kernel, measured once per process."""
    model, images = build(device)
    _, start = inspect.getsourcelines(TinyVisionTransformer.forward)
    with torch.no_grad():
        _, traced, _ = trace_copies(lambda: model(images), _source(), device)
    return frozenset(number - start for number in traced)


def _source() -> str:
    return inspect.getsourcefile(TinyVisionTransformer.forward)
