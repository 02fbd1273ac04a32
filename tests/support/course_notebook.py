"""Helpers for tests that read the course's notebooks (no viewcopy logic here)."""

from __future__ import annotations

from pathlib import Path

import nbformat

ROOT = Path(__file__).parents[2]
SOURCE = ROOT / "source" / "view_or_copy" / "view_or_copy.ipynb"
RELEASE = ROOT / "release" / "view_or_copy" / "view_or_copy.ipynb"
RELEASE_0_1_0 = ROOT / "tests" / "data" / "release_0.1.0"
"""The release and config deployed at 0.1.0, frozen: what courses in use still hand in."""
RELEASE_0_1_0_70CF16B = ROOT / "tests" / "data" / "release_0.1.0+70cf16b"
"""The release and config deployed at 0.1.0+70cf16b (CHANGELOG.md), and a hand-in made with it,
lock file and all."""


def cells_by_id(path: Path) -> dict[str, nbformat.NotebookNode]:
    notebook = nbformat.read(path, as_version=4)
    return {c.metadata["nbgrader"]["grade_id"]: c for c in notebook.cells}


def hidden_traps():
    """The TRAPS list exactly as the master's hidden test cell builds it."""
    import torch

    import viewcopy

    source = cells_by_id(SOURCE)["test_classify_hidden"].source
    body = source.split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0]
    assignment = body.split("viewcopy.checks.classify_credit")[0]
    namespace = {"viewcopy": viewcopy, "torch": torch}
    exec(assignment, namespace)
    return namespace["TRAPS"]
