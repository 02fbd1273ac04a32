"""The sandbox as jupyter_client's kernel provisioner (its public place for launching kernels
another way): every kernel SandboxedKernelManager starts is launched, signalled and cleaned up
here, whichever of the manager's methods a client calls (nbclient calls `cleanup_resources` alone
for a kernel that died on its own).

Launch: cgroups of the kernel's own, its environment (`kernel_env`), its connection
(viewcopy.sandbox.kernel_connection), then the kernel started fresh by bubblewrap in a new
sandbox, or forked into one from the worker's warm template (viewcopy.sandbox.warm_kernels); a
fork that fails is tried once more in a new sandbox, then the kernel starts fresh. Either way the
kernel leads a process group of its own.

Signals: SIGKILL ends the whole sandbox (bubblewrap, whose end takes every process in it); any
other goes to the kernel's process group, as jupyter_client's own provisioner sends it to a
kernel's: an interrupt (signal or message alike) reaches what the kernel started.

Cleanup, after every end and before a restart: what is left in the kernel's cgroups is killed,
the cgroups removed, and nothing names its pid (jupyter_client removes the links to its
sockets)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from pathlib import Path
from string import Template
from typing import Any

from jupyter_client.provisioning import LocalProvisioner

from viewcopy.sandbox import kernel_connection, kernel_output, warm_kernels
from viewcopy.sandbox.bubblewrap import SOCKETS, sandboxed
from viewcopy.sandbox.cgroups import Cgroups
from viewcopy.sandbox.kernel_template import KernelRequest
from viewcopy.sandbox.limits import SANDBOX_KEEPS, Limits, kernel_environment, resource_limits
from viewcopy.sandbox.users import KernelUser

FORK_ATTEMPTS = 2
"""A kernel is forked at most this often (each time into a new sandbox) before it starts fresh."""
FIND_KERNEL_S = 5.0
"""How long a fresh sandbox's kernel may take to appear once bubblewrap reported the sandbox."""
BIND_S = 60.0
"""How long a launch waits for its kernel to bind its sockets (nbclient's own start-up wait)."""
POLL_S = 0.002
"""How often a launch asks whether its kernel has bound its sockets, and the manager whether its
kernel has ended: each takes a few ms, and every hand-in waited out jupyter_client's 100 ms."""


class SandboxProvisioner(LocalProvisioner):
    """jupyter_client's local provisioner, each kernel in a sandbox of its own; configured by its
    manager (SandboxedKernelManager's `limits` and `readable`)."""

    sandbox_pid: int | None = None
    """The sandbox's first process (bubblewrap's pid 1), as the grader sees it."""
    kernel_pid: int | None = None
    """The kernel, as the grader sees it: the leader of its process group."""
    inside: str = ""
    """The kernel's own `ip`: its sockets' path in its sandbox."""
    cgroups: Cgroups | None = None
    _kernel_fd: int | None = None

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        if self.parent.transport != "ipc":
            raise RuntimeError(
                f"a sandboxed kernel has no network: it is reached over Unix sockets only, so "
                f"its manager's transport must be 'ipc' (it is {self.parent.transport!r})"
            )
        return await super().pre_launch(**kwargs)

    def kernel_env(self, limits: Limits) -> dict[str, str]:
        """The kernel's whole environment: the sandbox's (nothing of the grader's), with the
        kernelspec's `env` over it, templated against the sandbox's as jupyter_client templates it
        against the kernel's, except SANDBOX_KEEPS."""
        sandbox = kernel_environment(limits)
        env = dict(sandbox)
        for key, value in (self.kernel_spec.env or {}).items():
            if key not in SANDBOX_KEEPS:
                env[key] = Template(value).safe_substitute(sandbox)
        self._finalize_env(env)
        return env

    async def launch_kernel(self, cmd: list[str], **kw: Any) -> dict:
        manager = self.parent
        limits = Limits(**manager.limits)
        self.cgroups = Cgroups(limits)
        self.user = KernelUser.for_this_grader()
        self.inside = kernel_connection.socket_prefix(SOCKETS)
        kw.pop("env", None)  # the grader's, with the kernelspec's over it: never the kernel's
        env = self.kernel_env(limits)
        copy = Path(kw.get("cwd") or os.getcwd()).resolve()
        template, argv = warm_kernels.active(), warm_kernels.ipykernel_argv(cmd)
        if argv is not None and template is not None and template.serves(env):
            forked = await self._fork(template, argv, copy, limits, env, **kw)
        else:
            forked = False
        if not forked:  # jupyter_client's launcher adds to the env it is given: a copy each time
            await self._launch_sandboxed(cmd, copy, limits, **{**kw, "env": dict(env)})
        warm_kernels.count("warm" if forked else "fresh")
        target = kernel_connection.through_root(self.sandbox_pid, self.inside)
        kernel_connection.link(manager.ip, manager.ports, target)
        await self._bound(manager.ip, manager.ports)
        return self.connection_info

    async def _bound(self, ip: str, ports: list[int]) -> None:
        """Return once the kernel has bound every socket (each link resolves), has ended, or
        BIND_S have passed: a client that connects before the kernel binds is connected only at
        zmq's next try, 100 ms later, and a forked kernel binds 50 ms after its fork."""
        sockets = [f"{ip}-{port}" for port in ports]
        deadline = time.monotonic() + BIND_S
        while not all(os.path.exists(path) for path in sockets):
            if await self.poll() is not None or time.monotonic() > deadline:
                return
            await asyncio.sleep(POLL_S)

    async def _fork(
        self, template, argv: list[str], copy: Path, limits: Limits, env: dict, **kw
    ) -> bool:
        """Whether the kernel, its environment `env`, was forked from `template` (at most
        FORK_ATTEMPTS tries)."""
        for attempt in range(FORK_ATTEMPTS):
            try:
                await self._launch_forked(template, argv, copy, limits, env, **kw)
                return True
            except warm_kernels.TemplateError as exc:
                await self.kill()
                await self.wait()
                if not template.alive():
                    warm_kernels.give_up(str(exc))
                    return False
                if attempt + 1 == FORK_ATTEMPTS:
                    warm_kernels.say_once(f"a fork failed twice ({exc}); this kernel starts fresh")
        return False

    async def _launch_sandboxed(
        self, command: list[str], copy: Path, limits: Limits, as_user=None, **kw
    ) -> None:
        """`command` started in a new sandbox for the working copy `copy`, as `as_user` (by
        default the kernel's user); sets `sandbox_pid`."""
        info, theirs = os.pipe()
        sandbox = sandboxed(
            command,
            cwd=copy,
            connection_file=self.parent.connection_file,
            connection=kernel_connection.for_the_kernel(self.parent.connection_file, self.inside),
            readable=self.parent.readable,
            limits=limits,
            user=as_user or self.user,
            rlimits=resource_limits(limits, self.cgroups.limited),
            info_fd=theirs,
        )
        kw["pass_fds"] = (theirs, *sandbox.fds, *kw.get("pass_fds", ()))
        output = None
        if "stdout" not in kw and "stderr" not in kw:  # else the caller chose where they go
            output = kernel_output.relaying(sys.stderr)
            kw.update(stdout=output, stderr=output)
        try:
            try:
                await super().launch_kernel([*self.cgroups.enter_command(), *sandbox.argv], **kw)
            finally:
                os.close(theirs)
                if output is not None:
                    os.close(output)
                sandbox.close()
            self.sandbox_pid = await asyncio.to_thread(warm_kernels.read_child_pid, info)
        finally:
            os.close(info)

    async def _launch_forked(
        self, template, argv: list[str], copy: Path, limits: Limits, env: dict, **kw
    ) -> None:
        """A new sandbox around the holder, and the kernel (its environment `env`) forked into it
        from `template` once the holder says the sandbox is built (bubblewrap reports its first
        process before)."""
        built, built_theirs = os.pipe()
        try:
            try:
                holder = warm_kernels.holder(built_theirs)
                kw.update(pass_fds=(built_theirs,), env=dict(env))
                await self._launch_sandboxed(holder, copy, limits, self.user.holder(), **kw)
            finally:
                os.close(built_theirs)
            await asyncio.to_thread(warm_kernels.wait_until_built, built)
        finally:
            os.close(built)
        request = KernelRequest(
            sandbox_pid=self.sandbox_pid,
            cgroups=tuple(str(folder) for folder in self.cgroups.folders),
            rlimits=resource_limits(limits, self.cgroups.limited),
            env={**env, "PWD": str(copy)},  # as bwrap --chdir
            cwd=str(copy),
            argv=tuple(argv),
            uid=self.user.uid,
        )
        self.kernel_pid = await asyncio.to_thread(template.fork, request)

    async def _kernel(self) -> int | None:
        """The kernel's pid while it runs, found once (a fresh sandbox's kernel appears after
        bubblewrap reports the sandbox); None once it has ended."""
        if self._kernel_fd is None and self.sandbox_pid is not None:
            for _ in range(int(FIND_KERNEL_S / 0.01)):
                found = self.kernel_pid or first_command(self.sandbox_pid)
                if found is not None:
                    with contextlib.suppress(ProcessLookupError):
                        self._kernel_fd = os.pidfd_open(found)
                        self.kernel_pid = found
                    break
                if await self.poll() is not None:
                    break
                await asyncio.sleep(0.01)
        if self._kernel_fd is None:
            return None
        try:
            signal.pidfd_send_signal(self._kernel_fd, 0)  # still this kernel, not a reused pid
        except ProcessLookupError:
            return None
        return self.kernel_pid

    async def send_signal(self, signum: int) -> None:
        """SIGKILL to the whole sandbox; any other signal to the kernel's process group (to
        the kernel alone in the moment before it makes its group)."""
        if self.process and signum != signal.SIGKILL:
            kernel = await self._kernel()
            if kernel is not None:
                with contextlib.suppress(ProcessLookupError):  # ended meanwhile
                    if os.getpgid(kernel) == kernel:
                        os.killpg(kernel, signum)
                    else:
                        signal.pidfd_send_signal(self._kernel_fd, signum)
                    return
        await super().send_signal(signum)

    async def cleanup(self, restart: bool = False) -> None:
        """After jupyter_client's own (which removes the links, as a kernel's socket files)."""
        if self.cgroups is not None:
            await asyncio.to_thread(self.cgroups.remove)
            self.cgroups = None
        if self._kernel_fd is not None:
            os.close(self._kernel_fd)
        self.sandbox_pid = self.kernel_pid = self._kernel_fd = None
        await super().cleanup(restart=restart)


def first_command(sandbox_pid: int) -> int | None:
    """The host pid of the process bubblewrap started in the sandbox whose pid 1 is
    `sandbox_pid` (pid 2 there), or None before it runs."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            status = _status(int(entry.name))
            if status.get("PPid") == str(sandbox_pid) and status.get("NSpid", "").endswith("\t2"):
                return int(entry.name)
    return None


def _status(pid: int) -> dict[str, str]:
    """/proc/<pid>/status as a mapping (empty once the process has ended)."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return {}
    return {key: value.strip() for key, _, value in (line.partition(":") for line in lines)}
