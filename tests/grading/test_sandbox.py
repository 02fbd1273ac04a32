"""The sandbox a graded kernel runs in, probed from inside a real sandboxed kernel."""

from __future__ import annotations

import contextlib
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import kernels
from support.hostile_corpus import SEARCH, SECRET_PREFIX, plant
from support.kernels import outcome
from support.sandboxing import assert_kernel_user, sandbox_or_skip

from viewcopy.course.assignment import LAB_IMPORTS
from viewcopy.course.folder import Course
from viewcopy.files.course_layout import COURSE_DATA
from viewcopy.sandbox.bubblewrap import describe, readable_paths
from viewcopy.sandbox.cgroups import Cgroups
from viewcopy.sandbox.limits import Limits
from viewcopy.sandbox.users import sandbox_uids

pytestmark = [pytest.mark.sandbox]

LIMITS = Limits(cpu_s=60, memory_bytes=1 * 2**30, processes=64, scratch_bytes=8 * 2**20)


def test_readable_paths_never_hold_course_data(tmp_path):
    course = Course(tmp_path / "course")
    for name in COURSE_DATA:
        (course.root / name).mkdir(parents=True)
    assert {p.name for p in course.data} == set(COURSE_DATA)
    paths = [Path(p) for p in readable_paths(course.data)]
    assert paths, "the Python environment must be readable"
    for path in paths:
        for name in COURSE_DATA:
            data = course.root / name
            assert data != path and path not in data.parents, f"{path} exposes {data}"


SECRET = f"{SECRET_PREFIX}{os.urandom(8).hex()}"
"""Planted in the grader's environment while the kernels start: no process in a sandbox may
hold it."""


@pytest.fixture(scope="module", params=["fresh", "forked"])
def sandboxed_kernel(request, tmp_path_factory):
    """A kernel started the way graded kernels are, in a working copy beside a course: fresh in
    the sandbox, or forked into it from a worker's warm template (each test runs on both)."""
    sandbox_or_skip()
    from viewcopy.sandbox import warm_kernels

    root = tmp_path_factory.mktemp("sandbox")
    course = root / "course"
    (course / "source").mkdir(parents=True)
    (course / "source" / "master.ipynb").write_text("hidden tests")
    (course / "gradebook.db").write_text("grades")
    copy = course / "autograded" / "student" / "lab"
    copy.mkdir(parents=True)
    (copy / "lab.ipynb").write_text("the submission")
    (copy / "private.txt").write_text("only its owner may read it")
    (copy / "private.txt").chmod(0o600)
    (copy / "gradebook_link").symlink_to(course / "gradebook.db")
    os.environ["VIEWCOPY_PLANTED_SECRET"] = SECRET
    if request.param == "forked":
        assert warm_kernels.start(LIMITS, ["cpu"], imports=LAB_IMPORTS) is None
    try:
        warm_kernels.counts()
        with kernels.sandboxed_kernel(copy, course, LIMITS) as run:
            assert (warm_kernels.active() is not None) == (request.param == "forked")  # kept
            started = {"forked": {"warm": 1, "fresh": 0}, "fresh": {"warm": 0, "fresh": 1}}
            assert warm_kernels.counts() == started[request.param]  # and it was forked
            yield run, course, copy
    finally:
        warm_kernels.stop()
        os.environ.pop("VIEWCOPY_PLANTED_SECRET")


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


@pytest.mark.skipif(not Cgroups.enforceable(LIMITS), reason="cgroups cannot be created here")
def test_a_sweep_leaves_the_cgroups_of_a_running_grader_and_removes_those_of_an_ended_one():
    """Two `viewcopy grade` runs at once: one that ends sweeps what killed runs left, never the
    cgroup the other just made for a kernel that has not entered it yet."""
    made_here = Cgroups(LIMITS)
    left = subprocess.run(
        [sys.executable, "-c", LEFT_BEHIND], capture_output=True, text=True, check=True
    ).stdout.split()
    try:
        Cgroups.sweep()
        assert made_here.folders and all(folder.is_dir() for folder in made_here.folders)
        assert made_here.limited
        assert left and not any(Path(folder).exists() for folder in left)
    finally:
        made_here.remove()
        for folder in map(Path, left):
            with contextlib.suppress(OSError):
                folder.rmdir()


LEFT_BEHIND = """
from viewcopy.sandbox.cgroups import Cgroups
from viewcopy.sandbox.limits import Limits
print(*Cgroups(Limits()).folders)  # and ends without removing them, as a killed grader does
"""


def test_torch_runs_as_many_threads_as_the_kernel_has_cores(sandboxed_kernel):
    run, _, _ = sandboxed_kernel
    granted = os.environ.get("OMP_NUM_THREADS", str(max(1, math.ceil(LIMITS.cpus))))
    assert run("import json, torch; print(json.dumps(torch.get_num_threads()))") == int(granted)


def test_nothing_a_kernel_writes_lands_on_the_host(sandboxed_kernel, tmp_path):
    """A setuid copy of `id` planted in every folder the kernel can write: none of them is a
    host folder, and nothing of it is found on the host, however the kernel ended."""
    run, course, _ = sandboxed_kernel
    marker = f"planted-{os.urandom(6).hex()}"
    planted, walls = run(plant(marker))
    assert planted and walls, "the kernel writes its scratch only"
    for path in planted:
        assert not os.path.lexists(path), f"{path} reached the host"
        mode = run(f"import json, os; print(json.dumps(os.stat({path!r}).st_mode))")
        assert not mode & 0o4000 or _nosuid(run, path), f"{path} keeps its setuid bit"
    for top in ("/tmp", str(course), "/run", "/var/tmp", "/dev/shm", os.path.expanduser("~")):
        for folder, _, files in os.walk(top):
            assert marker not in files, f"{folder} holds what the kernel planted"


def _nosuid(run, path: str) -> bool:
    """Whether `path` lies, in the kernel's sandbox, on a mount that ignores setuid bits."""
    return run(
        f"import json, os; print(json.dumps(bool(os.statvfs({path!r}).f_flag & os.ST_NOSUID)))"
    )


def test_no_secret_of_the_graders_is_in_the_sandbox(sandboxed_kernel):
    """Every process's environment, command line and readable memory searched for a secret the
    grader's environment held when the kernel started: not found, and pid 1 unreadable."""
    run, _, _ = sandboxed_kernel
    found, refused = run(SEARCH)
    assert found == {}
    assert "1/environ" in refused and "1/mem" in refused


def test_a_kernel_signals_no_one_but_its_own(sandboxed_kernel):
    """SIGKILL to every other pid the kernel sees: a root grader's sandbox init (root) and a warm
    kernel's holder (another uid) refuse it, and the kernel goes on."""
    run, _, _ = sandboxed_kernel
    said = run(
        """
        import json, os, signal
        refused = []
        for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
            if pid != os.getpid():
                try:
                    os.kill(pid, signal.SIGKILL)
                except PermissionError:
                    refused.append(pid)
                except ProcessLookupError:
                    pass
        print(json.dumps(sorted(refused)))
        """
    )
    if os.geteuid() == 0:
        assert 1 in said
    assert run("import json; print(json.dumps('still here'))") == "still here"


def test_a_hand_ins_own_files_are_readable_and_its_links_left_out(sandboxed_kernel):
    """A file of the working copy only its owner may read is copied in for the kernel's user; a
    symbolic link (to the gradebook, here) is not mounted at all."""
    run, _, _ = sandboxed_kernel
    read = "import json; print(json.dumps(open('private.txt').read()))"
    assert run(read) == "only its owner may read it"
    assert run(outcome("open('gradebook_link').read()")) == "FileNotFoundError"


def test_the_first_line_says_who_kernels_run_as_and_what_holds():
    said = describe(LIMITS)
    uids = sandbox_uids()
    if os.geteuid() == 0:
        assert (
            f"kernels never run as root: each drops to a host uid of its own ({uids.start}-" in said
        )
    limited = Cgroups.enforceable(LIMITS)
    assert ("processes by cgroup" in said) == ("pids" in limited)
    assert ("cores by cgroup" in said) == ("cpu" in limited)
    assert ("memory by cgroup" in said) == ("memory" in limited)
    assert ("NOT enforced" in said) == ("cpu" not in limited)
