"""Kernels started outside the sandbox are reached over Unix sockets
(viewcopy.sandbox.unix_sockets): a TCP port jupyter_client picked can be taken before the kernel
binds it, and that kernel dies before it answers (CI saw it: "Kernel died before replying to
kernel_info", a floor kernel of benchmarks/grading.py among the suite's other kernels)."""

from __future__ import annotations

import glob
import shutil
import socket
import subprocess

import pytest
from jupyter_client.manager import AsyncKernelManager
from support.course_notebook import ROOT
from support.kernels import running

from viewcopy.course.folder import Course
from viewcopy.grading.limits import _kernel_manager
from viewcopy.grading.worker import load_api
from viewcopy.sandbox.own_kernels import OwnKernelManager
from viewcopy.sandbox.unix_sockets import UnixSocketKernelManager


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
        dies = pytest.raises(RuntimeError, match="Kernel died")  # EADDRINUSE, on its stderr
        with dies, running(over_tcp, stderr=subprocess.DEVNULL):
            pass
    finally:
        if over_tcp.other_program is not None:
            over_tcp.other_program.close()
    assert over_tcp.other_program is not None  # the port was taken, and the kernel died of it

    first, second = (UnixSocketKernelManager(kernel_name="python3") for _ in range(2))
    assert first.transport == second.transport == "ipc"
    assert first.ip != second.ip
    with running(first) as in_first, running(second) as in_second:
        assert in_first("print(1)") == 1 and in_second("print(2)") == 2  # both answer at once
    assert glob.glob(f"{first.ip}-*") == glob.glob(f"{second.ip}-*") == []  # removed on shutdown


def test_every_kernel_started_outside_the_sandbox_is_on_unix_sockets(tmp_path, monkeypatch):
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path)
    monkeypatch.chdir(tmp_path)
    course = Course.at(tmp_path)
    execute = load_api(course, None).config.Execute
    assert execute.kernel_manager_class is UnixSocketKernelManager  # viewcopy grade --no-sandbox
    assert _kernel_manager(course, None, "python3").transport == "ipc"  # the master, measured
    assert OwnKernelManager(kernel_name="python3").transport == "ipc"  # the synthetic class's

    with (tmp_path / "nbgrader_config.py").open("a") as config:
        config.write("\nc.Execute.kernel_manager_class = 'jupyter_client.manager.KernelManager'\n")
    assert load_api(course, None).config.Execute.kernel_manager_class == (
        "jupyter_client.manager.KernelManager"
    )  # a course that names its own is left as it is
