"""`viewcopy probe EXPR`: the evidence for any expression on x, checked against NumPy's memory
bounds and what torch itself shows of the result (shape, strides, offset, the refusal)."""

from __future__ import annotations

import json

import pytest
import torch
from support.command_line import assert_one_line_usage_error
from support.oracles import numpy_oracle

from viewcopy.exercise import catalogue

UNLISTED = [
    ("x.diagonal()", catalogue.PARENT_EXPR),
    ("x[[0, 2]]", catalogue.PARENT_EXPR),
    ("x.unfold(1, 2, 2)", catalogue.PARENT_EXPR),
    ("x.view(torch.int32)", catalogue.PARENT_EXPR),
    ("x.flatten()", "torch.arange(12.).reshape(3, 4)[:, 1:]"),
    ("x.narrow(0, 1, 2).mT", "torch.ones(4, 5, 6)"),
    ("x.repeat(2, 1)", catalogue.PARENT_EXPR),
    ("x[x > 3]", catalogue.PARENT_EXPR),
]


@pytest.mark.parametrize(("expr", "parent"), UNLISTED)
def test_probe_gives_what_pytorch_shows_on_unlisted_expressions(viewcopy, expr, parent):
    done = viewcopy("probe", expr, "--parent", parent, "--format", "json")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    x = eval(parent, {"torch": torch})
    result = eval(expr, {"torch": torch, "x": x})
    assert record["verdict"] == numpy_oracle(expr, parent)
    assert record["shape"] == list(result.shape)
    assert record["stride"] == list(result.stride())
    assert record["storage_offset"] == result.storage_offset()
    assert record["is_contiguous"] == result.is_contiguous()
    assert record["same_data_ptr"] == (result.data_ptr() == x.data_ptr())


def test_probe_of_a_refused_op_is_the_error_verdict_with_exit_0(viewcopy):
    done = viewcopy("probe", "x.view(5, 5)", "--format", "json")
    assert done.returncode == 0
    with pytest.raises(RuntimeError) as refused:
        torch.zeros(4, 6).view(5, 5)
    record = json.loads(done.stdout)
    assert (record["verdict"], record["message"]) == ("error", str(refused.value))


def test_probe_table_lists_the_evidence(viewcopy):
    done = viewcopy("probe", "x[1:]")
    assert done.returncode == 0
    fields = dict(line.split(None, 1) for line in done.stdout.splitlines() if line.split()[1:])
    assert fields["verdict"].strip() == "view" and fields["storage_offset"].strip() == "6"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("probe", "x.("), "not a valid Python expression"),
        (("probe", "y + 1"), "name 'y' is not defined"),
        (("probe", "x[1:]", "--parent", "torch.nothing(3)"), "has no attribute 'nothing'"),
        (("probe", "x.chunk(2)"), "probe one of them"),
    ],
)
def test_usage_errors_are_one_line_with_exit_status_2(viewcopy, args, says):
    assert_one_line_usage_error(viewcopy(*args), says)
