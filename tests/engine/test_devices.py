"""Every available device measures like the CPU does; absent devices skip and say so."""

from __future__ import annotations

import subprocess
import sys

import pytest
from support.oracles import in_place_oracle

from viewcopy.engine.devices import available_devices, resolve_devices
from viewcopy.exercise import catalogue
from viewcopy.exercise.measured import measure_catalogue


def device_param(name: str):
    present = name in available_devices()
    reason = f"no {name.upper()} device on this machine: the {name} checks did not run"
    return pytest.param(name, marks=pytest.mark.skipif(not present, reason=reason))


@pytest.mark.parametrize("device", [device_param(d) for d in ("cpu", "cuda", "mps")])
def test_the_catalogue_on_each_device_matches_the_in_place_oracle(device):
    for evidence in measure_catalogue((device,)):
        assert evidence.device == device
        expected = in_place_oracle(evidence.op, catalogue.parent_expr(evidence.parent), device)
        assert evidence.verdict == expected, evidence.record()
        if evidence.verdict == "copy":
            assert evidence.bytes_allocated > 0


def test_all_means_every_available_device_cpu_first():
    assert resolve_devices("all") == available_devices()
    assert available_devices()[0] == "cpu"


WITHOUT_TORCH = (
    "import sys; from viewcopy.engine.devices import available_devices; "
    "print(','.join(available_devices()), 'torch' in sys.modules)"
)


def test_a_process_without_torch_is_told_the_devices_torch_finds():
    """Before torch is imported, the answer is torch's own (asked here, torch imported), and a
    torch built for the CPU alone is not imported to give it."""
    import torch

    run = subprocess.run(
        [sys.executable, "-c", WITHOUT_TORCH], capture_output=True, text=True, check=True
    )
    devices, imported = run.stdout.split()
    assert tuple(devices.split(",")) == available_devices()
    cuda_build = torch.version.cuda is not None or torch.version.hip is not None
    assert imported == str(cuda_build or sys.platform == "darwin")
