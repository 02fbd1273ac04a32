"""A cgroup per graded kernel in each hierarchy that limits processes, memory or CPU (v1 or v2):
under the hierarchy's `viewcopy/` where the grader may create it (root), else under the grader's
own cgroup where that was delegated to it (a systemd user slice, a container's)."""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from pathlib import Path

from viewcopy.sandbox.limits import Limits

CONTROLLERS = ("pids", "memory", "cpu")
DELEGATED = "viewcopy-kernels"
"""The folder for kernel cgroups made under the grader's own, delegated cgroup."""
REMOVE_POLL_S = 0.002
"""How often a cgroup's removal is tried again while its killed processes leave it (they take a
few ms; every hand-in waited 50 ms when it was tried every 50 ms)."""


def name_for(pid: int) -> str:
    """A kernel cgroup's name: the process that makes it (and removes it), then a unique part."""
    return f"{pid}-{uuid.uuid4().hex[:12]}"


def maker_ended(name: str) -> bool:
    """Whether the process that made the cgroup `name` has ended (a name without one, from an
    earlier release, counts as ended: only an empty cgroup is ever removed)."""
    import psutil

    pid = name.split("-")[0]
    return not (pid.isdigit() and "-" in name and psutil.pid_exists(int(pid)))


def parents(hierarchy: Path, controller: str) -> list[Path]:
    """Where kernel cgroups may go in `hierarchy` (v1: the one of `controller`; v2: ""): root's
    `viewcopy/`, then, where the grader was delegated a cgroup, below it: in v1 its own; in v2
    the one above its own (v2 lets a cgroup with processes, the grader's, have no children with
    controllers: a delegated v2 cgroup holds the grader in a leaf of its own)."""
    found = [hierarchy / "viewcopy"]
    own = own_cgroup(controller)
    if own is None or own == "/":
        return found
    delegated = hierarchy / own.lstrip("/")
    if not controller:
        delegated = delegated.parent
    if delegated != hierarchy and os.access(delegated, os.W_OK):
        found.append(delegated / DELEGATED)
    return found


def own_cgroup(controller: str) -> str | None:
    """This process's cgroup in the hierarchy of `controller` (v2: ""), from /proc/self/cgroup."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if (controller in controllers.split(",")) if controller else not controllers:
                return path
    return None


class Cgroups:
    """A cgroup for one kernel in each hierarchy that limits processes, memory or CPU (v1 or v2)."""

    PERIOD_US = 100_000

    def __init__(self, limits: Limits, root: Path = Path("/sys/fs/cgroup")):
        self.folders: list[Path] = []
        name = name_for(os.getpid())
        quota = int(limits.cpus * self.PERIOD_US)
        if (root / "cgroup.controllers").is_file():  # unified (v2)
            values = {
                "pids.max": limits.processes,
                "memory.max": limits.memory_bytes,
                "cpu.max": f"{quota} {self.PERIOD_US}",
            }
            self._make(root, "", name, values)
            return
        v1 = {
            "pids": {"pids.max": limits.processes},
            "memory": {"memory.limit_in_bytes": limits.memory_bytes},
            "cpu": {"cpu.cfs_period_us": self.PERIOD_US, "cpu.cfs_quota_us": quota},
        }
        for controller, values in v1.items():
            if (root / controller).is_dir():
                self._make(root / controller, controller, name, values)

    def _make(self, hierarchy: Path, controller: str, name: str, values: dict) -> None:
        """The kernel's cgroup `name` in `hierarchy`, in the first parent that takes it."""
        for parent in parents(hierarchy, controller):
            folder = parent / name
            try:
                parent.mkdir(exist_ok=True)
                if (hierarchy / "cgroup.controllers").is_file():
                    (parent / "cgroup.subtree_control").write_text("+pids +memory +cpu")
                folder.mkdir()
                for key, value in values.items():
                    (folder / key).write_text(str(value))
            except OSError:
                with contextlib.suppress(OSError):
                    folder.rmdir()
                continue
            self.folders.append(folder)
            return

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
        """Remove every empty kernel cgroup whose maker has ended (one still in use refuses:
        EBUSY). Another grader's, made for a kernel that has not entered it yet, is empty too:
        its maker is running, so it stays."""
        for hierarchy, controller in ((root, ""), *((root / c, c) for c in CONTROLLERS)):
            for parent in parents(hierarchy, controller):
                for folder in parent.iterdir() if parent.is_dir() else []:
                    if folder.is_dir() and maker_ended(folder.name):
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
                    time.sleep(REMOVE_POLL_S)
