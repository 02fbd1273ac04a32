"""The kernel template: a process that has imported what every graded kernel imports (ipykernel,
torch, the lab's package) and runs nothing else; each hand-in's kernel is forked from it.

One template serves one grading worker (viewcopy.sandbox.warm_kernels starts it and sends it
requests). For each request it forks; the child moves into the hand-in's cgroups and joins the
namespaces of the sandbox bubblewrap has just built for that hand-in (viewcopy.sandbox.namespaces),
then forks the kernel inside its pid namespace, which drops every privilege, takes the sandbox's
rlimits, environment and working copy, and starts ipykernel as `python -m ipykernel_launcher`
would. The child stays the kernel's parent: the kernel stays in the grader's process tree (so a
worker that ends takes it along) and is collected as soon as it ends (a kernel nobody collects
would hold its sandbox's pid namespace, and its cgroup, open). No student code ever runs in the
template, so no two students share anything but what the imports left in memory, copied on write.

What the imports made is frozen out of the garbage collector's sight (`gc.freeze`) before the
first fork: a kernel's first collection wrote to every one of those objects, copying each page it
shared with the template (140 ms of each hand-in's first cells).

The traps of forking torch: libgomp deadlocks in a child forked after a parallel op ran, and CUDA
cannot be used in a child forked after it was initialized. The template runs no torch op and never
touches CUDA, and checks before every fork that it has started no thread and no CUDA since its
imports (else it refuses, and the worker falls back to a fresh kernel).

Started with `--own`, a template forks students' own kernels instead (the synthetic class's
hand-ins, run as on the student's machine: viewcopy.sandbox.own_kernels): no sandbox, no cgroup, no
privilege dropped, each kernel in its own session, ended with the holder process its kernel
manager watches. It reads only OwnKernelRequest, and a sandboxed template only KernelRequest: no
request can make a grading template fork outside a sandbox.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import pickle
import resource
import select
import signal
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from viewcopy.sandbox import kernel_output, namespaces

KERNEL = (
    "ipykernel.kernelapp",
    "ipykernel.ipkernel",
    "ipykernel.debugger",
    "IPython.core.completerlib",
    "IPython.core.debugger",
    "IPython.core.oinspect",
    "IPython.extensions.storemagic",
    "IPython.utils.wildcard",
    "faulthandler",
    "importlib.readers",
    "importlib.resources.readers",
    "sqlite3",
    "tornado.platform.asyncio",
)
"""What every kernel imports: ipykernel, and what its start imports (the debugger's debugpy alone
took 180 ms of each kernel's start; tests/grading/test_warm_kernels.py checks that a kernel's start
imports nothing more). The worker names what else its kernels import (its lab's modules)."""
READY = "ready"
OWN = "--own"
"""The template's option to fork students' own kernels (no sandbox) instead of graded ones."""
MEASURE = "--measure"
"""The template's option naming a module whose `measure()` a child of the template runs once (torch
ops: never in the template itself) and whose `keep()` the template then gives what it returned,
before any kernel is forked: each kernel holds it, copied on write."""


class _Line:
    """A request as the one JSON line the worker writes and the template reads."""

    def line(self) -> bytes:
        return (json.dumps(asdict(self)) + "\n").encode()

    @classmethod
    def read(cls, line: bytes):
        fields = json.loads(line)
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()})


@dataclass(frozen=True)
class KernelRequest(_Line):
    """One kernel to fork: into the sandbox whose first process is `sandbox_pid` (bwrap's
    child-pid), its `cgroups`, its `rlimits` (prlimit's names), its whole `env`, its working copy
    `cwd`, with ipykernel's `argv` (what follows `python -m ipykernel_launcher`), as `uid`."""

    sandbox_pid: int
    cgroups: tuple[str, ...]
    rlimits: dict[str, int]
    env: dict[str, str]
    cwd: str
    argv: tuple[str, ...]
    uid: int | None = None
    """The host uid the kernel becomes (a root grader's); None where the sandbox's user
    namespace already maps its user."""


@dataclass(frozen=True)
class OwnKernelRequest(_Line):
    """One student's own kernel to fork (no sandbox): its whole `env`, its folder `cwd`,
    ipykernel's `argv`, alive as long as the process `holder_pid` (its kernel manager's)."""

    holder_pid: int
    env: dict[str, str]
    cwd: str
    argv: tuple[str, ...]


class Template:
    """The imports done once, and the state they left, checked before every fork; `own`: it forks
    students' own kernels (OwnKernelRequest), else only into sandboxes (KernelRequest)."""

    def __init__(
        self, imports: tuple[str, ...] = (), own: bool = False, measured: str | None = None
    ):
        before = dict(os.environ)
        for module in (*KERNEL, *imports):
            importlib.import_module(module)
        self.threads = _threads()
        self.left = Left(
            _made_folders(),
            {key: value for key, value in os.environ.items() if before.get(key) != value},
        )
        self.requests = OwnKernelRequest if own else KernelRequest
        if measured is not None:
            _measure_once(importlib.import_module(measured))
        gc.freeze()  # a kernel's collections would write to each, copying every page they share

    def fork_kernel(self, request: KernelRequest | OwnKernelRequest) -> int:
        """Fork the kernel `request` asks for; its pid (as the grader sees it) once it is in its
        sandbox with every privilege dropped, or, for an own kernel, once it is set up.
        RuntimeError when it could not get there."""
        self._check_untouched()
        if not isinstance(request, self.requests):
            raise RuntimeError(f"this template forks only on a {self.requests.__name__}")
        _reap()
        readable, writable = os.pipe()
        child = os.fork()
        if child == 0:
            os.close(readable)
            held = _hold_own if isinstance(request, OwnKernelRequest) else _enter_sandbox
            _as_child(writable, lambda: held(request, writable, self.left))
        os.close(writable)
        with os.fdopen(readable, "rb") as status:
            report = status.read().decode(errors="replace").splitlines()
        pids = [int(line.split()[1]) for line in report if line.startswith("kernel ")]
        if pids and READY in report:
            return pids[0]
        errors = [line.removeprefix("error: ") for line in report if line.startswith("error: ")]
        raise RuntimeError(errors[0] if errors else "the forked kernel ended before it was ready")

    def _check_untouched(self) -> None:
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_initialized():
            raise RuntimeError("CUDA was initialized in the template")
        if _threads() - self.threads:
            raise RuntimeError("the template started threads since its imports")


def _threads() -> frozenset[str]:
    """This process's threads, by id: those its imports started may end (torch's OpenMP thread,
    started where OMP_NUM_THREADS is 2 or more, ends at the first fork), none may start."""
    return frozenset(os.listdir("/proc/self/task"))


def _measure_once(module) -> None:
    """`module.measure()` in a child of the template, and what it returned `module.keep()` here;
    nothing kept, and why said, when the child fails (each kernel then measures for itself)."""
    readable, writable = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(readable)
        _as_child(writable, lambda: _send(module.measure(), writable))
    os.close(writable)
    with os.fdopen(readable, "rb") as measured:
        data = measured.read()
    if os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 0:
        module.keep(pickle.loads(data))
    else:
        why = data.rpartition(b"error: ")[2].decode(errors="replace").strip() or "it ended"
        said = f"{module.__name__}.measure() failed ({why}): each kernel measures for itself"
        print(said, file=sys.stderr, flush=True)


def _send(value: object, out: int) -> int:
    """Write `value` pickled on `out` (left open, for _as_child's error); the exit status 0."""
    with os.fdopen(out, "wb", closefd=False) as sent:
        pickle.dump(value, sent)
    return 0


@dataclass(frozen=True)
class Left:
    """What the template's imports left that a kernel which imported them itself would have:
    the `folders` they made in HOME, the `env` they set (debugpy's PYDEVD_USE_FRAME_EVAL)."""

    folders: tuple[str, ...]
    env: dict[str, str]


def _made_folders() -> tuple[str, ...]:
    """The folders the imports made in the template's HOME (matplotlib's config and cache, where
    it was imported), to make again, empty, in each kernel's sandbox: matplotlib keeps the paths
    it chose at import."""
    matplotlib = sys.modules.get("matplotlib")
    if matplotlib is None:
        return ()
    home = os.environ["HOME"]
    folders = (matplotlib.get_configdir(), matplotlib.get_cachedir())
    return tuple(folder for folder in folders if folder.startswith(home + os.sep))


def _reap() -> None:
    """Collect the template's children whose kernels have ended."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def _as_child(status: int, work: Callable[[], int]) -> None:
    """End this forked child with the exit status `work` returns; what it raises is written on
    `status` for the template to answer (the worker then falls back). Never returns."""
    code = 1
    try:
        code = work()
    except BaseException as exc:  # noqa: BLE001 (reported to the worker, which falls back)
        with contextlib.suppress(OSError):
            os.write(status, f"error: {type(exc).__name__}: {exc}\n".encode())
    finally:
        os._exit(code)


def _enter_sandbox(request: KernelRequest, status: int, left: Left) -> int:
    """The forked child: into the hand-in's cgroups and namespaces, then the kernel is forked
    inside them; it stays the kernel's parent (in the grader's process tree, which ends it) and
    ends with it: the kernel's exit status."""
    _close_all_but(status)
    for folder in request.cgroups:
        Path(folder, "cgroup.procs").write_text(str(os.getpid()))
    host = (os.stat("/"), os.stat(request.cwd))
    namespaces.join(request.sandbox_pid)
    _check_inside(*host, request)
    output, said = os.pipe()
    kernel = os.fork()
    if kernel == 0:
        os.close(output)
        _become_kernel(request, status, left, said)
    os.close(said)
    os.write(status, f"kernel {kernel}\n".encode())
    os.close(status)
    kernel_output.relay(output, sys.stderr, until=os.pidfd_open(kernel))
    return _exit_code(kernel)


def _exit_code(kernel: int) -> int:
    """The kernel's exit status once it ends; killed by a signal, as a shell says it."""
    code = os.waitstatus_to_exitcode(os.waitpid(kernel, 0)[1])
    return code if code >= 0 else 128 - code


def _check_inside(host_root: os.stat_result, host_copy: os.stat_result, request) -> None:
    """Refuse to go on outside a complete sandbox: its root must not be the host's, and its
    working copy must be the sandbox's own tmpfs, not the host's folder."""
    root = os.stat("/")
    if (root.st_dev, root.st_ino) == (host_root.st_dev, host_root.st_ino):
        raise RuntimeError("the sandbox's root is the host's: it was not built")
    copy = os.stat(request.cwd) if os.path.isdir(request.cwd) else host_copy
    if (copy.st_dev, copy.st_ino) == (host_copy.st_dev, host_copy.st_ino):
        raise RuntimeError("the sandbox has no working copy of its own yet")


def _close_all_but(kept: int) -> None:
    """Close every file the template had open but stdout, stderr and `kept`."""
    os.closerange(3, kept)
    os.closerange(kept + 1, 1 << 20)


def _become_kernel(request: KernelRequest, status: int, left: Left, output: int) -> None:
    """The kernel, inside the sandbox: what bubblewrap and prlimit give a fresh kernel, then
    ipykernel, with `output` (relayed as the kernel's words) as its stdout and stderr. Never
    returns."""
    _own_session()
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.close(output)
    for name, value in request.rlimits.items():
        resource.setrlimit(getattr(resource, f"RLIMIT_{name.upper()}"), (value, value))
    namespaces.drop_privileges(request.uid)
    if request.uid is not None and (os.getuid(), os.geteuid()) != (request.uid, request.uid):
        raise RuntimeError(f"the kernel is uid {os.getuid()}, not its own {request.uid}")
    _launch(request, status, left)


def _own_session() -> None:
    """A session of the kernel's own (its process group, which is ended whole), stdin empty."""
    os.setsid()
    stdin = os.open("/dev/null", os.O_RDONLY)
    os.dup2(stdin, 0)
    os.close(stdin)


def _hold_own(request: OwnKernelRequest, status: int, left: Left) -> int:
    """The forked child of a student's own kernel: forks the kernel (its output is the
    template's), stays its parent, and ends its whole session as soon as the holder ends (its
    kernel manager's kill), else with it: the kernel's exit status."""
    _close_all_but(status)
    holder = os.pidfd_open(request.holder_pid)
    kernel = os.fork()
    if kernel == 0:
        os.close(holder)
        _own_session()
        _launch(request, status, left)
    os.write(status, f"kernel {kernel}\n".encode())
    os.close(status)
    ended = os.pidfd_open(kernel)
    if ended not in select.select([holder, ended], [], [])[0]:
        try:
            os.killpg(kernel, signal.SIGKILL)
        except ProcessLookupError:  # its session not made yet: it has started nothing
            os.kill(kernel, signal.SIGKILL)
    return _exit_code(kernel)


def _launch(request: KernelRequest | OwnKernelRequest, status: int, left: Left) -> None:
    """Into the kernel's folder and environment, say ready on `status`, and run ipykernel as
    `python -m ipykernel_launcher` would. Never returns."""
    os.chdir(request.cwd)
    os.environ.clear()
    os.environ.update(request.env)
    for key, value in left.env.items():  # as the imports set them: where not given
        os.environ.setdefault(key, value)
    for folder in left.folders:  # under the sandbox's own /tmp, where the template's HOME is
        os.makedirs(folder, mode=0o700, exist_ok=True)
    os.write(status, f"{READY}\n".encode())
    os.close(status)
    code = 0
    try:
        from ipykernel import kernelapp

        launcher = Path(kernelapp.__file__).parents[1] / "ipykernel_launcher.py"
        sys.argv = [str(launcher), *request.argv]
        kernelapp.launch_new_instance()
    except SystemExit as ended:
        code = ended.code if isinstance(ended.code, int) else int(ended.code is not None)
    except BaseException:  # noqa: BLE001 (as an uncaught exception ends python: traceback, 1)
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(code)


def main(
    control: int, imports: tuple[str, ...], own: bool = False, measured: str | None = None
) -> None:
    """Import `imports` (and have `measured` measure once: MEASURE), say ready on `control` (a
    socket to the worker), then fork a kernel for each request line (an OwnKernelRequest where
    `own`, else a KernelRequest), answering its pid or the error; end when the worker closes it
    (or ends, even killed outright: the socket then closes)."""
    if sys.path and sys.path[0] and Path(sys.path[0]) == Path.cwd():
        del sys.path[0]  # started with -m: as ipykernel_launcher, no working folder on the path
    channel = os.fdopen(control, "rb+", buffering=0)
    template = Template(imports, own, measured)
    channel.write(f"{READY}\n".encode())
    for line in iter(channel.readline, b""):
        try:
            answer = {"pid": template.fork_kernel(template.requests.read(line))}
        except Exception as exc:  # noqa: BLE001 (the worker says it and falls back)
            answer = {"error": str(exc)}
        channel.write((json.dumps(answer) + "\n").encode())
    sys.stderr.flush()
    os._exit(0)  # nothing buffered, nothing of a student's here: no 0.8 s teardown of torch


if __name__ == "__main__":
    arguments = sys.argv[1:]
    own = arguments[0] == OWN
    arguments = arguments[own:]
    measured = arguments[1] if arguments[0] == MEASURE else None
    arguments = arguments[2:] if measured else arguments
    main(int(arguments[0]), tuple(arguments[1:]), own, measured)
