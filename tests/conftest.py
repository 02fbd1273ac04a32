"""Shared test helpers: an oracle for view/copy that does not go through viewcopy's measurement."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch


def numpy_oracle(op_expr: str, parent_expr: str) -> str:
    """'view', 'copy' or 'error' for an op on a CPU parent, decided by NumPy's memory bounds."""
    parent = eval(parent_expr, {"torch": torch})
    try:
        result = eval(op_expr, {"torch": torch, "x": parent})
    except RuntimeError:
        return "error"
    shared = np.shares_memory(result.detach().numpy(), parent.detach().numpy())
    return "view" if shared else "copy"


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A notebook folder as the kernel's working directory, outside autograde."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    return tmp_path


@pytest.fixture(scope="session")
def cycle(tmp_path_factory):
    """One graded course for the whole session: (course folder, {student_id: Result})."""
    from course_cycle import graded_course

    return graded_course(tmp_path_factory.mktemp("course"))


def sandbox_or_skip(*, cgroups: bool = False) -> None:
    """Skip the calling module where kernels cannot be sandboxed (with `cgroups`: or where the
    sandbox cannot limit cores, processes and memory, which a fork bomb needs); fail it instead
    where VIEWCOPY_REQUIRE_SANDBOX=1 (CI), so the hostile corpus can never silently not run."""
    from viewcopy.sandbox import Cgroups, Limits, bwrap_problem

    problem = bwrap_problem()
    if problem is None and cgroups:
        limited = Cgroups.enforceable(Limits())
        if not {"pids", "memory", "cpu"} <= limited:
            problem = f"cgroups here limit only {sorted(limited)}"
    if problem is None:
        return
    if os.environ.get("VIEWCOPY_REQUIRE_SANDBOX") == "1":
        pytest.fail(f"{problem}; VIEWCOPY_REQUIRE_SANDBOX=1 requires the sandbox", pytrace=False)
    pytest.skip(f"no sandbox on this machine: {problem}", allow_module_level=True)
