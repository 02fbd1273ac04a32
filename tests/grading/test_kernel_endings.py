"""However a sandboxed kernel ends (shut down, killed, `os._exit`, out of memory, past its CPU
time), fresh or forked warm, nothing of it remains once nbclient has cleaned up after it as
nbgrader's Execute runs it: no process (its children, one in a session of its own, included), no
cgroup, no link to its sockets, no connection file, and its manager names no dead pid
(support.kernel_endings; the same run as an ordinary user is test_unprivileged.py's). The links a
grader killed outright leaves are swept by the next run."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support import kernel_endings
from support.sandboxing import sandbox_or_skip

from viewcopy.sandbox import Limits, describe

pytestmark = [pytest.mark.sandbox]

sandbox_or_skip()


def test_however_a_kernel_ends_nothing_of_it_remains(tmp_path):
    done = subprocess.run(
        [sys.executable, kernel_endings.__file__, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    found = json.loads(done.stdout.splitlines()[-1])
    assert kernel_endings.leftovers(found) == []
    limits = describe(Limits(**kernel_endings.LIMITS_FIELDS))
    made = kernel_endings.cgroups_made(found)
    assert set(made.values()) == {"by cgroup" in limits}, (made, limits)
    if "memory by cgroup" in limits:  # a fresh kernel past its memory is killed, not refused
        assert found["fresh"]["out of memory"]["ended"] == "died", limits


def test_a_killed_graders_links_are_swept_and_no_one_elses(tmp_path, monkeypatch):
    """A grader killed outright leaves the links to its kernels' sockets; the next run removes
    those of its own user whose maker has ended, and leaves a live maker's and another user's
    (in a shared temporary folder it may not remove them, and must not fail for it)."""
    import os

    from viewcopy.sandbox import kernel_connection

    monkeypatch.setattr(kernel_connection, "LINKS", tmp_path)
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    dead, alive = (
        f"{kernel_connection.LINK_PREFIX}{pid}-0123456789ab-1" for pid in (ended.pid, os.getpid())
    )
    others = f"{kernel_connection.LINK_PREFIX}{ended.pid}-ba9876543210-1"
    for name in (dead, alive, others):
        (tmp_path / name).symlink_to(f"/proc/{ended.pid}/root/run/viewcopy-kernel/k-1")
    if os.geteuid() == 0:
        os.lchown(tmp_path / others, 65534, 65534)
    kernel_connection.sweep()
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([alive, others] if os.geteuid() == 0 else [alive])
