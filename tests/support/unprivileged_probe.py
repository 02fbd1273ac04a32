"""Run by tests/grading/test_unprivileged.py as an ordinary user: start a sandboxed kernel fresh
and one forked from a warm template, as `viewcopy grade` would, probe what holds in each, and
print it all as JSON. Argument: a folder of the user's own to work in."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support import kernels  # noqa: E402

from viewcopy.course.assignment import LAB_IMPORTS  # noqa: E402
from viewcopy.sandbox import Limits, describe, warm_kernels  # noqa: E402
from viewcopy.sandbox.cgroups import CONTROLLERS, parents  # noqa: E402

LIMITS = Limits(cpu_s=60, memory_bytes=2 * 2**30, processes=64, scratch_bytes=8 * 2**20)
"""Memory above what a forked kernel maps (support.kernel_endings), its address space (twice it
with a memory cgroup) below what PROBE asks for."""
PROBE = f"""
import json, os, subprocess
children, said = [], "ok"
try:
    for _ in range(200):
        children.append(subprocess.Popen(["sleep", "30"]))
except OSError as exc:
    said = type(exc).__name__
for child in children:
    child.kill()
try:
    held = bytearray({2 * LIMITS.memory_bytes + 2**30})
    memory = "allocated"
except MemoryError:
    memory = "MemoryError"
print(json.dumps({{"uid": os.getuid(), "spawn": [said, len(children)], "memory": memory}}))
"""


def kernel_cgroups() -> list[dict]:
    """The kernel cgroups made in the grader's delegated cgroups: their processes and limits."""
    found = []
    root = Path("/sys/fs/cgroup")
    for hierarchy, controller in ((root, ""), *((root / c, c) for c in CONTROLLERS)):
        for parent in parents(hierarchy, controller)[1:]:
            for folder in sorted(p for p in parent.glob("*") if p.is_dir()):
                limits = {
                    f.name: f.read_text().strip()
                    for f in folder.iterdir()
                    if f.name in ("pids.max", "memory.max", "memory.limit_in_bytes")
                }
                procs = (folder / "cgroup.procs").read_text().split()
                found.append({"folder": str(folder), "processes": len(procs), **limits})
    return found


def main(work: Path) -> None:
    course = work / "course"
    copy = course / "autograded" / "student" / "lab"
    copy.mkdir(parents=True, exist_ok=True)
    (copy / "lab.ipynb").write_text("the submission")
    found = {"describe": describe(LIMITS)}
    for how in ("fresh", "forked"):
        if how == "forked":
            assert warm_kernels.start(LIMITS, ["cpu"], imports=LAB_IMPORTS) is None
        warm_kernels.counts()
        try:
            with kernels.sandboxed_kernel(copy, course, LIMITS) as run:
                found[how] = {**run(PROBE), "cgroups": kernel_cgroups()}
            found[how]["started"] = warm_kernels.counts()
        finally:
            warm_kernels.stop()
    print(json.dumps(found))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
