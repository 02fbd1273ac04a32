"""Every way a sandboxed kernel ends, fresh and forked warm, and what each left behind: run by
tests/grading/test_kernel_endings.py as root and as an ordinary user. Each kernel runs a notebook
through nbclient, as nbgrader runs a hand-in: its first cell starts two children (one in the
kernel's process group, one in a session of its own), its last cell ends the kernel its way, and
nbclient cleans up after it as it does (a dead kernel gets `cleanup_resources` alone). Argument:
a folder of the user's own to work in; prints, as JSON, {mode: {way: what was left}}."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import uuid
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

LIMITS_FIELDS = dict(cpu_s=5, memory_bytes=2 * 2**30, processes=64, scratch_bytes=8 * 2**20)
"""Small enough that a kernel can run past its CPU time and its memory in seconds, and large
enough that a kernel forked from the lab's template starts: it maps 1.3 GB, and without a memory
cgroup its address space is held to the memory limit (at 1 GiB it had 36 KB to spare, and a
kernel that could not map a thread's stack died before its first cell)."""
WAYS = {
    "shut down": ("graceful", None),
    "killed": ("immediate", None),
    "os._exit": ("graceful", "import os; os._exit(3)"),
    "out of memory": ("graceful", "held = [b'x' * 2**25 for _ in range(96)]"),  # 3 GiB
    "past its CPU time": ("graceful", "while True: pass"),
}
ENDED = {"shut down": {"its last cell ran"}, "killed": {"its last cell ran"}, "os._exit": {"died"},
         "out of memory": {"died", "MemoryError"}, "past its CPU time": {"died"}}  # fmt: skip
"""How each way may end the kernel's run: out of memory, a kernel is killed where a memory cgroup
holds it before its address space runs out (else its cell gets MemoryError)."""
"""Each way: how nbclient shuts the kernel down at the end (if it still runs), the last cell."""
GRACE_S = 5.0
"""How long after nbclient is done a process of the kernel may take to end."""
CHILDREN = """
import json, os, subprocess
group = subprocess.Popen(["sleep", "{token}"])
session = subprocess.Popen(["sleep", "{token}"], start_new_session=True)
print(json.dumps("started"))
"""


def sandbox_processes(provisioner, token: str) -> list:
    """The sandbox's processes as the grader sees them: bubblewrap's, the kernel (a forked one is
    the template's grandchild) and all they started, and the cell's sleeps."""
    import psutil

    roots = [p for p in (provisioner.process.pid, provisioner.sandbox_pid, provisioner.kernel_pid)
             if p is not None]  # fmt: skip
    found = {}
    for pid in roots:
        try:
            process = psutil.Process(pid)
            for one in (process, *process.children(recursive=True)):
                found[one.pid] = one
        except psutil.NoSuchProcess:
            continue
    for one in psutil.process_iter(["cmdline"]):
        if one.info["cmdline"] == ["sleep", token]:
            found[one.pid] = one
    return list(found.values())


def still_running(processes: list, within_s: float = GRACE_S) -> list[str]:
    """Those of `processes` still running `within_s` from now (a killed one takes a moment)."""
    import psutil

    deadline = time.monotonic() + within_s
    while True:
        left = []
        for process in processes:
            try:
                if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                    left.append(f"{process.pid} {process.name()} {' '.join(process.cmdline())}")
            except psutil.NoSuchProcess:
                continue
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


async def end(way: str, course: Path) -> dict:
    """Start a kernel, end it `way`, and say what of it remains."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError
    from traitlets.config import Config

    from viewcopy.course.folder import Course
    from viewcopy.sandbox import Limits, readable_paths
    from viewcopy.sandbox.kernel_manager import SandboxedKernelManager

    shutdown, last = WAYS[way]
    token = f"{1000 + uuid.uuid4().int % 1000}.{os.getpid()}"
    cells = [CHILDREN.format(token=token), *([last] if last else [])]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    copy = course / "autograded" / "student" / way.replace(" ", "-")
    copy.mkdir(parents=True)
    config = Config()
    config.SandboxedKernelManager.readable = readable_paths(Course(course).data)
    config.SandboxedKernelManager.limits = asdict(Limits(**LIMITS_FIELDS))
    seen: dict = {}

    def started(cell_index: int, **_) -> None:
        if cell_index == 0:
            seen["km"] = km = client.km
            seen["ip"] = ip = km.ip
            seen["processes"] = sandbox_processes(km.provisioner, token)
            seen["cgroups"] = [str(f) for f in km.provisioner.cgroups.folders]
            seen["links"] = [f"{ip}-{port}" for port in km.ports]
            seen["connection file"] = km.connection_file
            seen["linked"] = all(os.path.islink(link) for link in seen["links"])

    def failed(execute_reply: dict, **_) -> None:
        """The error a cell's reply names (its output may come after nbclient stops waiting)."""
        seen.setdefault("errors", []).append(execute_reply["content"].get("ename"))

    client = NotebookClient(  # as nbgrader's Execute: its own manager, shut down at the end
        notebook,
        kernel_manager_class=SandboxedKernelManager,
        config=config,
        timeout=120,
        allow_errors=True,
        kernel_name="python3",
        shutdown_kernel=shutdown,
        extra_arguments=["--HistoryManager.hist_file=:memory:"],
        resources={"metadata": {"path": str(copy)}},
        on_cell_executed=started,
        on_cell_error=failed,
    )
    try:
        await client.async_execute()
        outputs = notebook.cells[-1].get("outputs", [])
        errors = [o.get("ename") for o in outputs if o.get("output_type") == "error"]
        said = " ".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
        if "MemoryError" in said:  # IPython short of memory to format its traceback says it so
            errors.append("MemoryError")
        ended = (
            errors[0] if errors else f"ran on ({said[-300:]!r})" if last else "its last cell ran"
        )
    except DeadKernelError:
        ended = "died"
    except Exception as exc:  # noqa: BLE001 (said in the report: this way's kernel never ran)
        return {"ended": f"{type(exc).__name__}: {exc}"}
    if "km" not in seen:  # its first cell, which names what to look for, never finished
        return {"ended": f"{ended} in its first cell"}
    km = seen["km"]
    return {
        "ended": ended,
        "linked while it ran": seen["linked"],
        "processes": still_running(seen["processes"]),
        "process count while it ran": len(seen["processes"]),
        "cgroups": [folder for folder in seen["cgroups"] if os.path.exists(folder)],
        "cgroup count while it ran": len(seen["cgroups"]),
        "links": [link for link in seen["links"] if os.path.lexists(link)],
        "connection file": os.path.exists(seen["connection file"]),
        "ip before": seen["ip"],
        "ip after": km.ip,
        "pid named": km.provisioner is not None and km.provisioner.sandbox_pid is not None,
    }


def every_ending(work: Path) -> dict:
    """{mode: {way: what remained}}, fresh kernels then warm ones."""
    from viewcopy.course.assignment import LAB_IMPORTS
    from viewcopy.sandbox import Limits, warm_kernels

    found: dict = {}
    for mode in ("fresh", "warm"):
        if mode == "warm":
            assert warm_kernels.start(Limits(**LIMITS_FIELDS), ["cpu"], None, LAB_IMPORTS) is None
            warm_kernels.wait_ready()
        warm_kernels.counts()
        try:
            course = work / mode / "course"
            found[mode] = {way: asyncio.run(end(way, course)) for way in WAYS}
        finally:
            warm_kernels.stop()
        found[mode]["started"] = warm_kernels.counts()
    return found


if __name__ == "__main__":
    print(json.dumps(every_ending(Path(sys.argv[1]))))


def cgroups_made(found: dict) -> dict[str, bool]:
    """Whether each kernel of `every_ending` had cgroups of its own, by mode and way."""
    return {
        f"{mode}, {way}": found[mode][way]["cgroup count while it ran"] > 0
        for mode in ("fresh", "warm")
        for way in WAYS
    }


def leftovers(found: dict) -> list[str]:
    """What `every_ending` found wrong: anything of a kernel that outlived it, a manager that
    names its dead sandbox or moved its `ip`, a way that did not end the kernel as it says, a
    kernel that did not start as its mode says."""
    wrong = []
    for mode, ways in found.items():
        started = ways["started"]
        if started != {
            "warm": len(WAYS) * (mode == "warm"),
            "fresh": len(WAYS) * (mode == "fresh"),
        }:
            wrong.append(f"{mode}: kernels started {started}")
        for way in WAYS:
            seen = ways[way]
            if seen["ended"] not in ENDED[way]:
                wrong.append(f"{mode}, {way}: the kernel's run ended as {seen['ended']}")
            if "processes" not in seen:
                continue
            for what in ("processes", "cgroups", "links"):
                if seen[what]:
                    wrong.append(f"{mode}, {way}: {what} left: {seen[what]}")
            if (
                seen["connection file"]
                or seen["pid named"]
                or seen["ip after"] != seen["ip before"]
            ):
                wrong.append(f"{mode}, {way}: its manager still names it: {seen}")
            if "/proc/" in seen["ip after"] or not seen["linked while it ran"]:
                wrong.append(f"{mode}, {way}: the manager's ip is not its own links: {seen}")
            if seen["process count while it ran"] < 3:  # bubblewrap, the kernel, its children
                wrong.append(f"{mode}, {way}: its processes were not seen: {seen}")
    return wrong
