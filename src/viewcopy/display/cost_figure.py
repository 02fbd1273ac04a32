"""What a copy costs, shown: a table in units a person reads, and a figure of each row's
bandwidth against the floor and the bytes each kept.

The figure is a matplotlib Figure (no pyplot, no GUI backend): a notebook shows it as a static
PNG, which survives nbgrader's feedback HTML.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from viewcopy.display import units
from viewcopy.engine.cost import CostReport

FLOOR_COLOR = "#c44e52"
BAR_COLOR = "#4c72b0"


def _title(report: CostReport) -> str:
    shape = "x".join(map(str, report.shape))
    if report.scaled_from:
        shape += f" (scaled down from {'x'.join(map(str, report.scaled_from))})"
    return f"What a copy costs on {report.device}: float32 activation {shape}"


def cost_table(report: CostReport) -> pd.DataFrame:
    """One line per row, in the order measured: what it kept, its copy kernels, its median time,
    the bytes it moved per second and that against the floor ("—" where it moved nothing)."""
    return pd.DataFrame(
        [
            {
                "call": row.name,
                "code": row.code,
                "kept": units.size(row.bytes_allocated),
                "copy kernels": units.kernels(row.copy_kernels),
                "median time": units.seconds(row.median_s),
                "moved": units.rate(row.bandwidth_gbs) if row.bandwidth_gbs else units.NONE,
                "of floor": units.share(row.of_floor) if row.bandwidth_gbs else units.NONE,
            }
            for row in report.rows
        ]
    ).set_index("call")


def cost_figure(report: CostReport) -> Figure:
    """Two panels: bandwidth (GB/s) with the floor as a line, and bytes allocated (MB)."""
    figure = Figure(figsize=(9.0, 5.5), layout="constrained")
    speed, memory = figure.subplots(2, 1, sharex=True)
    names = [row.name for row in report.rows]
    bars = speed.bar(names, [row.bandwidth_gbs for row in report.rows], color=BAR_COLOR)
    speed.bar_label(bars, labels=[units.share(row.of_floor) for row in report.rows], padding=2)
    speed.axhline(report.floor_gbs, color=FLOOR_COLOR, linestyle="--", label="floor: copy_")
    speed.margins(y=0.15)
    speed.set_ylabel("GB/s moved (read + write)")
    speed.legend(loc="upper left")
    kept = [row.bytes_allocated for row in report.rows]
    bars = memory.bar(names, [nbytes / 1e6 for nbytes in kept], color=BAR_COLOR)
    memory.bar_label(bars, labels=[units.size(nbytes) for nbytes in kept], padding=2)
    memory.margins(y=0.15)
    memory.set_ylabel("MB allocated")
    memory.tick_params(axis="x", labelrotation=20)
    figure.suptitle(_title(report))
    return figure
