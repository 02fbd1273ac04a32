"""What a copy costs, shown: a table in units a person reads, and a figure of each row's
bandwidth against the floor and the bytes each kept.

The figure is a matplotlib Figure (no pyplot, no GUI backend): a notebook shows it as a static
PNG, which survives nbgrader's feedback HTML, with a text alternative that says every bar's value.
It is drawn dark on an opaque white ground whatever the notebook's matplotlib style, so it reads
the same in a light, dark or high-contrast theme.
"""

from __future__ import annotations

import base64
import html
import io

import matplotlib
import pandas as pd
from matplotlib.figure import Figure

from viewcopy.display import units
from viewcopy.display.table import INK, html_table
from viewcopy.engine.cost import CostReport

FLOOR_COLOR = "#c44e52"
BAR_COLOR = "#4c72b0"
PAPER = "#ffffff"
STYLE = {
    **{key: PAPER for key in ("figure.facecolor", "axes.facecolor", "savefig.facecolor")},
    **{key: INK for key in ("text.color", "axes.labelcolor", "axes.edgecolor", "xtick.color",
                            "ytick.color", "legend.labelcolor")},
    "legend.facecolor": PAPER,
    "savefig.transparent": False,
}  # fmt: skip
"""Bars and the floor 4.6:1 or more against the white, text 17:1."""


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
    with matplotlib.rc_context(STYLE):
        return _drawn(report)


def _drawn(report: CostReport) -> Figure:
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


def cost_alt(report: CostReport) -> str:
    """The figure in words: what each panel shows and every bar's value, in its unit."""
    speeds = "; ".join(
        f"{row.name}: {units.rate(row.bandwidth_gbs)} ({units.share(row.of_floor)} of the floor)"
        for row in report.rows
    )
    kept = "; ".join(f"{row.name}: {units.size(row.bytes_allocated)}" for row in report.rows)
    return (
        f"{_title(report)}. Bar chart in two panels, a bar per call. Top, the bytes each call "
        f"moved per second (read plus write) against the floor, copy_ at "
        f"{units.rate(report.floor_gbs)} (a dashed line): {speeds}. Bottom, the memory each "
        f"call allocated: {kept}."
    )


def cost_png(report: CostReport) -> bytes:
    """The figure as a PNG on its white ground."""
    figure, picture = cost_figure(report), io.BytesIO()
    with matplotlib.rc_context(STYLE):
        figure.savefig(picture, format="png", dpi=100)
    return picture.getvalue()


def cost_html(report: CostReport) -> str:
    """The figure as an inline image with its text alternative."""
    data = base64.b64encode(cost_png(report)).decode("ascii")
    alt = html.escape(cost_alt(report), quote=True)
    return f'<img src="data:image/png;base64,{data}" alt="{alt}">'


def cost_bundles(report: CostReport) -> tuple[dict[str, str], dict[str, str]]:
    """What a notebook shows, each with its plain text: the table, in a region the keyboard
    reaches when it scrolls, and the figure with its text alternative."""
    table = cost_table(report)
    named = f"what a copy costs on {report.device}"
    return (
        {"text/html": html_table(table, label=named), "text/plain": table.to_string()},
        {"text/html": cost_html(report), "text/plain": cost_alt(report)},
    )
