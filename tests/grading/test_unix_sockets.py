"""Kernels started outside the sandbox are reached over Unix sockets
(viewcopy.sandbox.unix_sockets): a TCP port jupyter_client picked can be taken before the kernel
binds it, and that kernel dies before it answers (CI saw it: "Kernel died before replying to
kernel_info", a floor kernel of benchmarks/grading.py among the suite's other kernels)."""

from __future__ import annotations

import asyncio
import glob
import shutil
import socket
import subprocess
from concurrent.futures import ThreadPoolExecutor

from jupyter_client.manager import AsyncKernelManager
from support.course_notebook import ROOT

from viewcopy.grading.limits import _kernel_manager
from viewcopy.grading.worker import load_api
from viewcopy.sandbox.own_kernels import OwnKernelManager
from viewcopy.sandbox.unix_sockets import UnixSocketKernelManager


def run_alone(coroutine):
    """`coroutine` run to its end on a loop of its own in a thread of its own: in the suite, a
    test before this one may have left a loop running in this thread."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, coroutine).result()


async def answers(manager, **start) -> bool:
    """Whether the kernel `manager` starts (with `start`) answers kernel_info; it is shut down
    either way."""
    await manager.start_kernel(**start)
    client = manager.client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=60)
        return True
    except RuntimeError as died:
        assert "Kernel died" in str(died)
        return False
    finally:
        client.stop_channels()
        await manager.shutdown_kernel(now=True)


class PortTakenBeforeLaunch(AsyncKernelManager):
    """jupyter_client's default kernel manager, over TCP, with the kernel's shell port taken by
    another program after jupyter_client picked it and before the kernel binds it."""

    other_program: socket.socket | None = None

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        self.other_program = socket.create_server((self.ip, self.shell_port))
        await super()._async_launch_kernel(kernel_cmd, **kw)


def test_a_tcp_kernel_whose_port_was_taken_dies_and_unix_socket_kernels_answer():
    over_tcp = PortTakenBeforeLaunch(kernel_name="python3")
    try:
        assert not run_alone(answers(over_tcp, stderr=subprocess.DEVNULL))  # EADDRINUSE
    finally:
        if over_tcp.other_program is not None:
            over_tcp.other_program.close()
    assert over_tcp.other_program is not None  # the port was taken, and the kernel died of it

    first, second = (UnixSocketKernelManager(kernel_name="python3") for _ in range(2))
    assert first.transport == second.transport == "ipc"
    assert first.ip != second.ip

    async def both():
        return await asyncio.gather(answers(first), answers(second))

    assert run_alone(both()) == [True, True]
    assert glob.glob(f"{first.ip}-*") == glob.glob(f"{second.ip}-*") == []  # removed on shutdown


def test_every_kernel_started_outside_the_sandbox_is_on_unix_sockets(tmp_path, monkeypatch):
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path)
    monkeypatch.chdir(tmp_path)
    execute = load_api(tmp_path, None).config.Execute
    assert execute.kernel_manager_class is UnixSocketKernelManager  # viewcopy grade --no-sandbox
    assert _kernel_manager(tmp_path, None, "python3").transport == "ipc"  # the master, measured
    assert OwnKernelManager(kernel_name="python3").transport == "ipc"  # the synthetic class's

    with (tmp_path / "nbgrader_config.py").open("a") as config:
        config.write("\nc.Execute.kernel_manager_class = 'jupyter_client.manager.KernelManager'\n")
    assert load_api(tmp_path, None).config.Execute.kernel_manager_class == (
        "jupyter_client.manager.KernelManager"
    )  # a course that names its own is left as it is
