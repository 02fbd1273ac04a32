"""Warm kernels: a grading worker's kernel template (viewcopy.sandbox.kernel_template), started
once, and how a sandboxed kernel is forked from it instead of started fresh.

The worker starts the template beside nbgrader (`start`); the sandbox's provisioner
(viewcopy.sandbox.provisioner) asks `active()` for it at every kernel start. The sandbox is built by
bubblewrap exactly as for a fresh kernel, around a small holder process that lives as long as the
kernel does (so jupyter_client's process is the sandbox, as before); the template's child joins it
once the holder says the sandbox is built. Where no template can serve (not Linux, a CUDA device to
grade, the template ended), kernels start fresh, and the worker says why once; a single fork that
fails is retried, then that kernel alone starts fresh. The worker counts how each of its kernels
started (`counts`).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from traitlets import Bool
from traitlets.config import Configurable

from viewcopy.sandbox.kernel_template import MEASURE, READY, KernelRequest, OwnKernelRequest
from viewcopy.sandbox.limits import Limits, kernel_environment

HOLDER = (
    "import os, select, sys, time\n"
    "ready = int(sys.argv[1])\n"
    "os.write(ready, b'ready\\n')\n"
    "os.close(ready)\n"
    "me = os.getpid()\n"
    "while not (kernels := sorted(int(p) for p in os.listdir('/proc')\n"
    "                             if p.isdigit() and int(p) not in (1, me))):\n"
    "    time.sleep(0.005)\n"
    "try:\n"
    "    select.select([os.pidfd_open(kernels[0])], [], [])\n"
    "except ProcessLookupError:\n"
    "    pass\n"
)  # fmt: skip
"""The sandbox's own process: says on its fd that the sandbox is built (bubblewrap starts it only
once every mount is in place), waits for the first process to join it (the kernel), then for that
one's end, and ends the sandbox with it (as a fresh kernel's end does)."""
READ_AT_START = (
    "PYTHON", "OMP_", "MKL_", "KMP_", "GOMP_", "TORCH", "PYTORCH_", "LD_", "HOME", "PYDEVD_",
)  # fmt: skip
"""Environment variables (by prefix) read when the template imported what its kernels import: a
kernel whose values differ cannot be forked from it (the thread counts torch reads when it is
imported, Python's own variables, the libraries loaded, HOME, the debugger's settings)."""
LAUNCHER = ("-m", "ipykernel_launcher")
TEMPLATE_HOMES = Path("/tmp")
"""Where a template's HOME is made: under /tmp, which each sandbox has writable, so that a kernel
can make again there the folders the template's imports chose."""
HOME_PREFIX = "viewcopy-template-"
"""A template's HOME: TEMPLATE_HOMES/viewcopy-template-<its worker's pid>-<random>."""


class WarmKernels(Configurable):
    """The course's switch (`c.WarmKernels.enabled`)."""

    enabled = Bool(
        True,
        help="Fork each sandboxed kernel from a template the grading worker keeps warm (torch and "
        "the lab imported once per worker); False starts every kernel fresh.",
    ).tag(config=True)


class TemplateError(Exception):
    """The template cannot give this kernel: the worker falls back to fresh kernels."""


class KernelTemplate:
    """The worker's side of one template process: started at once, ready when its imports are;
    `env` is the environment of the kernels it serves (its HOME, whose folders each kernel makes
    again in its own, is another)."""

    def __init__(self, limits: Limits, imports: Sequence[str] = (), measured: str | None = None):
        self.home = tempfile.mkdtemp(prefix=f"{HOME_PREFIX}{os.getpid()}-", dir=TEMPLATE_HOMES)
        self.env = kernel_environment(limits)
        options = (MEASURE, measured) if measured else ()
        self._start({**self.env, "HOME": self.home}, imports, *options)

    def serves(self, env: Mapping[str, str]) -> bool:
        """Whether a kernel with `env` can be forked from this template."""
        keys = {k for k in (*env, *self.env) if k.startswith(READ_AT_START)}
        return all(env.get(k) == self.env.get(k) for k in keys)

    def _start(self, env: dict[str, str], imports: Sequence[str], *options: str, **popen) -> None:
        """Start the template process (`options` before its socket, `popen` for Popen)."""
        ours, theirs = socket.socketpair()
        template = [sys.executable, "-m", "viewcopy.sandbox.kernel_template", *options]
        self.process = subprocess.Popen(
            [*template, str(theirs.fileno()), *imports],
            pass_fds=(theirs.fileno(),),
            env=env,
            cwd="/",
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            **popen,
        )
        theirs.close()
        self.channel = ours.makefile("rwb", buffering=0)
        ours.close()
        self.ready = False
        self._asking = threading.Lock()

    def wait_ready(self) -> None:
        """Return once the template has imported; TemplateError when it could not."""
        if not self.ready:
            if self._answer() != READY:
                raise TemplateError("the kernel template could not import what kernels import")
            self.ready = True

    def fork(self, request: KernelRequest | OwnKernelRequest) -> int:
        """The pid of the kernel `request` asks for; TemplateError when it cannot be forked
        (one request at a time: threads may share a template)."""
        with self._asking:
            self.wait_ready()
            self.channel.write(request.line())
            answer = json.loads(self._answer() or '{"error": "the kernel template ended"}')
        if "error" in answer:
            raise TemplateError(answer["error"])
        return answer["pid"]

    def alive(self) -> bool:
        """Whether the template process still runs (a fork may fail while it does)."""
        return self.process.poll() is None

    def _answer(self) -> str:
        try:
            return self.channel.readline().decode().strip()
        except OSError:
            return ""

    def close(self) -> None:
        self.channel.close()  # the template ends at the end of its requests
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.home is not None:
            shutil.rmtree(self.home, ignore_errors=True)


_active: KernelTemplate | None = None
_counts = {"warm": 0, "fresh": 0}
_said: set[str] = set()


def count(how: str) -> None:
    """Count one kernel of this process started `how` ("warm" or "fresh")."""
    _counts[how] += 1


def counts() -> dict[str, int]:
    """How many of this process's kernels started warm and fresh since the last call."""
    taken = dict(_counts)
    _counts.update(warm=0, fresh=0)
    return taken


def say_once(message: str) -> None:
    """Say `message` on the worker's stderr, the first time only."""
    if message not in _said:
        _said.add(message)
        print(f"warm kernels: {message}", file=sys.stderr, flush=True)


def warm_problem(devices: Sequence[str], config=None) -> str | None:
    """Why this worker's kernels cannot be forked from a template, or None when they can."""
    if config is not None and not WarmKernels(config=config).enabled:
        return "the course starts every kernel fresh (c.WarmKernels.enabled = False)"
    if not sys.platform.startswith("linux"):
        return "forking into a sandbox needs Linux namespaces"
    if "cuda" in devices:
        return "a CUDA device is graded (CUDA must start in the kernel's own process)"
    return None


def how_kernels_start(sandbox: Limits | None, devices: Sequence[str], config=None) -> str:
    """What `viewcopy grade` says of how a worker with `devices` starts each hand-in's kernel."""
    if sandbox is None:
        return "kernels: a fresh one for each hand-in (warm kernels need the sandbox)"
    problem = warm_problem(devices, config)
    if problem is not None:
        return f"kernels: a fresh one for each hand-in ({problem})"
    return "kernels: forked from a template each worker keeps warm (the lab's imports done once)"


def start(
    limits: Limits,
    devices: Sequence[str],
    config=None,
    imports: Sequence[str] = (),
    measured: str | None = None,
) -> str | None:
    """Start this process's template for sandboxed kernels under `limits`, with `imports` done
    once for every kernel, and what the module `measured` measures measured once for them
    (kernel_template.MEASURE), unless the course's `config` says not to; why not, or None."""
    global _active
    stop()
    problem = warm_problem(devices, config)
    if problem is None:
        _active = KernelTemplate(limits, imports, measured)
    return problem


def active() -> KernelTemplate | None:
    """The template kernels are forked from here, or None: start them fresh."""
    return _active


def wait_ready() -> None:
    """Wait for this process's template to be ready (nothing without one); give it up, saying
    why, when it cannot be."""
    if _active is not None:
        try:
            _active.wait_ready()
        except TemplateError as exc:
            give_up(str(exc))


def give_up(reason: str) -> None:
    """Stop forking kernels in this process (fresh ones from now on), saying why, once."""
    global _active
    if _active is not None:
        print(f"warm kernels: {reason}; fresh kernels from now on", file=sys.stderr, flush=True)
        _active.close()
        _active = None


def stop() -> None:
    """End this process's template."""
    global _active
    if _active is not None:
        _active.close()
        _active = None


def sweep() -> None:
    """Remove the HOME of every template whose worker has ended (a worker killed outright takes
    its template along before it can remove it)."""
    import psutil

    for home in TEMPLATE_HOMES.glob(f"{HOME_PREFIX}*-*"):
        worker = home.name.removeprefix(HOME_PREFIX).split("-")[0]
        if worker.isdigit() and not psutil.pid_exists(int(worker)):
            shutil.rmtree(home, ignore_errors=True)


def ipykernel_argv(kernel_cmd: Sequence[str]) -> list[str] | None:
    """What follows `python -m ipykernel_launcher` in `kernel_cmd` when it is this Python's
    ipykernel (what a template can fork), else None."""
    command = list(kernel_cmd)
    if len(command) < 3 or tuple(command[1:3]) != LAUNCHER:
        return None
    same = shutil.which(command[0]) and os.path.realpath(shutil.which(command[0])) == (
        os.path.realpath(sys.executable)
    )
    return command[3:] if same else None


def holder(ready: int) -> list[str]:
    """The holder's command, saying on the inherited fd `ready` that the sandbox is built."""
    return [sys.executable, "-I", "-S", "-c", HOLDER, str(ready)]


def wait_until_built(ready: int) -> None:
    """Return once the holder says the sandbox is built: bubblewrap reports the sandbox's first
    process before its mounts are in place, and a kernel that joined it then could see the
    grader's own files. TemplateError when the holder ended without saying so."""
    if os.read(ready, 16) != b"ready\n":
        raise TemplateError("the sandbox's holder ended before the sandbox was built")


def read_child_pid(info: int) -> int:
    """The sandbox's first process, from what bubblewrap writes to its --info-fd."""
    data = b""
    while chunk := os.read(info, 4096):
        data += chunk
        try:
            return json.loads(data)["child-pid"]
        except json.JSONDecodeError:
            continue
    raise TemplateError("bubblewrap ended before it built the sandbox")
