"""A model in production: which lines of its forward dispatch a copy kernel (as the profiler
shows them, charged to their lines), checked against torch's profiler run on each line alone;
PRODUCTION parsed, locked, profiled and credited like the other locked parts."""

from __future__ import annotations

import pytest
import torch
from support.oracles import production_oracle

import viewcopy
from viewcopy import notebook as lab
from viewcopy.exercise.part import PredictionError
from viewcopy.exercise.production_model import copy_lines, forward_listing, profile_forward
from viewcopy.instructor.master import measured_production
from viewcopy.locking.file import LockError
from viewcopy.notebook import checks


def test_the_lines_that_copy_are_what_the_profiler_shows_for_each_line_alone():
    assert copy_lines() == production_oracle()
    assert copy_lines() and set(copy_lines()) < {n for n, _ in forward_listing()}


def test_each_copy_s_bytes_are_elements_times_item_size():
    profile = profile_forward(repeats=1)
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
    expected = round(2 * (len(free) - len(production_oracle())) / len(free), 4)
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
    profile_forward(repeats=1)
    assert capfd.readouterr().err == ""  # a graded cell that writes to stderr scores 0
