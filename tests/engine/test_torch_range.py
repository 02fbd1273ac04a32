"""The torch range: one floor in pyproject.toml, environment.yml, the matrix and the notebook's
setup; the profiler's dtypes read from what every supported torch records; and nothing the
profiler library prints reaching stderr (simulated here, for real on a CUDA build without a GPU).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from types import SimpleNamespace

import pytest
import torch
from support.course_notebook import ROOT
from torch.autograd.profiler import profile

from viewcopy import notebook as lab
from viewcopy.cli import main
from viewcopy.engine import copy_trace, profiling
from viewcopy.engine.copies import _default_device
from viewcopy.engine.measure import measure
from viewcopy.engine.profiler_events import dtype_reader
from viewcopy.engine.torch_range import FLOOR, below_floor, floor_text
from viewcopy.exercise.production_model import profile_forward

KINETO_NOISE = (
    "ERROR:2026-12-01 12:11:07 4811:4811 DeviceProperties.cpp:56] "
    "gpuGetDeviceCount failed with code 35"
)
"""What torch 2.14.1's CUDA build wrote to descriptor 2 on its first profile, on a CPU machine."""
CUDA_WITHOUT_GPU = bool(torch.version.cuda) and not torch.cuda.is_available()
RAISES = "import sys, torch\nprint('own', file=sys.stderr)\ny = torch.ones(3).clone()\n1 / 0\n"


def test_pyproject_environment_and_the_matrix_state_the_floor_that_setup_checks():
    pyproject = (ROOT / "pyproject.toml").read_text()
    environment = (ROOT / "environment.yml").read_text()
    matrix = (ROOT / "scripts" / "torch_matrix.sh").read_text()
    assert re.search(r'"torch>=([\d.]+),<3"', pyproject)[1] == floor_text()
    assert re.search(r"- pytorch>=([\d.]+),<3", environment)[1] == floor_text()
    assert re.search(r"(?m)^VERSIONS=\((\S+)", matrix)[1].startswith(f"{floor_text()}.")
    assert below_floor() is None, "the tests run on a torch the range excludes"


def test_below_the_floor_setup_says_to_upgrade_in_one_line(monkeypatch, capsys):
    monkeypatch.delenv("VIEWCOPY_LOCK_SERVICE", raising=False)
    lab.setup()
    assert "upgrade" not in capsys.readouterr().out
    older = f"{FLOOR[0]}.{FLOOR[1] - 1}.1+cu121"
    monkeypatch.setattr(torch, "__version__", older)
    lab.setup()
    (line,) = [line for line in capsys.readouterr().out.splitlines() if "upgrade" in line]
    assert older in line and f"torch>={floor_text()}" in line
    newer = f"{FLOOR[0]}.{FLOOR[1] + 10}.0"  # compared as numbers: 2.14 is not below 2.4
    assert below_floor(newer) is None and below_floor(f"{floor_text()}.0+cpu") is None


def as_older_torch(prof) -> SimpleNamespace:
    """The profile as torch 2.4 hands it over: events without `input_dtypes`, the raw events."""
    events = [
        SimpleNamespace(id=e.id, name=e.name, input_shapes=e.input_shapes)
        for e in prof.function_events
    ]
    return SimpleNamespace(function_events=events, kineto_results=prof.kineto_results)


def copy_sizes(prof) -> list[int]:
    """The item size of each `aten::copy_` destination, as read from the profile."""
    read = dtype_reader(prof)
    return [
        copy_trace.ITEMSIZE[read(e)[0]] for e in prof.function_events if e.name == "aten::copy_"
    ]


def test_each_copys_dtype_is_read_on_older_and_newer_profilers_alike():
    x = torch.arange(24.0).reshape(4, 6)
    with profile(record_shapes=True) as prof:
        written = [x.t().contiguous(), x.to(torch.int16), x.to(torch.float64)]
    truth = [t.element_size() for t in written]
    assert copy_sizes(prof) == truth
    assert copy_sizes(as_older_torch(prof)) == truth


@pytest.fixture
def noisy_profiler(monkeypatch) -> list[int]:
    """Every profile writes kineto's GPU-less error line to descriptor 2, as the C library does."""
    written: list[int] = []

    class Noisy(profile):
        def __exit__(self, *exc):
            written.append(os.write(2, f"{KINETO_NOISE}\n".encode()))
            return super().__exit__(*exc)

    monkeypatch.setattr(copy_trace, "profile", Noisy)
    monkeypatch.setattr(profiling, "profile", Noisy)
    return written


def test_the_profilers_lines_never_reach_stderr_and_the_scripts_own_do(
    noisy_profiler, tmp_path, capfd
):
    path = tmp_path / "raises.py"
    path.write_text(RAISES)
    assert main(["copies", str(path)]) == 2
    own, error = capfd.readouterr().err.splitlines()
    assert own == "own" and error.startswith("viewcopy copies: error:") and "line 4" in error
    for graded in (lambda: profile_forward(runs=1), lambda: measure("x.t()", "torch.ones(2)")):
        before = len(noisy_profiler)
        graded()
        assert capfd.readouterr().err == ""  # graded cells stay silent
        assert len(noisy_profiler) > before, "the noisy profiler did not run"


@pytest.mark.skipif(not CUDA_WITHOUT_GPU, reason="not a CUDA build of torch without a GPU")
def test_on_a_cuda_build_without_a_gpu_errors_are_one_line_and_graded_cells_silent(tmp_path):
    """A fresh process each: kineto says its error once per process, on the first profile."""
    path = tmp_path / "raises.py"
    path.write_text(RAISES)
    cli = "import sys; from viewcopy.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", cli, "copies", str(path)], capture_output=True, text=True
    )
    assert done.returncode == 2 and done.stderr.splitlines()[0] == "own"
    assert len(done.stderr.splitlines()) == 2, done.stderr
    cell = "from viewcopy.exercise.production_model import profile_forward; profile_forward(runs=1)"
    done = subprocess.run([sys.executable, "-c", cell], capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, "")


def test_the_default_device_is_where_a_new_tensor_lands():
    try:
        torch.set_default_device("meta")
        assert _default_device() == torch.device("meta")
    finally:
        torch.set_default_device(None)
    assert _default_device() == torch.device("cpu")
