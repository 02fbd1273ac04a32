"""viewcopy's kernel managers keep jupyter_client's contract (issue "The sandboxed kernel keeps
jupyter_client's contract"): jupyter_client 8.10.0's own kernel-manager tests (test_kernelmanager.py
and test_restarter.py, verbatim in tests/data/jupyter_client_8.10.0) pass against
UnixSocketKernelManager, against SandboxedKernelManager starting kernels fresh, and forking them
from a warm template; each mode is a pytest session of its own (support.kernel_manager_contract
swaps the manager in). Beside them, a probe of each way the sandboxed manager is suspected to
break the contract, on each manager: an interrupt reaches what the kernel started, a kernelspec's
`env` reaches the kernel, a restart keeps the connection, and a kernel that dies on its own
leaves nothing behind once nbclient has cleaned up after it.

Off by default, so the suite stays green while most of it fails: VIEWCOPY_CONTRACT=1 runs it
(`VIEWCOPY_CONTRACT=1 python -m pytest tests/grading/test_kernel_manager_contract.py`; -k unix,
-k fresh or -k warm picks a manager; about 6 minutes). The baseline when it was written (2 cores,
root, cgroup v1), of jupyter_client's 46 tests (4 of them skipped by jupyter_client itself):
jupyter_client's own managers 42 passed; unix 30 passed, 12 failed (every [tcp] one: UnixSockets
sets `ip` to a socket path whatever the transport); sandboxed fresh and warm alike 13 passed, 29
failed ([tcp]; a configured `ip`; the kernelspec's `env` dropped; an interrupt that misses the
kernel's children; none of the tests' kernels is forked at baseline). Of the probes, unix passes
all four, fresh none, warm the interrupt only. Whoever makes the sandboxed manager keep the
contract turns this module on (drops the switch) once every mode passes.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid

import pytest

if os.environ.get("VIEWCOPY_CONTRACT") != "1":
    pytest.skip(
        "jupyter_client's contract, not kept yet (most of it fails): VIEWCOPY_CONTRACT=1 runs it",
        allow_module_level=True,
    )

from support import kernel_manager_contract as contract  # noqa: E402
from support.sandboxing import sandbox_or_skip  # noqa: E402

pytestmark = [pytest.mark.sandbox]

MANAGERS = ("unix", "sandboxed-fresh", "sandboxed-warm")
SESSION_S = 3600
"""A whole contract session, at most (each of its tests has its own timeout)."""
PROBE_S = 180
WAIT_S = 10.0
HISTORY = ["--HistoryManager.hist_file=:memory:"]
SPEC_VARIABLE = "VIEWCOPY_FROM_THE_KERNELSPEC"


@pytest.mark.parametrize("mode", MANAGERS)
def test_jupyter_clients_own_tests_pass(mode, tmp_path):
    if mode != "unix":
        sandbox_or_skip()
    junit = tmp_path / f"{mode}.xml"
    done = contract.run(mode, junit, timeout_s=SESSION_S)
    assert junit.exists(), done.stdout[-4000:] + done.stderr[-4000:]
    found = contract.outcomes(junit)
    broken = [o for o in found if o.outcome not in ("passed", "skipped")]
    lines = [f"{o.outcome:<7} {o.test}: {o.message}" for o in broken]
    lines += [f"left {o.cgroups_left} cgroups: {o.test}" for o in found if o.cgroups_left]
    assert found and not broken, f"{len(broken)} of {len(found)} broke:\n" + "\n".join(lines)


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
    with contract.alarm(PROBE_S, "the probe"):
        return asyncio.run(coroutine)


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


def test_a_kernelspecs_env_reaches_the_kernel(manager, tmp_path, monkeypatch):
    """jupyter_client gives the kernel its kernelspec's `env` (over the manager's environment);
    the sandbox may hide the grader's environment, not the kernelspec's."""
    spec = tmp_path / "kernels" / "with-env"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "with env",
                "language": "python",
                "env": {SPEC_VARIABLE: "kept"},
            }
        )
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))

    async def body():
        km = manager(kernel_name="with-env")
        kc = await started(km)
        try:
            return await printed(
                kc, f"import json, os; print(json.dumps(os.environ.get({SPEC_VARIABLE!r})))"
            )
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)

    assert probe(body()) == "kept"


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


def test_a_kernel_that_dies_on_its_own_leaves_nothing(manager):
    """nbclient, when the kernel has died on its own, skips shutdown_kernel and calls
    `cleanup_resources()`; jupyter_client's AsyncKernelManager binds that name to
    KernelManager._async_cleanup_resources itself, past any subclass's override."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import os; os._exit(1)")])

    async def body():
        km = manager(kernel_name="python3")
        inside = km.ip  # where the kernel's sockets are, as the kernel sees them
        client = NotebookClient(
            notebook, km=km, timeout=60, kernel_name="python3", extra_arguments=HISTORY
        )
        try:
            with pytest.raises(DeadKernelError):
                await client.async_execute()
            cgroups = getattr(km, "_cgroups", None)
            left = [str(f) for f in cgroups.folders if f.exists()] if cgroups else []
            return inside, km.ip, left
        finally:
            if getattr(km, "_cgroups", None) is not None:  # what the override would have done
                await km._async_cleanup_resources()

    inside, ip, left = probe(body())
    facts = {"ip before": inside, "ip after": ip, "cgroups left": left}
    print(facts)
    assert ip == inside and left == [], facts
