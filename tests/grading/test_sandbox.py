"""The sandbox a graded kernel runs in, probed from inside a real sandboxed kernel."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
from support import kernels
from support.kernels import outcome
from support.sandboxing import assert_kernel_user, sandbox_or_skip

from viewcopy.plugins.sandbox import COURSE_DATA, Cgroups, Limits, readable_paths

pytestmark = [pytest.mark.sandbox]

LIMITS = Limits(cpu_s=60, memory_bytes=1 * 2**30, processes=64, scratch_bytes=8 * 2**20)


def test_readable_paths_never_hold_course_data(tmp_path):
    course = tmp_path / "course"
    for name in COURSE_DATA:
        (course / name).mkdir(parents=True)
    paths = [Path(p) for p in readable_paths(course)]
    assert paths, "the Python environment must be readable"
    for path in paths:
        for name in COURSE_DATA:
            data = course / name
            assert data != path and path not in data.parents, f"{path} exposes {data}"


@pytest.fixture(scope="module", params=["fresh", "forked"])
def sandboxed_kernel(request, tmp_path_factory):
    """A kernel started the way graded kernels are, in a working copy beside a course: fresh in
    the sandbox, or forked into it from a worker's warm template (each test runs on both)."""
    sandbox_or_skip()
    from viewcopy.plugins import warm_kernels

    root = tmp_path_factory.mktemp("sandbox")
    course = root / "course"
    (course / "source").mkdir(parents=True)
    (course / "source" / "master.ipynb").write_text("hidden tests")
    (course / "gradebook.db").write_text("grades")
    copy = course / "autograded" / "student" / "lab"
    copy.mkdir(parents=True)
    (copy / "lab.ipynb").write_text("the submission")
    if request.param == "forked":
        assert warm_kernels.start(LIMITS, ["cpu"]) is None
    try:
        warm_kernels.counts()
        with kernels.sandboxed_kernel(copy, course, LIMITS) as run:
            assert (warm_kernels.active() is not None) == (request.param == "forked")  # kept
            started = {"forked": {"warm": 1, "fresh": 0}, "fresh": {"warm": 0, "fresh": 1}}
            assert warm_kernels.counts() == started[request.param]  # and it was forked
            yield run, course, copy
    finally:
        warm_kernels.stop()


def test_the_course_is_invisible_and_the_copy_is_read_only(sandboxed_kernel):
    run, course, copy = sandboxed_kernel
    assert run(outcome(f"open({str(course / 'source' / 'master.ipynb')!r}).read()")) == (
        "FileNotFoundError"
    )
    assert run(outcome(f"open({str(course / 'gradebook.db')!r}).read()")) == "FileNotFoundError"
    run(outcome(f"open({str(course / 'gradebook.db')!r}, 'w').write('forged')"))
    assert (course / "gradebook.db").read_text() == "grades"
    assert run("import json, os; print(json.dumps(os.getcwd()))") == str(copy)
    assert run(outcome("open('lab.ipynb').read()")) == "ok"
    assert run(outcome("open('lab.ipynb', 'w')")) == "OSError"
    assert run(outcome("__import__('os').remove('lab.ipynb')")) in ("OSError", "PermissionError")
    assert (copy / "lab.ipynb").read_text() == "the submission"


def test_scratch_is_writable_but_small_and_python_is_read_only(sandboxed_kernel):
    run, _, _ = sandboxed_kernel
    assert run(outcome("open('notes.txt', 'w').write('mine')")) == "ok"
    big = "open('/tmp/big', 'wb').write(b'0' * (16 * 2**20))"
    assert run(outcome(big)) == "OSError"  # past the 8 MiB scratch
    run(outcome("__import__('os').remove('/tmp/big')"))
    import torch

    site = Path(torch.__file__).parent / "__init__.py"
    assert run(outcome(f"open({str(site)!r}, 'a')")) in ("OSError", "PermissionError")


def test_no_network_no_privilege(sandboxed_kernel):
    run, _, _ = sandboxed_kernel
    connect = "__import__('socket').create_connection(('1.1.1.1', 80), timeout=3)"
    assert run(outcome(connect)) == "OSError"
    assert_kernel_user(run("import json, os; print(json.dumps(os.getuid()))"))


@pytest.mark.skipif(
    not {"pids", "memory"} <= Cgroups.enforceable(LIMITS), reason="cgroups cannot be created here"
)
def test_processes_and_memory_are_limited(sandboxed_kernel):
    run, _, _ = sandboxed_kernel
    spawn = """
    import json, subprocess
    children, said = [], "ok"
    try:
        for _ in range(200):
            children.append(subprocess.Popen(["sleep", "30"]))
    except BlockingIOError as exc:
        said = type(exc).__name__
    for child in children:
        child.kill()
    print(json.dumps([said, len(children)]))
    """
    said, started = run(spawn)
    assert said == "BlockingIOError" and started < 64
    assert run(outcome("bytearray(4 * 2**30)")) == "MemoryError"  # past twice the 1 GiB


def test_torch_runs_as_many_threads_as_the_kernel_has_cores(sandboxed_kernel):
    run, _, _ = sandboxed_kernel
    granted = os.environ.get("OMP_NUM_THREADS", str(max(1, math.ceil(LIMITS.cpus))))
    assert run("import json, torch; print(json.dumps(torch.get_num_threads()))") == int(granted)
