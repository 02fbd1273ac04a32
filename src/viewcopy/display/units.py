"""Numbers as a person reads them: times in ns, µs, ms or s, sizes in B, KB, MB or GB (decimal),
rates in GB/s, shares in %, kernels as a comma list, and "—" for none. Never a raw float: at most
three significant digits, tiny values as a bound (`<1 ns`, `<0.01 GB/s`, `<0.1%`), zero as `0`,
and "—" for what was not measured (NaN, infinite); in words where the machine was too busy for a
share of the copy floor to be true. CSV and JSON keep the raw numbers, in named units (`_s`,
`_bytes`, `_gbs`)."""

from __future__ import annotations

import math
from collections.abc import Iterable

NONE = "—"
TIMES = ((1, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))
SIZES = ((1e9, "GB"), (1e6, "MB"), (1e3, "KB"), (1, "B"))
"""Each unit with the least value it shows, largest first; below the last, a bound."""
BUSY = "machine too busy"
"""Shown where a share of the copy floor would be, when the machine was too busy to measure it."""
TOO_BUSY = (
    "This machine was too busy to measure bandwidth against its copy floor, so no share of it is "
    "shown: run this cell again when the machine is idle."
)


def seconds(value: float | None) -> str:
    """A time: `830 ns`, `12.3 µs`, `4.56 ms`, `1.23 s`, `<1 ns`, `0 s`."""
    return _scaled(value, TIMES, "0 s")


def size(value: float | None) -> str:
    """A size in bytes: `512 B`, `197 KB`, `3.15 MB`, `1.07 GB` (1 KB = 1000 B), `0 B`."""
    return _scaled(value, SIZES, "0 B")


def rate(gbs: float | None) -> str:
    """A bandwidth: `6.42 GB/s`, `0.051 GB/s`, `<0.01 GB/s`, `0 GB/s`."""
    if not _measured(gbs):
        return NONE
    return "<0.01 GB/s" if 0 < gbs < 1e-2 else f"{_three(gbs)} GB/s"


def share(value: float | None) -> str:
    """A share: `75%`, `0.4%`, `<0.1%`, `0%`."""
    if not _measured(value):
        return NONE
    percent = value * 100
    if 0 < percent < 0.1:
        return "<0.1%"
    return f"{percent:.1f}%" if 0 < percent < 10 else f"{percent:.0f}%"


def ratio(part: float, whole: float) -> float:
    """`part / whole`, NaN where there is nothing to compare with (`whole` is 0)."""
    return part / whole if whole else math.nan


def kernels(names: Iterable[str]) -> str:
    """Kernel names as a comma list, "—" for none."""
    return ", ".join(names) or NONE


def _scaled(value: float | None, scales: tuple[tuple[float, str], ...], zero: str) -> str:
    """`value` in the largest unit it reaches, a bound below the least, "—" if not measured."""
    if not _measured(value):
        return NONE
    for scale, unit in scales:
        if abs(value) >= scale:
            return f"{_three(value / scale)} {unit}"
    return f"<1 {scales[-1][1]}" if value else zero


def _measured(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def _three(value: float) -> str:
    """Three significant digits, without trailing zeros past the point; a whole number where
    that would take an exponent (from 999.5 up)."""
    text = f"{value:.3g}"
    return f"{value:.0f}" if "e" in text else text
