"""Every kernel viewcopy starts is reached over Unix sockets, never TCP: a sandboxed one's live in
its sandbox (viewcopy.sandbox.kernel_manager), any other's in the temporary folder (here).

jupyter_client picks a kernel's TCP ports by binding port 0 and letting go, and the kernel binds
them a second later; in between, any other program on the machine may take one (the other
kernels a busy grader starts, their clients' own connections), and that kernel dies before it
answers ("Kernel died before replying to kernel_info"). A socket file named for one kernel alone
cannot be taken. jupyter_client removes the files when the kernel shuts down."""

from __future__ import annotations

from jupyter_client.localinterfaces import localhost
from jupyter_client.manager import AsyncKernelManager
from traitlets import default

from viewcopy.sandbox.kernel_connection import socket_prefix


class UnixSockets:
    """Mixed into a jupyter_client kernel manager: its kernels' sockets are Unix sockets unless
    its transport is set to "tcp"."""

    @default("transport")
    def _transport_default(self) -> str:
        return "ipc"

    @default("ip")
    def _ip_default(self) -> str:
        return socket_prefix() if self.transport == "ipc" else localhost()


class UnixSocketKernelManager(UnixSockets, AsyncKernelManager):
    """jupyter_client's kernel manager, its kernels reached over Unix sockets."""
