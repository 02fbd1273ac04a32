"""Whether kernels can be sandboxed here: skip where not, fail where CI requires it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


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
    fail_if_required(problem)
    pytest.skip(f"no sandbox on this machine: {problem}", allow_module_level=True)


def fail_if_required(problem: str) -> None:
    """Fail the test for `problem` where VIEWCOPY_REQUIRE_SANDBOX=1 (CI): the sandbox must run."""
    if os.environ.get("VIEWCOPY_REQUIRE_SANDBOX") == "1":
        pytest.fail(f"{problem}; VIEWCOPY_REQUIRE_SANDBOX=1 requires the sandbox", pytrace=False)


def assert_kernel_user(uid: int) -> None:
    """A kernel is never root: a root grader's runs as a uid of the sandbox range, any other's
    as the sandbox's user of its user namespace."""
    from viewcopy.sandbox.users import NOBODY, sandbox_uids

    assert uid != 0
    if os.geteuid() == 0:
        assert uid in sandbox_uids(), uid
    else:
        assert uid == int(NOBODY)


def grade_as_the_product(course: Path, limit_s: float | None = None, **options) -> list:
    """`viewcopy grade` of the course's assignment as the product grades: sandboxed, each kernel
    forked from its worker's warm template (asserted: none started fresh). Where bubblewrap
    cannot run here, unsandboxed with fresh kernels, as `viewcopy grade` falls back; where
    VIEWCOPY_REQUIRE_SANDBOX=1 (CI), that fails instead. `options` are grade's (pattern, force)."""
    from viewcopy.course.assignment import ASSIGNMENT
    from viewcopy.course.folder import Course
    from viewcopy.grading.grade import grade
    from viewcopy.grading.pool import SANDBOXED, GradingRun
    from viewcopy.sandbox import bwrap_problem

    def run(sandbox) -> GradingRun:
        return GradingRun(Course.at(course), ASSIGNMENT, limit_s=limit_s, sandbox=sandbox)

    if (problem := bwrap_problem()) is not None:
        fail_if_required(problem)
        return grade(run(None), progress=False, **options)
    outcomes = grade(run(SANDBOXED), progress=False, **options)
    fresh = {o.student_id: o.kernels for o in outcomes if o.kernels[1]}
    assert not fresh, f"kernels started fresh, not forked warm (warm, fresh): {fresh}"
    return outcomes
