"""Students' own kernels, forked warm: the kernel a hand-in runs in on the student's machine (the
synthetic class of viewcopy.demo) is forked from a template that has imported ipykernel, torch
and the lab once (viewcopy.sandbox.kernel_template with `--own`), instead of started fresh (about
2.6 s of CPU less a hand-in here, docs/development.md).

No sandbox: the kernel is the student's own, with the environment and folder a fresh kernel
gets. jupyter_client's process is a small holder that lives as long as the kernel does; the
template's child that forks the kernel ends the kernel's whole session as soon as the holder ends
(the manager's kill), so the kernel lives and dies as a fresh one would. A kernel whose
environment differs from the template's in what is read at start (warm_kernels.READ_AT_START)
starts fresh, as does every kernel where no
template can serve (not Linux, the template ended, a fork that failed).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import Instance

from viewcopy.sandbox.kernel_template import OWN, OwnKernelRequest
from viewcopy.sandbox.unix_sockets import UnixSockets
from viewcopy.sandbox.warm_kernels import KernelTemplate, TemplateError, ipykernel_argv

OWN_HOLDER = (
    "import os, select, sys\n"
    "kernel = os.read(int(sys.argv[1]), 32)\n"
    "if kernel:\n"
    "    try:\n"
    "        select.select([os.pidfd_open(int(kernel))], [], [])\n"
    "    except ProcessLookupError:\n"
    "        pass\n"
)  # fmt: skip
"""jupyter_client's process for a forked kernel: reads the kernel's pid on its fd (nothing: the
fork failed) and ends when the kernel does."""


class OwnKernelTemplate(KernelTemplate):
    """A template for students' own kernels, every one started from `env` (their output goes
    where the template's does: nowhere, as a hand-in's fresh kernel's); counts how each kernel
    it was asked for started."""

    def __init__(self, env: Mapping[str, str], imports: Sequence[str] = ()):
        self.home, self.env = None, dict(env)
        self.started: Counter[str] = Counter()
        self._counting = threading.Lock()
        self._start(self.env, imports, OWN, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def count(self, how: str) -> None:
        with self._counting:
            self.started[how] += 1

    def said(self) -> str:
        """How its kernels started, as the demo says it."""
        return (
            f"  kernels: {self.started['warm']} forked from a warm template, "
            f"{self.started['fresh']} started fresh"
        )


@contextlib.contextmanager
def warm_template(
    env: Mapping[str, str], imports: Sequence[str]
) -> Iterator[OwnKernelTemplate | None]:
    """A template for own kernels started from `env` with `imports` done, ended on leaving; None
    where forking a kernel needs what this system lacks (Linux's pidfds)."""
    if not sys.platform.startswith("linux"):
        yield None
        return
    template = OwnKernelTemplate(env, imports)
    try:
        yield template
    finally:
        template.close()


class OwnKernelManager(UnixSockets, AsyncKernelManager):
    """jupyter_client's kernel manager, each kernel forked from `template` where it can be, all
    reached over Unix sockets (viewcopy.sandbox.unix_sockets)."""

    template = Instance(OwnKernelTemplate)

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw) -> None:
        argv = ipykernel_argv(kernel_cmd)
        env = kw.get("env", os.environ)
        if argv is not None and self.template.alive() and self.template.serves(env):
            try:
                await self._launch_forked(argv, **kw)
                self.template.count("warm")
                return
            except TemplateError:
                await self.provisioner.kill()
                await self.provisioner.wait()
        await super()._async_launch_kernel(kernel_cmd, **kw)
        self.template.count("fresh")

    async def _launch_forked(self, argv: list[str], **kw) -> None:
        """The holder started as the kernel's process, then the kernel forked and its pid given
        to the holder."""
        self.kernel_spec.interrupt_mode = "message"  # a signal would reach the holder only
        pid, holder = os.pipe()
        try:
            try:
                kw["pass_fds"] = (pid, *kw.get("pass_fds", ()))
                await super()._async_launch_kernel(
                    [sys.executable, "-I", "-S", "-c", OWN_HOLDER, str(pid)], **kw
                )
            finally:
                os.close(pid)
            request = OwnKernelRequest(
                holder_pid=self.provisioner.pid,
                env=dict(kw.get("env", os.environ)),
                cwd=str(Path(kw.get("cwd") or os.getcwd()).resolve()),
                argv=tuple(argv),
            )
            os.write(holder, str(await asyncio.to_thread(self.template.fork, request)).encode())
        finally:
            os.close(holder)
