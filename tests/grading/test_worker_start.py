"""How grading processes start (grading.worker.worker_context): on Linux each is forked from one
fork server per grader that has done every worker's imports, and the server ends at once when
the grader ends, even killed outright and with its workers still running, so their parent-death
signal comes at once."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import psutil
import pytest
from support.worker_start import PRELOADED, report

from viewcopy.grading.worker import worker_context

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="workers are forked from a server on Linux only"
)


def started() -> tuple[int, list[str]]:
    context = worker_context()
    ours, theirs = context.Pipe()
    process = context.Process(target=report, args=(theirs,))
    process.start()
    theirs.close()
    said = ours.recv()
    process.join(timeout=30)
    return said


def test_every_worker_is_forked_from_one_server_with_its_imports_done():
    first, imported = started()
    second, _ = started()
    assert first == second != os.getpid()  # the same fork server, not the grader
    assert imported == list(PRELOADED)


def test_the_fork_server_ends_at_once_with_its_grader_though_a_worker_lives():
    grader = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(
            """
            import time
            from support.worker_start import linger
            from viewcopy.grading.worker import worker_context
            context = worker_context()
            ours, theirs = context.Pipe()
            context.Process(target=linger, args=(theirs,)).start()
            print(ours.recv(), flush=True)
            time.sleep(600)
            """
        )],
        cwd=os.path.dirname(os.path.dirname(__file__)),
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    worker = psutil.Process(int(grader.stdout.readline()))
    server = worker.parent()
    try:
        assert server.parent().pid == grader.pid
        grader.kill()
        grader.wait()
        deadline = time.monotonic() + 1
        while server.is_running() and server.status() != psutil.STATUS_ZOMBIE:
            assert time.monotonic() < deadline, "the fork server outlived its grader by 1 s"
            time.sleep(0.02)
    finally:
        worker.kill()
