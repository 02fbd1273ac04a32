"""Who a graded kernel is on the host: never root."""

from __future__ import annotations

import contextlib
import os
import random
from dataclasses import dataclass
from pathlib import Path

NOBODY = "65534"
"""The sandbox's user inside a user namespace (a grader that is not root), and a root grader's
holder of a warm kernel's sandbox."""
SANDBOX_UIDS = range(1_500_000_000, 1_500_000_000 + 65_536)
"""Host uids a root grader's kernels run as where /etc/subuid gives root no range: far above
every account's, owning no file."""
KEPT_CAPABILITIES = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")
"""What bubblewrap keeps, as root, for `setpriv` to become the kernel's user: setting its uid and
gid and dropping the bounding set. `setpriv` gives up all three before the kernel runs."""


@dataclass(frozen=True)
class KernelUser:
    """Who one kernel is on the host: `uid` (its gid the same) when the grader is root and drops
    to it, None when a user namespace maps the sandbox's user to the grader's own uid."""

    uid: int | None

    @classmethod
    def for_this_grader(cls) -> KernelUser:
        """As root, a uid of the kernel's own from the sandbox range (none in use by a running
        process, as far as /proc shows); otherwise the grader's own, through a user namespace."""
        if os.geteuid() != 0:
            return cls(None)
        uids = sandbox_uids()
        busy = _running_uids()
        free = [uid for uid in random.sample(uids, min(64, len(uids))) if uid not in busy]
        return cls(free[0] if free else random.choice(uids))

    def namespaces(self) -> list[str]:
        """bubblewrap's options for the namespaces: no user namespace when dropping to `uid`."""
        isolated = [f"--unshare-{kind}" for kind in ("pid", "net", "ipc", "uts", "cgroup-try")]
        if self.uid is None:
            return [*isolated, "--unshare-user", "--uid", NOBODY, "--gid", NOBODY]
        keep = [arg for cap in KEPT_CAPABILITIES for arg in ("--cap-add", cap)]
        return [*isolated, "--cap-drop", "ALL", *keep]

    def become(self) -> list[str]:
        """The command prefix, run inside the sandbox, that becomes the kernel's user with no
        capability left (nothing when a user namespace already made it)."""
        if self.uid is None:
            return []
        return [
            "setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--",
        ]  # fmt: skip

    def holder(self) -> KernelUser:
        """Who a warm kernel's holder runs as: another uid than the kernel's (nobody), so that
        the kernel cannot signal it, where the grader is root; the same one otherwise."""
        return KernelUser(int(NOBODY)) if self.uid is not None else self

    def describe(self) -> str:
        if self.uid is None:
            return f"kernels run as your uid ({os.geteuid()}) in a user namespace"
        uids = sandbox_uids()
        return (
            f"kernels never run as root: each drops to a host uid of its own "
            f"({uids.start}-{uids.stop - 1}, {_uids_source()})"
        )


def sandbox_uids() -> range:
    """Root's subordinate uids (/etc/subuid) where it has some, else SANDBOX_UIDS."""
    try:
        lines = Path("/etc/subuid").read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        name, _, rest = line.partition(":")
        start, _, count = rest.partition(":")
        if name in ("root", "0") and start.isdigit() and count.isdigit() and int(count) > 0:
            return range(int(start), int(start) + int(count))
    return SANDBOX_UIDS


def _uids_source() -> str:
    return "root's in /etc/subuid" if sandbox_uids() != SANDBOX_UIDS else "owning no file"


def _running_uids() -> set[int]:
    uids = set()
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                uids.add(entry.stat().st_uid)
    return uids
