"""Students' own kernels forked warm (viewcopy.sandbox.own_kernels), as the synthetic class's
hand-ins run: each sees what a fresh kernel started the same way sees, ends whole with its
manager, starts fresh where its environment differs in what torch and Python read at start, and
no grading template can be made to fork one."""

from __future__ import annotations

import os
import sys
import time

import psutil
import pytest
from support import kernels

from viewcopy.course.assignment import LAB_IMPORTS
from viewcopy.sandbox.kernel_template import KernelRequest, OwnKernelRequest, Template
from viewcopy.sandbox.own_kernels import OwnKernelManager, warm_template
from viewcopy.sandbox.unix_sockets import UnixSocketKernelManager

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="own kernels are forked on Linux only"
)
FACTS = """
import json, os, sys, torch
print(json.dumps({
    "cwd": os.getcwd(), "files": sorted(os.listdir(".")), "env": dict(os.environ),
    "path": sys.path, "argv0": sys.argv[0], "executable": sys.executable,
    "threads": torch.get_num_threads(), "own_session": os.getsid(0) == os.getpid(),
    "stdin": os.readlink("/proc/self/fd/0"), "uid": os.getuid(),
    "modules": sorted(m for m in ("torch", "viewcopy.notebook") if m in sys.modules),
}))
"""
ENV = {**os.environ, "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2", "OWN": "the student's"}


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "view_or_copy.ipynb").write_text("the student's notebook")
    return tmp_path


@pytest.fixture(scope="module")
def template():
    with warm_template(ENV, LAB_IMPORTS) as template:
        yield template


def own(template):
    return OwnKernelManager(kernel_name="python3", template=template)


def test_a_forked_kernel_sees_what_a_fresh_one_sees(folder, template):
    # the fresh kernel over Unix sockets too: one over TCP can lose a port it was given to another
    # program before it binds it, and die before it answers (sandbox.unix_sockets)
    with kernels.running(
        UnixSocketKernelManager(kernel_name="python3"), cwd=str(folder), env=ENV
    ) as run:
        fresh = run(FACTS)
    before = template.started["warm"]
    with kernels.running(own(template), cwd=str(folder), env=ENV) as run:
        forked = run(FACTS)
    assert template.started["warm"] == before + 1, "the kernel was not forked"
    assert forked["threads"] == 2 and forked["own_session"]
    assert forked.pop("stdin") == "/dev/null" and fresh.pop("stdin").startswith("pipe:")  # empty
    assert forked["env"]["OWN"] == "the student's"
    assert forked.pop("modules") == ["torch", "viewcopy.notebook"]  # imported by the template
    assert fresh.pop("modules") == ["torch"]
    assert forked == fresh


def test_an_environment_torch_reads_at_start_gets_a_fresh_kernel(folder, template):
    before = dict(template.started)
    with kernels.running(
        own(template), cwd=str(folder), env={**ENV, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    ) as run:
        assert run(FACTS)["threads"] == 1
    assert template.started["fresh"] == before.get("fresh", 0) + 1
    assert template.started["warm"] == before.get("warm", 0)


def test_a_kernel_shut_down_leaves_nothing_running(folder, template):
    manager = own(template)
    with kernels.running(manager, cwd=str(folder), env=ENV) as run:
        kernel, child = run(
            """
            import json, os, subprocess
            child = subprocess.Popen(["sleep", "60"])
            print(json.dumps([os.getpid(), child.pid]))
            """
        )
        holder = psutil.Process(manager.provisioner.pid)
        between = psutil.Process(kernel).parent()
        assert between.parent().pid == template.process.pid
        watched = [psutil.Process(pid) for pid in (kernel, child)] + [holder, between]
    deadline = time.monotonic() + 5
    while any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in watched):
        assert time.monotonic() < deadline, [p for p in watched if p.is_running()]
        time.sleep(0.05)


def test_a_grading_template_never_forks_an_own_kernel_nor_an_own_one_a_sandboxed_one(folder):
    own_request = OwnKernelRequest(os.getpid(), dict(ENV), str(folder), ("-f", "k.json"))
    sandboxed = KernelRequest(os.getpid(), (), {}, {}, str(folder), ("-f", "k.json"))
    with pytest.raises(RuntimeError, match="forks only on a KernelRequest"):
        Template().fork_kernel(own_request)
    with pytest.raises(RuntimeError, match="forks only on a OwnKernelRequest"):
        Template(own=True).fork_kernel(sandboxed)
    with pytest.raises(TypeError):  # what a grading template reads: no line of an own request
        Template().requests.read(own_request.line())
