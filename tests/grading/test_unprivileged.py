"""`viewcopy grade` run by an ordinary user (an instructor on a shared server, a hub): the sandbox
runs in a user namespace, warm kernels fork, and every limit holds: by cgroup where one was
delegated to the grader, else by rlimit (processes, memory as address space, CPU time), with the
limit that cannot hold (cores) named on the first line.

The tests run as root (CI): they make an ordinary user, give it a view of the machine where it
can reach this Python and this checkout (a root-owned home folder hides them otherwise), delegate
it cgroups for the second test, and run tests/support/unprivileged_probe.py as that user."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import kernel_endings, unprivileged_probe
from support.course_notebook import ROOT
from support.sandboxing import sandbox_or_skip

from viewcopy.sandbox.cgroups import CONTROLLERS, DELEGATED

pytestmark = [pytest.mark.sandbox]

sandbox_or_skip()
GRADER = "viewcopy-test-grader"
"""The ordinary user the tests make and grade as."""
PROBE = ROOT / "tests" / "support" / "unprivileged_probe.py"
CGROUPS = Path("/sys/fs/cgroup")


@pytest.fixture(scope="module")
def grader() -> pwd.struct_passwd:
    if os.geteuid() != 0:
        pytest.skip("making an ordinary user to grade as needs root (CI runs these as root)")
    try:
        return pwd.getpwnam(GRADER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", GRADER], check=True)
        return pwd.getpwnam(GRADER)


@pytest.fixture
def workdir(grader) -> Iterator[Path]:
    work = Path(tempfile.mkdtemp(prefix="viewcopy-unprivileged-", dir="/tmp"))
    os.chown(work, grader.pw_uid, grader.pw_gid)
    yield work
    shutil.rmtree(work, ignore_errors=True)


def reachable(paths: list[Path]) -> list[str]:
    """bubblewrap's options that let any user reach `paths`: a folder above them that others may
    not enter (/root) is replaced by an empty one, with only `paths` bound back, read-only."""
    options: list[str] = []
    hidden: set[Path] = set()
    for path in paths:
        closed = [a for a in reversed(path.parents) if not os.stat(a).st_mode & 0o001]
        if closed:
            if closed[0] not in hidden:
                hidden.add(closed[0])
                options += ["--perms", "0755", "--tmpfs", str(closed[0])]
            between = [a for a in reversed(path.parents) if closed[0] in a.parents]
            for folder in between:  # bubblewrap would copy their modes: 0700 stays closed
                options += ["--perms", "0755", "--dir", str(folder)]
            options += ["--ro-bind", str(path), str(path)]
    return options


def probe_as(
    grader: pwd.struct_passwd, work: Path, delegated: list[Path], probe: Path = PROBE
) -> dict:
    """What `probe` (a script of tests/support given `work`, printing JSON last) finds run as
    `grader`, whose processes start in the `delegated` cgroups."""
    python = Path(sys.prefix) / "bin" / "python"
    paths = [Path(sys.base_prefix).resolve(), Path(sys.prefix), ROOT]
    enter = "".join(f"echo $$ > {folder}/cgroup.procs && " for folder in delegated)
    command = [
        "bwrap", "--dev-bind", "/", "/", *reachable(paths), "--",
        "/bin/sh", "-c", f'{enter}exec "$@"', "sh",
        "setpriv", f"--reuid={grader.pw_uid}", f"--regid={grader.pw_gid}", "--clear-groups", "--",
        str(python), str(probe), str(work),
    ]  # fmt: skip
    env = {"PATH": f"{python.parent}:/usr/bin:/bin", "HOME": str(work)}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture
def delegated(grader) -> Iterator[list[Path]]:
    """Cgroups delegated to the grader, as systemd or a container delegates them: in v1 one per
    controller it owns; in v2 one it owns with the controllers enabled, the grader in a leaf."""
    name = f"viewcopy-test-{uuid.uuid4().hex[:8]}"
    made: list[Path] = []
    if (CGROUPS / "cgroup.controllers").is_file():
        (CGROUPS / "cgroup.subtree_control").write_text("+pids +memory +cpu")
        made = [CGROUPS / name, CGROUPS / name / "grader"]
        made[0].mkdir()
        (made[0] / "cgroup.subtree_control").write_text("+pids +memory +cpu")
        made[1].mkdir()
        entered = [made[1]]
    else:
        made = [CGROUPS / c / name for c in CONTROLLERS if (CGROUPS / c).is_dir()]
        for folder in made:
            folder.mkdir()
        entered = made
    for folder in made:
        for path in [folder, *folder.iterdir()]:
            os.chown(path, grader.pw_uid, grader.pw_gid)
    yield entered
    for folder in reversed(made):
        for kernel in sorted(folder.glob(f"{DELEGATED}/*"), reverse=True):
            if kernel.is_dir():
                kernel.rmdir()
        if (folder / DELEGATED).is_dir():
            (folder / DELEGATED).rmdir()
        folder.rmdir()


def assert_sandboxed_and_limited(found: dict) -> None:
    for how in ("fresh", "forked"):
        kernel = found[how]
        assert kernel["uid"] == 65534, how  # the grader's own uid, seen from its user namespace
        said, started = kernel["spawn"]
        assert said == "BlockingIOError" and started < 64, how  # past the 64 processes
        assert kernel["memory"] == "MemoryError", how  # past twice the memory limit
    assert found["fresh"]["started"] == {"warm": 0, "fresh": 1}
    assert found["forked"]["started"] == {"warm": 1, "fresh": 0}  # a warm fork, not a fallback


def test_an_ordinary_user_without_cgroups_gets_warm_kernels_and_every_limit_that_can_hold(
    grader, workdir
):
    found = probe_as(grader, workdir, [])
    said = found["describe"]
    assert f"kernels run as your uid ({grader.pw_uid}) in a user namespace" in said
    assert "processes by rlimit" in said and "memory by address space" in said
    assert said.endswith("NOT enforced here (no cgroup): cores)")
    assert_sandboxed_and_limited(found)
    assert found["fresh"]["cgroups"] == found["forked"]["cgroups"] == []


def test_an_ordinary_user_with_a_delegated_cgroup_gets_every_limit(grader, workdir, delegated):
    found = probe_as(grader, workdir, delegated)
    said = found["describe"]
    assert "processes by cgroup" in said and "cores by cgroup" in said
    assert "memory by cgroup" in said and "NOT enforced" not in said
    assert_sandboxed_and_limited(found)
    for how in ("fresh", "forked"):
        kernels = found[how]["cgroups"]
        assert kernels and all(k["processes"] >= 1 for k in kernels), how
        limits = unprivileged_probe.LIMITS
        assert {k.get("pids.max") for k in kernels} - {None} == {str(limits.processes)}, how
        memory = {k.get("memory.max") or k.get("memory.limit_in_bytes") for k in kernels}
        assert memory - {None} == {str(limits.memory_bytes)}, how


@pytest.mark.parametrize("cgroups", [False, True], ids=["without-cgroups", "delegated-cgroups"])
def test_however_an_ordinary_users_kernel_ends_nothing_of_it_remains(
    grader, workdir, delegated, cgroups
):
    """test_kernel_endings.py's run, as an ordinary user."""
    found = probe_as(grader, workdir, delegated if cgroups else [], Path(kernel_endings.__file__))
    assert kernel_endings.leftovers(found) == []
    made = kernel_endings.cgroups_made(found)
    assert set(made.values()) == {cgroups}, made
