"""jupyter_client's kernel manager with every kernel started in a sandbox of its own
(viewcopy.sandbox.bubblewrap), reached over Unix sockets inside it. The sandbox is its kernels'
provisioner (viewcopy.sandbox.provisioner), whatever provisioner their kernelspec names: where the
worker keeps a kernel template (viewcopy.sandbox.warm_kernels), the kernel is forked from it into
the sandbox instead of started fresh in it."""

from __future__ import annotations

from jupyter_client.manager import AsyncKernelManager
from traitlets import Dict, DottedObjectName, List, Type, Unicode

from viewcopy.sandbox.kernel_client import ReadyKernelClient
from viewcopy.sandbox.provisioner import POLL_S, SandboxProvisioner
from viewcopy.sandbox.unix_sockets import UnixSockets


class SandboxedKernelManager(UnixSockets, AsyncKernelManager):
    """A kernel manager whose kernels start inside the sandbox, reached over Unix sockets that
    live in it, through links on the host (viewcopy.sandbox.kernel_connection)."""

    client_class = DottedObjectName("viewcopy.sandbox.kernel_client.ReadyKernelClient")
    client_factory = Type(klass=ReadyKernelClient)
    readable = List(Unicode(), help="folders mounted read-only").tag(config=True)
    limits = Dict(help="Limits fields").tag(config=True)
    _sandbox: SandboxProvisioner | None = None

    @property
    def provisioner(self) -> SandboxProvisioner | None:
        return self._sandbox

    @provisioner.setter
    def provisioner(self, chosen) -> None:
        """jupyter_client sets the provisioner the kernelspec names; its kernel is the sandbox's."""
        if chosen is not None and not isinstance(chosen, SandboxProvisioner):
            chosen = SandboxProvisioner(
                kernel_id=chosen.kernel_id, kernel_spec=chosen.kernel_spec, parent=self
            )
        self._sandbox = chosen

    async def _async_wait(self, pollinterval: float = POLL_S) -> None:
        """jupyter_client's wait for the kernel's end (after a shutdown request or a kill),
        asking every POLL_S instead of every 100 ms: a sandbox ends a few ms after its kernel,
        and each hand-in waited the rest."""
        await super()._async_wait(pollinterval=min(pollinterval, POLL_S))
