"""What a copy costs, measured on CPU: bytes against numel x itemsize, kernels, times, figure; the
copy floor, the fastest of its runs, and no share of it shown where the machine was too busy for
one to be true; and shown in units, however extreme the measurement."""

from __future__ import annotations

import base64
import html
import io
import math
import re
from dataclasses import replace

import matplotlib.style
import pytest
import torch
from matplotlib.colors import to_hex
from matplotlib.text import Text
from PIL import Image
from support.contrast import contrast
from support.shown import bare_numbers, raw_floats

from viewcopy.display import units
from viewcopy.display.cost_figure import cost_alt, cost_figure, cost_html, cost_png, cost_table
from viewcopy.engine import cost
from viewcopy.engine.cost import (
    BUSY_SPREAD,
    FLOOR_BYTES,
    FLOOR_ROUNDS,
    FLOOR_TOLERANCE,
    PLAUSIBLE_GBS,
    ROUND_RUNS,
    CopyFloor,
    copy_floor,
    measure_costs,
)
from viewcopy.engine.devices import DeviceUnavailable

SHAPE = (2, 8, 16, 16)
NBYTES = math.prod(SHAPE) * torch.empty(SHAPE).element_size()
"""The activation's bytes, computed without the code under test."""
COPIES = ("x.permute(0, 2, 3, 1).contiguous()", "x.contiguous(memory_format=torch.channels_last)")
CONVS = ("F.conv2d(x, w, padding=1)", "F.conv2d(x_cl, w_cl, padding=1)")


@pytest.fixture(scope="module")
def report():
    return measure_costs("cpu", shape=SHAPE, repeats=3)


def row(report, code):
    (found,) = [r for r in report.rows if r.code == code]
    return found


def against(report, gbs: float, spread: float = 1.0):
    """`report` read against a floor of `gbs` whose runs spread by `spread`."""
    floor = CopyFloor(report.device, gbs, spread)
    rows = tuple(replace(r, of_floor=floor.share(r.bandwidth_gbs)) for r in report.rows)
    return replace(report, rows=rows, floor=floor)


def quiet(report):
    """`report` against a floor no row beats, measured on a machine at rest."""
    return against(report, max(r.bandwidth_gbs for r in report.rows))


def test_the_permute_is_a_view_that_allocates_nothing(report):
    view = row(report, "x.permute(0, 2, 3, 1)")
    assert view.bytes_allocated == 0
    assert view.copy_kernels == ()


@pytest.mark.parametrize("code", COPIES)
def test_each_copy_allocates_the_activation_once_through_a_copy_kernel(report, code):
    copy = row(report, code)
    assert copy.bytes_allocated == NBYTES
    assert {"aten::copy_", "aten::clone"} & set(copy.copy_kernels)


@pytest.mark.parametrize("code", CONVS)
def test_each_conv_allocates_its_output(report, code):
    assert row(report, code).bytes_allocated == NBYTES


def test_times_bandwidths_and_the_floor(report):
    assert report.floor.gbs > 0 and report.floor.spread >= 1
    for r in report.rows:
        assert r.median_s > 0
        assert r.of_floor == pytest.approx(r.bandwidth_gbs / report.floor.gbs)


class ScriptedCopy:
    """A copy whose first timed run takes 1 ms and every later one 2 ms."""

    made: list[ScriptedCopy] = []

    def __init__(self, nbytes: int, device: str):
        self.nbytes, self.runs = nbytes, 0
        ScriptedCopy.made.append(self)

    def run_seconds(self) -> float:
        self.runs += 1
        return 1e-3 if self.runs == 1 else 2e-3


def test_the_floor_is_the_fastest_run_of_the_bytes_measured_or_of_bytes_above_the_caches(
    monkeypatch,
):
    monkeypatch.setattr(cost, "_TimedCopy", ScriptedCopy)
    monkeypatch.setattr(ScriptedCopy, "made", [])
    threads = len(cost._thread_counts("cpu"))
    floor = copy_floor(1000)
    small, large = ScriptedCopy.made
    assert (small.nbytes, large.nbytes) == (1000, FLOOR_BYTES["cpu"])
    assert (small.runs, large.runs) == (FLOOR_ROUNDS * ROUND_RUNS * threads, FLOOR_ROUNDS * threads)
    fastest = 2 * FLOOR_BYTES["cpu"] / 1e-3 / 1e9  # the first run at FLOOR_BYTES
    calmest = 1.0 if threads > 1 else 2.0  # one thread's series: every run 2 ms
    assert floor == CopyFloor("cpu", fastest, calmest)
    ScriptedCopy.made.clear()
    assert copy_floor(2 * FLOOR_BYTES["cpu"]).gbs == 4 * FLOOR_BYTES["cpu"] / 1e-3 / 1e9
    assert [copy.nbytes for copy in ScriptedCopy.made] == [2 * FLOOR_BYTES["cpu"]]


def test_the_floor_leaves_torch_s_threads_as_it_found_them():
    before = torch.get_num_threads()
    assert copy_floor(1000).gbs > 0
    assert torch.get_num_threads() == before


@pytest.mark.parametrize(
    ("gbs", "spread", "busy"),
    [
        (50.0, 1.0, False),
        (50.0, BUSY_SPREAD, False),
        (50.0, BUSY_SPREAD * 1.01, True),
        (PLAUSIBLE_GBS * 0.99, 1.0, True),
        (math.nan, 1.0, True),
        (50.0, math.nan, True),
    ],
)
def test_a_floor_whose_runs_spread_wide_or_read_implausibly_low_is_too_busy(gbs, spread, busy):
    assert CopyFloor("cpu", gbs, spread).too_busy == busy


def test_rates_compare_with_a_floor_up_to_its_tolerance_and_no_further():
    floor = CopyFloor("cpu", 10.0, 1.0)
    assert floor.compares([0.0, 5.0, 10.0 * (1 + FLOOR_TOLERANCE), math.nan])
    assert not floor.compares([5.0, 10.0 * (1 + FLOOR_TOLERANCE) * 1.01])
    assert not CopyFloor("cpu", 10.0, BUSY_SPREAD * 2).compares([5.0])


@pytest.mark.parametrize("why", ["spread", "beaten"])
def test_a_busy_machine_s_table_and_figure_say_so_instead_of_any_share(report, why):
    fastest = max(r.bandwidth_gbs for r in report.rows)
    busy = (
        against(report, fastest, spread=BUSY_SPREAD * 2)
        if why == "spread"
        else against(report, fastest / (1 + FLOOR_TOLERANCE) / 1.01)
    )
    table, said = cost_table(busy), cost_alt(busy)
    assert set(table["of floor"]) <= {units.BUSY, units.NONE} and units.BUSY in set(
        table["of floor"]
    )
    assert units.TOO_BUSY in said and "of the floor" not in said
    assert "dashed line" not in said  # no floor drawn, none said
    speed = cost_figure(busy).axes[0]
    assert not speed.lines and not speed.texts and "too busy" in speed.get_title()
    assert [units.rate(r.bandwidth_gbs) in said for r in busy.rows] == [True] * len(busy.rows)


def test_a_quiet_machine_s_table_and_figure_show_every_share_and_the_tolerance(report):
    shown = quiet(report)
    assert units.TOO_BUSY not in cost_alt(shown)
    assert f"past {units.share(1 + FLOOR_TOLERANCE)}" in cost_alt(shown)
    assert units.BUSY not in set(cost_table(shown)["of floor"])


def test_the_table_has_one_line_per_row(report):
    table = cost_table(report)
    assert list(table["code"]) == [r.code for r in report.rows]
    for (_, shown), measured in zip(table.iterrows(), report.rows, strict=True):
        assert shown["kept"].endswith("B") and shown["median time"].endswith("s")  # not 0.000002
        moved = shown["moved"]
        assert moved == "—" if measured.bandwidth_gbs == 0 else moved.endswith("GB/s")
    assert report.shape == SHAPE and report.scaled_from is None


@pytest.mark.parametrize("nbytes", [0, 1, 10**15])
@pytest.mark.parametrize("measured", [0.0, 1e-15, 1e-9, 1e15, math.nan])
def test_the_table_and_the_figure_show_every_measurement_in_its_unit(report, measured, nbytes):
    rows = tuple(
        replace(r, bytes_allocated=nbytes, median_s=measured, bandwidth_gbs=measured,
                of_floor=measured)
        for r in report.rows
    )  # fmt: skip
    extreme = replace(report, rows=rows, floor=CopyFloor("cpu", measured, 1.0))
    shown = cost_table(extreme)[["kept", "median time", "moved", "of floor"]]
    labels = [text.get_text() for axes in cost_figure(extreme).axes for text in axes.texts]
    figures = " ".join([*shown.to_numpy().ravel(), *labels])
    assert not raw_floats(figures) and not bare_numbers(figures), figures
    assert not raw_floats(cost_alt(extreme)), cost_alt(extreme)


def test_a_slow_cpu_scales_the_batch_down_and_says_so(monkeypatch):
    monkeypatch.setattr(cost, "CPU_CONV_BUDGET_S", 0.0)
    scaled = measure_costs("cpu", shape=SHAPE, repeats=1)
    assert scaled.shape == (1, *SHAPE[1:])
    assert scaled.scaled_from == SHAPE
    assert row(scaled, COPIES[0]).bytes_allocated == NBYTES // SHAPE[0]


@pytest.mark.parametrize(
    ("times", "fits", "timed"),
    [((0.9, 0.1, 0.9), True, 2), ((0.1,), True, 1), ((0.9, 0.9, 0.9), False, 3)],
    ids=["one-run-slowed", "first-run-fits", "every-run-slow"],
)
def test_the_batch_is_scaled_down_only_when_every_timed_conv_is_over_budget(
    monkeypatch, times, fits, timed
):
    """A run slowed by other work does not scale the batch down, and the timing stops at the
    first run within the budget (the student waits for nothing more)."""
    monkeypatch.setattr(cost, "CPU_CONV_BUDGET_S", 0.5)
    left = list(times)
    monkeypatch.setattr(cost, "_seconds", lambda call, device: left.pop(0))
    assert cost._conv_fits(SHAPE, "cpu") is fits
    assert len(times) - len(left) == timed


def test_the_figure_has_two_panels_with_a_bar_per_row(report):
    figure = cost_figure(report)
    assert len(figure.axes) == 2
    for axes in figure.axes:
        assert len(axes.patches) == len(report.rows)


def test_the_text_alternative_says_every_bar_and_the_floor_in_its_unit(report):
    report = quiet(report)
    said = cost_alt(report)
    speed, memory = cost_figure(report).axes
    shares, sizes = ([t.get_text() for t in axes.texts] for axes in (speed, memory))
    rates = [units.rate(bar.get_height()) for bar in speed.patches]
    names = [tick.get_text() for tick in memory.get_xticklabels()]
    assert len(names) == len(report.rows)
    for name, rate, share, size in zip(names, rates, shares, sizes, strict=True):
        assert f"{name}: {rate} ({share} of the floor)" in said
        assert f"{name}: {size}" in said
    assert units.rate(report.floor.gbs) in said


def test_the_image_in_the_page_carries_its_text_alternative(report):
    shown = cost_html(report)
    alt = re.search(r'alt="([^"]*)"', shown).group(1)
    assert html.unescape(alt) == cost_alt(report)
    data = re.search(r'src="data:image/png;base64,([^"]+)"', shown).group(1)
    assert base64.b64decode(data).startswith(b"\x89PNG")


def test_the_figure_is_dark_on_opaque_white_whatever_the_notebook_s_style(report):
    with matplotlib.style.context("dark_background"):
        figure = cost_figure(report)
        png = Image.open(io.BytesIO(cost_png(report))).convert("RGBA")
    paper = to_hex(figure.get_facecolor(), keep_alpha=True)
    assert paper == "#ffffffff"
    assert all(to_hex(axes.get_facecolor(), keep_alpha=True) == paper for axes in figure.axes)
    texts = [t for t in figure.findobj(Text) if t.get_text().strip()]
    assert texts and all(contrast(to_hex(t.get_color()), "#ffffff") >= 4.5 for t in texts)
    marks = [bar.get_facecolor() for axes in figure.axes for bar in axes.patches]
    marks += [line.get_color() for line in figure.axes[0].lines]
    assert all(contrast(to_hex(m), "#ffffff") >= 3 for m in marks)
    assert png.getpixel((0, 0)) == (255, 255, 255, 255)


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is present: cuda is measurable")
def test_cuda_without_cuda_is_refused():
    with pytest.raises(DeviceUnavailable):
        measure_costs("cuda", shape=SHAPE, repeats=1)
