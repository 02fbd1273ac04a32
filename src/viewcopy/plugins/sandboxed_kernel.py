"""nbgrader's Execute with every kernel started in the sandbox (viewcopy.plugins.sandbox),
reached over Unix sockets: what `viewcopy grade` runs unless told --no-sandbox."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from nbgrader.preprocessors import Execute
from traitlets import Dict, List, Unicode, default

from viewcopy.plugins.sandbox import Cgroups, Limits, readable_paths, sandboxed


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel manager whose kernels start inside the sandbox, reached over Unix sockets."""

    readable = List(Unicode(), help="folders mounted read-only").tag(config=True)
    limits = Dict(help="Limits fields").tag(config=True)

    @default("transport")
    def _transport_default(self) -> str:
        return "ipc"

    @default("ip")
    def _ip_default(self) -> str:
        self._sockets = tempfile.mkdtemp(prefix="viewcopy-kernel-")
        return os.path.join(self._sockets, "kernel")

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw) -> None:
        limits = Limits(**self.limits)
        self._cgroups = Cgroups(limits)
        self.kernel_spec.interrupt_mode = "message"  # signals stop at bwrap's pid namespace
        command = sandboxed(
            kernel_cmd,
            cwd=Path(kw.get("cwd") or os.getcwd()).resolve(),
            connection_file=self.connection_file,
            sockets=os.path.dirname(self.ip),
            readable=self.readable,
            limits=limits,
        )
        await super()._async_launch_kernel([*self._cgroups.enter_command(), *command], **kw)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if getattr(self, "_cgroups", None) is not None:
            self._cgroups.remove()
        if not restart and getattr(self, "_sockets", None):
            shutil.rmtree(self._sockets, ignore_errors=True)


class SandboxedExecute(Execute):
    """nbgrader's Execute, with every kernel in the sandbox."""

    def __init__(self, *args, **kwargs):
        kwargs["kernel_manager_class"] = SandboxedKernelManager
        super().__init__(*args, **kwargs)


def sandbox_config(config, course: Path, limits: Limits) -> None:
    """Switch an nbgrader config to sandboxed execution under `limits`."""
    steps = list(config.Autograde.get("autograde_preprocessors", []) or _default_steps())
    config.Autograde.autograde_preprocessors = [
        SandboxedExecute if step is Execute else step for step in steps
    ]
    config.SandboxedKernelManager.readable = readable_paths(course)
    config.SandboxedKernelManager.limits = dict(limits.__dict__)


def _default_steps():
    from nbgrader.converters import Autograde

    return Autograde.class_traits()["autograde_preprocessors"].default()
