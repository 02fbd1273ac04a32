"""`viewcopy copies SCRIPT`: the lines of a script that copied, checked against plain torch, and
what it says where the profiler gives no dtypes to count bytes by."""

from __future__ import annotations

import json
import runpy
import subprocess
from pathlib import Path

import pytest
import torch

from viewcopy.cli import main
from viewcopy.engine import copy_trace
from viewcopy.engine.copies import COPY_COLUMNS
from viewcopy.engine.profiler_events import UNAVAILABLE

SCRIPT = """\
import sys
import torch
w = torch.arange(30, dtype=torch.float64).reshape(5, 6)
idx = torch.tensor([4, 0, 2])
view = w[:, 2:].t()
packed = w[:, ::2].contiguous()
narrow = w.to(torch.int16)
same = w.double(); also_same = w.view(6, 5)
flat = w.T.reshape(-1)
wide = torch.cat([w, w], dim=1)
into = torch.empty(5, 3, dtype=torch.float64); into.copy_(w[:, 1::2])
def pick(t):
    return t.index_select(0, idx)
picked = pick(w)
print("ran as", __name__, sys.argv[1:])
"""
COPIED = {  # a piece of the line that copies -> the variable holding what it wrote
    "packed =": "packed",
    "narrow =": "narrow",
    "flat =": "flat",
    "wide =": "wide",
    "into.copy_(": "into",
    "return t.index_select": "picked",
}


def line_of(text: str, piece: str) -> int:
    """The one line of `text` that contains `piece` (1-based)."""
    (line,) = [n for n, code in enumerate(text.splitlines(), 1) if piece in code]
    return line


@pytest.fixture
def script(tmp_path) -> Path:
    path = tmp_path / "step.py"
    path.write_text(SCRIPT)
    return path


def report(done: subprocess.CompletedProcess) -> list[dict]:
    """The JSON report after the script's own output (which starts with "ran as")."""
    own, _, rest = done.stdout.partition("\n")
    assert own.startswith("ran as __main__ []")
    return json.loads(rest)


def test_exactly_the_copying_lines_with_the_bytes_torch_says_they_wrote(viewcopy, script):
    done = viewcopy("copies", str(script), "--format", "json")
    assert (done.returncode, done.stderr) == (0, "")
    rows = {row["line"]: row for row in report(done)}
    plain = runpy.run_path(str(script))
    expected = {line_of(SCRIPT, piece): plain[name] for piece, name in COPIED.items()}
    assert sorted(rows) == sorted(expected)
    for line, result in expected.items():
        row = rows[line]
        assert row["bytes"] == result.numel() * result.element_size() > 0, row
        assert row["code"] == SCRIPT.splitlines()[line - 1].strip()
        assert row["count"] == 1 and len(row["kernels"]) == 1, row
        assert row["time_us"] > 0
        assert set(row) == set(COPY_COLUMNS)


def test_a_conversion_counts_once_not_once_per_nested_kernel(viewcopy, script):
    rows = {row["line"]: row for row in report(viewcopy("copies", str(script), "--format", "json"))}
    assert rows[line_of(SCRIPT, "narrow =")]["kernels"] == ["aten::_to_copy"]


def test_a_line_run_in_a_loop_adds_up(viewcopy, tmp_path):
    text = "import torch\nx = torch.ones(7, 3)\nfor _ in range(4):\n    y = x.clone()\n"
    path = tmp_path / "loop.py"
    path.write_text(text)
    done = viewcopy("copies", str(path), "--format", "json")
    (row,) = json.loads(done.stdout)
    y = torch.ones(7, 3).clone()
    assert (row["line"], row["count"]) == (line_of(text, "x.clone()"), 4)
    assert row["bytes"] == 4 * y.numel() * y.element_size()


def test_table_and_csv_show_the_same_lines(viewcopy, script):
    for fmt in ("table", "csv"):
        done = viewcopy("copies", str(script), "--format", fmt)
        body = done.stdout.splitlines()[1:]
        assert done.returncode == 0
        assert body[0].replace(",", " ").split() == list(COPY_COLUMNS)
        assert len(body) == 1 + len(COPIED)


def test_a_script_without_copies_says_so(viewcopy, tmp_path):
    path = tmp_path / "views.py"
    path.write_text("import torch\nx = torch.ones(4, 2)\ny = x.t()[1:]\n")
    done = viewcopy("copies", str(path))
    assert (done.returncode, done.stderr) == (0, "")
    assert "no line" in done.stdout
    assert json.loads(viewcopy("copies", str(path), "--format", "json").stdout) == []


def test_a_missing_file_is_one_line_on_stderr(viewcopy, tmp_path):
    done = viewcopy("copies", str(tmp_path / "absent.py"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1 and "absent.py" in done.stderr


def test_a_file_that_is_not_python_is_one_line_on_stderr(viewcopy, tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("import torch\nx = torch.ones(3\n")
    done = viewcopy("copies", str(path))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1 and "not Python" in done.stderr


def test_a_script_that_raises_names_its_exception_and_line(viewcopy, tmp_path):
    text = (
        "import torch\n"
        "class Overheated(Exception):\n"
        "    pass\n"
        "print('warming up')\n"
        "x = torch.ones(2).clone()\n"
        "raise Overheated('fan stopped')\n"
    )
    path = tmp_path / "hot.py"
    path.write_text(text)
    done = viewcopy("copies", str(path))
    assert (done.returncode, done.stdout) == (2, "warming up\n")
    assert done.stderr.count("\n") == 1
    assert "Overheated" in done.stderr and "fan stopped" in done.stderr
    assert f"line {line_of(text, 'raise Overheated')}" in done.stderr


def test_cuda_without_a_cuda_device_is_refused(viewcopy, script):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    done = viewcopy("copies", str(script), "--device", "cuda")
    assert (done.returncode, done.stdout) == (2, "")
    assert "no CUDA device" in done.stderr and done.stderr.count("\n") == 1


def test_a_profiler_without_dtypes_is_said_in_one_line_and_counts_no_bytes(
    monkeypatch, tmp_path, capfd
):
    path = tmp_path / "step.py"
    path.write_text("import torch\nw = torch.ones(4, 6)\npacked = w.t().contiguous()\n")
    assert main(["copies", str(path), "--format", "json"]) == 0
    assert json.loads(capfd.readouterr().out)[0]["bytes"] == 4 * 6 * 4
    monkeypatch.setattr(copy_trace, "dtype_reader", lambda prof: None)
    assert main(["copies", str(path), "--format", "json"]) == 0
    out, err = capfd.readouterr()
    assert err == UNAVAILABLE + "\n"
    (row,) = json.loads(out)
    assert (row["kernels"], row["bytes"]) == (["aten::clone"], 0)
