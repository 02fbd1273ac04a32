"""Every available device measures like the CPU does; absent devices skip and say so."""

from __future__ import annotations

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
