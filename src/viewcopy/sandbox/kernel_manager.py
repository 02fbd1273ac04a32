"""jupyter_client's kernel manager with every kernel started in a sandbox of its own
(viewcopy.sandbox.bubblewrap), reached over Unix sockets inside it. Where the worker keeps a
kernel template (viewcopy.sandbox.warm_kernels), the kernel is forked from it into the sandbox
instead of started fresh in it; a fork that fails is tried once more in a new sandbox, then that
kernel starts fresh. It overrides `_async_launch_kernel`, jupyter_client's documented point for
launching kernels differently, and `_async_cleanup_resources` for the kernel's cgroups."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import Dict, List, Unicode, default

from viewcopy.sandbox import kernel_output, warm_kernels
from viewcopy.sandbox.bubblewrap import SOCKETS, sandboxed
from viewcopy.sandbox.cgroups import Cgroups
from viewcopy.sandbox.kernel_template import KernelRequest
from viewcopy.sandbox.limits import Limits, kernel_environment, resource_limits
from viewcopy.sandbox.unix_sockets import UnixSockets, socket_prefix
from viewcopy.sandbox.users import KernelUser

FORK_ATTEMPTS = 2
"""A kernel is forked at most this often (each time into a new sandbox) before it starts fresh."""


class SandboxedKernelManager(UnixSockets, AsyncKernelManager):
    """A kernel manager whose kernels start inside the sandbox, reached over Unix sockets that
    live in it (`sandbox.SOCKETS`), through its root as the grader sees it."""

    readable = List(Unicode(), help="folders mounted read-only").tag(config=True)
    limits = Dict(help="Limits fields").tag(config=True)

    @default("ip")
    def _ip_default(self) -> str:
        self._inside = socket_prefix(SOCKETS)
        return self._inside  # the kernel's sockets as it sees them: `<ip>-<port>`

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw) -> None:
        limits = Limits(**self.limits)
        self._cgroups = Cgroups(limits)
        self._user = KernelUser.for_this_grader()
        self.kernel_spec.interrupt_mode = "message"  # signals stop at bwrap's pid namespace
        kw["env"] = kernel_environment(limits)  # bwrap and all it starts: nothing of the grader's
        if self._user.uid is not None:  # the kernel reads it as its own user
            os.chown(self.connection_file, self._user.uid, self._user.uid)
        copy = Path(kw.get("cwd") or os.getcwd()).resolve()
        template, argv = warm_kernels.active(), warm_kernels.ipykernel_argv(kernel_cmd)
        for attempt in range(FORK_ATTEMPTS if template is not None and argv is not None else 0):
            try:
                await self._launch_forked(template, argv, copy, limits, **dict(kw))
                warm_kernels.count("warm")
                return
            except warm_kernels.TemplateError as exc:
                await self._end_sandbox()
                if not template.alive():
                    warm_kernels.give_up(str(exc))
                    break
                if attempt + 1 == FORK_ATTEMPTS:
                    warm_kernels.say_once(f"a fork failed twice ({exc}); this kernel starts fresh")
        sandbox_pid = await self._launch_sandboxed(kernel_cmd, copy, limits, **dict(kw))
        self._reach(sandbox_pid)
        warm_kernels.count("fresh")

    async def _launch_sandboxed(
        self, command: list[str], copy: Path, limits: Limits, as_user=None, **kw
    ) -> int:
        """`command` started in a new sandbox for the working copy `copy`, as `as_user` (by
        default the kernel's user); the sandbox's first process (as the grader sees it)."""
        info, theirs = os.pipe()
        sandbox = sandboxed(
            command,
            cwd=copy,
            connection_file=self.connection_file,
            readable=self.readable,
            limits=limits,
            user=as_user or self._user,
            rlimits=resource_limits(limits, self._cgroups.limited),
            info_fd=theirs,
        )
        kw["pass_fds"] = (theirs, *sandbox.fds, *kw.get("pass_fds", ()))
        output = None
        if "stdout" not in kw and "stderr" not in kw:  # else the caller chose where they go
            output = kernel_output.relaying(sys.stderr)
            kw.update(stdout=output, stderr=output)
        try:
            try:
                await super()._async_launch_kernel(
                    [*self._cgroups.enter_command(), *sandbox.argv], **kw
                )
            finally:
                os.close(theirs)
                if output is not None:
                    os.close(output)
                sandbox.close()
            return await asyncio.to_thread(warm_kernels.read_child_pid, info)
        finally:
            os.close(info)

    async def _launch_forked(self, template, argv: list[str], copy: Path, limits: Limits, **kw):
        """A new sandbox around the holder, and the kernel forked into it from `template` once
        the holder says the sandbox is built (bubblewrap reports its first process before)."""
        built, built_theirs = os.pipe()
        try:
            try:
                kw["pass_fds"] = (built_theirs,)
                holder = warm_kernels.holder(built_theirs)
                sandbox_pid = await self._launch_sandboxed(
                    holder, copy, limits, self._user.holder(), **kw
                )
            finally:
                os.close(built_theirs)
            await asyncio.to_thread(warm_kernels.wait_until_built, built)
        finally:
            os.close(built)
        request = KernelRequest(
            sandbox_pid=sandbox_pid,
            cgroups=tuple(str(folder) for folder in self._cgroups.folders),
            rlimits=resource_limits(limits, self._cgroups.limited),
            env={**kernel_environment(limits), "PWD": str(copy)},  # as bwrap --chdir
            cwd=str(copy),
            argv=tuple(argv),
            uid=self._user.uid,
        )
        await asyncio.to_thread(template.fork, request)
        self._reach(sandbox_pid)

    def _reach(self, sandbox_pid: int) -> None:
        """Talk to the kernel through the sandbox's root, where its sockets are."""
        self.ip = f"/proc/{sandbox_pid}/root{self._inside}"

    async def _end_sandbox(self) -> None:
        """End a sandbox whose kernel could not be forked into it (the holder and all)."""
        await self.provisioner.kill()
        await self.provisioner.wait()
        self.ip = self._inside

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        # The kernel's own path again, before jupyter_client unlinks the sockets there (they
        # ended with the sandbox; through /proc/<pid>/root, a reused pid would be another's)
        # and before a restart writes a new connection file.
        self.ip = self._inside
        await super()._async_cleanup_resources(restart=restart)
        if getattr(self, "_cgroups", None) is not None:
            self._cgroups.remove()
