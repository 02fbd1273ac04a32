"""jupyter_client's own kernel-manager tests, kept verbatim in tests/data/jupyter_client_8.10.0
(its README says where from), run against viewcopy's kernel managers: the swap, the sandbox's
configuration, the warm template, and pytest-timeout's `timeout` marker, enforced here.

A contract run is its own pytest session (`run`, or by hand as the folder's README shows): the
folder's conftest.py loads this module where VIEWCOPY_CONTRACT_MANAGER names a manager (`MODES`),
and jupyter_client's conftest then loads pytest-jupyter, kept verbatim beside it. Nothing of the
tests' text changes: before they are imported, the names they take from jupyter_client
(`KernelManager`, `AsyncKernelManager`, `IOLoopKernelManager`, `AsyncIOLoopKernelManager`) are the
chosen manager's, and so are the ones `start_new_kernel` and `start_new_async_kernel` build
(`install`). viewcopy's managers are asynchronous only: where a test builds jupyter_client's
synchronous `KernelManager`, it gets the manager's synchronous twin, made from the same `_async_`
methods the way jupyter_client makes `KernelManager` (`synchronous`).

The session runs in the folder, as jupyter_client's runs in its repository: a sandboxed kernel
sees its working folder (`python -m tests.signalkernel` imports from it) and not the grader's
PYTHONPATH. Each test may run `timeout` seconds (its marker's, else jupyter_client's 100) from its
setup to its teardown; past that it fails as "Timeout ... (hang)" (SIGALRM), and its teardown has
TEARDOWN_S more. Each test records how many kernels it started warm and fresh, and how many
kernel cgroups it left behind (JUnit XML properties; `outcomes` reads them).
"""

from __future__ import annotations

import gc
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import types
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"
VERBATIM = DATA / "jupyter_client_8.10.0"
"""jupyter_client 8.10.0's released tests/ (and its LICENSE), as jupyter_client's root."""
PYTEST_JUPYTER = DATA / "pytest_jupyter_0.11.0"
"""pytest-jupyter 0.11.0, the plugin jupyter_client's conftest loads, on sys.path."""
TEST_FILES = ("tests/test_kernelmanager.py", "tests/test_restarter.py")
VERBATIM_MODULES = ("tests.utils", "tests.test_kernelmanager", "tests.test_restarter")
"""Imported while the swapped names stand (`install`): they take what they use at import, and
so does pytest-jupyter's jp_start_kernel (`start_new_async_kernel`)."""
MODES = ("jupyter_client", "unix", "sandboxed-fresh", "sandboxed-warm")
"""jupyter_client's own managers (the control), UnixSocketKernelManager, SandboxedKernelManager
starting every kernel fresh, and forking it from a warm template where it can (kernels of
`python -m ipykernel_launcher` only: the tests' own signaltest and problemtest kernels start
fresh in every mode)."""
ENV = "VIEWCOPY_CONTRACT_MANAGER"
TIMEOUT_ENV = "VIEWCOPY_CONTRACT_TIMEOUT"
DEFAULT_IP_ENV = "VIEWCOPY_CONTRACT_DEFAULT_IP"
"""A diagnostic, never the contract: =1 drops the `KernelManager.ip = "test"` that the tests'
`config` fixture sets for ipc, to see what fails past it (with -k "not tcp")."""
SECURITY = Path(__file__).resolve().parents[2] / "docs" / "security.md"
"""Lists, between its `<!-- contract` markers, each of jupyter_client's tests a sandboxed manager
cannot pass, and why (`cannot_pass`)."""
REASONS = {"no network": "a sandboxed kernel has no network"}
"""Each reason the table may give, and what the test's failure then says."""
SANDBOXED_MODES = ("sandboxed-fresh", "sandboxed-warm")
DEFAULT_TIMEOUT_S = 100.0
"""jupyter_client's pyproject: `timeout = 100` (pytest-timeout), where a test has no marker."""
TEARDOWN_S = 30.0

SYNC_METHODS = (
    "_launch_kernel", "start_kernel", "pre_start_kernel", "post_start_kernel",
    "request_shutdown", "finish_shutdown", "cleanup_resources", "shutdown_kernel",
    "restart_kernel", "_send_kernel_sigterm", "_kill_kernel", "interrupt_kernel",
    "signal_kernel", "is_alive", "client",
)  # fmt: skip
"""What jupyter_client's AsyncKernelManager makes asynchronous; KernelManager's own are
`run_sync` of the same `_async_` methods (bound at its class definition, as there)."""
SYNC_TRAITS = ("client_class", "client_factory", "context", "_context_default")
"""What else AsyncKernelManager redefines (its client, its zmq context): KernelManager's again."""


def cannot_pass(mode: str) -> dict[str, str]:
    """{test: reason} for `mode`, from docs/security.md's table (its managers column: `sandboxed`
    for both sandboxed modes, or a mode's name)."""
    text = SECURITY.read_text(encoding="utf-8")
    table = text.split("<!-- contract:", 1)[1].split("<!-- /contract -->", 1)[0]
    listed = {}
    for row in table.splitlines():
        cells = [c.strip().strip("`") for c in row.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("tests/"):
            continue
        test, managers, reason = cells
        modes = SANDBOXED_MODES if managers == "sandboxed" else (managers,)
        assert reason in REASONS, f"docs/security.md: {test}: no such reason {reason!r}"
        if mode in modes:
            listed[test] = reason
    return listed


def limits():
    """The limits `viewcopy grade` sandboxes kernels under."""
    from viewcopy.grading.pool import SANDBOXED

    return SANDBOXED


def sandboxed_class():
    """SandboxedKernelManager configured as the grader configures it (sandbox_config): its
    limits, and what a kernel may read, which never covers the folder it works in (the
    grader's working copies are in the course, and readable_paths leaves out the course's
    folders and all above them; here the folder a kernel starts in stands for the course)."""
    from traitlets import default

    from viewcopy.course.folder import Course
    from viewcopy.sandbox.bubblewrap import readable_paths
    from viewcopy.sandbox.kernel_manager import SandboxedKernelManager

    class GradersSandboxedKernelManager(SandboxedKernelManager):
        @default("limits")
        def _limits_default(self) -> dict:
            return dict(limits().__dict__)

        @default("readable")
        def _readable_default(self) -> list[str]:
            return readable_paths(Course(Path.cwd()).data)

    return GradersSandboxedKernelManager


def synchronous(cls: type) -> type:
    """The synchronous twin of `cls`, an AsyncKernelManager subclass: what jupyter_client's
    KernelManager is to its AsyncKernelManager."""
    import zmq
    from jupyter_client.client import KernelClient
    from jupyter_client.manager import AsyncKernelManager, KernelManager
    from traitlets import DottedObjectName, Instance, TraitType, Type, default
    from traitlets.traitlets import EventHandler
    from traitlets.utils.importstring import import_item

    overridden = {
        name
        for name, value in vars(AsyncKernelManager).items()
        if not name.startswith("__")
        and (callable(value) or isinstance(value, (TraitType, EventHandler)))
    }
    unknown = overridden - set(SYNC_METHODS) - set(SYNC_TRAITS)
    assert not unknown, f"jupyter_client's AsyncKernelManager now also overrides {unknown}"

    def _context_default(self) -> zmq.Context:
        self._created_context = True
        return zmq.Context()

    def _client_factory_default(self) -> type:
        return import_item(self.client_class)

    body = {name: vars(KernelManager)[name] for name in SYNC_METHODS}
    body.update(
        __module__=__name__,
        __doc__=f"{cls.__name__}, synchronous as jupyter_client's KernelManager.",
        client_class=DottedObjectName("jupyter_client.blocking.BlockingKernelClient", config=True),
        client_factory=Type(klass=KernelClient, config=True),
        context=Instance(zmq.Context),
        _context_default=default("context")(_context_default),
        _client_factory_default=default("client_factory")(_client_factory_default),
    )
    return type(f"Synchronous{cls.__name__}", (cls,), body)


def managers(mode: str) -> dict[str, type]:
    """jupyter_client's manager names, each the manager `mode` swaps in for it."""
    from jupyter_client.ioloop import AsyncIOLoopKernelManager, IOLoopKernelManager
    from jupyter_client.manager import AsyncKernelManager, KernelManager

    if mode == "jupyter_client":
        return {
            "KernelManager": KernelManager,
            "AsyncKernelManager": AsyncKernelManager,
            "IOLoopKernelManager": IOLoopKernelManager,
            "AsyncIOLoopKernelManager": AsyncIOLoopKernelManager,
        }
    if mode == "unix":
        from viewcopy.sandbox.unix_sockets import UnixSocketKernelManager as chosen
    elif mode in ("sandboxed-fresh", "sandboxed-warm"):
        chosen = sandboxed_class()
    else:
        raise ValueError(f"{ENV}={mode!r}: one of {', '.join(MODES)}")
    sync = synchronous(chosen)
    return {
        "KernelManager": sync,
        "AsyncKernelManager": chosen,
        "IOLoopKernelManager": type(f"IOLoop{sync.__name__}", (sync, IOLoopKernelManager), {}),
        "AsyncIOLoopKernelManager": type(
            f"AsyncIOLoop{chosen.__name__}", (chosen, AsyncIOLoopKernelManager), {}
        ),
    }


def install(mode: str, root: Path = VERBATIM) -> dict[str, type]:
    """Swap `mode`'s managers in for the names the verbatim tests (and pytest-jupyter's
    jp_start_kernel) take from jupyter_client, and import them: while they import, jupyter_client
    and jupyter_client.ioloop export the chosen managers, and `start_new_kernel` and
    `start_new_async_kernel` are jupyter_client's own code building them. Nothing else changes:
    jupyter_client itself still means its own classes (its client asks whether its parent is a
    `KernelManager`, its restarter resolves "jupyter_client.KernelManager")."""
    os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")  # as jupyter_client's conftest
    SESSION_ROOT[0] = root
    for folder in (root, PYTEST_JUPYTER):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    import jupyter_client
    import jupyter_client.ioloop
    import jupyter_client.manager

    pytest.register_assert_rewrite("pytest_jupyter")  # as a plugin pytest loads itself
    chosen = managers(mode)
    starters = {
        name: rebound(getattr(jupyter_client.manager, name), chosen)
        for name in ("start_new_kernel", "start_new_async_kernel")
    }
    swapped = {
        jupyter_client: {k: chosen[k] for k in ("KernelManager", "AsyncKernelManager")},
        jupyter_client.ioloop: {
            k: chosen[k] for k in ("IOLoopKernelManager", "AsyncIOLoopKernelManager")
        },
        jupyter_client.manager: starters,
    }
    saved = [(module, name, getattr(module, name)) for module, names in swapped.items()
             for name in names]  # fmt: skip
    try:
        for module, names in swapped.items():
            for name, value in names.items():
                setattr(module, name, value)
        for module in (*VERBATIM_MODULES, "pytest_jupyter.jupyter_client"):
            assert module not in sys.modules, f"{module} was imported before the swap"
            __import__(module)
    finally:
        for module, name, original in saved:
            setattr(module, name, original)
    INSTALLED.update(chosen)
    return chosen


def rebound(function, names: dict[str, type]):
    """`function`, its code unchanged, reading `names` where it reads its module's globals."""
    copy = types.FunctionType(
        function.__code__,
        {**function.__globals__, **names},
        function.__name__,
        function.__defaults__,
        function.__closure__,
    )
    copy.__kwdefaults__ = function.__kwdefaults__
    copy.__qualname__ = function.__qualname__
    copy.__doc__ = function.__doc__
    return copy


INSTALLED: dict[str, type] = {}
SESSION_ROOT = [VERBATIM]
"""The copy of jupyter_client's root this session runs in (`install`)."""


# The pytest plugin: jupyter_client's tests folder's conftest.py (ours) re-exports these.


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers", "timeout(seconds): pytest-timeout's marker, enforced by the contract plugin"
    )


def pytest_report_header(config) -> str:
    swapped = ", ".join(f"{name}={cls.__name__}" for name, cls in INSTALLED.items())
    return f"kernel managers: {os.environ.get(ENV)} ({swapped})"


def pytest_sessionstart(session) -> None:
    """A warm template for sandboxed-warm, started as a grading worker starts it."""
    if os.environ.get(ENV) == "sandboxed-warm":
        from viewcopy.course.assignment import LAB_IMPORTS
        from viewcopy.engine.devices import available_devices
        from viewcopy.sandbox import warm_kernels

        problem = warm_kernels.start(limits(), available_devices(), None, LAB_IMPORTS)
        warm_kernels.wait_ready()
        if problem is not None or warm_kernels.active() is None:
            raise pytest.UsageError(f"no warm template here: {problem or 'it did not start'}")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session) -> None:
    gc.collect()  # before other plugins import: see pytest_runtest_teardown
    if os.environ.get(ENV) == "sandboxed-warm":
        from viewcopy.sandbox import warm_kernels

        warm_kernels.stop()


@pytest.fixture(autouse=True, scope="session")
def jupyter_client_root() -> Iterator[None]:
    """Run in jupyter_client's root, as its own test runs do."""
    before = os.getcwd()
    os.chdir(SESSION_ROOT[0])
    yield
    os.chdir(before)


def timeout_of(item) -> float:
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        return float(marker.args[0])
    return float(os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT_S))


@contextmanager
def alarm(seconds: float, what: str) -> Iterator[None]:
    """Fail the test (in the main thread, where it waits) once `seconds` have passed."""

    def ring(signum, frame):
        pytest.fail(f"Timeout: {what} ran past {seconds:.0f} s (hang)", pytrace=True)

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.01))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    value = yield
    if fixturedef.argname == "config" and os.environ.get(DEFAULT_IP_ENV) == "1":
        value.KernelManager.pop("ip", None)
    return value


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    from viewcopy.sandbox import warm_kernels

    warm_kernels.counts()
    item.stash[_DEADLINE] = time.monotonic() + timeout_of(item)
    item.stash[_CGROUPS] = set(kernel_cgroups())
    return (yield)


_DEADLINE = pytest.StashKey[float]()
_CGROUPS = pytest.StashKey[set]()


def kernel_cgroups(root: Path = Path("/sys/fs/cgroup")) -> list[Path]:
    """The kernel cgroups this process made that are still there (viewcopy.sandbox.cgroups)."""
    from viewcopy.sandbox.cgroups import CONTROLLERS, parents

    found = []
    for hierarchy, controller in ((root, ""), *((root / c, c) for c in CONTROLLERS)):
        for parent in parents(hierarchy, controller):
            found += parent.glob(f"{os.getpid()}-*") if parent.is_dir() else []
    return found


def _left(item) -> float:
    return item.stash[_DEADLINE] - time.monotonic()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    with alarm(_left(item), f"{item.name} (setup)"):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    with alarm(_left(item), f"{item.name} ({timeout_of(item):.0f} s budget)"):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    from viewcopy.sandbox import warm_kernels

    try:
        with alarm(max(_left(item), TEARDOWN_S), f"{item.name} (teardown)"):
            return (yield)
    finally:
        gc.collect()  # what a timed-out test left (its coroutine) ends here, not inside an import
        started = warm_kernels.counts()
        left = sorted(set(kernel_cgroups()) - item.stash[_CGROUPS])
        item.user_properties += [("kernels_warm", started["warm"]),
                                 ("kernels_fresh", started["fresh"]),
                                 ("cgroups_left", len(left))]  # fmt: skip


# Running a contract session, and what it found.


@dataclass
class Outcome:
    test: str
    """The test's node id, from tests/ on."""
    outcome: str
    """passed, failed, hang, error (in setup or teardown) or skipped."""
    message: str
    seconds: float
    kernels: tuple[int, int]
    """Kernels started warm and fresh."""
    cgroups_left: int
    """Kernel cgroups the test left behind (one per controller and kernel)."""


def run(
    mode: str, junit: Path, *args: str, folder: Path | None = None, timeout_s: float = 3600
) -> subprocess.CompletedProcess:
    """A contract session against `mode`'s managers (pytest in a process of its own, in
    jupyter_client's root, or in a copy of it made at `folder`: sessions in copies of their own
    may run at once, as the tests' ipc sockets are paths in it), its results in the JUnit XML
    file `junit`."""
    root = VERBATIM
    if folder is not None:
        root = Path(shutil.copytree(VERBATIM, folder))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env[ENV] = mode
    env["PYTHONPATH"] = os.pathsep.join([str(DATA.parent), env.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfE",
               f"--rootdir={root}", f"--junitxml={junit}", *(args or TEST_FILES)]  # fmt: skip
    return subprocess.run(
        command, cwd=root, env=env, capture_output=True, text=True, timeout=timeout_s
    )


SWAPPED_ID = r"\[(?!AsyncKMSubclass)\w*KernelManager-"
"""A swapped manager's name in a test's id, where jupyter_client's says AsyncKernelManager."""


def outcomes(junit: Path) -> list[Outcome]:
    """Each test's outcome in a contract session's JUnit XML file."""
    found = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        dotted = case.get("classname", "").split(".")
        at = next(i for i, part in enumerate(dotted) if part.startswith("test_"))
        module = ["tests", *dotted[at:]]  # the folder's tests/, as jupyter_client names them
        path = "/".join(module[:2]) + ".py"
        name = re.sub(SWAPPED_ID, "[AsyncKernelManager-", case.get("name", ""))
        test = "::".join([path, *module[2:], name])
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            element = case.find(tag)
            if element is not None:
                message = (element.get("message") or "").strip()
                if tag == "skipped":
                    outcome = "skipped"
                elif "Timeout: " in message:
                    outcome = "hang"
                else:
                    outcome = "failed" if tag == "failure" else "error"
                break
        found.append(
            Outcome(
                test,
                outcome,
                message.splitlines()[0][:300] if message else "",
                float(case.get("time", 0)),
                (int(properties.get("kernels_warm", 0)), int(properties.get("kernels_fresh", 0))),
                int(properties.get("cgroups_left", 0)),
            )
        )
    return found


def table(results: dict[str, list[Outcome]]) -> str:
    """One line per test, one column per mode, then the count of each outcome per mode."""
    modes = list(results)
    tests = list(dict.fromkeys(o.test for found in results.values() for o in found))
    by = {(m, o.test): o for m, found in results.items() for o in found}
    width = max(map(len, tests), default=4)
    lines = [f"{'test':<{width}}  " + "  ".join(f"{m:<15}" for m in modes)]
    for test in tests:
        cells = [by[m, test].outcome if (m, test) in by else "-" for m in modes]
        lines.append(f"{test:<{width}}  " + "  ".join(f"{c:<15}" for c in cells))
    for kind in ("passed", "failed", "hang", "error", "skipped"):
        counts = [sum(o.outcome == kind for o in results[m]) for m in modes]
        lines.append(f"{kind:>{width}}  " + "  ".join(f"{c:<15}" for c in counts))
    return "\n".join(lines)


if __name__ == "__main__":  # python tests/support/kernel_manager_contract.py MODE=junit.xml ...
    collected = {}
    for argument in sys.argv[1:]:
        mode, _, path = argument.partition("=")
        collected[mode] = outcomes(Path(path))
    print(table(collected))
    for mode, found in collected.items():
        for o in found:
            if o.outcome not in ("passed", "skipped"):
                print(f"{mode:<16} {o.outcome:<7} {o.test}: {o.message}")
            if o.cgroups_left:
                print(f"{mode:<16} left {o.cgroups_left} cgroups: {o.test}")
