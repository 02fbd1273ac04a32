"""The sandbox a graded kernel runs in: bubblewrap, prlimit and cgroups, and what they enforce.

The kernel sees the Python environment and a few system folders read-only, and its working copy
(the autograded folder's files, read-only, on a small private tmpfs it may write); nothing of the
course (source/, other submissions, the gradebook) is mounted. It runs as an unprivileged user in
its own user, pid, network, IPC and UTS namespaces (no network at all), under `prlimit` (CPU time,
address space, file size) and, where the machine lets us create cgroups, a process-count and
memory cgroup. The grader talks to it over Unix sockets in a folder mounted for that alone.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC = (
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/ssl",
    "/etc/ca-certificates", "/etc/alternatives", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf",
)  # fmt: skip
COURSE_DATA = ("source", "release", "submitted", "autograded", "feedback", "gradebook.db")
NOBODY = "65534"
PASSED = ("LANG", "LC_ALL", "NBGRADER_EXECUTION", "VIEWCOPY_SCORING")
"""Environment variables a graded kernel keeps (besides CUDA's): locale, nbgrader's mode, and
the course's scoring policy."""
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


def bwrap_problem() -> str | None:
    """Why bubblewrap cannot sandbox kernels here, or None when it can."""
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    trial = [
        "bwrap", "--unshare-all", "--unshare-user", "--uid", NOBODY, "--gid", NOBODY,
        "--ro-bind", "/", "/", "--", "true",
    ]  # fmt: skip
    done = subprocess.run(trial, capture_output=True, text=True)
    if done.returncode != 0:
        return f"bubblewrap cannot create namespaces here: {done.stderr.strip()}"
    return None


def readable_paths(course: Path) -> list[str]:
    """System folders and this Python's folders, except any that holds the course's data."""
    protected = [course / name for name in COURSE_DATA]
    candidates = [
        *SYSTEM,
        *ETC,
        sys.prefix,
        sys.base_prefix,
        *(p for p in sys.path if p and os.path.isdir(p)),
    ]
    chosen: list[str] = []
    for candidate in candidates:
        path = Path(candidate).resolve()
        if not path.exists() or any(_within(p, path) for p in protected):
            continue
        if str(path) not in chosen and not any(_within(path, Path(c)) for c in chosen):
            chosen.append(str(path))
    return chosen


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


class Cgroups:
    """A cgroup for one kernel in each hierarchy that limits processes, memory or CPU (v1 or v2)."""

    PERIOD_US = 100_000

    def __init__(self, limits: Limits, root: Path = Path("/sys/fs/cgroup")):
        self.folders: list[Path] = []
        name = f"viewcopy/{uuid.uuid4().hex[:12]}"
        quota = int(limits.cpus * self.PERIOD_US)
        if (root / "cgroup.controllers").is_file():  # unified (v2)
            values = {
                "pids.max": limits.processes,
                "memory.max": limits.memory_bytes,
                "cpu.max": f"{quota} {self.PERIOD_US}",
            }
            self._make(root, name, values)
            return
        v1 = {
            "pids": {"pids.max": limits.processes},
            "memory": {"memory.limit_in_bytes": limits.memory_bytes},
            "cpu": {"cpu.cfs_period_us": self.PERIOD_US, "cpu.cfs_quota_us": quota},
        }
        for controller, values in v1.items():
            if (root / controller).is_dir():
                self._make(root / controller, name, values)

    def _make(self, hierarchy: Path, name: str, values: dict[str, object]) -> None:
        folder = hierarchy / name
        try:
            if (hierarchy / "cgroup.controllers").is_file():
                (hierarchy / "viewcopy").mkdir(exist_ok=True)
                control = hierarchy / "viewcopy" / "cgroup.subtree_control"
                control.write_text("+pids +memory +cpu")
            folder.mkdir(parents=True)
            for key, value in values.items():
                (folder / key).write_text(str(value))
        except OSError:
            with contextlib.suppress(OSError):
                folder.rmdir()
            return
        self.folders.append(folder)

    @property
    def limited(self) -> set[str]:
        keys = {f.name for folder in self.folders for f in folder.iterdir()}
        return {kind for kind in ("pids", "memory", "cpu") if any(k.startswith(kind) for k in keys)}

    def enter_command(self) -> list[str]:
        """A shell prefix that moves itself into the cgroups, then runs the rest."""
        if not self.folders:
            return []
        moves = " && ".join(f"echo $$ > {folder / 'cgroup.procs'}" for folder in self.folders)
        return ["/bin/sh", "-c", f'{moves} && exec "$@"', "sandbox"]

    @classmethod
    def enforceable(cls, limits: Limits) -> set[str]:
        """Which limits cgroups can enforce on this machine (a trial cgroup, removed again)."""
        probe = cls(limits)
        try:
            return probe.limited
        finally:
            probe.remove()

    @staticmethod
    def sweep(root: Path = Path("/sys/fs/cgroup")) -> None:
        """Remove every empty kernel cgroup left behind (one still in use refuses: EBUSY)."""
        for hierarchy in (root, root / "pids", root / "memory", root / "cpu"):
            parent = hierarchy / "viewcopy"
            for folder in parent.iterdir() if parent.is_dir() else []:
                if folder.is_dir():
                    with contextlib.suppress(OSError):
                        folder.rmdir()

    def remove(self, wait_s: float = 5.0) -> None:
        """Kill what is left in the cgroups and remove them, once the kernel has let go of
        them (a process that was just killed stays a member for a moment: rmdir says EBUSY)."""
        for folder in self.folders:
            procs = folder / "cgroup.procs"
            for pid in procs.read_text().split() if procs.exists() else []:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), 9)
            deadline = time.monotonic() + wait_s
            while True:
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.05)


def kernel_environment(limits: Limits) -> dict[str, str]:
    """The whole environment a graded kernel sees (nothing else of the grader's passes)."""
    env = {"HOME": "/tmp", "PATH": os.environ["PATH"]}
    for key, value in os.environ.items():
        if key in PASSED or key.startswith(("CUDA_", "NVIDIA_")):
            env[key] = value
    for key in THREADS:
        env[key] = os.environ.get(key, str(max(1, math.ceil(limits.cpus))))
    return env


def resource_limits(limits: Limits) -> dict[str, int]:
    """The rlimits a graded kernel runs under, by prlimit's names (`resource.RLIMIT_<NAME>`)."""
    chosen = {"cpu": limits.cpu_s, "fsize": limits.file_bytes, "core": 0}
    if not _has_gpu():
        chosen["as"] = limits.memory_bytes * 2
    return chosen


def sandboxed(
    command: list[str],
    *,
    cwd: Path,
    connection_file: str,
    sockets: str,
    readable,
    limits: Limits,
    info_fd: int | None = None,
) -> list[str]:
    """`command` (a kernel's argv) wrapped in prlimit and bwrap, for the working copy `cwd`; with
    `info_fd`, bwrap writes the sandbox's first process there (JSON: `child-pid`)."""
    binds: list[str] = []
    for link in (p for p in SYSTEM if os.path.islink(p)):  # /lib64 -> usr/lib64 on merged /usr
        binds += ["--symlink", os.readlink(link), link]
    for path in readable:
        binds += ["--ro-bind", path, path]
    for entry in sorted(cwd.iterdir()) if cwd.is_dir() else []:
        binds += ["--ro-bind", str(entry), str(entry)]
    for device in sorted(Path("/dev").glob("nvidia*")):
        binds += ["--dev-bind", str(device), str(device)]
    env = ["--clearenv"]
    for key, value in kernel_environment(limits).items():
        env += ["--setenv", key, value]
    info = ["--info-fd", str(info_fd)] if info_fd is not None else []
    return [
        "prlimit", *(f"--{name}={value}" for name, value in resource_limits(limits).items()),
        "--",
        "bwrap", "--unshare-all", "--unshare-user", "--uid", NOBODY, "--gid", NOBODY,
        "--die-with-parent", "--proc", "/proc", "--dev", "/dev",
        "--size", str(limits.scratch_bytes), "--tmpfs", "/tmp",
        "--size", str(limits.scratch_bytes), "--tmpfs", str(cwd),
        *binds,
        "--ro-bind", connection_file, connection_file,
        "--bind", sockets, sockets,
        *env, *info, "--chdir", str(cwd),
        "--", *command,
    ]  # fmt: skip


def _has_gpu() -> bool:
    """CUDA reserves far more address space than it uses: no address-space limit with a GPU."""
    return any(Path("/dev").glob("nvidia[0-9]*"))


def describe(limits: Limits) -> str:
    """The line `viewcopy grade` prints: what isolates student code, and which limits hold."""
    limited = Cgroups.enforceable(limits)
    enforced = (
        "cores, processes and memory by cgroup"
        if {"pids", "memory", "cpu"} <= limited
        else f"cgroups here limit only {', '.join(sorted(limited)) or 'nothing'}; "
        "memory falls back to an address-space limit"
    )
    return (
        "sandbox: bubblewrap (own working copy, Python read-only, no network, no course files); "
        f"limits: {limits.describe()} ({enforced})"
    )
