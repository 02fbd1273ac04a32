"""Linux primitives a warm kernel uses to step into a sandbox bubblewrap made: join its namespaces
(setns), and give up what bubblewrap's own child gives up (capabilities, new privileges, groups).

bubblewrap builds the sandbox exactly as for a fresh kernel (viewcopy.sandbox); a process
forked from the kernel template joins it here instead of being started in it.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os

NAMESPACES = {
    "cgroup": 0x02000000,
    "ipc": 0x08000000,
    "uts": 0x04000000,
    "net": 0x40000000,
    "pid": 0x20000000,
    "mnt": 0x00020000,
    "user": 0x10000000,
}
"""The namespaces bubblewrap's --unshare-all makes, by their clone flag."""
NS_GET_USERNS = 0xB701
PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
CAPABILITY_V3 = 0x20080522

_libc = ctypes.CDLL(None, use_errno=True)


class SandboxJoinError(OSError):
    """The sandbox's namespaces could not be joined or privileges not dropped."""


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise SandboxJoinError(errno, f"{what}: {os.strerror(errno)}")


def join(pid: int) -> None:
    """Join every namespace of process `pid` (a sandbox's first process) that is not ours. The
    pid namespace applies to this process's children: fork once more to run inside it. A root
    grader's sandbox has no user namespace of its own (its kernel drops to a uid instead). An
    unprivileged grader's has two: the one bubblewrap made first owns the others (joined first,
    it gives the capabilities joining them needs), and the process runs in one nested in it
    (joined last: bubblewrap maps the sandbox's user there, once /dev is mounted)."""
    handles = {
        name: os.open(f"/proc/{pid}/ns/{name}", os.O_RDONLY)
        for name in NAMESPACES
        if os.readlink(f"/proc/self/ns/{name}") != os.readlink(f"/proc/{pid}/ns/{name}")
    }  # read before joining: once in its mount namespace, /proc is the sandbox's
    if not {"mnt", "pid"} <= handles.keys():
        for handle in handles.values():
            os.close(handle)
        raise SandboxJoinError(0, f"process {pid} is not in a sandbox of its own")
    owner = fcntl.ioctl(handles["mnt"], NS_GET_USERNS)
    try:
        steps = [(name, handles[name]) for name in handles if name != "user"]
        if os.fstat(owner).st_ino != os.stat("/proc/self/ns/user").st_ino:
            steps.insert(0, ("user", owner))
        if "user" in handles and os.fstat(handles["user"]).st_ino != os.fstat(owner).st_ino:
            steps.append(("user", handles["user"]))
        for name, handle in steps:
            if name == "user":
                with contextlib.suppress(PermissionError):
                    os.setgroups([])  # as bubblewrap's child: no supplementary groups
            _check(_libc.setns(handle, NAMESPACES[name]), f"joining the {name} namespace")
    finally:
        os.close(owner)
        for handle in handles.values():
            os.close(handle)


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def drop_privileges(uid: int | None = None) -> None:
    """Become `uid` (uid and gid, no supplementary group) where given, and give up every
    capability (effective, permitted, inheritable, ambient, the whole bounding set) and the right
    to gain any by exec (no_new_privs), as `setpriv` and bubblewrap do for a fresh kernel.
    SandboxJoinError when any of it fails: a kernel never runs with a privilege left."""
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "setting no_new_privs")
    _check(_libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clearing ambient")
    for capability in range(last_capability() + 1):
        _check(_libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0), f"dropping cap {capability}")
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    header, data = _Header(CAPABILITY_V3, 0), (_Data * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "dropping capabilities")
    if _bounding_set() != 0:
        raise SandboxJoinError(0, "the capability bounding set is not empty")


def last_capability() -> int:
    """The highest capability this Linux knows."""
    with open("/proc/sys/kernel/cap_last_cap") as known:
        return int(known.read())


def _bounding_set() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("CapBnd:"):
                return int(line.split()[1], 16)
    raise SandboxJoinError(0, "the capability bounding set cannot be read")
