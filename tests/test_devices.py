"""Every available device measures like the CPU does; absent devices skip and say so."""

from __future__ import annotations

import pytest
import torch

from viewcopy.engine.devices import available_devices, resolve_devices
from viewcopy.exercise import catalogue
from viewcopy.exercise.measured import measure_catalogue


def in_place_oracle(op_expr: str, parent_expr: str, device: str) -> str:
    """view/copy/error by adding 1 to the parent in place and watching the result."""
    with torch.device(device):
        parent = eval(parent_expr, {"torch": torch})
    try:
        result = eval(op_expr, {"torch": torch, "x": parent})
    except RuntimeError:
        return "error"
    before = result.clone()
    parent.add_(1)
    return "copy" if torch.equal(result, before) else "view"


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
