"""A kernel started the way graded kernels are (SandboxedKernelManager: fresh in its sandbox, or
forked into it where this process keeps a warm template), or by any kernel manager, and code run
in it."""

from __future__ import annotations

import contextlib
import json
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

from viewcopy.course.folder import Course
from viewcopy.sandbox.bubblewrap import readable_paths
from viewcopy.sandbox.limits import Limits

Run = Callable[[str], object]
"""Runs code in the kernel and returns what it printed, read as JSON."""


@contextlib.contextmanager
def sandboxed_kernel(copy: Path, course: Path, limits: Limits) -> Iterator[Run]:
    """A kernel in the working copy `copy` of `course`, under `limits`, until the block ends."""
    from traitlets.config import Config

    from viewcopy.sandbox.kernel_manager import SandboxedKernelManager

    config = Config()
    config.SandboxedKernelManager.readable = readable_paths(Course(course).data)
    config.SandboxedKernelManager.limits = dict(limits.__dict__)
    with running(
        SandboxedKernelManager(kernel_name="python3", config=config), cwd=str(copy)
    ) as run:
        yield run


@contextlib.contextmanager
def running(manager, **start) -> Iterator[Run]:
    """The kernel `manager` starts (`start`: start_kernel's keywords), until the block ends, when
    it is shut down at once; shut down too where it dies before it answers (RuntimeError)."""
    from jupyter_client.blocking import BlockingKernelClient
    from jupyter_core.utils import run_sync

    run_sync(manager.start_kernel)(extra_arguments=["--HistoryManager.hist_file=:memory:"], **start)
    client = BlockingKernelClient(**manager.get_connection_info(session=True))
    client.start_channels()

    def run(code: str) -> object:
        out: list[str] = []
        client.execute_interactive(
            textwrap.dedent(code),
            timeout=60,
            output_hook=lambda m: out.append(m["content"].get("text", "")),
        )
        return json.loads("".join(out))

    try:
        client.wait_for_ready(timeout=60)
        yield run
    finally:
        client.stop_channels()
        run_sync(manager.shutdown_kernel)(now=True)


def outcome(expr: str) -> str:
    """Code that prints, as JSON, 'ok' or the exception name an expression raises."""
    return f"""
    import json
    try:
        {expr}
        said = "ok"
    except BaseException as exc:
        said = type(exc).__name__
    print(json.dumps(said))
    """
