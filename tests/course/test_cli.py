"""The `viewcopy` command as an instructor runs it: a real subprocess, checked against torch."""

from __future__ import annotations

import csv
import io
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from support.oracles import numpy_oracle

from viewcopy.exercise import catalogue


def installed_viewcopy(*args: str) -> subprocess.CompletedProcess:
    """The console script itself, in its own process, as an instructor types it."""
    command = Path(sys.executable).with_name("viewcopy")
    return subprocess.run([str(command), *args], capture_output=True, text=True)


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
        (("draw", "x.(", "--out", "never.svg"), "not a valid Python expression"),
        (("grade", "--course", "/nonexistent/course"), "has no nbgrader_config.py"),
    ],
)
def test_usage_errors_are_one_line_with_exit_status_2(viewcopy, args, says):
    done = viewcopy(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and says in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_an_unavailable_device_is_a_usage_error():
    done = installed_viewcopy("key", "--device", "cuda")
    assert done.returncode == 2
    assert "not available on this machine" in done.stderr and "Traceback" not in done.stderr


def test_grade_names_what_is_missing_in_a_course_without_hand_ins(viewcopy, tmp_path):
    (tmp_path / "nbgrader_config.py").write_text("")
    done = viewcopy("grade", "--course", str(tmp_path))
    assert done.returncode == 2 and "no submitted/ folder" in done.stderr
    (tmp_path / "submitted" / "ada").mkdir(parents=True)
    done = viewcopy("grade", "--course", str(tmp_path), "--student", "b*")
    assert done.returncode == 2 and "no submissions of view_or_copy match 'b*'" in done.stderr


def test_grade_refuses_zero_workers(viewcopy):
    with pytest.raises(SystemExit) as exit_:
        viewcopy("grade", "--jobs", "0")
    assert exit_.value.code == 2


def test_hub_on_a_port_in_use_is_one_line_before_anything_is_made(viewcopy, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = viewcopy("hub", "--port", str(port), "--state", str(tmp_path / "state"))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == (
        f"viewcopy hub: error: port {port} is in use on 127.0.0.1: pass --port with a free one"
    )
    assert not (tmp_path / "state").exists()
    done = viewcopy("hub", "--students", " , ", "--state", str(tmp_path / "state"))
    assert done.returncode == 2 and "--students names no student" in done.stderr
