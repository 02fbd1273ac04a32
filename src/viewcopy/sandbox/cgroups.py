"""A cgroup per graded kernel in each hierarchy that limits processes, memory or CPU (v1 or v2)."""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from pathlib import Path

from viewcopy.sandbox.limits import Limits


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
