"""Numbers as a person reads them: times in µs, ms or s, sizes in B, KB or MB (decimal), rates
in GB/s, shares in %, kernels as a comma list, and "—" for none. CSV and JSON keep the raw
numbers, in named units (`_s`, `_bytes`, `_gbs`)."""

from __future__ import annotations

import math
from collections.abc import Iterable

NONE = "—"


def seconds(value: float | None) -> str:
    """A time: `830 ns`, `12.3 µs`, `4.56 ms`, `1.23 s`."""
    if value is None or math.isnan(value):
        return NONE
    for scale, unit in ((1, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if abs(value) >= scale:
            return f"{_three(value / scale)} {unit}"
    return f"{_three(value / 1e-9)} ns" if value else "0 s"


def size(value: int | None) -> str:
    """A size in bytes: `512 B`, `196.6 KB`, `3.15 MB`, `1.07 GB` (1 KB = 1000 B)."""
    if value is None:
        return NONE
    for scale, unit in ((1e9, "GB"), (1e6, "MB"), (1e3, "KB")):
        if abs(value) >= scale:
            return f"{_three(value / scale)} {unit}"
    return f"{int(value)} B"


def rate(gbs: float | None) -> str:
    """A bandwidth: `6.42 GB/s`, `0.051 GB/s`."""
    if gbs is None or math.isnan(gbs):
        return NONE
    return f"{_three(gbs)} GB/s"


def share(value: float | None) -> str:
    """A share: `75%`, `0.4%`, `<0.1%`."""
    if value is None or math.isnan(value):
        return NONE
    percent = value * 100
    if 0 < percent < 0.1:
        return "<0.1%"
    return f"{percent:.1f}%" if percent < 10 else f"{percent:.0f}%"


def kernels(names: Iterable[str]) -> str:
    """Kernel names as a comma list, "—" for none."""
    return ", ".join(names) or NONE


def _three(value: float) -> str:
    """Three significant digits, without trailing zeros past the point."""
    text = f"{value:.3g}"
    if "e" in text:
        text = f"{value:.0f}"
    return text
