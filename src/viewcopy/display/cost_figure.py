"""What a copy costs, shown: a table in units a person reads, and a figure of each row's
bandwidth against the copy floor and the bytes each kept; where the machine was too busy for a
share of the floor to be true, each says so in words instead of the floor and the shares.

The figure is a matplotlib Figure (no pyplot, no GUI backend): a notebook shows it as a static
PNG, which survives nbgrader's feedback HTML, with a text alternative that says every bar's value.
It is drawn dark on an opaque white ground whatever the notebook's matplotlib style, so it reads
the same in a light, dark or high-contrast theme.
"""

from __future__ import annotations

import base64
import html
import io
import textwrap

import matplotlib
import pandas as pd
from matplotlib.figure import Figure

from viewcopy.display import units
from viewcopy.display.table import INK, html_table
from viewcopy.engine.cost import FLOOR_TOLERANCE, CostReport

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


def _compared(report: CostReport) -> bool:
    """Whether the rows' bandwidth can be read against the floor measured with them."""
    return report.floor.compares(row.bandwidth_gbs for row in report.rows)


def _shares(report: CostReport) -> list[str]:
    """Each row's share of the floor, or that the machine was too busy to measure it."""
    if not _compared(report):
        return [units.BUSY for _ in report.rows]
    return [units.share(report.floor.share(row.bandwidth_gbs)) for row in report.rows]


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
                "of floor": share if row.bandwidth_gbs else units.NONE,
            }
            for row, share in zip(report.rows, _shares(report), strict=True)
        ]
    ).set_index("call")


def cost_figure(report: CostReport) -> Figure:
    """Two panels: bandwidth (GB/s) with the floor as a line (in words instead where the machine
    was too busy), and bytes allocated (MB)."""
    with matplotlib.rc_context(STYLE):
        return _drawn(report)


def _drawn(report: CostReport) -> Figure:
    figure = Figure(figsize=(9.0, 5.5), layout="constrained")
    speed, memory = figure.subplots(2, 1, sharex=True)
    names = [row.name for row in report.rows]
    bars = speed.bar(names, [row.bandwidth_gbs for row in report.rows], color=BAR_COLOR)
    if _compared(report):
        speed.bar_label(bars, labels=_shares(report), padding=2)
        speed.axhline(report.floor.gbs, color=FLOOR_COLOR, linestyle="--", label="floor: copy_")
        speed.legend(loc="upper left")
    else:
        speed.set_title(textwrap.fill(units.TOO_BUSY, 100), fontsize="medium")
    speed.margins(y=0.15)
    speed.set_ylabel("GB/s moved (read + write)")
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
    kept = "; ".join(f"{row.name}: {units.size(row.bytes_allocated)}" for row in report.rows)
    return (
        f"{_title(report)}. Bar chart in two panels, a bar per call. Top, the bytes each call "
        f"moved per second (read plus write){_speeds(report)} Bottom, the memory each call "
        f"allocated: {kept}."
    )


def _speeds(report: CostReport) -> str:
    """The top panel's bars in words, against the floor where it can be read."""
    if not _compared(report):
        rates = "; ".join(f"{row.name}: {units.rate(row.bandwidth_gbs)}" for row in report.rows)
        return f": {rates}. {units.TOO_BUSY}"
    speeds = "; ".join(
        f"{row.name}: {units.rate(row.bandwidth_gbs)} ({share} of the floor)"
        for row, share in zip(report.rows, _shares(report), strict=True)
    )
    return (
        f" against the floor, the fastest plain copy_ here, at {units.rate(report.floor.gbs)} (a "
        f"dashed line; a share past {units.share(1 + FLOOR_TOLERANCE)} would say the machine was "
        f"busy while it ran, and is not shown): {speeds}."
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
