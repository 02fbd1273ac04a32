"""What a graded kernel may use, and how it is held to it without a cgroup: its rlimits and its
whole environment."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

PASSED = ("LANG", "LC_ALL", "NBGRADER_EXECUTION", "VIEWCOPY_SCORING")
"""Environment variables a graded kernel keeps (besides CUDA's): locale, nbgrader's mode, and
the course's scoring policy."""
SANDBOX_KEEPS = ("HOME",)
"""The sandbox's own variables, which a kernelspec's `env` does not change: HOME is the kernel's
writable /tmp (its sandbox's own tmpfs), the one folder besides its working copy it may write."""
THREADS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""The thread counts torch reads at start: the cores the kernel is granted, unless the instructor
set them (more threads than the CPU quota only wait out its throttling: 8% slower here)."""


@dataclass(frozen=True)
class Limits:
    """What one graded kernel may use. Memory is enforced by the cgroup where there is one; the
    address space may reach twice it (torch maps more than it touches), so that a huge allocation
    fails as MemoryError in its cell instead of killing the kernel."""

    cpu_s: int = 600
    cpus: float = 1.0
    memory_bytes: int = 4 * 2**30
    processes: int = 256
    file_bytes: int = 256 * 2**20
    scratch_bytes: int = 256 * 2**20

    def describe(self) -> str:
        return (
            f"{self.cpus:g} core, CPU time {self.cpu_s} s, "
            f"memory {self.memory_bytes / 2**30:g} GiB, "
            f"{self.processes} processes, files {self.file_bytes / 2**20:g} MiB, "
            f"scratch {self.scratch_bytes / 2**20:g} MiB"
        )


def kernel_environment(limits: Limits) -> dict[str, str]:
    """The whole environment bubblewrap and every process of a graded kernel's sandbox start with
    (nothing else of the grader's passes); the kernel's is this with its kernelspec's `env` over
    it (viewcopy.sandbox.provisioner)."""
    env = {"HOME": "/tmp", "PATH": os.environ["PATH"]}
    for key, value in os.environ.items():
        if key in PASSED or key.startswith(("CUDA_", "NVIDIA_")):
            env[key] = value
    for key in THREADS:
        env[key] = os.environ.get(key, str(max(1, math.ceil(limits.cpus))))
    return env


def resource_limits(limits: Limits, cgroups: set[str]) -> dict[str, int]:
    """The rlimits a graded kernel runs under, by prlimit's names (`resource.RLIMIT_<NAME>`).
    With a memory cgroup the address space may reach twice the memory (torch maps more than it
    touches); without one it is the memory limit itself. RLIMIT_NPROC holds the process count
    with or without a pids cgroup: it counts the processes of the kernel's user in the kernel's
    user namespace, which are the sandbox's own (`INNER`: set inside the sandbox)."""
    chosen = {"cpu": limits.cpu_s, "fsize": limits.file_bytes, "core": 0}
    if not has_gpu():
        chosen["as"] = limits.memory_bytes * (2 if "memory" in cgroups else 1)
    chosen["nproc"] = limits.processes
    return chosen


INNER = ("nproc",)
"""The rlimits set inside the sandbox, as the kernel's user: outside, the grader's own processes
would count against them."""


def has_gpu() -> bool:
    """CUDA reserves far more address space than it uses: no address-space limit with a GPU."""
    return any(Path("/dev").glob("nvidia[0-9]*"))
