"""Running an instructor notebook (report, five) on a graded course, as an instructor would."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import nbformat


def run_on_course(notebook_path: Path, course: str) -> list:
    """Run an instructor notebook (committed without outputs) with its `COURSE = ...` line set
    to the expression `course`; its outputs, after checking that no cell raised."""
    from nbclient import NotebookClient

    from viewcopy.sandbox.unix_sockets import UnixSocketKernelManager

    notebook = nbformat.read(notebook_path, as_version=4)
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code")
    first = next(c for c in notebook.cells if c.cell_type == "code")
    first.source, replaced = re.subn(r"(?m)^COURSE = .*$", f"COURSE = {course}", first.source)
    assert replaced == 1
    NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(notebook_path.parent)}},
        kernel_manager_class=UnixSocketKernelManager,
    ).execute(stderr=subprocess.DEVNULL)
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    return outputs
