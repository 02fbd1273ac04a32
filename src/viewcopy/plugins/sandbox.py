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
import math
import os
import random
import shutil
import stat
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
"""The sandbox's user inside a user namespace (a grader that is not root)."""
SANDBOX_UIDS = range(1_500_000_000, 1_500_000_000 + 65_536)
"""Host uids a root grader's kernels run as where /etc/subuid gives root no range: far above
every account's, owning no file."""
SOCKETS = "/run/viewcopy-kernel"
"""The kernel's sockets, inside its sandbox: a tmpfs of SOCKETS_BYTES that ends with it."""
SOCKETS_BYTES = 1 * 2**20
KEPT_CAPABILITIES = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")
"""What bubblewrap keeps, as root, for `setpriv` to become the kernel's user: setting its uid and
gid and dropping the bounding set. `setpriv` gives up all three before the kernel runs."""
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
    user = KernelUser.for_this_grader()
    if user.uid is not None and shutil.which("setpriv") is None:
        return "setpriv is not installed (Debian/Ubuntu: apt-get install util-linux)"
    trial = ["bwrap", *user.namespaces(), "--ro-bind", "/", "/", "--", *user.become(), "true"]
    done = subprocess.run(trial, capture_output=True, text=True, env={"PATH": os.defpath})
    if done.returncode != 0:
        return f"bubblewrap cannot create namespaces here: {done.stderr.strip()}"
    return None


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
        isolated = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
        if self.uid is None:
            return [*isolated, "--unshare-cgroup-try", "--unshare-user", "--uid", NOBODY,
                    "--gid", NOBODY]  # fmt: skip
        keep = [arg for cap in KEPT_CAPABILITIES for arg in ("--cap-add", cap)]
        return [*isolated, "--unshare-cgroup-try", "--cap-drop", "ALL", *keep]

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
    """The whole environment a graded kernel sees, and bubblewrap and every process of its
    sandbox start with (nothing else of the grader's passes)."""
    env = {"HOME": "/tmp", "PATH": os.environ["PATH"]}
    for key, value in os.environ.items():
        if key in PASSED or key.startswith(("CUDA_", "NVIDIA_")):
            env[key] = value
    for key in THREADS:
        env[key] = os.environ.get(key, str(max(1, math.ceil(limits.cpus))))
    return env


def resource_limits(limits: Limits, user: KernelUser, cgroups: set[str]) -> dict[str, int]:
    """The rlimits a graded kernel runs under, by prlimit's names (`resource.RLIMIT_<NAME>`).
    With a memory cgroup the address space may reach twice the memory (torch maps more than it
    touches); without one it is the memory limit itself. A kernel with a uid of its own is held to
    its process count by RLIMIT_NPROC too (it counts that uid's processes: only the kernel's)."""
    chosen = {"cpu": limits.cpu_s, "fsize": limits.file_bytes, "core": 0}
    if not _has_gpu():
        chosen["as"] = limits.memory_bytes * (2 if "memory" in cgroups else 1)
    if user.uid is not None:
        chosen["nproc"] = limits.processes
    return chosen


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
    readable,
    limits: Limits,
    user: KernelUser,
    rlimits: dict[str, int],
    info_fd: int | None = None,
) -> SandboxCommand:
    """`command` (a kernel's argv) wrapped in prlimit and bwrap, for the working copy `cwd`, run
    as `user`; with `info_fd`, bwrap writes the sandbox's first process there (JSON:
    `child-pid`). Symbolic links in the working copy are left out; a file of it that only its
    owner may read is copied in (the kernel's user could not read it where it lies)."""
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
    info = ["--info-fd", str(info_fd)] if info_fd is not None else []
    scratch = ["--perms", "1777", "--size"]
    argv = [
        "prlimit", *(f"--{name}={value}" for name, value in rlimits.items()),
        "--",
        "bwrap", *user.namespaces(), "--die-with-parent", "--new-session",
        "--proc", "/proc", "--dev", "/dev",
        *scratch, str(limits.scratch_bytes), "--tmpfs", "/tmp",
        *scratch, str(SOCKETS_BYTES), "--tmpfs", SOCKETS,
        *_parents([*readable, str(cwd), connection_file]),
        *scratch, str(limits.scratch_bytes), "--tmpfs", str(cwd),
        *binds,
        "--ro-bind", connection_file, connection_file,
        "--unsetenv", "JPY_PARENT_PID",  # jupyter_client's: the kernel's parent is bwrap's init
        *info, "--chdir", str(cwd),
        "--", *user.become(), *command,
    ]  # fmt: skip
    return SandboxCommand(argv, tuple(fds))


def _parents(paths: list[str]) -> list[str]:
    """bubblewrap's options that make every folder above `paths` in the sandbox, readable by
    all (bubblewrap would otherwise copy a host folder's mode: /root's 0700 hides Python)."""
    above = {str(parent) for path in paths for parent in Path(path).parents} - {"/", "/tmp"}
    made: list[str] = []
    for folder in sorted(above, key=lambda f: (f.count("/"), f)):
        made += ["--perms", "0755", "--dir", folder]
    return made


def _has_gpu() -> bool:
    """CUDA reserves far more address space than it uses: no address-space limit with a GPU."""
    return any(Path("/dev").glob("nvidia[0-9]*"))


def describe(limits: Limits) -> str:
    """The line `viewcopy grade` prints: what isolates student code, as whom, and which limits
    hold (a limit that does not is named, never left out)."""
    limited = Cgroups.enforceable(limits)
    user = KernelUser.for_this_grader()
    held = ["CPU time", "file size"]
    missing = []
    held.append("cores by cgroup") if "cpu" in limited else missing.append("cores")
    if "pids" in limited:
        held.append("processes by cgroup")
    elif user.uid is not None:
        held.append("processes by RLIMIT_NPROC")
    else:
        missing.append("processes")
    if _has_gpu():
        held.append("memory by cgroup") if "memory" in limited else missing.append("memory")
    else:
        held.append("memory by cgroup" if "memory" in limited else "memory by address space")
    enforced = "; ".join(
        [f"enforced: {', '.join(held)}"]
        + [f"NOT enforced here (no cgroup): {', '.join(missing)}"] * bool(missing)
    )
    return (
        "sandbox: bubblewrap (own working copy, Python read-only, no network, no course files, "
        f"nothing of the host writable); {user.describe()}; "
        f"limits: {limits.describe()} ({enforced})"
    )
