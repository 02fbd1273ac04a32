"""A model in production: which lines of its forward ask for a layout copy (checked against the
storage witness on each line) and which copy only inside a compute kernel (the rest of what
torch's profiler shows on each line alone); the copies' share of the forward they ran in;
PRODUCTION parsed, locked, profiled and credited like the other locked parts, a student who
applies the lab's rules earning it all, and the sheet showing every figure in its unit, however
extreme the measurement, and a share of the copy floor only where it can be true."""

from __future__ import annotations

import math
import re

import pytest
import torch
from support.oracles import layout_oracle, production_oracle
from support.shown import A_TIME, bare_numbers, raw_floats

import viewcopy
from viewcopy import notebook as lab
from viewcopy.demo.synthetic import production_by_rules
from viewcopy.display import units
from viewcopy.display.production_sheet import ProductionSheet
from viewcopy.engine.copy_trace import INTERNAL, LineCopies
from viewcopy.engine.cost import BUSY_SPREAD, FLOOR_TOLERANCE, CopyFloor
from viewcopy.engine.devices import available_devices
from viewcopy.exercise.part import Prediction, PredictionError
from viewcopy.exercise.production_model import (
    RUNS,
    ProductionProfile,
    copy_lines,
    forward_listing,
    internal_copy_lines,
    profile_forward,
)
from viewcopy.instructor.master import measured_production
from viewcopy.locking.file import LockError
from viewcopy.locking.flow import LockStatus
from viewcopy.notebook import checks

MEASURED = ["layout copies", "bandwidth (of floor)", "copies nobody wrote"]
"""The sheet's columns of measured figures."""


def test_the_layout_copies_are_the_storage_witness_s_and_the_rest_copies_nobody_wrote():
    assert copy_lines() == layout_oracle()
    assert copy_lines() and set(copy_lines()) < {n for n, _ in forward_listing()}
    assert copy_lines() | internal_copy_lines() == production_oracle()


@pytest.mark.parametrize("device", available_devices())
def test_the_copies_are_a_share_of_the_runs_they_ran_in_never_above_all(device):
    profile = profile_forward(device, runs=3)
    assert 0 < profile.copy_s <= profile.forward_s and 0 < profile.share <= 1
    assert profile.floor.gbs > 0 and set(profile.lines) == copy_lines(device)
    layout = next(iter(profile.lines.values()))
    assert profile.bandwidth_gbs(layout) == pytest.approx(2 * layout.bytes / layout.seconds / 1e9)


def test_a_student_who_applies_the_lab_s_rules_earns_all_of_it(revealed):
    answers = production_by_rules()
    assert {n for n, verdict in answers.items() if verdict == "copy"} == layout_oracle()
    viewcopy.lock_production(answers)
    assert checks.production_credit(answers, points=2) == 2
    shown = lab.profile_production(answers)
    assert f"{len(answers)}/{len(answers)} lines predicted correctly" in shown.headline()
    frame = shown.frame
    for line in internal_copy_lines():
        assert frame.loc[line, "copies nobody wrote"] != "—"
    for line in internal_copy_lines() - copy_lines():
        assert frame.loc[line, "correct"] == "not graded"
    assert not raw_floats(shown._repr_html_()) and not raw_floats(repr(shown))
    assert not bare_numbers(" ".join(frame[MEASURED].to_numpy().ravel()))
    assert re.search(rf"{A_TIME} of a {A_TIME} forward", shown.headline())  # in any unit: load


def test_a_line_that_copies_only_inside_a_kernel_is_not_graded_either_answer_stands(revealed):
    every_copy = {
        n: "copy" if n in production_oracle() else "no copy" for n, _ in forward_listing()
    }
    assert every_copy != production_by_rules()  # the key of 70cf16b: every line the profiler shows
    viewcopy.lock_production(every_copy)
    assert checks.production_credit(every_copy, points=2) == 2


def test_each_copy_s_bytes_are_elements_times_item_size():
    profile = profile_forward(runs=1)
    listing = dict(forward_listing())
    contiguous = next(n for n, code in listing.items() if "contiguous()" in code)
    from viewcopy.exercise.production_model import build

    model, images = build()
    with torch.no_grad():
        tokens = model.stem(images).flatten(2).transpose(1, 2)
    assert profile.lines[contiguous].bytes == tokens.numel() * tokens.element_size()
    assert profile.lines[contiguous].kernels == ["aten::clone"]
    assert all(row.count >= 1 and row.seconds > 0 for row in profile.lines.values())
    assert profile.forward_s > 0 and profile.copy_s > 0


def test_production_is_locked_then_profiled_and_credited(revealed, capsys):
    lab.show_production()
    assert "PRODUCTION = {" in capsys.readouterr().out
    answers = measured_production()
    viewcopy.lock_production(answers)
    sheet = lab.profile_production(answers)
    assert f"{len(answers)}/{len(answers)} lines predicted correctly" in sheet.headline()
    assert checks.production_credit(answers, points=2) == 2


def test_all_no_copy_earns_the_share_of_free_lines_and_an_edit_after_the_lock_nothing(revealed):
    free = {n: "no copy" for n, _ in forward_listing()}
    viewcopy.lock_production(free)
    expected = round(2 * (len(free) - len(layout_oracle())) / len(free), 4)
    assert checks.production_credit(free, points=2) == expected
    edited = {**free, 1: "copy"}
    assert checks.production_credit(edited, points=2) == 0
    with pytest.raises(LockError, match="changed after the lock"):
        lab.profile_production(edited)


def test_bad_production_names_every_problem_and_it_comes_after_the_twenty(revealed, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    listing = forward_listing()
    bad = {n: "no copy" for n, _ in listing[2:]}
    bad[listing[2][0]] = "maybe"
    bad[99] = "copy"
    with pytest.raises(PredictionError) as caught:
        viewcopy.lock_production(bad)
    text = str(caught.value)
    assert "3 problems in PRODUCTION" in text and "line 99" in text and "'maybe'" in text
    with pytest.raises(LockError, match="Lock and reveal the twenty first"):
        viewcopy.lock_production(measured_production(), directory=tmp_path / "elsewhere")


def test_profiling_the_forward_writes_nothing_to_stderr(capfd):
    profile_forward(runs=1)
    assert capfd.readouterr().err == ""  # a graded cell that writes to stderr scores 0


@pytest.mark.parametrize("nbytes", [0, 1, 10**15])
@pytest.mark.parametrize("measured", [0.0, 1e-15, 1e-9, 1e15, math.nan, math.inf])
def test_the_sheet_shows_every_measurement_in_its_unit_however_extreme(measured, nbytes):
    shown = ProductionSheet(*_predicted_and_locked(), _profile(measured, nbytes))
    assert not raw_floats(shown._repr_html_()) and not raw_floats(repr(shown))
    assert not bare_numbers(" ".join(shown.frame[MEASURED].to_numpy().ravel()))


@pytest.mark.parametrize(
    ("floor", "shown"),
    [
        (CopyFloor("cpu", 100.0, 1.0), True),  # 131 KB in 10 µs: 13.1 GB/s, 13% of it
        (CopyFloor("cpu", 13.1 / (1 + FLOOR_TOLERANCE) / 1.01, 1.0), False),  # beaten: busy
        (CopyFloor("cpu", 100.0, BUSY_SPREAD * 2), False),  # its runs spread wide
    ],
)
def test_a_share_of_the_floor_is_shown_only_where_it_can_be_true(floor, shown):
    copies = {n: LineCopies(n, kernels=["aten::clone"], count=1, bytes=65536, seconds=1e-5)
              for n in copy_lines()}  # fmt: skip
    sheet = ProductionSheet(*_predicted_and_locked(), ProductionProfile(
        "cpu", copies, {}, 1e-3, 1e-5 * len(copies), RUNS, floor))  # fmt: skip
    cells = {sheet.frame.loc[n, "bandwidth (of floor)"] for n in copy_lines()}
    if shown:
        assert cells == {"13.1 GB/s (13%)"}
        assert "copy floor, 100 GB/s" in sheet.headline()
        assert f"past {units.share(1 + FLOOR_TOLERANCE)}" in sheet.headline()
    else:
        assert cells == {f"13.1 GB/s ({units.BUSY})"}
        assert units.TOO_BUSY in sheet.headline()
        assert units.rate(floor.gbs) not in sheet.headline()


def _profile(measured: float, nbytes: int) -> ProductionProfile:
    """A profile whose every time, size and rate is `measured` (or `nbytes`): the layout copies
    on the lines that copy, one copy nobody wrote on the first line."""
    copies = {n: LineCopies(n, kernels=["aten::clone"], count=2, bytes=nbytes, seconds=measured)
              for n in copy_lines()}  # fmt: skip
    internal = {1: LineCopies(1, INTERNAL, ["aten::copy_"], 1, nbytes, measured)}
    floor = CopyFloor("cpu", measured, 1.0)
    return ProductionProfile("cpu", copies, internal, measured, measured, RUNS, floor)


def _predicted_and_locked() -> tuple[dict[int, Prediction], LockStatus]:
    answers = production_by_rules()
    return {n: Prediction(v, "") for n, v in answers.items()}, LockStatus("locked", "Locked.")
