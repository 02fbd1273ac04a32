"""The ungraded stride explorer notebook runs top to bottom, silently, with diagrams."""

from __future__ import annotations

import subprocess
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from viewcopy.sandbox.unix_sockets import UnixSocketKernelManager

pytestmark = [pytest.mark.slow]

PLAYGROUND = Path(__file__).parents[2] / "notebooks" / "stride_explorer.ipynb"


def test_stride_explorer_runs_without_errors_or_stderr_and_draws(tmp_path):
    notebook = nbformat.read(PLAYGROUND, as_version=4)
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code")
    NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": tmp_path}},
        kernel_manager_class=UnixSocketKernelManager,
    ).execute(stderr=subprocess.DEVNULL)
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error" or o.get("name") == "stderr"]
    html = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    assert html.count("<svg") >= 2
