"""nbgrader's Execute with every kernel started in the sandbox (viewcopy.plugins.sandbox),
reached over Unix sockets: what `viewcopy grade` runs unless told --no-sandbox. Where the worker
keeps a kernel template (viewcopy.plugins.warm_kernels), the kernel is forked from it into the
sandbox instead of started fresh in it."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from nbgrader.preprocessors import Execute
from traitlets import Dict, List, Unicode, default

from viewcopy.plugins import warm_kernels
from viewcopy.plugins.kernel_template import KernelRequest
from viewcopy.plugins.sandbox import (
    Cgroups,
    Limits,
    kernel_environment,
    readable_paths,
    resource_limits,
    sandboxed,
)


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
        copy = Path(kw.get("cwd") or os.getcwd()).resolve()
        template, argv = warm_kernels.active(), warm_kernels.ipykernel_argv(kernel_cmd)
        if template is None or argv is None:
            await self._launch_sandboxed(kernel_cmd, copy, limits, **kw)
            return
        try:
            await self._launch_forked(template, argv, copy, limits, **kw)
        except warm_kernels.TemplateError as exc:
            warm_kernels.give_up(str(exc))
            await self.provisioner.kill()
            await self.provisioner.wait()
            await self._launch_sandboxed(kernel_cmd, copy, limits, **kw)

    async def _launch_sandboxed(
        self, command: list[str], copy: Path, limits: Limits, info_fd: int | None = None, **kw
    ) -> None:
        """`command` started in a new sandbox for the working copy `copy`."""
        sandbox = sandboxed(
            command,
            cwd=copy,
            connection_file=self.connection_file,
            sockets=os.path.dirname(self.ip),
            readable=self.readable,
            limits=limits,
            info_fd=info_fd,
        )
        if info_fd is not None:
            kw["pass_fds"] = (info_fd,)
        await super()._async_launch_kernel([*self._cgroups.enter_command(), *sandbox], **kw)

    async def _launch_forked(self, template, argv: list[str], copy: Path, limits: Limits, **kw):
        """A new sandbox around the holder, and the kernel forked into it from `template`."""
        info, theirs = os.pipe()
        holder = warm_kernels.HOLDER
        try:
            try:
                await self._launch_sandboxed(holder, copy, limits, info_fd=theirs, **kw)
            finally:
                os.close(theirs)
            request = KernelRequest(
                sandbox_pid=await asyncio.to_thread(warm_kernels.read_child_pid, info),
                cgroups=tuple(str(folder) for folder in self._cgroups.folders),
                rlimits=resource_limits(limits),
                env={**kernel_environment(limits), "PWD": str(copy)},  # as bwrap --chdir
                cwd=str(copy),
                argv=tuple(argv),
            )
        finally:
            os.close(info)
        await asyncio.to_thread(template.fork, request)

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
