"""`viewcopy draw EXPR --out FILE.svg`: the stride/storage diagram of one expression, as an
instructor draws it for a slide (a real subprocess); what the SVG says is checked against NumPy's
memory bounds and torch itself: the verdict, the result's layout, the elements a view reads, the
bytes a copy writes."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
import torch
from support.command_line import assert_one_line_usage_error, installed_viewcopy
from support.oracles import numpy_oracle

from viewcopy.exercise import catalogue

SVG = "{http://www.w3.org/2000/svg}"
DRAWN = [
    ("x[::2].t()", catalogue.PARENT_EXPR),
    ("x.diagonal()", catalogue.PARENT_EXPR),
    ("x.t().reshape(-1)", catalogue.PARENT_EXPR),
    ("x[:, 1:].unsqueeze(0)", catalogue.PARENT_EXPR),
    ("x.flatten()", "torch.arange(12.).reshape(3, 4)[:, 1:]"),
    ("x.transpose(0, 1)[1:]", "torch.arange(12.).reshape(3, 4)[:, 1:]"),
]
"""Views and copies, on x and on a parent that starts inside its storage; every parent holds
arange, so a view's values are the storage elements it reads."""


@pytest.mark.parametrize(("expr", "parent"), DRAWN)
def test_the_diagram_says_what_numpy_and_torch_measure(tmp_path, expr, parent):
    out = tmp_path / "diagram.svg"
    done = installed_viewcopy("draw", expr, "--parent", parent, "--out", str(out))
    verdict = numpy_oracle(expr, parent)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"{verdict}: wrote {out}\n"

    svg = ET.parse(out).getroot()
    assert svg.tag == f"{SVG}svg"
    (shown,) = [g for g in svg.iter(f"{SVG}g") if g.get("data-verdict")]
    assert shown.get("data-verdict") == verdict
    desc = " ".join(svg.find(f"{SVG}desc").text.split())
    assert svg.find(f"{SVG}title").text.startswith(f"{verdict}: {expr} on parent ")

    x = eval(parent, {"torch": torch})
    result = eval(expr, {"torch": torch, "x": x})
    layout = (
        f"Result {expr}: shape {tuple(result.shape)}, stride {tuple(result.stride())}, "
        f"storage offset {result.storage_offset()}"
    )
    assert layout in desc
    if verdict == "view":
        read = [str(int(v)) for v in result.flatten().tolist()]
        assert f"its cells read elements {', '.join(read[:12])}" in desc
        assert "0 bytes allocated" in desc
    else:
        written = result.nelement() * result.element_size()
        assert f"{written} bytes allocated" in desc and "same storage: no" in desc


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("draw", "x.(", "--out", "never.svg"), "not a valid Python expression"),
    ],
)
def test_usage_errors_are_one_line_with_exit_status_2(viewcopy, args, says):
    assert_one_line_usage_error(viewcopy(*args), says)
