"""The sandbox a graded kernel runs in: bubblewrap, prlimit and cgroups, and what they enforce.

The kernel sees the Python environment and a few system folders read-only, and its working copy
(the autograded folder's files, read-only, on a small private tmpfs it may write); nothing of the
course (source/, other submissions, the gradebook) is mounted, and nothing of the host is
writable: every folder it may write is a tmpfs of its own, gone with the sandbox. It runs in its
own pid, network, IPC, UTS and cgroup namespaces (no network at all), under `prlimit` (CPU time,
address space, file size) and, where the machine lets us create cgroups, a process-count, memory
and CPU cgroup.

Who the kernel is on the host (`KernelUser`): a grader running as root never gives a hand-in uid
0. bubblewrap then makes no user namespace (one would map the sandbox's user to root); it builds
the sandbox as root and its command drops, with `setpriv`, to a host uid of the kernel's own,
drawn from root's subordinate range (/etc/subuid, else SANDBOX_UIDS), which owns no file and no
other process. A grader that is not root runs bubblewrap in a user namespace that maps the
sandbox's user to the grader's own uid.

The grader talks to the kernel over Unix sockets in a tmpfs inside the sandbox (SOCKETS), reached
from outside through the sandbox's root (`/proc/<pid>/root`): no host folder holds them, no other
host user can reach them, and they end with the sandbox. bubblewrap and everything in the sandbox
start with the kernel's environment only: no variable of the grader's is there to read.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from viewcopy.sandbox.cgroups import Cgroups
from viewcopy.sandbox.limits import INNER, Limits, has_gpu
from viewcopy.sandbox.users import KernelUser

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC = (
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/ssl",
    "/etc/ca-certificates", "/etc/alternatives", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf",
)  # fmt: skip
SOCKETS = "/run/viewcopy-kernel"
"""The kernel's sockets, inside its sandbox: a tmpfs of SOCKETS_BYTES that ends with it."""
SOCKETS_BYTES = 1 * 2**20


def bwrap_problem() -> str | None:
    """Why bubblewrap cannot sandbox kernels here, or None when it can."""
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    user = KernelUser.for_this_grader()
    if user.uid is not None and shutil.which("setpriv") is None:
        return "setpriv is not installed (Debian/Ubuntu: apt-get install util-linux)"
    trial = ["bwrap", *user.namespaces(), "--ro-bind", "/", "/", "--", *user.become(), "true"]
    done = subprocess.run(trial, capture_output=True, text=True, env={"PATH": os.defpath})
    if done.returncode != 0:
        return f"bubblewrap cannot create namespaces here: {done.stderr.strip()}"
    return None


def readable_paths(protected: Iterable[Path]) -> list[str]:
    """System folders and this Python's folders, except any that holds one of `protected` (the
    course's data: `Course.data`)."""
    protected = list(protected)
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


@dataclass
class SandboxCommand:
    """A kernel's command wrapped in prlimit and bubblewrap, and the files bubblewrap reads from
    inherited descriptors (`fds`: pass them to it, then `close`)."""

    argv: list[str]
    fds: tuple[int, ...] = ()

    def close(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def sandboxed(
    command: list[str],
    *,
    cwd: Path,
    connection_file: str,
    connection: bytes,
    readable,
    limits: Limits,
    user: KernelUser,
    rlimits: dict[str, int],
    info_fd: int | None = None,
) -> SandboxCommand:
    """`command` (a kernel's argv) wrapped in prlimit and bwrap, for the working copy `cwd`, run
    as `user`, reading `connection` (kernel_connection.for_the_kernel) at `connection_file`; with
    `info_fd`, bwrap writes the sandbox's first process there (JSON: `child-pid`). The command
    leads a session of its own (bwrap's --new-session makes its pid 1 the leader, which an
    interrupt sent to the kernel's group would miss). Symbolic links in the working copy are
    left out; a file of it that only its owner may read is copied in (the kernel's user could
    not read it where it lies)."""
    binds: list[str] = []
    fds: list[int] = []
    for link in (p for p in SYSTEM if os.path.islink(p)):  # /lib64 -> usr/lib64 on merged /usr
        binds += ["--symlink", os.readlink(link), link]
    for path in readable:
        binds += ["--ro-bind", path, path]
    for entry in sorted(cwd.iterdir()) if cwd.is_dir() else []:
        mode = entry.lstat().st_mode
        if stat.S_ISLNK(mode):
            continue
        if user.uid is not None and stat.S_ISREG(mode) and not mode & stat.S_IROTH:
            fds.append(os.open(entry, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC))
            binds += ["--perms", "0444", "--ro-bind-data", str(fds[-1]), str(entry)]
        else:
            binds += ["--ro-bind", str(entry), str(entry)]
    for device in sorted(Path("/dev").glob("nvidia*")):
        binds += ["--dev-bind", str(device), str(device)]
    fds.append(_memory_file(connection))
    binds += ["--perms", "0444", "--ro-bind-data", str(fds[-1]), connection_file]
    info = ["--info-fd", str(info_fd)] if info_fd is not None else []
    scratch = ["--perms", "1777", "--size"]
    outer = {name: value for name, value in rlimits.items() if name not in INNER}
    inner = [f"--{name}={rlimits[name]}" for name in INNER if name in rlimits]
    argv = [
        "prlimit", *(f"--{name}={value}" for name, value in outer.items()),
        "--",
        "bwrap", *user.namespaces(), "--die-with-parent", "--new-session",
        "--proc", "/proc", "--dev", "/dev",
        *scratch, str(limits.scratch_bytes), "--tmpfs", "/tmp",
        *scratch, str(SOCKETS_BYTES), "--tmpfs", SOCKETS,
        *_parents([*readable, str(cwd), connection_file]),
        *scratch, str(limits.scratch_bytes), "--tmpfs", str(cwd),
        *binds,
        "--unsetenv", "JPY_PARENT_PID",  # jupyter_client's: the kernel's parent is bwrap's init
        *info, "--chdir", str(cwd),
        "--", "setsid", *user.become(), *(["prlimit", *inner, "--"] if inner else []), *command,
    ]  # fmt: skip
    return SandboxCommand(argv, tuple(fds))


def _memory_file(data: bytes) -> int:
    """A file descriptor reading `data` from its start (bubblewrap's --ro-bind-data reads it)."""
    fd = os.memfd_create("viewcopy-connection", os.MFD_CLOEXEC)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _parents(paths: list[str]) -> list[str]:
    """bubblewrap's options that make every folder above `paths` in the sandbox, readable by
    all (bubblewrap would otherwise copy a host folder's mode: /root's 0700 hides Python)."""
    above = {str(parent) for path in paths for parent in Path(path).parents} - {"/", "/tmp"}
    made: list[str] = []
    for folder in sorted(above, key=lambda f: (f.count("/"), f)):
        made += ["--perms", "0755", "--dir", folder]
    return made


def describe(limits: Limits) -> str:
    """The line `viewcopy grade` prints: what isolates student code, as whom, and which limits
    hold and how (a limit that does not hold is named, never left out)."""
    limited = Cgroups.enforceable(limits)
    held = [
        "CPU time",
        "file size",
        "processes by " + ("cgroup" if "pids" in limited else "rlimit"),
    ]
    missing = []
    held.append("cores by cgroup") if "cpu" in limited else missing.append("cores")
    if "memory" in limited:
        held.append("memory by cgroup")
    elif has_gpu():  # CUDA maps far more than it uses: no address-space limit
        missing.append("memory")
    else:
        held.append("memory by address space")
    enforced = f"enforced: {', '.join(held)}" + (
        f"; NOT enforced here (no cgroup): {', '.join(missing)}" if missing else ""
    )
    return (
        "sandbox: bubblewrap (own working copy, Python read-only, no network, no course files, "
        f"nothing of the host writable); {KernelUser.for_this_grader().describe()}; "
        f"limits: {limits.describe()} ({enforced})"
    )
