"""Kernels forked from a worker's warm template (viewcopy.sandbox.warm_kernels): each one sees
exactly the sandbox a fresh kernel sees, nothing one student's kernel did reaches the next, a
parallel op runs in a forked kernel (the libgomp trap), and where the template cannot serve the
kernel starts fresh, said once. What every sandbox limit does to a forked kernel is in
test_sandbox.py, which runs each of its tests on a fresh and on a forked kernel."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import threading
from dataclasses import replace

import pytest
from support import kernels
from support.sandboxing import assert_kernel_user, sandbox_or_skip
from traitlets.config import Config

from viewcopy.course.assignment import LAB_IMPORTS
from viewcopy.sandbox import warm_kernels
from viewcopy.sandbox.kernel_template import Template
from viewcopy.sandbox.limits import THREADS, Limits

pytestmark = [pytest.mark.sandbox]

sandbox_or_skip()
LIMITS = Limits(cpu_s=60, memory_bytes=2 * 2**30, processes=64, scratch_bytes=8 * 2**20)
FACTS = """
import json, os, resource, socket, sys
status = dict(line.split(":\\t", 1) for line in open("/proc/self/status").read().splitlines())
try:
    socket.create_connection(("1.1.1.1", 80), timeout=2)
    network = "open"
except OSError as exc:
    network = type(exc).__name__
print(json.dumps({
    "ids": [os.getuid(), os.geteuid(), os.getgid(), os.getegid(), os.getgroups()],
    "capabilities": [status[k] for k in ("CapInh", "CapPrm", "CapEff", "CapAmb", "NoNewPrivs")],
    "cwd": os.getcwd(), "files": sorted(os.listdir(".")), "root": sorted(os.listdir("/")),
    "tmp": sorted(os.listdir("/tmp")), "path": sys.path, "argv0": sys.argv[0],
    "env": {k: v for k, v in os.environ.items()},
    "rlimits": {n: resource.getrlimit(getattr(resource, "RLIMIT_" + n))
                for n in ("CPU", "FSIZE", "CORE", "AS", "NPROC", "NOFILE")},
    "cgroup_namespace": open("/proc/self/cgroup").read(),
    "hostname": socket.gethostname(), "network": network,
    "processes": len([p for p in os.listdir("/proc") if p.isdigit()]),
}))
"""


@pytest.fixture
def course(tmp_path):
    """A course with a working copy in it, as the grader lays them out."""
    course = tmp_path / "course"
    (course / "source").mkdir(parents=True)
    (course / "gradebook.db").write_text("grades")
    copy = course / "autograded" / "student" / "lab"
    copy.mkdir(parents=True)
    (copy / "lab.ipynb").write_text("the submission")
    return course, copy


@pytest.fixture
def template():
    assert warm_kernels.start(LIMITS, ["cpu"], imports=LAB_IMPORTS) is None
    yield warm_kernels.active()
    warm_kernels.stop()


def test_a_forked_kernel_sees_the_sandbox_a_fresh_one_sees(course):
    course, copy = course
    with kernels.sandboxed_kernel(copy, course, LIMITS) as run:
        fresh = run(FACTS)
    assert warm_kernels.start(LIMITS, ["cpu"], imports=LAB_IMPORTS) is None
    try:
        with kernels.sandboxed_kernel(copy, course, LIMITS) as run:
            forked = run(FACTS)
        assert warm_kernels.active() is not None, "the kernel was not forked"
    finally:
        warm_kernels.stop()
    for facts in (fresh, forked):  # each kernel a user of its own, never root, in no group
        uid, euid, gid, egid, groups = facts.pop("ids")
        assert_kernel_user(uid)
        assert uid == euid == gid == egid and groups in ([], [gid])
    assert fresh["network"] != "open"
    assert fresh["capabilities"] == ["0000000000000000"] * 4 + ["1"]
    assert forked.pop("processes") == fresh.pop("processes") + 1  # the sandbox's holder
    made = [name for name in forked["tmp"] if name.startswith("viewcopy-template-")]
    assert len(made) == 1  # the folders matplotlib chose when the template imported it
    forked["tmp"].remove(made[0])
    for facts in (fresh, forked):  # each kernel's own connection file and sockets
        facts["tmp"] = [re.sub(r"^(tmp|viewcopy-kernel-)\w+", r"\1*", n) for n in facts["tmp"]]
    assert forked == fresh


def test_nothing_one_students_kernel_does_reaches_the_next(course, template):
    course, copy = course
    with kernels.sandboxed_kernel(copy, course, LIMITS) as run:
        left = run(
            """
            import json, os, subprocess, torch, viewcopy
            open("/tmp/left", "w").write("student A")
            open("left.txt", "w").write("student A")
            torch.Tensor.left = "student A"
            viewcopy.left = "student A"
            os.environ["LEFT"] = "student A"
            subprocess.Popen(["sleep", "60"], start_new_session=True)
            print(json.dumps(len(os.listdir("/proc"))))
            """
        )
        assert left
    with kernels.sandboxed_kernel(copy, course, LIMITS) as run:
        found = run(
            """
            import json, os, subprocess, torch, viewcopy
            print(json.dumps([
                os.path.exists("/tmp/left"), os.path.exists("left.txt"),
                hasattr(torch.Tensor, "left"), hasattr(viewcopy, "left"), "LEFT" in os.environ,
                subprocess.run(["pgrep", "sleep"], capture_output=True).stdout.decode(),
            ]))
            """
        )
    assert found == [False, False, False, False, False, ""]
    assert warm_kernels.active() is template, "the kernels were not forked"


def test_a_parallel_op_runs_in_a_forked_kernel(course, template):
    course, copy = course
    with kernels.sandboxed_kernel(copy, course, LIMITS) as run:
        threads, total = run(
            """
            import json, torch
            torch.set_num_threads(2)
            a = torch.ones(1024, 1024)
            print(json.dumps([torch.get_num_threads(), float((a @ a).sum())]))
            """
        )
    assert threads == 2 and total == 1024.0**3
    assert warm_kernels.active() is template


def test_a_template_for_two_cores_forks_every_kernel(course, monkeypatch):
    """torch imported for two threads starts an OpenMP thread, which ends at the template's first
    fork: no thread was started since the imports, so every later kernel is forked too."""
    course, copy = course
    for key in THREADS:
        monkeypatch.delenv(key, raising=False)
    two = replace(LIMITS, cpus=2)
    assert warm_kernels.start(two, ["cpu"], imports=LAB_IMPORTS) is None
    try:
        warm_kernels.counts()
        for _ in range(2):
            with kernels.sandboxed_kernel(copy, course, two) as run:
                assert run("import json, torch; print(json.dumps(torch.get_num_threads()))") == 2
        assert warm_kernels.counts() == {"warm": 2, "fresh": 0}
    finally:
        warm_kernels.stop()


def test_the_template_refuses_to_fork_once_it_has_started_a_thread():
    template = Template()
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        with pytest.raises(RuntimeError, match="started threads"):
            template.fork_kernel(None)
    finally:
        stop.set()
        thread.join()


def test_a_template_that_fails_gives_a_fresh_kernel_and_says_so_once(course, template, capfd):
    course, copy = course
    template.process.kill()
    template.process.wait()
    with kernels.sandboxed_kernel(copy, course, LIMITS) as run:
        assert_kernel_user(run("import json, os; print(json.dumps(os.getuid()))"))
    with kernels.sandboxed_kernel(copy, course, LIMITS) as run:
        assert run("import json; print(json.dumps('second'))") == "second"
    assert warm_kernels.active() is None
    said = [line for line in capfd.readouterr().err.splitlines() if "warm kernels:" in line]
    assert len(said) == 1 and "fresh kernels from now on" in said[0]


def test_a_cuda_grader_keeps_fresh_kernels_and_says_why():
    assert "CUDA" in warm_kernels.warm_problem(["cpu", "cuda"])
    assert warm_kernels.warm_problem(["cpu"]) is None


def test_a_course_can_ask_for_fresh_kernels():
    config = Config()
    config.WarmKernels.enabled = False
    assert "c.WarmKernels.enabled = False" in warm_kernels.warm_problem(["cpu"], config)
    assert warm_kernels.start(LIMITS, ["cpu"], config) is not None
    assert warm_kernels.active() is None


def test_the_sweep_removes_the_homes_of_ended_workers_only(tmp_path):
    ended = subprocess.Popen(["true"])
    ended.wait()
    gone = warm_kernels.TEMPLATE_HOMES / f"{warm_kernels.HOME_PREFIX}{ended.pid}-test"
    alive = warm_kernels.TEMPLATE_HOMES / f"{warm_kernels.HOME_PREFIX}{os.getpid()}-test"
    for home in (gone, alive):
        (home / ".config").mkdir(parents=True)
    try:
        warm_kernels.sweep()
        assert not gone.exists() and alive.is_dir()
    finally:
        shutil.rmtree(alive, ignore_errors=True)
        shutil.rmtree(gone, ignore_errors=True)


def test_a_kernel_joins_only_a_sandbox_its_holder_says_is_built():
    said, holder = os.pipe()
    os.write(holder, b"ready\n")
    warm_kernels.wait_until_built(said)  # bubblewrap ran the holder: every mount is in place
    os.close(holder)
    with pytest.raises(warm_kernels.TemplateError, match="before the sandbox was built"):
        warm_kernels.wait_until_built(said)  # it ended first: nothing to join
    os.close(said)


START_IMPORTS = """
import importlib, json, os, sys, tempfile
from jupyter_client.connect import write_connection_file
from viewcopy.sandbox.kernel_template import KERNEL
for module in (*KERNEL, *sys.argv[2:]):
    importlib.import_module(module)
before = set(sys.modules)
folder = tempfile.mkdtemp()
connection, _ = write_connection_file(
    os.path.join(folder, "kernel.json"), transport="ipc", ip=os.path.join(folder, "kernel")
)
from ipykernel.kernelapp import IPKernelApp
IPKernelApp.instance().initialize(["-f", connection])
with open(sys.argv[1], "w") as found:
    json.dump(sorted(set(sys.modules) - before), found)
os._exit(0)
"""


def test_a_kernel_forked_from_the_template_imports_nothing_more_to_start(tmp_path):
    """What ipykernel imports as a kernel starts is imported in the template, once: a forked
    kernel that imported it itself paid 180 ms a hand-in (the debugger's debugpy)."""
    found = tmp_path / "imported.json"
    subprocess.run(
        [shutil.which("python") or "python", "-c", START_IMPORTS, str(found), *LAB_IMPORTS],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    assert json.loads(found.read_text()) == [], "add these to kernel_template.KERNEL"


CATALOGUE = """
import dataclasses, gc, json
from viewcopy.engine import measure
from viewcopy.exercise.measured import measure_catalogue
print(json.dumps({
    "frozen": gc.get_freeze_count(),
    "kept": measure.kept(),
    "twenty": [dataclasses.asdict(e) for e in measure_catalogue(("cpu",))],
}, default=str))
"""


def test_a_forked_kernel_reads_what_its_template_measured_once_as_measuring_here_gives_it(course):
    """The template has a child measure what every kernel measures alike (torch never runs in
    the template), and its kernels read that evidence: the same, field by field, as measuring it
    in this process gives; a kernel not forked from such a template keeps nothing. The template's
    objects reach its kernels frozen out of the garbage collector's sight."""
    from viewcopy.course.assignment import LAB_MEASURED
    from viewcopy.engine import measure
    from viewcopy.exercise.measured import measure_catalogue

    course, copy = course
    here = json.loads(
        json.dumps([dataclasses.asdict(e) for e in measure_catalogue(("cpu",))], default=str)
    )
    with kernels.sandboxed_kernel(copy, course, LIMITS) as run:
        fresh = run(CATALOGUE)
    assert warm_kernels.start(LIMITS, ["cpu"], None, LAB_IMPORTS, LAB_MEASURED) is None
    warm_kernels.counts()
    try:
        with kernels.sandboxed_kernel(copy, course, LIMITS) as run:
            forked = run(CATALOGUE)
        assert warm_kernels.counts() == {"warm": 1, "fresh": 0}, "the kernel was not forked"
    finally:
        warm_kernels.stop()
    assert measure.kept() == 0 and fresh["kept"] == 0
    assert forked["frozen"] > 0 and fresh["frozen"] == 0
    assert forked["kept"] >= len(here) > 0
    assert forked["twenty"] == here == fresh["twenty"]
