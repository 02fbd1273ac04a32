"""How the grader reaches a sandboxed kernel's sockets, which live inside its sandbox.

The kernel binds `<inside>-<port>` in its sandbox's own tmpfs (bubblewrap.SOCKETS) and reads a
connection file of its own: the manager's, with `ip` the inside path (`for_the_kernel`), bound
read-only where the manager's lies. On the host, every `<ip>-<port>` the manager names is a
symbolic link to that socket through the sandbox's root, `/proc/<sandbox pid>/root` (`link`),
which only the grader (or root) may follow. A restart links the same names to the new sandbox,
so the manager's `ip`, and a client connected before, stay as they were; jupyter_client's own
cleanup removes the links (`cleanup_ipc_files`), as it removes a kernel's socket files. The links
are named by the process that made them (`socket_prefix`): those of a grader killed outright are
removed by the next run (`sweep`)."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import uuid
from collections.abc import Iterable
from pathlib import Path

from viewcopy.files.atomic import link_atomically

LINKS = Path(tempfile.gettempdir())
LINK_PREFIX = "viewcopy-kernel-"


def socket_prefix(folder: str | None = None) -> str:
    """A path in `folder` (the temporary folder by default) no other kernel's sockets share, named
    by the process that makes it: `<folder>/viewcopy-kernel-<this pid>-<random>`; the kernel's
    sockets (or the links to them) are `<prefix>-<port>`."""
    return f"{folder or LINKS}/{LINK_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:12]}"


def sweep() -> None:
    """Remove every link of this user's to a kernel's socket whose maker has ended (another
    user's, in the shared temporary folder, is theirs to remove)."""
    import psutil

    for link in LINKS.glob(f"{LINK_PREFIX}*-*-*"):
        maker = link.name.removeprefix(LINK_PREFIX).split("-")[0]
        with contextlib.suppress(OSError):  # gone meanwhile, or not ours after all
            if (
                link.is_symlink()
                and link.lstat().st_uid == os.geteuid()
                and maker.isdigit()
                and not psutil.pid_exists(int(maker))
            ):
                link.unlink()


def for_the_kernel(connection_file: str, inside: str) -> bytes:
    """The manager's connection file as the kernel reads it: its sockets at `inside`."""
    with open(connection_file, encoding="utf-8") as written:
        info = json.load(written)
    info["ip"] = inside
    return json.dumps(info, indent=1).encode()


def through_root(sandbox_pid: int, inside: str) -> str:
    """`inside` (a path in the sandbox) as the grader reaches it."""
    return f"/proc/{sandbox_pid}/root{inside}"


def link(ip: str, ports: Iterable[int], target: str) -> None:
    """Make each `<ip>-<port>` a link to `<target>-<port>`, replacing what was there at once."""
    for port in ports:
        link_atomically(f"{ip}-{port}", f"{target}-{port}")
