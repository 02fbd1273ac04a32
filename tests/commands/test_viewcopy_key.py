"""`viewcopy key`: the measured table of the twenty on x and each variant, as an instructor runs
it (a real subprocess), checked against NumPy's memory bounds and torch itself."""

from __future__ import annotations

import csv
import io
import json

import pytest
import torch
from support.command_line import installed_viewcopy
from support.oracles import numpy_oracle

from viewcopy.exercise import catalogue


@pytest.fixture(scope="module")
def key_json():
    done = installed_viewcopy("key", "--device", "cpu", "--format", "json")
    assert done.returncode == 0 and done.stderr == ""
    return json.loads(done.stdout)


def test_key_json_is_the_measured_table_of_the_twenty_on_x_and_each_variant(key_json):
    assert len(key_json) == 20 * len(catalogue.PARENTS)
    required = {
        "item",
        "op",
        "device",
        "parent",
        "verdict",
        "same_storage",
        "same_data_ptr",
        "bytes_allocated",
        "copy_kernels",
    }
    for row in key_json:
        assert required <= row.keys()
        expected = numpy_oracle(row["op"], catalogue.parent_expr(row["parent"]))
        assert row["verdict"] == expected, row
        assert row["device"] == "cpu"


def test_key_item_1_same_storage_other_first_element_and_copies_show_bytes(key_json):
    item1 = next(r for r in key_json if r["item"] == 1 and r["parent"] == "x")
    assert (item1["same_storage"], item1["same_data_ptr"]) == (True, False)
    for row in key_json:
        if row["verdict"] == "copy":
            parent = eval(catalogue.parent_expr(row["parent"]), {"torch": torch})
            result = eval(row["op"], {"torch": torch, "x": parent})
            assert row["bytes_allocated"] == result.nelement() * result.element_size() > 0


@pytest.mark.parametrize("fmt", ["table", "csv", "markdown"])
def test_key_other_formats_carry_the_same_verdicts(viewcopy, key_json, fmt):
    done = viewcopy("key", "--format", fmt)
    assert done.returncode == 0
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(done.stdout)))
        assert [r["verdict"] for r in rows] == [r["verdict"] for r in key_json]
    else:
        lines = done.stdout.splitlines()
        body = lines[2:] if fmt == "markdown" else lines[1:]
        assert len(body) == len(key_json)
        assert all(f" {r['verdict']} " in line for r, line in zip(key_json, body, strict=True))


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_an_unavailable_device_is_a_usage_error():
    done = installed_viewcopy("key", "--device", "cuda")
    assert done.returncode == 2
    assert "not available on this machine" in done.stderr and "Traceback" not in done.stderr
