"""viewcopy's kernel managers keep jupyter_client's contract: jupyter_client 8.10.0's own
kernel-manager tests (test_kernelmanager.py and test_restarter.py, verbatim in
tests/data/jupyter_client_8.10.0) pass against UnixSocketKernelManager, and against
SandboxedKernelManager starting kernels fresh and forking them from a warm template, but for those
docs/security.md lists with the sandbox's reason (they must fail, and for that reason); each mode
is a pytest session of its own (support.kernel_manager_contract swaps the manager in). Beside
them, a probe of what the sandboxed manager once broke, on each manager: an interrupt reaches what
the kernel started, a kernelspec's `env` reaches the kernel, a restart keeps the connection (a
kernel that dies on its own leaving nothing is test_kernel_endings.py's).

Measured (2 cores, root, cgroup v1), of jupyter_client's 46 tests (4 skipped by jupyter_client
itself): before the sandbox became a provisioner, unix 30 passed, sandboxed fresh and warm 13;
now unix 42, fresh and warm 30 each, the other 12 each a `[tcp]` test (no network). The three
sessions run at once, each in a copy of jupyter_client's root: about 3 minutes in all.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from support import kernel_manager_contract as contract
from support.sandboxing import sandbox_or_skip

pytestmark = [pytest.mark.sandbox]

MANAGERS = ("unix", "sandboxed-fresh", "sandboxed-warm")
SESSION_S = 3600
"""A whole contract session, at most (each of its tests has its own timeout)."""
PROBE_S = 180
WAIT_S = 10.0
HISTORY = ["--HistoryManager.hist_file=:memory:"]
SPEC_VARIABLE = "VIEWCOPY_FROM_THE_KERNELSPEC"


def test_jupyter_clients_own_tests_pass(tmp_path):
    """Every manager's session at once, each in a copy of jupyter_client's root of its own."""
    sandbox_or_skip()
    with ThreadPoolExecutor(len(MANAGERS)) as sessions:
        found = sessions.map(lambda mode: session(mode, tmp_path), MANAGERS)
        done = dict(zip(MANAGERS, found, strict=True))
    wrong = [f"{mode}: {line}" for mode, lines in done.items() for line in lines]
    assert not wrong, "\n".join(wrong)


def session(mode: str, tmp_path) -> list[str]:
    """What is wrong with `mode`'s contract session: a test broken that docs/security.md does not
    list, or listed and not failing for its reason, or one that left cgroups behind."""
    junit = tmp_path / f"{mode}.xml"
    done = contract.run(mode, junit, folder=tmp_path / mode, timeout_s=SESSION_S)
    if not junit.exists():
        return [f"no results: {done.stdout[-4000:]}{done.stderr[-4000:]}"]
    found = contract.outcomes(junit)
    listed = contract.cannot_pass(mode)
    broken = {o.test: o for o in found if o.outcome not in ("passed", "skipped")}
    lines = [
        f"{o.outcome:<7} {o.test}: {o.message}" for o in broken.values() if o.test not in listed
    ]
    lines += [f"listed, but it did not fail: {test}" for test in listed if test not in broken]
    lines += [
        f"listed for {listed[test]!r}, but it broke otherwise: {test}: {o.message}"
        for test, o in broken.items()
        if test in listed
        and (o.outcome != "failed" or contract.REASONS[listed[test]] not in o.message)
    ]
    lines += [f"left {o.cgroups_left} cgroups: {o.test}" for o in found if o.cgroups_left]
    if len(found) != 46:
        lines.append(f"{len(found)} tests ran, not jupyter_client's 46")
    return lines


@pytest.fixture(scope="module")
def template():
    """A warm template, started as a grading worker starts it, for the module's warm probes."""
    from viewcopy.course.assignment import LAB_IMPORTS
    from viewcopy.sandbox import warm_kernels

    def start():
        if warm_kernels.active() is None:
            assert warm_kernels.start(contract.limits(), ["cpu"], imports=LAB_IMPORTS) is None
            warm_kernels.wait_ready()
        return warm_kernels.active()

    yield start
    warm_kernels.stop()


@pytest.fixture(params=MANAGERS)
def manager(request, template, tmp_path, monkeypatch):
    """The manager class (asynchronous, as nbclient uses it), forking its kernels from a warm
    template for sandboxed-warm; its kernels start in a working copy of their own, as graded
    kernels do."""
    from viewcopy.sandbox import warm_kernels
    from viewcopy.sandbox.unix_sockets import UnixSocketKernelManager

    copy = tmp_path / "course" / "autograded" / "student" / "lab"
    copy.mkdir(parents=True)
    monkeypatch.chdir(copy)
    if request.param == "unix":
        yield UnixSocketKernelManager
        return
    sandbox_or_skip()
    if request.param == "sandboxed-warm":
        assert template() is not None
    else:  # the module's template, if started, is kept for the warm probes
        monkeypatch.setattr(warm_kernels, "_active", None)
    warm_kernels.counts()
    yield contract.sandboxed_class()
    started = warm_kernels.counts()
    assert started["warm" if request.param == "sandboxed-warm" else "fresh"] >= 1, started


def probe(coroutine):
    """Run `coroutine` to its end in a thread of its own (an event loop an earlier test of the
    session left in this one cannot get in the way), within PROBE_S."""
    with contract.alarm(PROBE_S, "the probe"), ThreadPoolExecutor(1) as own:
        return own.submit(asyncio.run, coroutine).result()


async def started(km, **start):
    """`km`'s kernel, started and answering: its client."""
    await km.start_kernel(extra_arguments=HISTORY, **start)
    kc = km.client()
    kc.start_channels()
    await kc.wait_for_ready(timeout=60)
    return kc


async def printed(kc, code: str):
    """What `code` printed in the kernel, read as JSON."""
    out: list[str] = []
    reply = await kc.execute_interactive(
        code, timeout=60, output_hook=lambda m: out.append(m["content"].get("text", ""))
    )
    assert reply["content"]["status"] == "ok", reply["content"]
    return json.loads("".join(out))


async def until(condition, wait_s: float = WAIT_S) -> bool:
    for _ in range(int(wait_s / 0.1)):
        if condition():
            return True
        await asyncio.sleep(0.1)
    return condition()


def test_an_interrupt_reaches_what_the_kernel_started(manager):
    """jupyter_client signals the kernel's process group; ipykernel's interrupt_request does
    where the kernel leads its group, else signals the kernel alone: os.system's child must die,
    or the cell never ends (nbclient's timeout then finds the kernel unresponsive)."""
    import psutil

    token = f"{1000 + uuid.uuid4().int % 1000}.{os.getpid()}"  # a sleep no one else runs

    def sleeps():
        return [
            p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", token]
        ]

    async def body():
        km = manager(kernel_name="python3")
        kc = await started(km)
        try:
            pid, group, session = await printed(
                kc, "import json, os; print(json.dumps([os.getpid(), os.getpgid(0), os.getsid(0)]))"
            )
            msg_id = kc.execute(f"import os; os.system('sleep {token}')")
            assert await until(lambda: bool(sleeps())), "the cell's sleep never started"
            await km.interrupt_kernel()
            sleep_ended = await until(lambda: not sleeps())
            try:
                reply = await kc.get_shell_msg(timeout=WAIT_S)
                replied = reply["parent_header"]["msg_id"] == msg_id
            except Exception:
                replied = False
            return {
                "kernel pid": pid, "its group": group, "its session": session,
                "leads its group": pid == group, "interrupt_mode": km.kernel_spec.interrupt_mode,
                "sleep ended": sleep_ended, "cell ended": replied,
            }  # fmt: skip
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)
            for process in sleeps():
                process.kill()

    facts = probe(body())
    print(facts)
    assert facts["sleep ended"] and facts["cell ended"], facts


def kernelspec_with(folder, env: dict) -> str:
    """A kernelspec of this Python's ipykernel with `env`, found first (JUPYTER_PATH): its name."""
    spec = folder / "kernels" / "with-env"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "with env",
                "language": "python",
                "env": env,
            }
        )
    )
    return spec.name


async def environment_of(km, names: tuple[str, ...]) -> dict:
    """The values of `names` in `km`'s kernel, once started; it is shut down after."""
    kc = await started(km)
    try:
        return await printed(
            kc, f"import json, os; print(json.dumps({{n: os.environ.get(n) for n in {names!r}}}))"
        )
    finally:
        kc.stop_channels()
        await km.shutdown_kernel(now=True)


def test_a_kernelspecs_env_reaches_the_kernel(manager, tmp_path, monkeypatch):
    """jupyter_client gives the kernel its kernelspec's `env` over the manager's environment,
    `${NAME}` templated against it; the sandbox hides the grader's environment, not the
    kernelspec's: it templates against the sandbox's own (no grader's variable reaches the
    kernel that way) and keeps its own HOME."""
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    monkeypatch.setenv("VIEWCOPY_GRADERS_OWN", "the grader's")
    spec = {
        SPEC_VARIABLE: "kept",
        "HOME": "/elsewhere",
        "TEMPLATED": "${HOME}|${VIEWCOPY_GRADERS_OWN}",
    }
    name = kernelspec_with(tmp_path, spec)
    seen = probe(environment_of(manager(kernel_name=name), (SPEC_VARIABLE, "HOME", "TEMPLATED")))
    if manager.__name__ == "UnixSocketKernelManager":  # jupyter_client's own semantics
        assert seen == {SPEC_VARIABLE: "kept", "HOME": "/elsewhere",
                        "TEMPLATED": f"{os.environ['HOME']}|the grader's"}  # fmt: skip
    else:
        assert seen == {SPEC_VARIABLE: "kept", "HOME": "/tmp",
                        "TEMPLATED": "/tmp|${VIEWCOPY_GRADERS_OWN}"}  # fmt: skip


def test_a_kernelspec_that_changes_what_the_template_read_gets_a_fresh_kernel(
    template, tmp_path, monkeypatch
):
    """The warm template imported torch with the sandbox's thread count: a kernel whose
    kernelspec sets another is started fresh, and has it."""
    from viewcopy.sandbox import warm_kernels

    sandbox_or_skip()
    assert template() is not None
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    name = kernelspec_with(tmp_path, {"OMP_NUM_THREADS": "3", SPEC_VARIABLE: "kept"})
    warm_kernels.counts()
    km = contract.sandboxed_class()(kernel_name=name)
    seen = probe(environment_of(km, ("OMP_NUM_THREADS", SPEC_VARIABLE)))
    assert seen == {"OMP_NUM_THREADS": "3", SPEC_VARIABLE: "kept"}
    assert warm_kernels.counts() == {"warm": 0, "fresh": 1}


def test_a_restart_keeps_the_connection(manager):
    """A restart keeps the kernel's connection (jupyter_client: "the same ports and connection
    file are used"): a client made before it reaches the kernel after it."""

    async def body():
        km = manager(kernel_name="python3")
        kc = await started(km)
        try:
            before = km.get_connection_info()
            await km.restart_kernel(now=True)
            after = km.get_connection_info()
            try:
                await kc.wait_for_ready(timeout=30)
                answers = True
            except RuntimeError:
                answers = False
            return before, after, answers
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)

    before, after, answers = probe(body())
    facts = {"ip before": before["ip"], "ip after": after["ip"], "old client answered": answers}
    print(facts)
    assert after == before and answers, facts
